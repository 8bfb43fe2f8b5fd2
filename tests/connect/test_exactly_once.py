"""Exactly-once source connectors (KIP-618) in one process: a broker and two distributed
workers with ``exactly.once.source.support=enabled``, judged by confluent-kafka's
read_committed consumer and transactional producer.

- validation of ``exactly.once.support=required`` and ``transaction.boundary=connector``
  with Kafka's messages;
- records and offsets committed in one transaction per poll, tasks spread over both
  workers (the follower's tasks ask the leader to fence over the signed internal
  endpoint);
- connector-defined boundaries: an aborted transaction's records are never read, its
  offsets are committed;
- a new task generation fences the producers of the old one;
- sink consumers read with the isolation level their connector sets.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson
import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Producer, TopicPartition

from connect.api import (
    ConnectorTransactionBoundaries,
    ExactlyOnceSupport,
    Schema,
    SourceConnector,
    SourceRecord,
    SourceTask,
    Task,
)
from connect.api.errors import ConnectException
from connect.runtime.config import DistributedConfig
from connect.runtime.plugins import Plugins
from connect.runtime.validation import validate
from sluiceway.broker_tools import transactions as txn_tool
from sluiceway.embedded import EmbeddedConnectCluster, distributed_worker_defaults
from tests.connect import plugins
from tests.support import unique

P = "tests.connect.plugins."
HERE = "tests.connect.test_exactly_once."
GROUP = "connect-cluster"


# -- plugins of these tests -------------------------------------------------------------------


class BoundarySourceConnector(SourceConnector):
    """Records r-1..r-<count> of one source partition; the task commits after every record
    named in ``commit.at`` and aborts after those in ``abort.at`` (connector-defined
    boundaries)."""

    def version(self) -> str:
        return "test"

    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def task_class(self) -> type[Task]:
        return BoundarySourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]

    def stop(self) -> None:
        pass

    def exactly_once_support(self, props: Mapping[str, str]) -> ExactlyOnceSupport | None:
        value = props.get("eos")
        return None if value is None else ExactlyOnceSupport(value)

    def can_define_transaction_boundaries(self, props: Mapping[str, str]) -> ConnectorTransactionBoundaries:
        return ConnectorTransactionBoundaries.SUPPORTED


def _numbers(text: str | None) -> set[int]:
    return {int(n) for n in (text or "").split(",") if n.strip()}


class BoundarySourceTask(SourceTask):
    def version(self) -> str:
        return "test"

    def start(self, props: dict[str, str]) -> None:
        self.topic = props["topic"]
        self.count = int(props["count"])
        self.commit_at, self.abort_at = _numbers(props.get("commit.at")), _numbers(props.get("abort.at"))
        offset = self.context.offset_storage_reader().offset({"boundary": props["name"]})
        self.n = int(offset["n"]) if offset else 0
        self.partition = {"boundary": props["name"]}

    def poll(self) -> list[SourceRecord] | None:
        if self.n >= self.count:
            time.sleep(0.05)
            return None
        context = self.context.transaction_context()
        assert context is not None
        out = []
        for _ in range(min(4, self.count - self.n)):
            self.n += 1
            record = SourceRecord(
                self.partition,
                {"n": self.n},
                self.topic,
                value_schema=Schema.STRING_SCHEMA,
                value=f"r-{self.n}",
            )
            if self.n in self.commit_at:
                context.commit_transaction(record)
            if self.n in self.abort_at:
                context.abort_transaction(record)
            out.append(record)
        return out

    def stop(self) -> None:
        pass


# -- helpers ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedConnectCluster]:
    with EmbeddedConnectCluster(
        tmp_path_factory.mktemp("eos"), workers=2, worker_config={"exactly.once.source.support": "enabled"}
    ) as c:
        yield c


def committed_values(bootstrap: str, topic: str, isolation: str = "read_committed") -> list[str]:
    """Every value of ``topic`` a consumer with ``isolation`` reads, up to the partitions' ends."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique("judge"),
            "enable.auto.commit": False,
            "isolation.level": isolation,
            "enable.partition.eof": True,
        }
    )
    try:
        partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        values: list[str] = []
        left, deadline = set(partitions), time.monotonic() + 30
        while left and time.monotonic() < deadline:
            for m in consumer.consume(500, 0.2):
                if m.error() is not None:
                    if m.error().code() == KafkaError._PARTITION_EOF:
                        left.discard(m.partition())
                    continue
                values.append(m.value().decode())
        assert not left, f"partitions {left} of {topic} not read to their end"
        return values
    finally:
        consumer.close()


