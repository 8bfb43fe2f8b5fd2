"""Tests of connect.runtime.config_providers: Kafka's FileConfigProvider, DirectoryConfigProvider
and EnvVarConfigProvider, and ``resolve`` of ``${provider:[path:]key}`` placeholders."""

from __future__ import annotations

from pathlib import Path

import pytest

from connect.api.config_provider import ConfigProvider
from connect.api.errors import ConnectException
from connect.runtime.config_providers import (
    PLACEHOLDER,
    DirectoryConfigProvider,
    EnvVarConfigProvider,
    FileConfigProvider,
    resolve,
    unresolved_providers,
)


@pytest.fixture
def secrets(tmp_path: Path) -> Path:
    path = tmp_path / "secrets" / "db.properties"
    path.parent.mkdir()
    path.write_text("user=alice\npassword=s3cr3t:with=odd\\ chars\nport : 5432\n", encoding="utf-8")
    return path


@pytest.fixture
def secret_dir(tmp_path: Path) -> Path:
    d = tmp_path / "mounted"
    d.mkdir()
    (d / "token").write_text("tok-123\n", encoding="utf-8")
    (d / "api-key").write_text("k3y", encoding="utf-8")
    (d / "nested").mkdir()
    (d / "nested" / "inner").write_text("not read", encoding="utf-8")
    return d


def providers(**configs: dict[str, str]) -> dict[str, ConfigProvider]:
    made: dict[str, ConfigProvider] = {
        "file": FileConfigProvider(),
        "directory": DirectoryConfigProvider(),
        "env": EnvVarConfigProvider(),
    }
    for name, provider in made.items():
        provider.configure(configs.get(name, {}))
    return made


# -- FileConfigProvider -----------------------------------------------------------------------------


def test_file_provider_reads_a_properties_file(secrets: Path) -> None:
    p = FileConfigProvider()
    p.configure({})
    assert p.get(str(secrets)) == {"user": "alice", "password": "s3cr3t:with=odd chars", "port": "5432"}
    assert p.get(str(secrets), {"user", "nope"}) == {"user": "alice"}


def test_file_provider_missing_file_names_the_path(tmp_path: Path) -> None:
    p = FileConfigProvider()
    p.configure({})
    missing = tmp_path / "nope.properties"
    with pytest.raises(ConnectException) as info:
        p.get(str(missing))
    assert str(missing) in str(info.value)


def test_file_provider_allowed_paths(tmp_path: Path, secrets: Path) -> None:
    other = tmp_path / "other.properties"
    other.write_text("user=mallory\n", encoding="utf-8")
    p = FileConfigProvider()
    p.configure({"allowed.paths": f"{secrets.parent}, {tmp_path / 'elsewhere'}"})
    assert p.get(str(secrets))["user"] == "alice"
    with pytest.raises(ConnectException, match=r"allowed\.paths"):
        p.get(str(other))
    # ".." cannot climb out of an allowed directory.
    with pytest.raises(ConnectException, match=r"allowed\.paths"):
        p.get(str(secrets.parent / ".." / "other.properties"))


def test_allowed_paths_is_not_a_string_prefix_match(tmp_path: Path) -> None:
    allowed = tmp_path / "conf"
    sibling = tmp_path / "conf-evil"
    allowed.mkdir()
    sibling.mkdir()
    (sibling / "x.properties").write_text("a=1\n", encoding="utf-8")
    p = FileConfigProvider()
    p.configure({"allowed.paths": str(allowed)})
    with pytest.raises(ConnectException, match=r"allowed\.paths"):
        p.get(str(sibling / "x.properties"))


def test_allowed_paths_may_name_the_file_itself(secrets: Path) -> None:
    p = FileConfigProvider()
    p.configure({"allowed.paths": str(secrets)})
    assert p.get(str(secrets))["port"] == "5432"


# -- DirectoryConfigProvider ------------------------------------------------------------------------


def test_directory_provider_reads_files_as_they_are(secret_dir: Path) -> None:
    p = DirectoryConfigProvider()
    p.configure({})
    assert p.get(str(secret_dir)) == {"token": "tok-123\n", "api-key": "k3y"}
    assert p.get(str(secret_dir), {"api-key"}) == {"api-key": "k3y"}


