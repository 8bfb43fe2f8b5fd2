"""Bearer tokens of the REST API: ``rest.authentication.bearer.tokens.file``.

One token per line, with the role after the last colon (none means ``admin``)::

    # <token or its sha256 in hex>: role
    3f1c...e9 (64 hex digits): viewer
    a-long-random-token: admin

A 64-hex-digit entry is the SHA-256 of the token, so the file need not hold the token
itself (``printf %s "$TOKEN" | sha256sum``); any other entry is the token. Every request
is hashed once and compared, constant-time, with every entry. The file is re-read when it
changes (``WatchedFile``), so revoking a token is deleting its line.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass
from pathlib import Path

from connect.api.errors import ConnectException
from connect.rest.access import Role
from connect.rest.watched_file import WatchedFile

_SHA256_HEX = re.compile(r"[0-9a-fA-F]{64}")


class TokensError(ConnectException):
    """A tokens file that cannot be used; the message names the file and line."""


@dataclass(frozen=True, slots=True)
class TokenEntry:
    digest: bytes  # SHA-256 of the token
    role: Role
    line: int

    @property
    def name(self) -> str:
        """How logs name the token's holder: by line, never by the token."""
        return f"bearer token of line {self.line}"


def parse_tokens(text: str, source: str = "<tokens>") -> list[TokenEntry]:
    """The entries of a tokens file; a bad line raises naming ``source`` and the line."""
    entries: list[TokenEntry] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith(("#", "!")):
            continue
        token, colon, role_text = line.rpartition(":")
        if not colon:
            token, role_text = line, ""
        token = token.strip()
        if not token:
            raise TokensError(f"{source}:{number}: the token is empty")
        try:
            role = Role.parse(role_text) if role_text.strip() else Role.ADMIN
        except ValueError as exc:
            raise TokensError(f"{source}:{number}: {exc}") from None
        if _SHA256_HEX.fullmatch(token):
            digest = bytes.fromhex(token)
        else:
            digest = hashlib.sha256(token.encode("utf-8")).digest()
        entries.append(TokenEntry(digest, role, number))
    return entries


def read_tokens(path: Path) -> list[TokenEntry]:
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TokensError(f"{path}: cannot read the bearer tokens file: {exc}") from None
    return parse_tokens(text, str(path))


def find_token(entries: list[TokenEntry], token: str) -> TokenEntry | None:
    """The entry of ``token``; every entry is compared (constant-time), found or not."""
    digest = hashlib.sha256(token.encode("utf-8")).digest()
    found = None
    for entry in entries:
        if hmac.compare_digest(entry.digest, digest) and found is None:
            found = entry
    return found


class BearerTokens:
    """The tokens of a file, re-read when it changes."""

    def __init__(self, path: str | Path) -> None:
        self.file = WatchedFile(path, read_tokens, "bearer tokens file")

    @property
    def path(self) -> Path:
        return self.file.path

    def authenticate(self, token: str) -> TokenEntry | None:
        return find_token(self.file.current(), token)
