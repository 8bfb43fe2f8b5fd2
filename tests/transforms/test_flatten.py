"""Flatten against Kafka's FlattenTest cases, the schema derivation rules (optional and
default propagation, collisions, maps), and round-trip properties over random nested data."""

from __future__ import annotations

import datetime
import decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connect.api import DataException, Schema, SchemaBuilder, Struct, Timestamp, Type
from tests.transforms.support import configured, sink, source
from transforms.flatten import FlattenKey, FlattenValue

SUPPORTED = (
    SchemaBuilder.struct()
    .field("int8", Schema.INT8_SCHEMA)
    .field("int16", Schema.INT16_SCHEMA)
    .field("int32", Schema.INT32_SCHEMA)
    .field("int64", Schema.INT64_SCHEMA)
    .field("float32", Schema.FLOAT32_SCHEMA)
    .field("float64", Schema.FLOAT64_SCHEMA)
    .field("boolean", Schema.BOOLEAN_SCHEMA)
    .field("string", Schema.STRING_SCHEMA)
    .field("bytes", Schema.BYTES_SCHEMA)
    .build()
)
SUPPORTED_VALUES = {
    "int8": 8,
    "int16": 16,
    "int32": 32,
    "int64": 64,
    "float32": 32.0,
    "float64": 64.0,
    "boolean": True,
    "string": "stringy",
    "bytes": b"bytes",
}


def supported_struct() -> Struct:
    s = Struct(SUPPORTED)
    for k, v in SUPPORTED_VALUES.items():
        s.put(k, v)
    return s


def test_top_level_struct_required() -> None:
    with pytest.raises(DataException) as err:
        configured(FlattenValue).apply(source(42, Schema.INT32_SCHEMA))
    assert str(err.value).startswith(
        "Flatten$Value: Only Struct objects supported for [flattening], found: int"
    )


def test_top_level_map_required() -> None:
    with pytest.raises(DataException) as err:
        configured(FlattenValue).apply(sink(42, offset=7))
    message = str(err.value)
    assert message.startswith(
        "Flatten$Value: Only Map objects supported in absence of schema for [flattening], found: int"
    )
    assert "offset 7" in message


def test_nested_struct() -> None:
    one = SchemaBuilder.struct().field("B", SUPPORTED).build()
    two = SchemaBuilder.struct().field("A", one).build()
    value = Struct(two).put("A", Struct(one).put("B", supported_struct()))
    out = configured(FlattenValue).apply(source(value, two))
    assert out.value_schema.type is Type.STRUCT
    assert len(out.value_schema.fields) == 9
    assert {f.name: out.value.get(f.name) for f in out.value_schema.fields} == {
        f"A.B.{k}": v for k, v in SUPPORTED_VALUES.items()
    }
    assert out.value_schema.field("A.B.int8").schema == Schema.INT8_SCHEMA
    out.value.validate()


def test_nested_map_with_delimiter() -> None:
    value = {"A": {"B": dict(SUPPORTED_VALUES)}}
    out = configured(FlattenValue, delimiter="#").apply(source(value))
    assert out.value_schema is None
    assert out.value == {f"A#B#{k}": v for k, v in SUPPORTED_VALUES.items()}


def test_optional_field_struct() -> None:
    inner = SchemaBuilder.struct().field("opt_int32", Schema.OPTIONAL_INT32_SCHEMA).build()
    outer = SchemaBuilder.struct().field("B", inner).build()
    out = configured(FlattenValue).apply(source(Struct(outer).put("B", Struct(inner)), outer))
    assert out.value.get("B.opt_int32") is None
    assert out.value_schema.field("B.opt_int32").schema == Schema.OPTIONAL_INT32_SCHEMA


def test_optional_nested_struct_that_is_null_adds_nothing() -> None:
    inner = SchemaBuilder.struct().optional().field("opt_int32", Schema.OPTIONAL_INT32_SCHEMA).build()
    outer = SchemaBuilder.struct().field("B", inner).build()
    out = configured(FlattenValue).apply(source(Struct(outer), outer))
    assert out.value.get("B.opt_int32") is None


def test_null_nested_struct_fields_read_back_as_their_defaults() -> None:
    inner = (
        SchemaBuilder.struct().optional().field("n", SchemaBuilder.int32().default_value(3).build()).build()
    )
    outer = SchemaBuilder.struct().field("B", inner).build()
    out = configured(FlattenValue).apply(sink(Struct(outer), outer))
    assert out.value_schema.field("B.n").schema == SchemaBuilder.int32().optional().default_value(3).build()
    assert out.value.get_without_default("B.n") is None
    assert out.value.get("B.n") == 3


