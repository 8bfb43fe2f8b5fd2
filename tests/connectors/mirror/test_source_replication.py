"""MirrorSourceConnector end to end, A -> B: records copied byte for byte in order per
partition (keys, values, headers, timestamps), to ``A.<topic>``, and offset syncs on A
pairing each upstream offset with the downstream offset it was written at."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Producer

from connectors.mirror.formats import OffsetSync
from tests.connectors.mirror.source_support import (
    Clusters,
    Row,
    clusters,
    create_topic,
    produce,
    read,
    read_all,
    row,
    wait_until,
)
from tests.support import unique


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Clusters]:
    with clusters(Path(tmp_path_factory.mktemp("mirror-source"))) as c:
        yield c


def rows_for(partition: int, n: int, start: int = 0) -> list[Row]:
    """Varied records: null and empty keys and values, repeated and null headers."""
    out: list[Row] = []
    for i in range(start, start + n):
        key = None if i % 7 == 3 else f"k{partition}-{i}".encode()
        value = None if i % 11 == 5 else (b"" if i % 13 == 4 else f"v{partition}-{i}\x00\xff".encode())
        headers: list[tuple[str, str | bytes | None]] = (
            [] if i % 3 == 0 else [("h", f"{i}".encode()), ("h", b"\x01\x02"), ("n", None)]
        )
        out.append((key, value, headers, 1_700_000_000_000 + partition * 1000 + i))
    return out


def test_records_are_copied_byte_for_byte_in_order_per_partition(env: Clusters) -> None:
    topic = unique("orders")
    create_topic(env.a.bootstrap, topic, 3)
    sent = {p: rows_for(p, 20) for p in range(3)}
    produce(env.a.bootstrap, topic, [(p, r) for p in range(3) for r in sent[p][:10]])
    name = env.start(topic)
    env.worker.wait_for_running(name, tasks=2)
    # More while it runs: both the backlog and the live records arrive.
    produce(env.a.bootstrap, topic, [(p, r) for p in range(3) for r in sent[p][10:]])
    for p in range(3):
        got = [row(m) for m in read(env.b, f"A.{topic}", p, 20)]
        assert got == sent[p], f"partition {p}"
    status = env.worker.status(name)
    assert status["connector"]["state"] == "RUNNING"
    assert sorted(t["state"] for t in status["tasks"]) == ["RUNNING", "RUNNING"]


def test_offset_syncs_pair_upstream_with_downstream_offsets(env: Clusters) -> None:
    topic = unique("synced")
    create_topic(env.a.bootstrap, topic, 1)
    # The remote topic already holds 5 records of its own, so downstream = upstream + 5.
    create_topic(env.b, f"A.{topic}", 1)
    produce(env.b, f"A.{topic}", [(0, (b"old", b"old", [], 1))] * 5)
    produce(env.a.bootstrap, topic, [(0, r) for r in rows_for(0, 30)])
    name = env.start(topic, **{"offset.lag.max": "10", "tasks.max": "1"})
    env.worker.wait_for_running(name, tasks=1)
    remote = read(env.b, f"A.{topic}", 0, 35)
    assert [row(m) for m in remote[5:]] == rows_for(0, 30)

    def syncs() -> list[OffsetSync] | None:
        found = [
            OffsetSync.decode(m.key() or b"", m.value() or b"")
            for m in read_all(env.a.bootstrap, "mm2-offset-syncs.B.internal")
        ]
        mine = [s for s in found if s.topic == topic]
        # The last record's sync is delayed until a commit, which comes within a second.
        return mine if mine and mine[-1].upstream_offset == 29 else None

    mine = wait_until(syncs, "the offset sync of the last record")
    assert mine[0].upstream_offset == 0  # the first record of a task's life is synced at once
    for sync in mine:
        assert sync.partition == 0
        assert sync.downstream_offset == sync.upstream_offset + 5
    # offset.lag.max=10: no two syncs further apart than that while records flowed.
    uppers = [s.upstream_offset for s in mine]
    assert all(b - a <= 11 for a, b in itertools.pairwise(uppers))


def test_kafkas_class_name_tombstones_and_large_batches(env: Clusters) -> None:
    topic = unique("bulk")
    create_topic(env.a.bootstrap, topic, 1)
    producer = Producer({"bootstrap.servers": env.a.bootstrap, "linger.ms": 5})
    for i in range(2000):
        producer.produce(topic, None if i % 100 == 0 else f"{i}".encode(), f"{i % 10}".encode(), 0)
    assert producer.flush(30) == 0
    # Under Kafka's class name, as a published MM2 config names it.
    kafka_name = "org.apache.kafka.connect.mirror.MirrorSourceConnector"
    name = env.start(topic, **{"tasks.max": "1", "connector.class": kafka_name})
    env.worker.wait_for_running(name, tasks=1)
    got = read(env.b, f"A.{topic}", 0, 2000)
    assert [m.value() for m in got] == [None if i % 100 == 0 else f"{i}".encode() for i in range(2000)]


def test_offset_syncs_on_the_target_take_the_source_alias(env: Clusters) -> None:
    topic = unique("synced-on-b")
    create_topic(env.a.bootstrap, topic, 1)
    produce(env.a.bootstrap, topic, [(0, r) for r in rows_for(0, 3)])
    name = env.start(topic, **{"offset-syncs.topic.location": "target", "tasks.max": "1"})
    env.worker.wait_for_running(name, tasks=1)
    read(env.b, f"A.{topic}", 0, 3)

    def syncs() -> list[OffsetSync] | None:
        found = [
            OffsetSync.decode(m.key() or b"", m.value() or b"")
            for m in read_all(env.b, "mm2-offset-syncs.A.internal")
        ]
        mine = [s for s in found if s.topic == topic]
        return mine if mine and mine[-1].upstream_offset == 2 else None

    mine = wait_until(syncs, "offset syncs on B")
    assert all(s.downstream_offset == s.upstream_offset for s in mine)


def test_a_restarted_task_resumes_one_past_its_stored_offset(env: Clusters) -> None:
    topic = unique("resume")
    create_topic(env.a.bootstrap, topic, 1)
    produce(env.a.bootstrap, topic, [(0, r) for r in rows_for(0, 5)])
    name = env.start(topic, **{"tasks.max": "1"})
    env.worker.wait_for_running(name, tasks=1)
    read(env.b, f"A.{topic}", 0, 5)
    r = env.worker.request("POST", f"/connectors/{name}/restart?includeTasks=true")
    assert r.status_code in (200, 202, 204), r.text
    env.worker.wait_for_running(name, tasks=1)
    produce(env.a.bootstrap, topic, [(0, r) for r in rows_for(0, 5, start=5)])
    # Exactly ten: the stopped task's offsets were committed, the new one starts after them.
    assert [row(m) for m in read(env.b, f"A.{topic}", 0, 10)] == rows_for(0, 10)
