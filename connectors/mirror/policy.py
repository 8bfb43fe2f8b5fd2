"""Replication policies: how MirrorMaker 2 names remote topics and its internal topics.

Kafka's ``ReplicationPolicy`` (mirror-client) with its two implementations:

- ``DefaultReplicationPolicy`` prefixes a replicated topic with its source cluster's alias
  (``A.orders`` on B for ``orders`` of A), so the alias chain in a name tells where a
  topic came from and a topic is never mirrored back to a cluster it came from.
- ``IdentityReplicationPolicy`` keeps names as they are (for migrations and one-way
  flows); only heartbeats topics are still prefixed. A name then cannot tell its source:
  ``topic_source`` is the configured ``source.cluster.alias``, and cycles are not prevented.

``replication_policy(props)`` builds the policy ``replication.policy.class`` names (Java
class name, short name, or a Python ``module.Class``) and configures it with ``props``.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import ClassVar, Final

from connect.api.errors import ConnectException

SEPARATOR_CONFIG: Final = "replication.policy.separator"
SEPARATOR_DEFAULT: Final = "."
INTERNAL_TOPIC_SEPARATOR_ENABLED_CONFIG: Final = "replication.policy.internal.topic.separator.enabled"
SOURCE_CLUSTER_ALIAS_CONFIG: Final = "source.cluster.alias"
REPLICATION_POLICY_CLASS_CONFIG: Final = "replication.policy.class"

HEARTBEATS_TOPIC: Final = "heartbeats"


class ReplicationPolicy(ABC):
    """Kafka's ``ReplicationPolicy``: the defaults here are the interface's own (fixed ``.``
    separators); ``DefaultReplicationPolicy`` makes them follow the configured separator."""

    aliases: ClassVar[tuple[str, ...]] = ()

    def configure(self, props: Mapping[str, str]) -> None:  # noqa: B027 - optional, as Java's Configurable
        """Read the policy's settings from the connector's ``props``."""

    @abstractmethod
    def format_remote_topic(self, source_alias: str, topic: str) -> str:
        """The name on the target of ``topic`` replicated from cluster ``source_alias``."""

    @abstractmethod
    def topic_source(self, topic: str) -> str | None:
        """The alias of the cluster ``topic`` was replicated from; None for a local topic."""

    @abstractmethod
    def upstream_topic(self, topic: str) -> str | None:
        """The name ``topic`` had on its source cluster; None for a local topic."""

    def original_topic(self, topic: str) -> str:
        """``topic`` with every alias stripped: its name on the cluster it started on."""
        # Iterative rather than Java's recursion: a policy's chain can be long.
        while True:
            upstream = self.upstream_topic(topic)
            if upstream is None or upstream == topic:
                return topic
            topic = upstream

    def heartbeats_topic(self) -> str:
        return HEARTBEATS_TOPIC

    def offset_syncs_topic(self, cluster_alias: str) -> str:
        return f"mm2-offset-syncs.{cluster_alias}.internal"

    def checkpoints_topic(self, cluster_alias: str) -> str:
        return f"{cluster_alias}.checkpoints.internal"

    def is_heartbeats_topic(self, topic: str) -> bool:
        """``heartbeats`` or a replica of it (``A.heartbeats``, ``B.A.heartbeats``)."""
        return self.heartbeats_topic() == self.original_topic(topic)

    def is_checkpoints_topic(self, topic: str) -> bool:
        return topic.endswith(".checkpoints.internal")

    def is_mm2_internal_topic(self, topic: str) -> bool:
        return topic.endswith(".internal")

    def is_internal_topic(self, topic: str) -> bool:
        """MM2's own topics, Kafka's (``__consumer_offsets``, ``.``-prefixed) and Connect's
        (``connect-offsets-internal`` style names): never replicated."""
        return (
            self.is_mm2_internal_topic(topic)
            or topic.startswith(("__", "."))
            or topic.endswith(("-internal", ".internal"))
        )


def _java_split(text: str, separator: str) -> list[str]:
    """Java's ``Pattern.split`` with a literal separator: trailing empty parts dropped."""
    parts = text.split(separator)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


