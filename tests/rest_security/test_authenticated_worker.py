"""A worker with authentication on: 401s, roles, bearer tokens, the open and the signed
paths, reloading users, Kafka's JAAS configuration, and CORS in front of it all."""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from connect.api.errors import ConnectException
from connect.rest.credentials import hash_password
from sluiceway.embedded import EmbeddedConnect
from tests.rest_security.conftest import source_config

UNAUTHORIZED = {"error_code": 401, "message": "User cannot access the resource."}
ADMIN_TOKEN = "admin-token-0123"
VIEWER_TOKEN = "viewer-token-4567"
ORIGIN = "https://ui.example.com"


def users_text(extra: str = "") -> str:
    return (
        "# the REST API's users\n"
        f"alice: {hash_password('alice-pw', 1000)},admin\n"
        "bob: bob-pw,viewer\n"
        "carol: carol-pw\n" + extra
    )


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory, bootstrap: str) -> Iterator[EmbeddedConnect]:
    work = tmp_path_factory.mktemp("secured")
    users = work / "users.properties"
    users.write_text(users_text())
    tokens = work / "tokens"
    tokens.write_text(f"{ADMIN_TOKEN}: admin\n{hashlib.sha256(VIEWER_TOKEN.encode()).hexdigest()}: viewer\n")
    config = {
        "rest.authentication.basic.credentials.file": str(users),
        "rest.authentication.bearer.tokens.file": str(tokens),
        "access.control.allow.origin": ORIGIN,
        "access.control.allow.methods": "GET,POST,PUT,DELETE",
    }
    with EmbeddedConnect(work, config, bootstrap, http_options={"auth": ("alice", "alice-pw")}) as connect:
        yield connect


def call(connect: EmbeddedConnect, method: str, path: str, **kwargs: object) -> httpx.Response:
    return httpx.request(method, connect.url + path, timeout=60, **kwargs)  # type: ignore[arg-type]


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.mark.parametrize(
    "credentials",
    [
        {},
        {"auth": ("alice", "wrong")},
        {"auth": ("mallory", "alice-pw")},
        {"headers": {"Authorization": "Basic not-base64!"}},
        {"headers": {"Authorization": "Digest username=alice"}},
        {"headers": bearer("no-such-token")},
        {"headers": bearer(hashlib.sha256(VIEWER_TOKEN.encode()).hexdigest())},  # the digest is no token
    ],
)
def test_missing_or_wrong_credentials_get_401(
    secured: EmbeddedConnect, credentials: dict[str, object]
) -> None:
    r = call(secured, "GET", "/connectors", **credentials)
    assert r.status_code == 401 and r.json() == UNAUTHORIZED
    challenges = r.headers.get_list("www-authenticate")
    assert challenges[0] == 'Basic realm="KafkaConnect"'
    assert challenges[1].startswith('Bearer realm="KafkaConnect"')
    assert ('error="invalid_token"' in challenges[1]) == ("Bearer" in str(credentials))


def test_health_is_open_the_rest_needs_a_user(secured: EmbeddedConnect) -> None:
    assert call(secured, "GET", "/health").json()["status"] == "healthy"
    for path in ("/", "/metrics", "/ui", "/openapi.json", "/docs", "/connector-plugins", "/admin/loggers"):
        assert call(secured, "GET", path).status_code == 401, path
        assert call(secured, "GET", path, auth=("bob", "bob-pw")).status_code == 200, path
        assert call(secured, "GET", path, headers=bearer(VIEWER_TOKEN)).status_code == 200, path


def test_signed_endpoints_are_left_to_the_signature_check(secured: EmbeddedConnect) -> None:
    # No user needed; a standalone worker has no internal endpoint to offer at all.
    r = call(secured, "PUT", "/connectors/anything/tasks", json=[])
    assert r.status_code == 404 and r.json()["error_code"] == 404


