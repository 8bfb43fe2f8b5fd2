"""Two real brokers (A, B) and a worker on B, and Kafka-client shortcuts, for the checkpoint,
heartbeat, group-offset and client tests. Offset syncs written here are real records in
Kafka's wire format (``formats.OffsetSync``), what MirrorSourceTask writes."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    ConsumerGroupTopicPartitions,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # re-exported untyped

from connectors.mirror.formats import Checkpoint, Heartbeat, OffsetSync
from sluiceway.embedded import EmbeddedConnect
from tests.connectors.mirror.source_support import BYTES
from tests.support import embedded_broker

T = TypeVar("T")

# The connectors by Kafka's class names, as published MM2 configs name them.
CHECKPOINT = "org.apache.kafka.connect.mirror.MirrorCheckpointConnector"
HEARTBEAT = "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector"
SOURCE = "org.apache.kafka.connect.mirror.MirrorSourceConnector"


@dataclass
class Clusters:
    a: str
    b: str
    worker: EmbeddedConnect

    def flow(self, **extra: str) -> dict[str, str]:
        """A connector config for the flow A -> B, with test intervals and factors."""
        return {
            "source.cluster.alias": "A",
            "target.cluster.alias": "B",
            "source.cluster.bootstrap.servers": self.a,
            "target.cluster.bootstrap.servers": self.b,
            "replication.factor": "1",
            "offset-syncs.topic.replication.factor": "1",
            "checkpoints.topic.replication.factor": "1",
            "heartbeats.topic.replication.factor": "1",
            "emit.checkpoints.interval.seconds": "1",
            "refresh.groups.interval.seconds": "1",
            "refresh.topics.interval.seconds": "1",
            "sync.group.offsets.interval.seconds": "1",
            "emit.heartbeats.interval.seconds": "1",
            **extra,
        }


@pytest.fixture
def clusters(tmp_path: Path) -> Iterator[Clusters]:
    with embedded_broker(tmp_path / "a") as a, embedded_broker(tmp_path / "b") as b:
        worker = EmbeddedConnect(
            tmp_path / "worker",
            {"key.converter": BYTES, "value.converter": BYTES, "header.converter": BYTES},
            bootstrap_servers=b.bootstrap,
        )
        with worker:
            yield Clusters(a.bootstrap, b.bootstrap, worker)


# -- Kafka shortcuts -------------------------------------------------------------------------


def create_topic(
    bootstrap: str, topic: str, partitions: int = 1, configs: Mapping[str, str] | None = None
) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1, config=dict(configs or {}))])[topic].result(30)


def produce(bootstrap: str, topic: str, records: Iterable[tuple[int, bytes | None, bytes | None]]) -> None:
    """(partition, key, value) records, in order."""
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 1})
    for partition, key, value in records:
        p.produce(topic, key=key, value=value, partition=partition)
    assert p.flush(30) == 0, "records were not delivered"


def write_offset_syncs(bootstrap: str, topic: str, syncs: Iterable[OffsetSync]) -> None:
    produce(bootstrap, topic, ((0, s.key(), s.value()) for s in syncs))


def commit(bootstrap: str, group: str, offsets: Mapping[tuple[str, int], int]) -> None:
    """Commit ``group``'s offsets as its (memberless) consumer would."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    partitions = [TopicPartition(t, p, o) for (t, p), o in offsets.items()]
    request = [ConsumerGroupTopicPartitions(group, partitions)]
    result = admin.alter_consumer_group_offsets(request)[group].result(30)
    assert all(tp.error is None for tp in result.topic_partitions), result.topic_partitions


def committed(bootstrap: str, group: str) -> dict[tuple[str, int], int]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    result = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(30)
    return {(tp.topic, tp.partition): tp.offset for tp in result.topic_partitions or [] if tp.offset >= 0}


def read_all(bootstrap: str, topic: str, partition: int = 0, timeout: float = 5) -> list[Any]:
    """Every record of ``topic``/``partition`` now (up to its end offset)."""
    c = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"read-{uuid.uuid4().hex}", "enable.auto.commit": False}
    )
    try:
        try:
            _low, high = c.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
        except KafkaException:
            return []  # not created yet
        c.assign([TopicPartition(topic, partition, OFFSET_BEGINNING)])
        out: list[Any] = []
        deadline = time.monotonic() + timeout
        while (not out or out[-1].offset() < high - 1) and time.monotonic() < deadline:
            out.extend(m for m in c.consume(500, 0.2) if m.error() is None)
        return out
    finally:
        c.close()


def checkpoints(bootstrap: str, topic: str = "A.checkpoints.internal") -> list[Checkpoint]:
    return [Checkpoint.decode(m.key(), m.value()) for m in read_all(bootstrap, topic)]


def heartbeats(bootstrap: str, topic: str = "heartbeats") -> list[Heartbeat]:
    return [Heartbeat.decode(m.key(), m.value()) for m in read_all(bootstrap, topic)]


def topic_exists(bootstrap: str, topic: str) -> bool:
    md = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10)
    return topic in md.topics and md.topics[topic].error is None
