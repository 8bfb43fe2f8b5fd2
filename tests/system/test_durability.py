"""kill -9 the broker mid-stream, several times: nothing acknowledged is lost, offsets stay put."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.support import BrokerProcess, unique, wait_until

pytestmark = pytest.mark.slow


def _consume_all(
    bootstrap: str, topic: str, partitions: int, expected: int
) -> dict[int, list[tuple[int, bytes]]]:
    """Every record of the topic, read to each partition's end offset. Not until ``expected``
    records are in: a producer without idempotence writes duplicates when it retries after
    a kill, so that count is reached before the partitions' tails are read."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("reader"), "enable.auto.commit": False})
    ends = {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=15)[1] for p in range(partitions)}
    assert sum(ends.values()) >= expected, f"the partitions end at {ends}, fewer than {expected} records"
    c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    got: dict[int, list[tuple[int, bytes]]] = {p: [] for p in range(partitions)}
    position = dict.fromkeys(range(partitions), 0)
    deadline = time.time() + 120
    while any(position[p] < ends[p] for p in ends) and time.time() < deadline:
        for m in c.consume(10000, 0.5):
            assert m.error() is None, m.error()
            got[m.partition()].append((m.offset(), m.value()))
            position[m.partition()] = m.offset() + 1
    c.close()
    assert all(position[p] >= ends[p] for p in ends), f"read to {position} of {ends} in 120 s"
    return got


@pytest.mark.parametrize("idempotent", [True, False], ids=["idempotent", "plain"])
def test_acknowledged_records_survive_repeated_kill_9(tmp_path: Path, idempotent: bool) -> None:
    bp = BrokerProcess(tmp_path / "logs", log_segment_bytes="200000").start()
    topic = unique()
    try:
        admin = AdminClient({"bootstrap.servers": bp.bootstrap})
        admin.create_topics([NewTopic(topic, 3, 1)])[topic].result(15)

        acked: dict[bytes, tuple[int, int]] = {}
        failed: list[KafkaError] = []
        lock = threading.Lock()

        def on_delivery(err, msg):  # type: ignore[no-untyped-def]
            with lock:
                if err is None:
                    acked[msg.value()] = (msg.partition(), msg.offset())
                else:
                    failed.append(err)

        producer = Producer(
            {
                "bootstrap.servers": bp.bootstrap,
                "acks": "all",
                "linger.ms": 5,
                "enable.idempotence": idempotent,
                "message.timeout.ms": 60000,
                "retry.backoff.ms": 50,
                "reconnect.backoff.ms": 20,
                "reconnect.backoff.max.ms": 200,
            }
        )

        kills = 0
        stop = threading.Event()

        def killer() -> None:
            nonlocal kills
            for _ in range(3):
                if stop.wait(1.0):
                    return
                bp.kill9()
                kills += 1
                time.sleep(0.3)
                bp.start()

        t = threading.Thread(target=killer)
        t.start()
        total = 0
        started = time.time()
        while t.is_alive() or time.time() - started < 4.5:
            for _ in range(200):
                key = f"k{total % 50}".encode()
                try:
                    producer.produce(topic, key=key, value=f"{total:08d}".encode(), on_delivery=on_delivery)
                except BufferError:
                    # The broker is down long enough for librdkafka's queue to fill: wait, as
                    # any producing application does, and go on.
                    producer.poll(0.1)
                    continue
                total += 1
            producer.poll(0.01)
            if time.time() - started > 30:
                break
        stop.set()
        t.join()
        assert producer.flush(60) == 0
        assert kills == 3
        assert not failed, failed[:3]
        assert len(acked) == total

        got = _consume_all(bp.bootstrap, topic, 3, total)
        seen: dict[bytes, list[tuple[int, int]]] = {}
        for p, records in got.items():
            offsets = [o for o, _ in records]
            assert offsets == sorted(offsets)
            for o, v in records:
                seen.setdefault(v, []).append((p, o))
        # Every acknowledged record is where its acknowledgement said.
        for value, where in acked.items():
            assert where in seen.get(value, []), f"acked record {value!r} at {where} is missing"
        if idempotent:
            # Retries after the kills were deduplicated: each record exactly once.
            assert all(len(v) == 1 for v in seen.values())
            assert sum(len(v) for v in got.values()) == total
            # Per key, records keep produce order.
            by_key: dict[str, list[int]] = {}
            for value, _where in sorted(seen.items(), key=lambda item: item[1][0]):  # (partition, offset)
                n = int(value)
                by_key.setdefault(f"{n % 50}", []).append(n)
            for seq in by_key.values():
                assert seq == sorted(seq)
    finally:
        bp.stop()


