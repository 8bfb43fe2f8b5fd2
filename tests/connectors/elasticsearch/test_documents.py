"""Records as bulk actions: ids, external versions, JSON of every Connect type, tombstones,
data streams and index names."""

from __future__ import annotations

import base64
import datetime as dt
import decimal

import orjson
import pytest

from connect.api import (
    DataException,
    Date,
    Decimal,
    Headers,
    Schema,
    SchemaBuilder,
    SinkRecord,
    Struct,
    Time,
    Timestamp,
)
from connectors.elasticsearch.config import ElasticsearchSinkConfig
from connectors.elasticsearch.documents import DocumentBuilder, index_name

URL = {"connection.url": "http://127.0.0.1:9200"}


def builder(**props: str) -> DocumentBuilder:
    return DocumentBuilder(ElasticsearchSinkConfig.parse({**URL, **props}))


def record(value: object, key: object = "k1", schema: Schema | None = None, **kw: object) -> SinkRecord:
    args: dict[str, object] = {
        "topic": "Tweets",
        "kafka_partition": 2,
        "kafka_offset": 41,
        "timestamp": 1_700_000_000_000,
    }
    args.update(kw)
    return SinkRecord(key=key, value=value, value_schema=schema, **args)  # type: ignore[arg-type]


def lines(action) -> list[dict[str, object]]:  # type: ignore[no-untyped-def]
    return [orjson.loads(line) for line in action.lines()]


def test_insert_uses_the_key_as_id_and_the_offset_as_external_version() -> None:
    action = builder().build(record({"text": "hi"}))
    assert lines(action) == [
        {"index": {"_index": "tweets", "_id": "k1", "version": 41, "version_type": "external"}},
        {"text": "hi"},
    ]


def test_after_a_topic_router_the_version_is_still_the_consumed_offset() -> None:
    r = record(
        {"a": 1},
        topic="routed",
        original_topic="Tweets",
        original_kafka_partition=2,
        original_kafka_offset=41,
    )
    r.kafka_offset = 41
    assert lines(builder().build(r))[0]["index"]["version"] == 41  # type: ignore[index]
    assert lines(builder().build(r))[0]["index"]["_index"] == "routed"  # type: ignore[index]


def test_key_ignore_uses_topic_partition_offset_and_no_version() -> None:
    for props in ({"key.ignore": "true"}, {"topic.key.ignore": "Tweets"}):
        action = builder(**props).build(record({"text": "hi"}, key=None))
        assert lines(action)[0] == {"index": {"_index": "tweets", "_id": "Tweets+2+41"}}


def test_integer_and_utf8_byte_keys_become_ids_others_are_refused() -> None:
    assert builder().build(record({"a": 1}, key=17)).doc_id == "17"  # type: ignore[union-attr]
    assert builder().build(record({"a": 1}, key=b"abc")).doc_id == "abc"  # type: ignore[union-attr]
    with pytest.raises(DataException, match=r"Tweets-2@41 has a null key.*key.ignore=true"):
        builder().build(record({"a": 1}, key=None))
    key_struct = Struct(SchemaBuilder.struct().field("id", Schema.INT32_SCHEMA).build()).put("id", 1)
    with pytest.raises(DataException, match=r"key of type Struct.*ExtractField\$Key"):
        builder().build(record({"a": 1}, key=key_struct))


def test_upsert_sends_the_document_as_a_partial_update_without_versions() -> None:
    action = builder(**{"write.method": "UPSERT"}).build(record({"n": 2}))
    assert lines(action) == [
        {"update": {"_index": "tweets", "_id": "k1", "retry_on_conflict": 3}},
        {"doc": {"n": 2}, "doc_as_upsert": True},
    ]


def test_external_version_header() -> None:
    b = builder(**{"external.version.header": "ver"})
    r = record({"a": 1}, headers=Headers().add("ver", "1234"))
    assert b.build(r).version == 1234  # type: ignore[union-attr]
    with pytest.raises(DataException, match="has no header 'ver'"):
        b.build(record({"a": 1}))
    with pytest.raises(DataException, match="'x1', not a number"):
        b.build(record({"a": 1}, headers=Headers().add("ver", "x1")))


@pytest.mark.parametrize(
    ("behavior", "op"),
    [("ignore", None), ("delete", "delete")],
)
def test_tombstones(behavior: str, op: str | None) -> None:
    action = builder(**{"behavior.on.null.values": behavior}).build(record(None))
    if op is None:
        assert action is None
    else:
        assert lines(action) == [
            {"delete": {"_index": "tweets", "_id": "k1", "version": 41, "version_type": "external"}}
        ]


def test_a_tombstone_fails_by_default_with_the_key_to_change() -> None:
    with pytest.raises(DataException, match=r"null value.*behavior\.on\.null\.values=fail"):
        builder().build(record(None))


