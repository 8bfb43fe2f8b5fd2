"""Kafka's ``ByteArrayConverter``: record bytes passed through unchanged."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from connect.api.converter import ConvertedBatch, Converter, HeaderConverter
from connect.api.data import Schema, SchemaAndValue, Type
from connect.api.errors import DataException
from connect.api.headers import Headers

__all__ = ["ByteArrayConverter"]


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

    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        return SchemaAndValue(Schema.OPTIONAL_BYTES_SCHEMA, data)

    def to_connect_batch(self, topic: str, data: Sequence[bytes | None]) -> ConvertedBatch:
        return ConvertedBatch([Schema.OPTIONAL_BYTES_SCHEMA] * len(data), list(data))

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        return self.from_connect_data(topic, schema, value)

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        return self.to_connect_data(topic, value)
