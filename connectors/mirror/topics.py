"""MirrorSourceConnector's admin calls on one cluster: list topics, create remote topics and
partitions, describe and alter topic configs, create the offset-syncs topic.

Each call waits at most ``admin.timeout.ms``. Failures come out as one of two exceptions,
both naming the operation, the topic and the cluster:

- ``ClusterUnavailable`` (a ``RetriableException``): the cluster did not answer (down,
  unreachable, timed out, no leader yet); the connector retries with backoff.
- ``ConnectException``: the cluster refused for a reason retrying will not fix (a
  replication factor above its broker count, a config it rejects); the message says
  which key to change.
"""

from __future__ import annotations

import concurrent.futures
import logging
from collections.abc import Iterable, Mapping
from typing import Any, Final

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (  # type: ignore[attr-defined]  # re-exported untyped
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from connect.api import ConnectException, RetriableException
from connectors.mirror.topic_plan import TopicAcl, TopicConfigValue

log = logging.getLogger(__name__)

# Kafka's createCompactedTopic: a topic that exists, or a cluster that will not let us
# create it, is assumed to exist (or to be auto-created).
_ASSUME_EXISTS: Final = frozenset(
    {
        KafkaError.TOPIC_ALREADY_EXISTS,
        KafkaError.TOPIC_AUTHORIZATION_FAILED,
        KafkaError.CLUSTER_AUTHORIZATION_FAILED,
        KafkaError.UNSUPPORTED_VERSION,
    }
)

# Errors that say "not now" rather than "no": the cluster is down or still electing.
_UNAVAILABLE: Final = frozenset(
    {
        KafkaError._TRANSPORT,
        KafkaError._ALL_BROKERS_DOWN,
        KafkaError._TIMED_OUT,
        KafkaError._RESOLVE,
        KafkaError._WAIT_COORD,
        KafkaError.REQUEST_TIMED_OUT,
        KafkaError.NOT_CONTROLLER,
        KafkaError.LEADER_NOT_AVAILABLE,
        KafkaError.BROKER_NOT_AVAILABLE,
        KafkaError.NETWORK_EXCEPTION,
    }
)


class ClusterUnavailable(RetriableException):
    """A cluster did not answer an admin call; retrying later may succeed."""


def _error_of(exc: BaseException) -> KafkaError | None:
    if isinstance(exc, KafkaException) and exc.args and isinstance(exc.args[0], KafkaError):
        return exc.args[0]
    return None


class ClusterAdmin:
    """An ``AdminClient`` on one cluster, and how its errors are told."""

    def __init__(self, config: Mapping[str, Any], alias: str, role: str, timeout_ms: int) -> None:
        self.alias = alias
        self.role = role  # "source" or "target": which side of this flow the cluster is
        self.bootstrap = str(config.get("bootstrap.servers", "?"))
        self.timeout_s = max(timeout_ms, 1) / 1000
        self.admin = AdminClient(dict(config))

    @property
    def where(self) -> str:
        return f"cluster '{self.alias}' ({self.role}, {self.bootstrap})"

    def _failure(self, what: str, exc: BaseException) -> ConnectException:
        """``exc`` of operation ``what`` as ClusterUnavailable or ConnectException."""
        if isinstance(exc, concurrent.futures.TimeoutError):
            return ClusterUnavailable(
                f"cannot {what} on {self.where}: no answer within admin.timeout.ms "
                f"({self.timeout_s * 1000:.0f} ms)"
            )
        error = _error_of(exc)
        reason = error.str() if error is not None else str(exc)
        if error is not None and (error.code() in _UNAVAILABLE or (error.retriable() and not error.fatal())):
            return ClusterUnavailable(f"cannot {what} on {self.where}: {reason}")
        return ConnectException(f"cannot {what} on {self.where}: {reason}")

    # -- topics -------------------------------------------------------------------------

    def partition_counts(self) -> dict[str, int]:
        """Every topic of the cluster with its partition count."""
        try:
            metadata = self.admin.list_topics(timeout=self.timeout_s)
        except KafkaException as exc:
            raise self._failure("list topics", exc) from exc
        out: dict[str, int] = {}
        for name, topic in metadata.topics.items():
            if topic.error is not None:
                # A topic being created or deleted; the next refresh sees it settled.
                log.debug("topic %r on %s: %s", name, self.where, topic.error)
                continue
            out[name] = len(topic.partitions)
        return out

    def create_topics(
        self, topics: Mapping[str, tuple[int, Mapping[str, str]]], replication_factor: int, factor_key: str
    ) -> None:
        """Create each topic (name -> (partitions, configs)); one that already exists is
        fine. The first refusal is raised after every request has been answered, so one bad
        topic does not keep the others from being created; a refused replication factor
        names ``factor_key``."""
        if not topics:
            return
        new = [
            NewTopic(name, num_partitions=n, replication_factor=replication_factor, config=dict(configs))
            for name, (n, configs) in topics.items()
        ]
        futures = self.admin.create_topics(
            new, request_timeout=self.timeout_s, operation_timeout=self.timeout_s
        )
        failures: list[ConnectException] = []
        for name, future in futures.items():
            try:
                future.result(self.timeout_s)
                log.info(
                    "created remote topic %r with %d partitions on %s", name, topics[name][0], self.where
                )
            except (KafkaException, concurrent.futures.TimeoutError) as exc:
                error = _error_of(exc)
                if error is not None and error.code() == KafkaError.TOPIC_ALREADY_EXISTS:
                    continue
                failures.append(self._creation_failure(name, replication_factor, factor_key, exc))
        if failures:
            # A refusal outranks "unavailable": it needs the user, retrying will not do.
            failures.sort(key=lambda f: isinstance(f, ClusterUnavailable))
            raise failures[0]

    def _creation_failure(
        self, topic: str, replication_factor: int, factor_key: str, exc: BaseException
    ) -> ConnectException:
        error = _error_of(exc)
        if error is not None and error.code() == KafkaError.INVALID_REPLICATION_FACTOR:
            return ConnectException(
                f"cannot create topic '{topic}' on {self.where}: {error.str()} "
                f"(replication factor {replication_factor}, from {factor_key}). Set {factor_key} to "
                f"at most the number of brokers of cluster '{self.alias}' (1 for a single "
                f"Sluiceway broker), e.g. {factor_key}=1, or -1 for the cluster's default"
            )
        return self._failure(f"create topic '{topic}'", exc)

    def create_partitions(self, counts: Mapping[str, int]) -> None:
        """Grow each topic to its count; a topic that already has them is fine."""
        if not counts:
            return
        futures = self.admin.create_partitions(
            [NewPartitions(t, n) for t, n in counts.items()],
            request_timeout=self.timeout_s,
            operation_timeout=self.timeout_s,
        )
        for name, future in futures.items():
            try:
                future.result(self.timeout_s)
                log.info("increased topic %r to %d partitions on %s", name, counts[name], self.where)
            except (KafkaException, concurrent.futures.TimeoutError) as exc:
                error = _error_of(exc)
                if error is not None and error.code() == KafkaError.INVALID_PARTITIONS:
                    continue  # someone got there first (Kafka swallows it too)
                raise self._failure(f"add partitions to topic '{name}' (to {counts[name]})", exc) from exc

    def create_compacted_topic(self, topic: str, replication_factor: int, factor_key: str) -> None:
        """One partition, ``cleanup.policy=compact`` (Kafka's
        ``createSinglePartitionCompactedTopic``): MM2's internal topics."""
        future = self.admin.create_topics(
            [NewTopic(topic, 1, replication_factor, config={"cleanup.policy": "compact"})],
            request_timeout=self.timeout_s,
            operation_timeout=self.timeout_s,
        )[topic]
        try:
            future.result(self.timeout_s)
            log.info("created topic %r on %s", topic, self.where)
        except (KafkaException, concurrent.futures.TimeoutError) as exc:
            error = _error_of(exc)
            if error is not None and error.code() in _ASSUME_EXISTS:
                log.debug("not creating %r on %s: %s", topic, self.where, error.str())
                return
            raise self._creation_failure(topic, replication_factor, factor_key, exc) from exc

    # -- configs ------------------------------------------------------------------------

    def topic_configs(self, topics: Iterable[str]) -> dict[str, list[TopicConfigValue]]:
        """DescribeConfigs of each topic. A topic deleted meanwhile is left out."""
        names = sorted(set(topics))
        if not names:
            return {}
        futures = self.admin.describe_configs(
            [ConfigResource(ResourceType.TOPIC, t) for t in names], request_timeout=self.timeout_s
        )
        out: dict[str, list[TopicConfigValue]] = {}
        for resource, future in futures.items():
            try:
                entries: dict[str, ConfigEntry] = future.result(self.timeout_s)
            except (KafkaException, concurrent.futures.TimeoutError) as exc:
                error = _error_of(exc)
                if error is not None and error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
                    continue
                raise self._failure(f"describe the configs of topic '{resource.name}'", exc) from exc
            out[resource.name] = [_value(e) for e in entries.values()]
        return out

    def alter_topic_configs(self, ops: Mapping[str, Mapping[str, str | None]]) -> None:
        """IncrementalAlterConfigs: per topic, name -> value to SET, or None to DELETE. A
        topic that refuses is logged and the others still get theirs (Kafka logs it too)."""
        resources = [
            ConfigResource(
                ResourceType.TOPIC,
                topic,
                incremental_configs=[
                    ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)
                    if value is not None
                    else ConfigEntry(name, None, incremental_operation=AlterConfigOpType.DELETE)
                    for name, value in sorted(entries.items())
                ],
            )
            for topic, entries in ops.items()
            if entries
        ]
        if not resources:
            return
        futures = self.admin.incremental_alter_configs(resources, request_timeout=self.timeout_s)
        for resource, future in futures.items():
            try:
                future.result(self.timeout_s)
            except (KafkaException, concurrent.futures.TimeoutError) as exc:
                failure = self._failure(f"alter the configs of topic '{resource.name}'", exc)
                if isinstance(failure, ClusterUnavailable):
                    raise failure from exc
                log.warning("%s", failure)

    # -- ACLs ---------------------------------------------------------------------------

    def topic_acls(self) -> list[TopicAcl]:
        """Every literal topic ACL binding; ``SecurityDisabled`` when there is no authorizer."""
        anything: Any = None  # a filter's "any name/principal/host" (the stubs want str)
        pattern = AclBindingFilter(
            ResourceType.TOPIC,
            anything,
            ResourcePatternType.LITERAL,
            anything,
            anything,
            AclOperation.ANY,
            AclPermissionType.ANY,
        )
        try:
            bindings = self.admin.describe_acls(pattern, request_timeout=self.timeout_s).result(
                self.timeout_s
            )
        except (KafkaException, concurrent.futures.TimeoutError) as exc:
            error = _error_of(exc)
            if error is not None and error.code() == KafkaError.SECURITY_DISABLED:
                raise SecurityDisabled(f"{self.where} has no authorizer: {error.str()}") from exc
            raise self._failure("describe topic ACLs", exc) from exc
        return [_acl(b) for b in bindings]

    def create_acls(self, acls: Iterable[TopicAcl]) -> None:
        """Create the bindings (existing ones are no-ops); a refused one is logged, as Kafka does."""
        bindings = [
            AclBinding(
                ResourceType.TOPIC,
                a.topic,
                ResourcePatternType.LITERAL,
                a.principal,
                a.host,
                AclOperation[a.operation],
                AclPermissionType[a.permission],
            )
            for a in acls
        ]
        if not bindings:
            return
        futures = self.admin.create_acls(bindings, request_timeout=self.timeout_s)
        for binding, future in futures.items():
            try:
                future.result(self.timeout_s)
            except (KafkaException, concurrent.futures.TimeoutError) as exc:
                failure = self._failure(f"create an ACL of topic '{binding.name}'", exc)
                if isinstance(failure, ClusterUnavailable):
                    raise failure from exc
                log.warning("%s", failure)


class SecurityDisabled(ConnectException):
    """The cluster has no authorizer: there are no ACLs to read."""


def _acl(binding: AclBinding) -> TopicAcl:
    operation: Any = binding.operation
    permission: Any = binding.permission_type
    return TopicAcl(binding.name, binding.principal, binding.host, operation.name, permission.name)


def _value(entry: ConfigEntry) -> TopicConfigValue:
    source: Any = entry.source  # an int at run time, whatever the stubs say
    source = getattr(source, "value", source)
    return TopicConfigValue(
        entry.name,
        entry.value,
        is_default=source == ConfigSource.DEFAULT_CONFIG.value,
        read_only=bool(entry.is_read_only),
        sensitive=bool(entry.is_sensitive),
        static_broker=source == ConfigSource.STATIC_BROKER_CONFIG.value,
    )
