"""ClusterAdmin against a real broker: topics and partitions created, configs described and
altered, a refused replication factor and an unreachable cluster told apart."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from connect.api import ConnectException
from connectors.mirror.topics import ClusterAdmin, ClusterUnavailable
from tests.support import embedded_broker, free_port, unique


@pytest.fixture(scope="module")
def admin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterAdmin]:
    with embedded_broker(tmp_path_factory.mktemp("b")) as broker:
        yield ClusterAdmin({"bootstrap.servers": broker.bootstrap}, "B", "target", 10_000)


def test_topics_and_partitions_are_created(admin: ClusterAdmin) -> None:
    name = unique("A.x")
    admin.create_topics({name: (2, {"retention.ms": "12345"})}, 1, "replication.factor")
    admin.create_topics({name: (2, {})}, 1, "replication.factor")  # exists: fine
    assert admin.partition_counts()[name] == 2
    admin.create_partitions({name: 3})
    admin.create_partitions({name: 3})  # already there: fine
    assert admin.partition_counts()[name] == 3
    values = {v.name: v for v in admin.topic_configs([name])[name]}
    assert values["retention.ms"].value == "12345" and not values["retention.ms"].is_default
    assert values["cleanup.policy"].is_default


def test_configs_are_set_and_deleted(admin: ClusterAdmin) -> None:
    name = unique("A.y")
    admin.create_topics({name: (1, {"retention.ms": "12345"})}, 1, "replication.factor")
    admin.alter_topic_configs({name: {"retention.ms": None, "max.message.bytes": "4096"}})
    values = {v.name: v for v in admin.topic_configs([name])[name]}
    assert values["retention.ms"].is_default
    assert values["max.message.bytes"].value == "4096"
    assert admin.topic_configs([unique("missing")]) == {}


def test_a_refused_replication_factor_names_topic_cluster_and_key(admin: ClusterAdmin) -> None:
    good, bad = unique("A.ok"), unique("A.bad")
    with pytest.raises(ConnectException) as caught:
        admin.create_topics({bad: (1, {})}, 2, "replication.factor")
    message = str(caught.value)
    assert not isinstance(caught.value, ClusterUnavailable)
    assert f"'{bad}'" in message and "cluster 'B'" in message and "replication.factor=1" in message
    assert "Replication factor" in message  # the broker's own reason
    admin.create_topics({good: (1, {})}, 1, "replication.factor")
    key = "offset-syncs.topic.replication.factor"
    with pytest.raises(ConnectException, match=re.escape(f"{key}=1")):
        admin.create_compacted_topic(unique("mm2-offset-syncs.B.internal"), 3, key)


def test_the_compacted_topic_has_one_compacted_partition(admin: ClusterAdmin) -> None:
    name = unique("mm2-offset-syncs.B") + ".internal"
    admin.create_compacted_topic(name, 1, "offset-syncs.topic.replication.factor")
    admin.create_compacted_topic(name, 1, "offset-syncs.topic.replication.factor")  # exists: fine
    assert admin.partition_counts()[name] == 1
    values = {v.name: v.value for v in admin.topic_configs([name])[name]}
    assert values["cleanup.policy"] == "compact"


def test_an_unreachable_cluster_is_retriable_and_named() -> None:
    down = ClusterAdmin({"bootstrap.servers": f"127.0.0.1:{free_port()}"}, "A", "source", 500)
    with pytest.raises(ClusterUnavailable, match=r"list topics on cluster 'A' \(source, 127\.0\.0\.1:"):
        down.partition_counts()
