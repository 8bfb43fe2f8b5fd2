"""A consume-transform-produce application, killed with -9 again and again while it runs,
against a real broker process: its output topic, read read_committed, holds every input
record exactly once.

The application is confluent-kafka's exactly-once loop (this module run with ``-m``): a
read_committed consumer with static membership, a transactional producer, each batch's
output and the consumer's positions (``send_offsets_to_transaction``) committed in one
transaction. A restart with the same ``transactional.id`` fences and aborts whatever
transaction the killed process left open, and its consumer resumes from the offsets of the
last committed one.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from tests.support import ROOT, BrokerProcess, unique, wait_until

pytestmark = pytest.mark.slow

PARTITIONS = 2
RECORDS = 3000
KILLS = 4
WINDOW_S = 0.15


def app(bootstrap: str, source: str, sink: str, group: str, txn_id: str) -> None:
    """The application: upper-cases every record of ``source`` into ``sink``, exactly once."""
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id, "linger.ms": 5})
    producer.init_transactions(60)  # fences the previous incarnation, aborting its transaction
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "group.instance.id": "transformer",  # a restart takes its place without a rebalance
            "session.timeout.ms": 6000,
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    consumer.subscribe([source])
    while True:
        batch = [m for m in consumer.consume(200, 0.2) if m.error() is None]
        if not batch:
            continue
        producer.begin_transaction()
        for m in batch:
            producer.produce(sink, (m.value() or b"").upper(), key=m.key(), partition=m.partition() or 0)
        producer.flush(60)
        producer.send_offsets_to_transaction(
            consumer.position(consumer.assignment()), consumer.consumer_group_metadata(), 60
        )
        # Output and offsets are written but not committed: a pause here makes the test's
        # kills land inside transactions (as a slow transform would) instead of between them.
        time.sleep(WINDOW_S)
        producer.commit_transaction(60)


def _read_committed(bootstrap: str, topic: str) -> list[bytes]:
    """Every committed record of ``topic``, up to each partition's last stable offset."""
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique("judge"),
            "isolation.level": "read_committed",
            "auto.offset.reset": "earliest",
            "enable.partition.eof": True,
        }
    )
    c.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    values: list[bytes] = []
    at_end: set[int] = set()
    deadline = time.time() + 60
    while len(at_end) < PARTITIONS and time.time() < deadline:
        for m in c.consume(1000, 0.5):
            err = m.error()
            if err is None:
                values.append(m.value() or b"")
            elif err.code() == KafkaError._PARTITION_EOF:
                at_end.add(m.partition() or 0)
            else:
                raise AssertionError(err)
    c.close()
    assert len(at_end) == PARTITIONS, "the output topic's end was not reached in 60 s"
    return values


def _high_watermark(bootstrap: str, topic: str) -> int:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("hw")})
    try:
        return sum(
            c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(PARTITIONS)
        )
    finally:
        c.close()


def _committed_total(admin: AdminClient, group: str, topic: str) -> int:
    from confluent_kafka import ConsumerGroupTopicPartitions

    wanted = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    result = admin.list_consumer_group_offsets(
        [ConsumerGroupTopicPartitions(group, wanted)], require_stable=True
    )
    return sum(max(tp.offset, 0) for tp in result[group].result(30).topic_partitions)


def test_output_holds_every_input_exactly_once_across_kill_9(tmp_path: Path) -> None:
    bp = BrokerProcess(tmp_path / "logs").start()
    source, sink, group, txn_id = unique("in"), unique("out"), unique("ctp"), unique("ctp-txn")
    app_log = open(tmp_path / "app.log", "ab")  # noqa: SIM115  # closed in finally
    proc: subprocess.Popen[bytes] | None = None

    def start_app() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "-m", __name__, bp.bootstrap, source, sink, group, txn_id],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=app_log,
        )

    try:
        admin = AdminClient({"bootstrap.servers": bp.bootstrap})
        for f in admin.create_topics([NewTopic(t, PARTITIONS, 1) for t in (source, sink)]).values():
            f.result(15)

        # Input keeps arriving while the application is killed and restarted.
        def feed() -> None:
            p = Producer({"bootstrap.servers": bp.bootstrap, "enable.idempotence": True, "linger.ms": 5})
            for i in range(RECORDS):
                p.produce(source, f"record-{i}".encode(), partition=i % PARTITIONS)
                if i % 300 == 299:
                    p.flush(30)
                    time.sleep(0.15)
            p.flush(30)

        feeder = threading.Thread(target=feed, daemon=True)
        feeder.start()
        proc = start_app()
        for _ in range(KILLS):
            # Kill only once this incarnation has written output (committed or not), so that
            # each kill lands in a running loop, often mid-transaction.
            before = _high_watermark(bp.bootstrap, sink)
            wait_until(
                lambda b=before: _high_watermark(bp.bootstrap, sink) > b,
                timeout=60,
                message=f"output from the application (log: {tmp_path / 'app.log'})",
            )
            proc.kill()
            proc.wait(10)
            proc = start_app()
        feeder.join(60)
        assert not feeder.is_alive()
        wait_until(
            lambda: _committed_total(admin, group, source) == RECORDS,
            timeout=60,
            message="the application to commit the whole input",
        )
        proc.terminate()
        proc.wait(10)

        out = _read_committed(bp.bootstrap, sink)
        expected = Counter(f"RECORD-{i}".encode() for i in range(RECORDS))
        duplicates = {v: n for v, n in Counter(out).items() if n > 1}
        assert not duplicates, (
            f"{len(duplicates)} records written more than once, e.g. {list(duplicates)[:5]}"
        )
        assert Counter(out) == expected
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(10)
        app_log.close()
        bp.stop()


if __name__ == "__main__":
    app(*sys.argv[1:6])
