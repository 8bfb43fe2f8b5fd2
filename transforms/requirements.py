"""What a transformation requires of a record, and the errors when a record falls short.

Kafka's SMTs refuse a record that does not fit ("Only Struct objects supported for
[field insertion], found: java.lang.String"); ours say the same and add which
transformation refused and which record it was, so a dead letter queue entry or a
FAILED task's trace points at the data::

    InsertField$Value: Only Struct objects supported for [field insertion], found: str
    (topic 'orders', partition 0, offset 12)

The errors are ``DataException``: ``errors.tolerance`` and the dead letter queue
handle them like any conversion error.
"""

from __future__ import annotations

from typing import Any

from connect.api import ConnectRecord, DataException, SinkRecord, SourceRecord, Struct


def transform_name(transform: object) -> str:
    """Kafka's short name of a transformation (``InsertField$Value``), else its class name."""
    aliases = getattr(type(transform), "aliases", ())
    if aliases:
        return str(aliases[0]).rsplit(".", 1)[-1]
    return type(transform).__name__


def where(record: ConnectRecord) -> str:
    """The record's coordinates, as far as it has them."""
    parts = [f"topic {record.topic!r}"]
    if record.kafka_partition is not None:
        parts.append(f"partition {record.kafka_partition}")
    if isinstance(record, SinkRecord):
        parts.append(f"offset {record.kafka_offset}")
    elif isinstance(record, SourceRecord) and record.source_offset is not None:
        parts.append(f"source partition {record.source_partition}, source offset {record.source_offset}")
    return ", ".join(parts)


def type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


class RecordError(DataException):
    """A record a transformation cannot handle; the message names both."""


def record_error(transform: object, record: ConnectRecord, message: str) -> RecordError:
    """A DataException naming the transformation and the record."""
    return RecordError(f"{transform_name(transform)}: {message} ({where(record)})")


def require_struct(transform: object, record: ConnectRecord, value: Any, purpose: str) -> Struct:
    if not isinstance(value, Struct):
        raise record_error(
            transform, record, f"Only Struct objects supported for [{purpose}], found: {type_name(value)}"
        )
    return value


def require_map(transform: object, record: ConnectRecord, value: Any, purpose: str) -> dict[Any, Any]:
    if not isinstance(value, dict):
        raise record_error(
            transform,
            record,
            f"Only Map objects supported in absence of schema for [{purpose}], found: {type_name(value)}",
        )
    return value


def require_sink_record(transform: object, record: ConnectRecord, purpose: str) -> SinkRecord:
    if not isinstance(record, SinkRecord):
        raise record_error(
            transform, record, f"Only SinkRecord supported for [{purpose}], found: {type(record).__name__}"
        )
    return record
