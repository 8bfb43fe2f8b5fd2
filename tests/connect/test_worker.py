"""The worker with a real broker: source and sink pipelines, offsets, errors, DLQ, transforms.

Everything runs for real in this process: Sluiceway's broker on its own thread, a
standalone worker with its REST API, and the test plugins of ``tests.connect.plugins``
loaded by dotted name.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from confluent_kafka.admin import AdminClient, ConfigResource

from connect.runtime.switch_interval import WORKER_SWITCH_INTERVAL_S
from sluiceway.embedded import EmbeddedConnect
from tests.connect import plugins
from tests.support import unique

P = "tests.connect.plugins."
STRING = "org.apache.kafka.connect.storage.StringConverter"
JSON = "org.apache.kafka.connect.json.JsonConverter"


@pytest.fixture(scope="module")
def connect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedConnect]:
    work = tmp_path_factory.mktemp("worker")
    secrets = work / "secrets.properties"
    secrets.write_text(f"input={work / 'from-provider.txt'}\n")
    with EmbeddedConnect(
        work,
        {
            "config.providers": "file,env",
            "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
            "config.providers.env.class": "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
        },
    ) as c:
        yield c


def values(messages: list) -> list[str]:  # type: ignore[type-arg]
    return [m.value().decode() for m in messages]


def sink_values(name: str) -> list[str]:
    return [str(r.value) for r in plugins.PUT[name]]


def test_file_source_to_topic_to_file_sink(connect: EmbeddedConnect, tmp_path: Path) -> None:
    src, out, topic = tmp_path / "in.txt", tmp_path / "out.txt", unique()
    lines = [f"line {i}" for i in range(1000)]
    src.write_text("\n".join(lines) + "\n")
    connect.create_connector(
        unique("src"), {"connector.class": "FileStreamSource", "file": str(src), "topic": topic}
    )
    sink = unique("sink")
    connect.create_connector(
        sink,
        {
            "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
            "file": str(out),
            "topics": topic,
        },
    )
    connect.wait_for(
        lambda: out.exists() and out.read_text().count("\n") == 1000, 30, "1000 lines in the sink"
    )
    assert out.read_text().splitlines() == lines
    # Appended lines flow too: the source tails its file.
    with open(src, "a") as f:
        f.write("late line\n")
    connect.wait_for(lambda: out.read_text().splitlines()[-1:] == ["late line"], 15, "the appended line")


@pytest.mark.parametrize("header", [False, True])
def test_a_full_producer_queue_loses_and_repeats_no_line(
    connect: EmbeddedConnect, tmp_path: Path, header: bool
) -> None:
    # The file source's polls take the runner's one-loop path (with InsertHeader too: every
    # record holds the same headers); a queue of 50 messages fills again and again within a
    # poll of 1,000 lines, and each time the loop serves the producer and resumes at the
    # record it could not hand over.
    src, topic, name = tmp_path / "in.txt", unique(), unique("fullq")
    lines = [f"line {i}" for i in range(3000)]
    src.write_text("\n".join(lines) + "\n")
    chain = {
        "transforms": "h",
        "transforms.h.type": "org.apache.kafka.connect.transforms.InsertHeader",
        "transforms.h.header": "pipeline",
        "transforms.h.value.literal": "bench",
    }
    connect.create_connector(
        name,
        {
            "connector.class": "FileStreamSource",
            "file": str(src),
            "topic": topic,
            "batch.size": "1000",
            "producer.override.queue.buffering.max.messages": "50",
            "producer.override.linger.ms": "20",
            **(chain if header else {}),
        },
    )
    got = connect.consume(topic, 3000)
    assert values(got) == lines
    assert {str(m.headers()) for m in got} == {str([("pipeline", b"bench")] if header else None)}
    connect.wait_for(
        lambda: (
            connect.request("GET", f"/connectors/{name}/offsets").json()["offsets"]
            == [{"partition": {"filename": str(src)}, "offset": {"position": src.stat().st_size}}]
        ),
        15,
        "the end of the file committed",
    )


def test_source_offsets_are_committed_and_resumed(connect: EmbeddedConnect) -> None:
    name, topic = unique("count"), unique()
    connect.create_connector(
        name, {"connector.class": P + "CountingSourceConnector", "topic": topic, "count": "20"}
    )
    connect.wait_for_running(name)
    assert values(connect.consume(topic, 20)) == [f"v-{i}" for i in range(1, 21)]
    offsets_url = f"/connectors/{name}/offsets"
    connect.wait_for(
        lambda: (
            connect.request("GET", offsets_url).json()["offsets"]
            == [{"partition": {"source": name, "task": "0"}, "offset": {"n": 20}}]
        ),
        15,
        "offset 20 committed",
    )
    # A restart of the task starts where the committed offset says, and a bigger count adds only new records.
    r = connect.request(
        "PUT",
        f"/connectors/{name}/config",
        {"connector.class": P + "CountingSourceConnector", "topic": topic, "count": "25"},
    )
    assert r.status_code == 200
    connect.wait_for(lambda: "start at 20" in plugins.EVENTS[name], 15, "restart at offset 20")
    assert values(connect.consume(topic, 25)) == [f"v-{i}" for i in range(1, 26)]


@pytest.mark.parametrize("commit_record", ["false", "true"])
def test_offsets_of_records_a_transformation_drops_are_committed(
    connect: EmbeddedConnect, commit_record: str
) -> None:
    """As Kafka's recordDropped: a filtered record counts as done, so a source whose records
    are all filtered still moves its committed offset on (and commit_record hears of each)."""
    name, topic = unique("filtered"), unique()
    connect.create_connector(
        name,
        {
            "connector.class": P + "CountingSourceConnector",
            "topic": topic,
            "count": "10",
            "commit.record": commit_record,
            "transforms": "drop",
            "transforms.drop.type": "org.apache.kafka.connect.transforms.Filter",
        },
    )
    connect.wait_for(
        lambda: (
            connect.request("GET", f"/connectors/{name}/offsets").json()["offsets"]
            == [{"partition": {"source": name, "task": "0"}, "offset": {"n": 10}}]
        ),
        15,
        "offset 10 committed with every record filtered",
    )
    if commit_record == "true":
        assert [(r.value, m) for r, m in plugins.COMMITTED[name]] == [(f"v-{i}", None) for i in range(1, 11)]


def test_commit_record_gets_where_kafka_stored_each_record(connect: EmbeddedConnect) -> None:
    name, topic = unique("precise"), unique()
    connect.create_connector(
        name,
        {
            "connector.class": P + "CountingSourceConnector",
            "topic": topic,
            "count": "12",
            "commit.record": "true",
        },
    )
    connect.wait_for(lambda: len(plugins.COMMITTED[name]) == 12, 15, "12 commit_record calls")
    got = [(r.value, m.topic, m.partition, m.offset) for r, m in plugins.COMMITTED[name] if m is not None]
    assert got == [(f"v-{i}", topic, 0, i - 1) for i in range(1, 13)]


def test_headers_keys_and_json_converter(connect: EmbeddedConnect) -> None:
    name, topic = unique("json"), unique()
    connect.create_connector(
        name,
        {
            "connector.class": P + "CountingSourceConnector",
            "topic": topic,
            "count": "3",
            "headers": "true",
            "value.converter": JSON,
            "key.converter": STRING,
            "value.converter.schemas.enable": "true",
        },
    )
    msgs = connect.consume(topic, 3)
    assert msgs[0].key() == b"k-1"
    assert orjson.loads(msgs[0].value()) == {
        "schema": {"type": "string", "optional": False},
        "payload": "v-1",
    }
    assert msgs[0].headers() == [("n", b"1"), ("source", name.encode())]


@pytest.mark.parametrize("tolerance", ["all", "none"])
def test_a_key_that_does_not_convert_is_handled_alone(connect: EmbeddedConnect, tolerance: str) -> None:
    # Keys of a poll are converted as a batch; the one key that does not fit its schema is
    # converted again on its own, where the error handling skips it or fails the task.
    name, topic = unique("badkey"), unique()
    connect.create_connector(
        name,
        {
            "connector.class": P + "CountingSourceConnector",
            "topic": topic,
            "count": "5",
            "bad.key.at": "3",
            "key.converter": JSON,
            "key.converter.schemas.enable": "false",
            "errors.tolerance": tolerance,
        },
    )
    if tolerance == "none":
        status = connect.wait_for_state(name, "RUNNING", 1, task_state="FAILED")
        assert "Tolerance exceeded in error handler" in status["tasks"][0]["trace"]
        return
    msgs = connect.consume(topic, 4)
    assert [(m.key(), m.value()) for m in msgs] == [
        (b'"k-1"', b"v-1"),
        (b'"k-2"', b"v-2"),
        (b'"k-1"', b"v-4"),
        (b'"k-2"', b"v-5"),
    ]


def test_failing_source_task_goes_failed_with_its_trace(connect: EmbeddedConnect) -> None:
    bad, good, topic = unique("bad"), unique("good"), unique()
    connect.create_connector(
        bad,
        {"connector.class": P + "CountingSourceConnector", "topic": topic, "count": "50", "fail.after": "10"},
    )
    connect.create_connector(
        good, {"connector.class": P + "CountingSourceConnector", "topic": topic + "-ok", "count": "5"}
    )
    status = connect.wait_for_state(bad, "RUNNING", 1, task_state="FAILED")
    trace = status["tasks"][0]["trace"]
    assert "ConnectException" in trace and "fails at record 10" in trace
    # The worker and the other connector carry on.
    assert values(connect.consume(topic + "-ok", 5)) == [f"v-{i}" for i in range(1, 6)]
    assert connect.status(good)["tasks"][0]["state"] == "RUNNING"
    # Records before the failure were delivered; a task restart resumes after the committed offset.
    r = connect.request("POST", f"/connectors/{bad}/tasks/0/restart")
    assert r.status_code == 204
    connect.wait_for(lambda: any(e.startswith("start at ") for e in plugins.EVENTS[bad][1:]), 15, "a restart")


def test_connector_that_cannot_start_is_failed(connect: EmbeddedConnect) -> None:
    name = unique("nostart")
    connect.create_connector(name, {"connector.class": P + "FailingStartConnector", "topic": unique()})
    status = connect.wait_for_state(name, "FAILED", 0)
    assert "refuses to start" in status["connector"]["trace"]


def test_more_task_configs_than_tasks_max_fails_the_connector(connect: EmbeddedConnect) -> None:
    name = unique("greedy")
    connect.create_connector(
        name, {"connector.class": P + "TooManyTasksConnector", "topic": unique(), "tasks.max": "2"}
    )
    status = connect.wait_for_state(name, "FAILED", 0)
    assert "more than tasks.max=2" in status["connector"]["trace"]


def test_sink_retries_retriable_put_with_the_same_batch(connect: EmbeddedConnect) -> None:
    name, topic = unique("retry"), unique()
    connect.produce(topic, [(None, f"r{i}") for i in range(10)])
    connect.create_connector(
        name,
        {
            "connector.class": P + "RecordingSinkConnector",
            "topics": topic,
            "retriable.failures": "2",
            "retry.timeout.ms": "200",
        },
    )
    connect.wait_for(lambda: len(plugins.PUT[name]) == 10, 20, "10 records put")
    assert sink_values(name) == [f"r{i}" for i in range(10)]
    assert [e for e in plugins.EVENTS[name] if e.startswith("retriable")] == ["retriable 10", "retriable 10"]


def test_sink_commits_nothing_of_a_batch_waiting_for_a_retry(connect: EmbeddedConnect) -> None:
    """A batch put() has refused with RetriableException is not delivered: periodic commits
    (every 500 ms here) must not pass it, or a crash would lose it."""
    name, topic = unique("retry-commit"), unique()
    connect.produce(topic, [(None, f"q{i}") for i in range(4)])
    connect.create_connector(
        name,
        {
            "connector.class": P + "RecordingSinkConnector",
            "topics": topic,
            "retriable.failures": "12",
            "retry.timeout.ms": "200",
        },
    )
    connect.wait_for(
        lambda: sum(e.startswith("retriable") for e in plugins.EVENTS[name]) >= 8, 20, "several retries"
    )
    # Several commit intervals have passed while the batch waited: nothing is committed.
    offsets = connect.request("GET", f"/connectors/{name}/offsets").json()["offsets"]
    assert offsets == []
    connect.wait_for(lambda: len(plugins.PUT[name]) == 4, 20, "the batch delivered at last")
    connect.wait_for(
        lambda: (
            connect.request("GET", f"/connectors/{name}/offsets").json()["offsets"]
            == [{"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 4}}]
        ),
        15,
        "offset 4 committed once delivered",
    )


def test_a_sink_refusing_every_call_for_a_while_loses_no_record(connect: EmbeddedConnect) -> None:
    """While a refused batch waits, put() is not called with anything else: an empty put
    refused too must not replace the waiting batch (its records would be lost)."""
    name, topic = unique("down"), unique()
    connect.produce(topic, [(None, f"d{i}") for i in range(10)])
    connect.create_connector(
        name,
        {
            "connector.class": P + "RecordingSinkConnector",
            "topics": topic,
            "down.calls": "8",
            "retry.timeout.ms": "100",
        },
    )
    connect.wait_for(lambda: len(plugins.PUT[name]) == 10, 20, "every record once the sink is back")
    assert sink_values(name) == [f"d{i}" for i in range(10)]


def test_sink_rewind_replays_from_the_requested_offset(connect: EmbeddedConnect) -> None:
    name, topic = unique("rewind"), unique()
    connect.produce(topic, [(None, f"w{i}") for i in range(5)])
    connect.create_connector(
        name, {"connector.class": P + "RecordingSinkConnector", "topics": topic, "rewind.once": "true"}
    )
    connect.wait_for(lambda: len(plugins.PUT[name]) >= 5, 20, "records after the rewind")
    time.sleep(0.3)
    assert sink_values(name) == [f"w{i}" for i in range(5)]  # the first batch was rewound, then read again
    assert "rewind" in plugins.EVENTS[name]


def test_sink_commits_offsets_and_the_group_resumes(connect: EmbeddedConnect) -> None:
    name, topic = unique("resume"), unique()
    connect.produce(topic, [(None, f"a{i}") for i in range(7)])
    connect.create_connector(name, {"connector.class": P + "RecordingSinkConnector", "topics": topic})
    connect.wait_for(lambda: len(plugins.PUT[name]) == 7, 20, "7 records put")
    offsets_url = f"/connectors/{name}/offsets"
    connect.wait_for(
        lambda: (
            connect.request("GET", offsets_url).json()["offsets"]
            == [{"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 7}}]
        ),
        15,
        "offset 7 committed",
    )
    assert connect.request("DELETE", f"/connectors/{name}").status_code == 204
    connect.produce(topic, [(None, "a7")])
    plugins.PUT[name].clear()
    connect.create_connector(name, {"connector.class": P + "RecordingSinkConnector", "topics": topic})
    connect.wait_for(lambda: sink_values(name) == ["a7"], 20, "only the new record")


def test_conversion_errors_go_to_the_dead_letter_queue(connect: EmbeddedConnect) -> None:
    name, topic, dlq = unique("dlq"), unique(), unique("dlq")
    connect.produce(
        topic,
        [
            (b"k1", b'{"schema":{"type":"int32","optional":false},"payload":1}'),
            (b"k2", b"not json at all"),
            (b"k3", b'{"schema":{"type":"int32","optional":false},"payload":3}'),
        ],
        headers=[("origin", b"test")],
    )
    connect.create_connector(
        name,
        {
            "connector.class": P + "RecordingSinkConnector",
            "topics": topic,
            "value.converter": JSON,
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": dlq,
            "errors.deadletterqueue.topic.replication.factor": "1",
            "errors.deadletterqueue.context.headers.enable": "true",
            "errors.log.enable": "true",
        },
    )
    connect.wait_for(lambda: len(plugins.PUT[name]) == 2, 20, "the two good records")
    assert [r.value for r in plugins.PUT[name]] == [1, 3]
    [bad] = connect.consume(dlq, 1)
    assert bad.key() == b"k2" and bad.value() == b"not json at all"
    headers = dict(bad.headers())
    assert headers["origin"] == b"test"
    assert headers["__connect.errors.topic"] == topic.encode()
    assert headers["__connect.errors.partition"] == b"0"
    assert headers["__connect.errors.offset"] == b"1"
    assert headers["__connect.errors.connector.name"] == name.encode()
    assert headers["__connect.errors.task.id"] == b"0"
    assert headers["__connect.errors.stage"] == b"VALUE_CONVERTER"
    assert headers["__connect.errors.class.name"] == b"connect.converters.json.JsonConverter"
    assert b"DataException" in headers["__connect.errors.exception.class.name"]
    assert headers["__connect.errors.exception.message"]
    assert b"Traceback" in headers["__connect.errors.exception.stacktrace"]


def test_conversion_error_without_tolerance_fails_the_task(connect: EmbeddedConnect) -> None:
    name, topic = unique("strict"), unique()
    connect.produce(topic, [(None, b"{broken")])
    connect.create_connector(
        name, {"connector.class": P + "RecordingSinkConnector", "topics": topic, "value.converter": JSON}
    )
    status = connect.wait_for_state(name, "RUNNING", 1, task_state="FAILED")
    assert "Tolerance exceeded in error handler" in status["tasks"][0]["trace"]


def test_errant_record_reporter_sends_records_to_the_dlq(connect: EmbeddedConnect) -> None:
    name, topic, dlq = unique("errant"), unique(), unique("dlq")
    connect.produce(topic, [(None, v) for v in ("ok-1", "bad", "ok-2")])
    connect.create_connector(
        name,
        {
            "connector.class": P + "RecordingSinkConnector",
            "topics": topic,
            "report.values": "bad",
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": dlq,
            "errors.deadletterqueue.topic.replication.factor": "1",
            "errors.deadletterqueue.context.headers.enable": "true",
        },
    )
    connect.wait_for(lambda: sink_values(name) == ["ok-1", "ok-2"], 20, "the good records")
    [reported] = connect.consume(dlq, 1)
    assert reported.value() == b"bad"
    assert dict(reported.headers())["__connect.errors.stage"] == b"TASK_PUT"
    assert b"cannot handle" in dict(reported.headers())["__connect.errors.exception.message"]


def test_a_record_reported_after_its_batch_reaches_the_dlq_as_consumed(connect: EmbeddedConnect) -> None:
    """Asynchronous sinks report records later, when the batch they came in is gone: the
    worker serializes them again with the task's converters (as Kafka does)."""
    name, topic, dlq = unique("late"), unique(), unique("dlq")
    connect.produce(topic, [("k1", "ok-1"), ("k2", "bad")], headers=[("trace", b"t-1")])
    connect.create_connector(
        name,
        {
            "connector.class": P + "RecordingSinkConnector",
            "topics": topic,
            "report.values": "bad",
            "report.late": "true",
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": dlq,
            "errors.deadletterqueue.topic.replication.factor": "1",
            "errors.deadletterqueue.context.headers.enable": "true",
        },
    )
    connect.wait_for(lambda: sink_values(name) == ["ok-1"], 20, "the first batch")
    connect.produce(topic, [("k3", "ok-2")])  # a new batch: the sink reports "bad" now
    [reported] = connect.consume(dlq, 1)
    assert (reported.key(), reported.value()) == (b"k2", b"bad")
    headers = dict(reported.headers())
    assert headers["trace"] == b"t-1"
    assert headers["__connect.errors.topic"] == topic.encode()
    assert headers["__connect.errors.offset"] == b"1"


