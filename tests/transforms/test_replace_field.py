"""ReplaceField against Kafka's ReplaceFieldTest cases, rename edge cases, the deprecated
blacklist/whitelist keys and the config checks."""

from __future__ import annotations

import logging

import pytest

from connect.api import ConfigValidationError, DataException, Schema, SchemaBuilder, Struct
from tests.transforms.support import configured, sink
from transforms.replace_field import ReplaceFieldKey, ReplaceFieldValue

SCHEMA = (
    SchemaBuilder.struct()
    .name("com.example.Row")
    .version(2)
    .doc("a row")
    .field("dont", Schema.STRING_SCHEMA)
    .field("abc", Schema.INT32_SCHEMA)
    .field("foo", Schema.BOOLEAN_SCHEMA)
    .field("etc", Schema.STRING_SCHEMA)
    .build()
)


def row() -> Struct:
    return Struct(SCHEMA).put("dont", "whatever").put("abc", 42).put("foo", True).put("etc", "etc")


@pytest.mark.parametrize("schema", [None, SCHEMA])
def test_tombstones_pass_through(schema: Schema | None) -> None:
    record = sink(None, schema)
    assert configured(ReplaceFieldValue, include="abc,foo", renames="abc:xyz,foo:bar").apply(record) is record


def test_schemaless() -> None:
    value = {"dont": "whatever", "abc": 42, "foo": True, "etc": "etc"}
    out = configured(ReplaceFieldValue, exclude="dont", renames="abc:xyz,foo:bar").apply(sink(value))
    assert out.value_schema is None
    assert list(out.value.items()) == [("xyz", 42), ("bar", True), ("etc", "etc")]  # input order kept
    assert value == {"dont": "whatever", "abc": 42, "foo": True, "etc": "etc"}  # input untouched


def test_with_schema() -> None:
    out = configured(ReplaceFieldValue, include="abc,foo", renames="abc:xyz,foo:bar").apply(
        sink(row(), SCHEMA)
    )
    s = out.value_schema
    assert [(f.name, f.schema) for f in s.fields] == [
        ("xyz", Schema.INT32_SCHEMA),
        ("bar", Schema.BOOLEAN_SCHEMA),
    ]
    assert (s.name, s.version, s.doc) == ("com.example.Row", 2, "a row")
    assert out.value.get("xyz") == 42
    assert out.value.get("bar") is True


def test_exclude_wins_over_include() -> None:
    out = configured(ReplaceFieldValue, include="abc,foo", exclude="foo").apply(sink(row(), SCHEMA))
    assert [f.name for f in out.value_schema.fields] == ["abc"]
    assert configured(ReplaceFieldValue, include="abc,foo", exclude="foo").apply(
        sink({"abc": 1, "foo": 2})
    ).value == {"abc": 1}


def test_filters_use_original_names() -> None:
    out = configured(ReplaceFieldValue, include="abc", renames="abc:xyz").apply(sink({"abc": 1, "xyz": 2}))
    assert out.value == {"xyz": 1}


def test_fields_keep_their_original_order_under_new_names() -> None:
    out = configured(ReplaceFieldValue, renames="etc:aaa,dont:zzz").apply(sink(row(), SCHEMA))
    assert [f.name for f in out.value_schema.fields] == ["zzz", "abc", "foo", "aaa"]


def test_swapping_names_reads_the_right_values() -> None:
    out = configured(ReplaceFieldValue, renames="abc:foo,foo:abc", include="abc,foo").apply(
        sink(row(), SCHEMA)
    )
    assert [(f.name, f.schema) for f in out.value_schema.fields] == [
        ("foo", Schema.INT32_SCHEMA),
        ("abc", Schema.BOOLEAN_SCHEMA),
    ]
    assert (out.value.get("foo"), out.value.get("abc")) == (42, True)


def test_rename_onto_an_existing_name_with_schema_is_a_data_error() -> None:
    with pytest.raises(DataException) as err:
        configured(ReplaceFieldValue, renames="abc:etc").apply(sink(row(), SCHEMA, offset=4))
    assert str(err.value) == (
        "ReplaceField$Value: Cannot create field because of field name "
        "duplication etc (topic 'test', partition 0, offset 4)"
    )


def test_rename_onto_an_existing_name_without_schema_last_wins() -> None:
    out = configured(ReplaceFieldValue, renames="a:b").apply(sink({"a": 1, "b": 2}))
    assert out.value == {"b": 2}


def test_nothing_changed_returns_the_same_record() -> None:
    record = sink(row(), SCHEMA)
    assert configured(ReplaceFieldValue, exclude="missing").apply(record) is record
    schemaless = sink({"a": 1})
    assert configured(ReplaceFieldValue, renames="x:y").apply(schemaless) is schemaless


def test_updated_schema_is_cached() -> None:
    xform = configured(ReplaceFieldValue, exclude="dont")
    first = xform.apply(sink(row(), SCHEMA)).value_schema
    second = xform.apply(sink(row(), SCHEMA)).value_schema
    assert first is second


def test_struct_level_optional_and_default_are_not_copied() -> None:
    builder = (
        SchemaBuilder.struct().optional().field("a", Schema.INT32_SCHEMA).field("b", Schema.INT32_SCHEMA)
    )
    schema = builder.default_value(Struct(builder.build()).put("a", 1).put("b", 2)).build()
    out = configured(ReplaceFieldValue, exclude="b").apply(
        sink(Struct(schema).put("a", 5).put("b", 6), schema)
    )
    assert (out.value_schema.optional, out.value_schema.default_value) == (False, None)
    assert out.value.get("a") == 5


