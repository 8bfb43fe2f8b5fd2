"""Index mappings from Connect schemas."""

from __future__ import annotations

from connect.api import Date, Decimal, Schema, SchemaBuilder, Time, Timestamp
from connectors.elasticsearch.mapping import index_mapping

KEYWORD = {"keyword": {"type": "keyword", "ignore_above": 256}}


def test_a_struct_schema_maps_every_type() -> None:
    inner = SchemaBuilder.struct().field("lat", Schema.FLOAT64_SCHEMA).build()
    schema = (
        SchemaBuilder.struct()
        .field("b", Schema.INT8_SCHEMA)
        .field("s16", Schema.INT16_SCHEMA)
        .field("i", Schema.INT32_SCHEMA)
        .field("l", Schema.INT64_SCHEMA)
        .field("f", Schema.FLOAT32_SCHEMA)
        .field("d", Schema.FLOAT64_SCHEMA)
        .field("ok", Schema.BOOLEAN_SCHEMA)
        .field("text", Schema.STRING_SCHEMA)
        .field("raw", Schema.BYTES_SCHEMA)
        .field("amount", Decimal.schema(2))
        .field("day", Date.builder().build())
        .field("at", Time.builder().build())
        .field("ts", Timestamp.builder().build())
        .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
        .field("counts", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).build())
        .field("by_id", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build())
        .field("place", inner)
        .build()
    )
    assert index_mapping(schema) == {
        "properties": {
            "b": {"type": "byte"},
            "s16": {"type": "short"},
            "i": {"type": "integer"},
            "l": {"type": "long"},
            "f": {"type": "float"},
            "d": {"type": "double"},
            "ok": {"type": "boolean"},
            "text": {"type": "text", "fields": KEYWORD},
            "raw": {"type": "binary"},
            "amount": {"type": "double"},
            "day": {"type": "date"},
            "at": {"type": "date"},
            "ts": {"type": "date"},
            "tags": {"type": "text", "fields": KEYWORD},
            "counts": {"type": "object"},
            "by_id": {
                "properties": {"key": {"type": "integer"}, "value": {"type": "text", "fields": KEYWORD}}
            },
            "place": {"properties": {"lat": {"type": "double"}}},
        }
    }


def test_non_compact_maps_and_non_struct_schemas() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("m", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.BOOLEAN_SCHEMA).build())
        .build()
    )
    assert index_mapping(schema, compact_map_entries=False) == {
        "properties": {
            "m": {"properties": {"key": {"type": "text", "fields": KEYWORD}, "value": {"type": "boolean"}}}
        }
    }
    assert index_mapping(None) is None
    assert index_mapping(Schema.STRING_SCHEMA) is None