class DefaultReplicationPolicy(ReplicationPolicy):
    """``<source alias><separator><topic>``; the separator is ``replication.policy.separator``
    (``.``), also used in the internal topics' names unless
    ``replication.policy.internal.topic.separator.enabled=false``."""

    aliases = ("org.apache.kafka.connect.mirror.DefaultReplicationPolicy",)

    def __init__(self) -> None:
        self.separator = SEPARATOR_DEFAULT
        self.internal_separator_enabled = True

    def configure(self, props: Mapping[str, str]) -> None:
        # As Kafka: the internal-separator flag is only read when a separator is given.
        if SEPARATOR_CONFIG in props:
            separator = str(props[SEPARATOR_CONFIG])
            if separator == "":
                raise ConnectException(
                    f"{SEPARATOR_CONFIG} must not be empty: it separates the alias from the topic"
                )
            self.separator = separator
            if INTERNAL_TOPIC_SEPARATOR_ENABLED_CONFIG in props:
                # Java's Boolean.parseBoolean: "true" in any case, anything else false.
                flag = str(props[INTERNAL_TOPIC_SEPARATOR_ENABLED_CONFIG]).strip().lower()
                self.internal_separator_enabled = flag == "true"

    def format_remote_topic(self, source_alias: str, topic: str) -> str:
        return source_alias + self.separator + topic

    def topic_source(self, topic: str) -> str | None:
        parts = _java_split(topic, self.separator)
        return parts[0] if len(parts) >= 2 else None

    def upstream_topic(self, topic: str) -> str | None:
        source = self.topic_source(topic)  # virtual, as Java's
        return None if source is None else topic[len(source) + len(self.separator) :]

    def _internal_separator(self) -> str:
        return self.separator if self.internal_separator_enabled else "."

    def _internal_suffix(self) -> str:
        return self._internal_separator() + "internal"

    def _checkpoints_suffix(self) -> str:
        return self._internal_separator() + "checkpoints" + self._internal_suffix()

    def offset_syncs_topic(self, cluster_alias: str) -> str:
        return "mm2-offset-syncs" + self._internal_separator() + cluster_alias + self._internal_suffix()

    def checkpoints_topic(self, cluster_alias: str) -> str:
        return cluster_alias + self._checkpoints_suffix()

    def is_checkpoints_topic(self, topic: str) -> bool:
        return topic.endswith(self._checkpoints_suffix())

    def is_mm2_internal_topic(self, topic: str) -> bool:
        return topic.endswith(self._internal_suffix())


class IdentityReplicationPolicy(DefaultReplicationPolicy):
    """Topics keep their names on the target; heartbeats topics are still prefixed
    (``A.heartbeats``) so that heartbeats of several sources stay apart."""

    aliases = ("org.apache.kafka.connect.mirror.IdentityReplicationPolicy",)

    def __init__(self) -> None:
        super().__init__()
        self.source_cluster_alias: str | None = None

    def configure(self, props: Mapping[str, str]) -> None:
        super().configure(props)
        if SOURCE_CLUSTER_ALIAS_CONFIG in props:
            self.source_cluster_alias = str(props[SOURCE_CLUSTER_ALIAS_CONFIG])

    def _looks_like_heartbeat(self, topic: str) -> bool:
        return topic.endswith(self.heartbeats_topic())

    def format_remote_topic(self, source_alias: str, topic: str) -> str:
        if self._looks_like_heartbeat(topic):
            return super().format_remote_topic(source_alias, topic)
        return topic

    def topic_source(self, topic: str) -> str | None:
        if self._looks_like_heartbeat(topic):
            return super().topic_source(topic)
        return self.source_cluster_alias

    def upstream_topic(self, topic: str) -> str | None:
        if self._looks_like_heartbeat(topic):
            return super().upstream_topic(topic)
        return topic


_BUILT_IN: Final[dict[str, type[ReplicationPolicy]]] = {
    name: cls
    for cls in (DefaultReplicationPolicy, IdentityReplicationPolicy)
    for name in (*cls.aliases, cls.__name__, f"{cls.__module__}.{cls.__name__}")
}


def policy_class(name: str) -> type[ReplicationPolicy]:
    """The policy class ``name`` means: Kafka's class name, the short name, or a Python
    ``module.Class`` subclassing ``ReplicationPolicy``; ConnectException says why not."""
    name = name.strip()
    if name in _BUILT_IN:
        return _BUILT_IN[name]
    module_name, _, class_name = name.rpartition(".")
    where = f"{REPLICATION_POLICY_CLASS_CONFIG}={name}"
    if not module_name:
        raise ConnectException(
            f"{where}: unknown replication policy; use DefaultReplicationPolicy, "
            "IdentityReplicationPolicy or a Python module.Class"
        )
    try:
        found = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as exc:
        raise ConnectException(f"{where}: cannot load the class ({exc})") from None
    if not (isinstance(found, type) and issubclass(found, ReplicationPolicy)):
        raise ConnectException(f"{where}: not a subclass of connectors.mirror.policy.ReplicationPolicy")
    return found


def replication_policy(props: Mapping[str, str]) -> ReplicationPolicy:
    """The policy ``replication.policy.class`` names (DefaultReplicationPolicy when unset),
    configured with ``props``."""
    policy = policy_class(str(props.get(REPLICATION_POLICY_CLASS_CONFIG) or "DefaultReplicationPolicy"))()
    policy.configure(props)
    return policy


def is_cycle(policy: ReplicationPolicy, topic: str, target_alias: str) -> bool:
    """Whether replicating ``topic`` to cluster ``target_alias`` would bring it back to a
    cluster it came from: some alias in its chain of sources is the target's."""
    seen = {topic}
    while True:
        source = policy.topic_source(topic)
        if source is None:
            return False
        if source == target_alias:
            return True
        upstream = policy.upstream_topic(topic)
        # Identity-like policies return the topic itself: they cannot tell, no cycle.
        if upstream is None or upstream in seen:
            return False
        seen.add(upstream)
        topic = upstream
