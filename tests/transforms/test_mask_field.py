"""MaskField against Kafka's MaskFieldTest cases, numeric replacements narrowed to the field's
type, tombstones and the config checks."""

from __future__ import annotations

import datetime
from decimal import Decimal as BigDecimal
from typing import Any

import pytest

from connect.api import (
    ConfigValidationError,
    DataException,
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
)
from tests.transforms.support import configured, sink, source
from transforms.mask_field import MaskFieldKey, MaskFieldValue

UTC = datetime.UTC
NOW = datetime.datetime(2024, 5, 1, 12, 30, tzinfo=UTC)
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=UTC)

SCHEMA = (
    SchemaBuilder.struct()
    .field("magic", Schema.INT32_SCHEMA)
    .field("bool", Schema.BOOLEAN_SCHEMA)
    .field("byte", Schema.INT8_SCHEMA)
    .field("short", Schema.INT16_SCHEMA)
    .field("int", Schema.INT32_SCHEMA)
    .field("long", Schema.INT64_SCHEMA)
    .field("float", Schema.FLOAT32_SCHEMA)
    .field("double", Schema.FLOAT64_SCHEMA)
    .field("string", Schema.STRING_SCHEMA)
    .field("date", Date.SCHEMA)
    .field("time", Time.SCHEMA)
    .field("timestamp", Timestamp.SCHEMA)
    .field("decimal", Decimal.schema(0))
    .field("array", SchemaBuilder.array(Schema.INT32_SCHEMA).build())
    .field("map", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build())
    .field("withDefault", SchemaBuilder.string().optional().default_value("default").build())
    .build()
)


def values_with_schema() -> Struct:
    return (
        Struct(SCHEMA)
        .put("magic", 42)
        .put("bool", True)
        .put("byte", 42)
        .put("short", 42)
        .put("int", 42)
        .put("long", 42)
        .put("float", 42.0)
        .put("double", 42.0)
        .put("string", "hmm")
        .put("date", NOW.date())
        .put("time", NOW.time())
        .put("timestamp", NOW)
        .put("decimal", BigDecimal(42))
        .put("array", [1, 2, 3])
        .put("map", {"what": "what"})
    )


def values() -> dict[str, Any]:
    return {
        "magic": 42,
        "bool": True,
        "int": 42,
        "float": 42.0,
        "string": "55.121.20.20",
        "date": NOW.date(),
        "time": NOW.time(),
        "timestamp": NOW,
        "decimal": BigDecimal("42.0"),
        "list": [42],
        "map": {"key": "value"},
    }


def transform(
    fields: list[str], replacement: str | None = None, replace_null: bool = False
) -> MaskFieldValue:
    configs: dict[str, Any] = {"fields": fields, "replace.null.with.default": replace_null}
    if replacement is not None:
        configs["replacement"] = replacement
    return configured(MaskFieldValue, configs)


def test_schemaless() -> None:
    data = values()
    masked = [name for name in data if name != "magic"]
    out = transform(masked).apply(sink(data)).value
    assert out == {
        "magic": 42,
        "bool": False,
        "int": 0,
        "float": 0.0,
        "string": "",
        "date": datetime.date(1970, 1, 1),
        "time": datetime.time(0, 0),
        "timestamp": EPOCH,
        "decimal": BigDecimal(0),
        "list": [],
        "map": {},
    }
    assert type(out["float"]) is float and type(out["int"]) is int and type(out["bool"]) is bool
    assert data["string"] == "55.121.20.20"  # the input map is not changed


def test_with_schema() -> None:
    masked = [f.name for f in SCHEMA.fields if f.name != "magic"]
    record = sink(values_with_schema(), SCHEMA)
    out = transform(masked).apply(record)
    assert out.value_schema is SCHEMA
    v = out.value
    assert v.schema is SCHEMA
    assert {f.name: v.get_without_default(f.name) for f in SCHEMA.fields} == {
        "magic": 42,
        "bool": False,
        "byte": 0,
        "short": 0,
        "int": 0,
        "long": 0,
        "float": 0.0,
        "double": 0.0,
        "string": "",
        "date": datetime.date(1970, 1, 1),
        "time": datetime.time(0, 0),
        "timestamp": EPOCH,
        "decimal": BigDecimal(0),
        "array": [],
        "map": {},
        "withDefault": None,
    }
    v.validate()
    assert record.value.get("string") == "hmm"


def test_a_null_with_a_default_is_masked_when_replaced_by_the_default() -> None:
    out = transform(["withDefault"], replace_null=True).apply(sink(values_with_schema(), SCHEMA)).value
    assert out.get_without_default("withDefault") == ""
    kept = transform(["withDefault"], replace_null=False).apply(sink(values_with_schema(), SCHEMA)).value
    assert kept.get_without_default("withDefault") is None


