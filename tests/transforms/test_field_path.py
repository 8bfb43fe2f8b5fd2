"""The KIP-821 field path parser against every case of Kafka's FieldPathNotationTest, and
the helpers that walk structs and maps along a path."""

from __future__ import annotations

import pytest

from connect.api import DataException, Schema, SchemaBuilder, Struct
from transforms.field_path import FieldPathError, field_schema, map_value, parse_path, struct_value


@pytest.mark.parametrize("path", ["foo.bar.baz", "foo`bar`", "foo.`bar.baz`", "", "`unclosed"])
def test_v1_is_always_a_single_step(path: str) -> None:
    assert parse_path(path, "V1") == (path,)
    assert parse_path(path) == (path,)  # V1 is the default


@pytest.mark.parametrize(
    ("path", "steps"),
    [
        # shouldIncludeEmptyFieldNames
        ("..", ("", "", "")),
        ("foo..", ("foo", "", "")),
        (".bar.", ("", "bar", "")),
        ("..baz", ("", "", "baz")),
        # shouldBuildV2WithEmptyPath
        ("", ()),
        # shouldBuildV2WithoutDots
        ("foobarbaz", ("foobarbaz",)),
        # shouldBuildV2WhenIncludesDots
        ("foo.bar.baz", ("foo", "bar", "baz")),
        # shouldBuildV2WithoutWrappingBackticks
        ("foo`bar`baz", ("foo`bar`baz",)),
        # shouldBuildV2WhenIncludesDotsAndBacktickPair
        ("`foo.bar.baz`", ("foo.bar.baz",)),
        ("foo.`bar.baz`", ("foo", "bar.baz")),
        ("`foo.bar`.baz", ("foo.bar", "baz")),
        ("foo.`bar`.baz", ("foo", "bar", "baz")),
        # shouldBuildV2AndIgnoreBackticksThatAreNotWrapping
        ("foo.``bar.baz`", ("foo", "`bar.baz")),
        ("foo.`bar.baz``", ("foo", "bar.baz`")),
        ("foo.`ba`r.baz`", ("foo", "ba`r.baz")),
        ("foo.ba`r.baz", ("foo", "ba`r", "baz")),
        ("foo.``bar``.baz", ("foo", "`bar`", "baz")),
        ("``foo.bar.baz``", ("`foo.bar.baz`",)),
        # shouldBuildV2AndEscapeBackticks (Java's "\\" is one backslash)
        (r"foo.`bar\`.baz`", ("foo", "bar`.baz")),
        ("foo.`bar.`baz`", ("foo", "bar.`baz")),
        (r"foo.`bar\`.`baz`", ("foo", "bar`.`baz")),
        (r"foo.`bar\\`.\`baz`", ("foo", r"bar\`.\`baz")),
        # a trailing dot after a quoted step adds an empty step too
        ("`a.b`.", ("a.b", "")),
    ],
)
def test_v2_steps(path: str, steps: tuple[str, ...]) -> None:
    assert parse_path(path, "V2") == steps


@pytest.mark.parametrize(
    ("path", "position"),
    [
        ("`foo.bar.baz", 0),
        ("foo.`bar.baz", 4),
        ("foo.bar.`baz", 8),
        (r"foo.bar.`baz\`", 8),  # an escaped closing backtick closes nothing
        ("`", 0),
    ],
)
def test_v2_incomplete_backtick_pairs_name_the_opening_position(path: str, position: int) -> None:
    with pytest.raises(FieldPathError) as err:
        parse_path(path, "V2")
    assert str(err.value) == (
        f"Incomplete backtick pair in path: [{path}], consider adding a backslash before backtick at "
        f"position {position} to escape it"
    )


INNER = SchemaBuilder.struct().field("c", SchemaBuilder.int32().optional().default_value(5).build()).build()


def test_field_schema_walks_nested_structs() -> None:
    schema = SchemaBuilder.struct().field("a", INNER).field("n", Schema.INT32_SCHEMA).build()
    assert field_schema(schema, ("a", "c")) == INNER.field("c").schema
    assert field_schema(schema, ("a", "x")) is None
    assert field_schema(schema, ("x", "c")) is None
    with pytest.raises(DataException, match="Cannot look up fields on non-struct type"):
        field_schema(schema, ("n", "c"))


def test_struct_value_applies_defaults_on_request() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("a", SchemaBuilder.struct().field("c", INNER.field("c").schema).optional().build())
        .build()
    )
    inner = Struct(schema.field("a").schema)
    value = Struct(schema).put("a", inner)
    assert struct_value(value, ("a", "c")) == 5
    assert struct_value(value, ("a", "c"), use_defaults=False) is None
    assert struct_value(Struct(schema), ("a", "c")) is None  # null intermediate struct
    assert struct_value(None, ("a",)) is None


def test_map_value_walks_nested_maps() -> None:
    data = {"a": {"b": {"c": 1}}, "s": "text", "n": None}
    assert map_value(data, ("a", "b", "c")) == 1
    assert map_value(data, ("a", "x", "c")) is None
    assert map_value(data, ("n", "c")) is None
    with pytest.raises(
        DataException,
        match=r"Only Map objects supported in absence of schema for \[nested field access\], found: str",
    ):
        map_value(data, ("s", "c"))
