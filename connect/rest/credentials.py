"""The users of the REST API: a credentials file, its password hashes, and checking a login.

The file is a Java properties file in Jetty's (and Kafka's ``PropertyFileLoginModule``'s)
style, one user per line::

    # user: password[,role...]
    alice: PBKDF2-SHA256:600000:3q2+7w==:Jb0...=,admin
    bob = plain-password,viewer
    carol: another-password

A password is stored plain or hashed and salted as
``PBKDF2-SHA256:<iterations>:<salt, base64>:<hash, base64>``; make one with
``python -m connect.rest.credentials hash``. The roles follow the first comma: ``admin``
or ``viewer``; a user with none is an admin, as every user is under Kafka's extension
(so a plain password cannot contain a comma). ``python -m connect.rest.credentials check
FILE`` reads a file the way a worker does and lists its users.

Comparisons are constant-time. A hashed password is checked on a thread (PBKDF2 is
slow on purpose), and a password once accepted is remembered as a keyed digest, so a
client that logs in on every request pays for PBKDF2 once per worker.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import binascii
import getpass
import hashlib
import hmac
import secrets
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from connect.api.errors import ConnectException
from connect.rest.access import Role
from connect.rest.watched_file import WatchedFile
from connect.runtime.properties import PropertiesFile, load

HASH_SCHEME = "PBKDF2-SHA256"
# OWASP's 2023 recommendation for PBKDF2-HMAC-SHA256.
DEFAULT_ITERATIONS = 600_000
_SALT_BYTES = 16
_CACHE_LIMIT = 10_000  # remembered logins; past that the cache starts over


class CredentialsError(ConnectException):
    """A credentials file that cannot be used; the message names the file and line."""


@dataclass(frozen=True, slots=True)
class StoredPassword:
    """A password as the credentials file keeps it: plain, or a PBKDF2-SHA256 hash."""

    plain: bytes | None = None
    iterations: int = 0
    salt: bytes = b""
    digest: bytes = b""

    @property
    def hashed(self) -> bool:
        return self.plain is None

    def matches(self, password: str) -> bool:
        """Whether ``password`` is this one (constant-time; slow when hashed)."""
        given = password.encode("utf-8")
        if self.plain is not None:
            return hmac.compare_digest(given, self.plain)
        computed = hashlib.pbkdf2_hmac("sha256", given, self.salt, self.iterations, len(self.digest))
        return hmac.compare_digest(computed, self.digest)


def parse_stored_password(text: str) -> StoredPassword:
    """A stored password: ``PBKDF2-SHA256:<iterations>:<salt>:<hash>`` or plain text."""
    if not text.startswith(HASH_SCHEME + ":"):
        return StoredPassword(plain=text.encode("utf-8"))
    parts = text.split(":")
    if len(parts) != 4:
        raise ValueError(f"a hashed password is {HASH_SCHEME}:<iterations>:<salt base64>:<hash base64>")
    _, iterations, salt, digest = parts
    if not iterations.isdigit() or int(iterations) < 1:
        raise ValueError(f"the iteration count of a {HASH_SCHEME} hash must be a positive integer")
    try:
        salt_bytes = base64.b64decode(salt, validate=True)
        digest_bytes = base64.b64decode(digest, validate=True)
    except binascii.Error:
        raise ValueError(f"the salt and hash of a {HASH_SCHEME} hash must be base64") from None
    if not salt_bytes or len(digest_bytes) < 16:
        raise ValueError(f"the salt of a {HASH_SCHEME} hash is empty or its hash is shorter than 16 bytes")
    return StoredPassword(iterations=int(iterations), salt=salt_bytes, digest=digest_bytes)


def hash_password(password: str, iterations: int = DEFAULT_ITERATIONS, salt: bytes | None = None) -> str:
    """``PBKDF2-SHA256:<iterations>:<salt>:<hash>`` of ``password`` with a random salt."""
    if iterations < 1:
        raise ValueError("iterations must be at least 1")
    salt = salt if salt is not None else secrets.token_bytes(_SALT_BYTES)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, iterations)
    return ":".join(
        (HASH_SCHEME, str(iterations), base64.b64encode(salt).decode(), base64.b64encode(digest).decode())
    )


@dataclass(frozen=True, slots=True)
class User:
    name: str
    password: StoredPassword
    role: Role


def parse_user(name: str, value: str) -> User:
    """A user from its properties entry ``password[,role...]`` (Jetty's trimming rules)."""
    password, _, roles_text = value.strip().partition(",")
    password = password.strip()
    if not name.strip():
        raise ValueError("the user name is empty")
    if not password:
        raise ValueError(f"user {name.strip()!r} has no password")
    roles = {Role.parse(r) for r in roles_text.split(",") if r.strip()}
    # Several roles give the most permissive; none gives admin (Kafka has no roles).
    role = Role.ADMIN if not roles or Role.ADMIN in roles else Role.VIEWER
    return User(name.strip(), parse_stored_password(password), role)


def users_from_properties(props: PropertiesFile) -> dict[str, User]:
    """The users of a parsed credentials file; a bad entry raises naming its file and line."""
    users: dict[str, User] = {}
    for name, value in props.values.items():
        try:
            user = parse_user(name, value)
        except ValueError as exc:
            raise CredentialsError(f"{props.where(name)}: {exc}") from None
        users[user.name] = user
    return users


def read_credentials(path: Path) -> dict[str, User]:
    """The users of the credentials file at ``path``."""
    try:
        props = load(path)
    except ConnectException as exc:
        raise CredentialsError(str(exc)) from None
    return users_from_properties(props)


class BasicCredentials:
    """The users of a credentials file, re-read when it changes, and checking a login."""

    def __init__(self, path: str | Path) -> None:
        self.file = WatchedFile(path, read_credentials, "credentials file")
        self._cache_key = secrets.token_bytes(32)  # remembered logins are useless outside this process
        self._accepted: set[tuple[str, StoredPassword, bytes]] = set()
        self._lock = threading.Lock()

    @property
    def path(self) -> Path:
        return self.file.path

    async def authenticate(self, username: str, password: str) -> User | None:
        """The user, if ``password`` is theirs now; None otherwise."""
        users = self.file.current()
        user = users.get(username)
        if user is None:
            # Spend what checking a known user would, so response times do not tell which
            # names exist: a hash derivation when the file holds hashed passwords.
            decoy = next((u.password for u in users.values() if u.password.hashed), None)
            if decoy is not None:
                await asyncio.to_thread(decoy.matches, password)
            else:
                hmac.compare_digest(password.encode("utf-8"), b"\0" * max(len(password), 1))
            return None
        if not user.password.hashed:
            return user if user.password.matches(password) else None
        remembered = (
            user.name,
            user.password,
            hmac.new(self._cache_key, password.encode("utf-8"), hashlib.sha256).digest(),
        )
        with self._lock:
            if remembered in self._accepted:  # keyed on the stored hash too: a changed password is new
                return user
        if not await asyncio.to_thread(user.password.matches, password):
            return None
        with self._lock:
            if len(self._accepted) >= _CACHE_LIMIT:
                self._accepted.clear()
            self._accepted.add(remembered)
        return user


# -- python -m connect.rest.credentials ------------------------------------------------------------


def _read_new_password() -> str:
    if sys.stdin.isatty():
        first = getpass.getpass("Password: ")
        if getpass.getpass("Again: ") != first:
            raise CredentialsError("the two passwords differ")
        return first
    # Piped: the first line is the password (its line ending is not part of it).
    return sys.stdin.readline().rstrip("\r\n")


def main(argv: list[str] | None = None, prog: str = "python -m connect.rest.credentials") -> int:
    parser = argparse.ArgumentParser(prog=prog, description="Tools for the REST API's credentials file.")
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser(
        "hash", help="print a salted PBKDF2-SHA256 hash of a password (read from the terminal or stdin)"
    )
    make.add_argument("--iterations", type=int, default=DEFAULT_ITERATIONS, help="PBKDF2 iterations")
    check = commands.add_parser("check", help="read a credentials file as a worker does; list its users")
    check.add_argument("file", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.command == "hash":
            if args.iterations < 1:
                parser.error("--iterations must be at least 1")
            password = _read_new_password()
            if not password:
                raise CredentialsError("the password is empty")
            # A hash may hold any character: the comma that ends a plain password does not matter.
            print(hash_password(password, args.iterations))
        else:
            for user in read_credentials(args.file).values():
                stored = "hashed" if user.password.hashed else "plain"
                print(f"{user.name}\t{user.role.value}\t{stored}")
    except ConnectException as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
