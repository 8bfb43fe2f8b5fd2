"""Readers of JSON values as Connect values, built once per schema by ``JsonConverter``:
arrays, maps (from objects or from pairs), structs and the logical types."""

from __future__ import annotations

import base64
import datetime
import decimal
import operator
from collections.abc import Callable
from itertools import repeat
from typing import Any

import msgspec
import orjson

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
    except ValueError:  # binascii.Error, or a character beyond ASCII
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
                except (ValueError, DataException):  # binascii.Error, or a character beyond ASCII
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


# -- columns -----------------------------------------------------------------------------------------------

#: A reader of a column of JSON values (one field of many records): exactly
#: ``list(map(read, column))`` of the field's reader ``read``, or its ``JsonProblem`` (not
#: necessarily the same one: the caller reads the records one by one again to report).
ColumnReader = Callable[[list[Any]], list[Any]]

_NONE = type(None)


def each(read: Reader) -> ColumnReader:
    """The column reader that calls ``read`` on each value."""

    def read_each(column: list[Any]) -> list[Any]:
        return list(map(read, column))

    return read_each


def column_reader(schema: Schema, read: Reader, null_is_none: bool) -> ColumnReader:
    """A column reader for ``schema``'s values that checks a column of the usual values at
    once, by the set of their types and the range of the integers, and returns it as it
    is; a column holding anything else is read value by value. ``read`` is the schema's
    reader; ``null_is_none``: it reads a JSON null as None (an optional field without a
    default to put in its place). ``benchmarks/jdbc_sink.py`` pays for this: a reader call
    per field and record was two fifths of what a sink task spent reading its records."""
    t, name = schema.type, schema.name
    usual: type
    if name is None and t is Type.STRING:
        usual = str
    elif name is None and t in INT_RANGES:
        usual = int  # not bool: a set of types holding bool is not {int}
    elif name is None and t is Type.FLOAT64:
        usual = float
    elif name is None and t is Type.BOOLEAN:
        usual = bool
    elif name == Timestamp.LOGICAL_NAME and t is Type.INT64:
        return _timestamp_column(schema, read)
    else:
        return each(read)
    with_nulls = {usual, _NONE} if null_is_none else {usual}
    lo, hi = INT_RANGES.get(t, (None, None))

    def read_column(column: list[Any]) -> list[Any]:
        types = set(map(type, column))
        if types <= with_nulls:
            if usual is not int:
                return column
            present = column if _NONE not in types else [v for v in column if v is not None]
            if not present or (lo <= min(present) and max(present) <= hi):
                return column
        return list(map(read, column))

    return read_column


#: Instants (in milliseconds) within 2**32 seconds of the epoch (1833 to 2106): there the
#: double nearest to ``v / 1000`` is within 0.24 us of the instant (half a unit in the last
#: place), so ``datetime.fromtimestamp``'s rounding to microseconds gives the exact
#: millisecond: the datetime ``epoch + timedelta(milliseconds=v)`` gives.
_FLOAT_EXACT_MS = 2**32 * 1000


def _timestamp_column(schema: Schema, read: Reader) -> ColumnReader:
    Timestamp.to_logical(schema, 0)  # the schema is a Timestamp's: checked once, not per value
    epoch, delta, add = _EPOCH, datetime.timedelta, operator.add
    from_seconds, utc = datetime.datetime.fromtimestamp, _EPOCH.tzinfo

    def read_timestamps(column: list[Any]) -> list[Any]:
        if set(map(type, column)) == {int}:
            first, last = min(column), max(column)
            if first > -_FLOAT_EXACT_MS and last < _FLOAT_EXACT_MS:
                # Half the time of the timedelta sum below, mapped in C (benchmarks/jdbc_sink.py).
                return list(map(from_seconds, map(operator.truediv, column, repeat(1000)), repeat(utc)))
            if first >= _INT64_MIN and last <= _INT64_MAX:
                try:
                    # epoch + timedelta(milliseconds=v), as the reader's fast path, mapped in C.
                    return list(map(add, repeat(epoch), map(delta, repeat(0), repeat(0), repeat(0), column)))
                except OverflowError:
                    pass  # out of datetime's range: read says so
        return list(map(read, column))

    return read_timestamps


def struct_column_reader(
    schema: Schema, fields: list[tuple[str, ColumnReader]], read: Reader
) -> ColumnReader:
    """A column reader of structs: a column of JSON objects is read a field at a time (each
    field's values pulled out in C, then read by the field's column reader) and the structs
    made from the rows; anything else (a null among them, a struct without fields) by
    ``read``, the struct's reader."""

    def read_structs(column: list[Any]) -> list[Any]:
        if not fields or set(map(type, column)) != {dict}:
            return list(map(read, column))
        get = dict.get
        return _structs(
            schema, [read_field(list(map(get, column, repeat(name)))) for name, read_field in fields]
        )

    return read_structs


def _structs(schema: Schema, columns: list[list[Any]]) -> list[Struct]:
    """The structs of ``schema`` whose field values are the rows of ``columns`` (read)."""
    return list(map(Struct._from_values, repeat(schema), map(list, zip(*columns, strict=True))))


# -- payload texts ---------------------------------------------------------------------------------------

#: A reader of payloads still in JSON text: what their column reader gives them parsed.
TextsReader = Callable[[list[bytes]], list[Any]]
_DECODE_ERRORS = (msgspec.DecodeError, RecursionError)


def texts_reader(read_column: ColumnReader) -> TextsReader:
    loads = orjson.loads

    def read_texts(texts: list[bytes]) -> list[Any]:
        return read_column(list(map(loads, texts)))

    return read_texts


def struct_texts_reader(schema: Schema, fields: list[ColumnReader], read_column: ColumnReader) -> TextsReader:
    """Payload texts of a struct schema decoded by msgspec into objects of a class made for
    the schema (one attribute per field, None when absent), which is what orjson's dicts and
    ``dict.get`` give for those fields in about half the time (0.6 us a record of
    ``benchmarks/jdbc_sink.py`` against 1.2, parsing and pulling the fields out); a text
    msgspec refuses (not an object, too deep, malformed) sends the batch through orjson and
    ``read_column``. msgspec refuses what orjson refuses and reads the rest alike, save
    integers beyond 64 bits, which orjson reads as floats: every reader reads such a value
    as it reads the float (or refuses both), so the result is the same."""
    names = [f.name for f in schema.fields]
    attributes = [f"f{i}" for i in range(len(names))]
    fallback = texts_reader(read_column)
    try:
        payload = msgspec.defstruct(
            "Payload",
            [(a, Any, None) for a in attributes],
            rename=dict(zip(attributes, names, strict=True)),
            gc=False,  # holds what JSON parses to, which makes no reference cycle
        )
    except (ValueError, TypeError):
        return fallback  # a field name msgspec does not match (quotes, backslashes, controls)
    decode = msgspec.json.Decoder(payload).decode
    getters = [operator.attrgetter(a) for a in attributes]

    def read_texts(texts: list[bytes]) -> list[Any]:
        try:
            objects = list(map(decode, texts))
        except _DECODE_ERRORS:
            return fallback(texts)
        return _structs(
            schema,
            [read_field(list(map(get, objects))) for get, read_field in zip(getters, fields, strict=True)],
        )

    return read_texts
