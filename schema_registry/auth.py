"""HTTP basic authentication of the registry's REST API, configured as Confluent's is
(rest-utils' ``authentication.*`` keys and Jetty's JAAS ``PropertyFileLoginModule``), as a
pure ASGI middleware in front of the app.

    authentication.method=BASIC
    authentication.realm=SchemaRegistry-Props
    authentication.roles=admin,developer     # default *: any user
    authentication.skip.paths=/              # optional: paths that need no user

The realm names an entry of the JAAS file, whose path is the ``java.security.auth.login.config``
key, or the ``-Djava.security.auth.login.config=`` option in ``SCHEMA_REGISTRY_OPTS`` (or,
for a registry embedded in a worker, ``KAFKA_OPTS``), as the JVM would be given it::

    SchemaRegistry-Props {
      org.eclipse.jetty.jaas.spi.PropertyFileLoginModule required
      file="/etc/schema-registry/password.properties";
    };

The password file is Jetty's: ``user: password[,role...]``, a password plain or ``MD5:``
with its hex digest. A request without valid credentials gets 401 with
``WWW-Authenticate: Basic realm="<realm>"`` and Confluent's body
``{"error_code":401,"message":"Unauthorized"}``; a user without one of the roles gets 403.
Passwords never reach a log, and are compared in constant time.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import logging
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from jproperties import Properties
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from schema_registry.config_error import ConfigError

__all__ = ["AuthConfig", "BasicAuth", "Users", "read_password_file"]

log = logging.getLogger(__name__)

JAAS_PROPERTY = "java.security.auth.login.config"
_OPTS = ("SCHEMA_REGISTRY_OPTS", "KAFKA_OPTS")
_METHODS = ("NONE", "BASIC")
# A quoted value first, so that "//" or "#" inside one (a URL) is not taken for a comment.
_COMMENTS = re.compile(r'("[^"]*")|/\*.*?\*/|//[^\n]*|#[^\n]*', re.DOTALL)
_ENTRY = re.compile(r"([\w.\-]+)\s*\{(.*?)\}\s*;", re.DOTALL)
_OPTION = re.compile(r'([\w.\-]+)\s*=\s*"([^"]*)"')
_CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


@dataclass(frozen=True, slots=True)
class _User:
    password: str  # as the file holds it: plain, or "MD5:<hex>"
    roles: frozenset[str]

    def accepts(self, given: str) -> bool:
        if self.password.startswith("MD5:"):
            digest = hashlib.md5(given.encode("utf-8"), usedforsecurity=False).hexdigest()
            return hmac.compare_digest(digest, self.password[4:].lower())
        return hmac.compare_digest(given.encode("utf-8"), self.password.encode("utf-8"))


@dataclass(frozen=True)
class Users:
    """The users of a password file, by name."""

    by_name: Mapping[str, _User] = field(repr=False)

    def check(self, name: str, password: str) -> frozenset[str] | None:
        """The user's roles if the password is theirs, else None."""
        user = self.by_name.get(name)
        if user is None:
            # As long as for a known user, so that timing does not tell which names exist.
            hmac.compare_digest(password.encode("utf-8"), password.encode("utf-8"))
            return None
        return user.roles if user.accepts(password) else None


def read_password_file(path: str) -> Users:
    """Jetty's ``PropertyUserStore`` format: ``user: password[,role...]`` per line."""
    props = Properties()
    try:
        with Path(path).open("rb") as f:
            props.load(f, "utf-8")
    except OSError as exc:
        raise ConfigError(f"the password file {path} cannot be read: {exc.strerror}") from None
    users: dict[str, _User] = {}
    for name, value in props.items():
        password, *roles = (part.strip() for part in value.data.split(","))
        if password.startswith(("OBF:", "CRYPT:")):
            raise ConfigError(
                f"{path}: user {name}: {password.split(':')[0]}: passwords are not read here; "
                "write it plain or as MD5:<hex digest>"
            )
        users[name.strip()] = _User(password, frozenset(r for r in roles if r))
    if not users:
        raise ConfigError(f"the password file {path} lists no user")
    return Users(users)


def jaas_path(values: Mapping[str, str], environ: Mapping[str, str]) -> str | None:
    """Where the JAAS file is: the key, else the JVM option in the environment."""
    if values.get(JAAS_PROPERTY, "").strip():
        return values[JAAS_PROPERTY].strip()
    for name in _OPTS:
        for option in shlex.split(environ.get(name, "")):
            key, sep, value = option.partition("=")
            if sep and key == f"-D{JAAS_PROPERTY}":
                return value
    return None