def test_a_viewer_reads_but_may_not_write(secured: EmbeddedConnect, tmp_path: Path) -> None:
    secured.create_connector("viewed", source_config(tmp_path, "viewed"))
    secured.wait_for_running("viewed")
    for viewer in ({"auth": ("bob", "bob-pw")}, {"headers": bearer(VIEWER_TOKEN)}):
        assert call(secured, "GET", "/connectors", **viewer).json() == ["viewed"]
        assert call(secured, "GET", "/connectors/viewed/status", **viewer).status_code == 200
        # A read passes authentication (whatever the app then answers to HEAD).
        assert call(secured, "HEAD", "/connectors", **viewer).status_code not in (401, 403)
        writes = [
            ("POST", "/connectors", {"name": "x", "config": source_config(tmp_path, "x")}),
            ("PUT", "/connectors/viewed/config", source_config(tmp_path, "viewed")),
            ("PATCH", "/connectors/viewed/config", {"tasks.max": "2"}),
            ("PUT", "/connectors/viewed/pause", None),
            ("POST", "/connectors/viewed/restart", None),
            ("DELETE", "/connectors/viewed", None),
            ("PUT", "/admin/loggers/root", {"level": "DEBUG"}),
        ]
        for method, path, body in writes:
            r = call(secured, method, path, json=body, **viewer)
            assert r.status_code == 403, (method, path, r.text)
            assert r.json()["error_code"] == 403 and "may only read" in r.json()["message"]
    assert secured.status("viewed")["connector"]["state"] == "RUNNING"  # nothing was changed
    assert call(secured, "DELETE", "/connectors/viewed", headers=bearer(ADMIN_TOKEN)).status_code == 204


def test_admins_create_change_and_delete(secured: EmbeddedConnect, tmp_path: Path) -> None:
    body = {"name": "made", "config": source_config(tmp_path, "made")}
    created = call(secured, "POST", "/connectors", json=body, auth=("alice", "alice-pw"))  # hashed password
    assert created.status_code == 201, created.text
    secured.wait_for_running("made")
    # carol is listed with no role: an admin, as every user of Kafka's extension.
    assert call(secured, "PUT", "/connectors/made/pause", auth=("carol", "carol-pw")).status_code == 202
    assert call(secured, "DELETE", "/connectors/made", headers=bearer(ADMIN_TOKEN)).status_code == 204


def test_users_added_and_removed_without_restart(secured: EmbeddedConnect) -> None:
    users = Path(secured.config_values["rest.authentication.basic.credentials.file"])
    assert call(secured, "GET", "/connectors", auth=("dave", "dave-pw")).status_code == 401
    users.write_text(users_text(f"dave: {hash_password('dave-pw', 1000)},viewer\n"))
    os.utime(users, ns=(10**9, 10**9))
    assert call(secured, "GET", "/connectors", auth=("dave", "dave-pw")).status_code == 200
    assert call(secured, "DELETE", "/connectors/x", auth=("dave", "dave-pw")).status_code == 403
    users.write_text(users_text())
    os.utime(users, ns=(2 * 10**9, 2 * 10**9))
    assert call(secured, "GET", "/connectors", auth=("dave", "dave-pw")).status_code == 401


def test_cors_preflight_needs_no_credentials(secured: EmbeddedConnect) -> None:
    preflight = {
        "Origin": ORIGIN,
        "Access-Control-Request-Method": "PUT",
        "Access-Control-Request-Headers": "authorization, content-type",
    }
    r = call(secured, "OPTIONS", "/connectors/c/config", headers=preflight)
    assert r.status_code == 200
    assert r.headers["access-control-allow-origin"] == ORIGIN
    assert set(r.headers["access-control-allow-methods"].split(", ")) == {"GET", "POST", "PUT", "DELETE"}
    assert "authorization" in r.headers["access-control-allow-headers"].lower()
    assert r.headers["access-control-allow-credentials"] == "true"
    refused = call(secured, "OPTIONS", "/connectors", headers={**preflight, "Origin": "https://evil.example"})
    assert refused.status_code == 400 and "access-control-allow-origin" not in refused.headers
    patch = call(
        secured, "OPTIONS", "/connectors", headers={**preflight, "Access-Control-Request-Method": "PATCH"}
    )
    assert patch.status_code == 400  # not among access.control.allow.methods


def test_cors_headers_on_answers_including_refusals(secured: EmbeddedConnect) -> None:
    ok = call(secured, "GET", "/connectors", headers={"Origin": ORIGIN}, auth=("bob", "bob-pw"))
    assert ok.status_code == 200 and ok.headers["access-control-allow-origin"] == ORIGIN
    refused = call(secured, "GET", "/connectors", headers={"Origin": ORIGIN})
    assert refused.status_code == 401 and refused.headers["access-control-allow-origin"] == ORIGIN
    other = call(
        secured, "GET", "/connectors", headers={"Origin": "https://evil.example"}, auth=("bob", "bob-pw")
    )
    assert other.status_code == 200 and "access-control-allow-origin" not in other.headers


