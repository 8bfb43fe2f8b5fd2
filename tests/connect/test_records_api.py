"""Tests of connect.api.records and connect.api.headers: SourceRecord, SinkRecord, ``new_record``
(Kafka's ``newRecord``: fields kept unless replaced, headers copied, a SinkRecord's
``original*`` coordinates kept), equality, and the Headers collection."""

from __future__ import annotations

import pytest

from connect.api import Header, Headers, Schema, SinkRecord, SourceRecord, TimestampType, TopicPartition

# -- construction ----------------------------------------------------------------------------------


def test_source_record_fields_and_defaults() -> None:
    r = SourceRecord({"file": "a"}, {"position": 4}, "lines", value="x")
    assert r.source_partition == {"file": "a"}
    assert r.source_offset == {"position": 4}
    assert r.topic == "lines"
    assert r.value == "x"
    assert r.kafka_partition is None
    assert r.key is None and r.key_schema is None
    assert r.value_schema is None
    assert r.timestamp is None
    assert not r.has_headers
    assert len(r.headers) == 0


def test_source_record_positional_order_is_kafkas() -> None:
    headers = Headers().add("h", "v")
    r = SourceRecord(
        {"p": 1}, {"o": 2}, "t", 3, Schema.STRING_SCHEMA, "key", Schema.INT32_SCHEMA, 42, 1700, headers
    )
    assert (r.topic, r.kafka_partition, r.key, r.value, r.timestamp) == ("t", 3, "key", 42, 1700)
    assert r.key_schema is Schema.STRING_SCHEMA
    assert r.value_schema is Schema.INT32_SCHEMA
    assert r.headers is headers


def test_source_record_without_partition_or_offset() -> None:
    r = SourceRecord(topic="t", value=1)
    assert r.source_partition is None
    assert r.source_offset is None


def test_sink_record_fields_and_defaults() -> None:
    r = SinkRecord("orders", 2, None, "k", None, "v", 1700, kafka_offset=99)
    assert (r.topic, r.kafka_partition, r.key, r.value, r.timestamp) == ("orders", 2, "k", "v", 1700)
    assert r.kafka_offset == 99
    assert r.timestamp_type == TimestampType.NO_TIMESTAMP_TYPE == "NoTimestampType"
    assert (r.original_topic, r.original_kafka_partition, r.original_kafka_offset) == ("orders", 2, 99)
    assert r.topic_partition == TopicPartition("orders", 2)


def test_sink_record_explicit_originals() -> None:
    r = SinkRecord(
        "routed",
        0,
        kafka_offset=5,
        timestamp_type=TimestampType.LOG_APPEND_TIME,
        original_topic="raw",
        original_kafka_partition=7,
        original_kafka_offset=123,
    )
    assert (r.original_topic, r.original_kafka_partition, r.original_kafka_offset) == ("raw", 7, 123)
    assert r.timestamp_type == "LogAppendTime"


def test_sink_record_without_partition() -> None:
    r = SinkRecord("t")
    assert r.kafka_offset == -1
    assert r.topic_partition == TopicPartition("t", -1)


def test_topic_partition() -> None:
    tp = TopicPartition("orders", 3)
    assert str(tp) == "orders-3"
    assert tp == TopicPartition("orders", 3)
    assert len({tp, TopicPartition("orders", 3), TopicPartition("orders", 4)}) == 2
    assert sorted([TopicPartition("b", 0), TopicPartition("a", 2), TopicPartition("a", 1)]) == [
        TopicPartition("a", 1),
        TopicPartition("a", 2),
        TopicPartition("b", 0),
    ]
    with pytest.raises(AttributeError):  # immutable (a named tuple)
        tp.partition = 9  # type: ignore[misc]


# -- new_record ----------------------------------------------------------------------------------------


def full_source() -> SourceRecord:
    return SourceRecord(
        {"file": "a"},
        {"position": 10},
        "lines",
        1,
        Schema.STRING_SCHEMA,
        "key",
        Schema.STRING_SCHEMA,
        "value",
        1700000000000,
        Headers().add("h1", "v1"),
    )


def test_new_record_without_changes_is_an_equal_copy() -> None:
    r = full_source()
    copy = r.new_record()
    assert copy == r
    assert copy is not r
    assert type(copy) is SourceRecord


