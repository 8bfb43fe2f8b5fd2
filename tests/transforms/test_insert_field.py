"""InsertField against Kafka's InsertFieldTest cases, the ``!``/``?`` suffixes, tombstones,
source records and the config checks."""

from __future__ import annotations

import datetime

import pytest

from connect.api import ConfigValidationError, DataException, Schema, SchemaBuilder, Struct, Timestamp
from tests.transforms.support import TIMESTAMP, configured, sink, source
from transforms.insert_field import InsertFieldKey, InsertFieldValue

ALL = {
    "topic.field": "topic_field!",
    "partition.field": "partition_field",
    "offset.field": "offset_field!",
    "timestamp.field": "timestamp_field?",
    "static.field": "instance_id",
    "static.value": "my-instance-id",
}


def test_schemaless_insert_into_a_map() -> None:
    out = configured(InsertFieldValue, ALL).apply(sink({"magic": 42}))
    assert out.value_schema is None
    assert out.value == {
        "magic": 42,
        "topic_field": "test",
        "partition_field": 0,
        "offset_field": 42,
        "timestamp_field": TIMESTAMP,
        "instance_id": "my-instance-id",
    }


def test_insert_into_a_struct_derives_the_schema_in_kafkas_field_order() -> None:
    schema = (
        SchemaBuilder.struct()
        .name("name")
        .version(1)
        .doc("doc")
        .field("magic", Schema.OPTIONAL_INT64_SCHEMA)
        .build()
    )
    out = configured(InsertFieldValue, ALL).apply(sink(Struct(schema).put("magic", 42), schema))
    s = out.value_schema
    assert (s.name, s.version, s.doc) == ("name", 1, "doc")
    assert [f.name for f in s.fields] == [
        "magic",
        "topic_field",
        "partition_field",
        "offset_field",
        "timestamp_field",
        "instance_id",
    ]
    assert s.field("topic_field").schema == Schema.STRING_SCHEMA  # "!": required
    assert s.field("partition_field").schema == Schema.OPTIONAL_INT32_SCHEMA
    assert s.field("offset_field").schema == Schema.INT64_SCHEMA
    assert s.field("timestamp_field").schema == Timestamp.builder().optional().build()
    assert s.field("instance_id").schema == Schema.OPTIONAL_STRING_SCHEMA
    v = out.value
    assert v.get("magic") == 42
    assert v.get("topic_field") == "test"
    assert v.get("partition_field") == 0
    assert v.get("offset_field") == 42
    assert v.get("timestamp_field") == datetime.datetime.fromtimestamp(TIMESTAMP / 1000, datetime.UTC)
    assert v.get("instance_id") == "my-instance-id"
    v.validate()


def test_the_updated_schema_is_cached_per_input_schema() -> None:
    schema = SchemaBuilder.struct().field("magic", Schema.INT64_SCHEMA).build()
    xform = configured(InsertFieldValue, {"topic.field": "t"})
    a = xform.apply(sink(Struct(schema).put("magic", 1), schema)).value_schema
    b = xform.apply(sink(Struct(schema).put("magic", 2), schema)).value_schema
    assert a is b


@pytest.mark.parametrize("schema", [None, SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()])
def test_tombstones_pass_through_unchanged(schema: Schema | None) -> None:
    record = sink(None, schema)
    assert configured(InsertFieldValue, ALL).apply(record) is record
    key_record = sink("v", key=None)
    assert configured(InsertFieldKey, {"topic.field": "t"}).apply(key_record) is key_record


def test_key_variant_inserts_into_the_key() -> None:
    out = configured(InsertFieldKey, {"topic.field": "t"}).apply(sink("v", key={"id": 1}))
    assert out.key == {"id": 1, "t": "test"}
    assert out.value == "v"


def test_missing_partition_and_timestamp_are_not_inserted() -> None:
    record = sink({"a": 1}, partition=None, timestamp=None)
    out = configured(InsertFieldValue, {"partition.field": "p", "timestamp.field": "ts"}).apply(record)
    assert out.value == {"a": 1}