def kafka_style(tmp_path: Path) -> tuple[Path, Path]:
    users = tmp_path / "connect.password"
    users.write_text("admin: admin-secret\nreader: reader-secret,viewer\n")
    jaas = tmp_path / "connect_jaas.conf"
    jaas.write_text(
        "KafkaConnect {\n"
        "  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required\n"
        f'  file="{users}";\n'
        "};\n"
    )
    return users, jaas


BASIC_AUTH_EXTENSION = "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
EXTENSION = {"rest.extension.classes": BASIC_AUTH_EXTENSION}


def test_kafkas_basic_auth_extension_through_kafka_opts(
    tmp_path: Path, bootstrap: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, jaas = kafka_style(tmp_path)
    monkeypatch.setenv("KAFKA_OPTS", f"-Xmx512m -Djava.security.auth.login.config={jaas}")
    with EmbeddedConnect(tmp_path, EXTENSION, bootstrap) as connect:
        r = call(connect, "GET", "/connectors")
        assert r.status_code == 401 and r.headers.get_list("www-authenticate") == [
            'Basic realm="KafkaConnect"'
        ]
        assert call(connect, "GET", "/connectors", headers=bearer("x")).status_code == 401
        assert call(connect, "GET", "/connectors", auth=("admin", "admin-secret")).status_code == 200
        assert call(connect, "DELETE", "/connectors/x", auth=("reader", "reader-secret")).status_code == 403
        # No CORS configured: a preflight is an ordinary request, and needs a user.
        preflight = {"Origin": ORIGIN, "Access-Control-Request-Method": "GET"}
        assert call(connect, "OPTIONS", "/connectors", headers=preflight).status_code == 401
        answer = call(
            connect, "GET", "/connectors", headers={"Origin": ORIGIN}, auth=("admin", "admin-secret")
        )
        assert "access-control-allow-origin" not in answer.headers


def test_the_jaas_file_as_a_worker_key(
    tmp_path: Path, bootstrap: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KAFKA_OPTS", raising=False)
    _, jaas = kafka_style(tmp_path)
    config = {**EXTENSION, "java.security.auth.login.config": str(jaas)}
    with EmbeddedConnect(tmp_path, config, bootstrap) as connect:
        assert call(connect, "GET", "/", auth=("admin", "admin-secret")).status_code == 200
        assert call(connect, "GET", "/", auth=("admin", "wrong")).status_code == 401


def test_auth_configs_that_cannot_work_stop_the_worker(
    tmp_path: Path, bootstrap: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KAFKA_OPTS", raising=False)
    with pytest.raises(
        ConnectException, match=r"needs a JAAS file: set KAFKA_OPTS=-Djava\.security\.auth\.login\.config"
    ):
        EmbeddedConnect(tmp_path / "a", EXTENSION, bootstrap).start()
    jaas = tmp_path / "bad_jaas.conf"
    jaas.write_text('KafkaConnect {\n  com.example.LdapLoginModule required url="ldap://x";\n};\n')
    monkeypatch.setenv("KAFKA_OPTS", f"-Djava.security.auth.login.config={jaas}")
    with pytest.raises(
        ConnectException, match=rf"^{jaas}:2: login module com.example.LdapLoginModule is not"
    ):
        EmbeddedConnect(tmp_path / "b", EXTENSION, bootstrap).start()
    users = tmp_path / "users"
    users.write_text("alice: pw,superuser\n")
    with pytest.raises(ConnectException, match=rf"^{users}:1: unknown role 'superuser'"):
        EmbeddedConnect(
            tmp_path / "c", {"rest.authentication.basic.credentials.file": str(users)}, bootstrap
        ).start()
    with pytest.raises(
        ConnectException, match=r"rest\.extension\.classes.*com\.example\.Other is not available"
    ):
        EmbeddedConnect(tmp_path / "d", {"rest.extension.classes": "com.example.Other"}, bootstrap).start()


def test_secrets_never_reach_the_log(secured: EmbeddedConnect, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    assert call(secured, "GET", "/connectors", auth=("alice", "wrong-secret-pw")).status_code == 401
    assert call(secured, "HEAD", "/connectors", headers=bearer("secret-token-xyz")).status_code == 401
    assert call(secured, "GET", "/connectors", auth=("alice", "alice-pw")).status_code == 200
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "refused GET /connectors: wrong password or unknown user 'alice'" in logged
    for secret in ("wrong-secret-pw", "secret-token-xyz", "alice-pw"):
        assert secret not in logged