def test_defaults_are_written_into_flattened_fields() -> None:
    inner = (
        SchemaBuilder.struct().field("n", SchemaBuilder.int32().optional().default_value(3).build()).build()
    )
    outer = SchemaBuilder.struct().field("B", inner).build()
    out = configured(FlattenValue).apply(sink(Struct(outer).put("B", Struct(inner)), outer))
    assert out.value.get_without_default("B.n") == 3  # Kafka's put(name, struct.get(field))


def test_optional_field_map() -> None:
    out = configured(FlattenValue).apply(source({"B": {"opt_int32": None}}))
    assert out.value == {"B.opt_int32": None}


def test_key() -> None:
    out = configured(FlattenKey).apply(source("v", key={"A": {"B": 12}}))
    assert out.key_schema is None
    assert out.key == {"A.B": 12}
    assert out.value == "v"


def test_schemaless_array_is_not_descended_into() -> None:
    value = {"foo": ["bar", {"baz": {"lfg": "lfg"}}]}
    record = source(value)
    out = configured(FlattenValue).apply(record)
    assert out.value == value
    assert out is record  # nothing to flatten


def test_array_with_schema_is_kept() -> None:
    nested = SchemaBuilder.struct().field("lfg", Schema.STRING_SCHEMA).build()
    inner = SchemaBuilder.struct().field("baz", nested).build()
    schema = SchemaBuilder.struct().field("foo", SchemaBuilder.array(inner).doc("durk").build()).build()
    value = Struct(schema).put("foo", [Struct(inner).put("baz", Struct(nested).put("lfg", "lfg"))])
    out = configured(FlattenValue).apply(source(value, schema))
    assert out.value == value
    assert out.value_schema == schema


def test_optional_and_default_values_nested() -> None:
    builder = SchemaBuilder.struct().optional()
    builder.field("req_field", Schema.STRING_SCHEMA)
    builder.field("opt_field", SchemaBuilder.string().optional().default_value("child_default").build())
    child_default = Struct(builder.build()).put("req_field", "req_default")
    schema = builder.default_value(child_default).build()
    out = configured(FlattenValue).apply(source(Struct(schema), schema))
    s = out.value_schema
    assert s.type is Type.STRUCT and len(s.fields) == 2
    assert (
        s.field("req_field").schema == SchemaBuilder.string().optional().default_value("req_default").build()
    )
    assert (
        s.field("opt_field").schema
        == SchemaBuilder.string().optional().default_value("child_default").build()
    )
    assert (s.optional, s.default_value) == (False, None)  # the top level's are not copied


def test_optional_and_default_propagate_from_ancestors() -> None:
    leaf = SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA).field("y", Schema.INT32_SCHEMA).build()
    middle_builder = SchemaBuilder.struct().optional().field("leaf", leaf)
    middle_default = Struct(middle_builder.build()).put("leaf", Struct(leaf).put("x", 1).put("y", 2))
    middle = middle_builder.default_value(middle_default).build()
    schema = SchemaBuilder.struct().field("m", middle).field("top", Schema.INT32_SCHEMA).build()
    out = configured(FlattenValue).apply(sink(Struct(schema).put("top", 5), schema))
    s = out.value_schema
    assert [f.name for f in s.fields] == ["m.leaf.x", "m.leaf.y", "top"]
    assert s.field("m.leaf.x").schema == SchemaBuilder.int32().optional().default_value(1).build()
    assert s.field("m.leaf.y").schema == SchemaBuilder.int32().optional().default_value(2).build()
    assert s.field("top").schema == Schema.INT32_SCHEMA
    assert out.value.get("m.leaf.x") == 1 and out.value.get("top") == 5


def test_optional_top_level_makes_every_field_optional_and_basics_are_kept() -> None:
    ts = Timestamp.builder().doc("when").build()
    inner = SchemaBuilder.struct().field("at", ts).build()
    schema = (
        SchemaBuilder.struct()
        .name("com.example.Event")
        .version(3)
        .doc("an event")
        .parameter("k", "v")
        .optional()
        .field("inner", inner)
        .build()
    )
    when = datetime.datetime(2024, 1, 2, tzinfo=datetime.UTC)
    out = configured(FlattenValue).apply(
        sink(Struct(schema).put("inner", Struct(inner).put("at", when)), schema)
    )
    s = out.value_schema
    assert (s.name, s.version, s.doc, dict(s.parameters or {}), s.optional) == (
        "com.example.Event",
        3,
        "an event",
        {"k": "v"},
        False,
    )
    assert s.field("inner.at").schema == Timestamp.builder().doc("when").optional().build()
    assert out.value.get("inner.at") == when


