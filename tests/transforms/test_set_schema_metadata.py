"""SetSchemaMetadata against Kafka's SetSchemaMetadataTest cases, the Struct rebuild, tombstones
and the config checks."""

from __future__ import annotations

from typing import Any

import pytest

from connect.api import ConfigValidationError, DataException, Schema, SchemaBuilder, Struct, Type
from tests.transforms.support import configured, sink, source
from transforms.set_schema_metadata import SetSchemaMetadataKey, SetSchemaMetadataValue

EMPTY_STRUCT = SchemaBuilder.struct().build()


def xform(**configs: Any) -> SetSchemaMetadataValue:
    return configured(SetSchemaMetadataValue, {k.replace("_", "."): v for k, v in configs.items()})


def test_schema_name_update() -> None:
    out = xform(schema_name="foo").apply(sink(None, EMPTY_STRUCT))
    assert out.value_schema.name == "foo"
    assert out.value is None


def test_schema_version_update() -> None:
    out = xform(schema_version=42).apply(sink(None, EMPTY_STRUCT))
    assert out.value_schema.version == 42
    assert out.value_schema.name is None


def test_schema_name_and_version_update() -> None:
    out = configured(SetSchemaMetadataValue, {"schema.name": "foo", "schema.version": "42"}).apply(
        sink(None, EMPTY_STRUCT)
    )
    assert (out.value_schema.name, out.value_schema.version) == ("foo", 42)


def struct_schema(f1: Schema = Schema.STRING_SCHEMA) -> Schema:
    return (
        SchemaBuilder.struct()
        .name("my.orig.SchemaDefn")
        .version(1)
        .doc("the doc")
        .parameter("p", "v")
        .field("f1", f1)
        .field("f2", Schema.INT32_SCHEMA)
        .build()
    )


def assert_matching_schema(value: Struct, schema: Schema) -> None:
    assert value.schema is schema
    for f in schema.fields:
        assert value.schema.field(f.name) is f


def test_schema_name_and_version_update_with_struct() -> None:
    schema = struct_schema()
    value = Struct(schema).put("f1", "value1").put("f2", 1)
    out = xform(schema_name="foo", schema_version="42").apply(sink(value, schema))
    s = out.value_schema
    assert (s.name, s.version, s.doc, dict(s.parameters or {})) == ("foo", 42, "the doc", {"p": "v"})
    assert s.fields == schema.fields
    assert_matching_schema(out.value, s)
    assert (out.value.get("f1"), out.value.get("f2")) == ("value1", 1)
    assert value.schema is schema  # the input struct is left alone


@pytest.mark.parametrize(("replace_null", "expected"), [(False, None), (True, "default")])
def test_struct_with_a_null_field_and_replace_null_with_default(replace_null: bool, expected: Any) -> None:
    schema = struct_schema(SchemaBuilder.string().default_value("default").optional().build())
    value = Struct(schema).put("f1", None).put("f2", 1)
    out = xform(schema_name="foo", schema_version="42", replace_null_with_default=replace_null).apply(
        sink(value, schema)
    )
    assert_matching_schema(out.value, out.value_schema)
    assert out.value.get_without_default("f1") == expected


def test_value_schema_required() -> None:
    with pytest.raises(DataException) as err:
        xform(schema_name="foo").apply(sink(42))
    assert str(err.value) == (
        "SetSchemaMetadata$Value: Schema required for [updating schema metadata] "
        "(topic 'test', partition 0, offset 42)"
    )


def test_ignore_record_with_null_value_and_no_schema() -> None:
    record = sink(None, None)
    assert xform(schema_name="foo").apply(record) is record


def test_non_struct_values_are_kept() -> None:
    record = sink(1, Schema.INT32_SCHEMA)
    out = xform(schema_name="my.Int").apply(record)
    assert out.value == 1
    assert out.value_schema == SchemaBuilder.int32().name("my.Int").build()


def test_every_other_schema_property_is_kept() -> None:
    items = SchemaBuilder.array(Schema.STRING_SCHEMA).optional().doc("tags").default_value(["a"]).build()
    out = xform(schema_version=7).apply(sink(["x"], items)).value_schema
    assert (out.type, out.optional, out.doc, out.default_value, out.value_schema, out.version) == (
        Type.ARRAY,
        True,
        "tags",
        ["a"],
        Schema.STRING_SCHEMA,
        7,
    )
    counts = SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).name("old").version(3).build()
    out = xform(schema_name="new").apply(sink({"a": 1}, counts)).value_schema
    assert (out.key_schema, out.value_schema, out.name, out.version) == (
        Schema.STRING_SCHEMA,
        Schema.INT64_SCHEMA,
        "new",
        3,
    )