def test_new_record_replaces_only_the_named_fields() -> None:
    r = full_source()
    copy = r.new_record(topic="other", value={"a": 1}, value_schema=None)
    assert copy.topic == "other"
    assert copy.value == {"a": 1}
    assert copy.value_schema is None
    assert copy.kafka_partition == 1
    assert copy.key == "key"
    assert copy.key_schema is Schema.STRING_SCHEMA
    assert copy.timestamp == 1700000000000
    assert copy.source_partition == {"file": "a"}
    assert copy.source_offset == {"position": 10}
    assert copy.headers == r.headers
    # The original is untouched.
    assert (r.topic, r.value, r.value_schema) == ("lines", "value", Schema.STRING_SCHEMA)


@pytest.mark.parametrize(
    "field", ["key", "key_schema", "value", "value_schema", "timestamp", "kafka_partition"]
)
def test_new_record_with_explicit_none_sets_none(field: str) -> None:
    r = full_source()
    assert getattr(r, field) is not None
    copy = r.new_record(**{field: None})
    assert getattr(copy, field) is None


def test_new_record_refuses_unknown_fields() -> None:
    r = full_source()
    with pytest.raises(TypeError):
        r.new_record(colour="red")
    with pytest.raises(TypeError):
        SinkRecord("t", 0, kafka_offset=1).new_record(kafka_offset=2)


def test_new_record_copies_headers_instead_of_sharing_them() -> None:
    r = full_source()
    copy = r.new_record()
    copy.headers.add("h2", "v2")
    assert r.headers.keys() == ["h1"]
    assert copy.headers.keys() == ["h1", "h2"]
    r.headers.remove("h1")
    assert copy.headers.keys() == ["h1", "h2"]


def test_new_record_of_a_record_without_headers() -> None:
    r = SourceRecord({"p": 1}, {"o": 1}, "t", value="v")
    copy = r.new_record()
    copy.headers.add("added", 1)
    assert not r.has_headers
    assert len(r.headers) == 0


def test_new_record_with_given_headers_uses_them() -> None:
    r = full_source()
    replacement = Headers().add("x", "y")
    copy = r.new_record(headers=replacement)
    assert copy.headers is replacement
    assert r.headers.keys() == ["h1"]
    cleared = r.new_record(headers=None)
    assert not cleared.has_headers


def test_sink_record_copies_keep_the_kafka_coordinates() -> None:
    r = SinkRecord(
        "orders-raw",
        4,
        None,
        "k",
        None,
        "v",
        1700,
        Headers().add("h", 1),
        kafka_offset=321,
        timestamp_type=TimestampType.CREATE_TIME,
    )
    copy = r.new_record(topic="orders", kafka_partition=0, value="w")
    assert type(copy) is SinkRecord
    assert (copy.topic, copy.kafka_partition, copy.value) == ("orders", 0, "w")
    assert copy.kafka_offset == 321
    assert copy.timestamp_type == "CreateTime"
    assert (copy.original_topic, copy.original_kafka_partition, copy.original_kafka_offset) == (
        "orders-raw",
        4,
        321,
    )
    twice = copy.new_record(topic="final")
    assert (twice.original_topic, twice.original_kafka_partition) == ("orders-raw", 4)
    assert twice.topic_partition == TopicPartition("final", 0)


def test_source_record_copies_keep_partition_and_offset_objects() -> None:
    r = full_source()
    copy = r.new_record(value="changed")
    assert copy.source_partition == r.source_partition
    assert copy.source_offset == r.source_offset


# -- equality ------------------------------------------------------------------------------------------


def test_equality_of_source_records() -> None:
    assert full_source() == full_source()
    base = full_source()
    for changed in (
        base.new_record(topic="x"),
        base.new_record(kafka_partition=2),
        base.new_record(key="other"),
        base.new_record(value="other"),
        base.new_record(timestamp=1),
        base.new_record(value_schema=Schema.OPTIONAL_STRING_SCHEMA),
        base.new_record(headers=Headers().add("h1", "other")),
    ):
        assert changed != base
    other_offset = full_source()
    other_offset.source_offset = {"position": 11}
    assert other_offset != base
    other_partition = full_source()
    other_partition.source_partition = {"file": "b"}
    assert other_partition != base


