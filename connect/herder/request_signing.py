"""Signing the requests workers send each other (KIP-507), as Kafka Connect does.

The leader generates a session key, publishes it in the config topic and rotates it
every ``inter.worker.key.ttl.ms``. A follower that forwards task configs to the
leader signs the request body with it: the HMAC goes in ``X-Connect-Authorization``
(base64) and the algorithm in ``X-Connect-Request-Signature-Algorithm``; the leader
checks both before it believes the request, so a REST client cannot write task
configs.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

SIGNATURE_HEADER = "X-Connect-Authorization"
ALGORITHM_HEADER = "X-Connect-Request-Signature-Algorithm"

_DIGESTS = {
    "HmacSHA1": hashlib.sha1,
    "HmacSHA256": hashlib.sha256,
    "HmacSHA384": hashlib.sha384,
    "HmacSHA512": hashlib.sha512,
}
# Java's KeyGenerator default key sizes for the HMAC algorithms, in bytes.
_DEFAULT_KEY_BYTES = {"HmacSHA1": 64, "HmacSHA256": 32, "HmacSHA384": 48, "HmacSHA512": 64}


@dataclass(frozen=True, slots=True)
class SessionKey:
    key: bytes
    algorithm: str
    created_ms: int


def generate_key(algorithm: str, size_bits: int | None = None) -> bytes:
    if algorithm not in _DIGESTS:
        raise ValueError(f"unsupported key generation algorithm {algorithm}")
    return secrets.token_bytes((size_bits // 8) if size_bits else _DEFAULT_KEY_BYTES[algorithm])


def signature(key: bytes, algorithm: str, body: bytes) -> str:
    digest = _DIGESTS.get(algorithm)
    if digest is None:
        raise ValueError(f"unsupported signature algorithm {algorithm}")
    return base64.b64encode(hmac.new(key, body, digest).digest()).decode("ascii")


def sign(key: SessionKey, algorithm: str, body: bytes) -> dict[str, str]:
    """The headers that sign ``body``."""
    return {SIGNATURE_HEADER: signature(key.key, algorithm, body), ALGORITHM_HEADER: algorithm}


def verify(
    key: SessionKey | None, allowed: Iterable[str], headers: Mapping[str, str], body: bytes
) -> str | None:
    """None when the request is signed with ``key`` by an allowed algorithm, else why not."""
    if key is None:
        return "no session key yet; the worker is still joining the cluster"
    given = headers.get(SIGNATURE_HEADER) or headers.get(SIGNATURE_HEADER.lower())
    algorithm = headers.get(ALGORITHM_HEADER) or headers.get(ALGORITHM_HEADER.lower())
    if not given or not algorithm:
        return "Internal request missing required signature"
    if algorithm not in set(allowed) or algorithm not in _DIGESTS:
        return f"Signature algorithm {algorithm} is not allowed"
    if not hmac.compare_digest(given, signature(key.key, algorithm, body)):
        return "Internal request contained invalid signature."
    return None
