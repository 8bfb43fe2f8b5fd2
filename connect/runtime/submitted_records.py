"""Which source offsets may be committed: only those of records Kafka has acknowledged,
and never past an unacknowledged record of the same source partition.

Pure bookkeeping (Kafka's ``SubmittedRecords``): each source partition keeps its
submitted records in order; acknowledgements may arrive in any order; the
committable offset of a partition is that of the last record in the unbroken run of
acknowledged records at the head of its queue. Records without a source partition
(or offset) are tracked only so ``pending`` counts them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from connect.api.task import partition_key

PartitionKey = tuple[tuple[str, Any], ...]


@dataclass(slots=True, eq=False)
class SubmittedRecord:
    partition: PartitionKey | None
    source_partition: Mapping[str, Any] | None
    offset: Mapping[str, Any] | None
    acked: bool = False
    _owner: SubmittedRecords | None = field(default=None, repr=False)

    def ack(self) -> None:
        if not self.acked:
            self.acked = True
            if self._owner is not None:
                self._owner._unacked -= 1


class SubmittedRun:
    """The rows of a ``SourceRecordBatch`` (one source partition), submitted at once and
    acknowledged row by row (``ack(row)``); row ``i``'s offset is ``offsets[i]``. One entry
    instead of a ``SubmittedRecord`` per row (``benchmarks/mirror.py``)."""

    __slots__ = ("_owner", "acked", "done", "offsets", "partition", "source_partition")

    def __init__(
        self,
        partition: PartitionKey | None,
        source_partition: Mapping[str, Any] | None,
        offsets: Sequence[Mapping[str, Any] | None],
        owner: SubmittedRecords,
    ) -> None:
        self.partition = partition
        self.source_partition = source_partition
        self.offsets = offsets
        self.acked = bytearray(len(offsets))
        self.done = 0  # the leading rows committable() has taken
        self._owner = owner

    def ack(self, row: int) -> None:
        if not self.acked[row]:
            self.acked[row] = 1
            self._owner._unacked -= 1

    def ack_rows(self, rows: Sequence[int]) -> None:
        """``ack`` for each of ``rows``: a run of consecutive rows (acknowledgements mostly
        come in send order) in one slice assignment."""
        if not rows:
            return
        acked, first, n = self.acked, rows[0], len(rows)
        if rows[-1] - first == n - 1 and list(rows) == list(range(first, first + n)):
            end = first + n
            self._owner._unacked -= n - acked.count(1, first, end)
            acked[first:end] = b"\x01" * n
        else:
            for row in rows:
                self.ack(row)


@dataclass(frozen=True, slots=True)
class CommittableOffsets:
    offsets: dict[PartitionKey, tuple[Mapping[str, Any], Mapping[str, Any]]]  # key -> (partition, offset)
    records: int  # acknowledged records covered by these offsets
    pending: int  # submitted records still waiting for an acknowledgement

    def is_empty(self) -> bool:
        return not self.offsets


class SubmittedRecords:
    def __init__(self) -> None:
        self._queues: dict[PartitionKey | None, deque[SubmittedRecord | SubmittedRun]] = {}
        self._unacked = 0
        # The last partition's key, and a copy of the map it was made of: a task's records
        # mostly share one partition, and comparing two small dicts costs less than sorting
        # one into a key per record (benchmarks/jdbc_source.py, CDC).
        self._last: tuple[dict[str, Any], PartitionKey] | None = None
        # The map ``_last`` was last found equal to, by identity. A task that changes a map
        # in place after returning it would fool this, as it would fool the offsets kept.
        self._last_seen: Mapping[str, Any] | None = None

    def submit(
        self, source_partition: Mapping[str, Any] | None, source_offset: Mapping[str, Any] | None
    ) -> SubmittedRecord:
        # Called per record with per-record acks: identity first (a task's records mostly
        # share one partition map), then equality, positional arguments, no deque made
        # unless one is missing (benchmarks/mirror.py).
        key: PartitionKey | None = None
        if source_partition is not None:
            last = self._last
            if last is not None and (source_partition is self._last_seen or last[0] == source_partition):
                key = last[1]
            else:
                key = partition_key(source_partition)
                self._last = (dict(source_partition), key)
            self._last_seen = source_partition
        rec = SubmittedRecord(key, source_partition, source_offset, False, self)
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues[key] = deque()
        queue.append(rec)
        self._unacked += 1
        return rec

    def submit_run(
        self, source_partition: Mapping[str, Any] | None, offsets: Sequence[Mapping[str, Any] | None]
    ) -> SubmittedRun:
        """Rows of one source partition, in order, to be acknowledged row by row; each is
        pending until acknowledged (rows never sent stay pending)."""
        key = None if source_partition is None else partition_key(source_partition)
        run = SubmittedRun(key, source_partition, offsets, self)
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues[key] = deque()
        queue.append(run)
        self._unacked += len(offsets)
        return run

    def committable(self) -> CommittableOffsets:
        """Remove and return what can be committed now."""
        offsets: dict[PartitionKey, tuple[Mapping[str, Any], Mapping[str, Any]]] = {}
        covered = 0
        for key, queue in list(self._queues.items()):
            last: tuple[Mapping[str, Any] | None, Mapping[str, Any]] | None = None
            while queue:
                head = queue[0]
                if isinstance(head, SubmittedRun):
                    start, acked = head.done, head.acked
                    end = acked.find(0, start)  # the first row not acknowledged
                    if end == -1:
                        end = len(acked)
                    covered += end - start
                    for row in range(end - 1, start - 1, -1):
                        offset = head.offsets[row]
                        if offset is not None:
                            last = (head.source_partition, offset)
                            break
                    head.done = end
                    if end < len(acked):
                        break
                elif not head.acked:
                    break
                else:
                    covered += 1
                    if head.offset is not None:
                        last = (head.source_partition, head.offset)
                queue.popleft()
            if not queue:
                del self._queues[key]
            if last is not None and key is not None and last[0] is not None:
                offsets[key] = (last[0], last[1])
        return CommittableOffsets(offsets, covered, self._unacked)

    @property
    def pending(self) -> int:
        """Records submitted but not yet acknowledged."""
        return self._unacked

    def __len__(self) -> int:
        return sum(len(q) for q in self._queues.values())
