"""One connection's SASL exchange on a SASL_PLAINTEXT or SASL_SSL listener.

Kafka's order (SaslServerAuthenticator): ApiVersions (optional) and SaslHandshake,
then SaslAuthenticate requests until the mechanism is done; any other request before
that closes the connection, as does a failed authentication (after its response).

- PLAIN (RFC 4616): one token ``authzid NUL username NUL password`` checked against the
  listener's JAAS ``user_<name>`` entries; the authzid must be empty or the username.
- SCRAM-SHA-256/512 (RFC 5802/7677): client-first -> server-first, client-final ->
  server-final, against the salted credentials of the SCRAM store.

SaslHandshake v0 (tokens framed without Kafka headers) is not offered: only v1 is
advertised, which librdkafka and the Java client use. The principal is
``User:<username>``. Sessions never expire (``session_lifetime_ms`` 0: no KIP-368
re-authentication).
"""

from __future__ import annotations

import enum
import hmac
import logging
from dataclasses import dataclass

from kio.schema.errors import ErrorCode

from broker.security.listeners import ListenerSecurity
from broker.security.scram import MECHANISM_IDS, ScramExchange, ScramFailed
from broker.security.scram_store import ScramStore

log = logging.getLogger(__name__)

INVALID_CREDENTIALS = "Authentication failed: Invalid username or password"


class SaslState(enum.Enum):
    HANDSHAKE = "handshake"
    AUTHENTICATE = "authenticate"
    COMPLETE = "complete"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class SaslStep:
    """The answer to one SaslAuthenticate token; ``close`` ends the connection after it."""

    error_code: ErrorCode
    error_message: str | None
    auth_bytes: bytes = b""
    close: bool = False


class SaslSession:
    """The SASL state of one connection (not shared, not thread-safe)."""

    def __init__(self, listener: ListenerSecurity, store: ScramStore) -> None:
        self.listener = listener
        self.store = store
        self.state = SaslState.HANDSHAKE
        self.mechanism: str | None = None
        self.principal: str | None = None
        self._scram: ScramExchange | None = None
        self._scram_round = 0

    @property
    def complete(self) -> bool:
        return self.state is SaslState.COMPLETE

    def handshake(self, mechanism: str) -> ErrorCode:
        if self.state is not SaslState.HANDSHAKE:
            self.state = SaslState.FAILED
            return ErrorCode.illegal_sasl_state
        if mechanism not in self.listener.mechanisms:
            self.state = SaslState.FAILED
            return ErrorCode.unsupported_sasl_mechanism
        self.mechanism = mechanism
        self.state = SaslState.AUTHENTICATE
        if mechanism in MECHANISM_IDS:
            self._scram = ScramExchange(mechanism, lambda user: self.store.get(user, mechanism))
        return ErrorCode.none

    def authenticate(self, token: bytes) -> SaslStep:
        if self.state is not SaslState.AUTHENTICATE:
            self.state = SaslState.FAILED
            return SaslStep(
                ErrorCode.illegal_sasl_state,
                "Unexpected SaslAuthenticate request: no mechanism was chosen with SaslHandshake",
                close=True,
            )
        if self._scram is None:
            return self._plain(token)
        return self._scram_step(token)

    def _fail(self, message: str) -> SaslStep:
        self.state = SaslState.FAILED
        return SaslStep(ErrorCode.sasl_authentication_failed, message, close=True)

    def _succeed(self, username: str, auth_bytes: bytes = b"") -> SaslStep:
        self.state = SaslState.COMPLETE
        self.principal = f"User:{username}"
        return SaslStep(ErrorCode.none, None, auth_bytes)

    def _plain(self, token: bytes) -> SaslStep:
        parts = token.split(b"\x00")
        if len(parts) != 3:
            return self._fail(f"Invalid SASL/PLAIN response: expected 3 tokens, got {len(parts)}")
        try:
            authzid, username, password = (p.decode("utf-8") for p in parts)
        except UnicodeDecodeError:
            return self._fail("Invalid SASL/PLAIN response: not UTF-8")
        if not username:
            return self._fail("Authentication failed: username not specified")
        if authzid and authzid != username:
            return self._fail(
                "Authentication failed: Client requested an authorization id that is different from username"
            )
        expected = self.listener.plain_users.get(username)
        # Compare even for unknown users, so timing does not tell which users exist.
        ok = hmac.compare_digest(
            (expected if expected is not None else "\x00" + password).encode(), password.encode()
        )
        if expected is None or not ok:
            return self._fail(INVALID_CREDENTIALS)
        return self._succeed(username)

    def _scram_step(self, token: bytes) -> SaslStep:
        assert self._scram is not None and self.mechanism is not None
        self._scram_round += 1
        try:
            if self._scram_round == 1:
                return SaslStep(ErrorCode.none, None, self._scram.first(token))
            final = self._scram.final(token)
        except ScramFailed as exc:
            log.info("SCRAM authentication with %s failed: %s", self.mechanism, exc)
            # Kafka's text; the reason (unknown user or wrong proof) is not told to the client.
            return self._fail(
                "Authentication failed during authentication due to invalid credentials with SASL "
                f"mechanism {self.mechanism}"
            )
        assert self._scram.username is not None
        return self._succeed(self._scram.username, final)
