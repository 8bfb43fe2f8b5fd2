"""TimestampRouter against Kafka's TimestampRouterTest, the literal placeholder rules,
the per-topic cache and the config and data errors."""

from __future__ import annotations

import pytest

from connect.api import ConfigValidationError, DataException, Headers, Schema
from tests.transforms.support import configured, sink, source
from transforms.timestamp_router import TimestampRouter

KAFKA_TS = 1_483_425_001_864  # 2017-01-03T06:30:01.864Z, Kafka's test timestamp
DAY = 86_400_000


def route(topic: str, timestamp: int | None = KAFKA_TS, **configs: str) -> str:
    xform = configured(TimestampRouter, {k.replace("_", "."): v for k, v in configs.items()})
    return xform.apply(sink("v", topic=topic, timestamp=timestamp)).topic


def test_default_configuration() -> None:
    assert route("test") == "test-20170103"


def test_custom_formats() -> None:
    out = route("orders", topic_format="archive.${topic}.${timestamp}", timestamp_format="yyyy-MM'T'HH")
    assert out == "archive.orders.2017-01T06"


def test_the_timestamp_is_formatted_in_utc() -> None:
    late_evening = KAFKA_TS + 17 * 3_600_000  # 2017-01-03T23:30:01.864Z
    assert route("t", late_evening) == "t-20170103"
    assert route("t", -1) == "t-19691231"


def test_every_placeholder_is_replaced_topic_first_and_literally() -> None:
    assert route("t", topic_format="${topic}/${topic}/${timestamp}${timestamp}") == "t/t/2017010320170103"
    # A topic that contains "${timestamp}" is expanded too, as in Kafka.
    assert route("a${timestamp}") == "a20170103-20170103"
    # Replacement text is literal: no group references or escapes.
    assert route("$1\\x", topic_format="${topic}-$0") == "$1\\x-$0"
    assert route("t", topic_format="static") == "static"


def test_the_rest_of_the_record_is_untouched() -> None:
    headers = Headers().add("h", "v")
    record = sink({"a": 1}, None, key="k", key_schema=Schema.STRING_SCHEMA, partition=3, headers=headers)
    out = configured(TimestampRouter).apply(record)
    assert out.topic == "test-20231114"
    assert (out.key, out.key_schema, out.value, out.kafka_partition, out.kafka_offset) == (
        "k",
        Schema.STRING_SCHEMA,
        {"a": 1},
        3,
        42,
    )
    assert out.timestamp == record.timestamp
    assert [(h.key, h.value) for h in out.headers] == [("h", "v")]
    assert record.topic == "test"


def test_tombstones_are_routed_too() -> None:
    out = configured(TimestampRouter).apply(sink(None, timestamp=0))
    assert (out.topic, out.value) == ("test-19700101", None)


def test_source_records_keep_their_source_position() -> None:
    out = configured(TimestampRouter).apply(source("v", timestamp=0))
    assert out.topic == "test-19700101"
    assert (out.source_partition, out.source_offset) == ({"source": "s"}, {"position": 7})


def test_routes_change_with_the_day_and_the_topic() -> None:
    xform = configured(TimestampRouter)
    seen = [
        xform.apply(sink("v", topic=topic, timestamp=ts)).topic
        for topic, ts in [("a", 0), ("a", DAY - 1), ("b", DAY - 1), ("a", DAY), ("b", 0), ("a", 0)]
    ]
    assert seen == ["a-19700101", "a-19700101", "b-19700101", "a-19700102", "b-19700101", "a-19700101"]


def test_finer_patterns_change_within_the_day() -> None:
    xform = configured(TimestampRouter, {"timestamp.format": "HHmmss.SSS"})
    assert [xform.apply(sink("v", timestamp=ts)).topic for ts in (0, 1, 1, 61_001)] == [
        "test-000000.000",
        "test-000000.001",
        "test-000000.001",
        "test-000101.001",
    ]


def test_a_record_without_a_timestamp_is_a_data_error() -> None:
    with pytest.raises(DataException) as err:
        configured(TimestampRouter).apply(sink("v", timestamp=None, offset=9))
    assert (
        str(err.value) == "TimestampRouter: Timestamp missing on record (topic 'test', partition 0, offset 9)"
    )


def test_a_timestamp_beyond_pythons_dates_is_a_data_error() -> None:
    with pytest.raises(DataException, match=r"^TimestampRouter: Timestamp 9223372036854775807 ms is outside"):
        configured(TimestampRouter).apply(sink("v", timestamp=2**63 - 1))


def test_an_invalid_timestamp_format_is_refused_at_validation() -> None:
    found = TimestampRouter.Config.issues({"timestamp.format": "yyyyqq"}, prefix="transforms.route.")
    assert [(i.key, i.message) for i in found] == [
        (
            "transforms.route.timestamp.format",
            "Invalid value yyyyqq for configuration transforms.route.timestamp.format: "
            "Illegal pattern character 'q'",
        )
    ]
    with pytest.raises(ConfigValidationError):
        configured(TimestampRouter, {"timestamp.format": "'unterminated"})


def test_settings_are_trimmed_like_kafka_strings() -> None:
    assert route("t", topic_format="  ${topic}_${timestamp}  ", timestamp_format=" yyyy ") == "t_2017"
