"""The "sluiceway" data source over transactional records: ``kafka.isolation.level``.

confluent-kafka's transactional producer writes committed, aborted and still open
transactions to a real broker; a real local Spark reads the topic. read_committed sees
exactly the committed records and stops at the open transaction (the last stable
offset); read_uncommitted sees every data record, aborted and open ones too, and neither
shows the commit and abort markers.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from confluent_kafka import Producer
from pyspark.sql import SparkSession

from broker.server import EmbeddedBroker
from tests.spark_sink.test_reader import create_topic, read
from tests.support import unique


def _transaction(p: Producer, topic: str, tag: str, partitions: int) -> None:
    p.begin_transaction()
    for i in range(3):
        for part in range(partitions):
            p.produce(topic, value=f"{tag}-{part}-{i}".encode(), partition=part)
    p.flush(30)


@pytest.fixture
def written(shared_broker: EmbeddedBroker) -> Iterator[tuple[str, str]]:
    """A topic of two partitions: committed, aborted, committed, then an open transaction."""
    bootstrap = shared_broker.bootstrap
    topic = unique("txn-read")
    create_topic(bootstrap, topic, 2)
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": unique("txn"), "linger.ms": 2})
    p.init_transactions(30)
    _transaction(p, topic, "c1", 2)
    p.commit_transaction(30)
    _transaction(p, topic, "ab", 2)
    p.abort_transaction(30)
    _transaction(p, topic, "c2", 2)
    p.commit_transaction(30)
    _transaction(p, topic, "open", 2)  # delivered, neither committed nor aborted yet
    try:
        yield bootstrap, topic
    finally:
        p.abort_transaction(30)


def _values(spark: SparkSession, bootstrap: str, topic: str, level: str | None) -> list[str]:
    options = {"subscribe": topic, "startingOffsets": "earliest", "endingOffsets": "latest"}
    if level is not None:
        options["kafka.isolation.level"] = level
    df = read(spark, bootstrap, **options)
    return sorted(bytes(r.value).decode() for r in df.select("value").collect())


def _tagged(*tags: str) -> list[str]:
    return sorted(f"{t}-{part}-{i}" for t in tags for part in range(2) for i in range(3))


def test_read_committed_returns_only_committed_records(spark: SparkSession, written: tuple[str, str]) -> None:
    bootstrap, topic = written
    assert _values(spark, bootstrap, topic, "read_committed") == _tagged("c1", "c2")


def test_read_uncommitted_returns_aborted_and_open_records_too(
    spark: SparkSession, written: tuple[str, str]
) -> None:
    bootstrap, topic = written
    every = _tagged("c1", "ab", "c2", "open")
    assert _values(spark, bootstrap, topic, "read_uncommitted") == every
    assert _values(spark, bootstrap, topic, None) == every  # Kafka's default level
