"""MirrorMaker 2 A -> B with the worker killed: two broker processes, a standalone worker
process on B running MirrorSourceConnector while records stream into a 3-partition topic
on A; the worker is killed with SIGKILL twice mid-replication and restarted. At the end
B's ``A.<topic>`` holds every record of A (at least once): each partition of B is A's
partition in order, except that after each restart the worker may replay what it had
copied since its last committed offset, and only that."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # re-exported untyped

from tests.support import BrokerProcess, StandaloneWorkerProcess, free_port, unique, wait_until, write_props

pytestmark = pytest.mark.slow

N = 12_000
PARTITIONS = 3
KILLS = 2
BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"


class Feeder(threading.Thread):
    """Records 0..N-1 (value ``i``, a key and a header), record i to partition i % 3, at a
    steady pace over several seconds, so the kills land mid-stream."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        super().__init__(daemon=True)
        self.producer = Producer(
            {"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all", "enable.idempotence": True}
        )
        self.topic = topic
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            for i in range(N):
                self.producer.produce(
                    self.topic, b"%d" % i, b"k%d" % (i % 7), i % PARTITIONS, headers=[("seq", b"%d" % i)]
                )
                if i % 500 == 499:
                    self.producer.poll(0)
                    time.sleep(0.2)
            if self.producer.flush(60):
                raise AssertionError("records were not delivered to A")
        except BaseException as exc:
            self.error = exc


def read_partitions(bootstrap: str, topic: str) -> list[list[bytes]]:
    """Every value of each partition of ``topic``, in order (up to the high watermarks)."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": unique("read"), "enable.auto.commit": False}
    )
    try:
        highs = [
            consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(PARTITIONS)
        ]
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
        out: list[list[bytes]] = [[] for _ in range(PARTITIONS)]
        deadline = time.monotonic() + 60
        while any(len(out[p]) < highs[p] for p in range(PARTITIONS)) and time.monotonic() < deadline:
            for m in consumer.consume(5000, 0.5):
                partition, offset = m.partition(), m.offset()
                # (Records past the high watermark of the start are left: the topic still grows.)
                if (
                    m.error() is None
                    and partition is not None
                    and offset is not None
                    and offset < highs[partition]
                ):
                    value = m.value()
                    assert value is not None and m.headers() == [("seq", value)]
                    out[partition].append(value)
        assert [len(o) for o in out] == highs, f"read {[len(o) for o in out]} of {highs} on {topic}"
        return out
    finally:
        consumer.close()


def copied(bootstrap: str, topic: str) -> int:
    """Records on B's remote topic so far (0 while the connector has not created it)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("count")})
    try:
        metadata = consumer.list_topics(topic, timeout=10).topics.get(topic)
        if metadata is None or metadata.error is not None or len(metadata.partitions) < PARTITIONS:
            return 0
        return sum(
            consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(PARTITIONS)
        )
    finally:
        consumer.close()


def replays(upstream: list[int]) -> int:
    """How many times a partition of B goes back in A's offsets; fails on a gap, or on a
    record that is neither the next one nor part of a replay from an earlier offset."""
    restarts = 0
    expected = 0  # the next upstream offset not yet seen
    previous = -1
    for offset in upstream:
        if offset != previous + 1:
            assert offset < previous + 1, f"upstream offset {previous + 1} skipped (next was {offset})"
            restarts += 1  # the worker resumed before what it had already copied
        assert offset <= expected, f"upstream offsets {expected}..{offset - 1} skipped"
        expected = max(expected, offset + 1)
        previous = offset
    return restarts


def test_kill_9_mid_replication_then_restart_b_holds_every_record_of_a(tmp_path: Path) -> None:
    a = BrokerProcess(tmp_path / "a").start()
    b = BrokerProcess(tmp_path / "b").start()
    try:
        topic = unique("orders")
        admin = AdminClient({"bootstrap.servers": a.bootstrap})
        admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(30)
        files = [
            write_props(
                tmp_path / "worker.properties",
                {
                    "bootstrap.servers": b.bootstrap,
                    "key.converter": BYTES,
                    "value.converter": BYTES,
                    "header.converter": BYTES,
                    "offset.storage.file.filename": str(tmp_path / "offsets"),
                    "offset.flush.interval.ms": "300",
                    "listeners": f"http://127.0.0.1:{free_port()}",
                },
            ),
            write_props(
                tmp_path / "mirror.properties",
                {
                    "name": "a-to-b",
                    "connector.class": "connectors.mirror.source_connector.MirrorSourceConnector",
                    "source.cluster.alias": "A",
                    "target.cluster.alias": "B",
                    "source.cluster.bootstrap.servers": a.bootstrap,
                    "target.cluster.bootstrap.servers": b.bootstrap,
                    "topics": topic,
                    "tasks.max": "2",
                    "replication.factor": "1",
                    "offset-syncs.topic.replication.factor": "1",
                    "refresh.topics.interval.seconds": "1",
                    "sync.topic.acls.enabled": "false",
                },
            ),
        ]
        remote = f"A.{topic}"
        offsets = tmp_path / "offsets"

        def stored() -> dict[int, int]:
            """The worker's committed offset of each partition of A (its offsets file)."""
            if not offsets.exists():
                return {}
            out = {}
            for key, value in json.loads(offsets.read_text()).items():
                partition = json.loads(key)[1]["partition"]
                out[partition] = json.loads(value)["offset"]
            return out

        def advanced(was: dict[int, int]) -> bool:
            now = stored()
            return all(now.get(p, -1) > was.get(p, -1) for p in range(PARTITIONS))

        feeder = Feeder(a.bootstrap, topic)
        worker = StandaloneWorkerProcess(*files).start()
        try:
            feeder.start()
            for fraction in (0.25, 0.6)[:KILLS]:
                before = stored()
                wait_until(
                    lambda f=fraction, was=before: copied(b.bootstrap, remote) >= N * f and advanced(was),
                    60,
                    interval=0.1,
                    message=f"{fraction:.0%} of the records on B, each partition committed since the start",
                )
                worker.kill9()
                worker = StandaloneWorkerProcess(*files).start()
            feeder.join(60)
            assert feeder.error is None, feeder.error
            # Every record of A, each partition in its order: its values read back from B.
            source = read_partitions(a.bootstrap, topic)
            assert sorted(int(v) for p in source for v in p) == list(range(N))
            offset_of = [{v: o for o, v in enumerate(part)} for part in source]

            def all_copied() -> bool:
                return copied(b.bootstrap, remote) >= N and all(
                    set(part) >= set(offset_of[p])
                    for p, part in enumerate(read_partitions(b.bootstrap, remote))
                )

            wait_until(all_copied, 60, interval=0.3, message="every record of A on B")
            time.sleep(1.0)  # a record copied once more than it should would show by now
            target = read_partitions(b.bootstrap, remote)
            total_replays = 0
            for p in range(PARTITIONS):
                upstream = [offset_of[p][v] for v in target[p]]
                assert max(upstream) == len(source[p]) - 1
                total_replays += replays(upstream)
            # Each restart replays at most once per partition, from its last committed offset:
            # the restarted tasks resumed from stored offsets, not from the start.
            assert total_replays <= KILLS * PARTITIONS
            resumed = re.findall(r"\((\d+) resumed from stored offsets\)", worker.log_path.read_text())
            assert len(resumed) >= KILLS * 2 and all(int(n) > 0 for n in resumed[-KILLS * 2 :]), resumed
        finally:
            worker.stop()
    finally:
        b.stop()
        a.stop()
