"""The bearer tokens file: tokens or their SHA-256, roles, reloading."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connect.rest.access import Role
from connect.rest.bearer_tokens import BearerTokens, TokensError, find_token, parse_tokens


def sha(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def test_tokens_hashes_roles_and_comments() -> None:
    entries = parse_tokens(
        "# tokens\n\nplain-token: viewer\n"
        f"{sha('hashed-token')}: admin\nno-role-token\nb64/tok+en==: VIEWER\n"
    )
    assert [(e.line, e.role) for e in entries] == [
        (3, Role.VIEWER),
        (4, Role.ADMIN),
        (5, Role.ADMIN),
        (6, Role.VIEWER),
    ]
    assert find_token(entries, "plain-token") is entries[0]
    assert find_token(entries, "hashed-token") is entries[1]
    assert find_token(entries, "b64/tok+en==") is entries[3]
    assert find_token(entries, sha("hashed-token")) is None  # the digest is not the token
    assert find_token(entries, "plain") is None
    assert entries[0].name == "bearer token of line 3"


@pytest.mark.parametrize(
    ("text", "message"), [(": admin", "the token is empty"), ("tok: root", "unknown role")]
)
def test_a_bad_line_names_file_and_line(text: str, message: str) -> None:
    with pytest.raises(TokensError, match=f"^tokens.txt:2: {message}"):
        parse_tokens(f"ok: admin\n{text}\n", "tokens.txt")


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp")), min_size=1))
def test_a_token_or_its_digest_finds_it(token: str) -> None:
    token = token.replace(":", "")
    if not token.strip() or token.startswith(("#", "!")):
        return
    for listed in (token, sha(token)):
        entries = parse_tokens(f"{listed}: viewer\n")
        assert find_token(entries, token) is not None or len(token) == 64


def test_the_file_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text("t1: admin\n")
    tokens = BearerTokens(path)
    assert tokens.authenticate("t1") is not None
    path.write_text("t2: viewer\n")
    os.utime(path, ns=(1, 1))
    assert tokens.authenticate("t1") is None
    found = tokens.authenticate("t2")
    assert found is not None and found.role is Role.VIEWER
