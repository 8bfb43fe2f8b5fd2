"""The group-membership client's SASL side: which credentials a worker's keys give, and
the token exchange against scramp's server (the library the broker uses too)."""

from __future__ import annotations

import pytest
from scramp import ScramMechanism  # type: ignore[import-untyped]

from connect.api.kafka_clients import ClientSecurityError
from connect.herder.sasl_client import SaslCredentials, SaslFailure, sasl_credentials, sasl_exchange

SCRAM_JAAS = (
    'org.apache.kafka.common.security.scram.ScramLoginModule required username="bob" password="bob-secret";'
)


@pytest.mark.parametrize("protocol", [None, "PLAINTEXT", "SSL", "ssl"])
def test_no_credentials_without_a_sasl_protocol(protocol: str | None) -> None:
    settings = {"sasl.mechanism": "PLAIN", "sasl.jaas.config": SCRAM_JAAS}
    if protocol is not None:
        settings["security.protocol"] = protocol
    assert sasl_credentials(settings) is None


def test_credentials_from_the_jaas_config() -> None:
    creds = sasl_credentials(
        {"security.protocol": "sasl_ssl", "sasl.mechanism": "scram-sha-512", "sasl.jaas.config": SCRAM_JAAS}
    )
    assert creds == SaslCredentials("SCRAM-SHA-512", "bob", "bob-secret")
    assert "bob-secret" not in repr(creds)


def test_librdkafka_names_are_taken_too() -> None:
    creds = sasl_credentials(
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanisms": "PLAIN",
            "sasl.username": "alice",
            "sasl.password": "alice-secret",
        }
    )
    assert creds == SaslCredentials("PLAIN", "alice", "alice-secret")


def test_kafkas_default_mechanism_gssapi_is_refused_by_name() -> None:
    with pytest.raises(
        ClientSecurityError, match=r"sasl.mechanism=GSSAPI.*PLAIN, SCRAM-SHA-256, SCRAM-SHA-512"
    ):
        sasl_credentials({"security.protocol": "SASL_SSL", "sasl.jaas.config": SCRAM_JAAS})


def test_missing_password_says_which_key_to_set() -> None:
    with pytest.raises(ClientSecurityError, match=r"needs a user name and password: set sasl.jaas.config"):
        sasl_credentials({"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.username": "x"})


def test_a_kerberos_login_module_is_refused() -> None:
    with pytest.raises(ClientSecurityError, match="PlainLoginModule and ScramLoginModule"):
        sasl_credentials(
            {
                "security.protocol": "SASL_SSL",
                "sasl.mechanism": "PLAIN",
                "sasl.jaas.config": "com.sun.security.auth.module.Krb5LoginModule required;",
            }
        )


def test_plain_sends_one_rfc4616_token() -> None:
    steps = sasl_exchange(SaslCredentials("PLAIN", "alice", "s3cret"))
    assert next(steps) == b"\0alice\0s3cret"
    with pytest.raises(StopIteration):
        steps.send(b"")


def _scram_server(mechanism: str, user: str, password: str):  # type: ignore[no-untyped-def]
    m = ScramMechanism(mechanism)
    salt, stored, server, iterations = m.make_auth_info(password, iteration_count=4096)
    return m.make_server(lambda name: (salt, stored, server, iterations) if name == user else None)


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_completes_against_a_scram_server(mechanism: str) -> None:
    server = _scram_server(mechanism, "b=o,b", "bob-secret")
    steps = sasl_exchange(SaslCredentials(mechanism, "b=o,b", "bob-secret"))
    client_first = next(steps)
    assert client_first.startswith(b"n,,n=b=3Do=2Cb,r=")  # RFC 5802's escaping of = and ,
    server.set_client_first(client_first.decode())
    client_final = steps.send(server.get_server_first().encode())
    server.set_client_final(client_final.decode())  # raises if the client's proof were wrong
    with pytest.raises(StopIteration):
        steps.send(server.get_server_final().encode())


def test_scram_refuses_a_server_that_does_not_know_the_password() -> None:
    # A broker that cannot make the server signature from bob's credentials is an impostor.
    honest = _scram_server("SCRAM-SHA-256", "bob", "bob-secret")
    steps = sasl_exchange(SaslCredentials("SCRAM-SHA-256", "bob", "bob-secret"))
    client_first = next(steps).decode()
    honest.set_client_first(client_first)
    server_first = honest.get_server_first()
    client_final = steps.send(server_first.encode())
    honest.set_client_final(client_final.decode())
    forged = "v=" + "A" * 44
    with pytest.raises(SaslFailure, match="SCRAM-SHA-256 exchange with the broker failed"):
        steps.send(forged.encode())
