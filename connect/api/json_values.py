"""Connect values as plain JSON values (dicts, lists, strings, numbers), for sinks that write
JSON documents of their own: Elasticsearch documents, JSON lines objects in S3.

Two choices differ between destinations and are parameters:

- ``decimals``: ``"number"`` (a JSON number; what a search engine or a reader wants) or
  ``"base64"`` (the unscaled two's-complement bytes, Kafka's JsonConverter default and so
  what Confluent's S3 JSON files hold);
- ``temporals``: ``"iso"`` (Date as ``2024-02-29``, Timestamp as ``...T13:45:30.123Z``) or
  ``"epoch"`` (Kafka's JsonConverter: Date as days, Timestamp as milliseconds). Time is
  milliseconds since midnight either way: JSON has no time-of-day and neither do most
  readers.

Maps with string keys become objects (or, with ``compact_maps=False`` and always for other
keys, arrays of ``{"key": k, "value": v}``), bytes become base64 strings. Pure.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
from typing import Any, Literal

from connect.api.data import Date, Decimal, Schema, Struct, Time, Timestamp, Type

Decimals = Literal["number", "base64"]
Temporals = Literal["iso", "epoch"]

_EPOCH_DAY = dt.date(1970, 1, 1)


class JsonValues:
    """Converts values; one instance per destination's choices."""

    def __init__(
        self, decimals: Decimals = "number", temporals: Temporals = "iso", compact_maps: bool = True
    ) -> None:
        self.decimals = decimals
        self.temporals = temporals
        self.compact_maps = compact_maps

    def struct(self, value: Struct) -> dict[str, Any]:
        schema = value.schema
        return {f.name: self.value(f.schema, v) for f, v in zip(schema.fields, value.values(), strict=True)}

    def value(self, schema: Schema, value: Any) -> Any:
        if value is None:
            return None
        name = schema.name
        if name is not None:
            if name == Decimal.LOGICAL_NAME:
                if self.decimals == "number":
                    return float(value)
                return base64.b64encode(Decimal.from_logical(schema, value)).decode()
            if name == Time.LOGICAL_NAME and isinstance(value, dt.time):
                return (
                    value.hour * 3600 + value.minute * 60 + value.second
                ) * 1000 + value.microsecond // 1000
            if name == Date.LOGICAL_NAME and isinstance(value, dt.date) and self.temporals == "epoch":
                return (value - _EPOCH_DAY).days
            if (
                name == Timestamp.LOGICAL_NAME
                and isinstance(value, dt.datetime)
                and self.temporals == "epoch"
            ):
                return Timestamp.from_logical(schema, value)
            # iso: date and datetime pass through; orjson writes them in ISO-8601.
        t = schema.type
        if t == Type.STRUCT:
            return self.struct(value)
        if t == Type.ARRAY:
            assert schema.value_schema is not None
            return [self.value(schema.value_schema, v) for v in value]
        if t == Type.MAP:
            return self.map(schema, value)
        if t == Type.BYTES:
            return base64.b64encode(value).decode()
        return value

    def map(self, schema: Schema, value: dict[Any, Any]) -> Any:
        key_schema, value_schema = schema.key_schema, schema.value_schema
        assert key_schema is not None and value_schema is not None
        if self.compact_maps and key_schema.type == Type.STRING:
            return {k: self.value(value_schema, v) for k, v in value.items()}
        return [
            {"key": self.value(key_schema, k), "value": self.value(value_schema, v)} for k, v in value.items()
        ]

    def schemaless(self, value: Any) -> Any:
        """``default=`` for orjson: what schemaless values may hold that JSON does not."""
        if isinstance(value, decimal.Decimal):
            return float(value) if self.decimals == "number" else str(value)
        if isinstance(value, bytes | bytearray):
            return base64.b64encode(value).decode()
        if isinstance(value, Struct):
            return self.struct(value)
        raise TypeError(f"{type(value).__name__} is not JSON serializable")
