"""Compaction and retention seen through real clients, with the broker's own background cleaner."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.support import embedded_broker, unique, wait_until

pytestmark = pytest.mark.slow


def read_all(
    bootstrap: str, topic: str, timeout: float = 3.0
) -> list[tuple[int, bytes | None, bytes | None]]:
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique("r"),
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    out = []
    deadline = time.time() + timeout
    while time.time() < deadline:
        m = c.poll(0.2)
        if m is None:
            continue
        if m.error():
            if m.error().code() == -191:  # _PARTITION_EOF: everything read
                break
            raise AssertionError(m.error())
        out.append((m.offset(), m.key(), m.value()))
    c.close()
    return out


def send_each(bootstrap: str, topic: str, records: list[tuple[bytes, bytes | None]], **conf: object) -> None:
    """One batch per record, so every record can end up in its own segment."""
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, **conf})
    for k, v in records:
        p.produce(topic, key=k, value=v)
        assert p.flush(10) == 0


def earliest(bootstrap: str, topic: str) -> int:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("w")})
    low, _ = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
    c.close()
    return int(low)


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_compaction_keeps_the_last_value_per_key_at_its_offset(tmp_path: Path, codec: str) -> None:
    with embedded_broker(tmp_path, log_cleaner_backoff_ms="100") as eb:
        topic = unique()
        admin = AdminClient({"bootstrap.servers": eb.bootstrap})
        admin.create_topics(
            [
                NewTopic(
                    topic,
                    1,
                    1,
                    config={
                        "cleanup.policy": "compact",
                        "segment.bytes": "100",
                        "min.cleanable.dirty.ratio": "0.01",
                    },
                )
            ]
        )[topic].result(10)
        send_each(
            eb.bootstrap,
            topic,
            [
                (b"A", b"1000"),
                (b"B", b"1000"),
                (b"C", b"1000"),
                (b"A", b"2000"),
                (b"B", b"2000"),
                (b"END", b"-"),
            ],
            **{"compression.type": codec},
        )
        expected = [(2, b"C", b"1000"), (3, b"A", b"2000"), (4, b"B", b"2000"), (5, b"END", b"-")]
        wait_until(lambda: read_all(eb.bootstrap, topic) == expected, 20, message="compaction")


def test_tombstones_go_after_delete_retention(tmp_path: Path) -> None:
    with embedded_broker(tmp_path, log_cleaner_backoff_ms="100") as eb:
        topic = unique()
        admin = AdminClient({"bootstrap.servers": eb.bootstrap})
        admin.create_topics(
            [
                NewTopic(
                    topic,
                    1,
                    1,
                    config={
                        "cleanup.policy": "compact",
                        "segment.bytes": "100",
                        "min.cleanable.dirty.ratio": "0.01",
                        "delete.retention.ms": "1500",
                    },
                )
            ]
        )[topic].result(10)
        send_each(eb.bootstrap, topic, [(b"X", b"1"), (b"Y", b"1"), (b"X", None), (b"END1", b"-")])
        # First the tombstone replaces X's value and is kept, so readers can see the delete.
        wait_until(
            lambda: read_all(eb.bootstrap, topic) == [(1, b"Y", b"1"), (2, b"X", None), (3, b"END1", b"-")],
            20,
            message="tombstone kept",
        )
        time.sleep(1.6)
        send_each(eb.bootstrap, topic, [(b"END2", b"-")])  # more dirty data: the cleaner runs again
        wait_until(
            lambda: (
                read_all(eb.bootstrap, topic) == [(1, b"Y", b"1"), (3, b"END1", b"-"), (4, b"END2", b"-")]
            ),
            20,
            message="tombstone removed",
        )


def test_keyless_records_are_refused_by_compacted_topics(tmp_path: Path) -> None:
    with embedded_broker(tmp_path) as eb:
        topic = unique()
        admin = AdminClient({"bootstrap.servers": eb.bootstrap})
        admin.create_topics([NewTopic(topic, 1, 1, config={"cleanup.policy": "compact"})])[topic].result(10)
        p = Producer({"bootstrap.servers": eb.bootstrap})
        errors = []
        p.produce(topic, value=b"no key", on_delivery=lambda e, m: errors.append(e))
        p.flush(10)
        assert errors and errors[0] is not None and errors[0].name() == "INVALID_RECORD"


def settled_log_start(bootstrap: str, topic: str, quiet: float = 0.5, timeout: float = 15) -> int:
    last, since = -1, time.monotonic()
    deadline = since + timeout
    while time.monotonic() < deadline:
        now = earliest(bootstrap, topic)
        if now != last:
            last, since = now, time.monotonic()
        elif now > 0 and time.monotonic() - since >= quiet:
            return now
        time.sleep(0.05)
    raise AssertionError(f"the log start of {topic} did not settle (last {last})")


def test_retention_by_bytes_moves_the_log_start_offset(tmp_path: Path) -> None:
    with embedded_broker(tmp_path, log_retention_check_interval_ms="100") as eb:
        topic = unique()
        admin = AdminClient({"bootstrap.servers": eb.bootstrap})
        admin.create_topics(
            [NewTopic(topic, 1, 1, config={"segment.bytes": "300", "retention.bytes": "600"})]
        )[topic].result(10)
        send_each(eb.bootstrap, topic, [(f"k{i}".encode(), b"x" * 50) for i in range(30)])
        # Retention passes (every 100 ms) may have started while the records went in: wait
        # for the log start to stop moving (five passes without change), then read.
        start = settled_log_start(eb.bootstrap, topic)
        records = read_all(eb.bootstrap, topic)
        assert records[0][0] == start
        assert [o for o, _, _ in records] == list(range(start, 30))
        assert 30 - start <= 20  # most of the 30 records (about 1.7 KB) are gone


def test_retention_by_time_moves_the_log_start_offset(tmp_path: Path) -> None:
    with embedded_broker(tmp_path, log_retention_check_interval_ms="100") as eb:
        topic = unique()
        admin = AdminClient({"bootstrap.servers": eb.bootstrap})
        admin.create_topics(
            [NewTopic(topic, 1, 1, config={"segment.bytes": "200", "retention.ms": "60000"})]
        )[topic].result(10)
        old = int(time.time() * 1000) - 3_600_000
        p = Producer({"bootstrap.servers": eb.bootstrap, "linger.ms": 0})
        for i in range(10):
            p.produce(topic, key=b"old", value=f"{i}".encode(), timestamp=old)
            p.flush(10)
        for i in range(3):
            p.produce(topic, key=b"new", value=f"{i}".encode())
            p.flush(10)
        wait_until(lambda: earliest(eb.bootstrap, topic) >= 10, 15, message="old segments to expire")
        assert [k for _, k, _ in read_all(eb.bootstrap, topic)] == [b"new"] * 3
