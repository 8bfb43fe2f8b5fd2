"""MM2's own single-partition compacted topics (checkpoints, heartbeats), created on a cluster.

Kafka's ``MirrorUtils.createSinglePartitionCompactedTopic``: one partition, compacted, the
configured replication factor. A topic that already exists, or a cluster that will not let
us create topics (no authorization, no CreateTopics), is left to exist or be auto-created;
anything else, a replication factor the cluster cannot meet above all, is a
``ConnectException`` naming the topic, the cluster and the key that sets the factor.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Final

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # re-exported untyped

from connect.api import ConnectException, RetriableException
from connect.api.retry import backoff_seconds

log = logging.getLogger(__name__)

# Errors that mean "assume the topic exists or will be auto-created", as Kafka treats them.
_TOLERATED: Final = frozenset(
    {
        KafkaError.TOPIC_ALREADY_EXISTS,
        KafkaError.TOPIC_AUTHORIZATION_FAILED,
        KafkaError.CLUSTER_AUTHORIZATION_FAILED,
        KafkaError.UNSUPPORTED_VERSION,
    }
)


def create_compacted_topic(
    admin: AdminClient,
    topic: str,
    replication_factor: int,
    *,
    cluster_alias: str,
    replication_factor_key: str,
    timeout_s: float,
) -> None:
    """Create ``topic`` with one partition, ``cleanup.policy=compact``, ``replication_factor``."""
    new = NewTopic(
        topic,
        num_partitions=1,
        replication_factor=replication_factor,
        config={"cleanup.policy": "compact"},
    )
    futures = admin.create_topics([new], request_timeout=timeout_s, operation_timeout=timeout_s)
    try:
        futures[topic].result(timeout_s)
        log.info("created topic %r on cluster %s", topic, cluster_alias)
    except KafkaException as exc:
        error: Any = exc.args[0] if exc.args else None
        code = error.code() if isinstance(error, KafkaError) else None
        if isinstance(error, KafkaError) and error.retriable():
            raise RetriableException(
                f"Could not create topic '{topic}' on cluster {cluster_alias} yet: {error.str()}"
            ) from None
        if code in _TOLERATED:
            log.debug("not creating topic %r on cluster %s: %s", topic, cluster_alias, error)
            return
        reason = error.str() if isinstance(error, KafkaError) else str(exc)
        if code == KafkaError.INVALID_REPLICATION_FACTOR:
            raise ConnectException(
                f"Unable to create topic '{topic}' on cluster {cluster_alias}: replication factor "
                f"{replication_factor} is more than the cluster can hold ({reason}); "
                f"set {replication_factor_key} to a factor it can (1 on a single broker)"
            ) from None
        raise ConnectException(
            f"Unable to create topic '{topic}' on cluster {cluster_alias} "
            f"(replication factor {replication_factor} from {replication_factor_key}): {reason}"
        ) from None
    except TimeoutError:
        raise RetriableException(
            f"Timed out after {timeout_s} s creating topic '{topic}' on cluster {cluster_alias}: "
            "the cluster may be unreachable"
        ) from None


def create_compacted_topic_until_done(
    admin: AdminClient,
    topic: str,
    replication_factor: int,
    *,
    cluster_alias: str,
    replication_factor_key: str,
    timeout_s: float,
    stopping: threading.Event,
    max_backoff_ms: int = 30_000,
) -> bool:
    """``create_compacted_topic``, retried with backoff while the cluster cannot be reached
    (logged each time, so an unreachable cluster shows in the log rather than as a crash
    loop), until it is done (True) or ``stopping`` is set (False). A definite refusal raises."""
    attempt = 0
    while not stopping.is_set():
        try:
            create_compacted_topic(
                admin,
                topic,
                replication_factor,
                cluster_alias=cluster_alias,
                replication_factor_key=replication_factor_key,
                timeout_s=timeout_s,
            )
            return True
        except RetriableException as exc:
            wait = min(backoff_seconds(attempt, 500), max_backoff_ms / 1000)
            log.warning("%s; retrying in %.1f s", exc, wait)
            attempt += 1
            stopping.wait(wait)
    return False
