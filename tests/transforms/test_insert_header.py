"""InsertHeader against Kafka's InsertHeaderTest cases: the literal parsed once into a
typed header, appended after existing headers of the same name."""

from __future__ import annotations

import datetime

import pytest

from connect.api import ConfigValidationError, Date, Headers, Schema
from tests.transforms.support import configured, sink, source
from transforms.insert_header import InsertHeader


def insert(literal: str, record: object = None, header: str = "inserted") -> object:
    xform = configured(InsertHeader, {"header": header, "value.literal": literal})
    return xform.apply(record if record is not None else sink("v"))


def test_inserts_a_string_header() -> None:
    out = insert("inserted-value")
    h = out.headers.last_with_name("inserted")
    assert (h.schema, h.value) == (Schema.STRING_SCHEMA, "inserted-value")


def test_appends_after_existing_headers_of_the_same_name() -> None:
    existing = Headers().add("inserted", "old", Schema.STRING_SCHEMA).add("other", 1, Schema.INT8_SCHEMA)
    record = sink("v", headers=existing)
    out = insert("new", record)
    assert [(h.key, h.value) for h in out.headers] == [("inserted", "old"), ("other", 1), ("inserted", "new")]
    assert [(h.key, h.value) for h in record.headers] == [
        ("inserted", "old"),
        ("other", 1),
    ]  # input untouched


def test_each_record_gets_its_own_headers() -> None:
    xform = configured(InsertHeader, {"header": "h", "value.literal": "x"})
    first = xform.apply(sink("a"))
    second = xform.apply(sink("b"))
    assert len(first.headers) == len(second.headers) == 1
    assert first.headers is not second.headers


@pytest.mark.parametrize(
    ("literal", "schema", "value"),
    [
        ("42", Schema.INT8_SCHEMA, 42),
        ("70000", Schema.INT32_SCHEMA, 70000),
        ("true", Schema.BOOLEAN_SCHEMA, True),
        ("3.14", Schema.FLOAT32_SCHEMA, 3.14),
        ("2024-05-01", Date.SCHEMA, datetime.date(2024, 5, 1)),
        ("hello world", Schema.STRING_SCHEMA, "hello world"),
        ("", Schema.STRING_SCHEMA, ""),
    ],
)
def test_the_literal_is_typed_as_kafkas_values_parse_string_reads_it(
    literal: str, schema: Schema, value: object
) -> None:
    h = insert(literal).headers.last_with_name("inserted")
    assert (h.schema, h.value) == (schema, value)


def test_the_literal_is_trimmed_like_every_kafka_string_setting() -> None:
    h = insert("  42  ").headers.last_with_name("inserted")
    assert (h.schema, h.value) == (Schema.INT8_SCHEMA, 42)


def test_a_null_literal_adds_a_header_without_schema_or_value() -> None:
    h = insert("null").headers.last_with_name("inserted")
    assert h is not None
    assert (h.schema, h.value) == (None, None)


def test_an_array_literal() -> None:
    h = insert("[1, 2, 300]").headers.last_with_name("inserted")
    assert h.schema.type.name == "ARRAY" and h.schema.value_schema == Schema.INT16_SCHEMA
    assert h.value == [1, 2, 300]


def test_key_value_and_coordinates_are_untouched_tombstones_included() -> None:
    record = sink(None, Schema.OPTIONAL_STRING_SCHEMA, key="k", key_schema=Schema.STRING_SCHEMA)
    out = insert("x", record)
    assert (out.topic, out.kafka_partition, out.kafka_offset, out.timestamp) == (
        "test",
        0,
        42,
        record.timestamp,
    )
    assert (out.key, out.key_schema, out.value, out.value_schema) == (
        "k",
        Schema.STRING_SCHEMA,
        None,
        Schema.OPTIONAL_STRING_SCHEMA,
    )
    assert not record.has_headers


def test_source_records_keep_their_source_position() -> None:
    out = insert("x", source("v"))
    assert out.source_offset == {"position": 7}
    assert out.headers.last_with_name("inserted").value == "x"


def test_header_and_value_literal_are_required() -> None:
    found = InsertHeader.Config.issues({}, prefix="transforms.i.")
    assert [(i.key, i.message) for i in found] == [
        (
            "transforms.i.header",
            'Missing required configuration "transforms.i.header" which has no default value.',
        ),
        (
            "transforms.i.value.literal",
            'Missing required configuration "transforms.i.value.literal" which has no default value.',
        ),
    ]
    with pytest.raises(ConfigValidationError):
        configured(InsertHeader, {"header": "h"})


def test_null_settings_are_refused_with_kafkas_message() -> None:
    found = InsertHeader.Config.issues({"header": None, "value.literal": "x"}, prefix="transforms.i.")
    assert [(i.key, i.message) for i in found] == [
        (
            "transforms.i.header",
            "Invalid value null for configuration transforms.i.header: entry must be non null",
        )
    ]
    with pytest.raises(ConfigValidationError):
        configured(InsertHeader, {"header": "h", "value.literal": None})


def test_a_list_literal_is_not_shared_between_records() -> None:
    from tests.transforms.support import configured, sink
    from transforms.insert_header import InsertHeader

    xform = configured(InsertHeader, {"header": "h", "value.literal": "[1,2]"})
    first = xform.apply(sink("a")).headers.last_with_name("h")
    second = xform.apply(sink("b")).headers.last_with_name("h")
    assert first is not None and second is not None
    first.value.append(3)
    assert second.value == [1, 2]