def config_record(bootstrap: str, key: str) -> Any:
    """The newest value of ``key`` in the config topic, read committed."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": unique("cfg"), "enable.partition.eof": True}
    )
    try:
        consumer.assign([TopicPartition("connect-configs", 0, OFFSET_BEGINNING)])
        found: Any = None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            m = consumer.poll(0.2)
            if m is None:
                continue
            if m.error() is not None:
                if m.error().code() == KafkaError._PARTITION_EOF:
                    return found
                continue
            if m.key() == key.encode():
                found = orjson.loads(m.value()) if m.value() is not None else None
        return found
    finally:
        consumer.close()


def running(c: EmbeddedConnectCluster, name: str, tasks: int) -> bool:
    s = c.status(name)
    return (
        bool(s)
        and s["connector"]["state"] == "RUNNING"
        and [t["state"] for t in s["tasks"]] == ["RUNNING"] * tasks
    )


# -- validation ----------------------------------------------------------------------------


def _issues(worker_support: str, config: dict[str, str]) -> dict[str, list[str]]:
    worker = DistributedConfig.parse(
        {**distributed_worker_defaults("127.0.0.1:9"), "exactly.once.source.support": worker_support}
    )
    result = validate(Plugins(), worker, {"name": "v", **config})
    out: dict[str, list[str]] = {}
    for key, message in result.issues():
        out.setdefault(key, []).append(message)
    return out


def test_required_exactly_once_is_checked_with_kafkas_messages() -> None:
    source = {"connector.class": HERE + "BoundarySourceConnector", "topic": "t", "count": "1"}
    assert _issues("enabled", {**source, "exactly.once.support": "required", "eos": "SUPPORTED"}) == {}
    assert _issues("enabled", {**source, "exactly.once.support": "REQUIRED", "eos": "UNSUPPORTED"}) == {
        "exactly.once.support": [
            "The connector does not support exactly-once semantics with the provided configuration."
        ]
    }
    unknown = _issues("enabled", {**source, "exactly.once.support": "required"})["exactly.once.support"]
    assert unknown[0].startswith("The connector does not implement the API required for preflight validation")
    assert _issues("preparing", {**source, "exactly.once.support": "required", "eos": "SUPPORTED"}) == {
        "exactly.once.support": ["This worker does not have exactly-once source support enabled."]
    }
    # requested is never checked; a bad value is reported once, by the field.
    assert _issues("disabled", {**source, "eos": "UNSUPPORTED"}) == {}
    assert list(_issues("enabled", {**source, "exactly.once.support": "always"})) == ["exactly.once.support"]


def test_connector_boundaries_need_a_connector_that_draws_them() -> None:
    counting = {"connector.class": P + "CountingSourceConnector", "topic": "t"}
    assert _issues("enabled", {**counting, "transaction.boundary": "connector"}) == {
        "transaction.boundary": [
            "The connector does not support connector-defined transaction boundaries with the given "
            "configuration. Please reconfigure it to use a different transaction boundary definition."
        ]
    }
    boundary = {"connector.class": HERE + "BoundarySourceConnector", "topic": "t", "count": "1"}
    assert _issues("enabled", {**boundary, "transaction.boundary": "Connector"}) == {}
    assert list(_issues("enabled", {**counting, "transaction.boundary.interval.ms": "-1"})) == [
        "transaction.boundary.interval.ms"
    ]


def test_shipped_sources_declare_where_exactly_once_holds(tmp_path: Path) -> None:
    file_source = {
        "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
        "topic": "t",
        "exactly.once.support": "required",
    }
    assert _issues("enabled", {**file_source, "file": str(tmp_path / "in.txt")}) == {}
    assert list(_issues("enabled", file_source)) == ["exactly.once.support"]  # standard input
    jdbc = {
        "connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector",
        "connection.url": f"jdbc:sqlite:{tmp_path / 'db.sqlite'}",
        "topic.prefix": "jdbc-",
        "incrementing.column.name": "id",
        "exactly.once.support": "required",
    }
    assert "exactly.once.support" not in _issues("enabled", {**jdbc, "mode": "incrementing"})
    assert "exactly.once.support" in _issues("enabled", {**jdbc, "mode": "bulk"})


# -- a cluster running exactly-once sources -------------------------------------------------------


def test_records_and_offsets_commit_together(cluster: EmbeddedConnectCluster) -> None:
    name, topic = unique("eos"), unique("eos-t")
    config = {
        "connector.class": P + "CountingSourceConnector",
        "topic": topic,
        "count": "300",
        "batch": "7",
        "tasks.max": "2",
    }
    assert cluster.request("PUT", f"/connectors/{name}/config", config).status_code == 201
    cluster.wait_for(lambda: running(cluster, name, 2), 30, "two tasks RUNNING")
    # Both workers run a task: one of them asked the leader to fence over the internal endpoint.
    workers = {t["worker_id"] for t in cluster.status(name)["tasks"]}
    assert len(workers) == 2, workers
    cluster.wait_for(
        lambda: len(committed_values(cluster.bootstrap, topic)) >= 600, 30, "every record committed"
    )
    values = committed_values(cluster.bootstrap, topic)
    assert sorted(values) == sorted(f"v-{n}" for n in range(1, 301) for _ in range(2))
    assert config_record(cluster.bootstrap, f"tasks-fencing-{name}") == {"task-count": 2}

    def offsets() -> list[Any]:
        body = cluster.request("GET", f"/connectors/{name}/offsets").json()
        return sorted(o["offset"]["n"] for o in body["offsets"])

    cluster.wait_for(lambda: offsets() == [300, 300], 20, "both tasks' offsets at 300")
    # The transactional ids as Kafka names them: the tasks', and the leader's for the config topic.
    listed: list[str] = []
    txn_tool.run(
        txn_tool.build_parser("t").parse_args(["--bootstrap-server", cluster.bootstrap, "list"]),
        listed.append,
    )
    ids = {line.split()[0] for line in "".join(listed).splitlines()[1:] if line.strip()}
    assert {f"{GROUP}-{name}-0", f"{GROUP}-{name}-1", f"connect-cluster-{GROUP}"} <= ids, ids
    # Kafka's transaction-size metrics: a transaction per poll of 7 records (the last, 300 % 7).
    metrics = cluster.request("GET", "/metrics").text + cluster.request("GET", "/metrics", worker=1).text
    sizes = {
        line.split("{")[0].rsplit("_", 1)[1]: float(line.rsplit(" ", 1)[1])
        for line in metrics.splitlines()
        if line.startswith("kafka_connect_source_task_metrics_transaction_size_")
        and f'connector="{name}"' in line
    }
    assert sizes == {"avg": pytest.approx(300 / 43), "max": 7.0, "min": 6.0}, sizes
    # The fencing endpoint is internal: unsigned requests are refused.
    r = cluster.request("PUT", f"/connectors/{name}/fence")
    assert r.status_code == 403 and "signature" in r.json()["message"], r.text


def offset_records(bootstrap: str, topic: str, connector: str) -> list[Any]:
    """The offsets ``connector`` has in offsets topic ``topic``, read committed, in order."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": unique("off"), "enable.partition.eof": True}
    )
    try:
        partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        found: list[Any] = []
        left, deadline = set(partitions), time.monotonic() + 20
        while left and time.monotonic() < deadline:
            for m in consumer.consume(100, 0.2):
                if m.error() is not None:
                    if m.error().code() == KafkaError._PARTITION_EOF:
                        left.discard(m.partition())
                    continue
                if orjson.loads(m.key())[0] == connector and m.value() is not None:
                    found.append(orjson.loads(m.value()))
        return found
    finally:
        consumer.close()


