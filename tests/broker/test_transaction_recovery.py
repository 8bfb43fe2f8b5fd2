"""A broker that died between logging PrepareCommit/PrepareAbort and writing the markers:
on open the coordinator finds the Prepare* state in ``__transaction_state`` and finishes
the transaction, so committed records are read exactly once and aborted ones never.

The crash window is made by writing the Prepare* record exactly as the coordinator logs it
(its own TransactionLog) without the markers that would follow, which is the state a kill -9
at that point leaves on disk. Judged by confluent-kafka's read_committed consumer.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from confluent_kafka import Consumer, TopicPartition
from kio.schema.errors import ErrorCode

from broker.server import EmbeddedBroker
from broker.transactions import state as sm
from tests.broker.test_transaction_apis import add, describe, init, make_topic, produce_txn
from tests.support import embedded_broker, unique
from tests.wire import WireClient


def log_prepare_only(eb: EmbeddedBroker, tid: str, commit: bool) -> None:
    """Log the coordinator's Prepare* record for ``tid`` and nothing after it."""
    assert eb.server is not None
    coordinator = eb.server.broker.transactions
    meta = coordinator.txns[tid]
    prepared = sm.end_txn(meta, meta.producer_id, meta.producer_epoch, commit, int(time.time() * 1000)).write
    assert prepared is not None and prepared.state in sm.PREPARE

    async def write() -> None:  # on the broker's loop, like every write it makes
        coordinator.txn_log.write(tid, prepared)

    assert eb._loop is not None
    asyncio.run_coroutine_threadsafe(write(), eb._loop).result(10)


def read_committed(bootstrap: str, topic: str, partitions: int) -> list[bytes]:
    c = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": unique("g"), "isolation.level": "read_committed"}
    )
    try:
        tps = [TopicPartition(topic, p, 0) for p in range(partitions)]
        ends = {
            p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(partitions)
        }
        c.assign(tps)
        got: list[bytes] = []
        position = dict.fromkeys(range(partitions), 0)
        deadline = time.monotonic() + 20
        # Read until every partition's position passes its end (the markers included).
        while any(position[p] < ends[p] for p in ends) and time.monotonic() < deadline:
            for m in c.consume(100, 0.3):
                if m.error():
                    continue
                got.append(m.value())
            for tp in c.position(tps):
                position[tp.partition] = tp.offset
        assert all(position[p] >= ends[p] for p in ends), (position, ends)
        return got
    finally:
        c.close()


def test_prepared_transactions_are_finished_when_the_broker_opens(tmp_path: Path) -> None:
    topic, committing, aborting = unique("t"), unique("tx"), unique("tx")
    with embedded_broker(tmp_path / "logs") as eb, WireClient(eb.bootstrap) as c:
        make_topic(c, topic, 2)
        ids = {}
        for tid in (committing, aborting):
            r = init(c, tid)
            ids[tid] = (r.producer_id, r.producer_epoch)
            add(c, tid, r.producer_id, r.producer_epoch, {topic: [0, 1]})
            for p in (0, 1):
                produce_txn(
                    c,
                    tid,
                    r.producer_id,
                    r.producer_epoch,
                    topic,
                    p,
                    [f"{tid}-{p}-{i}".encode() for i in range(3)],
                )
        # The broker "dies" right after logging Prepare*: no markers, no Complete*.
        log_prepare_only(eb, committing, commit=True)
        log_prepare_only(eb, aborting, commit=False)
        assert describe(c, committing).transaction_state == "Ongoing"  # memory untouched

    with embedded_broker(tmp_path / "logs") as eb, WireClient(eb.bootstrap) as c:
        assert describe(c, committing).transaction_state == "CompleteCommit"
        assert describe(c, aborting).transaction_state == "CompleteAbort"
        got = read_committed(eb.bootstrap, topic, 2)
        assert sorted(got) == sorted(f"{committing}-{p}-{i}".encode() for p in (0, 1) for i in range(3))
        # The producer carries on with its epoch: the next transaction works.
        pid, epoch = ids[committing]
        assert add(c, committing, pid, epoch, {topic: [0]}) == {(topic, 0): ErrorCode.none}
