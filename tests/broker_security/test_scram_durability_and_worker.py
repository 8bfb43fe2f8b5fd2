"""SCRAM credentials survive a restart and are stored hashed; a worker runs a file source ->
topic -> file sink pipeline against a SASL_SSL listener."""

from __future__ import annotations

from pathlib import Path

from confluent_kafka import Producer

from broker.cli import main as broker_main
from broker.config import load_config
from broker.server import EmbeddedBroker
from sluiceway.embedded import EmbeddedConnect
from tests.broker_security.conftest import SCRAM_USERS, SecureBroker, broker_settings, create_scram_users
from tests.certificates import TestCA


def test_scram_credentials_survive_restart_hashed(tmp_path: Path) -> None:
    ca = TestCA()
    data_dir = tmp_path / "data"
    settings = broker_settings(tmp_path, ca, data_dir)
    ca_pem = ca.write_pem(tmp_path / "ca.pem")
    with EmbeddedBroker(load_config(settings)) as broker:
        create_scram_users(SecureBroker(broker, ca_pem, data_dir, tmp_path).address("PLAINTEXT"))
    stored = (data_dir / "__scram_credentials.json").read_text()
    for user, password in SCRAM_USERS.values():
        assert user in stored
        assert password not in stored
    assert "stored_key" in stored
    with EmbeddedBroker(load_config(settings)) as broker:
        sb = SecureBroker(broker, ca_pem, data_dir, tmp_path)
        p = Producer(sb.client("SASL_SSL", "SCRAM-SHA-512"))
        p.produce("after-restart", b"x")
        assert p.flush(30) == 0


def test_add_scram_bootstraps_a_user_without_a_broker(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    # A bad spec is a configuration error (exit 2), before anything starts.
    assert (
        broker_main(["--override", f"log.dirs={data_dir}", "--add-scram", "SCRAM-SHA-1=[name=a,password=b]"])
        == 2
    )
    from broker.security.scram_bootstrap import add_scram_users, parse_add_scram
    from broker.security.scram_store import ScramStore

    add_scram_users(str(data_dir), [parse_add_scram("SCRAM-SHA-256=[name=dave,password=dave-secret]")])
    assert ScramStore(str(data_dir)).users() == {"dave": {"SCRAM-SHA-256": 4096}}


def test_worker_pipeline_over_sasl_ssl(secure: SecureBroker, tmp_path: Path) -> None:
    source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("alpha\nbeta\ngamma\n")
    user, password = SCRAM_USERS["SCRAM-SHA-256"]
    worker = {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-256",
        "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="{user}" password="{password}";',
        "ssl.truststore.location": str(secure.ca_pem),
        "ssl.truststore.type": "PEM",
    }
    with EmbeddedConnect(
        tmp_path / "worker", worker, bootstrap_servers=secure.address("SASL_SSL")
    ) as connect:
        connect.create_connector(
            "src",
            {
                "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
                "file": str(source),
                "topic": "secure-lines",
            },
        )
        connect.create_connector(
            "sink",
            {
                "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
                "file": str(sink),
                "topics": "secure-lines",
            },
        )
        connect.wait_for_running("src")
        connect.wait_for_running("sink")
        connect.wait_for(
            lambda: sink.exists() and sink.read_text().split() == ["alpha", "beta", "gamma"],
            60,
            "the sink file to hold the three lines",
        )