def test_a_connectors_own_offsets_topic_is_written_in_the_transaction(
    cluster: EmbeddedConnectCluster,
) -> None:
    name, topic, own = unique("own-off"), unique("own-off-t"), unique("own-offsets")
    config = {
        "connector.class": P + "CountingSourceConnector",
        "topic": topic,
        "count": "30",
        "offsets.storage.topic": own,
    }
    assert cluster.request("PUT", f"/connectors/{name}/config", config).status_code == 201
    cluster.wait_for(lambda: len(committed_values(cluster.bootstrap, topic)) == 30, 30, "30 records")
    # Committed in the connector's topic by the task's transactions, then copied to the worker's.
    cluster.wait_for(
        lambda: offset_records(cluster.bootstrap, own, name)[-1:] == [{"n": 30}], 20, "own topic"
    )
    # One offsets record per transaction, its poll's last (batches of 5), written as the
    # poll's first record went: a transaction holds no other offsets of its source partition.
    assert offset_records(cluster.bootstrap, own, name) == [{"n": n} for n in range(5, 31, 5)]
    cluster.wait_for(
        lambda: offset_records(cluster.bootstrap, "connect-offsets", name)[-1:] == [{"n": 30}],
        20,
        "worker's topic",
    )


def test_interval_boundaries_and_commit_record(cluster: EmbeddedConnectCluster) -> None:
    name, topic = unique("ivl"), unique("ivl-t")
    config = {
        "connector.class": P + "CountingSourceConnector",
        "topic": topic,
        "count": "40",
        "batch": "3",
        "commit.record": "true",
        "transaction.boundary": "interval",
        "transaction.boundary.interval.ms": "200",
    }
    assert cluster.request("PUT", f"/connectors/{name}/config", config).status_code == 201
    cluster.wait_for(lambda: len(plugins.COMMITTED[name]) >= 40, 30, "commit_record for every record")
    assert sorted(committed_values(cluster.bootstrap, topic)) == sorted(f"v-{n}" for n in range(1, 41))
    # commit_record is called once the transaction is committed, with where Kafka put the record.
    metadata = [m for _, m in plugins.COMMITTED[name]]
    assert all(m is not None and m.topic == topic for m in metadata)
    assert len({(m.partition, m.offset) for m in metadata if m is not None}) == 40


