"""``sync.group.offsets.enabled``: the translated offsets written into the target's groups.

As Kafka's ``MirrorCheckpointTask.syncGroupOffset``: every
``sync.group.offsets.interval.seconds`` each group's last checkpoints (the downstream offsets
of the remote topics) are committed to the group of the same name on the target, but only
into a group nobody uses there, and only forward:

- a group absent on the target (Dead) gets every checkpointed offset;
- an Empty group (no members) gets those partitions where it has no offset, or a smaller
  one; a partition where it is already at or past the checkpoint is left alone;
- a group with members (Stable, rebalancing, or a state we cannot tell) is not touched:
  its consumers own their offsets. Kafka leaves that to the broker refusing the commit;
  here it is decided up front, and a group that gains members in between is still refused
  by the broker (UNKNOWN_MEMBER_ID), which is logged and skipped.

``offsets_to_sync`` is the decision (pure); ``sync_group_offsets`` does it: the groups'
states from ListGroups, their offsets read and committed through ``GroupClients`` (why not
through the admin client's group calls: see ``connect.api.kafka_groups``).
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from confluent_kafka import ConsumerGroupState, KafkaException
from confluent_kafka import TopicPartition as KafkaPartition
from confluent_kafka.admin import AdminClient

from connect.api import TopicPartition
from connect.api.kafka_groups import GroupClients
from connectors.mirror.formats import Checkpoint

log = logging.getLogger(__name__)


class TargetGroup(enum.Enum):
    """What a group is on the target cluster, as far as offset syncing cares."""

    ABSENT = "absent"  # Dead: never existed, or deleted
    IDLE = "idle"  # Empty: offsets, no members
    ACTIVE = "active"  # members, or a state we cannot tell: hands off


def target_group(state: ConsumerGroupState | None) -> TargetGroup:
    if state == ConsumerGroupState.DEAD:
        return TargetGroup.ABSENT
    if state == ConsumerGroupState.EMPTY:
        return TargetGroup.IDLE
    return TargetGroup.ACTIVE


def offsets_to_sync(
    checkpoints: Mapping[TopicPartition, Checkpoint],
    group: TargetGroup,
    target_offsets: Mapping[TopicPartition, int | None],
) -> dict[TopicPartition, Checkpoint]:
    """The checkpoints to commit into a target group in state ``group`` whose committed
    offsets are ``target_offsets`` (None or negative: no usable offset)."""
    if group is TargetGroup.ACTIVE:
        return {}
    if group is TargetGroup.ABSENT:
        return dict(checkpoints)
    out = {}
    for tp, checkpoint in checkpoints.items():
        current = target_offsets.get(tp)
        if current is None or current < 0 or current < checkpoint.downstream_offset:
            out[tp] = checkpoint
    return out


def group_states(admin: AdminClient, groups: Iterable[str], timeout_s: float) -> dict[str, TargetGroup]:
    """Each group's state on the cluster of ``admin``, from ListGroups (a group it does not
    list is absent). Raises KafkaException or TimeoutError when the cluster does not answer."""
    wanted = set(groups)
    if not wanted:
        return {}
    listed: Any = admin.list_consumer_groups(request_timeout=timeout_s).result(timeout_s)
    states = {g.group_id: target_group(g.state) for g in listed.valid if g.group_id in wanted}
    return {g: states.get(g, TargetGroup.ABSENT) for g in sorted(wanted)}


def sync_group_offsets(
    admin: AdminClient,
    groups: GroupClients,
    checkpoints: Mapping[str, Mapping[TopicPartition, Checkpoint]],
    *,
    target_alias: str,
    timeout_s: float,
) -> dict[str, dict[TopicPartition, int]]:
    """Commit each group's checkpoints into its namesake on the target where
    ``offsets_to_sync`` allows; returns what was committed, per group."""
    states = group_states(admin, [g for g, cps in checkpoints.items() if cps], timeout_s)
    done: dict[str, dict[TopicPartition, int]] = {}
    for group, state in states.items():
        try:
            current: dict[TopicPartition, int | None] = {}
            if state is TargetGroup.IDLE:
                topics = {tp.topic for tp in checkpoints[group]}
                current = {tp: o for tp, (o, _) in groups.committed(group, topics.__contains__).items()}
        except (KafkaException, TimeoutError) as exc:
            log.warning("cannot read the offsets of group %s on cluster %s: %s", group, target_alias, exc)
            continue
        chosen = offsets_to_sync(checkpoints[group], state, current)
        if not chosen:
            continue
        partitions = [
            KafkaPartition(tp.topic, tp.partition, cp.downstream_offset, metadata=cp.metadata)
            for tp, cp in sorted(chosen.items())
        ]
        try:
            failed = groups.commit(group, partitions)
        except (KafkaException, TimeoutError) as exc:
            # UNKNOWN_MEMBER_ID: consumers joined the group since its state was listed.
            log.warning("cannot sync offsets of group %s on cluster %s: %s", group, target_alias, exc)
            continue
        for tp in failed:
            log.warning(
                "cannot sync offset of group %s for %s-%d on cluster %s: %s",
                group,
                tp.topic,
                tp.partition,
                target_alias,
                tp.error,
            )
        bad = {(tp.topic, tp.partition) for tp in failed}
        done[group] = {tp: cp.downstream_offset for tp, cp in chosen.items() if tuple(tp) not in bad}
        log.debug("synced offsets of group %s on cluster %s: %s", group, target_alias, done[group])
    return done
