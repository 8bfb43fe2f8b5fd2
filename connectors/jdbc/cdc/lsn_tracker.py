"""Which LSN the replication slot may confirm: the end of the last transaction Kafka has all of.

The slot's confirmed flush LSN is a promise to the server: "never send me anything that
committed before this again". It may only move past a transaction once the broker has
acknowledged every record made from it, and from everything before it, or a crash would
lose those records for good.

The worker tells the task that much without a call per record: it writes a source offset
only once Kafka acknowledged that record and every record sent before it, and calls
``SourceTask.commit`` after writing. So the offset the task reads back in ``commit`` says
how far Kafka has everything (Debezium confirms the slot in ``commit`` too). This tracker
keeps the emitted work as an ordered queue of *units*, each with the LSN it makes safe to
confirm and the offset of its newest record:

- a streamed transaction: its records, and its end LSN once its Commit was read (a
  transaction with no records for us is a unit with none, confirmable once every unit
  before it is);
- the snapshot: its records, and no LSN (the slot already stands at the snapshot's
  consistent point), so later transactions wait for the snapshot to be stored;
- a heartbeat: one record and the position reached while idle.

``committed`` takes the stored offset; ``confirmable`` pops, from the front, every closed
unit whose newest record is at or before the newest stored offset in the order records
are emitted (``order_key``), and every closed unit without records; the highest LSN
among them may be confirmed. No I/O, no clock: the task feeds it and sends the
result to the server.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any

from connectors.jdbc.cdc.offsets import StoredOffset

__all__ = ["CommitTracker", "Unit", "order_key"]

OrderKey = tuple[int, int, int, int]


def order_key(offset: Mapping[str, Any]) -> OrderKey:
    """Where a record with this source offset stands in the order the task emits records:
    the snapshot's records (all but the last share one key), then streamed records and
    heartbeats by position. ``ValueError`` for an offset that is not this connector's."""
    stored = StoredOffset.parse(offset)
    if stored is None:
        raise ValueError("an empty source offset")
    if stored.position is None:
        return (0, 1 if stored.snapshot_completed else 0, 0, 0)
    p = stored.position
    return (1, p.commit_lsn, p.event, p.part)


class Unit:
    """A group of records that becomes confirmable as a whole."""

    __slots__ = ("closed", "last", "lsn")

    def __init__(self) -> None:
        self.closed = False
        self.lsn: int | None = None
        self.last: Mapping[str, Any] | None = None  # the source offset of its newest record

    def __repr__(self) -> str:
        return f"Unit(lsn={self.lsn}, last={self.last}, closed={self.closed})"


class CommitTracker:
    def __init__(self) -> None:
        self._units: deque[Unit] = deque()
        self._confirmed: int | None = None
        self._reached: OrderKey | None = None  # the newest stored offset's key

    def open(self) -> Unit:
        """Start a unit; its records are confirmed together, after every earlier unit."""
        unit = Unit()
        self._units.append(unit)
        return unit

    def emitted(self, unit: Unit, offset: Mapping[str, Any] | None) -> None:
        """``unit``'s newest record (so far) has this source offset (None: a record without
        one, which the worker stores nothing for, changes nothing)."""
        if unit.closed:
            raise ValueError("cannot add records to a closed unit")
        if offset is not None:
            unit.last = offset

    def close(self, unit: Unit, lsn: int | None) -> None:
        """No more records for ``unit``; once they are stored, ``lsn`` (if any) may be confirmed."""
        unit.closed = True
        unit.lsn = lsn

    def committed(self, offset: Mapping[str, Any] | None) -> int | None:
        """The worker stored ``offset`` (Kafka has that record and every one before it): the
        highest LSN that may be confirmed now (never lower than an earlier answer)."""
        if offset:
            reached = order_key(offset)
            if self._reached is None or reached > self._reached:
                self._reached = reached
        return self.confirmable()

    def confirmable(self) -> int | None:
        """The highest LSN that may be confirmed with what was stored so far: units closed
        since the last ``committed`` (a transaction's Commit read after its records were
        stored, transactions without records for us) count too."""
        units, reached = self._units, self._reached
        while units and units[0].closed:
            last = units[0].last
            if last is not None and (reached is None or order_key(last) > reached):
                break
            lsn = units.popleft().lsn
            if lsn is not None and (self._confirmed is None or lsn > self._confirmed):
                self._confirmed = lsn
        return self._confirmed

    def __len__(self) -> int:
        return len(self._units)
