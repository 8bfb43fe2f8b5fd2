"""``connect.api.schema_projector.project``: Kafka's SchemaProjector rules, as a table of
cases and as properties over random evolutions of a struct (fields added with defaults or
as optional, numeric types widened): the projected value keeps every value the source had."""

from __future__ import annotations

import decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connect.api import (
    Decimal,
    Schema,
    SchemaBuilder,
    SchemaProjector,
    SchemaProjectorException,
    Struct,
    Type,
)

project = SchemaProjector.project

WIDER = {
    Type.INT8: [Type.INT16, Type.INT32, Type.INT64, Type.FLOAT32, Type.FLOAT64],
    Type.INT16: [Type.INT32, Type.INT64, Type.FLOAT32, Type.FLOAT64],
    Type.INT32: [Type.INT64, Type.FLOAT64],  # float32 rounds large ints: checked separately
    Type.INT64: [Type.FLOAT64],
    Type.FLOAT32: [Type.FLOAT64],
}
BOUNDS = {Type.INT8: 7, Type.INT16: 15, Type.INT32: 31, Type.INT64: 53, Type.FLOAT32: 24}


def test_same_schema_is_the_same_value() -> None:
    schema = SchemaBuilder.struct().name("r").field("a", Schema.INT32_SCHEMA).build()
    value = Struct(schema).put("a", 1)
    assert project(schema, value, schema) == value


def test_a_field_the_source_lacks_takes_its_default_or_stays_unset() -> None:
    v1 = SchemaBuilder.struct().name("r").field("a", Schema.INT32_SCHEMA).build()
    v2 = (
        SchemaBuilder.struct()
        .name("r")
        .field("a", Schema.INT64_SCHEMA)
        .field("b", SchemaBuilder.string().default_value("x").build())
        .field("c", Schema.OPTIONAL_STRING_SCHEMA)
        .build()
    )
    out = project(v1, Struct(v1).put("a", 7), v2)
    assert (out.schema, out.get("a"), out.get("b"), out.get("c")) == (v2, 7, "x", None)


def test_a_required_field_without_default_the_source_lacks_is_an_error() -> None:
    v1 = SchemaBuilder.struct().name("r").field("a", Schema.INT32_SCHEMA).build()
    v2 = (
        SchemaBuilder.struct()
        .name("r")
        .field("a", Schema.INT32_SCHEMA)
        .field("b", Schema.STRING_SCHEMA)
        .build()
    )
    with pytest.raises(SchemaProjectorException, match="Required field `b` is missing"):
        project(v1, Struct(v1).put("a", 1), v2)


@pytest.mark.parametrize(
    ("source", "target", "message"),
    [
        (Schema.INT64_SCHEMA, Schema.INT32_SCHEMA, "type mismatch"),
        (Schema.STRING_SCHEMA, Schema.BYTES_SCHEMA, "type mismatch"),
        (Schema.FLOAT64_SCHEMA, Schema.FLOAT32_SCHEMA, "type mismatch"),
        (SchemaBuilder.struct().name("a").build(), SchemaBuilder.struct().name("b").build(), "name mismatch"),
        (Decimal.schema(2), Decimal.schema(3), "parameters not equal"),
    ],
)
def test_what_does_not_project(source: Schema, target: Schema, message: str) -> None:
    value: Any = {
        Type.INT64: 1,
        Type.STRING: "x",
        Type.FLOAT64: 1.5,
        Type.STRUCT: None if source.type is not Type.STRUCT else Struct(source),
        Type.BYTES: decimal.Decimal("1.00"),
    }[source.type]
    with pytest.raises(SchemaProjectorException, match=message):
        project(source, value, target)


def test_nulls() -> None:
    with_default = SchemaBuilder.int32().default_value(5).build()
    assert project(Schema.OPTIONAL_INT32_SCHEMA, None, with_default) == 5
    assert project(Schema.OPTIONAL_INT32_SCHEMA, 3, with_default) == 3
    assert project(Schema.OPTIONAL_INT32_SCHEMA, None, Schema.OPTIONAL_INT64_SCHEMA) is None
    with pytest.raises(SchemaProjectorException, match="does not provide a default"):
        project(Schema.OPTIONAL_INT32_SCHEMA, 3, Schema.INT32_SCHEMA)


def test_int64_to_float32_rounds_as_java_does() -> None:
    assert project(Schema.INT64_SCHEMA, 2**24 + 1, Schema.FLOAT32_SCHEMA) == float(2**24)


def test_arrays_and_maps_project_element_by_element() -> None:
    arrays = SchemaBuilder.array(Schema.INT8_SCHEMA).build(), SchemaBuilder.array(Schema.INT64_SCHEMA).build()
    assert project(*arrays[:1], [1, 2], arrays[1]) == [1, 2]
    maps = (
        SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT16_SCHEMA).build(),
        SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.FLOAT64_SCHEMA).build(),
    )
    out = project(maps[0], {"a": 1}, maps[1])
    assert out == {"a": 1.0} and isinstance(out["a"], float)


def _primitive(t: Type) -> Schema:
    return Schema(t)


@st.composite
def evolutions(draw: st.DrawFn) -> tuple[Schema, Struct, Schema, dict[str, Any]]:
    """A struct schema with a value, and a later version of it: every field kept (some
    widened), new fields added as optional or with a default."""
    names = draw(st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=6, unique=True))
    old, new = SchemaBuilder.struct().name("r"), SchemaBuilder.struct().name("r")
    values: dict[str, Any] = {}
    for name in names:
        t = draw(st.sampled_from(list(BOUNDS)))
        bits = BOUNDS[t]
        value: Any = draw(st.integers(-(2**bits), 2**bits - 1))
        if t is Type.FLOAT32:
            value = float(value)
        old.field(name, _primitive(t))
        new.field(name, _primitive(draw(st.sampled_from([t, *WIDER[t]]))))
        values[name] = value
    added = draw(st.lists(st.sampled_from("stuvwxyz"), max_size=3, unique=True))
    defaults: dict[str, Any] = {}
    for name in added:
        if draw(st.booleans()):
            new.field(name, Schema.OPTIONAL_STRING_SCHEMA)
            defaults[name] = None
        else:
            default = draw(st.text(max_size=4))
            new.field(name, SchemaBuilder.string().default_value(default).build())
            defaults[name] = default
    old_schema = old.build()
    struct = Struct(old_schema)
    for k, v in values.items():
        struct.put(k, v)
    return old_schema, struct, new.build(), {**values, **defaults}


@settings(max_examples=300, deadline=None)
@given(evolutions())
def test_a_later_version_keeps_every_value(case: tuple[Schema, Struct, Schema, dict[str, Any]]) -> None:
    old, value, new, expected = case
    out = project(old, value, new)
    assert {f.name: out.get(f.name) for f in new.fields} == expected
    assert project(new, out, new) == out
