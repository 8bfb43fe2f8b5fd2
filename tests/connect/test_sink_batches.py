"""How a sink worker converts what it consumes: a topic's records of each poll in one
``to_connect_batch`` call per converter, and, when a converter refuses the batch, one
record at a time with errors.tolerance and the dead letter queue as usual.

Real broker and worker in this process (``sluiceway.embedded.EmbeddedConnect``); the
converters and sink are the plugins of ``tests.connect.plugins``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from confluent_kafka import Producer

from sluiceway.embedded import EmbeddedConnect
from tests.connect import plugins
from tests.support import unique

P = "tests.connect.plugins."
JSON = "org.apache.kafka.connect.json.JsonConverter"
DLQ = {
    "errors.tolerance": "all",
    "errors.deadletterqueue.topic.replication.factor": "1",
    "errors.deadletterqueue.context.headers.enable": "true",
}


@pytest.fixture(scope="module")
def connect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedConnect]:
    with EmbeddedConnect(tmp_path_factory.mktemp("worker")) as c:
        yield c


def put(name: str) -> list[tuple[str, int, object]]:
    return [(r.topic, r.kafka_offset, r.value) for r in plugins.PUT[name]]


def test_a_batch_is_converted_by_one_call_of_the_converter(connect: EmbeddedConnect) -> None:
    name, topic = unique("batch"), unique()
    connect.produce(topic, [(None, f"v-{i}") for i in range(200)])
    connect.create_connector(
        name,
        {
            "connector.class": P + "RecordingSinkConnector",
            "topics": topic,
            "value.converter": P + "TextConverter",
        },
    )
    connect.wait_for(lambda: len(plugins.PUT[name]) == 200, 30, "200 records")
    assert [v for _, _, v in put(name)] == [f"v-{i}" for i in range(200)]
    assert [o for _, o, _ in put(name)] == list(range(200))
    assert sum(plugins.BATCHES[topic]) == 200  # every record went through a batch
    assert max(plugins.BATCHES[topic]) > 1
    assert plugins.SINGLES[topic] == 0  # and none one by one


def test_a_refused_batch_is_converted_one_by_one_and_the_bad_record_dead_lettered(
    connect: EmbeddedConnect,
) -> None:
    name, topic, dlq = unique("refused"), unique(), unique("dlq")
    connect.produce(topic, [(None, "a"), (None, "!b"), (None, "c"), (None, None)])
    connect.create_connector(
        name,
        {
            "connector.class": P + "RecordingSinkConnector",
            "topics": topic,
            "value.converter": P + "TextConverter",
            "errors.deadletterqueue.topic.name": dlq,
            **DLQ,
        },
    )
    connect.wait_for(lambda: len(plugins.PUT[name]) == 3, 30, "the three good records")
    assert put(name) == [(topic, 0, "a"), (topic, 2, "c"), (topic, 3, None)]
    [bad] = connect.consume(dlq, 1)
    headers = dict(bad.headers())
    assert bad.value() == b"!b"
    assert headers["__connect.errors.offset"] == b"1"
    assert headers["__connect.errors.stage"] == b"VALUE_CONVERTER"
    assert headers["__connect.errors.class.name"] == b"tests.connect.plugins.TextConverter"
    assert plugins.SINGLES[topic] >= 4  # the refused batch, one by one


def test_schemaless_json_with_a_malformed_record(connect: EmbeddedConnect) -> None:
    name, topic, dlq = unique("json"), unique(), unique("dlq")
    docs = [orjson.dumps({"n": i}) for i in range(50)]
    docs[20] = b"{not json"
    connect.produce(topic, [(None, d) for d in docs])
    connect.create_connector(
        name,
        {
            "connector.class": P + "RecordingSinkConnector",
            "topics": topic,
            "value.converter": JSON,
            "value.converter.schemas.enable": "false",
            "errors.deadletterqueue.topic.name": dlq,
            **DLQ,
        },
    )
    connect.wait_for(lambda: len(plugins.PUT[name]) == 49, 30, "the 49 good records")
    assert [v for _, _, v in put(name)] == [{"n": i} for i in range(50) if i != 20]
    assert all(r.value_schema is None for r in plugins.PUT[name])
    [bad] = connect.consume(dlq, 1)
    assert bad.value() == b"{not json"
    assert dict(bad.headers())["__connect.errors.offset"] == b"20"


def test_header_and_transformation_failures_name_their_own_records(
    connect: EmbeddedConnect, tmp_path: Path
) -> None:
    """A record whose headers cannot be converted is skipped; the transformation errors of
    the records after it still name the message each came from."""
    name, topic, dlq = unique("headers"), unique(), unique("dlq")
    p = Producer({"bootstrap.servers": connect.bootstrap, "linger.ms": 50})
    p.produce(topic, value=b"ok-0", headers=[("h", b"1")])
    p.produce(topic, value=b"ok-1", headers=[("h", b"{not json")])
    p.produce(topic, value=b"boom-2", headers=[("h", b"2")])
    p.produce(topic, value=b"ok-3")
    assert p.flush(30) == 0
    connect.create_connector(
        name,
        {
            "connector.class": P + "RecordingSinkConnector",
            "topics": topic,
            "header.converter": JSON,
            "header.converter.schemas.enable": "false",
            "transforms": "refuse",
            "transforms.refuse.type": P + "refuse_boom",
            "errors.deadletterqueue.topic.name": dlq,
            **DLQ,
        },
    )
    connect.wait_for(lambda: len(plugins.PUT[name]) == 2, 30, "the two good records")
    assert [(o, v) for _, o, v in put(name)] == [(0, "ok-0"), (3, "ok-3")]
    assert [[(h.key, h.value) for h in r.headers] for r in plugins.PUT[name]] == [[("h", 1)], []]
    dead = connect.consume(dlq, 2)
    by_stage = {dict(m.headers())["__connect.errors.stage"]: m for m in dead}
    assert set(by_stage) == {b"HEADER_CONVERTER", b"TRANSFORMATION"}
    assert by_stage[b"HEADER_CONVERTER"].value() == b"ok-1"
    assert dict(by_stage[b"HEADER_CONVERTER"].headers())["__connect.errors.offset"] == b"1"
    assert by_stage[b"TRANSFORMATION"].value() == b"boom-2"
    assert dict(by_stage[b"TRANSFORMATION"].headers())["__connect.errors.offset"] == b"2"


def test_records_of_several_topics_in_one_poll(connect: EmbeddedConnect) -> None:
    name, first, second = unique("topics"), unique(), unique()
    p = Producer({"bootstrap.servers": connect.bootstrap, "linger.ms": 20})
    for i in range(300):
        p.produce(first if i % 3 else second, value=f"v-{i}".encode())
    assert p.flush(30) == 0
    connect.create_connector(
        name,
        {
            "connector.class": P + "RecordingSinkConnector",
            "topics": f"{first},{second}",
            "value.converter": P + "TextConverter",
        },
    )
    connect.wait_for(lambda: len(plugins.PUT[name]) == 300, 30, "300 records")
    for topic, ids in ((first, [i for i in range(300) if i % 3]), (second, list(range(0, 300, 3)))):
        got = [(o, v) for t, o, v in put(name) if t == topic]
        assert got == [(n, f"v-{i}") for n, i in enumerate(ids)]
        assert plugins.SINGLES[topic] == 0
    # Each topic's offsets are committed up to its last record.
    connect.wait_for(
        lambda: (
            {
                o["partition"]["kafka_topic"]: o["offset"]["kafka_offset"]
                for o in connect.request("GET", f"/connectors/{name}/offsets").json()["offsets"]
            }
            == {first: 200, second: 100}
        ),
        30,
        "committed offsets",
    )
