"""``connect.api.kafka_groups`` against a real broker: group offsets read and committed
through a consumer of each group, many groups read at once, groups listed with their
states; and KIP-875's partial reset of a sink's offsets, which goes through them."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import ConsumerGroupState, KafkaException
from confluent_kafka import TopicPartition as KafkaPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # re-exported untyped

from broker.server import EmbeddedBroker
from connect.api import TopicPartition
from connect.api.kafka_groups import GroupClients, committed_of_groups, list_groups
from sluiceway.embedded import EmbeddedConnect
from tests.support import unique

TIMEOUT_S = 10.0


def create_topic(bootstrap: str, name: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})  # outlives its future
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)


def test_commits_are_read_back_with_their_metadata(shared_broker: EmbeddedBroker) -> None:
    topic, group = unique("orders"), unique("app")
    create_topic(shared_broker.bootstrap, topic, 3)
    config = {"bootstrap.servers": shared_broker.bootstrap}
    with GroupClients(config, TIMEOUT_S) as groups:
        assert groups.committed_in(group, [TopicPartition(topic, 0)]) == {}  # nothing yet
        failed = groups.commit(
            group, [KafkaPartition(topic, 0, 7, metadata="m0"), KafkaPartition(topic, 2, 3)]
        )
        assert failed == []
        expected = {TopicPartition(topic, 0): (7, "m0"), TopicPartition(topic, 2): (3, "")}
        all_three = [TopicPartition(topic, p) for p in range(3)]
        assert groups.committed_in(group, all_three) == expected  # partition 1: left out
        assert groups.committed(group, lambda name: name == topic) == expected
        assert groups.committed(group, lambda name: False) == {}
        assert groups.commit(group, []) == []
    # Another client (another consumer) sees the same: the commit is the broker's.
    with GroupClients(config, TIMEOUT_S) as again:
        assert again.committed_in(group, all_three) == expected


def test_many_groups_read_at_once_answer_as_one_by_one(shared_broker: EmbeddedBroker) -> None:
    topic, other = unique("payments"), unique("other")
    create_topic(shared_broker.bootstrap, topic, 2)
    create_topic(shared_broker.bootstrap, other, 1)
    config = {"bootstrap.servers": shared_broker.bootstrap}
    names = [unique(f"g{i}") for i in range(11)]
    with GroupClients(config, TIMEOUT_S) as groups:
        for i, g in enumerate(names):
            if i % 3 == 0:
                groups.commit(g, [KafkaPartition(topic, i % 2, i + 1)])
            elif i % 3 == 1:
                groups.commit(g, [KafkaPartition(other, 0, i)])  # another topic only
            # i % 3 == 2: a group asked about that never committed (absent on the cluster)
        asked = [TopicPartition(topic, 0), TopicPartition(topic, 1)]
        one_by_one = {g: groups.committed_in(g, asked) for g in names}

    at_once = committed_of_groups(config, [*names, names[0]], asked, TIMEOUT_S, parallelism=4)

    assert at_once == one_by_one
    assert list(at_once) == names  # each group once, in the order asked
    assert at_once[names[0]] == {TopicPartition(topic, 0): (1, "")}
    assert at_once[names[1]] == {} and at_once[names[2]] == {}
    assert committed_of_groups(config, [], asked, TIMEOUT_S) == {}


def test_groups_are_listed_with_their_states(shared_broker: EmbeddedBroker) -> None:
    topic, group = unique("events"), unique("idle")
    create_topic(shared_broker.bootstrap, topic, 1)
    config = {"bootstrap.servers": shared_broker.bootstrap}
    with GroupClients(config, TIMEOUT_S) as groups:
        groups.commit(group, [KafkaPartition(topic, 0, 1)])
    admin = AdminClient(config)

    listed = list_groups(admin, TIMEOUT_S)

    assert listed[group] == ConsumerGroupState.EMPTY  # offsets, no members
    assert unique("never") not in listed


def test_a_closed_client_refuses_calls(shared_broker: EmbeddedBroker) -> None:
    groups = GroupClients({"bootstrap.servers": shared_broker.bootstrap}, TIMEOUT_S)
    groups.close()
    with pytest.raises(KafkaException, match="closed"):
        groups.committed_in(unique("g"), [TopicPartition("t", 0)])


# -- KIP-875: a partial reset of a stopped sink keeps the other partitions' offsets -------


@pytest.fixture(scope="module")
def connect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedConnect]:
    with EmbeddedConnect(tmp_path_factory.mktemp("kafka-groups")) as c:
        yield c


def sink_offsets(c: EmbeddedConnect, name: str) -> list[dict[str, Any]]:
    r = c.request("GET", f"/connectors/{name}/offsets")
    assert r.status_code == 200, r.text
    result: list[dict[str, Any]] = r.json()["offsets"]
    return result


def wait_for(fetch: Any, expected: Any, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = fetch()
        if last == expected:
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}: expected {expected!r}, last {last!r}")


def test_partial_reset_keeps_the_other_partitions(connect: EmbeddedConnect, tmp_path: Path) -> None:
    name = unique("sink")
    topic = f"{name}-in"
    create_topic(connect.bootstrap, topic, 2)
    connect.produce(topic, [(f"k{i}", f"v{i}") for i in range(20)])
    config = {"connector.class": "FileStreamSink", "topics": topic, "file": str(tmp_path / "out.txt")}
    r = connect.request("POST", "/connectors", {"name": name, "config": config})
    assert r.status_code == 201, r.text
    connect.wait_for_state(name, "RUNNING", tasks=1)

    def part(p: int) -> dict[str, Any]:
        return {"kafka_topic": topic, "kafka_partition": p}

    def both_committed() -> bool:
        got = sink_offsets(connect, name)
        return [o["partition"] for o in got] == [part(0), part(1)] and all(
            o["offset"]["kafka_offset"] > 0 for o in got
        )

    wait_for(both_committed, True, "both partitions' committed offsets")
    assert connect.request("PUT", f"/connectors/{name}/stop").status_code == 204
    connect.wait_for_state(name, "STOPPED", tasks=0)
    before = sink_offsets(connect, name)

    body = {"offsets": [{"partition": part(0), "offset": None}]}
    r = connect.request("PATCH", f"/connectors/{name}/offsets", body)

    assert r.status_code == 200, r.text
    assert sink_offsets(connect, name) == [before[1]]  # partition 1 untouched

    # A reset and a new offset in one request.
    body = {
        "offsets": [
            {"partition": part(1), "offset": None},
            {"partition": part(0), "offset": {"kafka_offset": 2}},
        ]
    }
    r = connect.request("PATCH", f"/connectors/{name}/offsets", body)

    assert r.status_code == 200, r.text
    assert sink_offsets(connect, name) == [{"partition": part(0), "offset": {"kafka_offset": 2}}]
