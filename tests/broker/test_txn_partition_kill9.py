"""kill -9 a broker process in the middle of a transaction: after the restart the open
transaction still holds the last stable offset, read_committed consumers see only what
was committed, and the transaction ends (aborted by the producer's successor) with its
records never visible, also after a second kill."""

from __future__ import annotations

from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from broker.protocol.versions import ApiKey
from tests.support import BrokerProcess, unique
from tests.wire import WireClient

PARTITIONS = 2


def read_committed(bootstrap: str, topic: str) -> tuple[list[bytes], list[int]]:
    """Every visible record up to the read_committed end offsets (the LSOs), and those ends."""
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique("reader"),
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
        }
    )
    try:
        ends = [c.get_watermark_offsets(TopicPartition(topic, p), timeout=15)[1] for p in range(PARTITIONS)]
        c.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        got: list[bytes] = []
        done = [end == 0 for end in ends]
        while not all(done):
            for m in c.consume(100, 0.2):
                assert m.error() is None, m.error()
                got.append(m.value())
            for p in range(PARTITIONS):
                # The position passes skipped aborted records and markers up to the LSO.
                position = c.position([TopicPartition(topic, p)])[0].offset
                done[p] = done[p] or position >= ends[p]
        return sorted(got), ends
    finally:
        c.close()


def open_txn_starts(bootstrap: str, topic: str) -> dict[int, list[int]]:
    with WireClient(bootstrap) as client:
        response = client.request(
            ApiKey.DESCRIBE_PRODUCERS,
            0,
            topics=[{"name": topic, "partition_indexes": list(range(PARTITIONS))}],
        )
    return {
        p.partition_index: [
            s.current_txn_start_offset for s in p.active_producers if s.current_txn_start_offset >= 0
        ]
        for p in response.topics[0].partitions
    }


def test_an_open_transaction_survives_kill_9_and_stays_invisible(tmp_path: Path) -> None:
    bp = BrokerProcess(tmp_path / "logs", transaction_state_log_num_partitions="3").start()
    topic, txn_id = unique("txn-kill"), unique("tx")
    try:
        admin = AdminClient({"bootstrap.servers": bp.bootstrap})
        admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(15)
        producer = Producer({"bootstrap.servers": bp.bootstrap, "transactional.id": txn_id, "linger.ms": 0})
        producer.init_transactions(30)
        producer.begin_transaction()
        for i in range(10):
            producer.produce(topic, value=b"committed-%d" % i, partition=i % PARTITIONS)
        producer.commit_transaction(30)
        producer.begin_transaction()
        for i in range(6):
            producer.produce(topic, value=b"open-%d" % i, partition=i % PARTITIONS)
        assert producer.flush(30) == 0  # written and acknowledged, never committed

        committed = sorted(b"committed-%d" % i for i in range(10))
        starts = open_txn_starts(bp.bootstrap, topic)
        assert all(len(s) == 1 for s in starts.values())

        bp.kill9()
        bp.start()

        assert open_txn_starts(bp.bootstrap, topic) == starts
        got, ends = read_committed(bp.bootstrap, topic)
        assert got == committed
        assert ends == [starts[p][0] for p in range(PARTITIONS)]  # the LSO is the open txn's start

        # The producer's successor fences it: the coordinator aborts the open transaction.
        successor = Producer({"bootstrap.servers": bp.bootstrap, "transactional.id": txn_id})
        successor.init_transactions(30)
        successor.begin_transaction()
        for i in range(4):
            successor.produce(topic, value=b"after-%d" % i, partition=i % PARTITIONS)
        successor.commit_transaction(30)
        expected = sorted([*committed, *(b"after-%d" % i for i in range(4))])
        got, _ = read_committed(bp.bootstrap, topic)
        assert got == expected
        assert open_txn_starts(bp.bootstrap, topic) == {p: [] for p in range(PARTITIONS)}

        # Once more from disk alone: the abort's index entries were rebuilt or kept.
        bp.kill9()
        bp.start()
        got, _ = read_committed(bp.bootstrap, topic)
        assert got == expected
    finally:
        bp.stop()
