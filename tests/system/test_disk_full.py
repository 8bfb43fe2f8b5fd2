"""A write the disk refuses is answered KAFKA_STORAGE_ERROR and leaves the log intact.

The broker process runs with RLIMIT_FSIZE, so writing past a file size fails inside
``write`` exactly as a full disk does (short write, then an error), on any machine and
without root. SIGXFSZ is ignored so the error reaches the broker instead of killing it.
"""

from __future__ import annotations

import resource
import signal
import time
from pathlib import Path

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.support import BrokerProcess, unique

pytestmark = pytest.mark.slow

LIMIT = 256 * 1024


def _limit_file_size() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


def test_full_disk_refuses_the_write_and_keeps_the_log(tmp_path: Path) -> None:
    bp = BrokerProcess(tmp_path / "logs")
    bp.start(preexec_fn=_limit_file_size)
    topic, other = unique(), unique()
    try:
        admin = AdminClient({"bootstrap.servers": bp.bootstrap})
        for f in admin.create_topics([NewTopic(topic, 1, 1), NewTopic(other, 1, 1)]).values():
            f.result(15)
        p = Producer(
            {
                "bootstrap.servers": bp.bootstrap,
                "acks": "all",
                "linger.ms": 0,
                "message.timeout.ms": 4000,
                "retries": 2,
                "retry.backoff.ms": 100,
            }
        )
        acked: list[int] = []
        errors: list[KafkaError] = []

        def cb(err, msg):  # type: ignore[no-untyped-def]
            if err is None:
                acked.append(int(msg.value()[:8]))
            else:
                errors.append(err)

        # Each record is ~10 KB, so the 256 KB segment file fills after about 25 of them.
        for i in range(40):
            p.produce(topic, value=f"{i:08d}".encode() + b"x" * 10_000, on_delivery=cb)
            p.flush(10)
        assert 15 <= len(acked) < 40
        assert acked == list(range(len(acked)))
        assert errors and all(
            e.code() in (KafkaError.KAFKA_STORAGE_ERROR, KafkaError._MSG_TIMED_OUT) for e in errors
        )
        assert "KAFKA_STORAGE_ERROR" in bp.output() or "write failed" in bp.output()

        # The broker keeps serving: another topic still takes writes, and the full log reads back whole.
        ok: list[object] = []
        p.produce(other, value=b"still works", on_delivery=lambda e, m: ok.append(e))
        p.flush(10)
        assert ok == [None]
        c = Consumer(
            {"bootstrap.servers": bp.bootstrap, "group.id": unique("g"), "enable.auto.commit": False}
        )
        c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        got: list[int] = []
        deadline = time.time() + 15
        while len(got) < len(acked) and time.time() < deadline:
            m = c.poll(0.2)
            if m is not None and m.error() is None:
                got.append(int(m.value()[:8]))
        c.close()
        assert got == acked
        assert bp.proc is not None and bp.proc.poll() is None
    finally:
        bp.stop()
