"""The credentials file: parsing, hashed passwords, reloading, the ``hash`` tool."""

from __future__ import annotations

import asyncio
import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connect.rest.access import Role
from connect.rest.credentials import (
    BasicCredentials,
    CredentialsError,
    hash_password,
    parse_stored_password,
    parse_user,
    read_credentials,
)

FAST = 1000  # PBKDF2 iterations for tests; the tool's default is 600000


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_users_roles_and_comments(tmp_path: Path) -> None:
    users = read_credentials(
        write(
            tmp_path / "users",
            "# user: password[,role...]\n"
            "alice: secret,admin\n"
            "! another comment\n"
            "bob = pass word , viewer\n"
            "carol: only-password\n"
            "dave: pw,viewer,admin\n"
            "erin: pw, Viewer\n",
        )
    )
    assert {n: u.role for n, u in users.items()} == {
        "alice": Role.ADMIN,
        "bob": Role.VIEWER,
        "carol": Role.ADMIN,  # no role: admin, as every user of Kafka's extension
        "dave": Role.ADMIN,
        "erin": Role.VIEWER,
    }
    assert users["bob"].password.matches("pass word")
    assert not users["bob"].password.hashed


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("mallory: pw,operator", "unknown role 'operator'"),
        ("mallory:", "user 'mallory' has no password"),
        ("mallory: ,viewer", "user 'mallory' has no password"),
        ("mallory: PBKDF2-SHA256:abc:c2FsdA==:aGFzaA==", "iteration count"),
        ("mallory: PBKDF2-SHA256:1000:not base64!:aGFzaA==", "base64"),
        ("mallory: PBKDF2-SHA256:1000:c2FsdA==", "PBKDF2-SHA256:<iterations>"),
    ],
)
def test_a_bad_entry_names_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = write(tmp_path / "users", f"# users\nalice: pw\n\n{line}\n")
    with pytest.raises(CredentialsError, match=message) as caught:
        read_credentials(path)
    assert str(caught.value).startswith(f"{path}:4: ")


def test_an_unreadable_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(CredentialsError, match=str(tmp_path / "missing")):
        read_credentials(tmp_path / "missing")


@settings(max_examples=25, deadline=None)
@given(st.text(min_size=1, max_size=40), st.text(min_size=1, max_size=40))
def test_hashed_passwords_match_only_themselves(password: str, other: str) -> None:
    stored = parse_stored_password(hash_password(password, FAST))
    assert stored.hashed and stored.iterations == FAST
    assert stored.matches(password)
    assert stored.matches(other) == (other == password)


def test_hash_format_and_salt() -> None:
    first, second = hash_password("pw", FAST), hash_password("pw", FAST)
    assert first != second  # salted
    scheme, iterations, salt, digest = first.split(":")
    assert (scheme, iterations) == ("PBKDF2-SHA256", str(FAST))
    assert len(base64.b64decode(salt)) == 16 and len(base64.b64decode(digest)) == 32
    known = hash_password("pw", 1, salt=b"0123456789abcdef")
    assert known == hash_password("pw", 1, salt=b"0123456789abcdef")


def test_a_hash_may_hold_roles_after_it(tmp_path: Path) -> None:
    user = parse_user("alice", hash_password("pw,with,commas", FAST) + ",viewer")
    assert user.role is Role.VIEWER and user.password.matches("pw,with,commas")


def authenticate(credentials: BasicCredentials, user: str, password: str) -> str | None:
    found = asyncio.run(credentials.authenticate(user, password))
    return None if found is None else f"{found.name}/{found.role.value}"


def test_authenticate_plain_and_hashed(tmp_path: Path) -> None:
    path = write(tmp_path / "users", f"alice: {hash_password('a-pw', FAST)},viewer\nbob: b-pw\n")
    credentials = BasicCredentials(path)
    assert authenticate(credentials, "alice", "a-pw") == "alice/viewer"
    assert authenticate(credentials, "alice", "a-pw") == "alice/viewer"  # remembered this time
    assert authenticate(credentials, "alice", "b-pw") is None
    assert authenticate(credentials, "bob", "b-pw") == "bob/admin"
    assert authenticate(credentials, "bob", "B-pw") is None
    assert authenticate(credentials, "nobody", "b-pw") is None


def test_the_file_is_read_again_when_it_changes(tmp_path: Path) -> None:
    path = write(tmp_path / "users", f"alice: {hash_password('old', FAST)}\n")
    credentials = BasicCredentials(path)
    assert authenticate(credentials, "alice", "old") == "alice/admin"
    write(path, f"alice: {hash_password('new', FAST)},viewer\nbob: b-pw\n")
    os.utime(path, ns=(1, 1))  # a different modification time whatever the clock's resolution
    assert authenticate(credentials, "alice", "old") is None  # the remembered login went with the old hash
    assert authenticate(credentials, "alice", "new") == "alice/viewer"
    assert authenticate(credentials, "bob", "b-pw") == "bob/admin"


def test_a_broken_change_keeps_the_last_good_users(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = write(tmp_path / "users", "alice: pw\n")
    credentials = BasicCredentials(path)
    write(path, "alice: pw\nbob: pw,nonsense\n")
    os.utime(path, ns=(2, 2))
    assert authenticate(credentials, "alice", "pw") == "alice/admin"
    assert authenticate(credentials, "bob", "pw") is None
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and f"{path}:2: unknown role 'nonsense'" in errors[0]
    write(path, "alice: pw\nbob: pw,viewer\n")
    os.utime(path, ns=(3, 3))
    assert authenticate(credentials, "bob", "pw") == "bob/viewer"


def test_a_file_that_cannot_be_used_at_startup_raises(tmp_path: Path) -> None:
    with pytest.raises(CredentialsError, match=rf"{tmp_path / 'users'}:1: unknown role"):
        BasicCredentials(write(tmp_path / "users", "alice: pw,root\n"))


def run_tool(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "connect.rest.credentials", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_hash_tool_makes_a_hash_the_file_accepts(tmp_path: Path) -> None:
    made = run_tool("hash", "--iterations", str(FAST), stdin="s3cret pw\n")
    assert made.returncode == 0, made.stderr
    line = made.stdout.strip()
    assert line.startswith(f"PBKDF2-SHA256:{FAST}:") and "s3cret" not in made.stdout
    path = write(tmp_path / "users", f"alice: {line},viewer\n")
    assert authenticate(BasicCredentials(path), "alice", "s3cret pw") == "alice/viewer"
    checked = run_tool("check", str(path))
    assert checked.returncode == 0 and checked.stdout.split() == ["alice", "viewer", "hashed"]


def test_tool_errors_are_exit_codes() -> None:
    assert run_tool("hash", stdin="\n").returncode == 1
    bad = run_tool("hash", "--iterations", "0", stdin="pw\n")
    assert bad.returncode == 2 and "--iterations must be at least 1" in bad.stderr
    missing = run_tool("check", "/nonexistent/users")
    assert missing.returncode == 1 and "/nonexistent/users" in missing.stderr


def test_a_vanished_file_keeps_the_last_users(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = write(tmp_path / "users", "alice: pw\n")
    credentials = BasicCredentials(path)
    path.unlink()
    assert authenticate(credentials, "alice", "pw") == "alice/admin"
    assert authenticate(credentials, "alice", "pw") == "alice/admin"
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and f"{path}: cannot read the credentials file" in errors[0]
    write(path, "alice: new-pw\n")
    assert authenticate(credentials, "alice", "new-pw") == "alice/admin"
