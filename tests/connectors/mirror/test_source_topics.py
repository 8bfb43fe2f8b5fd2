"""MirrorSourceConnector keeps B's remote topics in step with A: new topics and new
partitions appear on B within the refresh interval and get replicated, topic configs
follow (but not excluded ones), and a topic that came from B is never sent back."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka.admin import (  # type: ignore[attr-defined]  # re-exported untyped
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewPartitions,
    ResourceType,
)

from tests.connectors.mirror.source_support import (
    Clusters,
    Row,
    clusters,
    config_of,
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
    with clusters(Path(tmp_path_factory.mktemp("mirror-topics"))) as c:
        yield c


def record(i: int) -> Row:
    return (f"k{i}".encode(), f"v{i}".encode(), [("i", f"{i}".encode())], 1_700_000_000_000 + i)


def test_new_topics_and_partitions_on_a_appear_on_b_and_are_replicated(env: Clusters) -> None:
    prefix = unique("grow")
    first, second = f"{prefix}-1", f"{prefix}-2"
    create_topic(env.a.bootstrap, first, 1)
    produce(env.a.bootstrap, first, [(0, record(0))])
    name = env.start(f"{prefix}-.*")
    env.worker.wait_for_running(name, tasks=1)
    assert [row(m) for m in read(env.b, f"A.{first}", 0, 1)] == [record(0)]

    # A second topic and a second partition of the first, while the connector runs.
    create_topic(env.a.bootstrap, second, 2)
    admin = AdminClient({"bootstrap.servers": env.a.bootstrap})
    admin.create_partitions([NewPartitions(first, 2)])[first].result(30)
    wait_until(
        lambda: (
            partition_counts(env.b).get(f"A.{second}") == 2 and partition_counts(env.b).get(f"A.{first}") == 2
        ),
        "the new topic and partition on B",
        timeout=15,
    )
    produce(env.a.bootstrap, first, [(1, record(1))])
    produce(env.a.bootstrap, second, [(0, record(2)), (1, record(3))])
    assert [row(m) for m in read(env.b, f"A.{first}", 1, 1)] == [record(1)]
    assert [row(m) for m in read(env.b, f"A.{second}", 0, 1)] == [record(2)]
    assert [row(m) for m in read(env.b, f"A.{second}", 1, 1)] == [record(3)]
    # Five partitions now, spread over tasks.max=2 tasks.
    status = env.worker.wait_for_running(name, tasks=2)
    assert status["connector"]["state"] == "RUNNING"


def test_remote_topics_get_the_source_partition_count_and_configs(env: Clusters) -> None:
    topic = unique("made")
    create_topic(env.a.bootstrap, topic, 3, **{"retention.ms": "3600000", "segment.ms": "7200000"})
    name = env.start(topic, **{"config.properties.exclude": r"segment\.ms"})
    env.worker.wait_for_running(name, tasks=2)
    wait_until(lambda: partition_counts(env.b).get(f"A.{topic}") == 3, "the remote topic")
    remote = config_of(env.b, f"A.{topic}")
    assert remote["retention.ms"] == "3600000"
    assert remote["segment.ms"] != "7200000"  # excluded: the target's default


def test_config_changes_on_a_are_synced_to_b(env: Clusters) -> None:
    topic = unique("conf")
    create_topic(env.a.bootstrap, topic, 1)
    name = env.start(topic, **{"config.properties.exclude": r"segment\.ms"})
    env.worker.wait_for_running(name, tasks=1)
    wait_until(lambda: f"A.{topic}" in partition_counts(env.b), "the remote topic")
    admin = AdminClient({"bootstrap.servers": env.a.bootstrap})
    resource = ConfigResource(
        ResourceType.TOPIC,
        topic,
        incremental_configs=[
            ConfigEntry("retention.ms", "123456789", incremental_operation=AlterConfigOpType.SET),
            ConfigEntry("segment.ms", "7654321", incremental_operation=AlterConfigOpType.SET),
        ],
    )
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(30)
    wait_until(
        lambda: config_of(env.b, f"A.{topic}")["retention.ms"] == "123456789",
        "retention.ms on B",
        timeout=15,
    )
    assert config_of(env.b, f"A.{topic}")["segment.ms"] != "7654321"


def test_a_topic_from_b_is_not_replicated_back(env: Clusters) -> None:
    tag = unique("cyc")
    local, from_b = f"{tag}", f"B.{tag}"
    create_topic(env.a.bootstrap, local, 1)
    create_topic(env.a.bootstrap, from_b, 1)
    produce(env.a.bootstrap, from_b, [(0, record(0))])
    name = env.start(f".*{tag}")
    env.worker.wait_for_running(name, tasks=1)
    # Both were seen in the same listing: the local one is replicated, the other never is.
    wait_until(lambda: f"A.{local}" in partition_counts(env.b), "the local topic on B")
    counts = partition_counts(env.b)
    assert f"A.{from_b}" not in counts and from_b not in counts


def test_identity_policy_keeps_topic_names(env: Clusters) -> None:
    topic = unique("same-name")
    create_topic(env.a.bootstrap, topic, 2)
    produce(env.a.bootstrap, topic, [(1, record(7))])
    identity = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
    name = env.start(topic, **{"replication.policy.class": identity})
    env.worker.wait_for_running(name, tasks=2)
    assert [row(m) for m in read(env.b, topic, 1, 1)] == [record(7)]
    assert f"A.{topic}" not in partition_counts(env.b)
