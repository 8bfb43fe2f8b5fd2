"""MirrorCheckpointConnector/Task on a worker on B: the groups of A translated through the
offset syncs (written here in Kafka's format, as MirrorSourceTask writes them) into
checkpoints on B, emitted only when new, advanced or rewound."""

from __future__ import annotations

import itertools
import logging
from collections import defaultdict
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource  # type: ignore[attr-defined]

from connectors.mirror.formats import Checkpoint, OffsetSync
from tests.connectors.mirror.checkpoint_support import (
    CHECKPOINT,
    Clusters,
    checkpoints,
    clusters,
    commit,
    create_topic,
    produce,
    write_offset_syncs,
)
from tests.connectors.mirror.source_support import clusters as source_clusters
from tests.connectors.mirror.source_support import wait_until
from tests.support import free_port

__all__ = ["clusters"]

SYNCS = "mm2-offset-syncs.B.internal"


def by_partition(found: list[Checkpoint], group: str) -> dict[tuple[str, int], list[tuple[int, int]]]:
    out: dict[tuple[str, int], list[tuple[int, int]]] = defaultdict(list)
    for c in found:
        if c.group == group:
            out[(c.topic, c.partition)].append((c.upstream_offset, c.downstream_offset))
    return dict(out)


def seen(clusters: Clusters, group: str, topic: str, partition: int, expected: list[tuple[int, int]]) -> bool:
    return by_partition(checkpoints(clusters.b), group).get((topic, partition)) == expected


def test_checkpoints_translate_and_only_move_forward_unless_rewound(clusters: Clusters) -> None:
    create_topic(clusters.a, "orders", partitions=2)
    create_topic(clusters.a, "audit")
    produce(clusters.a, "orders", [(p, None, b"%d" % i) for i in range(40) for p in (0, 1)])
    produce(clusters.a, "audit", [(0, None, b"x")])
    create_topic(clusters.a, SYNCS, configs={"cleanup.policy": "compact"})
    # B's A.orders-0 holds 100 older records before the replicated ones.
    write_offset_syncs(clusters.a, SYNCS, [OffsetSync("orders", 0, 10, 110), OffsetSync("orders", 1, 0, 0)])
    commit(clusters.a, "app", {("orders", 0): 10, ("orders", 1): 4, ("audit", 0): 1})
    commit(clusters.a, "skipped-app", {("orders", 0): 10})
    commit(clusters.a, "audit-only", {("audit", 0): 1})

    clusters.worker.create_connector(
        "checkpoints",
        {
            "connector.class": CHECKPOINT,
            **clusters.flow(**{"groups.exclude": "skipped-.*", "topics.exclude": "audit"}),
        },
    )
    # Exact at a sync; one past the sync when the group is ahead of it (never further).
    wait_until(lambda: seen(clusters, "app", "A.orders", 0, [(10, 110)]), "app's checkpoint of orders-0")
    wait_until(lambda: seen(clusters, "app", "A.orders", 1, [(4, 1)]), "app's checkpoint of orders-1")

    # The group advances past a newer sync: the checkpoint advances.
    write_offset_syncs(clusters.a, SYNCS, [OffsetSync("orders", 0, 20, 120)])
    commit(clusters.a, "app", {("orders", 0): 25})
    wait_until(
        lambda: seen(clusters, "app", "A.orders", 0, [(10, 110), (25, 121)]), "the advanced checkpoint"
    )
    # The group is rewound on A: the checkpoint follows it back.
    commit(clusters.a, "app", {("orders", 0): 10})
    wait_until(
        lambda: seen(clusters, "app", "A.orders", 0, [(10, 110), (25, 121), (10, 110)]),
        "the rewound checkpoint",
    )

    found = checkpoints(clusters.b)
    # orders-1 did not change: checkpointed once, however many rounds passed.
    assert by_partition(found, "app")[("A.orders", 1)] == [(4, 1)]
    assert {c.group for c in found} == {"app"}  # excluded group; group of an excluded topic only
    assert {c.topic for c in found} == {"A.orders"}
    per_partition = by_partition(found, "app")
    for marks in per_partition.values():
        for (up0, down0), (up1, down1) in itertools.pairwise(marks):
            assert down1 > down0 or up1 < up0  # monotonic unless the group was rewound

    admin = AdminClient({"bootstrap.servers": clusters.b})
    assert len(admin.list_topics(timeout=10).topics["A.checkpoints.internal"].partitions) == 1
    (described,) = admin.describe_configs(
        [ConfigResource(ConfigResource.Type.TOPIC, "A.checkpoints.internal")]
    ).values()
    assert described.result(10)["cleanup.policy"].value == "compact"


def test_a_restarted_connector_goes_on_from_its_checkpoints(clusters: Clusters) -> None:
    create_topic(clusters.a, "orders")
    produce(clusters.a, "orders", [(0, None, b"%d" % i) for i in range(10)])
    create_topic(clusters.a, SYNCS, configs={"cleanup.policy": "compact"})
    write_offset_syncs(clusters.a, SYNCS, [OffsetSync("orders", 0, 0, 0)])
    commit(clusters.a, "app", {("orders", 0): 5})
    config = {"connector.class": CHECKPOINT, **clusters.flow()}
    clusters.worker.create_connector("checkpoints", config)
    wait_until(lambda: seen(clusters, "app", "A.orders", 0, [(5, 1)]), "app's checkpoint")

    assert clusters.worker.request("DELETE", "/connectors/checkpoints").status_code in (200, 204)
    commit(clusters.a, "later", {("orders", 0): 3})
    clusters.worker.create_connector("checkpoints", config)
    wait_until(lambda: seen(clusters, "later", "A.orders", 0, [(3, 1)]), "the new group's checkpoint")
    # The new task read app's checkpoint back and did not write it again.
    assert by_partition(checkpoints(clusters.b), "app") == {("A.orders", 0): [(5, 1)]}


