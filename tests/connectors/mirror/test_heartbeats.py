"""MirrorHeartbeatConnector: heartbeats arrive in B's compacted single-partition topic."""

from __future__ import annotations

from confluent_kafka.admin import AdminClient, ConfigResource  # type: ignore[attr-defined]

from tests.connectors.mirror.checkpoint_support import (
    HEARTBEAT,
    Clusters,
    clusters,
    heartbeats,
    topic_exists,
)
from tests.connectors.mirror.source_support import wait_until

__all__ = ["clusters"]


def test_heartbeats_arrive_in_a_compacted_single_partition_topic(clusters: Clusters) -> None:
    clusters.worker.create_connector("heartbeats", {"connector.class": HEARTBEAT, **clusters.flow()})
    clusters.worker.wait_for_running("heartbeats", tasks=1)
    wait_until(lambda: len(heartbeats(clusters.b)) >= 2, "two heartbeats on B")
    beats = heartbeats(clusters.b)
    assert {(h.source_alias, h.target_alias) for h in beats} == {("A", "B")}
    stamps = [h.timestamp for h in beats]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)

    admin = AdminClient({"bootstrap.servers": clusters.b})
    topic = admin.list_topics(timeout=10).topics["heartbeats"]
    assert len(topic.partitions) == 1
    configs = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, "heartbeats")])
    (described,) = configs.values()
    assert described.result(10)["cleanup.policy"].value == "compact"
    assert not topic_exists(clusters.a, "heartbeats")  # the target's topic, not the source's


def test_no_task_without_heartbeats(clusters: Clusters) -> None:
    config = {"connector.class": HEARTBEAT, **clusters.flow(**{"emit.heartbeats.enabled": "false"})}
    clusters.worker.create_connector("quiet", config)
    clusters.worker.wait_for_running("quiet", tasks=0)


def test_a_replication_factor_the_target_cannot_hold_is_named(clusters: Clusters) -> None:
    config = {"connector.class": HEARTBEAT, **clusters.flow()}
    del config["heartbeats.topic.replication.factor"]  # Kafka's default, 3
    clusters.worker.create_connector("heartbeats", config)
    wait_until(
        lambda: clusters.worker.status("heartbeats")["connector"]["state"] == "FAILED",
        "the connector to fail",
    )
    trace = clusters.worker.status("heartbeats")["connector"]["trace"]
    assert (
        "'heartbeats'" in trace and "cluster 'B'" in trace and "heartbeats.topic.replication.factor" in trace
    )
