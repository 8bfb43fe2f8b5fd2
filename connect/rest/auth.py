"""Authentication of REST requests: HTTP basic (Kafka's extension, or a credentials file)
and bearer tokens, as a pure ASGI middleware in front of the app.

Off unless configured. Sources of users, any of which turns it on:

- Kafka's ``rest.extension.classes=...BasicAuthSecurityRestExtension`` with a JAAS file
  (``KAFKA_OPTS=-Djava.security.auth.login.config=...`` or the worker key
  ``java.security.auth.login.config``) whose ``KafkaConnect`` entry names a credentials file;
- ``rest.authentication.basic.credentials.file``: that credentials file directly;
- ``rest.authentication.bearer.tokens.file``: bearer tokens with roles.

A request without valid credentials gets 401 with ``WWW-Authenticate`` (``Basic
realm="KafkaConnect"``, ``Bearer realm="KafkaConnect"``) and Kafka's error body; a
viewer's write gets 403. ``connect.rest.access`` decides which paths need no user.
Credentials and tokens never reach a log: failures are logged at DEBUG (as Kafka does, so
a mistyped password does not flood the log) with the user name at most.
"""

from __future__ import annotations

import base64
import binascii
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from connect.api.errors import ConnectException
from connect.rest.access import Access, Role, required_access, role_allows
from connect.rest.bearer_tokens import BearerTokens
from connect.rest.credentials import BasicCredentials
from connect.rest.jaas import credentials_file_of, login_config_path
from connect.runtime.config import BASIC_AUTH_REST_EXTENSION, WorkerConfig

log = logging.getLogger(__name__)

REALM = "KafkaConnect"
UNAUTHORIZED = "User cannot access the resource."  # Kafka's JaasBasicAuthFilter's words


@dataclass(frozen=True, slots=True)
class Principal:
    """Who sent a request: a user name (or which token line) and its role."""

    name: str
    role: Role


@dataclass(frozen=True, slots=True)
class _Refusal:
    reason: str  # for the DEBUG log; never holds a secret
    bad_token: bool = False


class Authenticator:
    """Checks an ``Authorization`` header against the configured users and tokens."""

    def __init__(self, basic: BasicCredentials | None = None, bearer: BearerTokens | None = None) -> None:
        if basic is None and bearer is None:
            raise ValueError("an Authenticator needs users or tokens")
        self.basic = basic
        self.bearer = bearer

    def challenges(self, bad_token: bool) -> list[str]:
        """The ``WWW-Authenticate`` values of a 401 (RFC 7617, RFC 6750)."""
        out = []
        if self.basic is not None:
            out.append(f'Basic realm="{REALM}"')
        if self.bearer is not None:
            out.append(f'Bearer realm="{REALM}"' + (', error="invalid_token"' if bad_token else ""))
        return out

    async def authenticate(self, header: str | None) -> Principal | _Refusal:
        if not header:
            return _Refusal("no credentials")
        scheme, _, credentials = header.strip().partition(" ")
        scheme = scheme.lower()
        credentials = credentials.strip()
        if scheme == "basic" and self.basic is not None:
            try:
                decoded = base64.b64decode(credentials, validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                return _Refusal("malformed basic credentials")
            username, colon, password = decoded.partition(":")
            if not colon or not username:
                return _Refusal("basic credentials without user name")
            user = await self.basic.authenticate(username, password)
            if user is None:
                return _Refusal(f"wrong password or unknown user {username!r}")
            return Principal(user.name, user.role)
        if scheme == "bearer" and self.bearer is not None:
            entry = self.bearer.authenticate(credentials)
            if entry is None:
                return _Refusal("unknown bearer token", bad_token=True)
            return Principal(entry.name, entry.role)
        return _Refusal(f"unsupported authorization scheme {scheme!r}")


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error_code": status, "message": message}, status_code=status)


class AuthenticationMiddleware:
    """Lets a request through to the app only if ``connect.rest.access`` says it needs no
    user, or its credentials name a user whose role allows the method."""

    def __init__(self, app: ASGIApp, authenticator: Authenticator) -> None:
        self.app = app
        self.authenticator = authenticator

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method: str = scope["method"]
        path: str = scope["path"]
        if required_access(method, path) is not Access.USER:
            await self.app(scope, receive, send)
            return
        outcome = await self.authenticator.authenticate(Headers(scope=scope).get("authorization"))
        if isinstance(outcome, _Refusal):
            log.debug("refused %s %s: %s", method, path, outcome.reason)
            response = _error(401, UNAUTHORIZED)
            for challenge in self.authenticator.challenges(outcome.bad_token):
                response.raw_headers.append((b"www-authenticate", challenge.encode("latin-1")))
            await response(scope, receive, send)
            return
        if not role_allows(outcome.role, method):
            log.debug("refused %s %s to %s (role %s)", method, path, outcome.name, outcome.role.value)
            message = (
                f"User {outcome.name} has the role {outcome.role.value}, which may only read "
                f"(GET, HEAD, OPTIONS); {method} {path} is not allowed."
            )
            await _error(403, message)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def authenticator_from_config(
    config: WorkerConfig, environ: Mapping[str, str] | None = None
) -> Authenticator | None:
    """The authenticator a worker config asks for, or None (authentication off). Every file
    is read now: one that cannot be used stops the worker, naming the file and line."""
    environ = os.environ if environ is None else environ
    basic_file = config.rest_authentication_basic_credentials_file
    basic_key = "rest.authentication.basic.credentials.file"
    if BASIC_AUTH_REST_EXTENSION in config.rest_extension_classes:
        found = login_config_path(config.java_security_auth_login_config, environ)
        if found is None:
            raise ConnectException(
                f"rest.extension.classes: {BASIC_AUTH_REST_EXTENSION} needs a JAAS file: set "
                "KAFKA_OPTS=-Djava.security.auth.login.config=<file> or the worker key "
                "java.security.auth.login.config"
            )
        jaas_path, origin = found
        if basic_file:
            raise ConnectException(
                f"{basic_key} and rest.extension.classes={BASIC_AUTH_REST_EXTENSION} both name users; "
                "keep one of them"
            )
        try:
            basic_file = str(credentials_file_of(jaas_path))
        except ConnectException as exc:
            raise ConnectException(f"{exc} (the JAAS file set by {origin})") from None
    basic = BasicCredentials(basic_file) if basic_file else None
    tokens_file = config.rest_authentication_bearer_tokens_file
    bearer = BearerTokens(tokens_file) if tokens_file else None
    if basic is None and bearer is None:
        return None
    log.info(
        "REST API authentication on:%s%s",
        f" basic ({basic.path})" if basic is not None else "",
        f" bearer ({bearer.path})" if bearer is not None else "",
    )
    return Authenticator(basic, bearer)
