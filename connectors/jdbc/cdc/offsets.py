"""Source offsets in Debezium's shape, stream positions, and what to do at start-up.

The source partition is ``{"server": <topic.prefix>}``. Offsets:

- during the snapshot: ``{"lsn", "txId", "ts_usec", "snapshot": true,
  "last_snapshot_record": false}``, and ``"last_snapshot_record": true`` on the
  snapshot's last record (``lsn`` is the slot's consistent point, ``txId`` the snapshot's
  xmin, ``ts_usec`` when it was taken);
- while streaming: ``{"lsn", "lsn_proc", "lsn_commit", "txId", "ts_usec", "event",
  "event_part"}`` where ``lsn``/``lsn_proc`` are the change's LSN, ``lsn_commit`` the
  commit LSN of the change's transaction, ``ts_usec`` its commit time, and ``event``
  (the change's index among its transaction's changes) and ``event_part`` (which record
  of that change: a delete, its tombstone...) are Sluiceway's: a change LSN alone does
  not tell records apart (one multi-row insert, one TRUNCATE of several tables);
- heartbeats: ``{"lsn", "lsn_proc", "lsn_commit"}`` all at the position reached while
  idle, ``"event": -1``.

A streamed record's *position* is ``(lsn_commit, event, event_part)``: transactions
arrive in commit order, so positions only grow. After a restart, records at or below
the stored position were delivered already and are skipped, so duplicates are limited
to what was sent but not yet acknowledged when the task died.

Crash during the snapshot: the stored offset still says ``snapshot``, so the next start
snapshots again from scratch, as Debezium does; the slot created for the interrupted
snapshot is dropped and created anew so that the new snapshot and the stream fit
together exactly.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from connectors.jdbc.cdc.config import SnapshotMode

__all__ = [
    "SlotState",
    "SnapshotKind",
    "StartPlan",
    "StoredOffset",
    "StreamPosition",
    "format_lsn",
    "heartbeat_offset",
    "parse_lsn",
    "plan_start",
    "snapshot_offset",
    "stream_offset",
]

# Offsets written without Sluiceway's event keys (another tool's) skip their whole transaction.
_WHOLE_TRANSACTION = 2**62


def format_lsn(lsn: int) -> str:
    """PostgreSQL's text form of an LSN: ``16/B374D848``."""
    return f"{lsn >> 32:X}/{lsn & 0xFFFFFFFF:X}"


def parse_lsn(text: str) -> int:
    high, _, low = text.partition("/")
    return (int(high, 16) << 32) | int(low, 16)


@dataclass(frozen=True, slots=True, order=True)
class StreamPosition:
    commit_lsn: int
    event: int
    part: int

    @classmethod
    def idle_at(cls, lsn: int) -> StreamPosition:
        """Everything that committed before ``lsn`` (a heartbeat's position)."""
        return cls(lsn, -1, -1)


def snapshot_offset(lsn: int, txid: int | None, ts_us: int, last: bool) -> dict[str, Any]:
    offset: dict[str, Any] = {"lsn": lsn, "ts_usec": ts_us, "snapshot": True, "last_snapshot_record": last}
    if txid is not None:
        offset["txId"] = txid
    return offset


def stream_offset(lsn: int, commit_lsn: int, txid: int, ts_us: int, event: int, part: int) -> dict[str, Any]:
    return {
        "lsn": lsn,
        "lsn_proc": lsn,
        "lsn_commit": commit_lsn,
        "txId": txid,
        "ts_usec": ts_us,
        "event": event,
        "event_part": part,
    }


def heartbeat_offset(lsn: int, ts_us: int) -> dict[str, Any]:
    return {"lsn": lsn, "lsn_proc": lsn, "lsn_commit": lsn, "ts_usec": ts_us, "event": -1, "event_part": -1}


def _int(offset: Mapping[str, Any], key: str) -> int | None:
    value = offset.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"offset key {key!r} is {value!r}, not an integer")
    return value


