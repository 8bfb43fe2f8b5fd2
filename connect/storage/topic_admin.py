"""Creating and checking the internal topics of a distributed worker (Kafka's ``TopicAdmin``).

The config, offsets and status topics must be compacted, and only compacted: with
``delete`` in their cleanup policy the broker would eventually drop connector
configs, source offsets and statuses. The config topic must have exactly one
partition, because its readers rely on the order of its records. A topic that
is missing is created so; one that exists is checked, and a worker refuses to
start on a topic that breaks these rules, with Kafka's messages.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (  # type: ignore[attr-defined]  # re-exported untyped
    AdminClient,
    ConfigResource,
    NewTopic,
    ResourceType,
)

from connect.api.errors import ConnectException
from connect.runtime import clients
from connect.storage.kafka_log import make_client

log = logging.getLogger(__name__)

CLEANUP_POLICY = "cleanup.policy"
COMPACT = "compact"


class TopicMisconfigured(ConnectException):
    """An internal topic exists in a shape the worker must not use, or cannot be created as
    asked (the replication factor): retrying does not help, the configuration must change."""


@dataclass(frozen=True, slots=True)
class InternalTopic:
    """What an internal topic is for: the worker setting naming it and the words Kafka's messages use."""

    topic_key: str  # the worker setting that names the topic
    replication_key: str  # the worker setting of its replication factor
    purpose: str
    single_partition: bool = False


CONFIG_TOPIC = InternalTopic(
    "config.storage.topic", "config.storage.replication.factor", "connector configurations", True
)
OFFSETS_TOPIC = InternalTopic(
    "offset.storage.topic", "offset.storage.replication.factor", "source connector offsets"
)
STATUS_TOPIC = InternalTopic(
    "status.storage.topic", "status.storage.replication.factor", "connector and task statuses"
)


def ensure_internal_topic(
    bootstrap: str,
    admin_config: Mapping[str, Any],
    topic: str,
    partitions: int,
    replication_factor: int,
    purpose: InternalTopic,
    *,
    topic_settings: Mapping[str, str] | None = None,
    timeout: float = 30.0,
) -> bool:
    """Create ``topic`` compacted if it is missing, else check that it is fit for ``purpose``.

    ``partitions`` and ``replication_factor`` may be -1 for the broker's defaults
    (KIP-464); the config topic always gets one partition. ``topic_settings``
    are further topic configs for a new topic; any cleanup policy among them is
    replaced by ``compact``. ``admin_config`` holds the worker's client settings
    (security, ...). True if this call created the topic. Raises
    ConnectException if the topic cannot be created or found, or exists but is
    not compact-only or (config topic) has more than one partition.
    """
    admin = make_client(AdminClient, clients.admin_config(bootstrap, f"{topic}-admin", admin_config))
    created = _create(
        admin, bootstrap, topic, partitions, replication_factor, purpose, topic_settings, timeout
    )
    if not created:
        _check_cleanup_policy(admin, bootstrap, topic, purpose, timeout)
    if purpose.single_partition:
        check_single_partition(topic, _partition_count(admin, topic, timeout), purpose)
    return created


def check_single_partition(topic: str, partition_count: int, purpose: InternalTopic) -> None:
    """Refuse a config topic with more than one partition (Kafka's message)."""
    if partition_count > 1:
        raise TopicMisconfigured(
            f"Topic '{topic}' supplied via the '{purpose.topic_key}' property is required to have a single "
            f"partition in order to guarantee consistency of {purpose.purpose}, but found {partition_count} "
            "partitions."
        )


