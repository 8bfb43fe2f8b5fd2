"""MirrorMaker 2 between two Apache Kafka clusters (two cp-kafka containers), the worker in
this process on B: the scenarios of tests/connectors/mirror/ and
tests/system/test_mirror_kill9.py with Kafka's brokers instead of ours. A 3-partition
topic with keys, headers and timestamps is replicated to ``A.<topic>`` in order per
partition, across a restart of the worker mid-stream (at least once: a restarted task
may replay from its stored offset, never skip); and a consumer group fails over from A to
B with the translated offsets, losing nothing."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # re-exported untyped

from connect.api import TopicPartition as Partition
from connectors.mirror import client
from sluiceway.embedded import EmbeddedConnect
from tests.docker.conftest import docker_or_skip
from tests.support import unique

pytestmark = pytest.mark.docker

IMAGE = "confluentinc/cp-kafka:7.6.0"
BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
SOURCE = "org.apache.kafka.connect.mirror.MirrorSourceConnector"
CHECKPOINT = "org.apache.kafka.connect.mirror.MirrorCheckpointConnector"
PARTITIONS = 3
Row = tuple[bytes | None, bytes | None, list[tuple[str, str | bytes | None]], int]


@pytest.fixture(scope="module")
def kafkas() -> Iterator[tuple[str, str]]:
    """Two single-broker Apache Kafka clusters, A and B."""
    docker_or_skip()
    from testcontainers.kafka import KafkaContainer

    with KafkaContainer(IMAGE) as a, KafkaContainer(IMAGE) as b:
        yield a.get_bootstrap_server(), b.get_bootstrap_server()


def worker(work: Path, b: str) -> EmbeddedConnect:
    return EmbeddedConnect(
        work,
        {
            "key.converter": BYTES,
            "value.converter": BYTES,
            "header.converter": BYTES,
            "offset.flush.interval.ms": "200",
        },
        bootstrap_servers=b,
    )


def flow(a: str, b: str, topics: str, **extra: str) -> dict[str, str]:
    """A -> B with test intervals; replication factors 1 (single-broker clusters)."""
    return {
        "source.cluster.alias": "A",
        "target.cluster.alias": "B",
        "source.cluster.bootstrap.servers": a,
        "target.cluster.bootstrap.servers": b,
        "topics": topics,
        "replication.factor": "1",
        "offset-syncs.topic.replication.factor": "1",
        "checkpoints.topic.replication.factor": "1",
        "refresh.topics.interval.seconds": "1",
        "refresh.groups.interval.seconds": "1",
        "emit.checkpoints.interval.seconds": "1",
        "sync.topic.acls.enabled": "false",
        **extra,
    }


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(60)


def row(i: int) -> Row:
    """Record i: varied keys, values and headers (none, repeated keys, a null value)."""
    key = None if i % 7 == 3 else b"k%d" % i
    headers: list[tuple[str, str | bytes | None]] = [] if i % 3 == 0 else [("h", b"%d" % i), ("h", None)]
    return key, b"v%d\x00\xff" % i, headers, 1_700_000_000_000 + i


def produce(bootstrap: str, topic: str, indexes: range) -> None:
    """Rows ``indexes``, row i to partition i % 3."""
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "enable.idempotence": True})
    for i in indexes:
        key, value, headers, ts = row(i)
        p.produce(topic, value, key, i % PARTITIONS, timestamp=ts, headers=headers or None)
    assert p.flush(60) == 0, f"records were not delivered to {topic}"


def read(bootstrap: str, topic: str, partition: int) -> list[Message]:
    """Every record of one partition as of now."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("read"), "enable.auto.commit": False})
    try:
        high = c.get_watermark_offsets(TopicPartition(topic, partition), timeout=30)[1]
        c.assign([TopicPartition(topic, partition, OFFSET_BEGINNING)])
        out: list[Message] = []
        deadline = time.monotonic() + 60
        while len(out) < high and time.monotonic() < deadline:
            out += [m for m in c.consume(1000, 0.5) if m.error() is None and (m.offset() or 0) < high]
        assert len(out) == high, f"read {len(out)} of {high} records of {topic}-{partition}"
        return out
    finally:
        c.close()


def first_occurrences(messages: list[Message]) -> list[Row]:
    """The records in order, a replayed one kept where it first showed."""
    seen: set[bytes | None] = set()
    out: list[Row] = []
    for m in messages:
        if m.value() not in seen:
            seen.add(m.value())
            headers = m.headers() or []
            assert isinstance(headers, list)
            out.append((m.key(), m.value(), headers, m.timestamp()[1]))
    return out


