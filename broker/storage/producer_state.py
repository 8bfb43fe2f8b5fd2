"""Producer bookkeeping per partition: epochs, sequences, duplicate detection, transactions.

Pure logic, no I/O. For each producer id a partition keeps its epoch and the
last five batches it appended (Kafka's ``max.in.flight.requests.per.connection``
limit for idempotence), so a retried batch is answered with its original offset
instead of being written twice.

Transactions (Kafka's ``ProducerStateEntry``/``ProducerAppendInfo``): a producer's first
transactional batch opens its transaction at that batch's base offset; the COMMIT or
ABORT marker the coordinator writes closes it. ``open_txns`` holds every open
transaction's first offset in offset order (transactions open in log order and a dict
keeps insertion order), so the oldest, which bounds the last stable offset, is its first
item. A marker also carries the coordinator's epoch, which only grows: a marker from an
older coordinator is a zombie's.
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


class MarkerCheck(enum.Enum):
    OK = "ok"
    FENCED = "fenced"  # the producer epoch is older than the partition has seen
    COORDINATOR_FENCED = "coordinator_fenced"  # the coordinator epoch is older


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
    coordinator_epoch: int = -1
    txn_first_offset: int = -1  # first offset of the open transaction; -1 when none is open
    last_offset: int = -1  # offset of the producer's last batch or marker here

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else -1

    def set_epoch(self, epoch: int) -> None:
        """A new epoch restarts the sequence; an open transaction stays open (Kafka's
        ``maybeUpdateProducerEpoch``): only its marker closes it."""
        if epoch != self.epoch:
            self.epoch = epoch
            self.batches.clear()


@dataclass(frozen=True, slots=True)
class ProducerStateView:
    """One producer as DescribeProducers shows it."""

    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp: int
    coordinator_epoch: int
    current_txn_start_offset: int  # -1 when no transaction is open


class ProducerStateTable:
    def __init__(self) -> None:
        self.producers: dict[int, ProducerEntry] = {}
        self.open_txns: dict[int, int] = {}  # pid -> first offset, oldest first

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

    def is_fenced(self, pid: int, epoch: int) -> bool:
        """An older epoch than the partition has seen (batches without sequences: the group
        coordinator's transactional offset commits)."""
        entry = self.producers.get(pid)
        return entry is not None and epoch < entry.epoch

    def record(
        self,
        pid: int,
        epoch: int,
        first_seq: int,
        last_seq: int,
        base_offset: int,
        last_offset: int,
        timestamp: int,
        transactional: bool = False,
    ) -> None:
        """An appended batch. One without a sequence (``first_seq`` -1) updates the epoch and
        the transaction but has nothing to deduplicate."""
        entry = self.producers.get(pid)
        if entry is None:
            entry = self.producers[pid] = ProducerEntry(epoch)
        else:
            entry.set_epoch(epoch)
        if first_seq >= 0:
            entry.batches.append(BatchRecord(first_seq, last_seq, base_offset, last_offset, timestamp))
        entry.last_timestamp = max(entry.last_timestamp, timestamp)
        entry.last_offset = last_offset
        if transactional and entry.txn_first_offset < 0:
            entry.txn_first_offset = base_offset
            self.open_txns[pid] = base_offset

    def check_marker(self, pid: int, epoch: int, coordinator_epoch: int) -> MarkerCheck:
        entry = self.producers.get(pid)
        if entry is None:
            return MarkerCheck.OK
        if epoch < entry.epoch:
            return MarkerCheck.FENCED
        if coordinator_epoch < entry.coordinator_epoch:
            return MarkerCheck.COORDINATOR_FENCED
        return MarkerCheck.OK

    def end_txn(self, pid: int, epoch: int, coordinator_epoch: int, offset: int, timestamp: int) -> int:
        """A COMMIT or ABORT marker at ``offset``: closes the producer's transaction and
        returns its first offset, or -1 when none was open (Kafka then records no completed
        transaction: nothing to index, the last stable offset does not move)."""
        entry = self.producers.get(pid)
        if entry is None:
            entry = self.producers[pid] = ProducerEntry(epoch)
        else:
            entry.set_epoch(epoch)
        entry.coordinator_epoch = coordinator_epoch
        entry.last_timestamp = max(entry.last_timestamp, timestamp)
        entry.last_offset = offset
        first = entry.txn_first_offset
        if first >= 0:
            entry.txn_first_offset = -1
            del self.open_txns[pid]
        return first

    def first_unstable_offset(self) -> int:
        """First offset of the oldest open transaction, -1 when none is open."""
        for first in self.open_txns.values():
            return first
        return -1

    def views(self) -> list[ProducerStateView]:
        return [
            ProducerStateView(
                pid, e.epoch, e.last_seq, e.last_timestamp, e.coordinator_epoch, e.txn_first_offset
            )
            for pid, e in self.producers.items()
        ]

    def expire(self, older_than_ms: int) -> int:
        """Forget producers idle since before ``older_than_ms``; returns how many. A producer
        with an open transaction stays, however long idle (Kafka's ``isProducerExpired``):
        its transaction still bounds the last stable offset until its marker arrives."""
        gone = [
            pid
            for pid, e in self.producers.items()
            if e.last_timestamp < older_than_ms and e.txn_first_offset < 0
        ]
        for pid in gone:
            del self.producers[pid]
        return len(gone)

    def truncate(self, next_offset: int) -> None:
        """Forget batches, markers and transactions at or after ``next_offset`` (the log
        was cut there)."""
        for pid in list(self.producers):
            entry = self.producers[pid]
            kept = deque((b for b in entry.batches if b.last_offset < next_offset), maxlen=RETAINED_BATCHES)
            cut_all = bool(entry.batches) and not kept
            entry.batches = kept
            if entry.txn_first_offset >= next_offset:
                entry.txn_first_offset = -1
                self.open_txns.pop(pid, None)
            if not kept and entry.txn_first_offset < 0 and (cut_all or entry.last_offset >= next_offset):
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
                "coordinator_epoch": e.coordinator_epoch,
                "txn_first_offset": e.txn_first_offset,
                "last_offset": e.last_offset,
            }
            for pid, e in self.producers.items()
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProducerStateTable:
        """A table from ``to_json``; snapshots written before transactions lack their keys."""
        table = cls()
        for pid, e in data.items():
            entry = ProducerEntry(
                int(e["epoch"]),
                last_timestamp=int(e.get("ts", -1)),
                coordinator_epoch=int(e.get("coordinator_epoch", -1)),
                txn_first_offset=int(e.get("txn_first_offset", -1)),
                last_offset=int(e.get("last_offset", -1)),
            )
            for b in e["batches"]:
                entry.batches.append(BatchRecord(*(int(x) for x in b)))
            table.producers[int(pid)] = entry
        opened = sorted(
            (e.txn_first_offset, pid) for pid, e in table.producers.items() if e.txn_first_offset >= 0
        )
        table.open_txns = {pid: first for first, pid in opened}
        return table