def test_connector_defined_boundaries_abort_drops_records_not_offsets(
    cluster: EmbeddedConnectCluster,
) -> None:
    name, topic = unique("bnd"), unique("bnd-t")
    config = {
        "connector.class": HERE + "BoundarySourceConnector",
        "topic": topic,
        "count": "20",
        "commit.at": "5,15,20",
        "abort.at": "10",
        "transaction.boundary": "connector",
    }
    assert cluster.request("PUT", f"/connectors/{name}/config", config).status_code == 201
    expected = [f"r-{n}" for n in range(1, 21) if not 6 <= n <= 10]
    cluster.wait_for(lambda: committed_values(cluster.bootstrap, topic) == expected, 30, "committed records")
    body = cluster.request("GET", f"/connectors/{name}/offsets").json()
    assert [o["offset"] for o in body["offsets"]] == [{"n": 20}]


def test_a_new_task_generation_fences_the_old_producers(cluster: EmbeddedConnectCluster) -> None:
    name, topic = unique("fence"), unique("fence-t")
    config = {
        "connector.class": P + "CountingSourceConnector",
        "topic": topic,
        "count": "10",
        "tasks.max": "3",
    }
    assert cluster.request("PUT", f"/connectors/{name}/config", config).status_code == 201
    cluster.wait_for(lambda: running(cluster, name, 3), 30, "three tasks RUNNING")
    cluster.wait_for(lambda: len(committed_values(cluster.bootstrap, topic)) == 30, 30, "30 records")
    # A zombie of task 2: a producer of its transactional id, with a transaction open.
    zombie = Producer({"bootstrap.servers": cluster.bootstrap, "transactional.id": f"{GROUP}-{name}-2"})
    zombie.init_transactions(30)
    zombie.begin_transaction()
    zombie.produce(topic, b"zombie")
    zombie.flush(10)
    # Two tasks now: before they start, the leader fences the three of the old generation.
    r = cluster.request("PUT", f"/connectors/{name}/config", {**config, "tasks.max": "2"})
    assert r.status_code == 200, r.text
    cluster.wait_for(
        lambda: config_record(cluster.bootstrap, f"tasks-fencing-{name}") == {"task-count": 2},
        30,
        "the new task count record",
    )
    with pytest.raises(KafkaException) as fenced:
        zombie.commit_transaction(30)
    assert fenced.value.args[0].fatal() or fenced.value.args[0].code() in (
        KafkaError._FENCED,
        KafkaError.PRODUCER_FENCED,
        KafkaError.INVALID_PRODUCER_EPOCH,
    )
    assert "zombie" not in committed_values(cluster.bootstrap, topic)
    cluster.wait_for(lambda: running(cluster, name, 2), 30, "two tasks RUNNING")
    # Offsets of a stopped connector change only after its last generation was fenced.
    assert cluster.request("PUT", f"/connectors/{name}/stop").status_code == 204
    cluster.wait_for(lambda: cluster.status(name)["tasks"] == [], 30, "no tasks")
    r = cluster.request("DELETE", f"/connectors/{name}/offsets")
    assert r.status_code == 200, r.text
    assert config_record(cluster.bootstrap, f"tasks-fencing-{name}") == {"task-count": 0}