@dataclass(frozen=True, slots=True)
class StoredOffset:
    """What a stored offset says about the connector's progress."""

    snapshot_completed: bool  # streaming had begun, or the snapshot's last record was stored
    position: StreamPosition | None  # the last streamed record's position, if streaming had begun
    lsn: int | None

    @classmethod
    def parse(cls, offset: Mapping[str, Any] | None) -> StoredOffset | None:
        """None for no offset; ValueError for one that is not this connector's shape."""
        if not offset:
            return None
        lsn = _int(offset, "lsn")
        if offset.get("snapshot") is True:
            return cls(offset.get("last_snapshot_record") is True, None, lsn)
        commit = _int(offset, "lsn_commit")
        if commit is None:
            if lsn is None:
                raise ValueError(f"offset {dict(offset)} has neither lsn nor lsn_commit")
            return cls(True, StreamPosition.idle_at(lsn), lsn)
        event = _int(offset, "event")
        part = _int(offset, "event_part")
        if event is None:
            return cls(True, StreamPosition(commit, _WHOLE_TRANSACTION, 0), lsn)
        return cls(True, StreamPosition(commit, event, part or 0), lsn)


class SnapshotKind(enum.Enum):
    NONE = "none"
    EXPORTED = "exported"  # the snapshot the new slot exports: exactly where streaming begins
    OWN = "own"  # a snapshot of its own (no slot, or the slot keeps its position): may overlap the stream


class SlotState(enum.Enum):
    MISSING = "missing"
    USABLE = "usable"
    LOST = "lost"  # exists, but the server removed WAL it needs (pg_replication_slots.wal_status)


@dataclass(frozen=True, slots=True)
class StartPlan:
    snapshot: SnapshotKind
    drop_slot: bool = False
    create_slot: bool = False
    stream: bool = True
    resume: StreamPosition | None = None
    failure: str | None = None


def _slot_gone(slot: str, state: SlotState, stored: StoredOffset) -> str:
    where = "" if stored.lsn is None else f" (stored offsets reach LSN {format_lsn(stored.lsn)})"
    problem = (
        f'replication slot "{slot}" does not exist'
        if state is SlotState.MISSING
        else f'replication slot "{slot}" lost WAL it needed (wal_status=lost)'
    )
    return (
        f"{problem}, but the connector already captured changes from it{where}: the changes made since "
        "cannot be read any more. To start over with a new snapshot, stop the connector and delete its "
        "offsets (DELETE /connectors/<name>/offsets), or set snapshot.mode=when_needed; to go on without "
        "those changes, delete the offsets and set snapshot.mode=no_data"
        + (
            f", after dropping the slot (SELECT pg_drop_replication_slot('{slot}'))"
            if state is SlotState.LOST
            else ""
        )
    )


def plan_start(mode: SnapshotMode, stored: StoredOffset | None, slot: SlotState, slot_name: str) -> StartPlan:
    """What to do at start-up given ``snapshot.mode``, the stored offset and the slot.

    A snapshot that must line up with the stream is taken from a freshly created slot's
    exported snapshot: a slot left by an interrupted snapshot is dropped first (no change
    from it was ever delivered). ``always`` with a slot that has streamed keeps the slot
    and takes a snapshot of its own; streaming then resumes where it was, so the snapshot
    may show rows that the stream changes again (at least once, never a gap).
    """
    completed = stored is not None and stored.snapshot_completed
    resume = stored.position if stored is not None else None
    exists = slot is not SlotState.MISSING
    fresh = StartPlan(SnapshotKind.EXPORTED, drop_slot=exists, create_slot=True)
    if mode is SnapshotMode.INITIAL_ONLY:
        return StartPlan(SnapshotKind.NONE if completed else SnapshotKind.OWN, stream=False)
    if mode in (SnapshotMode.NO_DATA, SnapshotMode.NEVER):
        if slot is SlotState.USABLE:
            return StartPlan(SnapshotKind.NONE, resume=resume)
        if stored is not None and (completed or resume is not None):
            return StartPlan(SnapshotKind.NONE, failure=_slot_gone(slot_name, slot, stored))
        return StartPlan(SnapshotKind.NONE, drop_slot=exists, create_slot=True)
    if mode is SnapshotMode.ALWAYS:
        if completed and slot is SlotState.USABLE:
            return StartPlan(SnapshotKind.OWN, resume=resume)
        return fresh
    # initial, when_needed
    if not completed:
        return fresh
    if slot is SlotState.USABLE:
        return StartPlan(SnapshotKind.NONE, resume=resume)
    if mode is SnapshotMode.WHEN_NEEDED:
        return fresh
    assert stored is not None
    return StartPlan(SnapshotKind.NONE, failure=_slot_gone(slot_name, slot, stored))
