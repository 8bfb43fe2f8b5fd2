"""Offsets committed inside a transaction (TxnOffsetCommit), held back until it ends.

Kafka's group coordinator keeps them per producer id
(``GroupMetadata.pendingTransactionalOffsetCommits``): OffsetFetch does not see them;
once the transaction coordinator has written the COMMIT marker into the group's
``__consumer_offsets`` partition they become the group's committed offsets, and an
ABORT drops them. A committed transactional offset replaces the current one only if its
record lies later in ``__consumer_offsets`` (``olderThan``): a plain OffsetCommit
appended after the TxnOffsetCommit wins whichever way the transaction ends.

Pure state, no I/O: the coordinator writes the records and calls in here, and replaying
the log on load drives the same table (one per offsets partition, since a marker in one
partition completes only what that partition holds).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, MutableMapping

from kio.schema.errors import ErrorCode

from broker.group.model import Group, OffsetEntry, State

TopicPartition = tuple[str, int]


def supersedes(candidate: OffsetEntry, current: OffsetEntry | None) -> bool:
    """Whether ``candidate`` replaces ``current``: the record written later wins."""
    return current is None or current.record_offset < candidate.record_offset


def apply_committed(
    target: MutableMapping[TopicPartition, OffsetEntry], offsets: Iterable[tuple[TopicPartition, OffsetEntry]]
) -> list[TopicPartition]:
    """Make a committed transaction's offsets current where they supersede; returns those applied."""
    applied = []
    for tp, entry in offsets:
        if supersedes(entry, target.get(tp)):
            target[tp] = entry
            applied.append(tp)
    return applied


class PendingTxnOffsets:
    """Transactional offsets not yet committed or aborted: producer id -> group -> partition."""

    def __init__(self) -> None:
        self._by_producer: dict[int, dict[str, dict[TopicPartition, OffsetEntry]]] = {}
        # How many producers hold a pending offset for (group, partition): OffsetFetch with
        # require_stable asks this for every partition it answers.
        self._holders: dict[tuple[str, TopicPartition], int] = {}

    def __bool__(self) -> bool:
        return bool(self._by_producer)

    def stage(
        self, producer_id: int, group_id: str, offsets: Iterable[tuple[TopicPartition, OffsetEntry]]
    ) -> None:
        """Offsets a producer wrote in its open transaction; a later one for a partition replaces
        the earlier (the last TxnOffsetCommit of a transaction is what its commit applies)."""
        mine = self._by_producer.setdefault(producer_id, {}).setdefault(group_id, {})
        for tp, entry in offsets:
            if tp not in mine:
                key = (group_id, tp)
                self._holders[key] = self._holders.get(key, 0) + 1
            mine[tp] = entry
        if not mine:
            self._drop_group_of(producer_id, group_id)

    def complete(self, producer_id: int) -> dict[str, dict[TopicPartition, OffsetEntry]]:
        """The producer's transaction ended: forget its pending offsets and return them
        (by group) for the caller to apply if it committed."""
        groups = self._by_producer.pop(producer_id, {})
        for group_id, offsets in groups.items():
            for tp in offsets:
                self._release((group_id, tp))
        return groups

    def is_pending(self, group_id: str, tp: TopicPartition) -> bool:
        return (group_id, tp) in self._holders

    def has_pending(self, group_id: str) -> bool:
        return any(group_id in groups for groups in self._by_producer.values())

    def producers(self) -> list[int]:
        return sorted(self._by_producer)

    def groups_of(self, producer_id: int) -> list[str]:
        return sorted(self._by_producer.get(producer_id, {}))

    def items(self) -> Iterator[tuple[int, str, dict[TopicPartition, OffsetEntry]]]:
        """(producer id, group, its pending offsets) for every producer and group."""
        for pid, groups in self._by_producer.items():
            for group_id, offsets in groups.items():
                yield pid, group_id, offsets

    def forget_group(self, group_id: str) -> None:
        """The group was deleted: its pending offsets go with it."""
        for pid in list(self._by_producer):
            self._drop_group_of(pid, group_id)

    def forget_topic(self, topic: str) -> None:
        """The topic was deleted: no offset of it may appear when a transaction commits."""
        for pid, groups in list(self._by_producer.items()):
            for group_id, offsets in list(groups.items()):
                for tp in [tp for tp in offsets if tp[0] == topic]:
                    del offsets[tp]
                    self._release((group_id, tp))
                if not offsets:
                    del groups[group_id]
            if not groups:
                del self._by_producer[pid]

    def _drop_group_of(self, producer_id: int, group_id: str) -> None:
        groups = self._by_producer.get(producer_id)
        if groups is None:
            return
        for tp in groups.pop(group_id, {}):
            self._release((group_id, tp))
        if not groups:
            del self._by_producer[producer_id]

    def _release(self, key: tuple[str, TopicPartition]) -> None:
        left = self._holders[key] - 1
        if left:
            self._holders[key] = left
        else:
            del self._holders[key]


def check_txn_commit(group: Group, generation: int, member_id: str, instance_id: str | None) -> ErrorCode:
    """May this TxnOffsetCommit write for ``group``? Kafka's ``validateOffsetCommit`` with
    ``isTransactional``: generation -1 commits to an Empty group (a producer outside group
    management); anything naming a generation or member must be the current member of the
    current generation. Unlike OffsetCommit, a non-empty group takes commits that name no
    member, since TxnOffsetCommit before v3 cannot name one."""
    if group.state == State.DEAD:
        return ErrorCode.coordinator_not_available
    if generation < 0 and group.state == State.EMPTY:
        return ErrorCode.none
    if generation >= 0 or member_id or instance_id is not None:
        if instance_id is not None:
            current = group.static_members.get(instance_id)
            if current is None:
                return ErrorCode.unknown_member_id
            if current != member_id:
                return ErrorCode.fenced_instance_id
        if member_id not in group.members:
            return ErrorCode.unknown_member_id
        if generation != group.generation:
            return ErrorCode.illegal_generation
    return ErrorCode.none