def test_transforms_with_predicates_and_functions(connect: EmbeddedConnect) -> None:
    name, topic = unique("smt"), "shop-" + unique("orders")
    connect.create_connector(
        name,
        {
            "connector.class": P + "CountingSourceConnector",
            "topic": topic,
            "count": "6",
            "transforms": "route,upper,drop",
            "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
            "transforms.route.regex": "(.*)-orders-(.*)",
            "transforms.route.replacement": "$1-routed-$2",
            "transforms.route.predicate": "isOrders",
            "transforms.upper.type": P + "upper_value",
            "transforms.drop.type": P + "drop_even",
            "transforms.drop.predicate": "isOrders",
            "transforms.drop.negate": "true",
            "predicates": "isOrders",
            "predicates.isOrders.type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
            "predicates.isOrders.pattern": ".*-orders-.*",
        },
    )
    routed = topic.replace("orders", "routed")
    # Predicates see the record as the earlier stages left it: after routing, the topic no
    # longer matches, so the negated predicate lets drop_even apply.
    assert values(connect.consume(routed, 3)) == ["V-1", "V-3", "V-5"]


def test_pause_and_resume(connect: EmbeddedConnect) -> None:
    name, topic = unique("pause"), unique()
    connect.create_connector(name, {"connector.class": P + "RecordingSinkConnector", "topics": topic})
    connect.wait_for_running(name)
    assert connect.request("PUT", f"/connectors/{name}/pause").status_code == 202
    connect.wait_for_state(name, "PAUSED", 1)
    connect.produce(topic, [(None, "while-paused")])
    time.sleep(1.0)
    assert sink_values(name) == []
    assert connect.request("PUT", f"/connectors/{name}/resume").status_code == 202
    connect.wait_for(lambda: sink_values(name) == ["while-paused"], 15, "the record after resuming")


