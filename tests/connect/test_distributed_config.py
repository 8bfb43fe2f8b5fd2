"""DistributedConfig: Kafka's distributed worker keys, defaults and cross-key checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from connect.api.config import ConfigValidationError
from connect.distributed import StartupError, parse_overrides, worker_config
from connect.distributed import main as distributed_main
from connect.runtime.config import DistributedConfig
from connect.runtime.properties import load
from tests.support import ROOT

BASE = {
    "bootstrap.servers": "127.0.0.1:9092",
    "group.id": "cluster",
    "config.storage.topic": "c",
    "offset.storage.topic": "o",
    "status.storage.topic": "s",
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
}


def test_kafka_defaults() -> None:
    c = DistributedConfig.parse(BASE)
    assert (c.session_timeout_ms, c.heartbeat_interval_ms, c.rebalance_timeout_ms) == (10000, 3000, 60000)
    assert (c.worker_sync_timeout_ms, c.worker_unsync_backoff_ms) == (3000, 300000)
    assert c.connect_protocol == "sessioned"
    assert c.scheduled_rebalance_max_delay_ms == 300000
    assert (c.offset_storage_partitions, c.status_storage_partitions) == (25, 5)
    assert c.config_storage_replication_factor == 3
    assert c.inter_worker_signature_algorithm == "HmacSHA256"
    assert c.inter_worker_verification_algorithms == ["HmacSHA256"]
    assert c.inter_worker_key_ttl_ms == 3600000


@pytest.mark.parametrize(
    "key", ["group.id", "config.storage.topic", "offset.storage.topic", "status.storage.topic"]
)
def test_required_keys_are_named_when_missing(key: str) -> None:
    props = {k: v for k, v in BASE.items() if k != key}
    with pytest.raises(ConfigValidationError) as e:
        DistributedConfig.parse(props)
    assert key in {i.key for i in e.value.issues}


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("config.storage.replication.factor", "0", "must be -1 or at least 1"),
        ("offset.storage.partitions", "-2", "must be -1 or at least 1"),
        ("heartbeat.interval.ms", "10000", "lower than session.timeout.ms"),
        ("connect.protocol", "cooperative", "connect.protocol"),
        ("inter.worker.signature.algorithm", "MD5", "Unsupported algorithm"),
        ("session.timeout.ms", "soon", "session.timeout.ms"),
    ],
)
def test_bad_values_name_their_key(key: str, value: str, words: str) -> None:
    with pytest.raises(ConfigValidationError) as e:
        DistributedConfig.parse({**BASE, key: value})
    assert key in {i.key for i in e.value.issues}
    assert words in str(e.value)


def test_the_three_topics_must_differ() -> None:
    with pytest.raises(ConfigValidationError, match="must be different topics"):
        DistributedConfig.parse({**BASE, "status.storage.topic": "c"})


def test_minus_one_means_the_brokers_default() -> None:
    c = DistributedConfig.parse(
        {**BASE, "offset.storage.replication.factor": "-1", "status.storage.partitions": "-1"}
    )
    assert (c.offset_storage_replication_factor, c.status_storage_partitions) == (-1, -1)


@pytest.mark.parametrize("value", ["EAGER", " compatible ", "sessioned"])
def test_protocol_names_are_case_insensitive(value: str) -> None:
    assert (
        DistributedConfig.parse({**BASE, "connect.protocol": value}).connect_protocol == value.strip().lower()
    )


def test_the_shipped_workers_properties_parse() -> None:
    props = load(Path(ROOT) / "workers.properties").values
    c = DistributedConfig.parse(props)
    assert c.group_id == "connect-cluster"
    assert c.config_storage_replication_factor == -1


def test_startup_errors_name_the_file_line_or_override(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    props = tmp_path / "w.properties"
    props.write_text("".join(f"{k}={v}\n" for k, v in BASE.items()) + "session.timeout.ms=soon\n")
    assert distributed_main([str(props), "--override", "heartbeat.interval.ms=often"]) == 1
    err = capsys.readouterr().err
    assert f"{props}:8: session.timeout.ms:" in err
    assert "--override: heartbeat.interval.ms:" in err


def test_an_override_replaces_the_files_value(tmp_path: Path) -> None:
    props = tmp_path / "w.properties"
    props.write_text("".join(f"{k}={v}\n" for k, v in BASE.items()) + "listeners=http://127.0.0.1:8083\n")
    config = worker_config(load(props), parse_overrides(["listeners = http://127.0.0.1:8084"]))
    assert config.listeners == ["http://127.0.0.1:8084"]
    with pytest.raises(StartupError, match="expected key=value"):
        parse_overrides(["listeners"])