def test_every_connect_type_as_json() -> None:
    inner = SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA).build()
    schema = (
        SchemaBuilder.struct()
        .field("i8", Schema.INT8_SCHEMA)
        .field("i64", Schema.INT64_SCHEMA)
        .field("f32", Schema.FLOAT32_SCHEMA)
        .field("flag", Schema.BOOLEAN_SCHEMA)
        .field("s", Schema.STRING_SCHEMA)
        .field("raw", Schema.BYTES_SCHEMA)
        .field("amount", Decimal.schema(2))
        .field("day", Date.builder().build())
        .field("at", Time.builder().build())
        .field("ts", Timestamp.builder().build())
        .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
        .field("counts", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build())
        .field("by_id", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build())
        .field("nested", inner)
        .field("missing", SchemaBuilder.string().optional().build())
        .build()
    )
    value = (
        Struct(schema)
        .put("i8", 3)
        .put("i64", 2**40)
        .put("f32", 1.5)
        .put("flag", True)
        .put("s", "é")
        .put("raw", b"\x00\x01")
        .put("amount", decimal.Decimal("12.34"))
        .put("day", dt.date(2024, 2, 29))
        .put("at", dt.time(13, 45, 30, 250_000))
        .put("ts", dt.datetime(2024, 2, 29, 13, 45, 30, 123_000, tzinfo=dt.UTC))
        .put("tags", ["a", "b"])
        .put("counts", {"x": 1})
        .put("by_id", {7: "seven"})
        .put("nested", Struct(inner).put("x", 5))
    )
    doc = lines(builder().build(record(value, schema=schema)))[1]
    assert doc == {
        "i8": 3,
        "i64": 2**40,
        "f32": 1.5,
        "flag": True,
        "s": "é",
        "raw": base64.b64encode(b"\x00\x01").decode(),
        "amount": 12.34,
        "day": "2024-02-29",
        "at": ((13 * 60 + 45) * 60 + 30) * 1000 + 250,
        "ts": "2024-02-29T13:45:30.123000Z",
        "tags": ["a", "b"],
        "counts": {"x": 1},
        "by_id": [{"key": 7, "value": "seven"}],
        "nested": {"x": 5},
        "missing": None,
    }


def test_compact_map_entries_false_writes_key_value_pairs() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("m", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build())
        .build()
    )
    value = Struct(schema).put("m", {"a": 1})
    doc = lines(builder(**{"compact.map.entries": "false"}).build(record(value, schema=schema)))[1]
    assert doc == {"m": [{"key": "a", "value": 1}]}


def test_schemaless_values_json_text_and_refusals() -> None:
    b = builder()
    assert lines(b.build(record({"n": decimal.Decimal("1.5"), "b": b"hi", 3: "x"})))[1] == {
        "n": 1.5,
        "b": "aGk=",
        "3": "x",
    }
    assert lines(b.build(record('{"from": "text"}')))[1] == {"from": "text"}
    assert lines(b.build(record(b'{"from": "bytes"}')))[1] == {"from": "bytes"}
    for bad in ("not json", "[1, 2]", 42, [1]):
        with pytest.raises(DataException, match="an Elasticsearch document is a JSON object"):
            b.build(record(bad))


def test_data_streams_create_with_a_timestamp() -> None:
    b = builder(**{"data.stream.type": "logs", "data.stream.dataset": "tweets"})  # keys are not ids here
    action = b.build(record({"text": "hi", "@timestamp": "ignored unless listed"}))
    head, doc = lines(action)
    assert head == {"create": {"_index": "logs-tweets-tweets", "_id": "Tweets+2+41"}}
    assert doc["@timestamp"] == "2023-11-14T22:13:20Z"  # the record's timestamp
    listed = builder(
        **{
            "data.stream.type": "metrics",
            "data.stream.dataset": "d",
            "data.stream.namespace": "prod",
            "data.stream.timestamp.field": "when,at",
        }
    )
    head, doc = lines(listed.build(record({"at": "2024-01-01T00:00:00Z"})))
    assert head["create"]["_index"] == "metrics-d-prod"  # type: ignore[index]
    assert doc["@timestamp"] == "2024-01-01T00:00:00Z"
    with pytest.raises(DataException, match="no timestamp for @timestamp"):
        builder(**{"data.stream.type": "logs", "data.stream.dataset": "d"}).build(
            record({"a": 1}, timestamp=None)
        )


@pytest.mark.parametrize(
    ("topic", "index"),
    [
        ("Tweets", "tweets"),
        ("_internal-Topic", "internal-topic"),
        ("--x", "x"),
        ("a b,c#d:e*f?g", "a_b_c_d_e_f_g"),
        (".", "dot"),
        ("..", "dotdot"),
        ("x" * 300, "x" * 255),
    ],
)
def test_index_names(topic: str, index: str) -> None:
    assert index_name(topic) == index


def test_a_topic_with_no_usable_name_is_refused() -> None:
    with pytest.raises(DataException, match="no valid Elasticsearch index name"):
        index_name("___")
