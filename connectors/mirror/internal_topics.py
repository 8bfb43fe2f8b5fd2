"""MM2's own single-partition compacted topics (checkpoints, heartbeats), created on a
cluster in the background of a connector.

``ClusterAdmin.create_compacted_topic`` (Kafka's ``createSinglePartitionCompactedTopic``)
tells a cluster that refuses, a replication factor above its broker count above all, from
one that does not answer. The first is the user's to fix: the ``ConnectException`` naming
the topic, the cluster and the key goes up and fails the connector. The second is retried
here with backoff, logged each time, until it works or the connector stops, so an
unreachable cluster shows in the log rather than as a crash loop.
"""

from __future__ import annotations

import logging
import threading

from connect.api.retry import backoff_seconds
from connectors.mirror.topics import ClusterAdmin, ClusterUnavailable

log = logging.getLogger(__name__)


def create_compacted_topic_until_done(
    admin: ClusterAdmin,
    topic: str,
    replication_factor: int,
    *,
    replication_factor_key: str,
    stopping: threading.Event,
    max_backoff_s: float = 30.0,
) -> bool:
    """Create ``topic`` (one partition, compacted), retrying while the cluster does not
    answer; True once done, False if ``stopping`` was set first. A refusal raises
    ``ConnectException``."""
    attempt = 0
    while not stopping.is_set():
        try:
            admin.create_compacted_topic(topic, replication_factor, replication_factor_key)
            return True
        except ClusterUnavailable as exc:
            wait = min(backoff_seconds(attempt, 500), max_backoff_s)
            log.warning("%s; retrying in %.1f s", exc, wait)
            attempt += 1
            stopping.wait(wait)
    return False
