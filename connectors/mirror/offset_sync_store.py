"""The offset syncs the checkpoint connector translates with: Kafka's ``OffsetSyncStore``
without the consumer.

Per upstream partition the store keeps 64 syncs (one per bit of an offset), newest first,
exponentially thinned: slot ``i`` is never much older than ``2**i`` upstream offsets
behind the newest (invariant B) and slots are spread at least ``2**max(i-2, 0)`` apart
(invariant C), so recent consumer groups translate precisely and old ones still
translate, less precisely. The newest sync is always in slot 0 and the oldest one since
the last reset in slot 63. An upstream offset going backwards (the source topic was
recreated, or a task restarted from an earlier offset) invalidates everything and resets
the slots.

``translate_downstream`` picks the newest sync at or below the group's upstream offset
and answers its downstream offset, plus one when the group is past it: records after a
sync land after it downstream, but how many of the upstream offsets in between were
replicated is unknown, so it never guesses further. A group therefore re-reads at most
the records between that sync and its offset, and never skips one.

Syncs are compared by identity, as Kafka's store compares references: two syncs written
for the same offsets are still two syncs.
"""

from __future__ import annotations

import logging
from typing import Final

from connectors.mirror.formats import OffsetSync

SYNCS_PER_PARTITION: Final = 64

log = logging.getLogger(__name__)


def _long(value: int) -> int:
    """``value`` wrapped to a Java long, as Kafka's arithmetic on offsets overflows."""
    return (value + 2**63) % 2**64 - 2**63


def _invariant_b(i_sync: OffsetSync, j_sync: OffsetSync, i: int, j: int) -> bool:
    """The sync at slot ``j`` is recent enough to follow the one at slot ``i``."""
    bound = _long(j_sync.upstream_offset + _long(1 << j) - _long(1 << i))
    return i_sync is j_sync or bound < 0 or i_sync.upstream_offset <= bound


def _invariant_c(i_sync: OffsetSync, j_sync: OffsetSync, i: int) -> bool:
    """The sync at slot ``i`` is far enough ahead of the next one."""
    bound = _long(j_sync.upstream_offset + (1 << max(i - 2, 0)))
    return i_sync is j_sync or (bound >= 0 and i_sync.upstream_offset >= bound)


class OffsetSyncStore:
    """Syncs by upstream ``(topic, partition)``. ``must_read_to_end`` (Kafka's
    ``initializationMustReadToEnd``, True unless the checkpoints were loaded): until
    ``read_to_end_done()``, each sync replaces all earlier ones of its partition, so that
    the first translations after a start are never older than the checkpoints already
    emitted from the full history."""

    def __init__(self, must_read_to_end: bool = True) -> None:
        self.must_read_to_end = must_read_to_end
        self.read_to_end = False
        self._syncs: dict[tuple[str, int], list[OffsetSync]] = {}

    def add(self, sync: OffsetSync) -> None:
        key = (sync.topic, sync.partition)
        syncs = self._syncs.get(key)
        if syncs is None:
            self._syncs[key] = [sync] * SYNCS_PER_PARTITION
            return
        updated = list(syncs)  # readers of the old list never see a half-made update
        self._update(updated, syncs, sync)
        self._syncs[key] = updated

    def read_to_end_done(self) -> None:
        """The offset-syncs topic was read to its end once: translations may start."""
        self.read_to_end = True

    def syncs(self, topic: str, partition: int) -> list[OffsetSync]:
        """The 64 slots of a partition, newest first (empty when it has no sync)."""
        return list(self._syncs.get((topic, partition), ()))

    def translate_downstream(
        self, group: str, topic: str, partition: int, upstream_offset: int
    ) -> int | None:
        """The downstream offset of ``group``'s committed ``upstream_offset`` of
        ``topic``/``partition``; None when there is nothing to checkpoint: before the first
        read to the end, without a sync of the partition, or when even the oldest sync
        kept is ahead of the group (Kafka's -1)."""
        if not self.read_to_end:
            log.debug("translate_downstream(%s, %s-%d, %d): initial read of offset syncs still in progress",
                      group, topic, partition, upstream_offset)  # fmt: skip
            return None
        syncs = self._syncs.get((topic, partition))
        if syncs is None:
            return None
        sync = next((s for s in syncs if s.upstream_offset <= upstream_offset), syncs[-1])
        if sync.upstream_offset > upstream_offset:
            log.debug("translate_downstream(%s, %s-%d, %d): %s is ahead of the group",
                      group, topic, partition, upstream_offset, sync)  # fmt: skip
            return None
        return sync.downstream_offset + (0 if upstream_offset == sync.upstream_offset else 1)

    def _update(self, syncs: list[OffsetSync], original: list[OffsetSync], sync: OffsetSync) -> None:
        """Kafka's ``updateSyncArray``: put ``sync`` in slot 0 and repair the invariants,
        keeping as many distinct older syncs as they allow."""
        only_newest = not self.read_to_end and self.must_read_to_end
        if only_newest or sync.upstream_offset < syncs[0].upstream_offset:
            syncs[:] = [sync] * SYNCS_PER_PARTITION
            return
        replacement = sync
        replacement_index = 0  # into original: the next candidate to keep
        syncs[0] = sync
        for current in range(1, SYNCS_PER_PARTITION):
            previous = current - 1
            while True:
                old = original[replacement_index]
                recent = _invariant_b(syncs[previous], old, previous, current)
                apart_from_previous = _invariant_c(syncs[previous], old, previous)
                after = current + 1
                apart_from_next = after >= SYNCS_PER_PARTITION or _invariant_c(old, syncs[after], current)
                duplicate = (
                    replacement_index + 1 < SYNCS_PER_PARTITION and old is original[replacement_index + 1]
                )
                promote = recent and apart_from_previous and apart_from_next
                if promote:
                    replacement = old
                # Skip a candidate that can never be used at a later slot either.
                skip = duplicate or not apart_from_previous
                if promote or skip:
                    replacement_index += 1
                if not (replacement_index < current and skip):
                    break
            if _invariant_b(syncs[previous], syncs[current], previous, current):
                break  # the rest of the slots still hold
            syncs[current] = replacement
