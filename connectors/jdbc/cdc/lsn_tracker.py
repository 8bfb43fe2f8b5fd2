"""Which LSN the replication slot may confirm: the end of the last transaction Kafka has all of.

The slot's confirmed flush LSN is a promise to the server: "never send me anything that
committed before this again". It may only move past a transaction once the broker has
acknowledged every record made from it, and from everything before it, or a crash would
lose those records for good. This tracker keeps the emitted work as an ordered queue of
*units*, each with the LSN it makes safe to confirm:

- a streamed transaction: its records, and its end LSN once its Commit was read (a
  transaction with no records for us is a unit with none, confirmable at once);
- the snapshot: its records, and no LSN (the slot already stands at the snapshot's
  consistent point), so later transactions wait for the snapshot to be acknowledged;
- a heartbeat: one record and the position reached while idle.

``ack`` is called for each acknowledged record (``SourceTask.commit_record``, in any
order); ``confirmable`` walks the queue from the front and returns the highest LSN whose
unit and every unit before it are closed and fully acknowledged. No I/O, no clock: the
task feeds it and sends the result to the server.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable

__all__ = ["AckTracker", "Unit"]


class Unit:
    """A group of records that becomes confirmable as a whole."""

    __slots__ = ("closed", "lsn", "outstanding")

    def __init__(self) -> None:
        self.outstanding = 0
        self.closed = False
        self.lsn: int | None = None

    def __repr__(self) -> str:
        return f"Unit(lsn={self.lsn}, outstanding={self.outstanding}, closed={self.closed})"


class AckTracker:
    def __init__(self) -> None:
        self._units: deque[Unit] = deque()
        self._records: dict[Hashable, Unit] = {}
        self._confirmed: int | None = None

    def open(self) -> Unit:
        """Start a unit; records added to it are confirmed together, after every earlier unit."""
        unit = Unit()
        self._units.append(unit)
        return unit

    def add(self, unit: Unit, record: Hashable) -> None:
        """``record`` (any hashable token, unique while pending) belongs to ``unit``."""
        if unit.closed:
            raise ValueError("cannot add records to a closed unit")
        if record in self._records:
            raise ValueError(f"record {record!r} is already pending")
        unit.outstanding += 1
        self._records[record] = unit

    def close(self, unit: Unit, lsn: int | None) -> None:
        """No more records for ``unit``; once they are acknowledged, ``lsn`` (if any) may be confirmed."""
        unit.closed = True
        unit.lsn = lsn

    def ack(self, record: Hashable) -> bool:
        """``record`` reached the broker (or was dropped on purpose); False if it was not pending."""
        unit = self._records.pop(record, None)
        if unit is None:
            return False
        unit.outstanding -= 1
        return True

    def confirmable(self) -> int | None:
        """The highest LSN that may be confirmed now (never lower than an earlier answer)."""
        units = self._units
        while units and units[0].closed and units[0].outstanding == 0:
            lsn = units.popleft().lsn
            if lsn is not None and (self._confirmed is None or lsn > self._confirmed):
                self._confirmed = lsn
        return self._confirmed

    @property
    def pending(self) -> int:
        """Records handed out and not acknowledged yet."""
        return len(self._records)

    def __len__(self) -> int:
        return len(self._units)