def test_committed_offsets_and_topics_survive_kill_9(tmp_path: Path) -> None:
    bp = BrokerProcess(tmp_path / "logs").start()
    topic, group = unique(), unique("g")
    try:
        admin = AdminClient({"bootstrap.servers": bp.bootstrap})
        admin.create_topics([NewTopic(topic, 2, 1, config={"retention.ms": "3600000"})])[topic].result(15)
        p = Producer({"bootstrap.servers": bp.bootstrap})
        for i in range(100):
            p.produce(topic, key=f"{i}".encode(), value=b"v")
        p.flush(15)
        c = Consumer(
            {
                "bootstrap.servers": bp.bootstrap,
                "group.id": group,
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
            }
        )
        c.subscribe([topic])
        n = 0
        deadline = time.time() + 20
        while n < 100 and time.time() < deadline:
            m = c.poll(0.2)
            if m is not None and m.error() is None:
                n += 1
        c.commit(asynchronous=False)
        committed = {
            tp.partition: tp.offset
            for tp in c.committed([TopicPartition(topic, 0), TopicPartition(topic, 1)])
        }
        assert sum(committed.values()) == 100
        c.close()

        bp.kill9()
        bp.start()

        admin = AdminClient({"bootstrap.servers": bp.bootstrap})
        md = admin.list_topics(timeout=10)
        assert len(md.topics[topic].partitions) == 2
        from confluent_kafka.admin import ConfigResource

        res = ConfigResource(ConfigResource.Type.TOPIC, topic)
        assert admin.describe_configs([res])[res].result(10)["retention.ms"].value == "3600000"
        c2 = Consumer({"bootstrap.servers": bp.bootstrap, "group.id": group})
        after = {
            tp.partition: tp.offset
            for tp in c2.committed([TopicPartition(topic, 0), TopicPartition(topic, 1)], timeout=10)
        }
        c2.close()
        assert after == committed
    finally:
        bp.stop()


def test_torn_tail_is_truncated_and_reported(tmp_path: Path) -> None:
    bp = BrokerProcess(tmp_path / "logs").start()
    topic = unique()
    try:
        admin = AdminClient({"bootstrap.servers": bp.bootstrap})
        admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(15)
        p = Producer({"bootstrap.servers": bp.bootstrap, "acks": "all"})
        for i in range(10):
            p.produce(topic, value=f"{i}".encode())
            p.flush(10)
        bp.kill9()
        # Simulate a write cut short by the crash: half a batch header at the end of the segment.
        segment = tmp_path / "logs" / f"{topic}-0" / "00000000000000000000.log"
        with open(segment, "ab") as f:
            f.write(b"\x00" * 7 + b"\x00\x00\x00\x50" + b"garbage")
        bp.start()
        wait_until(lambda: "truncated" in bp.output(), 10, message="recovery log line")
        got = _consume_all(bp.bootstrap, topic, 1, 10)
        assert [v for _, v in got[0]] == [f"{i}".encode() for i in range(10)]
        # New writes continue right after the last good batch.
        p = Producer({"bootstrap.servers": bp.bootstrap, "acks": "all"})
        offsets = []
        p.produce(topic, value=b"next", on_delivery=lambda e, m: offsets.append(m.offset()))
        p.flush(10)
        assert offsets == [10]
    finally:
        bp.stop()