def test_sink_consumers_take_the_connectors_isolation_level(cluster: EmbeddedConnectCluster) -> None:
    topic = unique("iso-t")
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "transactional.id": unique("iso")})
    producer.init_transactions(30)
    for value, commit in ((b"c-1", True), (b"a-1", False), (b"c-2", True)):
        producer.begin_transaction()
        producer.produce(topic, value)
        producer.flush(10)
        if commit:
            producer.commit_transaction(30)
        else:
            producer.abort_transaction(30)
    seen: dict[str, list[str]] = {}
    for level in ("read_committed", "read_uncommitted"):
        name = unique("sink")
        config = {
            "connector.class": P + "RecordingSinkConnector",
            "topics": topic,
            "consumer.override.isolation.level": level,
        }
        assert cluster.request("PUT", f"/connectors/{name}/config", config).status_code == 201
        want = 2 if level == "read_committed" else 3
        cluster.wait_for(lambda n=name, w=want: len(plugins.PUT[n]) >= w, 30, f"the {level} sink's records")
        seen[level] = [r.value for r in plugins.PUT[name]]
    assert seen == {"read_committed": ["c-1", "c-2"], "read_uncommitted": ["c-1", "a-1", "c-2"]}


def test_a_task_may_not_write_its_own_offsets_topic(cluster: EmbeddedConnectCluster) -> None:
    name = unique("own")
    config = {"connector.class": P + "CountingSourceConnector", "topic": "connect-offsets", "count": "3"}
    assert cluster.request("PUT", f"/connectors/{name}/config", config).status_code == 201

    def failed() -> bool:
        tasks = cluster.status(name).get("tasks") or []
        return bool(tasks) and tasks[0]["state"] == "FAILED"

    cluster.wait_for(failed, 30, "the task FAILED")
    assert "may not produce to their own offsets topics" in cluster.status(name)["tasks"][0]["trace"]


def test_the_config_store_tracks_fencing_as_kafka(shared_broker: Any) -> None:
    """Task configs put a connector in pending fencing and count a generation; its task count
    record takes it out. The leader's writes are transactional: a second claim fences the first."""
    from connect.runtime.status import ConnectorTaskId
    from connect.storage.kafka_configs import KafkaConfigBackingStore

    topic = unique("cfg")

    def store() -> KafkaConfigBackingStore:
        s = KafkaConfigBackingStore(
            shared_broker.bootstrap,
            topic,
            replication_factor=1,
            client_id_base=unique("w"),
            transactional_id=f"connect-cluster-{topic}",
        )
        s.start()
        return s

    first = store()
    try:
        first.claim_write_privileges()
        first.put_connector_config("c", {"connector.class": "x"})
        first.put_task_configs("c", [{"a": "1"}, {"a": "2"}])
        s = first.snapshot()
        assert "c" in s.pending_fencing and s.task_generations["c"] == 0 and "c" not in s.task_count_records
        first.put_task_count_record("c", 2)
        s = first.snapshot()
        assert "c" not in s.pending_fencing and s.task_count_records["c"] == 2
        first.put_task_configs("c", [{"a": "3"}])
        s = first.snapshot()
        assert "c" in s.pending_fencing and s.task_generations["c"] == 1
        assert s.task_config(ConnectorTaskId("c", 0)) == {"a": "3"}
        second = store()  # a new leader
        try:
            second.claim_write_privileges()
            with pytest.raises(ConnectException, match="fencable send"):
                first.put_task_count_record("c", 1)  # the old leader is fenced
            second.put_task_count_record("c", 1)
            assert second.snapshot().task_count_records["c"] == 1
        finally:
            second.stop()
    finally:
        first.stop()
