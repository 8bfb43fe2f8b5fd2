"""CommitTracker: the slot may confirm a transaction's end only once the worker stored the
offset of its last record (so Kafka has every record of it and of everything before it);
pure, hypothesis explores how far the stored offsets reach."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connectors.jdbc.cdc.lsn_tracker import CommitTracker, order_key
from connectors.jdbc.cdc.offsets import heartbeat_offset, snapshot_offset, stream_offset


def rec(commit_lsn: int, event: int, part: int = 0) -> dict[str, Any]:
    return stream_offset(commit_lsn - 10 + event, commit_lsn, 7, 1_000, event, part)


def test_nothing_to_confirm_at_first() -> None:
    tracker = CommitTracker()
    assert tracker.confirmable() is None
    assert tracker.committed(None) is None


def test_a_transaction_is_confirmable_once_closed_and_its_last_record_stored() -> None:
    tracker = CommitTracker()
    unit = tracker.open()
    tracker.emitted(unit, rec(100, 0))
    tracker.emitted(unit, rec(100, 1))
    assert tracker.committed(rec(100, 1)) is None  # not closed: the Commit was not read yet
    tracker.close(unit, 140)
    assert tracker.confirmable() == 140  # stored before it closed: counts once it does
    assert len(tracker) == 0


def test_half_a_transaction_stored_confirms_nothing() -> None:
    tracker = CommitTracker()
    unit = tracker.open()
    tracker.emitted(unit, rec(100, 0))
    tracker.emitted(unit, rec(100, 1, 1))  # a delete's tombstone
    tracker.close(unit, 140)
    assert tracker.committed(rec(100, 1, 0)) is None
    assert tracker.committed(rec(100, 1, 1)) == 140


def test_a_later_transaction_waits_for_earlier_ones() -> None:
    tracker = CommitTracker()
    first, second = tracker.open(), tracker.open()
    tracker.emitted(first, rec(100, 1))
    tracker.close(first, 140)
    tracker.emitted(second, rec(200, 0))
    tracker.close(second, 240)
    assert tracker.committed(rec(100, 0)) is None
    assert tracker.committed(rec(100, 1)) == 140
    assert tracker.committed(rec(200, 0)) == 240


def test_empty_transactions_confirm_once_everything_before_them_is_stored() -> None:
    tracker = CommitTracker()
    for lsn in (10, 20, 30):
        tracker.close(tracker.open(), lsn)
    assert tracker.confirmable() == 30
    busy = tracker.open()
    tracker.emitted(busy, rec(100, 0))
    tracker.close(busy, 140)
    tracker.close(tracker.open(), 150)  # nothing for us, after a transaction not yet stored
    assert tracker.confirmable() == 30
    assert tracker.committed(rec(100, 0)) == 150


def test_the_snapshot_holds_back_the_stream_and_confirms_nothing_itself() -> None:
    tracker = CommitTracker()
    snapshot = tracker.open()
    tracker.emitted(snapshot, snapshot_offset(50, 3, 1_000, last=False))
    tracker.emitted(snapshot, snapshot_offset(50, 3, 1_000, last=True))
    tracker.close(snapshot, None)
    txn = tracker.open()
    tracker.close(txn, 500)  # a transaction without records for us
    assert tracker.committed(snapshot_offset(50, 3, 1_000, last=False)) is None
    assert tracker.committed(snapshot_offset(50, 3, 1_000, last=True)) == 500


def test_an_abandoned_unit_confirms_nothing_and_later_ones_wait_for_their_own_records() -> None:
    tracker = CommitTracker()
    broken = tracker.open()  # the connection dropped mid-transaction
    tracker.emitted(broken, rec(300, 0))
    tracker.close(broken, None)
    again = tracker.open()  # the server resends the transaction
    tracker.emitted(again, rec(300, 1))
    tracker.close(again, 340)
    assert tracker.committed(rec(300, 0)) is None
    assert tracker.committed(rec(300, 1)) == 340


def test_heartbeats_confirm_their_position() -> None:
    tracker = CommitTracker()
    txn = tracker.open()
    tracker.emitted(txn, rec(100, 0))
    tracker.close(txn, 140)
    beat = tracker.open()
    tracker.emitted(beat, heartbeat_offset(900, 5))
    tracker.close(beat, 900)
    assert tracker.committed(rec(100, 0)) == 140
    assert tracker.committed(heartbeat_offset(900, 5)) == 900


def test_confirmations_never_go_back() -> None:
    tracker = CommitTracker()
    tracker.close(tracker.open(), 300)
    assert tracker.confirmable() == 300
    tracker.close(tracker.open(), 200)  # e.g. a heartbeat at an older idle position
    assert tracker.confirmable() == 300
    assert tracker.committed(rec(100, 0)) == 300  # an older stored offset moves nothing back


def test_misuse_is_refused() -> None:
    tracker = CommitTracker()
    unit = tracker.open()
    tracker.close(unit, 1)
    with pytest.raises(ValueError, match="closed"):
        tracker.emitted(unit, rec(100, 0))
    with pytest.raises(ValueError, match="neither lsn nor lsn_commit"):
        tracker.committed({"something": "else"})


def test_records_are_ordered_as_the_task_emits_them() -> None:
    keys = [
        order_key(snapshot_offset(50, 3, 1_000, last=False)),
        order_key(snapshot_offset(50, 3, 1_000, last=True)),
        order_key(rec(100, 0)),
        order_key(rec(100, 0, 1)),
        order_key(rec(100, 1)),
        order_key(heartbeat_offset(150, 9)),
        order_key(rec(200, 0)),
    ]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)


@settings(max_examples=300, deadline=None)
@given(sizes=st.lists(st.integers(min_value=0, max_value=4), min_size=1, max_size=8), data=st.data())
def test_confirmed_lsn_is_the_end_of_the_longest_stored_prefix(sizes: list[int], data: st.DataObject) -> None:
    """However far the stored offsets reach, in whatever steps, the confirmed LSN is the end
    of the last transaction all of whose records (and all before) are stored, and never
    decreases."""
    tracker = CommitTracker()
    records: list[tuple[int, dict[str, Any]]] = []  # (transaction index, offset), in order
    for t, size in enumerate(sizes):
        unit = tracker.open()
        for r in range(size):
            offset = rec((t + 1) * 100, r)
            tracker.emitted(unit, offset)
            records.append((t, offset))
        tracker.close(unit, (t + 1) * 100 + 40)
    steps = sorted(data.draw(st.lists(st.integers(0, len(records)), max_size=6)))

    def expected(stored: int) -> int | None:
        done = {t for t, _ in records[stored:]}  # transactions with a record not yet stored
        prefix = next((t for t in range(len(sizes)) if t in done), len(sizes))
        return prefix * 100 + 40 if prefix else None

    last: int | None = tracker.confirmable()
    assert last == expected(0)
    for stored in [*steps, len(records)]:
        now = tracker.committed(records[stored - 1][1] if stored else None)
        assert now == expected(stored)
        assert last is None or (now is not None and now >= last)
        last = now
    assert last == len(sizes) * 100 + 40
