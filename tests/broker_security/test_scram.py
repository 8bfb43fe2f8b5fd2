"""SCRAM server side (broker.security.scram) against RFC 7677's test vector and scramp's client."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scramp import ScramClient  # type: ignore[import-untyped]

from broker.security.scram import (
    ScramExchange,
    ScramFailed,
    credential_from_password,
    credential_from_salted_password,
    salted_password,
)
from broker.security.scram_bootstrap import parse_add_scram

RFC7677_SALT = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
CLIENT_FIRST = b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
SERVER_NONCE = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
CLIENT_FINAL = (
    b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
    b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
)


def rfc_exchange() -> ScramExchange:
    cred = credential_from_password("SCRAM-SHA-256", "pencil", 4096, RFC7677_SALT)
    return ScramExchange("SCRAM-SHA-256", lambda u: cred if u == "user" else None, server_nonce=SERVER_NONCE)


def test_rfc7677_test_vector() -> None:
    ex = rfc_exchange()
    assert ex.first(CLIENT_FIRST) == (
        b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    )
    assert ex.final(CLIENT_FINAL) == b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
    assert ex.username == "user"


def test_wrong_proof_fails() -> None:
    ex = rfc_exchange()
    ex.first(CLIENT_FIRST)
    with pytest.raises(ScramFailed):
        ex.final(CLIENT_FINAL.replace(b"p=dHz", b"p=eHz"))


def test_unknown_user_and_garbage_fail() -> None:
    with pytest.raises(ScramFailed):
        rfc_exchange().first(b"n,,n=mallory,r=abc")
    with pytest.raises(ScramFailed):
        rfc_exchange().first(b"\xff\xfe")
    with pytest.raises(ScramFailed):
        rfc_exchange().first(b"no commas")


def test_stored_credential_from_client_salted_password_matches() -> None:
    # AlterUserScramCredentials sends Hi(password); the stored keys must equal the password path's.
    for mech in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        direct = credential_from_password(mech, "pw", 4096, b"salt")
        via = credential_from_salted_password(mech, b"salt", salted_password(mech, "pw", b"salt", 4096), 4096)
        assert direct == via
        assert b"pw" not in direct.stored_key + direct.server_key


@settings(max_examples=15, deadline=None)
@given(
    mechanism=st.sampled_from(["SCRAM-SHA-256", "SCRAM-SHA-512"]),
    user=st.text(st.characters(codec="ascii", categories=["L", "N"]), min_size=1, max_size=12),
    password=st.text(st.characters(codec="ascii", categories=["L", "N", "P"]), min_size=1, max_size=20),
    right=st.booleans(),
)
def test_exchange_with_a_scram_client(mechanism: str, user: str, password: str, right: bool) -> None:
    cred = credential_from_password(mechanism, password, 4096)
    client = ScramClient([mechanism], user, password if right else password + "x")
    ex = ScramExchange(mechanism, lambda u: cred if u == user else None)
    server_first = ex.first(client.get_client_first().encode())
    client.set_server_first(server_first.decode())
    if right:
        client.set_server_final(ex.final(client.get_client_final().encode()).decode())
        assert ex.username == user
    else:
        with pytest.raises(ScramFailed):
            ex.final(client.get_client_final().encode())


def test_add_scram_spec() -> None:
    u = parse_add_scram("SCRAM-SHA-512=[name=alice,password=alice-secret,iterations=8192]")
    assert (u.mechanism, u.name, u.credential.iterations) == ("SCRAM-SHA-512", "alice", 8192)
    for bad in (
        "SCRAM-SHA-1=[name=a,password=b]",
        "SCRAM-SHA-256=[name=a]",
        "x",
        "SCRAM-SHA-256=[name=a,password=b,iterations=10]",
    ):
        with pytest.raises(ValueError, match="--add-scram"):
            parse_add_scram(bad)


def test_client_final_nonce_may_repeat_the_client_nonce_as_kafka_accepts() -> None:
    # librdkafka before 2.1 (kcat's) sends r=<client nonce><client nonce><server nonce>; Kafka
    # checks only that it ends with the server-first nonce, and the proof covers what was sent.
    import hashlib
    import hmac

    cred = credential_from_password("SCRAM-SHA-256", "pencil", 4096, RFC7677_SALT)
    ex = ScramExchange("SCRAM-SHA-256", lambda u: cred, server_nonce=SERVER_NONCE)
    server_first = ex.first(CLIENT_FIRST).decode()
    full_nonce = server_first.split(",")[0][2:]
    without_proof = f"c=biws,r=rOprNGfwEbeRWgbNEkqO{full_nonce}"
    auth = f"n=user,r=rOprNGfwEbeRWgbNEkqO,{server_first},{without_proof}".encode()
    salted = salted_password("SCRAM-SHA-256", "pencil", RFC7677_SALT, 4096)
    client_key = hmac.digest(salted, b"Client Key", "sha256")
    signature = hmac.digest(hashlib.sha256(client_key).digest(), auth, "sha256")
    proof = base64.b64encode(bytes(a ^ b for a, b in zip(client_key, signature, strict=True))).decode()
    assert ex.final(f"{without_proof},p={proof}".encode()).startswith(b"v=")
