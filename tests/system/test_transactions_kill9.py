"""kill -9 of a broker process with transactions in every state: a committed one (EndTxn
answered), one left open by a producer that comes back, one left open by a producer that
never does. After the restart read_committed readers see each committed record exactly once
and no aborted one, and reach the end of the log (nothing hangs open).

The Prepare*-without-markers window is covered in-process by
tests/broker/test_transaction_recovery.py.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.support import BrokerProcess, unique


def txn_producer(bootstrap: str, tid: str, **conf: object) -> Producer:
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid, "linger.ms": 5, **conf})
    p.init_transactions(30)
    return p


def read_committed_to_end(bootstrap: str, topic: str, partitions: int) -> list[bytes]:
    """Every record a read_committed consumer gets, reading until its position reaches each
    partition's high watermark: it can only get there once no transaction is open."""
    c = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": unique("g"), "isolation.level": "read_committed"}
    )
    try:
        tps = [TopicPartition(topic, p, 0) for p in range(partitions)]
        # The high watermark (the log end), not the LSO the read_committed consumer reports.
        plain = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("g")})
        ends = {
            p: plain.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(partitions)
        }
        plain.close()
        c.assign(tps)
        got: list[bytes] = []
        position = dict.fromkeys(range(partitions), 0)
        deadline = time.monotonic() + 30
        while any(position[p] < ends[p] for p in ends) and time.monotonic() < deadline:
            for m in c.consume(100, 0.3):
                if not m.error():
                    got.append(m.value())
            for tp in c.position(tps):
                position[tp.partition] = max(tp.offset, 0)
        assert all(position[p] >= ends[p] for p in ends), f"read_committed stuck at {position} of {ends}"
        return got
    finally:
        c.close()


def test_transactions_survive_kill_9(tmp_path: Path) -> None:
    bp = BrokerProcess(
        tmp_path / "logs", **{"transaction.abort.timed.out.transaction.cleanup.interval.ms": "200"}
    )
    bp.start()
    topic = unique("t")
    try:
        admin = AdminClient({"bootstrap.servers": bp.bootstrap})  # outlives its future
        admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(15)
        committed = txn_producer(bp.bootstrap, unique("tx"))
        committed.begin_transaction()
        for i in range(6):
            committed.produce(topic, f"committed-{i}".encode(), partition=i % 2)
        committed.commit_transaction(30)

        returning_id = unique("tx")
        returning = txn_producer(bp.bootstrap, returning_id)
        returning.begin_transaction()
        for i in range(4):
            returning.produce(topic, f"open-returning-{i}".encode(), partition=i % 2)
        returning.flush(10)

        abandoned = txn_producer(bp.bootstrap, unique("tx"), **{"transaction.timeout.ms": 1500})
        abandoned.begin_transaction()
        for i in range(4):
            abandoned.produce(topic, f"open-abandoned-{i}".encode(), partition=i % 2)
        abandoned.flush(10)

        bp.kill9()
        bp.start()

        # The producer instance comes back: init_transactions aborts what its predecessor left open.
        back = txn_producer(bp.bootstrap, returning_id)
        back.begin_transaction()
        back.produce(topic, b"after-restart", partition=0)
        back.commit_transaction(30)

        # The abandoned transaction is aborted by the coordinator's timeout sweep; until then
        # read_committed cannot reach the end, so this read also proves that it happened.
        got = read_committed_to_end(bp.bootstrap, topic, 2)
        counts = Counter(got)
        assert set(counts) == {f"committed-{i}".encode() for i in range(6)} | {b"after-restart"}
        assert set(counts.values()) == {1}, f"duplicates: {counts}"
        del committed, returning, abandoned, back
    finally:
        bp.stop()