def test_equality_of_sink_records() -> None:
    a = SinkRecord("t", 0, None, "k", None, "v", 5, kafka_offset=1)
    assert a == SinkRecord("t", 0, None, "k", None, "v", 5, kafka_offset=1)
    assert a != SinkRecord("t", 0, None, "k", None, "v", 5, kafka_offset=2)
    assert a != SinkRecord("t", 0, None, "k", None, "v", 5, kafka_offset=1, original_topic="raw")
    assert a != SinkRecord("t", 0, None, "k", None, "v", 5, kafka_offset=1, timestamp_type="CreateTime")


def test_no_headers_equals_empty_headers() -> None:
    assert SourceRecord(topic="t", value=1) == SourceRecord(topic="t", value=1, headers=Headers())


def test_source_and_sink_records_are_never_equal() -> None:
    assert SourceRecord(topic="t", value=1) != SinkRecord("t", value=1)
    assert SourceRecord(topic="t") != "t"


def test_records_are_not_hashable() -> None:
    with pytest.raises(TypeError):
        hash(SourceRecord(topic="t"))


def test_repr_names_the_fields() -> None:
    text = repr(full_source())
    assert text.startswith("SourceRecord(")
    assert "topic='lines'" in text
    assert "source_offset={'position': 10}" in text
    assert "h1" in text


# -- Headers --------------------------------------------------------------------------------------------


def test_headers_keep_order_and_duplicates() -> None:
    h = Headers().add("a", 1).add("b", 2).add("a", 3, Schema.INT32_SCHEMA)
    assert h.keys() == ["a", "b", "a"]
    assert len(h) == 3
    assert [x.value for x in h.all_with_name("a")] == [1, 3]
    last = h.last_with_name("a")
    assert last == Header("a", 3, Schema.INT32_SCHEMA)
    assert h.last_with_name("missing") is None
    assert h.all_with_name("missing") == []


def test_headers_mutators_return_self() -> None:
    h = Headers()
    assert h.add("a", 1) is h
    assert h.add_header(Header("b", 2)) is h
    assert h.remove("a") is h
    assert h.retain_latest() is h
    assert h.clear() is h
    assert not h


def test_headers_remove_and_retain_latest() -> None:
    h = Headers().add("a", 1).add("b", 2).add("a", 3).add("c", 4).add("b", 5)
    assert Headers(list(h)).remove("a").keys() == ["b", "c", "b"]
    assert [(x.key, x.value) for x in Headers(list(h)).retain_latest("a")] == [
        ("b", 2),
        ("a", 3),
        ("c", 4),
        ("b", 5),
    ]
    assert [(x.key, x.value) for x in Headers(list(h)).retain_latest()] == [("a", 3), ("c", 4), ("b", 5)]


def test_headers_copy_is_independent() -> None:
    h = Headers().add("a", 1)
    c = h.copy()
    assert c == h
    c.add("b", 2)
    assert h.keys() == ["a"]


def test_iterating_while_changing_headers_is_safe() -> None:
    h = Headers().add("a", 1).add("b", 2)
    for header in h:
        h.remove(header.key)
    assert len(h) == 0


def test_header_is_immutable() -> None:
    header = Header("k", "v")
    assert header.rename("k2") == Header("k2", "v")
    assert header.with_value(Schema.STRING_SCHEMA, "w") == Header("k", "w", Schema.STRING_SCHEMA)
    assert header == Header("k", "v")
    with pytest.raises(AttributeError):
        header.value = "x"  # type: ignore[misc]


def test_headers_equality() -> None:
    assert Headers().add("a", 1) == Headers([Header("a", 1)])
    assert Headers().add("a", 1) != Headers().add("a", 2)
    assert Headers().add("a", 1).add("b", 2) != Headers().add("b", 2).add("a", 1)
    assert Headers() != []


def test_with_value_and_with_key_are_new_record_shortcuts() -> None:
    r = full_source()
    v = r.with_value(None, {"a": 1})
    assert v == r.new_record(value_schema=None, value={"a": 1})
    k = r.with_key(Schema.INT32_SCHEMA, 5)
    assert k == r.new_record(key_schema=Schema.INT32_SCHEMA, key=5)
    v.headers.add("extra", 1)  # headers are copied, not shared
    assert r.headers.keys() == ["h1"]
    s = SinkRecord("t", 3, None, "k", None, "v", 9, None, kafka_offset=7).with_value(None, "w")
    assert (s.value, s.kafka_offset, s.original_kafka_offset, s.kafka_partition) == ("w", 7, 7, 3)
