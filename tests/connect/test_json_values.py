"""connect.api.json_values: Connect values as JSON, in a destination's chosen representation."""

from __future__ import annotations

import base64
import datetime as dt
import decimal

import orjson

from connect.api import Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp
from connect.api.json_values import JsonValues

SCHEMA = (
    SchemaBuilder.struct()
    .field("amount", Decimal.schema(2))
    .field("day", Date.builder().build())
    .field("at", Time.builder().build())
    .field("ts", Timestamp.builder().build())
    .field("raw", Schema.BYTES_SCHEMA)
    .field("m", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build())
    .build()
)
VALUE = (
    Struct(SCHEMA)
    .put("amount", decimal.Decimal("-1.25"))
    .put("day", dt.date(1970, 1, 11))
    .put("at", dt.time(0, 0, 1, 500_000))
    .put("ts", dt.datetime(1970, 1, 1, 0, 0, 2, tzinfo=dt.UTC))
    .put("raw", b"\xff")
    .put("m", {"a": 1})
)


def test_kafka_json_converter_representation() -> None:
    """What Kafka's JsonConverter (schemas disabled, decimals in base64) writes."""
    out = JsonValues("base64", "epoch").struct(VALUE)
    assert out == {
        "amount": base64.b64encode((-125).to_bytes(1, "big", signed=True)).decode(),
        "day": 10,
        "at": 1500,
        "ts": 2000,
        "raw": "/w==",
        "m": {"a": 1},
    }


def test_numbers_and_iso_dates() -> None:
    values = JsonValues("number", "iso", compact_maps=False)
    out = orjson.loads(orjson.dumps(values.struct(VALUE), option=orjson.OPT_UTC_Z))
    assert out == {
        "amount": -1.25,
        "day": "1970-01-11",
        "at": 1500,
        "ts": "1970-01-01T00:00:02Z",
        "raw": "/w==",
        "m": [{"key": "a", "value": 1}],
    }


def test_schemaless_defaults() -> None:
    values = JsonValues("number")
    assert orjson.loads(
        orjson.dumps({"d": decimal.Decimal("2.5"), "b": b"hi"}, default=values.schemaless)
    ) == {
        "d": 2.5,
        "b": "aGk=",
    }
