"""Sinks that ask for values as the JSON text that was consumed (``value_runs("json")``),
or as the UTF-8 text a string converter reads (``value_runs("text")``).

The worker checks, when asked, that a poll's values are JSON documents without decoding
them, and gives runs of one topic partition; the batch's records are made, values decoded,
only when read. Anything else comes as records converted as usual: a poll holding a
malformed or null value (where errors.tolerance and the dead letter queue act), a
connector with a transformation, a converter with schemas.

Real broker and worker in this process; the sink is ``tests.connect.plugins.JsonRunsSinkTask``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from connect.api import SinkRecord
from sluiceway.embedded import EmbeddedConnect
from tests.connect import plugins
from tests.support import unique

P = "tests.connect.plugins."
JSON = "org.apache.kafka.connect.json.JsonConverter"


@pytest.fixture(scope="module")
def connect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedConnect]:
    with EmbeddedConnect(tmp_path_factory.mktemp("worker")) as c:
        yield c


def sink(topic: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": P + "JsonRunsSinkConnector",
        "topics": topic,
        "value.converter": JSON,
        "value.converter.schemas.enable": "false",
        **extra,
    }


def produce(
    connect: EmbeddedConnect,
    topic: str,
    rows: list[tuple[int, bytes | None, bytes | None]],
    partitions: int = 1,
    headers: list[tuple[str, bytes]] | None = None,
) -> None:
    """(partition, key, value) rows, in order, into a new topic."""
    admin = AdminClient({"bootstrap.servers": connect.bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)
    p = Producer({"bootstrap.servers": connect.bootstrap, "linger.ms": 20})
    for partition, key, value in rows:
        p.produce(topic, key=key, value=value, partition=partition, headers=headers)
    assert p.flush(30) == 0


def puts(name: str, kind: str) -> list[Any]:
    return [what for k, what in plugins.PUTS[name] if k == kind]


def delivered(name: str) -> dict[tuple[int, int], Any]:
    """(partition, offset) -> the text a run gave, or the value a record gave."""
    out: dict[tuple[int, int], Any] = {}
    for kind, what in plugins.PUTS[name]:
        if kind in ("runs", "text"):
            for _topic, partition, offsets, texts in what:
                for offset, text in zip(offsets, texts, strict=True):
                    assert (partition, offset) not in out, "a record was delivered twice"
                    out[partition, offset] = text
        else:
            for r in what:
                assert (r.kafka_partition, r.kafka_offset) not in out, "a record was delivered twice"
                out[r.kafka_partition, r.kafka_offset] = r.value
    return out


# Documents as producers write them: compact, spaced out, over several lines, numbers in
# exponent form, non-ASCII text, and values that are not objects.
DOCUMENTS = [
    b'{"id":0,"name":"plain"}',
    b'{ "id" : 1, "tags" : [ "a", "b" ] }',
    b'{\n  "id": 2,\n  "nested": {"deep": [1, 2, 3]}\n}',
    b'{"id":3,"amount":1.5e2,"big":12345678901234567890}',
    '{"id":4,"city":"Zürich","emoji":"🚰"}'.encode(),
    b'"just a string"',
    b"[1,2,3]",
    b"42",
]


def test_json_values_reach_the_task_as_their_texts_in_runs_of_one_partition(
    connect: EmbeddedConnect,
) -> None:
    topic, name = unique("docs"), unique("runs")
    rows = [(i % 2, f"k-{i}".encode(), DOCUMENTS[i % len(DOCUMENTS)]) for i in range(60)]
    produce(connect, topic, rows, partitions=2, headers=[("trace", b"t-1")])
    connect.create_connector(name, sink(topic, **{"read.records": "true"}))
    connect.wait_for(lambda: len(delivered(name)) == 60, 30, "all 60 records")

    assert puts(name, "records") == []  # every poll came as runs
    expected = {}
    per_partition = {0: 0, 1: 0}
    for partition, _key, value in rows:
        expected[partition, per_partition[partition]] = value
        per_partition[partition] += 1
    assert delivered(name) == expected  # each text is the bytes produced, unchanged
    for runs in puts(name, "runs"):
        for run_topic, _partition, offsets, _texts in runs:
            assert run_topic == topic
            assert offsets == sorted(offsets)

    # Read, the records are what converting them would have given.
    made: list[SinkRecord] = plugins.RUN_RECORDS[name]
    assert len(made) == 60
    by_place = {(r.kafka_partition, r.kafka_offset): r for r in made}
    for (partition, offset), text in expected.items():
        r = by_place[partition, offset]
        assert r.topic == topic
        assert r.value == orjson.loads(text)
        assert r.value_schema is None
        assert r.key == f"k-{2 * offset + partition}"
        assert r.timestamp is not None
        assert [(h.key, h.value) for h in r.headers] == [("trace", "t-1")]


def test_a_poll_with_a_malformed_or_null_value_comes_as_records_and_tolerance_applies(
    connect: EmbeddedConnect,
) -> None:
    topic, name, dlq = unique("mixed"), unique("runs"), unique("dlq")
    values: list[bytes | None] = [b'{"n":0}', b'{"n":1', b'{"n":2}', None, b'{"n":4}', b"\xff"]
    produce(connect, topic, [(0, None, v) for v in values])
    connect.create_connector(
        name,
        sink(
            topic,
            **{
                "errors.tolerance": "all",
                "errors.deadletterqueue.topic.name": dlq,
                "errors.deadletterqueue.topic.replication.factor": "1",
            },
        ),
    )
    connect.wait_for(lambda: len(delivered(name)) == 4, 30, "the four readable records")
    assert delivered(name) == {(0, 0): {"n": 0}, (0, 2): {"n": 2}, (0, 3): None, (0, 4): {"n": 4}}
    assert puts(name, "runs") == []
    dead = connect.consume(dlq, 2)
    assert sorted(m.offset() for m in dead) == [0, 1]
    assert sorted(m.value() for m in dead) == sorted([b'{"n":1', b"\xff"])


@pytest.mark.parametrize(
    "extra",
    [
        pytest.param(
            {
                "transforms": "source",
                "transforms.source.type": "org.apache.kafka.connect.transforms.InsertField$Value",
                "transforms.source.static.field": "source",
                "transforms.source.static.value": "test",
            },
            id="a transformation",
        ),
        pytest.param({"value.converter.schemas.enable": "true"}, id="schemas"),
        pytest.param({"json.runs": "false"}, id="a task that does not take runs"),
    ],
)
def test_records_come_as_records_where_runs_cannot_serve(
    connect: EmbeddedConnect, extra: dict[str, str]
) -> None:
    topic, name = unique("plain"), unique("runs")
    schemas = extra.get("value.converter.schemas.enable") == "true"
    docs = [{"id": i} for i in range(20)]
    payload = [
        orjson.dumps(
            {"schema": {"type": "struct", "fields": [{"field": "id", "type": "int64"}]}, "payload": d}
        )
        if schemas
        else orjson.dumps(d)
        for d in docs
    ]
    produce(connect, topic, [(0, None, v) for v in payload])
    connect.create_connector(name, sink(topic, **extra))
    connect.wait_for(lambda: len(delivered(name)) == 20, 30, "all 20 records")
    assert puts(name, "runs") == []
    got = [delivered(name)[0, o] for o in range(20)]
    if "transforms" in extra:
        assert got == [{**d, "source": "test"} for d in docs]
    elif schemas:
        assert [v.get("id") for v in got] == list(range(20))  # Structs
    else:
        assert got == docs


# -- text runs ---------------------------------------------------------------------------------

STRING = "org.apache.kafka.connect.storage.StringConverter"
TEXTS = [b"plain", "Zürich 🚰".encode(), b"", b"two\nlines", b'{"looks":"like json"}', b"  spaced  "]


def text_sink(topic: str, **extra: str) -> dict[str, str]:
    return sink(topic, **{"value.converter": STRING, "json.runs": "false", "text.runs": "true", **extra})


def test_utf8_values_reach_a_text_sink_as_their_bytes(connect: EmbeddedConnect) -> None:
    topic, name = unique("texts"), unique("text")
    rows = [(i % 2, None, TEXTS[i % len(TEXTS)]) for i in range(40)]
    produce(connect, topic, rows, partitions=2)
    connect.create_connector(name, text_sink(topic, **{"read.records": "true"}))
    connect.wait_for(lambda: len(delivered(name)) == 40, 30, "all 40 records")

    assert puts(name, "records") == [] and puts(name, "runs") == []
    expected = {}
    per_partition = {0: 0, 1: 0}
    for partition, _key, value in rows:
        expected[partition, per_partition[partition]] = value
        per_partition[partition] += 1
    assert delivered(name) == expected
    # Read, the records hold the strings StringConverter makes of the same bytes.
    made: list[SinkRecord] = plugins.RUN_RECORDS[name]
    assert sorted((r.kafka_partition, r.kafka_offset, r.value) for r in made) == sorted(
        (p, o, v.decode()) for (p, o), v in expected.items()
    )


def test_a_poll_with_a_null_or_undecodable_value_comes_as_records(connect: EmbeddedConnect) -> None:
    topic, name, dlq = unique("badtext"), unique("text"), unique("dlq")
    produce(connect, topic, [(0, None, v) for v in (b"a", None, b"\xff\xfe", b"b")])
    connect.create_connector(
        name,
        text_sink(
            topic,
            **{
                "errors.tolerance": "all",
                "errors.deadletterqueue.topic.name": dlq,
                "errors.deadletterqueue.topic.replication.factor": "1",
            },
        ),
    )
    connect.wait_for(lambda: len(delivered(name)) == 3, 30, "the three readable records")
    assert delivered(name) == {(0, 0): "a", (0, 1): None, (0, 3): "b"}
    assert puts(name, "text") == []
    assert [m.value() for m in connect.consume(dlq, 1)] == [b"\xff\xfe"]


def test_a_task_taking_both_gets_json_runs_of_json_and_text_runs_of_strings(connect: EmbeddedConnect) -> None:
    both = {"json.runs": "true", "text.runs": "true"}
    json_topic, json_name = unique("both-json"), unique("both")
    produce(connect, json_topic, [(0, None, b'{"n":%d}' % i) for i in range(5)])
    connect.create_connector(json_name, sink(json_topic, **both))
    text_topic, text_name = unique("both-text"), unique("both")
    produce(connect, text_topic, [(0, None, b'{"n":%d}' % i) for i in range(5)])
    connect.create_connector(text_name, text_sink(text_topic, **both))
    for name in (json_name, text_name):
        connect.wait_for(lambda name=name: len(delivered(name)) == 5, 30, "all 5 records")
    assert puts(json_name, "text") == [] and puts(json_name, "records") == []
    assert puts(text_name, "runs") == [] and puts(text_name, "records") == []
    # With JsonConverter a poll whose values are not JSON comes as records even to a task
    # that takes text: only a string converter vouches for text.
    topic, name = unique("json-strings"), unique("both")
    produce(connect, topic, [(0, None, b'{"n":0}'), (0, None, b"not json"), (0, None, b'{"n":2}')])
    connect.create_connector(name, sink(topic, **both, **{"errors.tolerance": "all"}))
    connect.wait_for(lambda: len(delivered(name)) == 2, 30, "the two documents")
    assert puts(name, "text") == [] and puts(name, "runs") == []
    assert delivered(name) == {(0, 0): {"n": 0}, (0, 2): {"n": 2}}


def test_the_file_sink_writes_text_runs_and_records_alike(connect: EmbeddedConnect, tmp_path: Path) -> None:
    topic, name, out = unique("file-texts"), unique("file"), tmp_path / "out.txt"
    produce(connect, topic, [(0, None, v) for v in TEXTS])
    connect.create_connector(name, {"connector.class": "FileStreamSink", "file": str(out), "topics": topic})
    expected = b"".join(v + b"\n" for v in TEXTS)
    connect.wait_for(lambda: out.exists() and out.read_bytes() == expected, 30, "the texts in the file")
    # A tombstone cannot be a text run: its poll comes as records, written as Java prints null.
    p = Producer({"bootstrap.servers": connect.bootstrap})
    p.produce(topic, value=None)
    p.produce(topic, value="après".encode())
    assert p.flush(30) == 0
    expected += "null\naprès\n".encode()
    connect.wait_for(lambda: out.read_bytes() == expected, 30, "the tombstone's line")