def test_offset_of_a_source_record_is_an_error() -> None:
    with pytest.raises(DataException) as err:
        configured(InsertFieldValue, {"offset.field": "o"}).apply(source({"a": 1}))
    assert "Only SinkRecord supported for [field insertion], found: SourceRecord" in str(err.value)
    assert str(err.value).startswith("InsertField$Value: ")


def test_a_value_that_is_not_a_map_or_struct_is_an_error() -> None:
    with pytest.raises(
        DataException,
        match=r"Only Map objects supported in absence of schema for \[field insertion\], found: str",
    ):
        configured(InsertFieldValue, {"topic.field": "t"}).apply(sink("text"))
    with pytest.raises(
        DataException, match=r"Only Struct objects supported for \[field insertion\], found: str"
    ):
        configured(InsertFieldValue, {"topic.field": "t"}).apply(sink("text", Schema.STRING_SCHEMA))


def test_a_field_that_already_exists_in_the_schema_is_an_error() -> None:
    schema = SchemaBuilder.struct().field("topic", Schema.STRING_SCHEMA).build()
    with pytest.raises(DataException, match="topic"):
        configured(InsertFieldValue, {"topic.field": "topic"}).apply(
            sink(Struct(schema).put("topic", "x"), schema)
        )


def test_replace_null_with_default() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("opt", SchemaBuilder.int32().optional().default_value(18).build())
        .build()
    )
    value = Struct(schema)  # "opt" left null
    kept = configured(InsertFieldValue, {"topic.field": "t"}).apply(sink(value, schema))
    assert kept.value.get_without_default("opt") == 18
    raw = configured(InsertFieldValue, {"topic.field": "t", "replace.null.with.default": "false"}).apply(
        sink(value, schema)
    )
    assert raw.value.get_without_default("opt") is None


def test_suffixes_strip_one_character_only() -> None:
    out = configured(InsertFieldValue, {"topic.field": "x!?"}).apply(sink({}))
    assert out.value == {"x!": "test"}


def test_config_without_any_field_is_refused_with_a_key() -> None:
    issues = InsertFieldValue.Config.issues({}, prefix="transforms.i.")
    assert [i.key for i in issues] == ["transforms.i.topic.field"]
    assert "No field insertion configured" in issues[0].message
    with pytest.raises(ConfigValidationError):
        configured(InsertFieldValue, {})


def test_static_field_without_a_value_is_refused() -> None:
    issues = InsertFieldValue.Config.issues({"static.field": "s"})
    assert [(i.key, i.message) for i in issues] == [
        (
            "static.value",
            "Invalid value null for configuration static.value: No value specified for static field: s",
        )
    ]


@pytest.mark.parametrize(
    ("props", "key", "message"),
    [
        ({"topic.field": "!"}, "topic.field", "Invalid value ! for configuration topic.field: no field name"),
        ({"static.field": " ", "static.value": "v"}, "static.field", "no field name"),
        (
            {"topic.field": "x", "partition.field": "x?"},
            "partition.field",
            "field x is already inserted by topic.field",
        ),
    ],
)
def test_empty_or_repeated_field_names_are_refused(props: dict[str, str], key: str, message: str) -> None:
    [issue] = InsertFieldValue.Config.issues(props)
    assert issue.key == key and message in issue.message


def test_a_timestamp_out_of_datetime_range_is_a_record_error() -> None:
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataException) as err:
        configured(InsertFieldValue, {"timestamp.field": "ts"}).apply(
            sink(Struct(schema).put("a", 1), schema, timestamp=2**62)
        )
    assert str(err.value).startswith("InsertField$Value: Timestamp value")
    assert "offset 42" in str(err.value)


@pytest.mark.parametrize("spelling", ["yes", "on", "1", "no", "f"])
def test_booleans_are_kafkas_true_or_false_only(spelling: str) -> None:
    [issue] = InsertFieldValue.Config.issues({"topic.field": "t", "replace.null.with.default": spelling})
    assert issue.message == (
        f"Invalid value {spelling} for configuration replace.null.with.default: "
        "Expected value to be either true or false"
    )
    for ok in ("TRUE ", "False", "true"):
        assert InsertFieldValue.Config.issues({"topic.field": "t", "replace.null.with.default": ok}) == []
