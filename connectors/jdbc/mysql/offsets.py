"""Source offsets in Debezium's MySQL shape, binlog positions, and what to do at start-up.

The source partition is ``{"server": <topic.prefix>}``. Offsets:

- snapshot records: ``{"file", "pos", "gtids"?, "ts_sec", "server_id", "snapshot": true}``
  at the binlog position read under the snapshot's lock; the snapshot's last record also
  has ``"snapshot_completed": true``;
- streamed records: ``{"file", "pos", "gtids"?, "event", "row", "ts_sec", "server_id"}``
  where ``file``/``pos`` is the start of the record's *transaction* (its GTID or BEGIN
  event), ``event`` the number of rows events of that transaction already delivered, and
  ``row`` the rows of the next one already delivered (Debezium's meaning). Resuming
  re-reads the transaction from its start (python-mysql-replication cannot decode rows
  events read without their table map events) and skips what was delivered: nothing is
  lost, nothing delivered is repeated;
- heartbeats and positions between transactions: ``event`` and ``row`` 0 at the start of
  the next transaction.

``gtids`` is the GTID set executed up to there (MySQL ``uuid:1-n,...``; MariaDB
``domain-server-seq,...``, one per domain).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from connectors.jdbc.mysql.config import SnapshotMode

__all__ = ["BinlogPosition", "SnapshotKind", "StartPlan", "StoredOffset", "plan_start", "snapshot_offset"]


@dataclass(frozen=True, slots=True)
class BinlogPosition:
    """Where to resume: a transaction boundary in a binlog file and what to skip after it."""

    file: str
    pos: int
    event: int = 0
    row: int = 0
    gtids: str | None = None

    def describe(self) -> str:
        skip = f" (skipping {self.event} rows events and {self.row} rows)" if self.event or self.row else ""
        return f"{self.file}:{self.pos}{skip}"


def snapshot_offset(
    file: str, pos: int, gtids: str | None, ts_sec: int, server_id: int, completed: bool
) -> dict[str, Any]:
    offset: dict[str, Any] = {
        "file": file,
        "pos": pos,
        "ts_sec": ts_sec,
        "server_id": server_id,
        "snapshot": True,
    }
    if gtids:
        offset["gtids"] = gtids
    if completed:
        offset["snapshot_completed"] = True
    return offset


def stream_offset(
    file: str, pos: int, gtids: str | None, event: int, row: int, ts_sec: int, server_id: int
) -> dict[str, Any]:
    offset: dict[str, Any] = {
        "file": file,
        "pos": pos,
        "event": event,
        "row": row,
        "ts_sec": ts_sec,
        "server_id": server_id,
    }
    if gtids:
        offset["gtids"] = gtids
    return offset


def _int(offset: Mapping[str, Any], key: str, default: int | None = None) -> int:
    value = offset.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"offset key {key!r} is {value!r}, not an integer")
    return value


@dataclass(frozen=True, slots=True)
class StoredOffset:
    """What a stored offset says about the connector's progress."""

    snapshot_completed: bool
    position: BinlogPosition

    @classmethod
    def parse(cls, offset: Mapping[str, Any] | None) -> StoredOffset | None:
        """None for no offset; ValueError for one that is not this connector's shape."""
        if not offset:
            return None
        file = offset.get("file")
        if not isinstance(file, str) or not file:
            raise ValueError(f"offset {dict(offset)} has no binlog file")
        gtids = offset.get("gtids")
        position = BinlogPosition(
            file,
            _int(offset, "pos"),
            _int(offset, "event", 0),
            _int(offset, "row", 0),
            gtids if isinstance(gtids, str) and gtids else None,
        )
        in_snapshot = offset.get("snapshot") is True and offset.get("snapshot_completed") is not True
        if in_snapshot:
            return cls(False, BinlogPosition(file, position.pos, 0, 0, position.gtids))
        return cls(True, position)


class SnapshotKind(enum.Enum):
    NONE = "none"
    DATA = "data"  # schemas and rows
    SCHEMA = "schema"  # schemas only (no_data, recovery)


@dataclass(frozen=True, slots=True)
class StartPlan:
    snapshot: SnapshotKind
    stream: bool = True
    resume: BinlogPosition | None = None  # None: from the snapshot's position (or the oldest binlog)
    from_oldest: bool = False  # snapshot.mode=never without offsets: the whole binlog
    recover_history: bool = False  # rebuild the schemas from the schema history topic
    failure: str | None = None


def _purged(stored: StoredOffset) -> str:
    return (
        f"the binlog position the connector stopped at ({stored.position.describe()}) is no longer available "
        "on the server (the binlog file was purged, binlog_expire_logs_seconds / expire_logs_days): the "
        "changes made since are lost to the connector. Set snapshot.mode=when_needed to take a new snapshot "
        "automatically, or delete the connector's offsets (DELETE /connectors/<name>/offsets) to start over; "
        "keep binlogs longer than the connector may be down"
    )


def _history_lost(topic: str) -> str:
    return (
        f"the schema history topic {topic!r} is missing or empty, but the connector has offsets: it cannot "
        "know the table schemas at the stored binlog position. Set snapshot.mode=recovery to rebuild the "
        "history from the current schemas (only safe if no DDL ran since), or when_needed to take a new "
        "snapshot"
    )


def plan_start(
    mode: SnapshotMode,
    stored: StoredOffset | None,
    binlog_available: bool,
    history_exists: bool,
    history_topic: str,
) -> StartPlan:
    """What to do at start-up given ``snapshot.mode`` (the effective one), the stored offset,
    whether the stored binlog position still exists and whether the schema history does."""
    fresh = StartPlan(SnapshotKind.DATA, stream=mode is not SnapshotMode.INITIAL_ONLY)
    if stored is None or not stored.snapshot_completed:
        if mode is SnapshotMode.NEVER:
            return StartPlan(SnapshotKind.NONE, from_oldest=True)
        if mode in (SnapshotMode.NO_DATA, SnapshotMode.RECOVERY):
            return StartPlan(SnapshotKind.SCHEMA)
        return fresh
    if mode is SnapshotMode.INITIAL_ONLY:
        return StartPlan(SnapshotKind.NONE, stream=False)
    if not binlog_available:
        if mode is SnapshotMode.WHEN_NEEDED:
            return fresh
        return StartPlan(SnapshotKind.NONE, failure=_purged(stored))
    if mode is SnapshotMode.RECOVERY:
        return StartPlan(SnapshotKind.SCHEMA, resume=stored.position)
    if not history_exists:
        if mode is SnapshotMode.WHEN_NEEDED:
            return fresh
        return StartPlan(SnapshotKind.NONE, failure=_history_lost(history_topic))
    return StartPlan(SnapshotKind.NONE, resume=stored.position, recover_history=True)