def test_config_providers_resolve_at_start_and_placeholders_are_kept(connect: EmbeddedConnect) -> None:
    data = connect.work_dir / "from-provider.txt"
    data.write_text("secret line\n")
    name, topic = unique("provided"), unique()
    secrets = connect.work_dir / "secrets.properties"
    connect.create_connector(
        name, {"connector.class": "FileStreamSource", "topic": topic, "file": f"${{file:{secrets}:input}}"}
    )
    assert values(connect.consume(topic, 1)) == ["secret line"]
    config = connect.request("GET", f"/connectors/{name}/config").json()
    assert config["file"] == f"${{file:{secrets}:input}}"


def test_topic_creation_groups(connect: EmbeddedConnect) -> None:
    name = unique("creator")
    compacted, plain = unique("compacted"), unique("plain")
    connect.create_connector(
        name,
        {
            "connector.class": P + "CountingSourceConnector",
            "topic": compacted,
            "count": "3",
            "topic.creation.groups": "compacted",
            "topic.creation.default.replication.factor": "1",
            "topic.creation.default.partitions": "2",
            "topic.creation.compacted.include": ".*compacted.*",
            "topic.creation.compacted.partitions": "3",
            "topic.creation.compacted.cleanup.policy": "compact",
        },
    )
    connect.consume(compacted, 3, partitions=3)
    admin = AdminClient({"bootstrap.servers": connect.bootstrap})
    md = admin.list_topics(timeout=10)
    assert len(md.topics[compacted].partitions) == 3
    res = ConfigResource(ConfigResource.Type.TOPIC, compacted)
    assert admin.describe_configs([res])[res].result(10)["cleanup.policy"].value == "compact"
    other = unique("creator")
    connect.create_connector(
        other,
        {
            "connector.class": P + "CountingSourceConnector",
            "topic": plain,
            "count": "1",
            "topic.creation.default.replication.factor": "1",
            "topic.creation.default.partitions": "2",
        },
    )
    connect.consume(plain, 1, partitions=2)
    assert len(admin.list_topics(timeout=10).topics[plain].partitions) == 2


