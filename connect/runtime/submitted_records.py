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
from collections.abc import Mapping
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


@dataclass(frozen=True, slots=True)
class CommittableOffsets:
    offsets: dict[PartitionKey, tuple[Mapping[str, Any], Mapping[str, Any]]]  # key -> (partition, offset)
    records: int  # acknowledged records covered by these offsets
    pending: int  # submitted records still waiting for an acknowledgement

    def is_empty(self) -> bool:
        return not self.offsets


class SubmittedRecords:
    def __init__(self) -> None:
        self._queues: dict[PartitionKey | None, deque[SubmittedRecord]] = {}
        self._unacked = 0
        # The last partition's key, and a copy of the map it was made of: a task's records
        # mostly share one partition, and comparing two small dicts costs less than sorting
        # one into a key per record (benchmarks/jdbc_source.py, CDC).
        self._last: tuple[dict[str, Any], PartitionKey] | None = None

    def submit(
        self, source_partition: Mapping[str, Any] | None, source_offset: Mapping[str, Any] | None
    ) -> SubmittedRecord:
        key: PartitionKey | None = None
        if source_partition is not None:
            last = self._last
            if last is not None and last[0] == source_partition:
                key = last[1]
            else:
                key = partition_key(source_partition)
                self._last = (dict(source_partition), key)
        rec = SubmittedRecord(key, source_partition, source_offset, _owner=self)
        self._queues.setdefault(key, deque()).append(rec)
        self._unacked += 1
        return rec

    def committable(self) -> CommittableOffsets:
        """Remove and return what can be committed now."""
        offsets: dict[PartitionKey, tuple[Mapping[str, Any], Mapping[str, Any]]] = {}
        covered = 0
        for key, queue in list(self._queues.items()):
            last: SubmittedRecord | None = None
            while queue and queue[0].acked:
                rec = queue.popleft()
                covered += 1
                if rec.offset is not None:
                    last = rec
            if not queue:
                del self._queues[key]
            if (
                last is not None
                and key is not None
                and last.source_partition is not None
                and last.offset is not None
            ):
                offsets[key] = (last.source_partition, last.offset)
        return CommittableOffsets(offsets, covered, self._unacked)

    @property
    def pending(self) -> int:
        """Records submitted but not yet acknowledged."""
        return self._unacked

    def __len__(self) -> int:
        return sum(len(q) for q in self._queues.values())
