"""Idempotent producer bookkeeping per partition: epochs, sequences, duplicate detection.

Pure logic, no I/O. For each producer id a partition keeps its epoch and the
last five batches it appended (Kafka's ``max.in.flight.requests.per.connection``
limit for idempotence), so a retried batch is answered with its original offset
instead of being written twice.
"""

from __future__ import annotations

import enum
from collections import deque
from dataclasses import dataclass, field
from typing import Any

SEQ_MODULUS = 2**31
RETAINED_BATCHES = 5


class SeqCheck(enum.Enum):
    OK = "ok"
    DUPLICATE = "duplicate"
    OUT_OF_ORDER = "out_of_order"
    FENCED = "fenced"  # an older epoch than the partition has seen


@dataclass(slots=True)
class BatchRecord:
    first_seq: int
    last_seq: int
    base_offset: int
    last_offset: int
    timestamp: int


@dataclass(slots=True)
class ProducerEntry:
    epoch: int
    batches: deque[BatchRecord] = field(default_factory=lambda: deque(maxlen=RETAINED_BATCHES))
    last_timestamp: int = -1

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else -1


class ProducerStateTable:
    def __init__(self) -> None:
        self.producers: dict[int, ProducerEntry] = {}

    def check(
        self, pid: int, epoch: int, first_seq: int, last_seq: int
    ) -> tuple[SeqCheck, BatchRecord | None]:
        """Decide what to do with a batch before it is appended."""
        entry = self.producers.get(pid)
        if entry is None:
            # Unknown producer (new, or its state expired or predates a restart):
            # accept at any sequence, as Kafka does.
            return SeqCheck.OK, None
        if epoch < entry.epoch:
            return SeqCheck.FENCED, None
        if epoch > entry.epoch:
            return (SeqCheck.OK, None) if first_seq == 0 else (SeqCheck.OUT_OF_ORDER, None)
        for b in entry.batches:
            if b.first_seq == first_seq and b.last_seq == last_seq:
                return SeqCheck.DUPLICATE, b
        if not entry.batches or first_seq == (entry.last_seq + 1) % SEQ_MODULUS:
            return SeqCheck.OK, None
        return SeqCheck.OUT_OF_ORDER, None

    def record(
        self,
        pid: int,
        epoch: int,
        first_seq: int,
        last_seq: int,
        base_offset: int,
        last_offset: int,
        timestamp: int,
    ) -> None:
        entry = self.producers.get(pid)
        if entry is None or epoch != entry.epoch:
            entry = ProducerEntry(epoch)
            self.producers[pid] = entry
        entry.batches.append(BatchRecord(first_seq, last_seq, base_offset, last_offset, timestamp))
        entry.last_timestamp = max(entry.last_timestamp, timestamp)

    def expire(self, older_than_ms: int) -> int:
        """Forget producers idle since before ``older_than_ms``; returns how many."""
        gone = [pid for pid, e in self.producers.items() if e.last_timestamp < older_than_ms]
        for pid in gone:
            del self.producers[pid]
        return len(gone)

    def truncate(self, next_offset: int) -> None:
        """Forget batches at or after ``next_offset`` (the log was cut there)."""
        for pid in list(self.producers):
            entry = self.producers[pid]
            kept = deque((b for b in entry.batches if b.last_offset < next_offset), maxlen=RETAINED_BATCHES)
            if kept:
                entry.batches = kept
            else:
                del self.producers[pid]

    # -- snapshots -------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            str(pid): {
                "epoch": e.epoch,
                "ts": e.last_timestamp,
                "batches": [
                    [b.first_seq, b.last_seq, b.base_offset, b.last_offset, b.timestamp] for b in e.batches
                ],
            }
            for pid, e in self.producers.items()
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProducerStateTable:
        table = cls()
        for pid, e in data.items():
            entry = ProducerEntry(int(e["epoch"]), last_timestamp=int(e.get("ts", -1)))
            for b in e["batches"]:
                entry.batches.append(BatchRecord(*(int(x) for x in b)))
            table.producers[int(pid)] = entry
        return table