def test_a_replication_factor_the_target_cannot_hold_is_named(clusters: Clusters) -> None:
    config = {"connector.class": CHECKPOINT, **clusters.flow()}
    del config["checkpoints.topic.replication.factor"]  # Kafka's default, 3
    clusters.worker.create_connector("checkpoints", config)
    wait_until(
        lambda: clusters.worker.status("checkpoints")["connector"]["state"] == "FAILED",
        "the connector to fail",
    )
    trace = clusters.worker.status("checkpoints")["connector"]["trace"]
    assert "'A.checkpoints.internal'" in trace
    assert "cluster 'B'" in trace and "checkpoints.topic.replication.factor" in trace


def test_offset_syncs_read_from_the_target_when_they_live_there(clusters: Clusters) -> None:
    # offset-syncs.topic.location=target: B holds mm2-offset-syncs.A.internal.
    create_topic(clusters.a, "orders")
    produce(clusters.a, "orders", [(0, None, b"%d" % i) for i in range(10)])
    create_topic(clusters.b, "mm2-offset-syncs.A.internal", configs={"cleanup.policy": "compact"})
    write_offset_syncs(clusters.b, "mm2-offset-syncs.A.internal", [OffsetSync("orders", 0, 4, 7)])
    commit(clusters.a, "app", {("orders", 0): 6})
    config = clusters.flow(**{"offset-syncs.topic.location": "target"})
    clusters.worker.create_connector("checkpoints", {"connector.class": CHECKPOINT, **config})
    wait_until(lambda: seen(clusters, "app", "A.orders", 0, [(6, 8)]), "app's checkpoint")


def test_offset_syncs_written_after_the_task_started_are_followed(clusters: Clusters) -> None:
    # The task starts before the offset-syncs topic exists (no source connector yet).
    create_topic(clusters.a, "orders")
    produce(clusters.a, "orders", [(0, None, b"%d" % i) for i in range(10)])
    commit(clusters.a, "app", {("orders", 0): 6})
    clusters.worker.create_connector("checkpoints", {"connector.class": CHECKPOINT, **clusters.flow()})
    clusters.worker.wait_for_running("checkpoints", tasks=1)
    create_topic(clusters.a, SYNCS, configs={"cleanup.policy": "compact"})
    write_offset_syncs(clusters.a, SYNCS, [OffsetSync("orders", 0, 0, 0), OffsetSync("orders", 0, 6, 6)])
    wait_until(lambda: seen(clusters, "app", "A.orders", 0, [(6, 6)]), "app's checkpoint")


def test_an_unreachable_source_is_retried_not_fatal(
    clusters: Clusters, caplog: pytest.LogCaptureFixture
) -> None:
    config = clusters.flow(**{"source.cluster.bootstrap.servers": f"127.0.0.1:{free_port()}"})
    config["admin.timeout.ms"] = "500"
    with caplog.at_level(logging.WARNING, logger="connectors.mirror.checkpoint_connector"):
        clusters.worker.create_connector("checkpoints", {"connector.class": CHECKPOINT, **config})
        wait_until(
            lambda: sum("cannot list consumer groups on cluster A" in r.message for r in caplog.records) >= 2,
            "two retries",
        )
    assert clusters.worker.status("checkpoints")["connector"]["state"] == "RUNNING"


def test_a_source_that_goes_away_shows_in_the_task_status_until_it_answers(tmp_path: Path) -> None:
    """Cluster A stops under a running checkpoint task: the task stays RUNNING, its status
    says that A does not answer (retried), and the note goes once A answers again."""
    with source_clusters(tmp_path) as env:
        a = env.a.bootstrap
        create_topic(a, "orders", 1)
        produce(a, "orders", [(0, None, b"x")] * 3)
        commit(a, "app", {("orders", 0): 2})
        config = {
            "connector.class": CHECKPOINT,
            "source.cluster.alias": "A",
            "target.cluster.alias": "B",
            "source.cluster.bootstrap.servers": a,
            "target.cluster.bootstrap.servers": env.b,
            "checkpoints.topic.replication.factor": "1",
            "emit.checkpoints.interval.seconds": "1",
            "refresh.groups.interval.seconds": "1",
            "admin.timeout.ms": "1000",
        }
        env.worker.create_connector("checkpoints", config)
        env.worker.wait_for_running("checkpoints", tasks=1)

        def trace() -> str:
            tasks = env.worker.status("checkpoints")["tasks"]
            return str(tasks[0].get("trace") or "") if tasks else ""

        env.a.stop()
        try:
            wait_until(
                lambda: "source cluster 'A' does not answer" in trace(), "the retry in the task's status"
            )
            assert [t["state"] for t in env.worker.status("checkpoints")["tasks"]] == ["RUNNING"]
        finally:
            env.a.start()
        wait_until(lambda: trace() == "", "the note to go once A answers")
