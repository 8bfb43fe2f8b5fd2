"""DropHeaders against Kafka's DropHeadersTest cases and Kafka 4's list rules."""

from __future__ import annotations

import pytest

from connect.api import ConfigValidationError, Headers, Schema
from tests.transforms.support import configured, sink, source
from transforms.drop_headers import DropHeaders


def headers(*pairs: tuple[str, object]) -> Headers:
    out = Headers()
    for key, value in pairs:
        out.add(key, value, Schema.STRING_SCHEMA)
    return out


def pairs(h: Headers) -> list[tuple[str, object]]:
    return [(x.key, x.value) for x in h]


def test_drops_an_existing_header_and_keeps_the_rest_in_order() -> None:
    record = sink("v", headers=headers(("a", "a-value"), ("dropped", "x"), ("b", "b-value")))
    out = configured(DropHeaders, headers="dropped").apply(record)
    assert pairs(out.headers) == [("a", "a-value"), ("b", "b-value")]
    assert out.headers.last_with_name("a").schema == Schema.STRING_SCHEMA
    # the input record keeps its headers
    assert pairs(record.headers) == [("a", "a-value"), ("dropped", "x"), ("b", "b-value")]


def test_drops_every_header_of_a_repeated_name_and_keeps_repeats_of_others() -> None:
    record = sink("v", headers=headers(("d", 1), ("k", 1), ("d", 2), ("k", 2), ("e", 3)))
    out = configured(DropHeaders, headers="d,e").apply(record)
    assert pairs(out.headers) == [("k", 1), ("k", 2)]


def test_names_match_exactly() -> None:
    record = sink("v", headers=headers(("Trace", 1), ("trace-id", 2), ("trace", 3)))
    out = configured(DropHeaders, headers="trace").apply(record)
    assert pairs(out.headers) == [("Trace", 1), ("trace-id", 2)]


def test_a_record_without_those_headers_is_passed_on_as_it_is() -> None:
    record = sink("v", headers=headers(("a", 1)))
    assert configured(DropHeaders, headers="b,c").apply(record) is record
    bare = sink("v")
    assert configured(DropHeaders, headers="b").apply(bare) is bare
    assert not bare.has_headers  # and no header collection was created on it


def test_dropping_every_header_leaves_none() -> None:
    out = configured(DropHeaders, headers="a").apply(source("v", headers=headers(("a", 1))))
    assert len(out.headers) == 0
    assert out.source_offset == {"position": 7}


def test_key_value_and_coordinates_are_untouched_tombstones_included() -> None:
    record = sink(None, Schema.OPTIONAL_STRING_SCHEMA, key="k", headers=headers(("a", 1), ("b", 2)))
    out = configured(DropHeaders, headers="a").apply(record)
    assert (out.topic, out.kafka_partition, out.kafka_offset, out.timestamp) == (
        "test",
        0,
        42,
        record.timestamp,
    )
    assert (out.key, out.value, out.value_schema) == ("k", None, Schema.OPTIONAL_STRING_SCHEMA)
    assert pairs(out.headers) == [("b", 2)]


def test_a_list_setting_is_accepted_and_names_are_trimmed() -> None:
    record = sink("v", headers=headers(("a", 1), ("b", 2), ("c", 3)))
    assert pairs(configured(DropHeaders, {"headers": ["a", "c"]}).apply(record).headers) == [("b", 2)]
    assert pairs(configured(DropHeaders, headers=" a , c ").apply(record).headers) == [("b", 2)]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            "",
            "Invalid value  for configuration transforms.d.headers: "
            "Configuration 'headers' must not be empty. Valid values include: any non-empty value",
        ),
        (
            "a,a",
            "Invalid value a,a for configuration transforms.d.headers: "
            "Configuration 'headers' values must not be duplicated.",
        ),
        (
            "a,,b",
            "Invalid value a,,b for configuration transforms.d.headers: "
            "Configuration 'headers' values must not be empty.",
        ),
        (
            None,
            "Invalid value None for configuration transforms.d.headers: "
            "Configuration 'headers' values must not be null.",
        ),
    ],
)
def test_list_rules(value: str | None, message: str) -> None:
    found = DropHeaders.Config.issues({"headers": value}, prefix="transforms.d.")
    assert [(i.key, i.message) for i in found] == [("transforms.d.headers", message)]


def test_headers_is_required() -> None:
    found = DropHeaders.Config.issues({}, prefix="transforms.d.")
    assert [(i.key, i.message) for i in found] == [
        (
            "transforms.d.headers",
            'Missing required configuration "transforms.d.headers" which has no default value.',
        )
    ]
    with pytest.raises(ConfigValidationError):
        configured(DropHeaders, {})
