"""MirrorSourceConnector's decisions, free of I/O: which topics to replicate, what to create
on the target, how partitions are spread over tasks, which topic configs to copy.

Kafka's ``MirrorSourceConnector`` mixes these with its admin calls; here they are plain
functions over names and counts, so every rule is tested on its own and ``topics.py`` /
``source_connector.py`` only carry out what these return.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

from connect.api import ConnectException, TopicPartition
from connectors.mirror.policy import ReplicationPolicy, is_cycle

#: The task config key holding a task's partitions (Kafka's ``TASK_TOPIC_PARTITIONS``).
TASK_PARTITIONS_KEY: Final = "task.assigned.partitions"
#: The task's index among the connector's tasks (Kafka's ``TASK_INDEX``, for metrics).
TASK_INDEX_KEY: Final = "task.index"


class TopicSelector(Protocol):
    def should_replicate_topic(self, topic: str) -> bool: ...


class PropertySelector(Protocol):
    def should_replicate_config_property(self, name: str) -> bool: ...

    def should_replicate_source_default(self, name: str) -> bool: ...


# -- which topics -----------------------------------------------------------------------


def should_replicate_topic(
    topic: str,
    topic_filter: TopicSelector,
    policy: ReplicationPolicy,
    target_alias: str,
    heartbeats_replication: bool,
) -> bool:
    """Kafka's rule: the filter accepts it (or it is a heartbeats topic and heartbeats are
    replicated), it is not internal, and replicating it would not close a cycle."""
    return (
        topic_filter.should_replicate_topic(topic)
        or (heartbeats_replication and policy.is_heartbeats_topic(topic))
    ) and not (policy.is_internal_topic(topic) or is_cycle(policy, topic, target_alias))


def target_topics_of(
    target_topics: Iterable[str], policy: ReplicationPolicy, source_alias: str, checkpoints_topic: str
) -> list[str]:
    """The target's topics that replicate the source (Kafka's ``findTargetTopicPartitions``)."""
    return [t for t in target_topics if t != checkpoints_topic and policy.topic_source(t) == source_alias]


# -- what to create ---------------------------------------------------------------------


@dataclass(frozen=True)
class PartitionPlan:
    """What the target lacks: new remote topics (remote name -> (source topic, partitions))
    and remote topics to grow (remote name -> new partition count)."""

    new_topics: dict[str, tuple[str, int]] = field(default_factory=dict)
    grown: dict[str, int] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.new_topics or self.grown)


def plan_partitions(
    source_counts: Mapping[str, int], target_counts: Mapping[str, int], remote_name: Callable[[str], str]
) -> PartitionPlan:
    """Remote topics missing on the target, and remote topics with fewer partitions than
    their source (Kafka's ``computeAndCreateTopicPartitions``). A target with more
    partitions than its source is left alone: partitions cannot shrink."""
    plan = PartitionPlan()
    for topic in sorted(source_counts):
        count = source_counts[topic]
        remote = remote_name(topic)
        have = target_counts.get(remote)
        if have is None:
            plan.new_topics[remote] = (topic, count)
        elif have < count:
            plan.grown[remote] = count
    return plan


def counts_of(partitions: Iterable[TopicPartition]) -> dict[str, int]:
    """Partitions per topic (the highest partition number + 1, as a topic's count)."""
    out: dict[str, int] = {}
    for tp in partitions:
        out[tp.topic] = max(out.get(tp.topic, 0), tp.partition + 1)
    return out


def expand(counts: Mapping[str, int]) -> list[TopicPartition]:
    """Every partition of every topic, topics in name order."""
    return [TopicPartition(t, p) for t in sorted(counts) for p in range(counts[t])]


def replicable_partitions(
    source: Sequence[TopicPartition], target_counts: Mapping[str, int], remote_name: Callable[[str], str]
) -> list[TopicPartition]:
    """The source partitions whose remote partition exists on the target. Tasks get only
    these: a record sent to a partition the target lacks would fail (or, with broker
    auto-creation, create the topic with the wrong partition count). The others wait
    for the next refresh that creates them; their offsets are untouched meanwhile."""
    return [tp for tp in source if tp.partition < target_counts.get(remote_name(tp.topic), 0)]


# -- how partitions are spread over tasks -----------------------------------------------


def round_robin(partitions: Sequence[TopicPartition], max_tasks: int) -> list[list[TopicPartition]]:
    """Partition ``i`` goes to task ``i % n``, with ``n = min(max_tasks, len(partitions))``:
    Kafka's spread, so a topic's partitions land on different tasks."""
    if max_tasks < 1:
        raise ConnectException(f"tasks.max must be at least 1, not {max_tasks}")
    n = min(max_tasks, len(partitions))
    tasks: list[list[TopicPartition]] = [[] for _ in range(n)]
    for i, tp in enumerate(partitions):
        tasks[i % n].append(tp)
    return tasks


def encode_partitions(partitions: Iterable[TopicPartition]) -> str:
    """``topic-partition`` strings, comma-separated (Kafka's TopicPartition.toString)."""
    return ",".join(f"{tp.topic}-{tp.partition}" for tp in partitions)


def decode_partitions(value: str) -> list[TopicPartition]:
    """The inverse of ``encode_partitions``; the partition number follows the last ``-``
    (topic names may contain dashes). A malformed item is a ``ConnectException`` naming it."""
    out = []
    for item in value.split(","):
        item = item.strip()
        if not item:
            continue
        topic, sep, number = item.rpartition("-")
        if not sep or not topic or not number.isdigit():
            raise ConnectException(
                f"{TASK_PARTITIONS_KEY}: {item!r} is not a topic-partition (expected <topic>-<partition>)"
            )
        out.append(TopicPartition(topic, int(number)))
    return out


# -- which configs ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TopicConfigValue:
    """One entry of DescribeConfigs, as the config sync needs it."""

    name: str
    value: str | None
    is_default: bool = False  # source DEFAULT_CONFIG (Kafka's ConfigEntry.isDefault)
    read_only: bool = False
    sensitive: bool = False
    static_broker: bool = False  # source STATIC_BROKER_CONFIG: the broker's file, not the topic's


def _copyable(entry: TopicConfigValue, properties: PropertySelector) -> bool:
    return (
        not entry.read_only
        and not entry.sensitive
        and not entry.static_broker
        and properties.should_replicate_config_property(entry.name)
    )


def config_for_new_topic(entries: Iterable[TopicConfigValue], properties: PropertySelector) -> dict[str, str]:
    """The configs a new remote topic is created with: the source topic's non-default
    values, and its defaults only where ``use.defaults.from=source`` wants them
    (Kafka's ``targetConfig(config, false)``)."""
    return {
        e.name: e.value
        for e in entries
        if e.value is not None
        and (not e.is_default or properties.should_replicate_source_default(e.name))
        and _copyable(e, properties)
    }


def config_ops(entries: Iterable[TopicConfigValue], properties: PropertySelector) -> dict[str, str | None]:
    """IncrementalAlterConfigs operations for a remote topic: name -> value to SET, or None
    to DELETE (a source default the target should not copy, so the target's own default
    applies). Kafka's ``targetConfig(config, true)`` with ``incrementalAlterConfigs``."""
    ops: dict[str, str | None] = {}
    for e in entries:
        if not _copyable(e, properties):
            continue
        if e.is_default and not properties.should_replicate_source_default(e.name):
            ops[e.name] = None
        elif e.value is not None:
            ops[e.name] = e.value
    return ops


# -- which ACLs -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TopicAcl:
    """A literal topic ACL binding, with Kafka's enum names (``ALLOW``, ``READ``...)."""

    topic: str
    principal: str
    host: str
    operation: str
    permission: str


def acls_for_target(
    acls: Iterable[TopicAcl], should_replicate: Callable[[str], bool], remote_name: Callable[[str], str]
) -> list[TopicAcl]:
    """Kafka's syncTopicAcls: the bindings of replicated topics, renamed to their remote
    topics; ALLOW WRITE is not copied (only MirrorMaker writes remote topics), and ALLOW ALL
    becomes ALLOW READ for the same reason. DENY bindings are copied as they are."""
    out = []
    for acl in acls:
        if acl.permission == "ALLOW" and acl.operation == "WRITE":
            continue
        if not should_replicate(acl.topic):
            continue
        operation = "READ" if acl.permission == "ALLOW" and acl.operation == "ALL" else acl.operation
        out.append(TopicAcl(remote_name(acl.topic), acl.principal, acl.host, operation, acl.permission))
    return out