def test_map_field_with_schema_is_a_data_error() -> None:
    inner = (
        SchemaBuilder.struct()
        .field("m", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build())
        .build()
    )
    schema = SchemaBuilder.struct().field("a", inner).build()
    with pytest.raises(DataException) as err:
        configured(FlattenValue).apply(
            sink(Struct(schema).put("a", Struct(inner).put("m", {})), schema, offset=8)
        )
    assert str(err.value) == (
        "Flatten$Value: Flatten transformation does not support MAP for record with schemas (for field a.m). "
        "(topic 'test', partition 0, offset 8)"
    )


def test_name_collision_with_schema_is_a_data_error() -> None:
    inner = SchemaBuilder.struct().field("b", Schema.INT32_SCHEMA).build()
    schema = SchemaBuilder.struct().field("a", inner).field("a.b", Schema.INT32_SCHEMA).build()
    value = Struct(schema).put("a", Struct(inner).put("b", 1)).put("a.b", 2)
    with pytest.raises(
        DataException, match=r"^Flatten\$Value: Cannot create field because of field name duplication a\.b"
    ):
        configured(FlattenValue).apply(sink(value, schema))


def test_name_collision_without_schema_later_entry_wins() -> None:
    out = configured(FlattenValue).apply(sink({"a": {"b": 1}, "a.b": 2, "c": 3}))
    assert out.value == {"a.b": 2, "c": 3}
    assert list(out.value) == ["a.b", "c"]


def test_empty_nested_map_disappears() -> None:
    assert configured(FlattenValue).apply(sink({"a": {}, "b": 1})).value == {"b": 1}


def test_struct_inside_a_schemaless_map_is_a_data_error() -> None:
    inner = SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataException) as err:
        configured(FlattenValue).apply(sink({"a": {"s": Struct(inner).put("x", 1)}}))
    assert str(err.value).startswith(
        "Flatten$Value: Flatten transformation does not support "
        "Struct for record without schemas (for field a.s)."
    )


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ({"d": datetime.date(2024, 1, 1)}, "date"),
        ({"n": {"x": decimal.Decimal("1.5")}}, "Decimal"),
    ],
)
def test_values_connect_has_no_type_for_are_data_errors(value: dict[str, Any], kind: str) -> None:
    with pytest.raises(DataException) as err:
        configured(FlattenValue).apply(sink(value))
    assert (
        f"Flatten transformation was passed a value of type {kind} "
        f"which is not supported by Connect's data API" in str(err.value)
    )


@pytest.mark.parametrize(
    "schema",
    [
        None,
        SchemaBuilder.struct()
        .name("name")
        .version(1)
        .doc("doc")
        .field("magic", Schema.OPTIONAL_INT64_SCHEMA)
        .build(),
    ],
)
def test_tombstones_pass_through(schema: Schema | None) -> None:
    record = source(None, schema)
    assert configured(FlattenValue).apply(record) is record


def test_map_with_null_fields_keeps_order() -> None:
    value = {
        "firstNull": None,
        "firstNonNull": "nonNull",
        "secondNull": None,
        "secondNonNull": "alsoNonNull",
        "thirdNonNull": None,
    }
    out = configured(FlattenValue).apply(source({"nested": value}))
    assert list(out.value.items()) == [(f"nested.{k}", v) for k, v in value.items()]


def test_struct_with_null_fields() -> None:
    schema = SchemaBuilder.struct()
    for name in ("firstNull", "firstNonNull", "secondNull", "secondNonNull", "thirdNonNull"):
        schema.field(name, Schema.OPTIONAL_STRING_SCHEMA)
    built = schema.build()
    value = Struct(built).put("firstNonNull", "nonNull").put("secondNonNull", "alsoNonNull")
    out = configured(FlattenValue).apply(source(value, built))
    assert out.value == value


def test_derived_schema_is_cached() -> None:
    inner = SchemaBuilder.struct().field("b", Schema.INT32_SCHEMA).build()
    schema = SchemaBuilder.struct().field("a", inner).build()
    xform = configured(FlattenValue)
    first = xform.apply(sink(Struct(schema).put("a", Struct(inner).put("b", 1)), schema))
    second = xform.apply(sink(Struct(schema).put("a", Struct(inner).put("b", 2)), schema))
    assert first.value_schema is second.value_schema
    assert second.value.get("a.b") == 2


