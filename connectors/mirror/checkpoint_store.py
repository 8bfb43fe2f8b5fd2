"""The checkpoints a checkpoint task has emitted, per group and partition, and which new
ones are worth emitting (Kafka's ``CheckpointStore`` and
``MirrorCheckpointTask.checkpointIsMoreRecent``). Pure: the task loads it from the
checkpoints topic and feeds it.

A checkpoint is emitted when it is the first of its partition, when the upstream group was
rewound (its upstream offset went down), or when its downstream offset went up. Anything
else (the same checkpoint again, or a translation that would move the downstream offset
back while the upstream one did not) is skipped, so the downstream offsets of one partition
only ever go back after the group itself was rewound on the source.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from connect.api import TopicPartition
from connectors.mirror.formats import Checkpoint


def checkpoint_partition(checkpoint: Checkpoint) -> TopicPartition:
    """The (renamed, downstream) partition a checkpoint is about."""
    return TopicPartition(checkpoint.topic, checkpoint.partition)


def is_more_recent(new: Checkpoint, last: Checkpoint | None) -> bool:
    """Whether ``new`` should be emitted after ``last`` (the previous one for its partition)."""
    if last is None:
        return True
    if new.upstream_offset < last.upstream_offset:
        return True  # the group was rewound upstream: follow it
    return new.downstream_offset > last.downstream_offset


class CheckpointStore:
    """The last checkpoint per group and downstream partition."""

    def __init__(self) -> None:
        self._by_group: dict[str, dict[TopicPartition, Checkpoint]] = {}

    def load(self, checkpoints: Iterable[Checkpoint], groups: Iterable[str]) -> None:
        """Checkpoints read back from the checkpoints topic (in topic order); only those of
        ``groups`` are kept."""
        wanted = set(groups)
        for checkpoint in checkpoints:
            if checkpoint.group in wanted:
                self._by_group.setdefault(checkpoint.group, {})[checkpoint_partition(checkpoint)] = checkpoint

    def get(self, group: str) -> Mapping[TopicPartition, Checkpoint]:
        return self._by_group.get(group, {})

    def to_emit(self, group: str, candidates: Iterable[Checkpoint]) -> list[Checkpoint]:
        """The candidates worth emitting for ``group`` (recorded as emitted); checkpoints with
        a negative downstream offset cannot be translated accurately and are dropped."""
        known = self._by_group.setdefault(group, {})
        out = []
        for checkpoint in candidates:
            if checkpoint.downstream_offset < 0:
                continue
            tp = checkpoint_partition(checkpoint)
            if is_more_recent(checkpoint, known.get(tp)):
                known[tp] = checkpoint
                out.append(checkpoint)
        return out

    def downstream_offsets(self) -> dict[str, dict[TopicPartition, Checkpoint]]:
        """Each group's last checkpoints (what ``sync.group.offsets`` writes to the target)."""
        return {group: dict(cps) for group, cps in self._by_group.items() if cps}
