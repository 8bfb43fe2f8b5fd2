"""sync.group.offsets: translated offsets go only into idle or absent target groups, and
never move a group backwards."""

from __future__ import annotations

import threading
import uuid

from confluent_kafka import Consumer, ConsumerGroupState
from hypothesis import given
from hypothesis import strategies as st

from connect.api import TopicPartition
from connectors.mirror.formats import Checkpoint, OffsetSync
from connectors.mirror.group_offsets import TargetGroup, offsets_to_sync, target_group
from tests.connectors.mirror.checkpoint_support import (
    CHECKPOINT,
    Clusters,
    checkpoints,
    clusters,
    commit,
    committed,
    create_topic,
    produce,
    write_offset_syncs,
)
from tests.connectors.mirror.source_support import wait_until

__all__ = ["clusters"]

TP = TopicPartition("A.t", 0)


def cp(downstream: int, partition: int = 0) -> Checkpoint:
    return Checkpoint("g", "A.t", partition, downstream + 100, downstream, "meta")


def test_states() -> None:
    assert target_group(ConsumerGroupState.DEAD) is TargetGroup.ABSENT
    assert target_group(ConsumerGroupState.EMPTY) is TargetGroup.IDLE
    for state in (
        ConsumerGroupState.STABLE,
        ConsumerGroupState.PREPARING_REBALANCING,
        ConsumerGroupState.COMPLETING_REBALANCING,
        ConsumerGroupState.UNKNOWN,
        None,
    ):
        assert target_group(state) is TargetGroup.ACTIVE


def test_an_absent_group_gets_every_offset() -> None:
    assert offsets_to_sync({TP: cp(5)}, TargetGroup.ABSENT, {}) == {TP: cp(5)}


def test_an_active_group_is_left_alone() -> None:
    assert offsets_to_sync({TP: cp(5)}, TargetGroup.ACTIVE, {}) == {}


def test_an_idle_group_moves_only_forward() -> None:
    other = TopicPartition("A.t", 1)
    third = TopicPartition("A.t", 2)
    chosen = offsets_to_sync(
        {TP: cp(5), other: cp(5, 1), third: cp(5, 2)},
        TargetGroup.IDLE,
        {TP: 3, other: 9, third: None},
    )
    assert chosen == {TP: cp(5), third: cp(5, 2)}


@given(
    st.dictionaries(st.integers(0, 5), st.integers(0, 100)),
    st.dictionaries(st.integers(0, 5), st.one_of(st.none(), st.integers(-1, 100))),
    st.sampled_from(list(TargetGroup)),
)
def test_never_backwards_never_an_active_group(
    translated: dict[int, int], current: dict[int, int | None], group: TargetGroup
) -> None:
    checkpoints_ = {TopicPartition("A.t", p): cp(o, p) for p, o in translated.items()}
    target = {TopicPartition("A.t", p): o for p, o in current.items()}
    chosen = offsets_to_sync(checkpoints_, group, target)
    if group is TargetGroup.ACTIVE:
        assert chosen == {}
    for tp, checkpoint in chosen.items():
        assert checkpoints_[tp] == checkpoint
        now = target.get(tp)
        if group is TargetGroup.IDLE and now is not None and now >= 0:
            assert checkpoint.downstream_offset > now
    if group is TargetGroup.ABSENT:
        assert chosen == checkpoints_
    if group is TargetGroup.IDLE:
        for tp, checkpoint in checkpoints_.items():
            now = target.get(tp)
            if now is None or now < checkpoint.downstream_offset:
                assert tp in chosen


def test_sync_writes_into_idle_and_absent_groups_only_forward(clusters: Clusters) -> None:
    # Source A: topic t with 30 records; offset syncs say A's t-0 offset n is B's A.t-0 n.
    create_topic(clusters.a, "t")
    produce(clusters.a, "t", ((0, None, b"%d" % i) for i in range(30)))
    create_topic(clusters.a, "mm2-offset-syncs.B.internal", configs={"cleanup.policy": "compact"})
    write_offset_syncs(clusters.a, "mm2-offset-syncs.B.internal", [OffsetSync("t", 0, 20, 20)])
    # The target's copy A.t, written as the source connector would have.
    create_topic(clusters.b, "A.t")
    produce(clusters.b, "A.t", ((0, None, b"%d" % i) for i in range(30)))
    for group in ("absent", "behind", "ahead", "busy"):
        commit(clusters.a, group, {("t", 0): 20})
    commit(clusters.b, "behind", {("A.t", 0): 5})
    commit(clusters.b, "ahead", {("A.t", 0): 25})

    # "busy" has a member consuming on B the whole time.
    stop = threading.Event()
    joined = threading.Event()

    def consume_busy() -> None:
        c = Consumer(
            {
                "bootstrap.servers": clusters.b,
                "group.id": "busy",
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "session.timeout.ms": 6000,
            }
        )
        c.subscribe(["A.t"], on_assign=lambda *_: joined.set())
        try:
            while not stop.is_set():
                c.poll(0.1)
        finally:
            c.close()

    busy = threading.Thread(target=consume_busy, name=f"busy-{uuid.uuid4().hex[:4]}")
    busy.start()
    try:
        assert joined.wait(30), "the busy consumer did not join its group"
        clusters.worker.create_connector(
            "checkpoints",
            {
                "connector.class": CHECKPOINT,
                **clusters.flow(**{"sync.group.offsets.enabled": "true"}),
            },
        )
        wait_until(lambda: committed(clusters.b, "absent"), "offsets synced into the absent group")
        wait_until(
            lambda: committed(clusters.b, "behind") == {("A.t", 0): 20}, "the idle group moved forward"
        )
        # Checkpoints for every group exist by now, and a sync round has passed since.
        groups = {c.group for c in checkpoints(clusters.b)}
        assert groups == {"absent", "behind", "ahead", "busy"}
        wait_until(lambda: committed(clusters.b, "absent") == {("A.t", 0): 20}, "absent group synced")
        assert committed(clusters.b, "ahead") == {("A.t", 0): 25}  # never backwards
        assert committed(clusters.b, "busy") == {}  # its members own its offsets
    finally:
        stop.set()
        busy.join(30)