def test_task_reconfiguration_requested_by_the_connector(connect: EmbeddedConnect, tmp_path: Path) -> None:
    count_file = tmp_path / "tasks"
    count_file.write_text("1")
    name = unique("reconf")
    connect.create_connector(
        name,
        {
            "connector.class": P + "ReconfiguringSourceConnector",
            "topic": unique(),
            "tasks.max": "4",
            "tasks.file": str(count_file),
        },
    )
    connect.wait_for_running(name, tasks=1)
    count_file.write_text("3")
    connect.wait_for_running(name, tasks=3, timeout=20)
    assert len(connect.request("GET", f"/connectors/{name}/tasks").json()) == 3


def test_sink_sees_open_and_close_and_stop(connect: EmbeddedConnect) -> None:
    name, topic = unique("life"), unique()
    connect.produce(topic, [(None, "x")])
    connect.create_connector(name, {"connector.class": P + "RecordingSinkConnector", "topics": topic})
    connect.wait_for(lambda: sink_values(name) == ["x"], 15, "the record")
    assert connect.request("PUT", f"/connectors/{name}/stop").status_code == 204
    connect.wait_for_state(name, "STOPPED", 0)
    events = plugins.EVENTS[name]
    assert events[0] == "start"
    assert f"open {topic}-0" in events and f"close {topic}-0" in events
    assert events[-1] == "stop"


