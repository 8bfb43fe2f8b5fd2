"""The records that flow through Connect: ``SourceRecord`` (from a source into Kafka) and
``SinkRecord`` (from Kafka into a sink).

Keys and values are Connect data: a value plus an optional ``Schema``. Without a
schema they are plain Python values (dicts, lists, str, bytes, numbers, None),
which every converter and transform accepts as well.

A source connector makes records like this::

    SourceRecord(
        source_partition={"table": "orders"},      # where in the source system
        source_offset={"id": 1042},                # how far it has read there
        topic="orders",
        value_schema=Schema.STRING_SCHEMA,
        value="order 1042",
    )

The framework stores ``source_offset`` per ``source_partition`` once the record is
acknowledged by Kafka, and hands it back through ``OffsetStorageReader`` after a
restart.

Records are created for every message, so they are slotted classes with a lazily
created ``headers`` collection rather than dataclasses.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, Self

from connect.api.headers import Headers

if TYPE_CHECKING:
    from connect.api.data import Schema


class TimestampType:
    NO_TIMESTAMP_TYPE = "NoTimestampType"
    CREATE_TIME = "CreateTime"
    LOG_APPEND_TIME = "LogAppendTime"


class TopicPartition(NamedTuple):
    """A Kafka topic partition (a named tuple: cheap to make, hashable, ordered)."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


_FIELDS = ("topic", "kafka_partition", "key_schema", "key", "value_schema", "value", "timestamp")
_KEEP: Any = object()  # new_record's "not given": None is a value a field can be set to
_new = object.__new__


