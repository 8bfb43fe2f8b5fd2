"""MirrorSourceConnector when things go wrong: a replication factor the target cannot meet
fails the connector once with a message naming topic, cluster, reason and key (and a fixed
config recovers); a source cluster that goes away leaves the tasks RUNNING and retrying
with a message saying which cluster, and when it comes back every record arrives once."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.connectors.mirror.source_support import (
    Clusters,
    Row,
    clusters,
    create_topic,
    partition_counts,
    produce,
    read,
    row,
    wait_until,
)
from tests.support import unique


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Clusters]:
    with clusters(Path(tmp_path_factory.mktemp("mirror-errors"))) as c:
        yield c


def record(i: int) -> Row:
    return (f"k{i}".encode(), f"v{i}".encode(), [("i", f"{i}".encode())], 1_700_000_000_000 + i)


def test_a_replication_factor_the_target_cannot_meet_is_reported_then_fixed(env: Clusters) -> None:
    topic = unique("rf")
    create_topic(env.a.bootstrap, topic, 2)
    produce(env.a.bootstrap, topic, [(0, record(0)), (1, record(1))])
    config = env.flow(topic)
    del config["replication.factor"]  # Kafka's default, 2: one Sluiceway broker cannot
    name = unique("mirror-rf")
    env.worker.create_connector(name, config)
    status = env.worker.wait_for_state(name, "FAILED", tasks=0)
    trace = status["connector"]["trace"]
    assert f"'A.{topic}'" in trace and "cluster 'B' (target" in trace
    assert "Replication factor: 2" in trace and "replication.factor=1" in trace
    assert f"A.{topic}" not in partition_counts(env.b)

    env.worker.create_connector(name, {**config, "replication.factor": "1"})
    env.worker.wait_for_running(name, tasks=2)
    assert [row(m) for m in read(env.b, f"A.{topic}", 1, 1)] == [record(1)]


def test_the_offset_syncs_replication_factor_names_its_own_key(env: Clusters) -> None:
    topic = unique("rf-syncs")
    create_topic(env.a.bootstrap, topic, 1)
    config = env.flow(topic, **{"offset-syncs.topic.replication.factor": "3"})
    name = unique("mirror-rf")
    env.worker.create_connector(name, config)
    trace = env.worker.wait_for_state(name, "FAILED", tasks=0)["connector"]["trace"]
    assert "'mm2-offset-syncs.B.internal'" in trace and "cluster 'A' (source" in trace
    assert "offset-syncs.topic.replication.factor=1" in trace


def test_an_unreachable_source_is_retried_and_nothing_is_lost(
    env: Clusters, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    topic = unique("down")
    create_topic(env.a.bootstrap, topic, 1)
    produce(env.a.bootstrap, topic, [(0, record(i)) for i in range(5)])
    name = env.start(topic, **{"tasks.max": "1"})
    env.worker.wait_for_running(name, tasks=1)
    assert len(read(env.b, f"A.{topic}", 0, 5)) == 5

    env.a.stop()
    try:
        wait_until(
            lambda: any(
                "source cluster 'A'" in r.getMessage() and "does not answer" in r.getMessage()
                for r in caplog.records
            ),
            "the task to report the source cluster as unreachable",
        )
        # /status says why nothing moves: RUNNING (retrying, not failed), the error as trace.
        wait_until(
            lambda: "does not answer" in (env.worker.status(name)["tasks"][0].get("trace") or ""),
            "the task's status to carry the retried error",
        )
        status = env.worker.status(name)
        assert status["connector"]["state"] == "RUNNING"
        assert [t["state"] for t in status["tasks"]] == ["RUNNING"]
        assert "source cluster 'A'" in status["tasks"][0]["trace"]
    finally:
        env.a.start()
    produce(env.a.bootstrap, topic, [(0, record(i)) for i in range(5, 10)])
    assert [row(m) for m in read(env.b, f"A.{topic}", 0, 10)] == [record(i) for i in range(10)]
    wait_until(lambda: "trace" not in env.worker.status(name)["tasks"][0], "the retry trace to clear")


def test_a_source_down_at_start_is_waited_for(env: Clusters) -> None:
    topic = unique("late")
    create_topic(env.a.bootstrap, topic, 1)
    produce(env.a.bootstrap, topic, [(0, record(0))])
    env.a.stop()
    try:
        name = env.start(topic, **{"admin.timeout.ms": "1000"})
        env.worker.wait_for_state(name, "RUNNING", tasks=0)  # nothing known yet, not failed
    finally:
        env.a.start()
    env.worker.wait_for_running(name, tasks=1)
    assert [row(m) for m in read(env.b, f"A.{topic}", 0, 1)] == [record(0)]