def wait_until(predicate, what: str, timeout: float = 90) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out after {timeout} s waiting for {what}"
        time.sleep(0.3)


def copied(b: str, remote: str, partition: int) -> int:
    c = Consumer({"bootstrap.servers": b, "group.id": unique("count")})
    try:
        metadata = c.list_topics(remote, timeout=30).topics.get(remote)
        if metadata is None or metadata.error is not None or partition not in metadata.partitions:
            return 0
        return int(c.get_watermark_offsets(TopicPartition(remote, partition), timeout=30)[1])
    finally:
        c.close()


def test_a_topic_is_replicated_in_order_across_a_worker_restart(
    kafkas: tuple[str, str], tmp_path: Path
) -> None:
    a, b = kafkas
    topic = unique("orders")
    remote = f"A.{topic}"
    create_topic(a, topic, PARTITIONS)
    produce(a, topic, range(0, 600))
    name = unique("mirror")
    config = {"connector.class": SOURCE, **flow(a, b, topic, **{"tasks.max": "2"})}
    with worker(tmp_path / "worker", b) as w:
        w.create_connector(name, config)
        w.wait_for_running(name, tasks=2, timeout=60)
        wait_until(lambda: all(copied(b, remote, p) >= 200 for p in range(PARTITIONS)), "the first 600 on B")
        produce(a, topic, range(600, 900))  # some of these while the worker stops
    produce(a, topic, range(900, 1200))
    # The same worker directory (its offsets file) and connector: it resumes.
    with worker(tmp_path / "worker", b) as w:
        w.create_connector(name, config)
        wait_until(lambda: all(copied(b, remote, p) >= 400 for p in range(PARTITIONS)), "all 1200 on B")
    for p in range(PARTITIONS):
        expected = [row(i) for i in range(p, 1200, PARTITIONS)]
        assert first_occurrences(read(b, remote, p)) == expected, f"partition {p}"
        assert first_occurrences(read(a, topic, p)) == expected  # (what A holds, the same way)


def consume_and_commit(bootstrap: str, group: str, topic: str, count: int) -> list[bytes | None]:
    """``group`` reads ``count`` more records of ``topic`` (one partition) and commits."""
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    c.subscribe([topic])
    values: list[bytes | None] = []
    last = -1
    deadline = time.monotonic() + 60
    try:
        while len(values) < count:
            assert time.monotonic() < deadline, f"{group} read only {len(values)} of {topic}"
            m = c.poll(0.5)
            if m is not None and m.error() is None:
                values.append(m.value())
                last = m.offset() or 0
        c.commit(offsets=[TopicPartition(topic, 0, last + 1)], asynchronous=False)
    finally:
        c.close()
    return values


def test_a_consumer_group_fails_over_to_b_with_translated_offsets_losing_nothing(
    kafkas: tuple[str, str], tmp_path: Path
) -> None:
    a, b = kafkas
    topic, group = unique("payments"), unique("app")
    remote = f"A.{topic}"
    create_topic(a, topic, 1)
    values = [b"%d" % i for i in range(50)]
    p = Producer({"bootstrap.servers": a, "linger.ms": 5})
    for v in values[:30]:
        p.produce(topic, v, partition=0)
    assert p.flush(60) == 0
    settings = flow(a, b, topic, **{"offset.lag.max": "5", "tasks.max": "1"})
    with worker(tmp_path / "worker", b) as w:
        w.create_connector(unique("source"), {"connector.class": SOURCE, **settings})
        wait_until(lambda: copied(b, remote, 0) == 30, "30 records on B")
        assert consume_and_commit(a, group, topic, 20) == values[:20]
        w.create_connector(unique("checkpoints"), {"connector.class": CHECKPOINT, **settings})
        for v in values[30:]:
            p.produce(topic, v, partition=0)
        assert p.flush(60) == 0
        wait_until(lambda: copied(b, remote, 0) == 50, "50 records on B")

        def translated() -> int | None:
            found = client.translate_offsets({"bootstrap.servers": b}, "A", group, 10.0)
            return found.get(Partition(remote, 0))

        wait_until(lambda: translated() is not None, f"{group}'s checkpoint on B")
        offset = translated()
        assert offset is not None
        assert 0 < offset <= 20  # a sync's translation: some records re-read, never one skipped
        # The group goes on on B from there: every record it had not read on A.
        resumed = [m.value() for m in read(b, remote, 0)[offset:]]
        assert resumed == values[offset:]