def test_a_struct_default_is_rebuilt_on_the_new_schema() -> None:
    plain = SchemaBuilder.struct().name("old").optional().field("a", Schema.INT32_SCHEMA).build()
    schema = (
        SchemaBuilder.struct()
        .name("old")
        .optional()
        .field("a", Schema.INT32_SCHEMA)
        .default_value(Struct(plain).put("a", 5))
        .build()
    )
    out = xform(schema_name="new").apply(sink(None, schema))
    default = out.value_schema.default_value
    assert out.value_schema.name == "new"
    assert default.get("a") == 5
    assert default.schema.name == "new"


def test_a_tombstone_with_a_schema_gets_the_new_schema() -> None:
    out = xform(schema_name="foo").apply(sink(None, Schema.OPTIONAL_STRING_SCHEMA))
    assert out.value is None
    assert out.value_schema == SchemaBuilder.string().optional().name("foo").build()


def test_the_updated_schema_is_cached_per_input_schema() -> None:
    schema = struct_schema()
    t = xform(schema_name="foo")
    first = t.apply(sink(Struct(schema).put("f1", "a").put("f2", 1), schema)).value_schema
    second = t.apply(sink(Struct(schema).put("f1", "b").put("f2", 2), schema)).value_schema
    assert first is second


def test_a_schema_that_already_has_the_metadata_is_kept() -> None:
    schema = SchemaBuilder.string().name("foo").version(2).build()
    record = sink("x", schema)
    assert xform(schema_name="foo", schema_version=2).apply(record) is record
    struct = struct_schema()
    out = xform(schema_name="my.orig.SchemaDefn").apply(
        sink(Struct(struct).put("f1", "a").put("f2", 1), struct)
    )
    assert out.value_schema is struct


def test_key_variant() -> None:
    t = configured(SetSchemaMetadataKey, {"schema.name": "k"})
    out = t.apply(source("v", Schema.STRING_SCHEMA, key=1, key_schema=Schema.INT64_SCHEMA))
    assert out.key_schema == SchemaBuilder.int64().name("k").build()
    assert (out.key, out.value_schema, out.value) == (1, Schema.STRING_SCHEMA, "v")
    with pytest.raises(DataException, match=r"^SetSchemaMetadata\$Key: Schema required"):
        t.apply(source("v", key=1))


def test_renaming_to_an_invalid_schema_fails_with_the_record() -> None:
    # A Timestamp logical name on a string schema: the string default no longer fits.
    schema = SchemaBuilder.string().default_value("x").build()
    with pytest.raises(DataException, match=r"^SetSchemaMetadata\$Value: Invalid default value"):
        xform(schema_name="org.apache.kafka.connect.data.Timestamp").apply(sink("y", schema))


@pytest.mark.parametrize(
    ("props", "key", "message"),
    [
        ({}, "transforms.s.schema.name", "Neither schema name nor version configured"),
        (
            {"replace.null.with.default": "false"},
            "transforms.s.schema.name",
            "Neither schema name nor version configured",
        ),
        (
            {"schema.version": "x"},
            "transforms.s.schema.version",
            "Invalid value x for configuration transforms.s.schema.version: Not a number of type INT",
        ),
        (
            {"schema.version": "2147483648"},
            "transforms.s.schema.version",
            "Invalid value 2147483648 for configuration transforms.s.schema.version: "
            "Not a number of type INT",
        ),
        (
            {"schema.version": "1.0"},
            "transforms.s.schema.version",
            "Invalid value 1.0 for configuration transforms.s.schema.version: Not a number of type INT",
        ),
        (
            {"schema.version": True},
            "transforms.s.schema.version",
            "Invalid value True for configuration transforms.s.schema.version: Not a number of type INT",
        ),
    ],
)
def test_config_errors(props: dict[str, Any], key: str, message: str) -> None:
    found = SetSchemaMetadataValue.Config.issues(props, prefix="transforms.s.")
    assert [(i.key, i.message) for i in found] == [(key, message)]
    with pytest.raises(ConfigValidationError):
        configured(SetSchemaMetadataValue, props)


def test_version_text_is_trimmed() -> None:
    assert SetSchemaMetadataValue.Config.issues({"schema.version": " 42 "}) == []
    assert xform(schema_version=" -3 ").apply(sink(None, EMPTY_STRUCT)).value_schema.version == -3