def test_worker_restart_resumes_source_offsets(tmp_path: Path) -> None:
    src, topic = tmp_path / "in.txt", "restart-lines"
    src.write_text("".join(f"first {i}\n" for i in range(100)))
    with EmbeddedConnect(tmp_path / "w") as c:
        c.create_connector("src", {"connector.class": "FileStreamSource", "file": str(src), "topic": topic})
        c.consume(topic, 100)
        c.wait_for(
            lambda: c.request("GET", "/connectors/src/offsets").json()["offsets"] != [], 15, "an offset"
        )
    with open(src, "a") as f:
        f.write("".join(f"second {i}\n" for i in range(50)))
    # Same work directory: the broker's data and the offset file are still there.
    with EmbeddedConnect(tmp_path / "w") as c:
        c.create_connector("src", {"connector.class": "FileStreamSource", "file": str(src), "topic": topic})
        msgs = c.consume(topic, 150)
        time.sleep(1.0)
        assert values(msgs) == [f"first {i}" for i in range(100)] + [f"second {i}" for i in range(50)]
        assert len(c.consume(topic, 150)) == 150  # nothing was read twice


def test_a_worker_shortens_the_thread_switch_interval(connect: EmbeddedConnect) -> None:
    """Helper threads' I/O (uploads, JVM calls) is not held up 5 ms at a time by busy task
    threads (connect.runtime.switch_interval says why and what it measured)."""
    assert sys.getswitchinterval() <= WORKER_SWITCH_INTERVAL_S
