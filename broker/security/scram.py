"""SCRAM (RFC 5802, RFC 7677): credentials and the server side of one exchange.

Kafka stores, per user and mechanism, the salt, the iteration count, StoredKey =
H(HMAC(SaltedPassword, "Client Key")) and ServerKey = HMAC(SaltedPassword, "Server
Key"); never the password. AlterUserScramCredentials sends the SaltedPassword the
client computed, so credentials are derived from it here. The message exchange itself
is scramp's (a maintained SCRAM library); this module adapts it to Kafka's names,
bytes on the wire and error messages. Pure: no I/O.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from scramp import ScramException, ScramMechanism  # type: ignore[import-untyped]

# Kafka's ScramMechanism ids (the int8 of Describe/AlterUserScramCredentials) and hashes.
MECHANISM_IDS: Final[dict[str, int]] = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}
MECHANISM_NAMES: Final[dict[int, str]] = {v: k for k, v in MECHANISM_IDS.items()}
_HASHES: Final[dict[str, str]] = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}

# Kafka's bounds on iterations (ScramMechanism.minIterations/maxIterations).
MIN_ITERATIONS: Final = 4096
MAX_ITERATIONS: Final = 16384


class ScramFailed(Exception):
    """The client's message is malformed, names an unknown user, or its proof is wrong."""


@dataclass(frozen=True, slots=True)
class ScramCredential:
    """What the broker keeps of a SCRAM password: enough to verify, not to recover it."""

    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int


def credential_from_salted_password(
    mechanism: str, salt: bytes, salted_password: bytes, iterations: int
) -> ScramCredential:
    """The stored form of a password the client already salted and hashed (Hi())."""
    digest = _HASHES[mechanism]
    client_key = hmac.digest(salted_password, b"Client Key", digest)
    stored_key = hashlib.new(digest, client_key).digest()
    server_key = hmac.digest(salted_password, b"Server Key", digest)
    return ScramCredential(salt, stored_key, server_key, iterations)


def salted_password(mechanism: str, password: str, salt: bytes, iterations: int) -> bytes:
    """Hi(Normalize(password), salt, i): PBKDF2 with the mechanism's HMAC."""
    return hashlib.pbkdf2_hmac(_HASHES[mechanism], password.encode(), salt, iterations)


def credential_from_password(
    mechanism: str, password: str, iterations: int = MIN_ITERATIONS, salt: bytes | None = None
) -> ScramCredential:
    """A new credential for ``password`` (bootstrap users; a random salt unless given)."""
    salt = salt if salt is not None else os.urandom(32)
    return credential_from_salted_password(
        mechanism, salt, salted_password(mechanism, password, salt, iterations), iterations
    )


Lookup = Callable[[str], ScramCredential | None]


class ScramExchange:
    """The server side of one SCRAM authentication: ``first`` answers the client-first
    message with server-first (nonce, salt, iterations), ``final`` checks the client's
    proof and answers with the server signature. Either raises ``ScramFailed``.

    ``username`` is set once the client-first message named a user.
    """

    def __init__(self, mechanism: str, lookup: Lookup, server_nonce: str | None = None) -> None:
        if mechanism not in MECHANISM_IDS:
            raise ValueError(f"not a SCRAM mechanism: {mechanism}")
        self.mechanism = mechanism
        self.username: str | None = None
        self._lookup = lookup
        self._server = ScramMechanism(mechanism).make_server(self._auth_info, s_nonce=server_nonce)

    def _auth_info(self, username: str) -> tuple[bytes, bytes, bytes, int] | None:
        self.username = username
        cred = self._lookup(username)
        if cred is None:
            return None
        return cred.salt, cred.stored_key, cred.server_key, cred.iterations

    def first(self, client_first: bytes) -> bytes:
        try:
            self._server.set_client_first(_text(client_first))
            return _bytes(self._server.get_server_first())
        except ScramException as exc:
            raise ScramFailed(str(exc)) from None

    def final(self, client_final: bytes) -> bytes:
        """Verify the proof and answer ``v=<ServerSignature>``.

        Done here rather than by scramp because Kafka (ScramSaslServer) only requires the
        client-final nonce to *end with* the server-first nonce, and librdkafka before 2.1
        (kcat's, for one) sends the client nonce twice; scramp insists on equality.
        """
        server = self._server
        if getattr(server, "server_first", None) is None:
            raise ScramFailed("client-final message before client-first")
        text = _text(client_final)
        proof_at = text.rfind(",p=")
        attrs = dict(a.split("=", 1) for a in text.split(",") if "=" in a)
        if proof_at < 0 or "c" not in attrs or "r" not in attrs:
            raise ScramFailed("malformed client-final message")
        if attrs["c"] != base64.b64encode(b"n,,").decode() and attrs["c"] != "biws":
            raise ScramFailed("channel binding is not supported")
        if not attrs["r"].endswith(str(server.nonce)):
            raise ScramFailed("client-final nonce does not end with the server nonce")
        try:
            proof = base64.b64decode(text[proof_at + 3 :], validate=True)
        except binascii.Error:
            raise ScramFailed("client proof is not base64") from None
        digest = _HASHES[self.mechanism]
        auth = f"{server.client_first_bare},{server.server_first},{text[:proof_at]}".encode()
        client_signature = hmac.digest(server.stored_key, auth, digest)
        if len(proof) != len(client_signature):
            raise ScramFailed("client proof has the wrong length")
        client_key = bytes(a ^ b for a, b in zip(proof, client_signature, strict=True))
        if not hmac.compare_digest(hashlib.new(digest, client_key).digest(), server.stored_key):
            raise ScramFailed("invalid client proof")
        signature = hmac.digest(server.server_key, auth, digest)
        return b"v=" + base64.b64encode(signature)


def _text(message: bytes) -> str:
    try:
        return message.decode("utf-8")
    except UnicodeDecodeError:
        raise ScramFailed("SCRAM message is not UTF-8") from None


def _bytes(message: object) -> bytes:
    return str(message).encode("utf-8")
