"""Transactions judged by confluent-kafka (librdkafka 2.x): its transactional Producer
(init/begin/produce/commit/abort, send_offsets_to_transaction) against read_committed and
read_uncommitted consumers, zombie fencing, and the coordinator's timeout abort."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from broker.server import EmbeddedBroker
from tests.support import embedded_broker, unique


def create(eb: EmbeddedBroker, name: str, partitions: int = 1) -> None:
    a = AdminClient({"bootstrap.servers": eb.bootstrap})
    for f in a.create_topics([NewTopic(name, partitions, 1)]).values():
        f.result(15)


def txn_producer(eb: EmbeddedBroker, tid: str, **conf: object) -> Producer:
    p = Producer({"bootstrap.servers": eb.bootstrap, "transactional.id": tid, "linger.ms": 5, **conf})
    p.init_transactions(20)
    return p


def read_all(
    eb: EmbeddedBroker, topic: str, isolation: str, expect_at_least: int, group: str | None = None
) -> list[bytes]:
    """Every record value a consumer of ``isolation`` gets from the start, waiting until the
    consumer's position reaches the end it reports (so nothing is left unread)."""
    c = Consumer(
        {
            "bootstrap.servers": eb.bootstrap,
            "group.id": group or unique("g"),
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "isolation.level": isolation,
        }
    )
    try:
        c.subscribe([topic])
        values: list[bytes] = []
        deadline = time.monotonic() + 20
        idle = 0
        while time.monotonic() < deadline:
            msg = c.poll(0.2)
            if msg is None:
                idle += 1
                if len(values) >= expect_at_least and idle >= 5:
                    break
                continue
            idle = 0
            if msg.error():
                raise KafkaException(msg.error())
            values.append(msg.value())
        return values
    finally:
        c.close()


@pytest.fixture
def txn_broker(tmp_path: Path) -> Iterator[EmbeddedBroker]:
    with embedded_broker(
        tmp_path / "logs", **{"transaction.abort.timed.out.transaction.cleanup.interval.ms": "100"}
    ) as eb:
        yield eb


def test_committed_records_are_read_once_and_aborted_never(txn_broker: EmbeddedBroker) -> None:
    eb, topic = txn_broker, unique("t")
    create(eb, topic, 2)
    p = txn_producer(eb, unique("tx"))
    p.begin_transaction()
    for i in range(5):
        p.produce(topic, f"c1-{i}".encode(), partition=i % 2)
    p.commit_transaction(20)
    p.begin_transaction()
    for i in range(4):
        p.produce(topic, f"a-{i}".encode(), partition=i % 2)
    p.flush(10)
    p.abort_transaction(20)
    p.begin_transaction()
    for i in range(3):
        p.produce(topic, f"c2-{i}".encode(), partition=i % 2)
    p.commit_transaction(20)

    committed = read_all(eb, topic, "read_committed", 8)
    assert sorted(committed) == sorted(
        [f"c1-{i}".encode() for i in range(5)] + [f"c2-{i}".encode() for i in range(3)]
    )
    everything = read_all(eb, topic, "read_uncommitted", 12)
    assert len(everything) == 12 and {v for v in everything if v.startswith(b"a-")} == {
        f"a-{i}".encode() for i in range(4)
    }


def test_an_open_transaction_holds_read_committed_back_until_it_commits(txn_broker: EmbeddedBroker) -> None:
    eb, topic = txn_broker, unique("t")
    create(eb, topic)
    p = txn_producer(eb, unique("tx"))
    p.begin_transaction()
    p.produce(topic, b"pending")
    p.flush(10)
    assert read_all(eb, topic, "read_committed", 0) == []
    assert read_all(eb, topic, "read_uncommitted", 1) == [b"pending"]
    p.commit_transaction(20)
    assert read_all(eb, topic, "read_committed", 1) == [b"pending"]


def test_offsets_sent_to_the_transaction_commit_with_it(txn_broker: EmbeddedBroker) -> None:
    eb, source, sink, group = txn_broker, unique("src"), unique("sink"), unique("g")
    create(eb, source)
    create(eb, sink)
    plain = Producer({"bootstrap.servers": eb.bootstrap})
    for i in range(4):
        plain.produce(source, f"in-{i}".encode())
    plain.flush(10)

    consumer = Consumer(
        {
            "bootstrap.servers": eb.bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([source])
    msgs = []
    deadline = time.monotonic() + 20
    while len(msgs) < 4 and time.monotonic() < deadline:
        m = consumer.poll(0.5)
        if m is not None and not m.error():
            msgs.append(m)
    assert len(msgs) == 4
    p = txn_producer(eb, unique("tx"))

    # An aborted transaction's offsets are dropped...
    p.begin_transaction()
    p.produce(sink, b"out-aborted")
    p.send_offsets_to_transaction([TopicPartition(source, 0, 2)], consumer.consumer_group_metadata(), 20)
    p.abort_transaction(20)
    assert consumer.committed([TopicPartition(source, 0)], 10)[0].offset < 0
    # ...a committed one's are the group's.
    p.begin_transaction()
    for m in msgs:
        p.produce(sink, m.value().replace(b"in", b"out"))
    p.send_offsets_to_transaction([TopicPartition(source, 0, 4)], consumer.consumer_group_metadata(), 20)
    p.commit_transaction(20)
    assert consumer.committed([TopicPartition(source, 0)], 10)[0].offset == 4
    consumer.close()
    assert sorted(read_all(eb, sink, "read_committed", 4)) == [f"out-{i}".encode() for i in range(4)]


def test_a_second_producer_with_the_same_id_fences_the_first(txn_broker: EmbeddedBroker) -> None:
    eb, topic, tid = txn_broker, unique("t"), unique("tx")
    create(eb, topic)
    zombie = txn_producer(eb, tid)
    zombie.begin_transaction()
    zombie.produce(topic, b"zombie")
    zombie.flush(10)
    fresh = txn_producer(eb, tid)  # aborts the zombie's open transaction, bumps the epoch
    fresh.begin_transaction()
    fresh.produce(topic, b"fresh")
    fresh.commit_transaction(20)
    with pytest.raises(KafkaException) as raised:
        zombie.commit_transaction(20)
    assert raised.value.args[0].fatal()
    assert read_all(eb, topic, "read_committed", 1) == [b"fresh"]


def test_a_transaction_past_its_timeout_is_aborted_by_the_coordinator(txn_broker: EmbeddedBroker) -> None:
    eb, topic = txn_broker, unique("t")
    create(eb, topic)
    slow = txn_producer(eb, unique("tx"), **{"transaction.timeout.ms": 1000})
    slow.begin_transaction()
    slow.produce(topic, b"too-slow")
    slow.flush(10)
    other = txn_producer(eb, unique("tx"))
    other.begin_transaction()
    other.produce(topic, b"on-time")
    other.commit_transaction(20)
    # The coordinator's sweep aborts the stale transaction, which frees read_committed readers.
    assert read_all(eb, topic, "read_committed", 1) == [b"on-time"]
    with pytest.raises(KafkaException):
        slow.commit_transaction(20)