def test_directory_provider_refuses_a_file(secret_dir: Path) -> None:
    p = DirectoryConfigProvider()
    p.configure({})
    with pytest.raises(ConnectException, match="not a directory"):
        p.get(str(secret_dir / "token"))


def test_directory_provider_allowed_paths(tmp_path: Path, secret_dir: Path) -> None:
    p = DirectoryConfigProvider()
    p.configure({"allowed.paths": str(tmp_path / "elsewhere")})
    with pytest.raises(ConnectException, match=r"allowed\.paths"):
        p.get(str(secret_dir))
    ok = DirectoryConfigProvider()
    ok.configure({"allowed.paths": str(tmp_path)})
    assert ok.get(str(secret_dir), {"token"}) == {"token": "tok-123\n"}


# -- EnvVarConfigProvider ---------------------------------------------------------------------------


def test_env_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLUICE_TEST_USER", "bob")
    monkeypatch.setenv("SLUICE_TEST_PASS", "pw")
    p = EnvVarConfigProvider()
    p.configure({})
    assert p.get("", {"SLUICE_TEST_USER"}) == {"SLUICE_TEST_USER": "bob"}
    everything = p.get("")
    assert everything["SLUICE_TEST_PASS"] == "pw"


def test_env_provider_allowlist_pattern(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLUICE_OK_A", "a")
    monkeypatch.setenv("SLUICE_NO_B", "b")
    p = EnvVarConfigProvider()
    p.configure({"allowlist.pattern": "SLUICE_OK_.*"})
    assert p.get("", {"SLUICE_OK_A", "SLUICE_NO_B"}) == {"SLUICE_OK_A": "a"}
    # The pattern must match the whole name.
    partial = EnvVarConfigProvider()
    partial.configure({"allowlist.pattern": "SLUICE_OK"})
    assert partial.get("", {"SLUICE_OK_A"}) == {}


def test_env_provider_takes_no_path() -> None:
    p = EnvVarConfigProvider()
    p.configure({})
    with pytest.raises(ConnectException):
        p.get("/some/path", {"HOME"})


# -- resolve ----------------------------------------------------------------------------------------


def test_placeholder_pattern_is_kafkas() -> None:
    m = PLACEHOLDER.fullmatch("${file:/etc/x.properties:password}")
    assert m is not None
    assert (m.group(1), m.group(3), m.group(4)) == ("file", "/etc/x.properties", "password")
    m = PLACEHOLDER.fullmatch("${env:HOME}")
    assert m is not None
    assert (m.group(1), m.group(3), m.group(4)) == ("env", None, "HOME")


def test_resolve_file_placeholders_in_the_middle_of_values(secrets: Path) -> None:
    config = {
        "connection.url": f"jdbc:postgresql://db:${{file:{secrets}:port}}/orders",
        "connection.user": f"${{file:{secrets}:user}}",
        "both": f"${{file:{secrets}:user}}:${{file:{secrets}:password}}@host",
        "plain": "no placeholders here",
        "empty": "",
    }
    out = resolve(config, providers())
    assert out == {
        "connection.url": "jdbc:postgresql://db:5432/orders",
        "connection.user": "alice",
        "both": "alice:s3cr3t:with=odd chars@host",
        "plain": "no placeholders here",
        "empty": "",
    }
    assert config["connection.user"] == f"${{file:{secrets}:user}}", "the input is not changed"


def test_resolve_env_placeholders(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLUICE_HOST", "db.local")
    monkeypatch.setenv("SLUICE_PORT", "6543")
    out = resolve(
        {"url": "http://${env:SLUICE_HOST}:${env:SLUICE_PORT}/x", "alt": "${env::SLUICE_HOST}"}, providers()
    )
    assert out == {"url": "http://db.local:6543/x", "alt": "db.local"}


def test_resolve_directory_placeholders(secret_dir: Path) -> None:
    out = resolve({"auth": f"Bearer ${{directory:{secret_dir}:api-key}}"}, providers())
    assert out == {"auth": "Bearer k3y"}


def test_resolve_several_providers_in_one_value(
    secrets: Path, secret_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SLUICE_REGION", "eu")
    value = f"${{file:{secrets}:user}}/${{directory:{secret_dir}:api-key}}/${{env:SLUICE_REGION}}"
    assert resolve({"v": value}, providers()) == {"v": "alice/k3y/eu"}


def test_unknown_provider_is_left_as_is(secrets: Path) -> None:
    config = {
        "a": "${vault:secret/data/db:password}",
        "b": f"${{vault:x:y}}-${{file:{secrets}:user}}",
        "c": "literal ${not a placeholder",
        "d": "${}",
    }
    out = resolve(config, providers())
    assert out == {
        "a": "${vault:secret/data/db:password}",
        "b": "${vault:x:y}-alice",
        "c": "literal ${not a placeholder",
        "d": "${}",
    }
    assert unresolved_providers(config, providers()) == {"vault"}
    assert unresolved_providers({"x": f"${{file:{secrets}:user}}"}, providers()) == set()


def test_no_providers_returns_an_equal_copy() -> None:
    config = {"a": "${file:/x:y}", "b": "plain"}
    out = resolve(config, {})
    assert out == config
    assert out is not config


def test_missing_key_names_key_and_path(secrets: Path) -> None:
    with pytest.raises(ConnectException) as info:
        resolve({"connection.password": f"${{file:{secrets}:passwd}}"}, providers())
    message = str(info.value)
    assert "passwd" in message
    assert str(secrets) in message
    assert "connection.password" in message


def test_missing_directory_entry_names_key_and_path(secret_dir: Path) -> None:
    with pytest.raises(ConnectException) as info:
        resolve({"x": f"${{directory:{secret_dir}:missing-file}}"}, providers())
    assert "missing-file" in str(info.value)
    assert str(secret_dir) in str(info.value)


def test_missing_env_var_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SLUICE_SURELY_UNSET", raising=False)
    with pytest.raises(ConnectException, match="SLUICE_SURELY_UNSET"):
        resolve({"x": "${env:SLUICE_SURELY_UNSET}"}, providers())


def test_missing_file_is_a_connect_exception_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "gone.properties"
    with pytest.raises(ConnectException) as info:
        resolve({"x": f"${{file:{missing}:a}}"}, providers())
    assert str(missing) in str(info.value)


def test_resolve_honours_allowed_paths(tmp_path: Path, secrets: Path) -> None:
    restricted = providers(file={"allowed.paths": str(tmp_path / "only-here")})
    with pytest.raises(ConnectException, match=r"allowed\.paths"):
        resolve({"x": f"${{file:{secrets}:user}}"}, restricted)
    allowed = providers(file={"allowed.paths": str(secrets.parent)})
    assert resolve({"x": f"${{file:{secrets}:user}}"}, allowed) == {"x": "alice"}


def test_a_provider_is_asked_once_per_path_with_every_wanted_key(secrets: Path) -> None:
    class Counting(ConfigProvider):
        def __init__(self) -> None:
            self.calls: list[tuple[str, set[str] | None]] = []

        def get(self, path: str, keys: set[str] | None = None) -> dict[str, str]:
            self.calls.append((path, None if keys is None else set(keys)))
            return {k: k.upper() for k in keys or ()}

    counting = Counting()
    out = resolve({"a": "${c:p1:x}${c:p1:y}", "b": "${c:p1:x}", "c": "${c:p2:z}"}, {"c": counting})
    assert out == {"a": "XY", "b": "X", "c": "Z"}
    assert sorted(counting.calls, key=lambda c: c[0]) == [("p1", {"x", "y"}), ("p2", {"z"})]


def test_a_failing_provider_becomes_a_connect_exception() -> None:
    class Exploding(ConfigProvider):
        def get(self, path: str, keys: set[str] | None = None) -> dict[str, str]:
            raise OSError("vault unreachable")

    with pytest.raises(ConnectException) as info:
        resolve({"a": "${vault:secret/db:pw}"}, {"vault": Exploding()})
    assert "vault" in str(info.value)
    assert "secret/db" in str(info.value)
    assert "vault unreachable" in str(info.value)
