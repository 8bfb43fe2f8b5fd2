"""OffsetTracker: commits never pass a record Elasticsearch has not acknowledged."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connect.api import TopicPartition
from connectors.elasticsearch.offsets import OffsetTracker

TP = TopicPartition("tweets", 0)
OTHER = TopicPartition("tweets", 1)


def test_commits_up_to_the_first_unacknowledged_record() -> None:
    t = OffsetTracker()
    entries = [t.add(TP, o) for o in (10, 11, 12, 13)]
    assert t.committable({TP: 14}) == {TP: 10}
    t.done(entries[1])
    t.done(entries[2])
    assert t.committable({TP: 14}) == {TP: 10}  # 10 is still out
    t.done(entries[0])
    assert t.committable({TP: 14}) == {TP: 13}
    t.done(entries[3])
    assert t.committable({TP: 14}) == {TP: 14}
    assert t.unacked == 0


def test_a_partition_with_nothing_outstanding_commits_the_current_offset() -> None:
    """Records a transformation dropped never reach the tracker but must not hold commits back."""
    t = OffsetTracker()
    t.done(t.add(TP, 3))
    assert t.committable({TP: 50, OTHER: 7}) == {TP: 50, OTHER: 7}


def test_offsets_must_increase_within_a_partition() -> None:
    t = OffsetTracker()
    t.add(TP, 5)
    with pytest.raises(ValueError, match="offset 5 added after 5"):
        t.add(TP, 5)
    t.add(OTHER, 1)  # partitions are independent


def test_closing_a_partition_forgets_it_and_late_acknowledgements_are_harmless() -> None:
    t = OffsetTracker()
    a, b = t.add(TP, 1), t.add(TP, 2)
    c = t.add(OTHER, 9)
    assert t.unacked == 3
    t.close([TP])
    assert t.unacked == 1
    t.done(a)  # an in-flight request of the revoked partition completes afterwards
    t.done(b)
    t.done(b)
    assert t.unacked == 1
    t.done(c)
    assert t.unacked == 0
    assert t.committable({TP: 3}) == {TP: 3}


@given(st.lists(st.booleans(), min_size=1, max_size=60), st.randoms(use_true_random=False))
def test_committable_is_the_first_gap_whatever_the_acknowledgement_order(acked: list[bool], rnd) -> None:  # type: ignore[no-untyped-def]
    t = OffsetTracker()
    entries = [t.add(TP, 100 + i) for i in range(len(acked))]
    order = [e for e, ok in zip(entries, acked, strict=True) if ok]
    rnd.shuffle(order)
    for e in order:
        t.done(e)
    first_gap = next((100 + i for i, ok in enumerate(acked) if not ok), 100 + len(acked))
    assert t.committable({TP: 100 + len(acked)}) == {TP: first_gap}
    assert t.unacked == acked.count(False)
