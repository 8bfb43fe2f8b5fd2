"""What a failover client asks of a cluster MM2 replicates into (Kafka's mirror-client:
``MirrorClient`` and ``RemoteClusterUtils``).

The client points at one cluster (B, say) and reads what MirrorMaker 2 wrote there::

    offsets = translate_offsets({"bootstrap.servers": "b:9092"}, "A", "orders-app", 10.0)
    # {TopicPartition("A.orders", 0): 1200, ...}: where orders-app continues on B
    consumer.assign([confluent_kafka.TopicPartition(tp.topic, tp.partition, o) for tp, o in offsets.items()])

``client_config`` holds the client settings of that cluster, Java style (``bootstrap.servers``,
``security.protocol``, ``ssl.*``, ``sasl.*``; ``consumer.``/``admin.`` prefixed keys override
them for that client) and ``replication.policy.*`` (how remote topics are named). Lists come
from the topics there: heartbeats topics (``heartbeats``, ``A.heartbeats``, ``C.A.heartbeats``)
tell which clusters replicate into this one and over how many hops, checkpoints topics
(``A.checkpoints.internal``) where groups of which cluster can be translated.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Final

from confluent_kafka import Message
from confluent_kafka.admin import AdminClient

from connect.api import DataException, TopicPartition
from connect.api.kafka_clients import librdkafka_config
from connectors.mirror.formats import Checkpoint
from connectors.mirror.policy import ReplicationPolicy, replication_policy
from connectors.mirror.topic_reader import read_partition

log = logging.getLogger(__name__)

_CLIENT_PREFIXES: Final = ("bootstrap.servers", "security.protocol", "ssl.", "sasl.", "client.dns.lookup")


def _is_client_key(key: str) -> bool:
    return any(key == p or (p.endswith(".") and key.startswith(p)) for p in _CLIENT_PREFIXES)


def _client_settings(props: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """The connection settings of ``props``, ``prefix``ed keys overriding the plain ones
    (Kafka's ``valuesWithPrefixOverride``), kept to the client keys Kafka's
    ``MirrorClientConfig`` passes on, in librdkafka's terms."""
    plain = {k: v for k, v in props.items() if _is_client_key(k)}
    override = {k[len(prefix) :]: v for k, v in props.items() if k.startswith(prefix)}
    merged = {**plain, **{k: v for k, v in override.items() if _is_client_key(k)}}
    merged = {k: str(v) for k, v in merged.items() if v is not None}
    if "bootstrap.servers" not in merged:
        raise ValueError("the mirror client's config needs bootstrap.servers (the cluster to read)")
    return librdkafka_config(merged)


class MirrorClient:
    """Reads MM2's heartbeats and checkpoints on the cluster ``props`` point at."""

    def __init__(self, props: Mapping[str, Any]) -> None:
        self._admin_config = _client_settings(props, "admin.")
        self._consumer_config = _client_settings(props, "consumer.")
        self._policy = replication_policy({k: str(v) for k, v in props.items()})
        self._admin = AdminClient(self._admin_config)
        self._timeout_s = float(props.get("admin.timeout.ms", 60000)) / 1000

    def __enter__(self) -> MirrorClient:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Nothing to release (confluent-kafka's admin client closes when collected); for
        symmetry with Kafka's ``MirrorClient.close``."""

    @property
    def replication_policy(self) -> ReplicationPolicy:
        return self._policy

    def list_topics(self) -> set[str]:
        return set(self._admin.list_topics(timeout=self._timeout_s).topics)

    def heartbeat_topics(self) -> set[str]:
        """The heartbeats topics on this cluster (its own and those replicated into it)."""
        return {t for t in self.list_topics() if self._policy.is_heartbeats_topic(t)}

    def checkpoint_topics(self) -> set[str]:
        """The checkpoints topics on this cluster."""
        return {t for t in self.list_topics() if self._policy.is_checkpoints_topic(t)}

    def upstream_clusters(self) -> set[str]:
        """Clusters replicating into this one, however many hops away (from its heartbeats)."""
        out: set[str] = set()
        for topic in self.heartbeat_topics():
            out |= self.all_sources(topic)
        return out

    def replication_hops(self, upstream_alias: str) -> int:
        """The fewest hops from ``upstream_alias`` to this cluster (A->B->C: 2 from A to C),
        or -1 if no heartbeats come from it."""
        hops = [self.count_hops(t, upstream_alias) for t in self.heartbeat_topics()]
        found = [h for h in hops if h != -1]
        return min(found) if found else -1

    def remote_topics(self, source: str | None = None) -> set[str]:
        """Topics replicated into this cluster (directly from ``source`` if given): named by
        the policy as coming from a cluster, and not internal (checkpoints and offset syncs
        are not; replicated heartbeats are, as in Kafka's client)."""
        return {
            t
            for t in self.list_topics()
            if not self._policy.is_internal_topic(t)
            and (src := self._policy.topic_source(t)) is not None
            and (source is None or src == source)
        }

    def remote_consumer_offsets(
        self, group: str, remote_alias: str, timeout_s: float
    ) -> dict[TopicPartition, tuple[int, str]]:
        """``group``'s offsets on cluster ``remote_alias`` as this cluster's (downstream)
        offsets and their metadata: the last checkpoint of each partition in
        ``<remote_alias>.checkpoints.internal``, read up to its end or for ``timeout_s``."""
        topic = self._policy.checkpoints_topic(remote_alias)
        offsets: dict[TopicPartition, tuple[int, str]] = {}

        def on_record(message: Message) -> None:
            try:
                checkpoint = Checkpoint.decode(message.key() or b"", message.value() or b"")
            except DataException as exc:
                log.info("skipped a record of %s at offset %s: %s", topic, message.offset(), exc)
                return
            if checkpoint.group == group:
                offsets[TopicPartition(checkpoint.topic, checkpoint.partition)] = (
                    checkpoint.downstream_offset,
                    checkpoint.metadata,
                )

        complete = read_partition(
            self._consumer_config,
            topic,
            on_record,
            stopping=threading.Event(),
            deadline=time.monotonic() + timeout_s,
            poll_timeout_s=min(0.5, max(timeout_s, 0.01)),
        )
        if not complete:
            log.info("read %s only in part within %.1f s", topic, timeout_s)
        log.info("consumed %d checkpoints for %s from %s", len(offsets), group, topic)
        return offsets

    def count_hops(self, topic: str, upstream_alias: str) -> int:
        hops = 0
        visited: set[str] = set()
        current = topic
        while True:
            hops += 1
            source = self._policy.topic_source(current)
            if source is None:
                return -1
            if source == upstream_alias:
                return hops
            if source in visited:
                return -1  # a policy that cannot prevent cycles (Identity): give up
            visited.add(source)
            upstream = self._policy.upstream_topic(current)
            if upstream is None:
                return -1
            current = upstream

    def all_sources(self, topic: str) -> set[str]:
        sources: set[str] = set()
        current: str | None = topic
        source = self._policy.topic_source(topic)
        while source is not None and source not in sources and current is not None:
            sources.add(source)
            current = self._policy.upstream_topic(current)
            source = self._policy.topic_source(current) if current is not None else None
        return sources


# -- RemoteClusterUtils ---------------------------------------------------------------------


def translate_offsets(
    client_config: Mapping[str, Any], remote_cluster_alias: str, group: str, timeout: float
) -> dict[TopicPartition, int]:
    """Where ``group``, consuming on cluster ``remote_cluster_alias``, goes on in the cluster
    ``client_config`` points at: its checkpointed offsets, by this cluster's topic names.
    ``timeout`` (seconds) bounds the read of the checkpoints topic."""
    with MirrorClient(client_config) as client:
        found = client.remote_consumer_offsets(group, remote_cluster_alias, timeout)
    return {tp: offset for tp, (offset, _metadata) in found.items()}


def heartbeat_topics(client_config: Mapping[str, Any]) -> set[str]:
    with MirrorClient(client_config) as client:
        return client.heartbeat_topics()


def checkpoint_topics(client_config: Mapping[str, Any]) -> set[str]:
    with MirrorClient(client_config) as client:
        return client.checkpoint_topics()


def upstream_clusters(client_config: Mapping[str, Any]) -> set[str]:
    with MirrorClient(client_config) as client:
        return client.upstream_clusters()


def replication_hops(client_config: Mapping[str, Any], upstream_cluster_alias: str) -> int:
    with MirrorClient(client_config) as client:
        return client.replication_hops(upstream_cluster_alias)
