"""Offsets, stream positions and the start-up plan: what snapshot.mode does given the stored
offset and the state of the slot (pure, a table of cases)."""

from __future__ import annotations

import pytest

from connectors.jdbc.cdc.config import SnapshotMode
from connectors.jdbc.cdc.offsets import (
    SlotState,
    SnapshotKind,
    StartPlan,
    StoredOffset,
    StreamPosition,
    format_lsn,
    heartbeat_offset,
    parse_lsn,
    plan_start,
    snapshot_offset,
    stream_offset,
)


def test_lsn_text_form() -> None:
    assert format_lsn(0x16_B374D848) == "16/B374D848"
    assert parse_lsn("16/B374D848") == 0x16_B374D848
    assert parse_lsn(format_lsn(0)) == 0


def test_offset_shapes() -> None:
    assert snapshot_offset(100, 7, 5, last=False) == {
        "lsn": 100,
        "txId": 7,
        "ts_usec": 5,
        "snapshot": True,
        "last_snapshot_record": False,
    }
    assert stream_offset(120, 150, 8, 6, 2, 1) == {
        "lsn": 120,
        "lsn_proc": 120,
        "lsn_commit": 150,
        "txId": 8,
        "ts_usec": 6,
        "event": 2,
        "event_part": 1,
    }
    assert heartbeat_offset(200, 9) == {
        "lsn": 200,
        "lsn_proc": 200,
        "lsn_commit": 200,
        "ts_usec": 9,
        "event": -1,
        "event_part": -1,
    }


def test_stored_offsets_are_understood() -> None:
    assert StoredOffset.parse(None) is None
    assert StoredOffset.parse({}) is None
    assert StoredOffset.parse(snapshot_offset(100, 7, 5, last=False)) == StoredOffset(False, None, 100)
    assert StoredOffset.parse(snapshot_offset(100, 7, 5, last=True)) == StoredOffset(True, None, 100)
    assert StoredOffset.parse(stream_offset(120, 150, 8, 6, 2, 1)) == StoredOffset(
        True, StreamPosition(150, 2, 1), 120
    )
    assert StoredOffset.parse(heartbeat_offset(200, 9)) == StoredOffset(
        True, StreamPosition(200, -1, -1), 200
    )
    # Without Sluiceway's event keys (another tool's offset), the whole transaction counts as done.
    assert StoredOffset.parse({"lsn": 120, "lsn_commit": 150}) == StoredOffset(
        True, StreamPosition(150, 2**62, 0), 120
    )
    with pytest.raises(ValueError, match="not an integer"):
        StoredOffset.parse({"lsn": "0/10"})
    with pytest.raises(ValueError, match="neither"):
        StoredOffset.parse({"txId": 1})


def test_positions_order_records_across_and_within_transactions() -> None:
    heartbeat = StreamPosition.idle_at(300)
    assert StreamPosition(200, 5, 2) < heartbeat < StreamPosition(300, 0, 0) < StreamPosition(300, 0, 1)
    assert StreamPosition(300, 1, 0) < StreamPosition(400, 0, 0)


SNAPSHOTTING = StoredOffset(False, None, 100)
SNAPSHOTTED = StoredOffset(True, None, 100)
STREAMED = StoredOffset(True, StreamPosition(150, 2, 0), 120)
FRESH = StartPlan(SnapshotKind.EXPORTED, drop_slot=False, create_slot=True)
FRESH_AFTER_DROP = StartPlan(SnapshotKind.EXPORTED, drop_slot=True, create_slot=True)
USABLE, MISSING, LOST = SlotState.USABLE, SlotState.MISSING, SlotState.LOST


@pytest.mark.parametrize(
    ("mode", "stored", "slot", "plan"),
    [
        # initial: snapshot when nothing was completed; a slot left by an interrupted snapshot is remade.
        (SnapshotMode.INITIAL, None, MISSING, FRESH),
        (SnapshotMode.INITIAL, None, USABLE, FRESH_AFTER_DROP),
        (SnapshotMode.INITIAL, SNAPSHOTTING, USABLE, FRESH_AFTER_DROP),
        (SnapshotMode.INITIAL, SNAPSHOTTED, USABLE, StartPlan(SnapshotKind.NONE)),
        (
            SnapshotMode.INITIAL,
            STREAMED,
            USABLE,
            StartPlan(SnapshotKind.NONE, resume=StreamPosition(150, 2, 0)),
        ),
        # when_needed: as initial, and a lost slot means a new snapshot rather than a failure.
        (SnapshotMode.WHEN_NEEDED, STREAMED, MISSING, FRESH),
        (SnapshotMode.WHEN_NEEDED, STREAMED, LOST, FRESH_AFTER_DROP),
        (
            SnapshotMode.WHEN_NEEDED,
            STREAMED,
            USABLE,
            StartPlan(SnapshotKind.NONE, resume=StreamPosition(150, 2, 0)),
        ),
        # always: a snapshot at every start; a slot that streamed keeps its position.
        (SnapshotMode.ALWAYS, None, MISSING, FRESH),
        (
            SnapshotMode.ALWAYS,
            STREAMED,
            USABLE,
            StartPlan(SnapshotKind.OWN, resume=StreamPosition(150, 2, 0)),
        ),
        (SnapshotMode.ALWAYS, SNAPSHOTTING, USABLE, FRESH_AFTER_DROP),
        # initial_only: a snapshot of its own, no slot, no streaming.
        (SnapshotMode.INITIAL_ONLY, None, MISSING, StartPlan(SnapshotKind.OWN, stream=False)),
        (SnapshotMode.INITIAL_ONLY, SNAPSHOTTING, MISSING, StartPlan(SnapshotKind.OWN, stream=False)),
        (SnapshotMode.INITIAL_ONLY, SNAPSHOTTED, MISSING, StartPlan(SnapshotKind.NONE, stream=False)),
        # no_data (and never): stream only, from a new slot when there is none.
        (SnapshotMode.NO_DATA, None, MISSING, StartPlan(SnapshotKind.NONE, create_slot=True)),
        (SnapshotMode.NEVER, None, USABLE, StartPlan(SnapshotKind.NONE)),
        (
            SnapshotMode.NO_DATA,
            STREAMED,
            USABLE,
            StartPlan(SnapshotKind.NONE, resume=StreamPosition(150, 2, 0)),
        ),
        (
            SnapshotMode.NO_DATA,
            SNAPSHOTTING,
            LOST,
            StartPlan(SnapshotKind.NONE, drop_slot=True, create_slot=True),
        ),
    ],
)
def test_start_up_plans(
    mode: SnapshotMode, stored: StoredOffset | None, slot: SlotState, plan: StartPlan
) -> None:
    assert plan_start(mode, stored, slot, "s") == plan


@pytest.mark.parametrize(
    ("mode", "stored", "slot"),
    [
        (SnapshotMode.INITIAL, STREAMED, MISSING),
        (SnapshotMode.INITIAL, SNAPSHOTTED, LOST),
        (SnapshotMode.NO_DATA, STREAMED, MISSING),
    ],
)
def test_a_lost_slot_after_capturing_from_it_fails_with_the_ways_out(
    mode: SnapshotMode, stored: StoredOffset, slot: SlotState
) -> None:
    plan = plan_start(mode, stored, slot, "my_slot")
    assert plan.failure is not None
    assert 'replication slot "my_slot"' in plan.failure
    assert "DELETE /connectors/<name>/offsets" in plan.failure
    assert "snapshot.mode=when_needed" in plan.failure
