"""MirrorSourceConnector's answers that need no cluster: config validation, offsets a user
may set over REST, and exactly-once support, as Kafka's connector gives them."""

from __future__ import annotations

from typing import Any

import pytest

from connect.api import ConnectException, ExactlyOnceSupport
from connect.api.task import partition_key
from connectors.mirror.source_connector import MirrorSourceConnector
from connectors.mirror.source_task import MirrorSourceTask

BASE = {
    "source.cluster.alias": "A",
    "target.cluster.alias": "B",
    "source.cluster.bootstrap.servers": "a:9092",
    "target.cluster.bootstrap.servers": "b:9092",
}


def test_kafka_class_name_and_task() -> None:
    assert MirrorSourceConnector.aliases == ("org.apache.kafka.connect.mirror.MirrorSourceConnector",)
    assert MirrorSourceConnector().task_class() is MirrorSourceTask


def test_offset_sync_settings_without_offset_syncs_are_refused() -> None:
    issues = MirrorSourceConnector().validate(
        {**BASE, "emit.offset-syncs.enabled": "false", "offset-syncs.topic.replication.factor": "1"}
    )
    assert [i.key for i in issues] == ["emit.offset-syncs.enabled"]
    assert "offset-syncs.topic.replication.factor" in issues[0].message
    assert MirrorSourceConnector().validate({**BASE, "emit.offset-syncs.enabled": "false"}) == []


def test_exactly_once_needs_a_read_committed_source_consumer() -> None:
    connector = MirrorSourceConnector()
    assert connector.exactly_once_support(BASE) == ExactlyOnceSupport.UNSUPPORTED
    committed = {**BASE, "source.consumer.isolation.level": "read_committed"}
    assert connector.exactly_once_support(committed) == ExactlyOnceSupport.SUPPORTED


def key(**partition: Any) -> tuple[tuple[str, Any], ...]:
    return partition_key(partition)


def test_offsets_set_over_rest_are_checked_for_shape() -> None:
    connector = MirrorSourceConnector()
    good = key(cluster="A", topic="t", partition=0)
    assert connector.alter_offsets(BASE, {good: {"offset": 5}, key(x=1): None}) is True
    bad: list[tuple[dict[tuple[tuple[str, Any], ...], dict[str, Any] | None], str]] = [
        ({key(topic="t", partition=0): {"offset": 1}}, "'cluster'"),
        ({key(cluster="A", topic=3, partition=0): {"offset": 1}}, "'topic'"),
        ({key(cluster="A", topic="t", partition=-1): {"offset": 1}}, "'partition'"),
        ({key(cluster="A", topic="t", partition="0"): {"offset": 1}}, "'partition'"),
        ({good: {"offset": -1}}, "'offset'"),
        ({good: {"offset": "5"}}, "'offset'"),
        ({good: {}}, "'offset'"),
    ]
    for offsets, named in bad:
        with pytest.raises(ConnectException, match=named):
            connector.alter_offsets(BASE, offsets)
