"""Kafka's ``ByteArrayConverter``: record bytes passed through unchanged."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, ClassVar

from connect.api.converter import ConvertedBatch, Converter, HeaderConverter
from connect.api.data import Schema, SchemaAndValue, Type
from connect.api.errors import DataException
from connect.api.headers import Headers

__all__ = ["ByteArrayConverter"]

_PASSED: frozenset[type] = frozenset((bytes, type(None)))  # value types a batch passes as they are


class ByteArrayConverter(Converter, HeaderConverter):
    """Passes ``bytes`` (or ``bytearray``/``memoryview``) through; reads values as optional BYTES."""

    aliases: ClassVar[tuple[str, ...]] = ("org.apache.kafka.connect.converters.ByteArrayConverter",)

    def configure(self, configs: Mapping[str, Any], is_key: bool | None = None) -> None:
        """No settings."""

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        if schema is not None and schema.type is not Type.BYTES:
            raise DataException(f"Invalid schema type for ByteArrayConverter: {schema.type.name}")
        if value is None:
            return None
        if isinstance(value, bytes):
            return value
        if isinstance(value, (bytearray, memoryview)):
            return bytes(value)
        raise DataException(
            f"ByteArrayConverter is not compatible with objects of type {type(value).__name__}"
        )

    def from_connect_batch(
        self, topic: str, schemas: Sequence[Schema | None], values: Sequence[Any]
    ) -> list[bytes | None]:
        # Bytes of BYTES schemas (a copy of another topic) pass as they are, checked once
        # per batch in C rather than converted value by value: about 1 us a record of
        # benchmarks/mirror.py. Anything else goes value by value, which raises as it should.
        # Mostly one schema object for the whole batch: list.count compares by identity
        # first, in C (a dict of distinct ids cost ~160 ns a value; this under 1 ns).
        if schemas and schemas.count(schemas[0]) == len(schemas):
            distinct: Collection[Schema | None] = (schemas[0],)
        else:
            distinct = dict(zip(map(id, schemas), schemas, strict=True)).values()
        if all(s is None or s.type is Type.BYTES for s in distinct) and set(map(type, values)) <= _PASSED:
            return list(values)
        return super().from_connect_batch(topic, schemas, values)

    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        return SchemaAndValue(Schema.OPTIONAL_BYTES_SCHEMA, data)

    def to_connect_batch(self, topic: str, data: Sequence[bytes | None]) -> ConvertedBatch:
        return ConvertedBatch([Schema.OPTIONAL_BYTES_SCHEMA] * len(data), list(data))

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        if type(value) is bytes and (schema is None or schema.type is Type.BYTES):
            return value  # the common case, without the general checks (benchmarks/mirror.py)
        return self.from_connect_data(topic, schema, value)

    def from_connect_header_rows(
        self, topic: str, schema: Schema | None, rows: Sequence[Sequence[tuple[str, Any]] | None]
    ) -> Sequence[Sequence[tuple[str, Any]] | None]:
        """``from_connect_header`` for every value of a column of records' header pairs, all
        of ``schema`` (a ``SourceRecordBatch``'s ``headers``): the pairs as the producer
        takes them. Bytes (or null) under a BYTES schema, what a copy of another topic
        holds, are the pairs as they are, checked in one pass instead of a call and a
        tuple per header (``benchmarks/mirror.py``); anything else value by value."""
        if (schema is None or schema.type is Type.BYTES) and all(
            v is None or type(v) is bytes for pairs in rows if pairs for _, v in pairs
        ):
            return rows
        return super().from_connect_header_rows(topic, schema, rows)

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        return self.to_connect_data(topic, value)
