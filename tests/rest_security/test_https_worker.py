"""Workers serving their REST API over HTTPS: keystores, trust, client certificates,
several listeners, and the startup errors of TLS settings that cannot work."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from connect.api.errors import ConnectException
from sluiceway.embedded import EmbeddedConnect, free_port
from tests.certificates import TestCA
from tests.rest_security.conftest import source_config, trusting


def test_https_with_a_pkcs12_keystore(tmp_path: Path, bootstrap: str, ca: TestCA, ca_pem: Path) -> None:
    keystore = ca.pkcs12_keystore(tmp_path, "node", "ks-pw")
    config = {
        "listeners": "https://127.0.0.1:0",
        "listeners.https.ssl.keystore.location": str(keystore),
        "listeners.https.ssl.keystore.password": "ks-pw",
        "listeners.https.ssl.keystore.type": "PKCS12",
    }
    with EmbeddedConnect(tmp_path, config, bootstrap, http_options={"verify": trusting(ca_pem)}) as connect:
        assert connect.url.startswith("https://127.0.0.1:")
        assert connect.request("GET", "/").status_code == 200
        connect.create_connector("tls-src", source_config(tmp_path, "tls-src"))
        connect.wait_for_running("tls-src")
        # No trust in the test CA: the certificate is refused.
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            httpx.get(connect.url + "/", timeout=30)
        # Plain HTTP to the TLS port gets no HTTP answer.
        with pytest.raises(httpx.HTTPError):
            httpx.get(connect.url.replace("https://", "http://") + "/", timeout=30)


def test_client_certificates_required_with_pem_stores(
    tmp_path: Path, bootstrap: str, ca: TestCA, ca_pem: Path
) -> None:
    cert, key = ca.pem_files(tmp_path, "node", key_password="key-pw")
    keystore = tmp_path / "keystore.pem"
    keystore.write_bytes(key.read_bytes() + cert.read_bytes())
    config = {
        "listeners": "https://127.0.0.1:0",
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(keystore),
        "ssl.key.password": "key-pw",
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(ca_pem),
        "ssl.client.auth": "required",
    }
    client_cert = ca.pem_files(tmp_path, "client", server=False, client=True)
    with EmbeddedConnect(
        tmp_path, config, bootstrap, http_options={"verify": trusting(ca_pem, client_cert)}
    ) as connect:
        assert connect.request("GET", "/connectors").json() == []
        with pytest.raises(httpx.HTTPError):
            httpx.get(connect.url + "/connectors", verify=trusting(ca_pem), timeout=30)
        # A certificate from another CA is no better than none.
        stranger = TestCA("another CA").pem_files(tmp_path, "stranger", server=False, client=True)
        with pytest.raises(httpx.HTTPError):
            httpx.get(connect.url + "/connectors", verify=trusting(ca_pem, stranger), timeout=30)


def test_http_and_https_listeners_and_the_advertised_one(
    tmp_path: Path, bootstrap: str, ca: TestCA, ca_pem: Path
) -> None:
    keystore = ca.pkcs12_keystore(tmp_path, "node", "pw")
    http_port, https_port = free_port(), free_port()
    config = {
        "listeners": f"http://127.0.0.1:{http_port},https://127.0.0.1:{https_port}",
        "ssl.keystore.location": str(keystore),
        "ssl.keystore.password": "pw",
        "rest.advertised.host.name": "127.0.0.1",
    }
    with EmbeddedConnect(tmp_path / "a", config, bootstrap) as connect:
        assert connect.runtime is not None
        assert connect.runtime.rest.url == f"http://127.0.0.1:{http_port}/"  # Kafka: http if any listener is
        assert httpx.get(f"https://127.0.0.1:{https_port}/", verify=trusting(ca_pem)).status_code == 200
        assert httpx.get(f"http://127.0.0.1:{http_port}/").status_code == 200
    config["rest.advertised.listener"] = "HTTPS"
    with EmbeddedConnect(
        tmp_path / "b", config, bootstrap, http_options={"verify": trusting(ca_pem)}
    ) as connect:
        assert connect.runtime is not None
        assert connect.runtime.rest.url == f"https://127.0.0.1:{https_port}/"
        assert connect.runtime.herder.worker_id == f"127.0.0.1:{https_port}"
        assert connect.request("GET", "/").status_code == 200


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            {"listeners": "https://127.0.0.1:0"},
            "an https listener needs a keystore: set ssl.keystore.location",
        ),
        (
            {"listeners": "https://127.0.0.1:0", "listeners.https.ssl.keystore.location": "/nonexistent.p12"},
            "listeners.https.ssl.keystore.location=/nonexistent.p12: cannot read",
        ),
        (
            {"listeners": "http://127.0.0.1:0", "rest.advertised.listener": "https"},
            "rest.advertised.listener=https: no https listener",
        ),
    ],
)
def test_tls_settings_that_cannot_work_stop_the_worker(
    tmp_path: Path, bootstrap: str, config: dict[str, str], message: str
) -> None:
    with pytest.raises(ConnectException, match=message):
        EmbeddedConnect(tmp_path, config, bootstrap).start()


def test_a_jks_keystore_stops_the_command_line_worker(tmp_path: Path, bootstrap: str) -> None:
    jks = tmp_path / "server.jks"
    jks.write_bytes(bytes.fromhex("feedfeed00000002") + b"\0" * 64)
    props = tmp_path / "worker.properties"
    props.write_text(
        f"bootstrap.servers={bootstrap}\n"
        "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
        "value.converter=org.apache.kafka.connect.storage.StringConverter\n"
        f"offset.storage.file.filename={tmp_path / 'offsets'}\n"
        "listeners=https://127.0.0.1:0\n"
        f"ssl.keystore.location={jks}\n"
        "ssl.keystore.password=changeit\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "sluiceway.cli", "standalone", str(props)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert f"ssl.keystore.location={jks} is a JKS store" in result.stderr
    assert "keytool -importkeystore" in result.stderr


def test_the_ssl_keys_of_kafka_clients_do_not_disturb_an_http_worker(tmp_path: Path, bootstrap: str) -> None:
    # Broker-side TLS keys pointing at a JKS truststore (only Java reads it) are not for REST.
    jks = tmp_path / "truststore.jks"
    jks.write_bytes(bytes.fromhex("feedfeed00000002") + b"\0" * 64)
    config = {"ssl.truststore.location": str(jks), "ssl.truststore.password": "changeit"}
    with EmbeddedConnect(tmp_path, config, bootstrap) as connect:
        assert connect.request("GET", "/").status_code == 200