class ConnectRecord:
    __slots__ = (
        "_headers",
        "kafka_partition",
        "key",
        "key_schema",
        "timestamp",
        "topic",
        "value",
        "value_schema",
    )

    def __init__(
        self,
        topic: str,
        kafka_partition: int | None = None,
        key_schema: Schema | None = None,
        key: Any = None,
        value_schema: Schema | None = None,
        value: Any = None,
        timestamp: int | None = None,
        headers: Headers | None = None,
    ) -> None:
        self.topic = topic
        self.kafka_partition = kafka_partition
        self.key_schema = key_schema
        self.key = key
        self.value_schema = value_schema
        self.value = value
        self.timestamp = timestamp  # epoch milliseconds
        self._headers = headers

    @property
    def headers(self) -> Headers:
        if self._headers is None:
            self._headers = Headers()
        return self._headers

    @headers.setter
    def headers(self, value: Headers) -> None:
        self._headers = value

    @property
    def has_headers(self) -> bool:
        """True when there is at least one header (without creating the collection)."""
        return bool(self._headers)

    def _extra(self) -> dict[str, Any]:
        return {}

    def new_record(
        self,
        *,
        topic: Any = _KEEP,
        kafka_partition: Any = _KEEP,
        key_schema: Any = _KEEP,
        key: Any = _KEEP,
        value_schema: Any = _KEEP,
        value: Any = _KEEP,
        timestamp: Any = _KEEP,
        headers: Any = _KEEP,
    ) -> Self:
        """A copy with some fields replaced: what a transformation returns.

        Fields not named are kept (headers are copied, so the copy can change them
        without touching this record); naming a field with None sets it to None.
        ``record.new_record(value=v, value_schema=s)`` is Kafka's
        ``record.newRecord(topic, partition, keySchema, key, s, v, timestamp)``.
        Subclass fields (source offsets, Kafka coordinates) are carried over.
        """
        # Every transformation makes one of these per record: explicit keywords and
        # slot copies, no dicts.
        copy = _new(type(self))
        copy.topic = self.topic if topic is _KEEP else topic
        copy.kafka_partition = self.kafka_partition if kafka_partition is _KEEP else kafka_partition
        copy.key_schema = self.key_schema if key_schema is _KEEP else key_schema
        copy.key = self.key if key is _KEEP else key
        copy.value_schema = self.value_schema if value_schema is _KEEP else value_schema
        copy.value = self.value if value is _KEEP else value
        copy.timestamp = self.timestamp if timestamp is _KEEP else timestamp
        if headers is _KEEP:
            own = self._headers
            copy._headers = own.copy() if own else None
        else:
            copy._headers = headers
        self._copy_extra(copy)
        return copy

    def with_value(self, schema: Schema | None, value: Any) -> Self:
        """``new_record(value_schema=schema, value=value)``, made faster for transformations."""
        copy = _new(type(self))
        copy.topic = self.topic
        copy.kafka_partition = self.kafka_partition
        copy.key_schema = self.key_schema
        copy.key = self.key
        copy.value_schema = schema
        copy.value = value
        copy.timestamp = self.timestamp
        own = self._headers
        copy._headers = own.copy() if own else None
        self._copy_extra(copy)
        return copy

    def with_key(self, schema: Schema | None, key: Any) -> Self:
        """``new_record(key_schema=schema, key=key)``, made faster for transformations."""
        copy = _new(type(self))
        copy.topic = self.topic
        copy.kafka_partition = self.kafka_partition
        copy.key_schema = schema
        copy.key = key
        copy.value_schema = self.value_schema
        copy.value = self.value
        copy.timestamp = self.timestamp
        own = self._headers
        copy._headers = own.copy() if own else None
        self._copy_extra(copy)
        return copy

    def _copy_extra(self, copy: Self) -> None:
        pass

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, ConnectRecord)
        return (
            all(getattr(self, n) == getattr(other, n) for n in _FIELDS)
            and self.headers == other.headers
            and self._extra() == other._extra()
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        parts = [f"{n}={getattr(self, n)!r}" for n in _FIELDS] + [
            f"{k}={v!r}" for k, v in self._extra().items()
        ]
        if self._headers:
            parts.append(f"headers={self._headers!r}")
        return f"{type(self).__name__}({', '.join(parts)})"


class SourceRecord(ConnectRecord):
    __slots__ = ("source_offset", "source_partition")

    def __init__(
        self,
        source_partition: Mapping[str, Any] | None = None,
        source_offset: Mapping[str, Any] | None = None,
        topic: str = "",
        kafka_partition: int | None = None,
        key_schema: Schema | None = None,
        key: Any = None,
        value_schema: Schema | None = None,
        value: Any = None,
        timestamp: int | None = None,
        headers: Headers | None = None,
    ) -> None:
        # The base initialiser, inlined: sources make one SourceRecord per record.
        self.topic = topic
        self.kafka_partition = kafka_partition
        self.key_schema = key_schema
        self.key = key
        self.value_schema = value_schema
        self.value = value
        self.timestamp = timestamp
        self._headers = headers
        self.source_partition = source_partition
        self.source_offset = source_offset

    def _extra(self) -> dict[str, Any]:
        return {"source_partition": self.source_partition, "source_offset": self.source_offset}

    def _copy_extra(self, copy: Self) -> None:
        copy.source_partition = self.source_partition
        copy.source_offset = self.source_offset


class SinkRecord(ConnectRecord):
    __slots__ = (
        "kafka_offset",
        "original_kafka_offset",
        "original_kafka_partition",
        "original_topic",
        "timestamp_type",
    )

    def __init__(
        self,
        topic: str,
        kafka_partition: int | None = None,
        key_schema: Schema | None = None,
        key: Any = None,
        value_schema: Schema | None = None,
        value: Any = None,
        timestamp: int | None = None,
        headers: Headers | None = None,
        kafka_offset: int = -1,
        timestamp_type: str = TimestampType.NO_TIMESTAMP_TYPE,
        original_topic: str | None = None,
        original_kafka_partition: int | None = None,
        original_kafka_offset: int | None = None,
    ) -> None:
        # The base initialiser, inlined: one SinkRecord is made per consumed message.
        self.topic = topic
        self.kafka_partition = kafka_partition
        self.key_schema = key_schema
        self.key = key
        self.value_schema = value_schema
        self.value = value
        self.timestamp = timestamp
        self._headers = headers
        self.kafka_offset = kafka_offset
        self.timestamp_type = timestamp_type
        # Where the record was read, whatever transformations later change (topic routing).
        self.original_topic = topic if original_topic is None else original_topic
        self.original_kafka_partition = (
            kafka_partition if original_kafka_partition is None else original_kafka_partition
        )
        self.original_kafka_offset = kafka_offset if original_kafka_offset is None else original_kafka_offset

    def _extra(self) -> dict[str, Any]:
        return {
            "kafka_offset": self.kafka_offset,
            "timestamp_type": self.timestamp_type,
            "original_topic": self.original_topic,
            "original_kafka_partition": self.original_kafka_partition,
            "original_kafka_offset": self.original_kafka_offset,
        }

    def _copy_extra(self, copy: Self) -> None:
        copy.kafka_offset = self.kafka_offset
        copy.timestamp_type = self.timestamp_type
        copy.original_topic = self.original_topic
        copy.original_kafka_partition = self.original_kafka_partition
        copy.original_kafka_offset = self.original_kafka_offset

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.kafka_partition if self.kafka_partition is not None else -1)

    @property
    def where(self) -> str:
        """``topic-partition@offset``: how error messages name the record."""
        return f"{self.topic}-{self.kafka_partition}@{self.kafka_offset}"