def test_unlisted_fields_follow_replace_null_with_default() -> None:
    assert (
        transform(["int"], replace_null=True)
        .apply(sink(values_with_schema(), SCHEMA))
        .value.get_without_default("withDefault")
        == "default"
    )


def test_null_list_and_map_replacements_are_new_mutable_objects() -> None:
    xform = transform(["array", "map"])
    first = xform.apply(sink(values_with_schema(), SCHEMA)).value
    second = xform.apply(sink(values_with_schema(), SCHEMA)).value
    first.get("array").append(0)
    first.get("map")["k"] = "v"
    assert first.get("array") == [0] and first.get("map") == {"k": "v"}
    assert second.get("array") == [] and second.get("map") == {}


@pytest.mark.parametrize(
    ("field", "replacement", "expected"),
    [
        ("int", "123", 123),
        ("float", "123", 123.0),
        ("string", "123", "123"),
        ("decimal", "123.0", BigDecimal("123.0")),
        ("int", "123.9", 123),  # BigDecimal.longValue() drops the fraction
        ("int", "1e3", 1000),
        ("int", "-1e30", -5076944270305263616),  # and keeps the low 64 bits
        ("float", "1e400", float("inf")),
    ],
)
def test_schemaless_with_replacement(field: str, replacement: str, expected: Any) -> None:
    out = transform([field], replacement).apply(sink(values())).value
    assert out[field] == expected
    assert type(out[field]) is type(expected)


@pytest.mark.parametrize(
    ("field", "replacement", "expected"),
    [
        ("short", "123", 123),
        ("byte", "123", 123),
        ("int", "123", 123),
        ("long", "123", 123),
        ("float", "123", 123.0),
        ("double", "123", 123.0),
        ("string", "123", "123"),
        ("decimal", "123.0", BigDecimal("123.0")),
        ("byte", "300", 44),  # Java's (byte) cast
        ("short", "70000", 4464),
        ("int", "2147483648", -(2**31)),
        ("long", "9223372036854775808", -(2**63)),
        ("float", "0.1", 0.10000000149011612),  # a Java float
        ("double", "0.1", 0.1),
        ("float", "1e39", float("inf")),
    ],
)
def test_with_schema_and_replacement(field: str, replacement: str, expected: Any) -> None:
    out = transform([field], replacement).apply(sink(values_with_schema(), SCHEMA)).value
    assert out.get(field) == expected
    assert type(out.get(field)) is type(expected)
    out.validate()


def test_an_int_in_a_float_field_takes_the_float_replacement() -> None:
    schema = SchemaBuilder.struct().field("price", Schema.FLOAT64_SCHEMA).build()
    out = transform(["price"], "12.5").apply(sink(Struct(schema).put("price", 3), schema)).value
    assert out.get("price") == 12.5


@pytest.mark.parametrize(
    ("field", "type_name"), [("date", "date"), ("bool", "bool"), ("list", "list"), ("map", "dict")]
)
def test_schemaless_unsupported_replacement_type(field: str, type_name: str) -> None:
    with pytest.raises(DataException) as err:
        transform([field], "123").apply(sink(values()))
    assert str(err.value) == (
        f"MaskField$Value: Cannot mask value of type {type_name} with custom replacement. "
        "(topic 'test', partition 0, offset 42)"
    )


@pytest.mark.parametrize(
    ("field", "type_name"), [("time", "time"), ("timestamp", "datetime"), ("array", "list"), ("bool", "bool")]
)
def test_with_schema_unsupported_replacement_type(field: str, type_name: str) -> None:
    with pytest.raises(DataException, match=f"Cannot mask value of type {type_name} with custom replacement"):
        transform([field], "123").apply(sink(values_with_schema(), SCHEMA))


@pytest.mark.parametrize("field", ["int", "float"])
def test_a_replacement_that_is_not_a_number_fails_for_numeric_fields(field: str) -> None:
    with pytest.raises(DataException) as err:
        transform([field], "foo").apply(sink(values()))
    assert str(err.value) == (
        "MaskField$Value: Unable to convert foo (class str) to a number "
        "(topic 'test', partition 0, offset 42)"
    )


@pytest.mark.parametrize("field", ["byte", "short", "int", "long", "float", "double"])
def test_a_replacement_that_is_not_a_number_fails_for_numeric_fields_with_schema(field: str) -> None:
    with pytest.raises(DataException, match=r"Unable to convert 1,5 \(class str\) to a number"):
        transform([field], "1,5").apply(sink(values_with_schema(), SCHEMA))


