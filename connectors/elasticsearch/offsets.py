"""Which consumer offsets are safe to commit while bulk requests complete out of order.

Records of a partition are added in offset order; each is marked done when
Elasticsearch has acknowledged it (or it was skipped, or handed to the dead letter
queue). A partition may commit up to its first record not done yet: a crash then
redelivers only what Elasticsearch may not have, and document ids make that
redelivery harmless. Pure and not thread-safe: the task holds a lock around it.
"""

from __future__ import annotations

from collections import deque

from connect.api import TopicPartition


class Pending:
    """One tracked record: its offset and whether it is done."""

    __slots__ = ("done", "offset")

    def __init__(self, offset: int) -> None:
        self.offset = offset
        self.done = False


class OffsetTracker:
    def __init__(self) -> None:
        self._partitions: dict[TopicPartition, deque[Pending]] = {}
        self._unacked = 0

    def add(self, tp: TopicPartition, offset: int) -> Pending:
        """Track a record (offsets of a partition must arrive in increasing order)."""
        queue = self._partitions.get(tp)
        if queue is None:
            queue = self._partitions[tp] = deque()
        elif queue and queue[-1].offset >= offset:
            raise ValueError(f"{tp}: offset {offset} added after {queue[-1].offset}")
        entry = Pending(offset)
        queue.append(entry)
        self._unacked += 1
        return entry

    def done(self, entry: Pending) -> None:
        if not entry.done:
            entry.done = True
            self._unacked -= 1

    @property
    def unacked(self) -> int:
        """Records added and not done yet, over every partition."""
        return self._unacked

    def committable(self, current: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        """Offsets to commit (next offset to read) of the partitions in ``current``.

        ``current`` holds the next offset after everything handed to the task: a partition
        with nothing outstanding commits that far (records a transformation dropped never
        reached the tracker, yet must not hold the commit back); otherwise it commits up to
        its first outstanding record.
        """
        out = {}
        for tp, next_offset in current.items():
            queue = self._partitions.get(tp)
            while queue and queue[0].done:
                queue.popleft()
            out[tp] = queue[0].offset if queue else next_offset
        return out

    def close(self, partitions: list[TopicPartition]) -> None:
        """Forget partitions this task no longer owns (their new owner starts from the commit)."""
        for tp in partitions:
            # Requests still in flight may acknowledge these later: done() is then a no-op.
            for entry in self._partitions.pop(tp, ()):
                self.done(entry)
