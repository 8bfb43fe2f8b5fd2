"""Running the registry: its configuration refuses what it cannot use, naming the key, and
the store refuses a topic that would lose schemas."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from broker.server import EmbeddedBroker
from schema_registry.server import ConfigError, RegistryConfig, RegistryServer, load_values, main
from schema_registry.store import StoreError
from tests.support import free_port

SAMPLE = Path(__file__).resolve().parents[2] / "config" / "schema-registry.properties"


def test_the_sample_file_and_overrides() -> None:
    values = load_values(str(SAMPLE), ["kafkastore.topic=_other"])
    config = RegistryConfig.parse(values)
    assert (config.host, config.port, config.bootstrap) == ("127.0.0.1", 8081, "127.0.0.1:9092")
    assert (config.topic, config.replication_factor, config.compatibility_level) == ("_other", 1, "BACKWARD")


@pytest.mark.parametrize(
    ("values", "problem"),
    [
        ({}, "kafkastore.bootstrap.servers is required"),
        ({"kafkastore.bootstrap.servers": "h:1", "listeners": "https://h:1"}, "listeners=https://h:1"),
        ({"kafkastore.bootstrap.servers": "h:1", "schema.compatibility.level": "sideways"}, "sideways"),
        (
            {"kafkastore.bootstrap.servers": "h:1", "kafkastore.timeout.ms": "soon"},
            "kafkastore.timeout.ms=soon",
        ),
    ],
)
def test_bad_settings_name_the_key(values: dict[str, str], problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        RegistryConfig.parse(values)


def test_the_command_exits_2_on_a_bad_setting(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--override", "schema.compatibility.level=sideways"]) == 2
    assert "kafkastore.bootstrap.servers is required" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("partitions", "configs", "problem"),
    [
        (2, {"cleanup.policy": "compact"}, "has 2 partitions"),
        (1, {"cleanup.policy": "delete"}, "must be compact"),
    ],
)
def test_a_topic_that_would_lose_schemas_is_refused(
    shared_broker: EmbeddedBroker, partitions: int, configs: dict[str, str], problem: str
) -> None:
    topic = f"_schemas-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": shared_broker.bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1, config=configs)])[topic].result(30)
    config = RegistryConfig.parse(
        {
            "listeners": f"http://127.0.0.1:{free_port()}",
            "kafkastore.bootstrap.servers": shared_broker.bootstrap,
            "kafkastore.topic": topic,
        }
    )
    with pytest.raises(StoreError, match=problem):
        RegistryServer(config).start()
