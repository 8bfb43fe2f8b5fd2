"""AckTracker: the slot may confirm a transaction's end only once Kafka has every record of it
and of everything before it (pure; hypothesis explores acknowledgement orders)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connectors.jdbc.cdc.lsn_tracker import AckTracker


def test_nothing_to_confirm_at_first() -> None:
    assert AckTracker().confirmable() is None


def test_a_transaction_is_confirmable_once_closed_and_fully_acknowledged() -> None:
    tracker = AckTracker()
    unit = tracker.open()
    tracker.add(unit, "a")
    tracker.add(unit, "b")
    assert tracker.confirmable() is None  # not closed: the Commit was not read yet
    tracker.close(unit, 100)
    assert tracker.confirmable() is None
    tracker.ack("b")
    assert tracker.confirmable() is None
    tracker.ack("a")
    assert tracker.confirmable() == 100
    assert tracker.pending == 0 and len(tracker) == 0


def test_a_later_transaction_waits_for_earlier_ones() -> None:
    tracker = AckTracker()
    first, second = tracker.open(), tracker.open()
    tracker.add(first, 1)
    tracker.close(first, 100)
    tracker.add(second, 2)
    tracker.close(second, 200)
    tracker.ack(2)
    assert tracker.confirmable() is None
    tracker.ack(1)
    assert tracker.confirmable() == 200


def test_empty_transactions_confirm_at_once_in_order() -> None:
    tracker = AckTracker()
    for lsn in (10, 20, 30):
        tracker.close(tracker.open(), lsn)
    assert tracker.confirmable() == 30


def test_the_snapshot_holds_back_the_stream_and_confirms_nothing_itself() -> None:
    tracker = AckTracker()
    snapshot = tracker.open()
    tracker.add(snapshot, "r1")
    tracker.close(snapshot, None)
    txn = tracker.open()
    tracker.close(txn, 500)  # a transaction without records for us
    assert tracker.confirmable() is None
    tracker.ack("r1")
    assert tracker.confirmable() == 500


def test_an_abandoned_unit_confirms_nothing_but_still_waits_for_its_records() -> None:
    tracker = AckTracker()
    broken = tracker.open()  # the connection dropped mid-transaction
    tracker.add(broken, "x")
    tracker.close(broken, None)
    again = tracker.open()  # the server resends the transaction
    tracker.add(again, "y")
    tracker.close(again, 300)
    tracker.ack("y")
    assert tracker.confirmable() is None
    tracker.ack("x")
    assert tracker.confirmable() == 300


def test_confirmations_never_go_back() -> None:
    tracker = AckTracker()
    tracker.close(tracker.open(), 300)
    assert tracker.confirmable() == 300
    tracker.close(tracker.open(), 200)  # e.g. a heartbeat at an older idle position
    assert tracker.confirmable() == 300


def test_unknown_and_repeated_acknowledgements_are_ignored() -> None:
    tracker = AckTracker()
    unit = tracker.open()
    tracker.add(unit, "a")
    tracker.close(unit, 10)
    assert tracker.ack("a") is True
    assert tracker.ack("a") is False
    assert tracker.ack("nope") is False
    assert tracker.confirmable() == 10


def test_misuse_is_refused() -> None:
    tracker = AckTracker()
    unit = tracker.open()
    tracker.add(unit, "a")
    with pytest.raises(ValueError, match="already pending"):
        tracker.add(unit, "a")
    tracker.close(unit, 1)
    with pytest.raises(ValueError, match="closed"):
        tracker.add(unit, "b")


@settings(max_examples=300, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=0, max_value=4), min_size=1, max_size=8),
    data=st.data(),
)
def test_confirmed_lsn_is_always_the_end_of_a_fully_acknowledged_prefix(
    sizes: list[int], data: st.DataObject
) -> None:
    """Whatever order acknowledgements come in, the confirmed LSN is the end of the longest
    prefix of transactions whose records were all acknowledged, and never decreases."""
    tracker = AckTracker()
    records: list[tuple[int, int]] = []  # (transaction index, record number)
    for t, size in enumerate(sizes):
        unit = tracker.open()
        for r in range(size):
            tracker.add(unit, (t, r))
            records.append((t, r))
        tracker.close(unit, (t + 1) * 100)
    order = data.draw(st.permutations(records))
    acked: set[tuple[int, int]] = set()
    last: int | None = None

    def expected() -> int | None:
        prefix = 0
        for t, size in enumerate(sizes):
            if all((t, r) in acked for r in range(size)):
                prefix = t + 1
            else:
                break
        return prefix * 100 if prefix else None

    assert tracker.confirmable() == expected()
    for record in order:
        tracker.ack(record)
        acked.add(record)
        now = tracker.confirmable()
        assert now == expected()
        assert last is None or (now is not None and now >= last)
        last = now
    assert tracker.confirmable() == len(sizes) * 100