def _create(
    admin: AdminClient,
    bootstrap: str,
    topic: str,
    partitions: int,
    replication_factor: int,
    purpose: InternalTopic,
    topic_settings: Mapping[str, str] | None,
    timeout: float,
) -> bool:
    # The cleanup policy is not the user's to choose (DistributedConfig.topicSettings ignores it too).
    settings = {k: str(v) for k, v in (topic_settings or {}).items() if k != CLEANUP_POLICY}
    settings[CLEANUP_POLICY] = COMPACT
    new = NewTopic(
        topic,
        num_partitions=1 if purpose.single_partition else partitions,
        replication_factor=replication_factor,
        config=settings,
    )
    # Create and take "already exists" as found: asking first would race with other
    # workers, and on brokers with auto.create.topics.enable a metadata request for a
    # missing topic would create it with the broker's (non-compacted) defaults.
    future = admin.create_topics([new], operation_timeout=timeout, request_timeout=timeout)[topic]
    try:
        future.result(timeout + 5)
    except KafkaException as exc:
        err: KafkaError = exc.args[0]
        code = err.code()
        if code == KafkaError.TOPIC_ALREADY_EXISTS:
            log.debug("found the existing topic %s at %s", topic, bootstrap)
            return False
        if code in (KafkaError.TOPIC_AUTHORIZATION_FAILED, KafkaError.CLUSTER_AUTHORIZATION_FAILED):
            log.info(
                "not authorized to create topic %s at %s; assuming it exists or will be created",
                topic,
                bootstrap,
            )
            return False
        if code == KafkaError.INVALID_REPLICATION_FACTOR:
            raise TopicMisconfigured(
                f"Unable to create topic '{topic}': {err.str()}. Set '{purpose.replication_key}' to at most "
                "the number of brokers, or -1 for the broker's default."
            ) from exc
        if code == KafkaError._TIMED_OUT:
            raise ConnectException(
                f"Timed out while checking for or creating topic '{topic}'. This could indicate a "
                "connectivity issue, unavailable topic partitions, or if this is your first use of the topic "
                "it may have taken too long to create."
            ) from exc
        raise ConnectException(
            f"Error while attempting to create/find topic '{topic}' at {bootstrap}: {err.str()}"
        ) from exc
    log.info(
        "created topic %s at %s for %s (%s partitions, replication factor %s, %s)",
        topic,
        bootstrap,
        purpose.purpose,
        1 if purpose.single_partition else partitions,
        replication_factor,
        settings,
    )
    return True


def _check_cleanup_policy(
    admin: AdminClient, bootstrap: str, topic: str, purpose: InternalTopic, timeout: float
) -> None:
    resource = ConfigResource(ResourceType.TOPIC, topic)
    try:
        entries = admin.describe_configs([resource], request_timeout=timeout)[resource].result(timeout + 5)
    except KafkaException as exc:
        err: KafkaError = exc.args[0]
        if err.code() in (
            KafkaError.TOPIC_AUTHORIZATION_FAILED,
            KafkaError.CLUSTER_AUTHORIZATION_FAILED,
            KafkaError.UNKNOWN_TOPIC_OR_PART,
        ):
            log.debug("could not describe the configs of topic %s: %s", topic, err.str())
            verify_cleanup_policy(topic, purpose, None)
            return
        raise ConnectException(
            f"Error while attempting to describe topic config for topic '{topic}' on brokers at {bootstrap}: "
            f"{err.str()}"
        ) from exc
    entry = entries.get(CLEANUP_POLICY)
    verify_cleanup_policy(topic, purpose, getattr(entry, "value", None))


def verify_cleanup_policy(topic: str, purpose: InternalTopic, value: str | None) -> bool:
    """Judge an internal topic's ``cleanup.policy`` as the broker reported it (None: not
    reported). True when it is ``compact`` alone; False, with an INFO line saying it was not
    checked, when the broker did not say (an older broker, or no DescribeConfigs ACL), as
    Kafka's ``TopicAdmin.verifyTopicCleanupPolicyOnlyCompact`` does; raises when it is
    anything else."""
    policies = {p.strip().lower() for p in str(value or "").split(",") if p.strip()}
    if not policies:
        log.info(
            "Unable to use admin client to verify the cleanup policy of '%s' topic is '%s', either "
            "because the broker is an older version or because the Kafka Connect worker does not "
            "have the necessary topic ACLs. Please check the topic's cleanup policy, which is "
            "required for this Kafka Connect worker to operate properly (the topic holds %s).",
            topic,
            COMPACT,
            purpose.purpose,
        )
        return False
    if policies != {COMPACT}:
        found = ",".join(sorted(policies))
        raise TopicMisconfigured(
            f"Topic '{topic}' supplied via the '{purpose.topic_key}' property is required to have "
            f"'{CLEANUP_POLICY}={COMPACT}' to guarantee consistency and durability of {purpose.purpose}, but "
            f"found the topic currently has '{CLEANUP_POLICY}={found}'. Continuing would likely result in "
            f"eventually losing {purpose.purpose} and problems restarting this Connect cluster in the "
            "future. "
            f"Change the '{purpose.topic_key}' property in the Connect worker configurations to use a topic "
            f"with '{CLEANUP_POLICY}={COMPACT}'."
        )
    return True


def _partition_count(admin: AdminClient, topic: str, timeout: float) -> int:
    try:
        metadata = admin.list_topics(topic, timeout=timeout)
    except KafkaException as exc:
        raise ConnectException(f"could not look up the partitions of topic {topic}: {exc.args[0]}") from exc
    found = metadata.topics.get(topic)
    if found is None or found.error is not None:
        # Not visible yet (a new topic's metadata propagates); the log's start checks again.
        return 0
    return len(found.partitions)
