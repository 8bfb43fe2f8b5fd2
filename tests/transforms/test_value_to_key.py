"""ValueToKey against Kafka's ValueToKeyTest cases, key schema order and caching,
tombstones and the config checks."""

from __future__ import annotations

import pytest

from connect.api import ConfigValidationError, DataException, Schema, SchemaBuilder, Struct
from tests.transforms.support import configured, sink, source
from transforms.value_to_key import ValueToKey

VALUE_SCHEMA = (
    SchemaBuilder.struct()
    .name("com.example.Row")
    .field("a", Schema.INT32_SCHEMA)
    .field("b", Schema.OPTIONAL_STRING_SCHEMA)
    .field("c", Schema.INT32_SCHEMA)
    .build()
)


def row() -> Struct:
    return Struct(VALUE_SCHEMA).put("a", 1).put("b", "two").put("c", 3)


def test_schemaless() -> None:
    value = {"a": 1, "b": 2, "c": 3}
    out = configured(ValueToKey, fields="a,b").apply(sink(value, key="old"))
    assert out.key_schema is None
    assert out.key == {"a": 1, "b": 2}
    assert out.value is value


def test_schemaless_missing_field_gives_null() -> None:
    out = configured(ValueToKey, fields="a,zz").apply(sink({"a": 1}))
    assert out.key == {"a": 1, "zz": None}


def test_with_schema() -> None:
    record = sink(row(), VALUE_SCHEMA, key="old", key_schema=Schema.STRING_SCHEMA)
    out = configured(ValueToKey, fields="a,b").apply(record)
    expected_schema = (
        SchemaBuilder.struct()
        .field("a", Schema.INT32_SCHEMA)
        .field("b", Schema.OPTIONAL_STRING_SCHEMA)
        .build()
    )
    assert out.key_schema == expected_schema
    assert out.key == Struct(expected_schema).put("a", 1).put("b", "two")
    assert (out.value_schema, out.value) == (VALUE_SCHEMA, record.value)


def test_key_schema_follows_the_order_of_fields_and_is_unnamed() -> None:
    out = configured(ValueToKey, fields="c,a").apply(sink(row(), VALUE_SCHEMA))
    assert [f.name for f in out.key_schema.fields] == ["c", "a"]
    assert (out.key_schema.name, out.key_schema.optional) == (None, False)
    assert (out.key.get("c"), out.key.get("a")) == (3, 1)


def test_key_schema_is_cached_per_value_schema() -> None:
    xform = configured(ValueToKey, fields="a")
    first = xform.apply(sink(row(), VALUE_SCHEMA)).key_schema
    second = xform.apply(sink(row(), VALUE_SCHEMA)).key_schema
    assert first is second


def test_non_existing_field_is_a_data_error() -> None:
    with pytest.raises(DataException) as err:
        configured(ValueToKey, fields="not_exist").apply(sink(row(), VALUE_SCHEMA, offset=11))
    assert (
        str(err.value) == "ValueToKey: Field does not exist: not_exist (topic 'test', partition 0, offset 11)"
    )


@pytest.mark.parametrize(("replace", "expected"), [(False, None), (True, 42)])
def test_replace_null_with_default(replace: bool, expected: int | None) -> None:
    schema = (
        SchemaBuilder.struct()
        .field("optional_with_default", SchemaBuilder.int32().optional().default_value(42).build())
        .build()
    )
    value = Struct(schema).put("optional_with_default", None)
    xform = configured(ValueToKey, {"fields": "optional_with_default", "replace.null.with.default": replace})
    assert xform.apply(sink(value, schema)).key.get_without_default("optional_with_default") == expected


def test_required_field_with_default_and_raw_null() -> None:
    schema = SchemaBuilder.struct().field("n", SchemaBuilder.int32().default_value(7).build()).build()
    assert (
        configured(ValueToKey, fields="n").apply(sink(Struct(schema), schema)).key.get_without_default("n")
        == 7
    )
    # Without replacement the null is kept: Connect's Struct lets a field with a default hold null
    # (Java's put refuses it), and reads it back as the default.
    raw = configured(ValueToKey, {"fields": "n", "replace.null.with.default": "false"}).apply(
        sink(Struct(schema), schema)
    )
    assert (raw.key.get_without_default("n"), raw.key.get("n")) == (None, 7)


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        (
            None,
            "Only Map objects supported in absence of schema for "
            "[copying fields from value to key], found: null",
        ),
        (VALUE_SCHEMA, "Only Struct objects supported for [copying fields from value to key], found: null"),
    ],
)
def test_tombstones_raise(schema: Schema | None, message: str) -> None:
    with pytest.raises(DataException) as err:
        configured(ValueToKey, fields="a").apply(source(None, schema))
    assert str(err.value).startswith(f"ValueToKey: {message} (topic 'test'")


def test_key_is_replaced_even_on_source_records() -> None:
    out = configured(ValueToKey, fields="a").apply(source({"a": 5}, key="k"))
    assert out.key == {"a": 5}
    assert out.source_offset == {"position": 7}


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            "",
            "Invalid value  for configuration transforms.v.fields: Configuration 'fields' "
            "must not be empty. Valid values include: any non-empty value",
        ),
        (
            "a,a",
            "Invalid value a,a for configuration transforms.v.fields: "
            "Configuration 'fields' values must not be duplicated.",
        ),
        (
            "a,,b",
            "Invalid value a,,b for configuration transforms.v.fields: "
            "Configuration 'fields' values must not be empty.",
        ),
    ],
)
def test_config_errors(fields: str, message: str) -> None:
    issues = ValueToKey.Config.issues({"fields": fields}, prefix="transforms.v.")
    assert [(i.key, i.message) for i in issues] == [("transforms.v.fields", message)]
    with pytest.raises(ConfigValidationError):
        configured(ValueToKey, fields=fields)


def test_fields_is_required() -> None:
    issues = ValueToKey.Config.issues({})
    assert [(i.key, i.message) for i in issues] == [
        ("fields", 'Missing required configuration "fields" which has no default value.')
    ]


def test_alias_is_kafkas_class_name() -> None:
    assert ValueToKey.aliases == ("org.apache.kafka.connect.transforms.ValueToKey",)
