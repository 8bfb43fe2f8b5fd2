"""Index mappings from Connect schemas (``schema.ignore=false``). Pure.

The types follow how ``documents`` writes values: Decimal as a double (Elasticsearch
has no exact decimal that holds every precision; Confluent's sink does the same), Date
and Timestamp as dates, Time as a date holding milliseconds since midnight (there is no
time-of-day type), bytes as base64 ``binary``, strings as ``text`` with a ``keyword``
sub-field for sorting and aggregations (what dynamic mapping would give), maps with
string keys as objects and other maps as arrays of ``{key, value}`` objects.
"""

from __future__ import annotations

from typing import Any

from connect.api import Date, Decimal, Schema, Time, Timestamp, Type

_PRIMITIVES = {
    Type.INT8: "byte",
    Type.INT16: "short",
    Type.INT32: "integer",
    Type.INT64: "long",
    Type.FLOAT32: "float",
    Type.FLOAT64: "double",
    Type.BOOLEAN: "boolean",
    Type.BYTES: "binary",
}
_LOGICAL = {
    Decimal.LOGICAL_NAME: "double",
    Date.LOGICAL_NAME: "date",
    Time.LOGICAL_NAME: "date",
    Timestamp.LOGICAL_NAME: "date",
}
_TEXT = {"type": "text", "fields": {"keyword": {"type": "keyword", "ignore_above": 256}}}


def index_mapping(schema: Schema | None, compact_map_entries: bool = True) -> dict[str, Any] | None:
    """The ``mappings`` body for an index of records with this value schema, or None when
    the schema is not a struct (nothing to declare; Elasticsearch maps dynamically)."""
    if schema is None or schema.type != Type.STRUCT:
        return None
    return _object(schema, compact_map_entries)


def _object(schema: Schema, compact: bool) -> dict[str, Any]:
    return {"properties": {f.name: field_mapping(f.schema, compact) for f in schema.fields}}


def field_mapping(schema: Schema, compact: bool = True) -> dict[str, Any]:
    if schema.name in _LOGICAL:
        return {"type": _LOGICAL[schema.name]}
    t = schema.type
    if t in _PRIMITIVES:
        return {"type": _PRIMITIVES[t]}
    if t == Type.STRING:
        return {"type": "text", "fields": {"keyword": dict(_TEXT["fields"]["keyword"])}}  # type: ignore[index]
    if t == Type.ARRAY:
        assert schema.value_schema is not None
        return field_mapping(schema.value_schema, compact)  # Elasticsearch arrays are repeated values
    if t == Type.MAP:
        key, value = schema.key_schema, schema.value_schema
        assert key is not None and value is not None
        if compact and key.type == Type.STRING:
            return {"type": "object"}  # keys are data, not a fixed set of fields: mapped as they come
        return {"properties": {"key": field_mapping(key, compact), "value": field_mapping(value, compact)}}
    if t == Type.STRUCT:
        return _object(schema, compact)
    raise ValueError(f"no Elasticsearch mapping for schema type {t}")
