"""Kafka's number converters: fixed-size big-endian encodings, as Kafka's serializers write them.

========================  =====  ========  ===========================================
converter                 bytes  schema    Java class
========================  =====  ========  ===========================================
``ShortConverter``        2      INT16     ``org.apache.kafka.connect.converters.ShortConverter``
``IntegerConverter``      4      INT32     ``org.apache.kafka.connect.converters.IntegerConverter``
``LongConverter``         8      INT64     ``org.apache.kafka.connect.converters.LongConverter``
``FloatConverter``        4      FLOAT32   ``org.apache.kafka.connect.converters.FloatConverter``
``DoubleConverter``       8      FLOAT64   ``org.apache.kafka.connect.converters.DoubleConverter``
========================  =====  ========  ===========================================

Values read back carry the optional schema of their type; null stays null.
"""

from __future__ import annotations

import struct
from abc import abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from connect.api.converter import Converter, HeaderConverter
from connect.api.data import INT_RANGES, Schema, SchemaAndValue
from connect.api.errors import DataException
from connect.api.headers import Headers

__all__ = ["DoubleConverter", "FloatConverter", "IntegerConverter", "LongConverter", "ShortConverter"]


class NumberConverter(Converter, HeaderConverter):
    """Shared implementation (abstract); subclasses set ``codec`` (the struct format) and ``schema``."""

    schema: ClassVar[Schema]

    @property
    @abstractmethod
    def codec(self) -> struct.Struct:
        """Big-endian fixed-size encoding of the number."""

    def configure(self, configs: Mapping[str, Any], is_key: bool | None = None) -> None:
        """No settings."""

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        if value is None:
            return None
        name = self.schema.type.name
        int_range = INT_RANGES.get(self.schema.type)
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or (int_range and isinstance(value, float))
        ):
            raise DataException(f"Failed to serialize to {name} (was {type(value).__name__})")
        if int_range is not None and not int_range[0] <= value <= int_range[1]:
            raise DataException(f"Failed to serialize to {name}: {value} is out of range")
        try:
            return self.codec.pack(value)
        except (OverflowError, struct.error) as e:
            raise DataException(f"Failed to serialize to {name}: {e}") from e

    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        if data is None:
            return SchemaAndValue(self.schema, None)
        if len(data) != self.codec.size:
            raise DataException(
                f"Failed to deserialize {self.schema.type.name}: size of data received is {len(data)}, "
                f"not {self.codec.size}"
            )
        return SchemaAndValue(self.schema, self.codec.unpack(data)[0])

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        return self.from_connect_data(topic, schema, value)

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        return self.to_connect_data(topic, value)


class ShortConverter(NumberConverter):
    aliases = ("org.apache.kafka.connect.converters.ShortConverter",)
    codec = struct.Struct(">h")
    schema = Schema.OPTIONAL_INT16_SCHEMA


class IntegerConverter(NumberConverter):
    aliases = ("org.apache.kafka.connect.converters.IntegerConverter",)
    codec = struct.Struct(">i")
    schema = Schema.OPTIONAL_INT32_SCHEMA


class LongConverter(NumberConverter):
    aliases = ("org.apache.kafka.connect.converters.LongConverter",)
    codec = struct.Struct(">q")
    schema = Schema.OPTIONAL_INT64_SCHEMA


class FloatConverter(NumberConverter):
    aliases = ("org.apache.kafka.connect.converters.FloatConverter",)
    codec = struct.Struct(">f")
    schema = Schema.OPTIONAL_FLOAT32_SCHEMA


class DoubleConverter(NumberConverter):
    aliases = ("org.apache.kafka.connect.converters.DoubleConverter",)
    codec = struct.Struct(">d")
    schema = Schema.OPTIONAL_FLOAT64_SCHEMA
