"""HeaderFrom against every case of Kafka's HeaderFromTest (key and value, schemaless and
with schema), the errors Kafka leaves to NullPointerExceptions, and the config checks."""

from __future__ import annotations

from typing import Any

import pytest

from connect.api import (
    ConfigValidationError,
    DataException,
    Headers,
    Schema,
    SchemaBuilder,
    SourceRecord,
    Struct,
)
from tests.transforms.support import configured, sink, source
from transforms.header_from import HeaderFromKey, HeaderFromValue

STRING = Schema.STRING_SCHEMA
OPT_DEFAULT = SchemaBuilder.string().default_value("default").optional().build()
FOO = SchemaBuilder.struct().field("foo", STRING).build()
FOO_VALUE = Struct(FOO).put("foo", "foo-value")

Triple = tuple[str, Schema, Any]


def record(fields: list[Triple], headers: list[Triple], key_side: bool, with_schema: bool) -> SourceRecord:
    if with_schema:
        builder = SchemaBuilder.struct()
        for name, schema, _ in fields:
            builder.field(name, schema)
        schema: Schema | None = builder.build()
        assert schema is not None
        data: Any = Struct(schema)
        for name, _, v in fields:
            data.put(name, v)
    else:
        schema = None
        data = {name: v for name, _, v in fields}
    hs = Headers()
    for name, header_schema, v in headers:
        hs.add(name, v, header_schema if with_schema else None)
    if key_side:
        return source("value", None, key=data, key_schema=schema, headers=hs)
    return source(data, schema, key="key", headers=hs)


EXISTING = ("header1", STRING, "existing-value")
F1 = ("field1", STRING, "field1-value")
F2 = ("field2", STRING, "field2-value")

CASES = [
    # name, fields in, headers in, fields, headers, operation, replace null, fields out, headers out
    (
        "basic copy",
        [F1, F2],
        [EXISTING],
        "field1",
        "inserted1",
        "copy",
        True,
        [F1, F2],
        [EXISTING, ("inserted1", STRING, "field1-value")],
    ),
    (
        "basic move",
        [F1, F2],
        [EXISTING],
        "field1",
        "inserted1",
        "move",
        True,
        [F2],
        [EXISTING, ("inserted1", STRING, "field1-value")],
    ),
    (
        "copy with preexisting header",
        [F1, F2],
        [("inserted1", STRING, "existing-value")],
        "field1",
        "inserted1",
        "copy",
        True,
        [F1, F2],
        [("inserted1", STRING, "existing-value"), ("inserted1", STRING, "field1-value")],
    ),
    (
        "move with preexisting header",
        [F1, F2],
        [("inserted1", STRING, "existing-value")],
        "field1",
        "inserted1",
        "move",
        True,
        [F2],
        [("inserted1", STRING, "existing-value"), ("inserted1", STRING, "field1-value")],
    ),
    (
        "copy with struct value",
        [("field1", FOO, FOO_VALUE), F2],
        [EXISTING],
        "field1",
        "inserted1",
        "copy",
        True,
        [("field1", FOO, FOO_VALUE), F2],
        [EXISTING, ("inserted1", FOO, FOO_VALUE)],
    ),
    (
        "move with struct value",
        [("field1", FOO, FOO_VALUE), F2],
        [EXISTING],
        "field1",
        "inserted1",
        "move",
        True,
        [F2],
        [EXISTING, ("inserted1", FOO, FOO_VALUE)],
    ),
    (
        "two headers from same field",
        [F1, F2],
        [EXISTING],
        "field1,field1",
        "inserted1,inserted2",
        "move",
        True,
        [F2],
        [EXISTING, ("inserted1", STRING, "field1-value"), ("inserted2", STRING, "field1-value")],
    ),
    (
        "two fields to same header",
        [F1, F2],
        [EXISTING],
        "field1,field2",
        "inserted1,inserted1",
        "move",
        True,
        [],
        [EXISTING, ("inserted1", STRING, "field1-value"), ("inserted1", STRING, "field2-value")],
    ),
    (
        "copy null field without default",
        [("field1", OPT_DEFAULT, "field1-value"), ("field2", OPT_DEFAULT, None)],
        [EXISTING],
        "field1,field2",
        "inserted1,inserted2",
        "copy",
        False,
        [("field1", OPT_DEFAULT, "field1-value"), ("field2", OPT_DEFAULT, None)],
        [EXISTING, ("inserted1", OPT_DEFAULT, "field1-value"), ("inserted2", OPT_DEFAULT, None)],
    ),
    (
        "move null field without default",
        [("field1", OPT_DEFAULT, "field1-value"), ("field2", OPT_DEFAULT, None)],
        [EXISTING],
        "field1,field2",
        "inserted1,inserted2",
        "move",
        False,
        [],
        [EXISTING, ("inserted1", OPT_DEFAULT, "field1-value"), ("inserted2", OPT_DEFAULT, None)],
    ),
]


