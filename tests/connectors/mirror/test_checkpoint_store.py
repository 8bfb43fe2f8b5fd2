"""CheckpointStore: which checkpoints are emitted (Kafka's checkpointIsMoreRecent)."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from connect.api import TopicPartition
from connectors.mirror.checkpoint_store import CheckpointStore, is_more_recent
from connectors.mirror.formats import Checkpoint


def cp(
    upstream: int, downstream: int, group: str = "g", topic: str = "A.t", partition: int = 0
) -> Checkpoint:
    return Checkpoint(group, topic, partition, upstream, downstream, "")


def test_the_first_checkpoint_of_a_partition_is_emitted() -> None:
    assert is_more_recent(cp(5, 3), None)


def test_an_advanced_downstream_offset_is_emitted() -> None:
    assert is_more_recent(cp(6, 4), cp(5, 3))


def test_a_repeated_checkpoint_is_not() -> None:
    assert not is_more_recent(cp(5, 3), cp(5, 3))
    assert not is_more_recent(cp(9, 3), cp(5, 3))  # upstream moved, translation did not


def test_a_downstream_rewind_without_an_upstream_one_is_not() -> None:
    assert not is_more_recent(cp(7, 2), cp(5, 3))


def test_an_upstream_rewind_is_emitted_even_backwards() -> None:
    assert is_more_recent(cp(4, 1), cp(5, 3))


def test_store_keeps_partitions_and_groups_apart() -> None:
    store = CheckpointStore()
    assert store.to_emit("g", [cp(5, 3), cp(5, 3, partition=1)]) == [cp(5, 3), cp(5, 3, partition=1)]
    assert store.to_emit("h", [cp(5, 3, group="h")]) == [cp(5, 3, group="h")]
    assert store.to_emit("g", [cp(5, 3), cp(8, 6, partition=1)]) == [cp(8, 6, partition=1)]
    assert store.get("g") == {
        TopicPartition("A.t", 0): cp(5, 3),
        TopicPartition("A.t", 1): cp(8, 6, partition=1),
    }


def test_negative_downstream_offsets_are_dropped() -> None:
    store = CheckpointStore()
    assert store.to_emit("g", [cp(5, -1)]) == []
    assert store.get("g") == {}


def test_load_keeps_the_last_checkpoint_of_assigned_groups_only() -> None:
    store = CheckpointStore()
    store.load([cp(1, 1), cp(5, 4), cp(3, 3, group="other")], ["g"])
    assert store.get("g") == {TopicPartition("A.t", 0): cp(5, 4)}
    assert store.get("other") == {}
    assert store.to_emit("g", [cp(5, 4)]) == []  # a restarted task does not repeat itself
    assert store.downstream_offsets() == {"g": {TopicPartition("A.t", 0): cp(5, 4)}}


@given(st.lists(st.tuples(st.integers(0, 50), st.integers(-1, 50)), max_size=40))
def test_emitted_downstream_offsets_only_go_back_after_an_upstream_rewind(
    rounds: list[tuple[int, int]],
) -> None:
    store = CheckpointStore()
    emitted: list[Checkpoint] = []
    for upstream, downstream in rounds:
        emitted += store.to_emit("g", [cp(upstream, downstream)])
    for before, after in itertools.pairwise(emitted):
        assert (
            after.downstream_offset > before.downstream_offset
            or after.upstream_offset < before.upstream_offset
        )
    assert all(c.downstream_offset >= 0 for c in emitted)
    if emitted:
        assert store.get("g")[TopicPartition("A.t", 0)] == emitted[-1]