def password_file_of(jaas: str, realm: str) -> str:
    """The ``file`` of the realm's ``PropertyFileLoginModule`` in a JAAS file."""
    try:
        text = Path(jaas).read_text("utf-8")
    except OSError as exc:
        raise ConfigError(f"{JAAS_PROPERTY}={jaas}: cannot read: {exc.strerror}") from None
    entries = {
        m.group(1): m.group(2) for m in _ENTRY.finditer(_COMMENTS.sub(lambda m: m.group(1) or "", text))
    }
    if realm not in entries:
        raise ConfigError(
            f"{jaas} has no entry {realm} (authentication.realm); it has: {', '.join(entries) or 'none'}"
        )
    modules = [m.strip() for m in entries[realm].split(";") if m.strip()]
    # Several modules, or another kind, would ask for checks not made here: refuse them.
    if len(modules) != 1 or not modules[0].split()[0].endswith(".PropertyFileLoginModule"):
        raise ConfigError(f"{jaas}: the entry {realm} must hold one PropertyFileLoginModule")
    options = dict(_OPTION.findall(modules[0]))
    if not options.get("file"):
        raise ConfigError(f'{jaas}: the PropertyFileLoginModule of {realm} needs file="<password file>"')
    return str(options["file"])


@dataclass(frozen=True)
class AuthConfig:
    """The ``authentication.*`` keys (``method`` NONE: no authentication)."""

    method: str = "NONE"
    realm: str = ""
    roles: frozenset[str] = frozenset({"*"})
    skip_paths: tuple[str, ...] = ()
    password_file: str = ""

    @classmethod
    def parse(cls, values: Mapping[str, str], environ: Mapping[str, str]) -> AuthConfig:
        method = values.get("authentication.method", "NONE").strip().upper() or "NONE"
        if method not in _METHODS:
            raise ConfigError(
                f"authentication.method={method}: expected NONE or BASIC (BEARER is not served)"
            )
        if method == "NONE":
            return cls()
        realm = values.get("authentication.realm", "").strip()
        if not realm:
            raise ConfigError(
                "authentication.method=BASIC needs authentication.realm: the JAAS entry that names the "
                "password file (e.g. SchemaRegistry-Props)"
            )
        jaas = jaas_path(values, environ)
        if jaas is None:
            raise ConfigError(
                f"authentication.method=BASIC needs a JAAS file: set {JAAS_PROPERTY}, or "
                f"SCHEMA_REGISTRY_OPTS=-D{JAAS_PROPERTY}=<file>"
            )
        roles = frozenset(r.strip() for r in values.get("authentication.roles", "*").split(",") if r.strip())
        skip = tuple(p.strip() for p in values.get("authentication.skip.paths", "").split(",") if p.strip())
        return cls(method, realm, roles or frozenset({"*"}), skip, password_file_of(jaas, realm))

    def middleware(self, app: ASGIApp) -> ASGIApp:
        """``app`` behind the configured authentication (itself when there is none)."""
        if self.method == "NONE":
            return app
        return BasicAuth(app, read_password_file(self.password_file), self.realm, self.roles, self.skip_paths)


def _skipped(path: str, patterns: tuple[str, ...]) -> bool:
    for pattern in patterns:
        if pattern.endswith("/*") and (path == pattern[:-2] or path.startswith(pattern[:-1])):
            return True
        if path == pattern:
            return True
    return False


class BasicAuth:
    """ASGI middleware: HTTP requests need a user of ``users`` with one of ``roles``."""

    def __init__(
        self,
        app: ASGIApp,
        users: Users,
        realm: str,
        roles: frozenset[str] = frozenset({"*"}),
        skip_paths: tuple[str, ...] = (),
    ) -> None:
        self.app = app
        self.users = users
        self.realm = realm
        self.roles = roles
        self.skip_paths = skip_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or _skipped(scope["path"], self.skip_paths):
            await self.app(scope, receive, send)
            return
        user = self._user(Headers(scope=scope).get("authorization"))
        if user is None:
            challenge = f'Basic realm="{self.realm}"'.encode()
            await _refuse(send, 401, "Unauthorized", [(b"www-authenticate", challenge)])
            return
        name, roles = user
        if "*" not in self.roles and not roles & self.roles:
            log.debug("schema registry: user %s has none of the roles %s", name, sorted(self.roles))
            await _refuse(send, 403, "Forbidden", [])
            return
        await self.app(scope, receive, send)

    def _user(self, header: str | None) -> tuple[str, frozenset[str]] | None:
        scheme, _, encoded = (header or "").strip().partition(" ")
        if scheme.lower() != "basic":
            log.debug("schema registry: a request without basic credentials")
            return None
        try:
            decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
            name, sep, password = decoded.partition(":")
        except (binascii.Error, UnicodeDecodeError):
            log.debug("schema registry: basic credentials that are not base64 of user:password")
            return None
        roles = self.users.check(name, password) if sep else None
        if roles is None:
            log.debug("schema registry: bad credentials for user %s", name)
            return None
        return name, roles


async def _refuse(send: Send, status: int, message: str, headers: list[tuple[bytes, bytes]]) -> None:
    body = orjson.dumps({"error_code": status, "message": message})
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", _CONTENT_TYPE.encode()),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
