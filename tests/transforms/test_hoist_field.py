"""HoistField against Kafka's HoistFieldTest cases and the edge cases around nulls."""

from __future__ import annotations

import pytest

from connect.api import DataException, Schema, SchemaBuilder, Struct
from tests.transforms.support import configured, sink
from transforms.hoist_field import HoistFieldKey, HoistFieldValue


def test_schemaless_key_becomes_a_map() -> None:
    xform = configured(HoistFieldKey, field="magic")
    out = xform.apply(sink(key=42))
    assert out.key_schema is None
    assert out.key == {"magic": 42}


def test_with_schema_key_becomes_a_struct_of_one_field() -> None:
    xform = configured(HoistFieldKey, field="magic")
    out = xform.apply(sink(key=42, key_schema=Schema.INT32_SCHEMA))
    expected_schema = SchemaBuilder.struct().field("magic", Schema.INT32_SCHEMA).build()
    assert out.key_schema == expected_schema
    assert out.key == Struct(expected_schema).put("magic", 42)


def test_value_variant_leaves_the_key_alone() -> None:
    xform = configured(HoistFieldValue, field="line")
    record = sink("hello", Schema.STRING_SCHEMA, key="k", key_schema=Schema.STRING_SCHEMA)
    out = xform.apply(record)
    assert (out.key, out.key_schema) == ("k", Schema.STRING_SCHEMA)
    assert isinstance(out.value, Struct) and out.value.get("line") == "hello"
    assert (out.topic, out.kafka_partition, out.kafka_offset, out.timestamp) == (
        "test",
        0,
        42,
        record.timestamp,
    )


def test_schemaless_null_is_wrapped() -> None:
    out = configured(HoistFieldValue, field="f").apply(sink(None))
    assert out.value == {"f": None}


def test_null_with_an_optional_schema_is_wrapped() -> None:
    out = configured(HoistFieldValue, field="f").apply(sink(None, Schema.OPTIONAL_STRING_SCHEMA))
    assert out.value.get("f") is None
    assert out.value_schema.field("f").schema == Schema.OPTIONAL_STRING_SCHEMA


def test_null_with_a_required_schema_is_a_data_error_naming_transform_and_record() -> None:
    with pytest.raises(DataException) as err:
        configured(HoistFieldValue, field="f").apply(sink(None, Schema.STRING_SCHEMA, offset=9))
    message = str(err.value)
    assert message.startswith("HoistField$Value: ")
    assert '"f"' in message and "offset 9" in message and "topic 'test'" in message


def test_the_hoisted_schema_is_derived_once_per_input_schema() -> None:
    xform = configured(HoistFieldValue, field="f")
    first = xform.apply(sink("a", Schema.STRING_SCHEMA)).value_schema
    second = xform.apply(sink("b", Schema.STRING_SCHEMA)).value_schema
    assert first is second
    other = xform.apply(sink(1, Schema.INT64_SCHEMA)).value_schema
    assert other is not first and other.field("f").schema == Schema.INT64_SCHEMA


def test_missing_field_setting_is_refused() -> None:
    issues = HoistFieldValue.Config.issues({}, prefix="transforms.h.")
    assert [(i.key, i.message) for i in issues] == [
        (
            "transforms.h.field",
            'Missing required configuration "transforms.h.field" which has no default value.',
        )
    ]


def test_an_empty_field_name_is_refused_at_validation() -> None:
    [issue] = HoistFieldValue.Config.issues({"field": " "}, prefix="transforms.h.")
    assert (issue.key, issue.message) == (
        "transforms.h.field",
        "Invalid value  for configuration transforms.h.field: String must be non-empty",
    )
