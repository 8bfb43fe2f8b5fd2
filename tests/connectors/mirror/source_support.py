"""Two real brokers and a worker for the MirrorSourceConnector scenarios: cluster A (the
source, an in-process broker that can be stopped and started again on the same port and
data directory) and cluster B (the target, the worker's own cluster), with a standalone
worker on B running ByteArrayConverter for keys, values and headers, as MM2 is meant to
run. Topic names are unique per test, so one set of clusters serves a whole module."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from confluent_kafka import OFFSET_BEGINNING, Consumer, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # re-exported untyped

from broker.config import load_config
from broker.server import EmbeddedBroker
from sluiceway.embedded import EmbeddedConnect
from tests.support import TEST_OVERRIDES, embedded_broker, free_port, unique

T = TypeVar("T")

BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
SOURCE_CONNECTOR = "org.apache.kafka.connect.mirror.MirrorSourceConnector"

# What a replicated record must keep: key, value, headers (in order), timestamp.
Row = tuple[bytes | None, bytes | None, list[tuple[str, str | bytes | None]], int]


def wait_until(probe: Callable[[], T | None], what: str, timeout: float = 30) -> T:
    deadline = time.monotonic() + timeout
    while True:
        got = probe()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.1)


class RestartableBroker:
    """An in-process broker on a fixed port and directory: stop() and start() again."""

    def __init__(self, data_dir: Path, **overrides: str) -> None:
        self.data_dir = data_dir
        self.overrides = overrides
        self.port = free_port()
        self.broker: EmbeddedBroker | None = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> RestartableBroker:
        values = {"listeners": f"PLAINTEXT://127.0.0.1:{self.port}", "log.dirs": str(self.data_dir)}
        self.broker = EmbeddedBroker(load_config({**values, **TEST_OVERRIDES, **self.overrides})).start()
        return self

    def stop(self) -> None:
        if self.broker is not None:
            self.broker.stop()
            self.broker = None


@dataclass
class Clusters:
    a: RestartableBroker
    b: str
    worker: EmbeddedConnect

    def flow(self, topics: str, **extra: str) -> dict[str, str]:
        """A MirrorSourceConnector config for A -> B with test intervals and factors."""
        return {
            "connector.class": SOURCE_CONNECTOR,
            "source.cluster.alias": "A",
            "target.cluster.alias": "B",
            "source.cluster.bootstrap.servers": self.a.bootstrap,
            "target.cluster.bootstrap.servers": self.b,
            "topics": topics,
            "replication.factor": "1",
            "offset-syncs.topic.replication.factor": "1",
            "refresh.topics.interval.seconds": "1",
            "sync.topic.configs.interval.seconds": "1",
            "sync.topic.acls.enabled": "false",
            "admin.timeout.ms": "5000",
            "tasks.max": "2",
            **extra,
        }

    def start(self, topics: str, **extra: str) -> str:
        name = unique("mirror")
        self.worker.create_connector(name, self.flow(topics, **extra))
        return name


@contextmanager
def clusters(tmp_path: Path, **broker_overrides: str) -> Iterator[Clusters]:
    """``broker_overrides`` (Kafka keys) apply to both brokers."""
    a = RestartableBroker(tmp_path / "a", **broker_overrides).start()
    try:
        with embedded_broker(
            tmp_path / "b", **{k.replace(".", "_"): v for k, v in broker_overrides.items()}
        ) as b:
            worker = EmbeddedConnect(
                tmp_path / "worker",
                {
                    "key.converter": BYTES,
                    "value.converter": BYTES,
                    "header.converter": BYTES,
                    "offset.flush.interval.ms": "200",
                },
                bootstrap_servers=b.bootstrap,
            )
            with worker:
                yield Clusters(a, b.bootstrap, worker)
    finally:
        a.stop()


# -- Kafka shortcuts ------------------------------------------------------------------------


def create_topic(bootstrap: str, topic: str, partitions: int, **configs: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1, config=configs)])[topic].result(30)


def produce(bootstrap: str, topic: str, rows: Iterable[tuple[int, Row]]) -> None:
    """``rows`` as (partition, (key, value, headers, timestamp))."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for partition, (key, value, headers, ts) in rows:
        producer.produce(topic, value, key, partition, timestamp=ts, headers=headers or None)
    assert producer.flush(30) == 0, "records were not delivered"


def partition_counts(bootstrap: str) -> dict[str, int]:
    metadata = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10)
    return {name: len(t.partitions) for name, t in metadata.topics.items() if t.error is None}


def read(bootstrap: str, topic: str, partition: int, count: int, timeout: float = 30) -> list[Message]:
    """Exactly the first ``count`` records of one partition (fails if fewer arrive)."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": unique("read"), "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(topic, partition, OFFSET_BEGINNING)])
    out: list[Message] = []
    deadline = time.monotonic() + timeout
    try:
        while len(out) < count and time.monotonic() < deadline:
            for m in consumer.consume(count - len(out), 0.2):
                if m.error() is None:
                    out.append(m)
        if len(out) == count:  # and nothing more: a duplicate would show here
            out += [m for m in consumer.consume(10, 0.3) if m.error() is None]
    finally:
        consumer.close()
    if len(out) < count:
        raise AssertionError(f"only {len(out)} of {count} records arrived on {topic}-{partition}")
    return out


def row(m: Message) -> Row:
    headers = m.headers() or []
    assert isinstance(headers, list)
    return (m.key(), m.value(), headers, m.timestamp()[1])


def config_of(bootstrap: str, topic: str) -> dict[str, Any]:
    from confluent_kafka.admin import ConfigResource, ResourceType  # type: ignore[attr-defined]

    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.describe_configs([ConfigResource(ResourceType.TOPIC, topic)])
    (future,) = futures.values()
    return {name: entry.value for name, entry in future.result(30).items()}


def read_all(bootstrap: str, topic: str, partition: int = 0) -> list[Message]:
    """Every record of one partition as of now (up to its high watermark)."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": unique("read"), "enable.auto.commit": False}
    )
    try:
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
    finally:
        consumer.close()
    return read(bootstrap, topic, partition, high - low) if high > low else []
