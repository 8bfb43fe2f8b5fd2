"""Structs held column-wise (``StructColumn``) and the converters' batch method over them:
``JsonConverter.from_connect_batch`` writes exactly what ``from_connect_data`` writes for
each struct, or refuses where one of them would be refused."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connect.api import DataException, Schema, SchemaBuilder, Struct, StructColumn, Timestamp
from connect.converters.json import JsonConverter

FIELDS: list[tuple[Schema, st.SearchStrategy[Any]]] = [
    (Schema.STRING_SCHEMA, st.text(max_size=5)),
    (Schema.OPTIONAL_STRING_SCHEMA, st.none() | st.text(max_size=5)),
    (SchemaBuilder.string().optional().default_value("d").build(), st.none() | st.text(max_size=3)),
    (Schema.INT8_SCHEMA, st.integers(-128, 127)),
    (Schema.OPTIONAL_INT64_SCHEMA, st.none() | st.integers(-(2**63), 2**63 - 1)),
    (Schema.FLOAT64_SCHEMA, st.floats(allow_nan=False)),
    (Schema.OPTIONAL_BOOLEAN_SCHEMA, st.none() | st.booleans()),
    (Schema.OPTIONAL_BYTES_SCHEMA, st.none() | st.binary(max_size=4)),
]


@st.composite
def columns(draw: st.DrawFn) -> tuple[Schema, list[list[Any]]]:
    picks = draw(st.lists(st.integers(0, len(FIELDS) - 1), min_size=1, max_size=4))
    builder = SchemaBuilder.struct()
    for n, k in enumerate(picks):
        builder.field(f"f{n}", FIELDS[k][0])
    schema = builder.build()
    rows = draw(st.integers(1, 6))
    # Some fields hold one object in every row, as InsertField's topic and static fields
    # do: the converter writes those once.
    return schema, [
        [draw(FIELDS[k][1])] * rows if draw(st.booleans()) else [draw(FIELDS[k][1]) for _ in range(rows)]
        for k in picks
    ]


def _converter(**configs: str) -> JsonConverter:
    c = JsonConverter()
    c.configure({"schemas.enable": "false", **configs}, False)
    return c


def _each(c: JsonConverter, schema: Schema, structs: list[Struct]) -> list[bytes | None] | type[Exception]:
    try:
        return [c.from_connect_data("t", schema, s) for s in structs]
    except DataException as exc:
        return type(exc)


@settings(max_examples=400, deadline=None)
@given(columns(), st.booleans(), st.booleans())
def test_a_struct_column_is_written_as_each_struct_is(
    case: tuple[Schema, list[list[Any]]], replace: bool, schemas: bool
) -> None:
    schema, fields = case
    c = _converter(
        **{"replace.null.with.default": str(replace).lower(), "schemas.enable": str(schemas).lower()}
    )
    column = StructColumn(schema, fields)
    structs = [Struct.unchecked(schema, list(row)) for row in zip(*fields, strict=True)]
    expected = _each(c, schema, structs)
    try:
        got: list[bytes | None] | type[Exception] = c.from_connect_batch("t", [schema] * len(column), column)
    except DataException as exc:
        got = type(exc)
    assert got == expected


def test_a_struct_column_is_a_sequence_of_structs() -> None:
    schema = SchemaBuilder.struct().field("a", Schema.STRING_SCHEMA).field("b", Schema.INT32_SCHEMA).build()
    column = StructColumn(schema, [["x", "y", "z"], [1, 2, 3]])
    assert len(column) == 3
    assert column[1] == Struct(schema).put("a", "y").put("b", 2)
    assert [s.get("b") for s in column] == [1, 2, 3]
    assert list(column[1:]) == list(column.take([1, 2]))
    with pytest.raises(IndexError):
        column[3]
    with pytest.raises(ValueError, match="differ in length"):
        StructColumn(schema, [["x"], [1, 2]])
    empty = SchemaBuilder.struct().build()
    assert [s.schema for s in StructColumn(empty, [], 2)] == [empty, empty]


@settings(max_examples=400, deadline=None)
@given(st.integers(0, len(FIELDS) - 1), st.data(), st.booleans())
def test_a_column_of_one_plain_schema_is_written_as_each_value_is(
    k: int, data: st.DataObject, schemas: bool
) -> None:
    schema, values_of = FIELDS[k]
    values = data.draw(
        st.lists(values_of | st.sampled_from(["text", 7, None, 2**70]), min_size=1, max_size=6)
    )
    c = JsonConverter()
    c.configure({"schemas.enable": str(schemas).lower()}, False)
    try:
        expected: list[bytes | None] | type[Exception] = [c.from_connect_data("t", schema, v) for v in values]
    except DataException as exc:
        expected = type(exc)
    try:
        got: list[bytes | None] | type[Exception] = c.from_connect_batch("t", [schema] * len(values), values)
    except DataException as exc:
        got = type(exc)
    assert got == expected


_TIMESTAMP = Timestamp.builder().optional().build()


@settings(max_examples=300, deadline=None)
@given(columns(), st.lists(st.none() | st.datetimes(timezones=st.just(dt.UTC)), min_size=6, max_size=6))
def test_the_generated_struct_writer_equals_the_checked_one(
    case: tuple[Schema, list[list[Any]]], times: list[dt.datetime | None]
) -> None:
    """JsonConverter's generated writer (``_fast_struct_writer``, paid for by the JDBC and
    transforms benchmarks) against the checked one it falls back to: a struct of exactly
    the schema takes the generated path, one whose schema is an equal copy the checked."""
    schema, fields = case
    builder = SchemaBuilder.struct()
    for f in schema.fields:
        builder.field(f.name, f.schema)
    builder.field("at", _TIMESTAMP)
    schema = builder.build()
    copy = SchemaBuilder.struct()
    for f in schema.fields:
        copy.field(f.name, f.schema)
    twin = copy.build()
    assert twin == schema and twin is not schema
    c = _converter()
    for row, at in zip(zip(*fields, strict=True), times, strict=False):
        values = [*row, at]

        def write(s: Schema, values: list[Any] = values) -> bytes | type[Exception] | None:
            try:
                return c.from_connect_data("t", schema, Struct.unchecked(s, list(values)))
            except DataException as exc:
                return type(exc)

        assert write(schema) == write(twin)


@settings(max_examples=300, deadline=None)
@given(columns(), st.booleans(), st.booleans(), st.data())
def test_a_list_of_structs_of_one_schema_is_written_as_each_struct_is(
    case: tuple[Schema, list[list[Any]]], schemas: bool, nested: bool, data: st.DataObject
) -> None:
    # Structs one by one (a JDBC table's rows, CDC change events), nested or not, with nulls
    # and values that do not fit their field (refused by the batch as by each record).
    schema, fields = case
    structs: list[Any] = [Struct.unchecked(schema, list(row)) for row in zip(*fields, strict=True)]
    if nested:
        outer = SchemaBuilder.struct().field("after", dataclasses.replace(schema, optional=True))
        schema = outer.field("op", Schema.STRING_SCHEMA).build()
        structs = [Struct.unchecked(schema, [s, "c"]) for s in structs]
    structs += data.draw(st.lists(st.sampled_from([None, "not a struct", 7]), max_size=1))
    c = _converter(**{"schemas.enable": str(schemas).lower()})
    expected: list[bytes | None] | type[Exception]
    got: list[bytes | None] | type[Exception]
    try:
        expected = [c.from_connect_data("t", schema, s) for s in structs]
    except DataException as exc:
        expected = type(exc)
    try:
        got = c.from_connect_batch("t", [schema] * len(structs), structs)
    except DataException as exc:
        got = type(exc)
    assert got == expected


def test_fields_that_hold_one_object_in_every_row_are_written_as_each_struct_is() -> None:
    # Names JSON must escape; a float whose equal twin writes differently (-0.0 == 0.0);
    # a column of one object next to one that varies, and a struct whose every field is
    # one object.
    schema = (
        SchemaBuilder.struct()
        .field('quo"te', Schema.STRING_SCHEMA)
        .field("neg", Schema.FLOAT64_SCHEMA)
        .field("line\n", Schema.STRING_SCHEMA)
        .field("n", Schema.OPTIONAL_INT64_SCHEMA)
        .build()
    )
    topic, zero, nothing = "topic\u0001", -0.0, None
    varying = [f"row {i}\u001f" for i in range(4)]
    c = _converter()
    for fields in (
        [[topic] * 4, [zero] * 4, varying, [nothing] * 4],
        [[topic] * 4, [zero] * 4, [varying[0]] * 4, [7] * 4],
        [[topic] * 4, [0.0, zero, 0.0, zero], varying, [nothing, 1, nothing, 2]],
    ):
        structs = [Struct.unchecked(schema, list(row)) for row in zip(*fields, strict=True)]
        assert c.from_connect_batch("t", [schema] * 4, StructColumn(schema, fields)) == _each(
            c, schema, structs
        )
    got = c.from_connect_batch(
        "t", [schema] * 4, StructColumn(schema, [[topic] * 4, [zero] * 4, varying, [7] * 4])
    )
    assert got[0] == b'{"quo\\"te":"topic\\u0001","neg":-0.0,"line\\n":"row 0\\u001F","n":7}'


@settings(max_examples=300, deadline=None)
@given(columns(), columns(), st.booleans(), st.booleans(), st.data())
def test_a_struct_column_nested_in_one_is_written_as_each_struct_is(
    outer: tuple[Schema, list[list[Any]]],
    inner: tuple[Schema, list[list[Any]]],
    optional: bool,
    schemas: bool,
    data: st.DataObject,
) -> None:
    """A CDC envelope's shape: a field whose column is itself a StructColumn (``after``,
    ``source``), beside one that is null in every row (``before``)."""
    outer_schema, outer_fields = outer
    inner_schema, inner_fields = inner
    rows = data.draw(st.integers(1, 5))
    outer_fields = [(f * rows)[:rows] for f in outer_fields]
    inner_fields = [(f * rows)[:rows] for f in inner_fields]
    nested_schema = SchemaBuilder.struct().name("inner")
    for f in inner_schema.fields:
        nested_schema.field(f.name, f.schema)
    if optional:
        nested_schema.optional()
    nested = nested_schema.build()
    null_field = nested if optional else SchemaBuilder.struct().optional().build()
    builder = SchemaBuilder.struct().field("before", null_field)
    for f in outer_schema.fields:
        builder.field(f.name, f.schema)
    builder.field("after", nested)
    schema = builder.build()
    before: list[Any] = [None] * rows
    column = StructColumn(schema, [before, *outer_fields, StructColumn(nested, inner_fields, rows)], rows)
    c = _converter(**{"schemas.enable": str(schemas).lower()})
    expected = _each(c, schema, list(column))
    try:
        got: list[bytes | None] | type[Exception] = c.from_connect_batch("t", [schema] * rows, column)
    except DataException as exc:
        got = type(exc)
    assert got == expected