@pytest.mark.parametrize(("replace", "expected"), [("false", None), ("true", 42)])
@pytest.mark.parametrize("cls", [ReplaceFieldKey, ReplaceFieldValue])
def test_replace_null_with_default(replace: str, expected: int | None, cls: type[ReplaceFieldValue]) -> None:
    schema = (
        SchemaBuilder.struct()
        .field("abc", SchemaBuilder.int32().optional().default_value(42).build())
        .build()
    )
    value = Struct(schema).put("abc", None)
    xform = configured(
        cls, {"include": "abc", "renames": "abc:optional_with_default", "replace.null.with.default": replace}
    )
    record = sink(key=value, key_schema=schema) if cls is ReplaceFieldKey else sink(value, schema)
    out = xform.apply(record)
    updated = out.key if cls is ReplaceFieldKey else out.value
    assert len(updated.schema.fields) == 1
    assert updated.get_without_default("optional_with_default") == expected


def test_value_must_be_a_map_or_struct() -> None:
    with pytest.raises(
        DataException,
        match=r"^ReplaceField\$Value: Only Map objects supported in absence "
        r"of schema for \[field replacement\], found: int",
    ):
        configured(ReplaceFieldValue, exclude="a").apply(sink(5))
    with pytest.raises(
        DataException,
        match=r"^ReplaceField\$Key: Only Struct objects supported for \[field replacement\], found: str",
    ):
        configured(ReplaceFieldKey, exclude="a").apply(sink(key="k", key_schema=Schema.STRING_SCHEMA))


@pytest.mark.parametrize(
    ("renames", "expected"),
    [
        ("a:b:", {"b": 1, "c": 2, "": 3}),  # Java's split drops trailing empty parts
        (":x", {"a": 1, "c": 2, "x": 3}),  # the empty name
    ],
)
def test_rename_parsing_follows_java_split(renames: str, expected: dict[str, int]) -> None:
    out = configured(ReplaceFieldValue, renames=renames).apply(sink({"a": 1, "c": 2, "": 3}))
    assert out.value == expected


@pytest.mark.parametrize(
    ("renames", "bad"),
    [
        ("foo,bar:baz", "foo"),
        ("a:b:c", "a:b:c"),
        ("x:y,a::", "a::"),
        ("a:b,,c:d", ""),
        (":", ":"),
        ("a:b,c::d", "c::d"),
    ],
)
def test_bad_rename_mapping_is_a_config_error(renames: str, bad: str) -> None:
    issues = ReplaceFieldValue.Config.issues({"renames": renames}, prefix="transforms.r.")
    assert [(i.key, i.message) for i in issues] == [
        (
            "transforms.r.renames",
            f"Invalid value {renames} for configuration transforms.r.renames: Invalid rename mapping: {bad}",
        )
    ]
    with pytest.raises(ConfigValidationError):
        configured(ReplaceFieldValue, renames=renames)


@pytest.mark.parametrize("key", ["exclude", "include"])
def test_duplicate_or_empty_names_are_config_errors(key: str) -> None:
    issues = ReplaceFieldValue.Config.issues({key: "a,a"})
    assert [(i.key, i.message) for i in issues] == [
        (
            key,
            f"Invalid value a,a for configuration {key}: Configuration "
            f"'{key}' values must not be duplicated.",
        )
    ]
    issues = ReplaceFieldValue.Config.issues({key: "a,,b"})
    assert [(i.key, i.message) for i in issues] == [
        (key, f"Invalid value a,,b for configuration {key}: Configuration '{key}' values must not be empty.")
    ]
    assert ReplaceFieldValue.Config.issues({key: ""}) == []  # an empty list is allowed


def test_no_settings_at_all_is_valid_and_changes_nothing() -> None:
    assert ReplaceFieldValue.Config.issues({}) == []
    record = sink({"a": 1})
    assert configured(ReplaceFieldValue).apply(record) is record


def test_deprecated_blacklist_and_whitelist_still_work(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="transforms.replace_field"):
        xform = configured(ReplaceFieldValue, blacklist="dont", whitelist="abc,dont,foo")
    assert xform.apply(sink(row(), SCHEMA)).value_schema.fields[0].name == "abc"
    assert [f.name for f in xform.apply(sink(row(), SCHEMA)).value_schema.fields] == ["abc", "foo"]
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 2
    assert "'blacklist' is deprecated" in warnings[0] and "'whitelist' is deprecated" in warnings[1]


def test_new_keys_win_over_deprecated_ones(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="transforms.replace_field"):
        xform = configured(
            ReplaceFieldValue, {"exclude": "etc", "blacklist": "dont", "include": "", "whitelist": "abc"}
        )
    assert [f.name for f in xform.apply(sink(row(), SCHEMA)).value_schema.fields] == ["dont", "abc", "foo"]
    assert all("ignored" in r.getMessage() for r in caplog.records) and len(caplog.records) == 2


def test_deprecated_keys_are_checked_like_the_new_ones() -> None:
    issues = ReplaceFieldValue.Config.issues({"blacklist": "a,a"})
    assert [i.key for i in issues] == ["blacklist"]
    assert "values must not be duplicated" in issues[0].message


def test_each_output_field_reads_the_field_it_came_from() -> None:
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).field("x", Schema.INT32_SCHEMA).build()
    out = configured(ReplaceFieldValue, renames="a:x", exclude="a").apply(
        sink(Struct(schema).put("a", 1).put("x", 2), schema)
    )
    assert [f.name for f in out.value_schema.fields] == ["x"]
    assert out.value.get("x") == 2
