"""Inter-worker request signatures (KIP-507): what a leader accepts and refuses."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest

from connect.herder.request_signing import (
    ALGORITHM_HEADER,
    SIGNATURE_HEADER,
    SessionKey,
    generate_key,
    sign,
    verify,
)

BODY = b'[{"task.class":"x"}]'


@pytest.fixture
def key() -> SessionKey:
    return SessionKey(generate_key("HmacSHA256"), "HmacSHA256", 0)


def test_a_signature_is_the_base64_hmac_of_the_body(key: SessionKey) -> None:
    headers = sign(key, "HmacSHA256", BODY)
    expected = base64.b64encode(hmac.new(key.key, BODY, hashlib.sha256).digest()).decode()
    assert headers == {SIGNATURE_HEADER: expected, ALGORITHM_HEADER: "HmacSHA256"}
    assert verify(key, ["HmacSHA256"], headers, BODY) is None


@pytest.mark.parametrize(
    ("algorithm", "size"), [("HmacSHA1", 64), ("HmacSHA256", 32), ("HmacSHA384", 48), ("HmacSHA512", 64)]
)
def test_java_default_key_sizes(algorithm: str, size: int) -> None:
    assert len(generate_key(algorithm)) == size
    assert len(generate_key(algorithm, 128)) == 16


def test_unknown_algorithms_are_refused() -> None:
    with pytest.raises(ValueError, match="MD5"):
        generate_key("MD5")


def test_header_names_are_case_insensitive(key: SessionKey) -> None:
    headers = {k.lower(): v for k, v in sign(key, "HmacSHA256", BODY).items()}
    assert verify(key, ["HmacSHA256"], headers, BODY) is None


def test_a_changed_body_is_refused(key: SessionKey) -> None:
    headers = sign(key, "HmacSHA256", BODY)
    assert (
        verify(key, ["HmacSHA256"], headers, BODY + b" ") == "Internal request contained invalid signature."
    )


def test_another_key_is_refused(key: SessionKey) -> None:
    other = SessionKey(generate_key("HmacSHA256"), "HmacSHA256", 1)
    assert "invalid signature" in (verify(other, ["HmacSHA256"], sign(key, "HmacSHA256", BODY), BODY) or "")


def test_a_missing_signature_is_refused(key: SessionKey) -> None:
    assert verify(key, ["HmacSHA256"], {}, BODY) == "Internal request missing required signature"


def test_an_algorithm_outside_the_verification_list_is_refused(key: SessionKey) -> None:
    headers = sign(key, "HmacSHA512", BODY)
    assert verify(key, ["HmacSHA256"], headers, BODY) == "Signature algorithm HmacSHA512 is not allowed"
    assert verify(key, ["HmacSHA256", "HmacSHA512"], headers, BODY) is None


def test_nothing_is_accepted_before_a_session_key_exists(key: SessionKey) -> None:
    assert "no session key" in (verify(None, ["HmacSHA256"], sign(key, "HmacSHA256", BODY), BODY) or "")
