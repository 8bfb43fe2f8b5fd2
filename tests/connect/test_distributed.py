"""Distributed mode in one process: a broker and three workers of one cluster, driven
through their REST APIs (writes sent to followers are forwarded to the leader)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, TopicPartition

from sluiceway.embedded import EmbeddedConnectCluster
from tests.connect import plugins
from tests.support import unique

P = "tests.connect.plugins."
JSON = "org.apache.kafka.connect.json.JsonConverter"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedConnectCluster]:
    with EmbeddedConnectCluster(tmp_path_factory.mktemp("cluster"), workers=3) as c:
        yield c


def via_follower(c: EmbeddedConnectCluster) -> int:
    return c.follower()


def keys_in(c: EmbeddedConnectCluster, topic: str) -> set[bytes]:
    """The keys of every record in ``topic`` now."""
    consumer = Consumer(
        {"bootstrap.servers": c.bootstrap, "group.id": unique("keys"), "enable.auto.commit": False}
    )
    try:
        partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        ends = {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in partitions
        }
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p, end in ends.items() if end > 0])
        keys: set[bytes] = set()
        left = {p for p, end in ends.items() if end > 0}
        deadline = time.monotonic() + 30
        while left and time.monotonic() < deadline:
            for m in consumer.consume(100, 0.2):
                if m.error() is None:
                    keys.add(m.key())
                    if m.offset() + 1 >= ends[m.partition()]:
                        left.discard(m.partition())
        return keys
    finally:
        consumer.close()


def states(c: EmbeddedConnectCluster, name: str) -> tuple[str, list[str]]:
    s = c.status(name)
    return s["connector"]["state"], [t["state"] for t in s["tasks"]]


def test_a_connector_created_through_a_follower_runs_in_the_cluster(cluster: EmbeddedConnectCluster) -> None:
    name, topic = unique("src"), unique()
    f = via_follower(cluster)
    r = cluster.request(
        "POST",
        "/connectors",
        {
            "name": name,
            "config": {
                "connector.class": P + "CountingSourceConnector",
                "topic": topic,
                "count": "20",
                "tasks.max": "3",
            },
        },
        worker=f,
    )
    assert r.status_code == 201, r.text
    assert r.json()["name"] == name
    assert r.headers["location"].endswith(f"/connectors/{name}")
    cluster.wait_for(lambda: states(cluster, name) == ("RUNNING", ["RUNNING"] * 3), 30, "3 tasks RUNNING")
    assert len(cluster.consume(topic, 60)) == 60  # 3 tasks x 20 records
    for i in cluster.live():
        assert name in cluster.request("GET", "/connectors", worker=i).json()
        tasks = cluster.request("GET", f"/connectors/{name}/tasks", worker=i).json()
        assert [t["id"]["task"] for t in tasks] == [0, 1, 2]
    # The work is spread: the connector and its three tasks are not all on one worker.
    s = cluster.status(name)
    assert len({t["worker_id"] for t in s["tasks"]} | {s["connector"]["worker_id"]}) > 1
    r = cluster.request(
        "POST",
        "/connectors",
        {"name": name, "config": {"connector.class": P + "CountingSourceConnector", "topic": topic}},
        worker=f,
    )
    assert r.status_code == 409
    assert r.json() == {"error_code": 409, "message": f"Connector {name} already exists"}


def test_config_updates_and_deletes_through_followers(cluster: EmbeddedConnectCluster) -> None:
    name, topic = unique("upd"), unique()
    f = via_follower(cluster)
    config = {
        "connector.class": P + "CountingSourceConnector",
        "topic": topic,
        "count": "0",
        "tasks.max": "1",
    }
    assert cluster.request("PUT", f"/connectors/{name}/config", config, worker=f).status_code == 201
    cluster.wait_for(lambda: states(cluster, name) == ("RUNNING", ["RUNNING"]), 30, "one task")
    r = cluster.request("PUT", f"/connectors/{name}/config", {**config, "tasks.max": "4"}, worker=f)
    assert r.status_code == 200
    cluster.wait_for(lambda: states(cluster, name) == ("RUNNING", ["RUNNING"] * 4), 30, "four tasks")
    r = cluster.request("PATCH", f"/connectors/{name}/config", {"tasks.max": "2"}, worker=f)
    assert r.status_code == 200 and r.json()["config"]["tasks.max"] == "2"
    cluster.wait_for(lambda: states(cluster, name) == ("RUNNING", ["RUNNING"] * 2), 30, "two tasks")
    assert cluster.request("DELETE", f"/connectors/{name}", worker=f).status_code == 204
    cluster.wait_for(
        lambda: all(
            name not in cluster.request("GET", "/connectors", worker=i).json() for i in cluster.live()
        ),
        30,
        "the connector gone everywhere",
    )
    assert cluster.request("GET", f"/connectors/{name}/status", worker=f).status_code == 404
    assert cluster.request("DELETE", f"/connectors/{name}", worker=f).status_code == 404


def test_a_connector_config_change_reaches_tasks_whose_configs_stay_the_same(
    cluster: EmbeddedConnectCluster,
) -> None:
    name, topic = unique("fixed"), unique()
    config = {
        "connector.class": P + "FixedTaskConfigsConnector",
        "topic": topic,
        "count": "100000",
        "interval.ms": "20",
    }
    cluster.request("PUT", f"/connectors/{name}/config", config, worker=cluster.follower())
    cluster.wait_for(lambda: states(cluster, name) == ("RUNNING", ["RUNNING"]), 30, "running")
    config |= {
        "transforms": "tag",
        "transforms.tag.type": "InsertHeader",
        "transforms.tag.header": "tagged",
        "transforms.tag.value.literal": "yes",
    }
    cluster.request("PUT", f"/connectors/{name}/config", config, worker=cluster.follower())

    # The task restarts with the transform although its own config did not change.
    cluster.wait_for(lambda: tagged_after(cluster, topic), 30, "records with the new header")


def tagged_after(c: EmbeddedConnectCluster, topic: str) -> bool:
    """Whether the newest record of ``topic`` carries the ``tagged`` header."""
    consumer = Consumer({"bootstrap.servers": c.bootstrap, "group.id": unique("peek")})
    try:
        tp = TopicPartition(topic, 0)
        try:
            _, high = consumer.get_watermark_offsets(tp, timeout=10)
        except KafkaException:  # a fresh client may not know the partition yet: ask again later
            return False
        if high <= 0:
            return False
        consumer.assign([TopicPartition(topic, 0, high - 1)])
        m = consumer.poll(10)
        return m is not None and m.error() is None and any(k == "tagged" for k, _ in m.headers() or [])
    finally:
        consumer.close()


def test_invalid_configs_are_refused_by_any_worker(cluster: EmbeddedConnectCluster) -> None:
    f = via_follower(cluster)
    r = cluster.request(
        "PUT",
        "/connectors/bad/config",
        {"connector.class": P + "CountingSourceConnector", "tasks.max": "0"},
        worker=f,
    )
    assert r.status_code == 400 and "tasks.max" in r.json()["message"]
    r = cluster.request(
        "PUT",
        "/connector-plugins/CountingSourceConnector/config/validate",
        {"connector.class": P + "CountingSourceConnector", "tasks.max": "x"},
        worker=f,
    )
    assert r.status_code == 200 and r.json()["error_count"] >= 1


def test_pause_resume_and_stop_apply_across_the_cluster(cluster: EmbeddedConnectCluster) -> None:
    name, topic = unique("state"), unique()
    f = via_follower(cluster)
    config = {
        "connector.class": P + "CountingSourceConnector",
        "topic": topic,
        "count": "0",
        "tasks.max": "3",
    }
    cluster.request("PUT", f"/connectors/{name}/config", config, worker=f)
    cluster.wait_for(lambda: states(cluster, name) == ("RUNNING", ["RUNNING"] * 3), 30, "running")
    assert cluster.request("PUT", f"/connectors/{name}/pause", worker=f).status_code == 202
    cluster.wait_for(lambda: states(cluster, name) == ("PAUSED", ["PAUSED"] * 3), 30, "paused everywhere")
    assert cluster.request("PUT", f"/connectors/{name}/resume", worker=f).status_code == 202
    cluster.wait_for(lambda: states(cluster, name) == ("RUNNING", ["RUNNING"] * 3), 30, "resumed")
    assert cluster.request("PUT", f"/connectors/{name}/stop", worker=f).status_code == 204
    cluster.wait_for(lambda: states(cluster, name) == ("STOPPED", []), 30, "stopped, no tasks")
    assert cluster.request("GET", f"/connectors/{name}/tasks", worker=f).json() == []
    assert cluster.request("PUT", f"/connectors/{name}/resume", worker=f).status_code == 202
    cluster.wait_for(lambda: states(cluster, name) == ("RUNNING", ["RUNNING"] * 3), 30, "running again")


def test_source_offsets_can_be_read_altered_and_reset_cluster_wide(cluster: EmbeddedConnectCluster) -> None:
    name, topic = unique("offsrc"), unique()
    f = via_follower(cluster)
    config = {
        "connector.class": P + "CountingSourceConnector",
        "topic": topic,
        "count": "10",
        "tasks.max": "1",
    }
    cluster.request("PUT", f"/connectors/{name}/config", config, worker=f)
    cluster.consume(topic, 10)
    partition = {"source": name, "task": "0"}
    cluster.wait_for(
        lambda: (
            cluster.request("GET", f"/connectors/{name}/offsets", worker=f).json()["offsets"]
            == [{"partition": partition, "offset": {"n": 10}}]
        ),
        30,
        "the committed offset",
    )
    r = cluster.request(
        "PATCH",
        f"/connectors/{name}/offsets",
        {"offsets": [{"partition": partition, "offset": {"n": 3}}]},
        worker=f,
    )
    assert r.status_code == 400 and "STOPPED" in r.json()["message"]
    cluster.request("PUT", f"/connectors/{name}/stop", worker=f)
    cluster.wait_for(lambda: states(cluster, name) == ("STOPPED", []), 30, "stopped")
    r = cluster.request(
        "PATCH",
        f"/connectors/{name}/offsets",
        {"offsets": [{"partition": partition, "offset": {"n": 7}}]},
        worker=f,
    )
    assert r.status_code == 200, r.text
    for i in cluster.live():
        assert cluster.request("GET", f"/connectors/{name}/offsets", worker=i).json()["offsets"] == [
            {"partition": partition, "offset": {"n": 7}}
        ]
    cluster.request("PUT", f"/connectors/{name}/resume", worker=f)
    # Resumed at n=7: records 8, 9 and 10 come again.
    values = [m.value() for m in cluster.consume(topic, 13)]
    assert values[10:] == [b"v-8", b"v-9", b"v-10"]
    cluster.request("PUT", f"/connectors/{name}/stop", worker=f)
    cluster.wait_for(lambda: states(cluster, name) == ("STOPPED", []), 30, "stopped")
    r = cluster.request("DELETE", f"/connectors/{name}/offsets", worker=f)
    assert r.status_code == 200 and "reset successfully" in r.json()["message"]
    assert cluster.request("GET", f"/connectors/{name}/offsets", worker=f).json()["offsets"] == []


def test_sink_offsets_are_the_consumer_groups(cluster: EmbeddedConnectCluster) -> None:
    name, topic = unique("offsink"), unique()
    cluster.produce(topic, [(None, f"r{i}") for i in range(5)])
    f = via_follower(cluster)
    cluster.request(
        "PUT",
        f"/connectors/{name}/config",
        {"connector.class": P + "RecordingSinkConnector", "topics": topic},
        worker=f,
    )
    cluster.wait_for(lambda: len(plugins.PUT[name]) == 5, 30, "five records")
    cluster.wait_for(
        lambda: (
            cluster.request("GET", f"/connectors/{name}/offsets", worker=f).json()["offsets"]
            == [{"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 5}}]
        ),
        30,
        "the group's offset",
    )


def test_restarts_reach_the_workers_that_run_the_tasks(cluster: EmbeddedConnectCluster) -> None:
    name, topic = unique("restart"), unique()
    f = via_follower(cluster)
    config = {
        "connector.class": P + "CountingSourceConnector",
        "topic": topic,
        "count": "10",
        "batch": "1",
        "fail.after": "3",
        "tasks.max": "2",
    }
    cluster.request("PUT", f"/connectors/{name}/config", config, worker=f)
    cluster.wait_for(lambda: states(cluster, name) == ("RUNNING", ["FAILED", "FAILED"]), 30, "tasks FAILED")
    starts = plugins.EVENTS[name].count("start at 0") + plugins.EVENTS[name].count("start at 3")
    r = cluster.request("POST", f"/connectors/{name}/restart?includeTasks=true&onlyFailed=true", worker=f)
    assert r.status_code == 202, r.text
    body = r.json()
    assert body["connector"]["state"] == "RUNNING"
    assert [t["state"] for t in body["tasks"]] == ["RESTARTING", "RESTARTING"]
    cluster.wait_for(
        lambda: sum(1 for e in plugins.EVENTS[name] if e.startswith("start at")) >= starts + 2,
        30,
        "both tasks started again",
    )
    # One task restarted through a worker that does not run it: forwarded to its owner.
    owner = cluster.status(name)["tasks"][0]["worker_id"]
    other = next(i for i in cluster.live() if not cluster.url(i).rstrip("/").endswith(owner))
    before = sum(1 for e in plugins.EVENTS[name] if e.startswith("start at"))
    assert cluster.request("POST", f"/connectors/{name}/tasks/0/restart", worker=other).status_code == 204
    cluster.wait_for(
        lambda: sum(1 for e in plugins.EVENTS[name] if e.startswith("start at")) == before + 1,
        30,
        "task 0 started again",
    )
    assert cluster.request("POST", f"/connectors/{name}/tasks/9/restart", worker=other).status_code == 404


def test_a_connector_that_cannot_make_task_configs_fails_alone(cluster: EmbeddedConnectCluster) -> None:
    name = unique("badtasks")
    f = via_follower(cluster)
    cluster.request(
        "PUT",
        f"/connectors/{name}/config",
        {"connector.class": P + "FailingTaskConfigsConnector", "topic": "t"},
        worker=f,
    )
    cluster.wait_for(lambda: states(cluster, name)[0] == "FAILED", 30, "the connector FAILED")
    assert "cannot make task configs" in cluster.status(name)["connector"]["trace"]
    for i in cluster.live():
        assert cluster.request("GET", "/health", worker=i).status_code == 200


def test_task_configs_from_outside_the_cluster_are_refused(cluster: EmbeddedConnectCluster) -> None:
    name = unique("sign")
    cluster.request(
        "PUT",
        f"/connectors/{name}/config",
        {"connector.class": P + "CountingSourceConnector", "topic": "t", "count": "0"},
    )
    for i in cluster.live():
        r = cluster.request("PUT", f"/connectors/{name}/tasks", [{"task.class": "x"}], worker=i)
        assert r.status_code == 403, r.text
        assert "signature" in r.json()["message"]
    body = orjson.dumps([{"task.class": "x"}])
    r = cluster.client(cluster.leader()).put(
        f"/connectors/{name}/tasks",
        content=body,
        headers={
            "X-Connect-Authorization": "bm9wZQ==",
            "X-Connect-Request-Signature-Algorithm": "HmacSHA256",
        },
    )
    assert r.status_code == 403 and "invalid signature" in r.json()["message"]


def test_topics_are_tracked_cluster_wide(cluster: EmbeddedConnectCluster) -> None:
    name, topic = unique("topics"), unique()
    cluster.request(
        "PUT",
        f"/connectors/{name}/config",
        {"connector.class": P + "CountingSourceConnector", "topic": topic, "count": "3"},
    )
    cluster.consume(topic, 3)
    for i in cluster.live():
        cluster.wait_for(
            lambda i=i: (
                cluster.request("GET", f"/connectors/{name}/topics", worker=i).json()
                == {name: {"topics": [topic]}}
            ),
            30,
            "the topic tracked",
        )


def test_workers_joining_and_leaving_move_only_what_must_move(tmp_path: Path) -> None:
    with EmbeddedConnectCluster(tmp_path, workers=2) as c:
        names = [unique("spread") for _ in range(3)]
        for name in names:
            c.request(
                "PUT",
                f"/connectors/{name}/config",
                {
                    "connector.class": P + "CountingSourceConnector",
                    "topic": unique(),
                    "count": "0",
                    "tasks.max": "2",
                },
            )
        c.wait_for(
            lambda: c.settled() and all(states(c, n) == ("RUNNING", ["RUNNING"] * 2) for n in names),
            30,
            "all running, no rebalance under way",
        )
        starts = {n: list(plugins.EVENTS[n]) for n in names}
        owners = {n: [t["worker_id"] for t in c.status(n)["tasks"]] for n in names}
        third = c.start_worker()
        third_id = c.url(third).rstrip("/").split("://", 1)[1]
        c.wait_for(
            lambda: (
                c.settled()
                and all(states(c, n) == ("RUNNING", ["RUNNING"] * 2) for n in names)
                and sum(t["worker_id"] == third_id for n in names for t in c.status(n)["tasks"]) == 2
            ),
            60,
            "the new worker running its share (2 of 6 tasks)",
        )
        moved = sum(
            1
            for n in names
            for before, t in zip(owners[n], c.status(n)["tasks"], strict=True)
            if t["worker_id"] != before
        )
        restarted = sum(
            plugins.EVENTS[n][len(starts[n]) :].count(e)
            for n in names
            for e in set(plugins.EVENTS[n])
            if e.startswith("start at")
        )
        assert moved == 2 and restarted == 2, (
            moved,
            restarted,
            owners,
            {n: [t["worker_id"] for t in c.status(n)["tasks"]] for n in names},
            {n: plugins.EVENTS[n] for n in names},
            starts,
        )
        # A worker that leaves: its tasks run on the others.
        c.stop_worker(third)
        c.wait_for(
            lambda: (
                all(states(c, n) == ("RUNNING", ["RUNNING"] * 2) for n in names)
                and all(t["worker_id"] != third_id for n in names for t in c.status(n)["tasks"])
            ),
            60,
            "the work back on the first two",
        )


def test_a_source_connector_can_keep_its_offsets_in_its_own_topic(cluster: EmbeddedConnectCluster) -> None:
    name, topic, offsets_topic = unique("own"), unique(), unique("own-offsets")
    config = {
        "connector.class": P + "CountingSourceConnector",
        "topic": topic,
        "count": "4",
        "offsets.storage.topic": offsets_topic,
    }
    cluster.request("PUT", f"/connectors/{name}/config", config, worker=cluster.follower())
    cluster.consume(topic, 4)
    key = orjson.dumps([name, {"source": name, "task": "0"}], option=orjson.OPT_SORT_KEYS)
    cluster.wait_for(
        lambda: (
            cluster.request("GET", f"/connectors/{name}/offsets").json()["offsets"]
            == [{"partition": {"source": name, "task": "0"}, "offset": {"n": 4}}]
        ),
        30,
        "the committed offset",
    )
    assert key in keys_in(cluster, offsets_topic)
    # The worker's topic gets them too, so the connector can move back without losing them.
    assert key in keys_in(cluster, "connect-offsets")


def test_every_worker_reports_the_rebalance_it_took_part_in(cluster: EmbeddedConnectCluster) -> None:
    """connect-worker-rebalance-metrics on /metrics: the same epoch and leader everywhere."""
    from prometheus_client.parser import text_string_to_metric_families

    def rebalance_metrics(index: int) -> dict[str, object]:
        text = cluster.client(index).get("/metrics").text
        out: dict[str, object] = {}
        for family in text_string_to_metric_families(text):
            for s in family.samples:
                if s.name.startswith("kafka_connect_connect_worker_rebalance_metrics"):
                    short = s.name.removeprefix("kafka_connect_connect_worker_rebalance_metrics_")
                    out[short] = s.labels.get("leader_name") if short == "leader_info" else s.value
        return out

    def agreed() -> bool:
        seen = [rebalance_metrics(i) for i in cluster.live()]
        return all(m.get("rebalancing") == 0 for m in seen) and len({m.get("epoch") for m in seen}) == 1

    deadline = time.monotonic() + 60
    while not (cluster.settled() and agreed()):
        assert time.monotonic() < deadline, "the workers never agreed on a generation"
        time.sleep(0.2)
    leader_url = cluster.url(cluster.leader())
    for i in cluster.live():
        m = rebalance_metrics(i)
        assert m["completed_rebalances_total"] >= 1  # type: ignore[operator]
        assert m["epoch"] == cluster.workers[i].herder.generation
        assert str(m["leader_info"]).rstrip("/") == leader_url.rstrip("/")
        assert m["rebalance_max_time_ms"] > 0  # type: ignore[operator]
        assert m["time_since_last_rebalance_ms"] >= 0  # type: ignore[operator]
