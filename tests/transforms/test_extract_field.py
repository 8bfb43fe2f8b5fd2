"""ExtractField against Kafka's ExtractFieldTest cases, nested V2 paths, nulls and defaults,
and the config checks."""

from __future__ import annotations

import pytest

from connect.api import ConfigValidationError, DataException, Schema, SchemaBuilder, Struct
from tests.transforms.support import configured, sink, source
from transforms.extract_field import ExtractFieldKey, ExtractFieldValue

V2 = {"field.syntax.version": "V2"}

FOO = SchemaBuilder.struct().field("foo", Schema.INT32_SCHEMA).build()
NESTED = SchemaBuilder.struct().field("magic", FOO).build()


def test_schemaless_key() -> None:
    record = sink("v", key={"magic": 42})
    out = configured(ExtractFieldKey, field="magic").apply(record)
    assert out.key_schema is None
    assert out.key == 42
    assert out.value == "v"


def test_schemaless_nested_path() -> None:
    out = configured(ExtractFieldKey, {"field": "magic.foo", **V2}).apply(sink(key={"magic": {"foo": 42}}))
    assert (out.key_schema, out.key) == (None, 42)


def test_v1_treats_dots_as_part_of_the_name() -> None:
    xform = configured(ExtractFieldValue, field="magic.foo")
    assert xform.apply(sink({"magic.foo": 1, "magic": {"foo": 2}})).value == 1
    assert (
        xform.apply(sink({"magic": {"foo": 2}})).value is None
    )  # nonExistentNestedFieldSchemalessShouldReturnNull


def test_schemaless_null_passes_through() -> None:
    record = sink("v", key=None)
    assert configured(ExtractFieldKey, field="magic").apply(record) is record


def test_schemaless_missing_field_gives_null() -> None:
    out = configured(ExtractFieldKey, field="nonexistent").apply(sink(key={"magic": 42}))
    assert (out.key_schema, out.key) == (None, None)


def test_schemaless_null_or_missing_intermediate_map_gives_null() -> None:
    xform = configured(ExtractFieldValue, {"field": "a.b.c", **V2})
    assert xform.apply(sink({"a": None})).value is None
    assert xform.apply(sink({"a": {"x": 1}})).value is None


def test_schemaless_intermediate_that_is_not_a_map_is_a_data_error() -> None:
    with pytest.raises(DataException) as err:
        configured(ExtractFieldValue, {"field": "a.b", **V2}).apply(sink({"a": "text"}, offset=3))
    message = str(err.value)
    assert message.startswith("ExtractField$Value: ")
    assert "Only Map objects supported in absence of schema for [nested field access], found: str" in message
    assert "offset 3" in message


def test_schemaless_value_must_be_a_map() -> None:
    with pytest.raises(DataException) as err:
        configured(ExtractFieldValue, field="a").apply(sink("text"))
    assert str(err.value) == (
        "ExtractField$Value: Only Map objects supported in absence "
        "of schema for [field extraction], found: str "
        "(topic 'test', partition 0, offset 42)"
    )


def test_with_schema() -> None:
    key_schema = SchemaBuilder.struct().field("magic", Schema.INT32_SCHEMA).build()
    out = configured(ExtractFieldKey, field="magic").apply(
        sink(key=Struct(key_schema).put("magic", 42), key_schema=key_schema)
    )
    assert out.key_schema == Schema.INT32_SCHEMA
    assert out.key == 42


def test_with_schema_and_nested_path() -> None:
    key = Struct(NESTED).put("magic", Struct(FOO).put("foo", 42))
    out = configured(ExtractFieldKey, {"field": "magic.foo", **V2}).apply(sink(key=key, key_schema=NESTED))
    assert (out.key_schema, out.key) == (Schema.INT32_SCHEMA, 42)


def test_with_schema_a_whole_nested_struct_can_be_extracted() -> None:
    inner = Struct(FOO).put("foo", 1)
    out = configured(ExtractFieldValue, field="magic").apply(sink(Struct(NESTED).put("magic", inner), NESTED))
    assert out.value_schema is FOO
    assert out.value is inner


def test_backticks_quote_names_with_dots() -> None:
    inner = SchemaBuilder.struct().field("baz", Schema.STRING_SCHEMA).build()
    schema = SchemaBuilder.struct().field("foo.bar", inner).build()
    value = Struct(schema).put("foo.bar", Struct(inner).put("baz", "x"))
    out = configured(ExtractFieldValue, {"field": "`foo.bar`.baz", **V2}).apply(sink(value, schema))
    assert (out.value_schema, out.value) == (Schema.STRING_SCHEMA, "x")
    assert (
        configured(ExtractFieldValue, {"field": "`foo.bar`.baz", **V2})
        .apply(sink({"foo.bar": {"baz": 1}}))
        .value
        == 1
    )


def test_null_with_schema_keeps_the_field_schema() -> None:
    key_schema = SchemaBuilder.struct().field("magic", Schema.INT32_SCHEMA).optional().build()
    out = configured(ExtractFieldKey, field="magic").apply(sink(key=None, key_schema=key_schema))
    assert out.key_schema == Schema.INT32_SCHEMA
    assert out.key is None


def test_null_intermediate_struct_gives_null_with_the_field_schema() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("magic", SchemaBuilder.struct().field("foo", Schema.INT32_SCHEMA).optional().build())
        .build()
    )
    out = configured(ExtractFieldValue, {"field": "magic.foo", **V2}).apply(sink(Struct(schema), schema))
    assert (out.value_schema, out.value) == (Schema.INT32_SCHEMA, None)


