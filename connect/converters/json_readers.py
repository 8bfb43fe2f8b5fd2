"""Readers of JSON values as Connect values, built once per schema by ``JsonConverter``:
arrays, maps (from objects or from pairs), structs and the logical types."""

from __future__ import annotations

import base64
import binascii
import datetime
import decimal
from collections.abc import Callable
from typing import Any

from connect.api.data import (
    INT_RANGES,
    Date,
    Decimal,
    Schema,
    Struct,
    Time,
    Timestamp,
    Type,
)
from connect.api.errors import DataException
from connect.converters.json_errors import JsonProblem, NeedExactNumbers, convert_items, json_type

Reader = Callable[[Any], Any]

_INT64_MIN, _INT64_MAX = INT_RANGES[Type.INT64]
_INT32_MIN, _INT32_MAX = INT_RANGES[Type.INT32]
_EPOCH = Timestamp.to_logical(Timestamp.SCHEMA, 0)


def read_base64(v: Any) -> Any:
    if type(v) is not str:
        raise JsonProblem(f"expected a base64 string for BYTES, got {json_type(v)}")
    try:
        return base64.b64decode(v, validate=True)
    except binascii.Error:
        raise JsonProblem("Invalid bytes field: not valid base64") from None


def array_reader(item: Reader) -> Reader:
    def read_array(v: Any) -> Any:
        if type(v) is not list:
            raise JsonProblem(f"expected a JSON array for ARRAY, got {json_type(v)}")
        return convert_items(item, v)

    return read_array


def map_reader(key_schema: Schema, key: Reader, value: Reader) -> Reader:
    if key_schema.type is Type.STRING:

        def read_object_map(v: Any) -> Any:
            if type(v) is not dict:
                raise JsonProblem(
                    f"Maps with string fields should be encoded as JSON objects, but found {json_type(v)}"
                )
            out = {}
            k = ""
            try:
                for k, x in v.items():
                    out[k] = value(x)
            except JsonProblem as e:
                e.segments.append(f"[{k!r}]")
                raise
            return out

        return read_object_map
    hashable_keys = key_schema.type.is_primitive

    def read_pair_map(v: Any) -> Any:
        if type(v) is not list:
            raise JsonProblem(
                "Maps with non-string fields should be encoded as JSON array of tuples, "
                f"but found {json_type(v)}"
            )
        out = {}
        for i, entry in enumerate(v):
            if type(entry) is not list:
                raise JsonProblem(
                    f"Found invalid map entry instead of array tuple: {json_type(entry)} (entry {i})"
                )
            if len(entry) != 2:
                raise JsonProblem(
                    f"Found invalid map entry, expected length 2 but found: {len(entry)} (entry {i})"
                )
            if not hashable_keys:
                raise JsonProblem(f"Map keys of type {key_schema.type.name} cannot be Python dict keys")
            try:
                k = key(entry[0])
            except JsonProblem as e:
                e.segments.append(f"<key #{i}>")
                raise
            try:
                out[k] = value(entry[1])
            except JsonProblem as e:
                e.segments.append(f"[{k!r}]")
                raise
        return out

    return read_pair_map


def struct_reader(schema: Schema, fields: list[tuple[str, Reader]]) -> Reader:
    def read_struct(v: Any) -> Any:
        if type(v) is not dict:
            raise JsonProblem(f"Structs should be encoded as JSON objects, but found {json_type(v)}")
        values = []
        name = ""
        try:
            for name, read in fields:
                values.append(read(v.get(name)))
        except JsonProblem as e:
            e.segments.append("." + name)
            raise
        return Struct._from_values(schema, values)

    return read_struct


def logical_reader(schema: Schema) -> Reader | None:
    name = schema.name
    if name == Decimal.LOGICAL_NAME:
        Decimal.scale(schema)  # fail early on a bad schema

        def read_decimal(v: Any) -> Any:
            if type(v) is str:
                try:
                    return Decimal.to_logical(schema, base64.b64decode(v, validate=True))
                except (binascii.Error, DataException):
                    raise JsonProblem("Invalid bytes for Decimal field") from None
            if type(v) is int:
                return decimal.Decimal(v)
            if type(v) is decimal.Decimal:
                return v
            if type(v) is float:
                raise NeedExactNumbers
            raise JsonProblem(
                "Invalid type for Decimal, underlying representation should be numeric or bytes "
                f"but was {json_type(v)}"
            )

        return read_decimal
    logical: type[Date] | type[Time] | type[Timestamp]
    if name == Date.LOGICAL_NAME:
        logical, lo, hi = Date, _INT32_MIN, _INT32_MAX
    elif name == Time.LOGICAL_NAME:
        logical, lo, hi = Time, _INT32_MIN, _INT32_MAX
    elif name == Timestamp.LOGICAL_NAME:
        logical, lo, hi = Timestamp, _INT64_MIN, _INT64_MAX
    else:
        return None
    to_logical = logical.to_logical
    label = logical.__name__

    def read_temporal(v: Any) -> Any:
        if type(v) is not int or not lo <= v <= hi:
            raise JsonProblem(
                f"Invalid type for {label}, underlying representation should be integer but was {v!r}"
            )
        try:
            return to_logical(schema, v)
        except DataException as e:
            raise JsonProblem(str(e)) from None

    return read_temporal


def with_fast_path(schema: Schema, read: Reader, optional: bool) -> Reader:
    """``read`` (a field's whole reader: null handling, checks, logical type) preceded by one
    test that takes the usual value of the common types at once, ``read`` being left for the
    rest (and for every error, so messages are the same). One call per value instead of
    two or three: a struct's fields are read once per record."""
    t, name = schema.type, schema.name
    fast: Reader | None = None
    if name is None and t is Type.STRING:

        def fast(v: Any) -> Any:
            return v if type(v) is str else read(v)

    elif name is None and t in INT_RANGES:
        lo, hi = INT_RANGES[t]

        def fast(v: Any) -> Any:
            return v if type(v) is int and lo <= v <= hi else read(v)

    elif name is None and t is Type.FLOAT64:

        def fast(v: Any) -> Any:
            return v if type(v) is float else read(v)

    elif name == Timestamp.LOGICAL_NAME and t is Type.INT64:
        Timestamp.to_logical(schema, 0)  # the schema is a Timestamp's: checked once, not per value
        epoch, delta = _EPOCH, datetime.timedelta

        def fast(v: Any) -> Any:
            if type(v) is int and _INT64_MIN <= v <= _INT64_MAX:
                try:
                    return epoch + delta(milliseconds=v)
                except OverflowError:
                    pass  # out of datetime's range: read says so
            return read(v)

    if fast is None or not optional:
        return fast or read
    required = fast

    def fast_optional(v: Any) -> Any:
        return None if v is None else required(v)

    return fast_optional