def test_blank_delimiter_is_trimmed_to_nothing() -> None:
    out = configured(FlattenValue, delimiter="  ").apply(sink({"a": {"b": 1}}))
    assert out.value == {"ab": 1}


def test_delimiter_defaults_to_a_dot() -> None:
    assert FlattenValue.Config.issues({}) == []
    assert configured(FlattenValue).delimiter == "."


# -- properties ---------------------------------------------------------------------------------

NAMES = st.text(alphabet="abcxyz", min_size=1, max_size=3)
LEAVES = st.one_of(
    st.none(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.text(max_size=5),
    st.booleans(),
    st.floats(allow_nan=False),
    st.binary(max_size=4),
    st.lists(st.integers(min_value=0, max_value=9), max_size=3),
)
NESTED = st.recursive(
    st.dictionaries(NAMES, LEAVES, min_size=1, max_size=4),
    lambda children: st.dictionaries(NAMES, st.one_of(LEAVES, children), min_size=1, max_size=4),
    max_leaves=20,
)
FLAT = st.dictionaries(NAMES, LEAVES, max_size=6)
DELIMITERS = st.sampled_from([".", "#", "->", "_"])


def leaf_schema(value: Any) -> Schema:
    if value is None:
        return Schema.OPTIONAL_STRING_SCHEMA
    if isinstance(value, bool):
        return Schema.BOOLEAN_SCHEMA
    if isinstance(value, int):
        return Schema.INT64_SCHEMA
    if isinstance(value, float):
        return Schema.FLOAT64_SCHEMA
    if isinstance(value, str):
        return Schema.STRING_SCHEMA
    if isinstance(value, bytes):
        return Schema.BYTES_SCHEMA
    return SchemaBuilder.array(Schema.INT64_SCHEMA).build()


def to_struct(data: dict[str, Any]) -> Struct:
    builder = SchemaBuilder.struct()
    values = {}
    for name, v in data.items():
        if isinstance(v, dict):
            nested = to_struct(v)
            builder.field(name, nested.schema)
            values[name] = nested
        else:
            builder.field(name, leaf_schema(v))
            values[name] = v
    struct = Struct(builder.build())
    for name, v in values.items():
        struct.put(name, v)
    return struct


def unflatten(flat: dict[str, Any], delimiter: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, v in flat.items():
        *parents, last = name.split(delimiter)
        node = out
        for p in parents:
            node = node.setdefault(p, {})
        node[last] = v
    return out


def count_leaves(data: dict[str, Any]) -> int:
    return sum(count_leaves(v) if isinstance(v, dict) else 1 for v in data.values())


@settings(max_examples=150, deadline=None)
@given(data=NESTED, delimiter=DELIMITERS)
def test_property_flattening_maps_round_trips(data: dict[str, Any], delimiter: str) -> None:
    out = configured(FlattenValue, delimiter=delimiter).apply(sink(data))
    assert len(out.value) == count_leaves(data)
    assert unflatten(out.value, delimiter) == data


@settings(max_examples=150, deadline=None)
@given(data=NESTED, delimiter=DELIMITERS)
def test_property_flattening_structs_round_trips(data: dict[str, Any], delimiter: str) -> None:
    struct = to_struct(data)
    out = configured(FlattenValue, delimiter=delimiter).apply(sink(struct, struct.schema))
    fields = out.value_schema.fields
    assert len(fields) == count_leaves(data)
    assert unflatten({f.name: out.value.get(f.name) for f in fields}, delimiter) == data
    out.value.validate()


@settings(max_examples=100, deadline=None)
@given(data=FLAT)
def test_property_flattening_flat_data_is_the_identity(data: dict[str, Any]) -> None:
    xform = configured(FlattenValue)
    assert xform.apply(sink(data)).value == data
    struct = to_struct(data)
    out = xform.apply(sink(struct, struct.schema))
    assert out.value_schema == struct.schema
    assert out.value == struct


def test_struct_value_under_a_non_struct_schema_is_a_data_error() -> None:
    inner = SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataException, match=r"^Flatten\$Value: Cannot list fields on non-struct type INT32"):
        configured(FlattenValue).apply(sink(Struct(inner).put("x", 1), Schema.INT32_SCHEMA))