def test_extracted_schema_keeps_optional_and_default() -> None:
    field_schema = SchemaBuilder.string().optional().default_value("d").build()
    schema = SchemaBuilder.struct().field("s", field_schema).build()
    out = configured(ExtractFieldValue, field="s").apply(sink(Struct(schema), schema))
    assert out.value_schema is field_schema


@pytest.mark.parametrize(("replace", "expected"), [("true", 42), ("false", None)])
@pytest.mark.parametrize("field", ["opt", "outer.opt"])
def test_replace_null_with_default(replace: str, expected: int | None, field: str) -> None:
    opt = SchemaBuilder.int32().optional().default_value(42).build()
    inner = SchemaBuilder.struct().field("opt", opt).build()
    schema = SchemaBuilder.struct().field("opt", opt).field("outer", inner).build()
    value = Struct(schema).put("outer", Struct(inner))
    xform = configured(ExtractFieldValue, {"field": field, "replace.null.with.default": replace, **V2})
    out = xform.apply(sink(value, schema))
    assert out.value_schema is opt
    assert out.value == expected


def test_intermediate_defaults_apply_even_without_replace_null_with_default() -> None:
    # Kafka reads intermediate structs with get(): a null struct with a default struct is walked into.
    inner_schema = SchemaBuilder.struct().field("foo", Schema.INT32_SCHEMA).optional().build()
    default = Struct(inner_schema).put("foo", 7)
    with_default = (
        SchemaBuilder.struct().field("foo", Schema.INT32_SCHEMA).optional().default_value(default).build()
    )
    schema = SchemaBuilder.struct().field("magic", with_default).build()
    xform = configured(ExtractFieldValue, {"field": "magic.foo", "replace.null.with.default": "false", **V2})
    assert xform.apply(sink(Struct(schema), schema)).value == 7


@pytest.mark.parametrize(
    ("field", "version"), [("nonexistent", "V1"), ("magic.nonexistent", "V1"), ("magic.nonexistent", "V2")]
)
def test_unknown_field_with_schema_is_a_data_error(field: str, version: str) -> None:
    key = Struct(NESTED).put("magic", Struct(FOO).put("foo", 42))
    xform = configured(ExtractFieldKey, {"field": field, "field.syntax.version": version})
    with pytest.raises(DataException) as err:
        xform.apply(sink(key=key, key_schema=NESTED, offset=5))
    assert str(err.value) == f"ExtractField$Key: Unknown field: {field} (topic 'test', partition 0, offset 5)"


def test_unknown_field_is_an_error_even_for_a_null_value() -> None:
    schema = SchemaBuilder.struct().field("magic", Schema.INT32_SCHEMA).optional().build()
    with pytest.raises(DataException, match="Unknown field: other"):
        configured(ExtractFieldValue, field="other").apply(source(None, schema))


def test_path_through_a_non_struct_field_is_a_data_error() -> None:
    schema = SchemaBuilder.struct().field("n", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataException) as err:
        configured(ExtractFieldValue, {"field": "n.x", **V2}).apply(sink(Struct(schema).put("n", 1), schema))
    assert str(err.value).startswith("ExtractField$Value: Cannot look up fields on non-struct type")


def test_with_schema_value_must_be_a_struct() -> None:
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    with pytest.raises(
        DataException,
        match=r"^ExtractField\$Value: Only Struct objects supported for \[field extraction\], found: dict",
    ):
        configured(ExtractFieldValue, field="a").apply(sink({"a": 1}, schema))


def test_syntax_version_is_case_insensitive() -> None:
    xform = configured(ExtractFieldValue, {"field": "a.b", "field.syntax.version": "v2"})
    assert xform.apply(sink({"a": {"b": 1}})).value == 1


def test_config_errors() -> None:
    issues = ExtractFieldValue.Config.issues({}, prefix="transforms.x.")
    assert [(i.key, i.message) for i in issues] == [
        (
            "transforms.x.field",
            'Missing required configuration "transforms.x.field" which has no default value.',
        )
    ]
    issues = ExtractFieldValue.Config.issues({"field": "a", "field.syntax.version": "V3"})
    assert [(i.key, i.message) for i in issues] == [
        (
            "field.syntax.version",
            "Invalid value V3 for configuration field.syntax.version: "
            "String must be one of (case insensitive): V1, V2",
        )
    ]


def test_broken_backticks_in_a_v2_path_are_a_config_error_on_field() -> None:
    props = {"field": "foo.`bar.baz", **V2}
    issues = ExtractFieldValue.Config.issues(props, prefix="transforms.x.")
    assert [(i.key, i.message) for i in issues] == [
        (
            "transforms.x.field",
            "Incomplete backtick pair in path: [foo.`bar.baz], "
            "consider adding a backslash before backtick at "
            "position 4 to escape it",
        )
    ]
    with pytest.raises(ConfigValidationError):
        configured(ExtractFieldValue, props)
    # The same text is a plain name under V1.
    assert ExtractFieldValue.Config.issues({"field": "foo.`bar.baz"}) == []


def test_empty_v2_path_is_a_config_error() -> None:
    issues = ExtractFieldValue.Config.issues({"field": " ", **V2})
    assert [i.key for i in issues] == ["field"]
    assert "must not be empty" in issues[0].message
    assert ExtractFieldValue.Config.issues({"field": ""}) == []  # V1: a name like any other
