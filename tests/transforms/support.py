"""Records and configured transformations for the SMT tests."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from connect.api import Headers, Schema, SinkRecord, SourceRecord, TimestampType, Transformation

T = TypeVar("T", bound=Transformation[Any])

TIMESTAMP = 1_700_000_000_000  # 2023-11-14T22:13:20Z


def sink(
    value: Any = None,
    value_schema: Schema | None = None,
    *,
    key: Any = None,
    key_schema: Schema | None = None,
    topic: str = "test",
    partition: int | None = 0,
    offset: int = 42,
    timestamp: int | None = TIMESTAMP,
    headers: Headers | None = None,
) -> SinkRecord:
    return SinkRecord(
        topic,
        partition,
        key_schema,
        key,
        value_schema,
        value,
        timestamp,
        headers,
        kafka_offset=offset,
        timestamp_type=TimestampType.CREATE_TIME,
    )


def source(
    value: Any = None,
    value_schema: Schema | None = None,
    *,
    key: Any = None,
    key_schema: Schema | None = None,
    topic: str = "test",
    partition: int | None = None,
    timestamp: int | None = TIMESTAMP,
    headers: Headers | None = None,
) -> SourceRecord:
    return SourceRecord(
        {"source": "s"},
        {"position": 7},
        topic,
        partition,
        key_schema,
        key,
        value_schema,
        value,
        timestamp,
        headers,
    )


def configured(cls: type[T], configs: Mapping[str, Any] | None = None, **more: Any) -> T:
    """An instance of ``cls`` configured with ``configs`` (Kafka keys) and ``more``
    (keyword names with ``_`` for ``.``)."""
    settings = dict(configs or {})
    settings.update({k.replace("_", "."): v for k, v in more.items()})
    t = cls()
    t.configure(settings)
    return t
