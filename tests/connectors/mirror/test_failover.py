"""A consumer group fails over from A to B and goes on without losing a record.

MirrorSourceConnector replicates ``orders`` into B's ``A.orders`` (writing offset syncs),
MirrorCheckpointConnector translates the group's offsets into checkpoints on B. The group
switches to B with the translated offsets, through the failover client
(``client.translate_offsets``) or through ``sync.group.offsets.enabled``, and reads every
record it had not consumed on A, re-reading at most those since the last offset sync.
"""

from __future__ import annotations

import time
import uuid

from confluent_kafka import Consumer, TopicPartition

from connect.api import TopicPartition as Partition
from connectors.mirror import client
from tests.connectors.mirror.checkpoint_support import (
    CHECKPOINT,
    SOURCE,
    Clusters,
    checkpoints,
    clusters,
    committed,
    create_topic,
    produce,
    read_all,
)
from tests.connectors.mirror.source_support import wait_until

__all__ = ["clusters"]


def consume_and_commit(bootstrap: str, group: str, topic: str, count: int) -> list[int]:
    """``group`` reads ``count`` more records of ``topic`` (one partition) and commits."""
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "session.timeout.ms": 6000,
        }
    )
    c.subscribe([topic])
    values: list[int] = []
    last = -1
    deadline = time.monotonic() + 30
    try:
        while len(values) < count:
            assert time.monotonic() < deadline, f"{group} read only {values} of {topic}"
            m = c.poll(0.5)
            if m is not None and m.error() is None:
                values.append(int(m.value() or b""))
                last = int(m.offset() or 0)
        c.commit(offsets=[TopicPartition(topic, 0, last + 1)], asynchronous=False)
    finally:
        c.close()
    return values


def values_on_b(clusters: Clusters, start: int) -> list[int]:
    return [int(m.value() or b"") for m in read_all(clusters.b, "A.orders") if m.offset() >= start]


def start_mirror(clusters: Clusters, **extra: str) -> None:
    flow = clusters.flow(**{"topics": "orders", "offset.lag.max": "5", **extra})
    clusters.worker.create_connector("source", {"connector.class": SOURCE, **flow})
    create_topic(clusters.a, "orders")
    produce(clusters.a, "orders", [(0, None, b"%d" % i) for i in range(30)])
    wait_until(lambda: len(values_on_b(clusters, 0)) == 30, "30 records replicated to B")
    # The group reads all 30 on A; the checkpoint task starts once the group exists.
    assert consume_and_commit(clusters.a, "app", "orders", 30) == list(range(30))
    clusters.worker.create_connector("checkpoints", {"connector.class": CHECKPOINT, **flow})
    # At the end of a topic the translation is exact: offset 30 is B's 30.
    wait_until(
        lambda: any(c.group == "app" and c.upstream_offset == 30 for c in checkpoints(clusters.b)),
        "app's checkpoint at 30",
    )
    produce(clusters.a, "orders", [(0, None, b"%d" % i) for i in range(30, 50)])
    wait_until(lambda: len(values_on_b(clusters, 0)) == 50, "50 records replicated to B")


def test_failover_with_translated_offsets_loses_nothing(clusters: Clusters) -> None:
    start_mirror(clusters)
    config = {"bootstrap.servers": clusters.b}
    translated = client.translate_offsets(config, "A", "app", 10.0)
    assert translated == {Partition("A.orders", 0): 30}
    assert values_on_b(clusters, 30) == list(range(30, 50))

    # Mid-topic: the group reads 10 more on A; the checkpoint lands between the last
    # sync the store kept before 40 and 40 itself, never past it.
    assert consume_and_commit(clusters.a, "app", "orders", 10) == list(range(30, 40))
    wait_until(
        lambda: any(c.group == "app" and c.upstream_offset == 40 for c in checkpoints(clusters.b)),
        "app's checkpoint at 40",
    )
    offset = client.translate_offsets(config, "A", "app", 10.0)[Partition("A.orders", 0)]
    assert 30 <= offset <= 40  # re-reads at most the 10 records since the previous sync
    resumed = values_on_b(clusters, offset)
    assert resumed == list(range(offset, 50))  # B's copy holds A's offsets: nothing skipped


def test_failover_through_synced_group_offsets_loses_nothing(clusters: Clusters) -> None:
    start_mirror(clusters, **{"sync.group.offsets.enabled": "true"})
    wait_until(lambda: committed(clusters.b, "app") == {("A.orders", 0): 30}, "app's offsets synced to B")
    # The application moves to B under the same group id and reads what it had not.
    c = Consumer(
        {
            "bootstrap.servers": clusters.b,
            "group.id": "app",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "client.id": f"app-{uuid.uuid4().hex[:6]}",
        }
    )
    c.subscribe(["A.orders"])
    values: list[int] = []
    deadline = time.monotonic() + 30
    try:
        while len(values) < 20:
            assert time.monotonic() < deadline, f"app read only {values} on B"
            m = c.poll(0.5)
            if m is not None and m.error() is None:
                values.append(int(m.value() or b""))
    finally:
        c.close()
    assert values == list(range(30, 50))