def test_a_replacement_that_is_not_a_number_fails_for_decimals() -> None:
    with pytest.raises(DataException, match=r"Unable to convert foo \(class str\) to number \("):
        transform(["decimal"], "foo").apply(sink(values()))


def test_a_replacement_fails_only_for_the_fields_it_cannot_replace() -> None:
    assert transform(["string"], "foo").apply(sink(values())).value["string"] == "foo"
    with pytest.raises(DataException, match="to a number"):
        transform(["string", "int"], "foo").apply(sink(values()))


@pytest.mark.parametrize(("value", "type_name"), [(b"\x01", "bytes"), ([1], None), ({"a": 1}, None)])
def test_only_some_types_can_be_masked(value: Any, type_name: str | None) -> None:
    xform = transform(["f"])
    if type_name is None:
        assert xform.apply(sink({"f": value})).value == {"f": type(value)()}
        return
    with pytest.raises(DataException) as err:
        xform.apply(sink({"f": value}))
    assert str(err.value) == (
        f"MaskField$Value: Cannot mask value of type: {type_name} (topic 'test', partition 0, offset 42)"
    )


def test_a_struct_field_cannot_be_masked() -> None:
    inner = SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA).build()
    schema = SchemaBuilder.struct().field("inner", inner).build()
    with pytest.raises(DataException, match="Cannot mask value of type: Struct"):
        transform(["inner"]).apply(sink(Struct(schema).put("inner", Struct(inner).put("x", 1)), schema))


def test_a_listed_field_missing_from_the_map_is_added_as_null() -> None:
    assert transform(["absent"]).apply(sink({"a": 1})).value == {"a": 1, "absent": None}


def test_listed_fields_missing_from_the_schema_are_ignored() -> None:
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    out = transform(["absent"]).apply(sink(Struct(schema).put("a", 1), schema)).value
    assert out.get("a") == 1


def test_nulls_stay_null() -> None:
    assert transform(["a"], "x").apply(sink({"a": None})).value == {"a": None}


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        (None, "Only Map objects supported in absence of schema for [mask fields], found: null"),
        (SCHEMA, "Only Struct objects supported for [mask fields], found: null"),
    ],
)
def test_tombstones_are_an_error(schema: Schema | None, message: str) -> None:
    with pytest.raises(DataException) as err:
        transform(["int"]).apply(sink(None, schema))
    assert str(err.value) == f"MaskField$Value: {message} (topic 'test', partition 0, offset 42)"


def test_key_variant_masks_the_key_and_keeps_its_schema() -> None:
    xform = configured(MaskFieldKey, {"fields": "int"})
    out = xform.apply(source("v", key=values_with_schema(), key_schema=SCHEMA))
    assert out.key_schema is SCHEMA
    assert out.key.get("int") == 0
    assert out.value == "v"
    with pytest.raises(DataException, match=r"^MaskField\$Key: Only Map objects"):
        xform.apply(source("v", key="text"))


def test_fields_string_is_split_on_commas() -> None:
    out = configured(MaskFieldValue, {"fields": " int , string "}).apply(sink(values())).value
    assert (out["int"], out["string"], out["float"]) == (0, "", 42.0)


@pytest.mark.parametrize(
    ("props", "key", "message"),
    [
        (
            {},
            "transforms.m.fields",
            'Missing required configuration "transforms.m.fields" which has no default value.',
        ),
        (
            {"fields": ""},
            "transforms.m.fields",
            "Invalid value  for configuration transforms.m.fields: Configuration 'fields' must not be empty. "
            "Valid values include: any non-empty value",
        ),
        (
            {"fields": "a,a"},
            "transforms.m.fields",
            "Invalid value a,a for configuration transforms.m.fields: "
            "Configuration 'fields' values must not be duplicated.",
        ),
        (
            {"fields": "a,,b"},
            "transforms.m.fields",
            "Invalid value a,,b for configuration transforms.m.fields: "
            "Configuration 'fields' values must not be empty.",
        ),
        (
            {"fields": "a", "replacement": ""},
            "transforms.m.replacement",
            "Invalid value  for configuration transforms.m.replacement: String must be non-empty",
        ),
    ],
)
def test_config_errors(props: dict[str, Any], key: str, message: str) -> None:
    found = MaskFieldValue.Config.issues(props, prefix="transforms.m.")
    assert [(i.key, i.message) for i in found] == [(key, message)]
    with pytest.raises(ConfigValidationError):
        configured(MaskFieldValue, props)


def test_a_blank_replacement_is_refused_too() -> None:
    found = MaskFieldValue.Config.issues({"fields": "a", "replacement": "   "})
    assert [i.key for i in found] == ["replacement"]
    assert found[0].message.endswith("String must be non-empty")