@pytest.mark.parametrize("with_schema", [False, True], ids=["schemaless", "with_schema"])
@pytest.mark.parametrize("key_side", [True, False], ids=["key", "value"])
@pytest.mark.parametrize(
    ("fields_in", "headers_in", "fields", "headers", "operation", "replace", "fields_out", "headers_out"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_kafka_cases(
    with_schema: bool,
    key_side: bool,
    fields_in: list[Triple],
    headers_in: list[Triple],
    fields: str,
    headers: str,
    operation: str,
    replace: bool,
    fields_out: list[Triple],
    headers_out: list[Triple],
) -> None:
    cls = HeaderFromKey if key_side else HeaderFromValue
    xform = configured(
        cls,
        {"fields": fields, "headers": headers, "operation": operation, "replace.null.with.default": replace},
    )
    original = record(fields_in, headers_in, key_side, with_schema)
    expected = record(fields_out, headers_out, key_side, with_schema)
    out = xform.apply(original)
    assert (out.key_schema, out.key) == (expected.key_schema, expected.key)
    assert (out.value_schema, out.value) == (expected.value_schema, expected.value)
    assert list(out.headers) == list(expected.headers)
    assert (out.topic, out.timestamp, out.source_offset) == (
        original.topic,
        original.timestamp,
        original.source_offset,
    )
    assert list(original.headers) == list(
        record(fields_in, headers_in, key_side, with_schema).headers
    )  # untouched


def test_copy_leaves_the_value_as_it_is() -> None:
    value = {"a": 1}
    out = configured(HeaderFromValue, fields="a", headers="h", operation="copy").apply(sink(value))
    assert out.value is value
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    struct = Struct(schema).put("a", 1)
    out = configured(HeaderFromValue, fields="a", headers="h", operation="copy").apply(sink(struct, schema))
    assert out.value is struct and out.value_schema is schema


def test_schemaless_move_keeps_key_order_and_missing_fields_give_null_headers() -> None:
    out = configured(HeaderFromValue, fields="b,zz", headers="hb,hz", operation="move").apply(
        sink({"a": 1, "b": 2, "c": 3})
    )
    assert list(out.value.items()) == [("a", 1), ("c", 3)]
    assert [(h.key, h.value, h.schema) for h in out.headers] == [("hb", 2, None), ("hz", None, None)]


def test_move_schema_is_cached_and_keeps_basics_but_not_optional() -> None:
    schema = (
        SchemaBuilder.struct()
        .name("n")
        .version(2)
        .doc("d")
        .optional()
        .field("a", Schema.INT32_SCHEMA)
        .field("b", Schema.INT32_SCHEMA)
        .build()
    )
    xform = configured(HeaderFromValue, fields="a", headers="h", operation="move")
    first = xform.apply(sink(Struct(schema).put("a", 1).put("b", 2), schema))
    second = xform.apply(sink(Struct(schema).put("a", 3).put("b", 4), schema))
    assert first.value_schema is second.value_schema
    s = first.value_schema
    assert (s.name, s.version, s.doc, s.optional, [f.name for f in s.fields]) == ("n", 2, "d", False, ["b"])
    assert second.value.get("b") == 4


@pytest.mark.parametrize(("replace", "expected"), [("true", "default"), ("false", None)])
def test_replace_null_with_default_applies_to_headers_and_moved_struct(
    replace: str, expected: str | None
) -> None:
    schema = SchemaBuilder.struct().field("a", OPT_DEFAULT).field("b", OPT_DEFAULT).build()
    xform = configured(
        HeaderFromValue,
        {"fields": "a", "headers": "h", "operation": "move", "replace.null.with.default": replace},
    )
    out = xform.apply(sink(Struct(schema), schema))
    assert out.headers.last_with_name("h").value == expected
    assert out.value.get_without_default("b") == expected


def test_absent_field_with_schema_is_a_data_error_naming_it() -> None:
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    xform = configured(HeaderFromValue, fields="missing", headers="h", operation="copy")
    with pytest.raises(DataException) as err:
        xform.apply(sink(Struct(schema).put("a", 1), schema, offset=6))
    assert (
        str(err.value)
        == "HeaderFrom$Value: Field does not exist: missing (topic 'test', partition 0, offset 6)"
    )


def test_null_into_a_required_header_schema_is_a_data_error() -> None:
    schema = SchemaBuilder.struct().field("a", SchemaBuilder.int32().default_value(1).build()).build()
    xform = configured(
        HeaderFromValue,
        {"fields": "a", "headers": "h", "operation": "copy", "replace.null.with.default": "false"},
    )
    with pytest.raises(
        DataException,
        match=r"^HeaderFrom\$Value: A null value requires an optional schema but was Schema\{INT32\}",
    ):
        xform.apply(sink(Struct(schema), schema))


@pytest.mark.parametrize(
    ("operation", "schema", "found"),
    [
        ("move", None, "Only Map objects supported in absence of schema for [header move], found: null"),
        ("copy", None, "Only Map objects supported in absence of schema for [header copy], found: null"),
        ("copy", FOO, "Only Struct objects supported for [header copy], found: null"),
        ("move", FOO, "Only Struct objects supported for [header move], found: null"),
    ],
)
def test_tombstones_are_errors(operation: str, schema: Schema | None, found: str) -> None:
    xform = configured(HeaderFromValue, fields="foo", headers="h", operation=operation)
    with pytest.raises(DataException) as err:
        xform.apply(sink(None, schema))
    assert str(err.value) == f"HeaderFrom$Value: {found} (topic 'test', partition 0, offset 42)"


@pytest.mark.parametrize(("fields", "headers"), [("foo", "foo,bar"), ("foo,bar", "foo")])
def test_lists_of_different_lengths_are_a_config_error_on_headers(fields: str, headers: str) -> None:
    props = {"fields": fields, "headers": headers, "operation": "copy"}
    issues = HeaderFromValue.Config.issues(props, prefix="transforms.h.")
    assert [(i.key, i.message) for i in issues] == [
        ("transforms.h.headers", "'fields' config must have the same number of elements as 'headers' config.")
    ]
    with pytest.raises(ConfigValidationError):
        configured(HeaderFromKey, props)


def test_empty_lists_are_config_errors() -> None:
    issues = HeaderFromValue.Config.issues({"fields": "", "headers": "", "operation": "copy"})
    assert sorted((i.key, i.message) for i in issues) == [
        ("fields", "Invalid value  for configuration fields: Empty list"),
        ("headers", "Invalid value  for configuration headers: Empty list"),
    ]


def test_operation_must_be_move_or_copy() -> None:
    issues = HeaderFromValue.Config.issues({"fields": "a", "headers": "h", "operation": "MOVE"})
    assert [(i.key, i.message) for i in issues] == [
        ("operation", "Invalid value MOVE for configuration operation: String must be one of: move, copy")
    ]
    assert HeaderFromValue.Config.issues({"fields": "a", "headers": "h", "operation": " move "}) == []


def test_required_keys() -> None:
    issues = HeaderFromValue.Config.issues({})
    assert sorted(i.key for i in issues) == ["fields", "headers", "operation"]


def test_struct_value_under_a_non_struct_schema_is_a_data_error() -> None:
    xform = configured(HeaderFromValue, fields="foo", headers="h", operation="copy")
    with pytest.raises(
        DataException, match=r"^HeaderFrom\$Value: Cannot look up fields on non-struct type STRING"
    ):
        xform.apply(sink(FOO_VALUE, Schema.STRING_SCHEMA))


def test_copy_with_an_equal_schema_object_keeps_the_value_untouched() -> None:
    from connect.api import Schema, SchemaBuilder, Struct
    from tests.transforms.support import configured, sink
    from transforms.header_from import HeaderFromValue

    def make() -> Schema:
        return (
            SchemaBuilder.struct()
            .field("a", SchemaBuilder.int32().optional().default_value(5).build())
            .field("b", Schema.STRING_SCHEMA)
            .build()
        )

    xform = configured(HeaderFromValue, fields="b", headers="hb", operation="copy")
    first, second = make(), make()
    xform.apply(sink(Struct(first).put("b", "x"), first))
    value = Struct(second).put("b", "y")
    out = xform.apply(sink(value, second))
    assert out.value is value and out.value_schema is second
    assert value.get_without_default("a") is None
    assert out.headers.last_with_name("hb").value == "y"
