"""When MirrorSourceTask writes an offset sync: Kafka's ``OffsetSyncWriter`` decisions,
without the producer.

Each record the target acknowledges pairs its upstream offset with the downstream offset
it landed at. A sync is sent at once when the pair could not be derived from the last
one sent: the first record of this task's life, a gap in upstream offsets (compaction,
transaction markers, a restart elsewhere), downstream offsets going backwards (the
target topic was truncated or recreated), or downstream having moved ``offset.lag.max``
or more past what the last sync lets the checkpoint connector translate to (its
translation goes at most one offset past a sync). Otherwise the newest pair of each
partition waits for the task's next ``commit()``, so an idle partition still ends with an
exact sync while a busy one writes about one sync per ``offset.lag.max`` records.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from connectors.mirror.formats import OffsetSync


@dataclass(slots=True)
class _PartitionState:
    """Kafka's ``OffsetSyncWriter.PartitionState``."""

    max_lag: int
    previous_upstream: int = -1
    previous_downstream: int = -1
    last_sync_downstream: int = -1

    def update(self, upstream: int, downstream: int) -> bool:
        """Record an acknowledged pair; True when it must be synced now."""
        now = (
            self.last_sync_downstream == -1
            # translate_downstream answers at most one past a sync, hence the + 1
            or downstream - (self.last_sync_downstream + 1) >= self.max_lag
            or upstream - self.previous_upstream != 1
            or downstream < self.previous_downstream
        )
        if now:
            self.last_sync_downstream = downstream
        self.previous_upstream = upstream
        self.previous_downstream = downstream
        return now


class OffsetSyncTracker:
    """Per-partition state of one source task; ``max_lag`` is ``offset.lag.max``."""

    def __init__(self, max_lag: int) -> None:
        self.max_lag = max_lag
        self._states: dict[tuple[str, int], _PartitionState] = {}
        # Insertion-ordered, one per partition: the newest delayed (upstream, downstream)
        # pair replaces the older. Pairs, not OffsetSyncs: almost every acknowledgement is
        # superseded before commit(), and making a frozen dataclass for each cost half of
        # this method's time (benchmarks/mirror.py).
        self._delayed: dict[tuple[str, int], tuple[int, int]] = {}

    def acked(self, topic: str, partition: int, upstream: int, downstream: int) -> OffsetSync | None:
        """The target acknowledged upstream offset ``upstream`` of ``topic``/``partition``
        at ``downstream``: the sync to send now, or None when it waits for ``delayed()``."""
        key = (topic, partition)
        state = self._states.get(key)
        if state is None:
            state = self._states[key] = _PartitionState(self.max_lag)
        if state.update(upstream, downstream):
            # The immediate sync supersedes an older delayed one of the same partition.
            self._delayed.pop(key, None)
            return OffsetSync(topic, partition, upstream, downstream)
        self._delayed[key] = (upstream, downstream)
        return None

    def acked_many(
        self, topic: str, partition: int, upstreams: Sequence[int], downstreams: Sequence[int]
    ) -> list[OffsetSync]:
        """``acked`` for each pair in order (``upstreams[i]`` landed at ``downstreams[i]``):
        the syncs to send now, in the order ``acked`` would have answered them, and the
        same delayed pair and state afterwards.

        A run with consecutive offsets on both sides (a copy of a partition into one
        partition nobody else writes, the usual case) is decided without a step per
        record: past its first pair only the lag rule can fire, every ``offset.lag.max``
        + 1 downstream offsets (``benchmarks/mirror.py``: deciding record by record was
        about a sixth of the task's time). Anything else goes pair by pair."""
        n = len(upstreams)
        if len(downstreams) != n:
            raise ValueError(f"{n} upstream offsets for {len(downstreams)} downstream offsets")
        if not n:
            return []
        key = (topic, partition)
        state = self._states.get(key)
        if state is None:
            state = self._states[key] = _PartitionState(self.max_lag)
        out: list[OffsetSync] = []
        u0, d0 = upstreams[0], downstreams[0]
        synced = state.update(u0, d0)
        if synced:
            out.append(OffsetSync(topic, partition, u0, d0))
        if n > 1:
            u1, d1 = upstreams[-1], downstreams[-1]
            if (
                u1 - u0 == n - 1
                and d1 - d0 == n - 1
                and list(upstreams) == list(range(u0, u1 + 1))
                and list(downstreams) == list(range(d0, d1 + 1))
            ):
                # Past the first pair upstream moves by one and downstream goes forwards:
                # a pair is synced iff downstream >= last synced + 1 + max_lag.
                last = state.last_sync_downstream
                d = max(last + 1 + self.max_lag, d0 + 1)
                synced = False
                while d <= d1:
                    out.append(OffsetSync(topic, partition, u0 + (d - d0), d))
                    last = d
                    synced = d == d1
                    d = max(last + 1 + self.max_lag, d + 1)
                state.last_sync_downstream = last
                state.previous_upstream, state.previous_downstream = u1, d1
            else:
                update = state.update
                for i in range(1, n):
                    u, d = upstreams[i], downstreams[i]
                    synced = update(u, d)
                    if synced:
                        out.append(OffsetSync(topic, partition, u, d))
        # As acked() record by record: an immediate sync drops the delayed pair, a delayed
        # pair replaces it.
        if synced:
            self._delayed.pop(key, None)
        else:
            self._delayed[key] = (upstreams[-1], downstreams[-1])
        return out

    def delayed(self) -> list[OffsetSync]:
        """The delayed syncs (the newest per partition) to send at ``commit()``; clears them."""
        out = [OffsetSync(t, p, u, d) for (t, p), (u, d) in self._delayed.items()]
        self._delayed.clear()
        return out

    def forget(self, topic: str, partition: int) -> None:
        """Drop a partition the task no longer replicates (its next record is a first again)."""
        self._states.pop((topic, partition), None)
        self._delayed.pop((topic, partition), None)
