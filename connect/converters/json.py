"""Kafka's ``JsonConverter``: the ``{"schema":...,"payload":...}`` envelope, byte-compatible.

Writes exactly the bytes Kafka's converter (Jackson) writes for the same data:
schema nodes with Kafka's key order, doubles and floats formatted like Java's
``Double.toString``/``Float.toString``, bytes and Decimals as base64 (or Decimals
as exact JSON numbers with ``decimal.format=NUMERIC``), no whitespace. Reads
anything Kafka's converter writes.

Configs (``key.converter.*``/``value.converter.*`` without the prefix; values may
be strings as they come from ``.properties`` files):

- ``schemas.enable`` (true): wrap values in the envelope; when false, write and
  read bare JSON payloads and infer values without schemas.
- ``schemas.cache.size`` (1000): how many schemas to keep, each way.
- ``decimal.format`` (BASE64): ``BASE64`` or ``NUMERIC``.
- ``replace.null.with.default`` (true): a null field with a default is written
  (and read) as the default.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import datetime
import decimal
import functools
import json
import math
import re
import struct
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, ClassVar

import msgspec
import orjson

from connect.api.converter import ConvertedBatch, Converter, HeaderConverter
from connect.api.data import (
    INT_RANGES,
    Date,
    Decimal,
    Field,
    Parameters,
    Schema,
    SchemaAndValue,
    Struct,
    Time,
    Timestamp,
    Type,
    _struct_schema_matches,
)
from connect.api.errors import ConnectException, DataException
from connect.api.headers import Headers
from connect.api.record_columns import StructColumn

__all__ = ["JsonConverter", "format_double", "format_float", "to_float32"]

ENVELOPE_ERROR = (
    'JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain additional '
    "fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter "
    "configuration."
)

_JSON_TYPE_NAMES: dict[Type, str] = {
    Type.BOOLEAN: "boolean",
    Type.INT8: "int8",
    Type.INT16: "int16",
    Type.INT32: "int32",
    Type.INT64: "int64",
    Type.FLOAT32: "float",
    Type.FLOAT64: "double",
    Type.BYTES: "bytes",
    Type.STRING: "string",
    Type.ARRAY: "array",
    Type.MAP: "map",
    Type.STRUCT: "struct",
}
_TYPES_BY_JSON_NAME = {v: k for k, v in _JSON_TYPE_NAMES.items()}
_INT64_MIN, _INT64_MAX = INT_RANGES[Type.INT64]
_INT32_MIN, _INT32_MAX = INT_RANGES[Type.INT32]


# -- Java number formatting --------------------------------------------------------------------------------

_F32 = struct.Struct(">f")
_DATETIME = datetime.datetime
_LOGICAL_WRITER_NAMES = (Decimal.LOGICAL_NAME, Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME)
_UTC = datetime.UTC
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_EXACT = decimal.Context(prec=2000)


def to_float32(x: float) -> float:
    """Round a float to the nearest 32-bit float (infinity when out of range), as Java's ``(float)`` cast."""
    try:
        result: float = _F32.unpack(_F32.pack(x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)
    return result


def _sci_digits(text: str) -> tuple[str, int]:
    """Significant digits of a decimal literal and the exponent of its first digit."""
    mantissa, _, exp = text.lower().partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    digits = int_part + frac_part
    stripped = digits.lstrip("0")
    exponent = len(int_part) + (int(exp) if exp else 0) - (len(digits) - len(stripped)) - 1
    return stripped.rstrip("0") or "0", exponent


def _java_digits(x: float, shortest: str, round_trips: Callable[[str], bool]) -> tuple[str, int]:
    digits, exponent = _sci_digits(shortest)
    if len(digits) == 1:
        # Java (JDK 19+) prefers a 2-digit decimal over the shortest 1-digit one when it is closer
        # to the exact binary value (so Double.MIN_VALUE prints as 4.9E-324, not 5E-324).
        two = f"{x:.1e}"
        d2, e2 = _sci_digits(two)
        if len(d2) == 2 and round_trips(two):
            exact = decimal.Decimal(x)
            one = decimal.Decimal(f"{digits}e{exponent}")
            if _EXACT.abs(_EXACT.subtract(decimal.Decimal(two), exact)) < _EXACT.abs(
                _EXACT.subtract(one, exact)
            ):
                return d2, e2
    return digits, exponent


def _java_layout(negative: bool, digits: str, exponent: int) -> str:
    if -3 <= exponent < 7:
        if exponent >= 0:
            text = f"{digits[: exponent + 1].ljust(exponent + 1, '0')}.{digits[exponent + 1 :] or '0'}"
        else:
            text = "0." + "0" * (-exponent - 1) + digits
    else:
        text = f"{digits[0]}.{digits[1:] or '0'}E{exponent}"
    return "-" + text if negative else text


def _special(x: float) -> str | None:
    if x != x:
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    return None


def format_double(x: float) -> str:
    """Java's ``Double.toString(x)`` (shortest round-trip digits, as JDK 19+)."""
    if 1e-3 <= x < 1e7 or -1e7 < x <= -1e-3:
        # Where Java writes plain decimals, Python's repr has the same shortest digits in
        # the same layout (the 2-digit preference of _java_digits only concerns subnormals).
        return repr(x)
    special = _special(x)
    if special is not None:
        return special
    ax = abs(x)
    digits, exponent = _java_digits(ax, repr(ax), lambda s: float(s) == ax)
    return _java_layout(x < 0, digits, exponent)


def format_float(x: float) -> str:
    """Java's ``Float.toString((float) x)``: shortest digits that identify the 32-bit float."""
    x = to_float32(x)
    special = _special(x)
    if special is not None:
        return special
    ax = abs(x)
    shortest = ""
    for precision in range(9):
        shortest = f"{ax:.{precision}e}"
        if to_float32(float(shortest)) == ax:
            break
    digits, exponent = _java_digits(ax, shortest, lambda s: to_float32(float(s)) == ax)
    return _java_layout(x < 0, digits, exponent)


# -- errors with paths -------------------------------------------------------------------------------------


class _Problem(Exception):
    """Internal: a conversion problem; containers add path segments while it propagates."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.segments: list[str] = []

    def message(self) -> str:
        path = "".join(reversed(self.segments)).lstrip(".")
        return f'{self.problem} (at "{path}")' if path else self.problem


class _NeedExactNumbers(Exception):
    """Internal: a Decimal payload was parsed as a binary float; re-parse with exact decimals."""


def _json_type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float, decimal.Decimal)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


def _reject_constant(name: str) -> Any:
    raise ValueError(f"Non-standard JSON token {name}")


def _plain(v: Any) -> Any:
    """Schemaless values from the exact parser: decimals back to floats, like the fast path."""
    if isinstance(v, decimal.Decimal):
        return float(v)
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


# orjson escapes control characters as \u001f, Jackson as \u001F. Only genuine escapes (preceded by an even
# number of backslashes) are rewritten.
_LOWER_HEX_ESCAPE = re.compile(rb"(?<!\\)((?:\\\\)*)\\u00([01][0-9a-f])")


def _jackson_escapes(out: bytes) -> bytes:
    if b"\\u00" not in out:
        return out
    return _LOWER_HEX_ESCAPE.sub(lambda m: m.group(1) + b"\\u00" + m.group(2).upper(), out)


def _b64(v: bytes | bytearray | memoryview) -> str:
    return base64.b64encode(v).decode("ascii")


# -- configuration -----------------------------------------------------------------------------------------


def config_bool(configs: Mapping[str, Any], key: str, default: bool) -> bool:
    value = configs.get(key, default)
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ConnectException(
        f"Invalid value {value} for configuration {key}: Expected value to be either true or false"
    )


def config_int(configs: Mapping[str, Any], key: str, default: int, minimum: int = 0) -> int:
    value = configs.get(key, default)
    try:
        result = value if isinstance(value, int) and not isinstance(value, bool) else int(str(value).strip())
    except ValueError:
        raise ConnectException(
            f"Invalid value {value} for configuration {key}: Not a number of type INT"
        ) from None
    if result < minimum:
        raise ConnectException(
            f"Invalid value {value} for configuration {key}: Value must be at least {minimum}"
        )
    return result


def config_choice(configs: Mapping[str, Any], key: str, default: str, choices: tuple[str, ...]) -> str:
    value = str(configs.get(key, default)).strip()
    for choice in choices:
        if value.lower() == choice.lower():
            return choice
    raise ConnectException(
        f"Invalid value {value} for configuration {key}: String must be one of (case insensitive): "
        + ", ".join(choices)
    )


# Types whose Connect values are their JSON values, checked by Schema.fits_all: a column
# of them needs no writer call per value. (Floats are written the Java way; bytes in base64.)
_AS_IS_TYPES = frozenset({Type.STRING, Type.BOOLEAN, Type.INT8, Type.INT16, Type.INT32, Type.INT64})

# A document that is JSON null, as _are_documents sees it (msgspec's Raw of it).
_NULL_DOCUMENT = msgspec.Raw(b"null")
Writer = Callable[[Any], Any]
Reader = Callable[[Any], Any]


class JsonConverter(Converter, HeaderConverter):
    """JSON with an optional embedded schema; Kafka's ``org.apache.kafka.connect.json.JsonConverter``."""

    aliases: ClassVar[tuple[str, ...]] = ("org.apache.kafka.connect.json.JsonConverter",)

    def __init__(self) -> None:
        self.schemas_enable = True
        self.cache_size = 1000
        self.decimal_numeric = False
        self.replace_null_with_default = True
        self.converter_type = "value"
        self._writers: OrderedDict[Schema, tuple[orjson.Fragment, Writer]] = OrderedDict()
        self._last_writer: tuple[Schema, tuple[orjson.Fragment, Writer]] | None = None
        self._readers: OrderedDict[bytes, tuple[Schema, Reader]] = OrderedDict()
        self._document_checker = msgspec.json.Decoder(msgspec.Raw)

    def configure(self, configs: Mapping[str, Any], is_key: bool | None = None) -> None:
        self.schemas_enable = config_bool(configs, "schemas.enable", True)
        self.cache_size = config_int(configs, "schemas.cache.size", 1000)
        self.decimal_numeric = (
            config_choice(configs, "decimal.format", "BASE64", ("BASE64", "NUMERIC")) == "NUMERIC"
        )
        self.replace_null_with_default = config_bool(configs, "replace.null.with.default", True)
        if is_key is None:
            self.converter_type = config_choice(
                configs, "converter.type", "header", ("key", "value", "header")
            )
        else:
            self.converter_type = "key" if is_key else "value"
        self._writers.clear()
        self._last_writer = None
        self._readers.clear()

    # -- Connect -> JSON -------------------------------------------------------------------------------------

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        if schema is None and value is None:
            return None
        try:
            if schema is None:
                payload = self._infer(value)
                schema_json: orjson.Fragment | None = None
            else:
                last = self._last_writer
                if last is not None and last[0] is schema:
                    schema_json, writer = last[1]  # _writer_entry's first case, inline
                else:
                    schema_json, writer = self._writer_entry(schema)
                payload = writer(value)
        except _Problem as e:
            raise DataException(f"Converting Kafka Connect data to JSON failed: {e.message()}") from None
        doc = {"schema": schema_json, "payload": payload} if self.schemas_enable else payload
        try:
            out = orjson.dumps(doc)
            return _jackson_escapes(out) if b"\\u00" in out else out
        except orjson.JSONEncodeError as e:
            raise DataException(
                f"Converting Kafka Connect data to byte[] failed due to serialization error: {e}"
            ) from e

    def from_connect_batch(
        self, topic: str, schemas: Sequence[Schema | None], values: Sequence[Any]
    ) -> list[bytes | None]:
        if isinstance(values, StructColumn) and not self.schemas_enable:
            return self._struct_column(values)
        first = schemas[0] if schemas else None
        if (
            first is not None
            and first.name is None
            and first.type in _AS_IS_TYPES
            and schemas.count(first) == len(schemas)
            and (None not in values or (first.optional and first.default_value is None))
            and first.fits_all(values)
        ):
            # A topic's values of one plain schema (a string per line, say): JSON is the
            # value itself, one orjson call each and no writer (benchmarks/file_pipeline.py).
            dumps = orjson.dumps
            if self.schemas_enable:
                schema_json = self._writer_entry(first)[0]
                out = [dumps({"schema": schema_json, "payload": v}) for v in values]
            else:
                out = list(map(dumps, values))
            return [_jackson_escapes(o) if b"\\u00" in o else o for o in out]
        return super().from_connect_batch(topic, schemas, values)

    def _struct_column(self, structs: StructColumn) -> list[bytes | None]:
        """Schemaless JSON of structs held column-wise: each field column written at once
        (left as it is where JSON writes its values unchanged: plain strings, booleans and
        integers in range), then one object per row. ``benchmarks/transforms.py`` pays
        for this: a struct per row and a writer call per field cost more than the chain."""
        names = [f.name for f in structs.schema.fields]
        columns: list[Sequence[Any]] = []
        try:
            for f, column in zip(structs.schema.fields, structs.fields, strict=True):
                fs = f.schema
                as_is = (
                    fs.name is None
                    and fs.type in _AS_IS_TYPES
                    and (None not in column or (fs.optional and fs.default_value is None))
                    and fs.fits_all(column)
                )
                columns.append(column if as_is else list(map(self._writer(fs), column)))
        except _Problem as e:
            raise DataException(f"Converting Kafka Connect data to JSON failed: {e.message()}") from None
        try:
            out = list(map(_row_writer(tuple(names)), *columns)) if columns else [b"{}"] * len(structs)
        except orjson.JSONEncodeError as e:
            raise DataException(
                f"Converting Kafka Connect data to byte[] failed due to serialization error: {e}"
            ) from e
        return [_jackson_escapes(o) if b"\\u00" in o else o for o in out]

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        return self.from_connect_data(topic, schema, value)

    def _cache_put(self, cache: OrderedDict[Any, Any], key: Any, entry: Any) -> None:
        if self.cache_size <= 0:
            return
        cache[key] = entry
        if len(cache) > self.cache_size:
            cache.popitem(last=False)

    def _writer_entry(self, schema: Schema) -> tuple[orjson.Fragment, Writer]:
        last = self._last_writer
        if last is not None and last[0] is schema:
            return last[1]  # records of a topic mostly share one schema object: no hashing
        entry = self._writers.get(schema)
        if entry is not None:
            self._writers.move_to_end(schema)
            self._last_writer = (schema, entry)
            return entry
        try:
            entry = (orjson.Fragment(orjson.dumps(self.as_json_schema(schema))), self._writer(schema))
        except _Problem as e:
            raise DataException(f"Invalid default value in schema: {e.message()}") from None
        self._cache_put(self._writers, schema, entry)
        return entry

    def as_json_schema(self, schema: Schema) -> dict[str, Any]:
        """The JSON schema node Kafka writes for ``schema`` (keys in Kafka's order)."""
        node: dict[str, Any] = {"type": _JSON_TYPE_NAMES[schema.type]}
        if schema.type is Type.ARRAY:
            assert schema.value_schema is not None
            node["items"] = self.as_json_schema(schema.value_schema)
        elif schema.type is Type.MAP:
            assert schema.key_schema is not None and schema.value_schema is not None
            node["keys"] = self.as_json_schema(schema.key_schema)
            node["values"] = self.as_json_schema(schema.value_schema)
        elif schema.type is Type.STRUCT:
            node["fields"] = [{**self.as_json_schema(f.schema), "field": f.name} for f in schema.fields]
        node["optional"] = schema.optional
        if schema.name is not None:
            node["name"] = schema.name
        if schema.version is not None:
            node["version"] = schema.version
        if schema.doc is not None:
            node["doc"] = schema.doc
        if schema.parameters is not None:
            node["parameters"] = dict(schema.parameters)
        if schema.default_value is not None:
            node["default"] = self._writer(schema)(schema.default_value)
        return node

    def _writer(self, schema: Schema) -> Writer:
        base = self._base_writer(schema)
        if schema.default_value is not None and self.replace_null_with_default:
            default_json = base(schema.default_value)

            def write_or_default(v: Any) -> Any:
                return default_json if v is None else base(v)

            return write_or_default
        if schema.optional:

            def write_optional(v: Any) -> Any:
                return None if v is None else base(v)

            return write_optional

        def write_required(v: Any) -> Any:
            if v is None:
                raise _Problem("null value for a field that is required and has no default value")
            return base(v)

        return write_required

    def _base_writer(self, schema: Schema) -> Writer:
        logical = self._logical_writer(schema)
        if logical is not None:
            return logical
        t = schema.type
        if t in INT_RANGES:
            lo, hi = INT_RANGES[t]

            def write_int(v: Any) -> Any:
                if type(v) is not int and (not isinstance(v, int) or isinstance(v, bool)):
                    raise _Problem(f"expected int for {t.name}, got {type(v).__name__}")
                if not lo <= v <= hi:
                    raise _Problem(f"{v} is out of range for {t.name}")
                return v

            return write_int
        if t is Type.FLOAT32 or t is Type.FLOAT64:
            fmt = format_float if t is Type.FLOAT32 else format_double

            def write_float(v: Any) -> Any:
                if type(v) is float:
                    x = v
                elif isinstance(v, (float, int)) and not isinstance(v, bool):
                    try:
                        x = float(v)
                    except OverflowError:
                        raise _Problem(f"{v} is out of range for {t.name}") from None
                else:
                    raise _Problem(f"expected float for {t.name}, got {type(v).__name__}")
                text = fmt(x)
                if text[0] in "NI-" and text in ("NaN", "Infinity", "-Infinity"):
                    if t is Type.FLOAT32 and math.isfinite(x):
                        raise _Problem(f"{v} is out of range for FLOAT32")
                    return text  # Jackson writes non-finite numbers as strings
                return orjson.Fragment(text)

            return write_float
        if t is Type.BOOLEAN:

            def write_bool(v: Any) -> Any:
                if v is not True and v is not False:
                    raise _Problem(f"expected bool for BOOLEAN, got {type(v).__name__}")
                return v

            return write_bool
        if t is Type.STRING:

            def write_str(v: Any) -> Any:
                if not isinstance(v, str):
                    raise _Problem(f"expected str for STRING, got {type(v).__name__}")
                return v

            return write_str
        if t is Type.BYTES:

            def write_bytes(v: Any) -> Any:
                if not isinstance(v, (bytes, bytearray, memoryview)):
                    raise _Problem(f"expected bytes for BYTES, got {type(v).__name__}")
                return _b64(v)

            return write_bytes
        if t is Type.ARRAY:
            assert schema.value_schema is not None
            return _array_writer(self._writer(schema.value_schema))
        if t is Type.MAP:
            assert schema.key_schema is not None and schema.value_schema is not None
            return _map_writer(
                self._writer(schema.key_schema),
                self._writer(schema.value_schema),
                schema.key_schema.type is Type.STRING,
            )
        return _struct_writer(schema, [(f.name, self._writer(f.schema)) for f in schema.fields])

    def _logical_writer(self, schema: Schema) -> Writer | None:
        name = schema.name
        if name == Decimal.LOGICAL_NAME:
            if self.decimal_numeric:
                scale = Decimal.scale(schema)

                def write_numeric(v: Any) -> Any:
                    try:
                        n = Decimal.unscaled(schema, v)
                    except DataException as e:
                        raise _Problem(str(e)) from None
                    digits = tuple(int(c) for c in str(abs(n)))
                    return orjson.Fragment(str(decimal.Decimal((1 if n < 0 else 0, digits, -scale))))

                return write_numeric

            def write_base64(v: Any) -> Any:
                try:
                    return _b64(Decimal.from_logical(schema, v))
                except DataException as e:
                    raise _Problem(str(e)) from None

            return write_base64
        logical: type[Date] | type[Time] | type[Timestamp]
        if name == Date.LOGICAL_NAME:
            logical = Date
        elif name == Time.LOGICAL_NAME:
            logical = Time
        elif name == Timestamp.LOGICAL_NAME:
            logical = Timestamp
        else:
            return None
        from_logical = logical.from_logical
        if logical is Timestamp:

            def write_timestamp(v: Any) -> Any:
                if type(v) is _DATETIME and v.tzinfo is _UTC:  # what sources mostly hold
                    delta = v - _EPOCH
                    return (delta.days * 86400 + delta.seconds) * 1000 + delta.microseconds // 1000
                try:
                    return from_logical(schema, v)
                except DataException as e:
                    raise _Problem(str(e)) from None

            return write_timestamp

        def write_temporal(v: Any) -> Any:
            try:
                return from_logical(schema, v)
            except DataException as e:
                raise _Problem(str(e)) from None

        return write_temporal

    def _infer(self, v: Any) -> Any:
        """Schemaless Connect value -> JSON (Kafka infers the type from the Java class)."""
        if v is None or v is True or v is False or type(v) is str:
            return v
        if isinstance(v, bool):
            return bool(v)
        if isinstance(v, int):
            if not _INT64_MIN <= v <= _INT64_MAX:
                raise _Problem(f"{v} is out of range for INT64")
            return v
        if isinstance(v, float):
            text = format_double(v)
            return text if text in ("NaN", "Infinity", "-Infinity") else orjson.Fragment(text)
        if isinstance(v, str):
            return v
        if isinstance(v, (bytes, bytearray, memoryview)):
            return _b64(v)
        if isinstance(v, (list, tuple)):
            out = []
            i = 0
            try:
                for i, x in enumerate(v):  # noqa: B007 - i is read in the handler
                    out.append(self._infer(x))
            except _Problem as e:
                e.segments.append(f"[{i}]")
                raise
            return out
        if isinstance(v, dict):
            object_mode = all(isinstance(k, str) for k in v)
            entries: Any = {} if object_mode else []
            for k, x in v.items():
                try:
                    jx = self._infer(x)
                except _Problem as e:
                    e.segments.append(f"[{k!r}]")
                    raise
                if object_mode:
                    entries[k] = jx
                else:
                    entries.append([self._infer(k), jx])
            return entries
        if isinstance(v, Struct):
            return self._writer_entry(v.schema)[1](v)
        raise _Problem(f"Python type {type(v).__name__} does not have a corresponding schema type")

    # -- JSON -> Connect -------------------------------------------------------------------------------------

    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        if not data:
            return SchemaAndValue.NULL
        try:
            doc = orjson.loads(data)
        except orjson.JSONDecodeError as e:
            # orjson refuses a few things Jackson accepts (numbers beyond double range, lone surrogates).
            return self._to_connect(self._loads_exact(data, e), exact=True)
        try:
            return self._to_connect(doc, exact=False)
        except _NeedExactNumbers:
            return self._to_connect(self._loads_exact(data, None), exact=True)

    def to_connect_batch(self, topic: str, data: Sequence[bytes | None]) -> ConvertedBatch:
        if self.schemas_enable:
            return super().to_connect_batch(topic, data)
        # Schemaless, the usual case for JSON topics: each value is its document. Decoded
        # only when a value is read; a sink that copies JSON asks for the raw form instead.
        data = list(data)
        return ConvertedBatch(
            decode=partial(self._decode_schemaless, topic, data),
            raw={"json": partial(self._are_documents, data)},
        )

    def _decode_schemaless(
        self, topic: str, data: list[bytes | None]
    ) -> tuple[Sequence[Schema | None], Sequence[Any]]:
        # One map of orjson over the batch. A null or empty record, or a document orjson
        # refuses but Jackson reads (a lone surrogate), sends the batch the careful way.
        try:
            values = list(map(orjson.loads, data))  # type: ignore[arg-type]
        except (orjson.JSONDecodeError, TypeError):
            careful = super().to_connect_batch(topic, data)
            return careful.schemas, careful.values
        return [None] * len(values), values

    def _are_documents(self, data: list[bytes | None]) -> bool:
        """Whether each datum is one JSON document, valid UTF-8, never null: then the value
        is the document (no schema) and the bytes can be copied as they are.

        Each document is parsed and skipped over, nothing built: a third of what
        orjson.loads costs. msgspec refuses what orjson refuses (a lone surrogate, NaN)
        or stops earlier (nesting deeper than the recursion limit, under orjson's 1024),
        so decoding reads whatever passes here."""
        try:
            documents = list(map(self._document_checker.decode, data))  # type: ignore[arg-type]
        except (msgspec.DecodeError, TypeError, RecursionError):
            return False
        if documents.count(_NULL_DOCUMENT):
            return False  # a null value: the sink decides what a null means, with the record
        try:
            if not all(map(bytes.isascii, data)):  # type: ignore[arg-type]
                # msgspec does not look inside strings: their bytes must be UTF-8.
                for d in data:
                    if not d.isascii():  # type: ignore[union-attr]
                        d.decode()  # type: ignore[union-attr]
        except (UnicodeDecodeError, TypeError):
            return False
        return True

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        return self.to_connect_data(topic, value)

    @staticmethod
    def _loads_exact(data: bytes, first_error: Exception | None) -> Any:
        try:
            return json.loads(data, parse_float=decimal.Decimal, parse_constant=_reject_constant)
        except ValueError as e:
            raise DataException(
                "Converting byte[] to Kafka Connect data failed due to serialization error: "
                f"{first_error or e}"
            ) from e

    def _to_connect(self, doc: Any, exact: bool) -> SchemaAndValue:
        if self.schemas_enable:
            if not (isinstance(doc, dict) and len(doc) == 2 and "schema" in doc and "payload" in doc):
                raise DataException(ENVELOPE_ERROR)
            schema_node, payload = doc["schema"], doc["payload"]
        else:
            schema_node, payload = None, doc
        if schema_node is None:
            return SchemaAndValue(None, _plain(payload) if exact else payload)
        schema, reader = self._reader_entry(schema_node, exact)
        try:
            return SchemaAndValue(schema, reader(payload))
        except _Problem as e:
            raise DataException(f"Converting JSON to Kafka Connect data failed: {e.message()}") from None

    def _reader_entry(self, node: Any, exact: bool) -> tuple[Schema, Reader]:
        if exact:  # decimals in the node: not orjson-serializable, and rare enough not to cache
            schema = self.as_connect_schema(node)
            return schema, self._reader(schema)
        key = orjson.dumps(node)
        entry = self._readers.get(key)
        if entry is not None:
            self._readers.move_to_end(key)
            return entry
        schema = self.as_connect_schema(node)
        entry = (schema, self._reader(schema))
        self._cache_put(self._readers, key, entry)
        return entry

    def as_connect_schema(self, node: Any) -> Schema:
        """Parse a JSON schema node (as written by Kafka's JsonConverter) into a Schema."""
        if not isinstance(node, dict):
            raise DataException(f"Schema must be a JSON object, got {_json_type(node)}")
        type_name = node.get("type")
        if not isinstance(type_name, str):
            raise DataException("Schema must contain 'type' field")
        schema_type = _TYPES_BY_JSON_NAME.get(type_name)
        if schema_type is None:
            raise DataException(f"Unknown schema type: {type_name}")
        key_schema = value_schema = None
        fields: list[Field] = []
        if schema_type is Type.ARRAY:
            items = node.get("items")
            if items is None:
                raise DataException("Array schema did not specify the element type")
            value_schema = self.as_connect_schema(items)
        elif schema_type is Type.MAP:
            if "keys" not in node:
                raise DataException("Map schema did not specify the key type")
            if "values" not in node:
                raise DataException("Map schema did not specify the value type")
            key_schema = self.as_connect_schema(node["keys"])
            value_schema = self.as_connect_schema(node["values"])
        elif schema_type is Type.STRUCT:
            field_nodes = node.get("fields")
            if not isinstance(field_nodes, list):
                raise DataException('Struct schema\'s "fields" argument is not an array.')
            seen = set()
            for i, field_node in enumerate(field_nodes):
                field_name = field_node.get("field") if isinstance(field_node, dict) else None
                if not isinstance(field_name, str):
                    raise DataException("Struct schema's field name not specified properly")
                if field_name in seen:
                    raise DataException(f"Struct schema has a duplicate field name {field_name!r}")
                seen.add(field_name)
                fields.append(Field(field_name, i, self.as_connect_schema(field_node)))
        name = node.get("name")
        if name is not None and not isinstance(name, str):
            raise DataException(f"Schema name must be a string, got {_json_type(name)}")
        version = node.get("version")
        if version is not None and (type(version) is not int or not _INT32_MIN <= version <= _INT32_MAX):
            raise DataException(f"Schema version must be an integer, got {version!r}")
        doc = node.get("doc")
        if doc is not None and not isinstance(doc, str):
            raise DataException(f"Schema doc must be a string, got {_json_type(doc)}")
        params_node = node.get("parameters")
        parameters = None
        if params_node is not None:
            if not isinstance(params_node, dict) or not all(isinstance(v, str) for v in params_node.values()):
                raise DataException("Schema parameters must have string values.")
            parameters = Parameters(params_node)
        schema = Schema(
            schema_type,
            optional=node.get("optional") is True,
            name=name,
            version=version,
            doc=doc,
            parameters=parameters,
            key_schema=key_schema,
            value_schema=value_schema,
            fields=tuple(fields),
        )
        default_node = node.get("default")
        if default_node is not None:
            try:
                default = self._reader(schema)(default_node)
            except _Problem as e:
                raise DataException(f"Invalid default value in schema: {e.message()}") from None
            schema = dataclasses.replace(schema, default_value=default)
        return schema

    def _reader(self, schema: Schema) -> Reader:
        base = self._base_reader(schema)
        default = schema.default_value
        if default is not None and self.replace_null_with_default:

            def read_or_default(v: Any) -> Any:
                return default if v is None else base(v)

            return read_or_default
        if schema.optional:

            def read_optional(v: Any) -> Any:
                return None if v is None else base(v)

            return read_optional
        type_name = schema.type.name

        def read_required(v: Any) -> Any:
            if v is None:
                raise _Problem(f"Invalid null value for required {type_name} field")
            return base(v)

        return read_required

    def _base_reader(self, schema: Schema) -> Reader:
        logical = _logical_reader(schema)
        if logical is not None:
            return logical
        t = schema.type
        if t in INT_RANGES:
            lo, hi = INT_RANGES[t]

            def read_int(v: Any) -> Any:
                if type(v) is not int:
                    raise _Problem(f"expected an integer for {t.name}, got {_json_type(v)} {v!r}")
                if not lo <= v <= hi:
                    raise _Problem(f"{v} is out of range for {t.name}")
                return v

            return read_int
        if t is Type.FLOAT32 or t is Type.FLOAT64:
            single = t is Type.FLOAT32

            def read_float(v: Any) -> Any:
                if type(v) is float:
                    x = v
                elif (isinstance(v, (int, decimal.Decimal)) and not isinstance(v, bool)) or v in (
                    "NaN",
                    "Infinity",
                    "-Infinity",
                ):
                    x = float(v)
                else:
                    raise _Problem(f"expected a number for {t.name}, got {_json_type(v)}")
                return to_float32(x) if single else x

            return read_float
        if t is Type.BOOLEAN:

            def read_bool(v: Any) -> Any:
                if v is not True and v is not False:
                    raise _Problem(f"expected a boolean for BOOLEAN, got {_json_type(v)}")
                return v

            return read_bool
        if t is Type.STRING:

            def read_str(v: Any) -> Any:
                if type(v) is not str:
                    raise _Problem(f"expected a string for STRING, got {_json_type(v)}")
                return v

            return read_str
        if t is Type.BYTES:
            return _read_base64
        if t is Type.ARRAY:
            assert schema.value_schema is not None
            return _array_reader(self._reader(schema.value_schema))
        if t is Type.MAP:
            assert schema.key_schema is not None and schema.value_schema is not None
            return _map_reader(
                schema.key_schema, self._reader(schema.key_schema), self._reader(schema.value_schema)
            )
        return _struct_reader(schema, [(f.name, self._reader(f.schema)) for f in schema.fields])


# -- container writers and readers -------------------------------------------------------------------------


def _array_writer(item: Writer) -> Writer:
    def write_array(v: Any) -> Any:
        if not isinstance(v, (list, tuple)):
            raise _Problem(f"expected list for ARRAY, got {type(v).__name__}")
        out = []
        i = 0
        try:
            for i, x in enumerate(v):  # noqa: B007 - i is read in the handler
                out.append(item(x))
        except _Problem as e:
            e.segments.append(f"[{i}]")
            raise
        return out

    return write_array


def _map_writer(key: Writer, value: Writer, object_mode: bool) -> Writer:
    def write_map(v: Any) -> Any:
        if not isinstance(v, dict):
            raise _Problem(f"expected dict for MAP, got {type(v).__name__}")
        entries: Any = {} if object_mode else []
        for k, x in v.items():
            try:
                jk = key(k)
            except _Problem as e:
                e.segments.append(f"<key {k!r}>")
                raise
            try:
                jx = value(x)
            except _Problem as e:
                e.segments.append(f"[{k!r}]")
                raise
            if object_mode:
                entries["null" if jk is None else jk] = jx
            else:
                entries.append([jk, jx])
        return entries

    return write_map


def _struct_writer(schema: Schema, fields: list[tuple[str, Writer]]) -> Writer:
    # Per field: the value types written as they are (a str or bool field holding a str or
    # bool; an int field holding an int in range), so most fields cost no writer call.
    plan = []
    for (name, write), f in zip(fields, schema.fields, strict=True):
        fs = f.schema
        passthrough = fs._exact if fs._exact in (str, bool) else None
        plan.append((name, write, passthrough, fs._int_range))

    def write_struct_checked(v: Any) -> Any:
        if not isinstance(v, Struct):
            raise _Problem(f"expected Struct for STRUCT, got {type(v).__name__}")
        if v.schema is not schema and not _struct_schema_matches(schema, v.schema):
            raise _Problem(f"Mismatching schema: expected {schema!r}, got {v.schema!r}")
        out = {}
        name = ""
        try:
            for (name, write, passthrough, bounds), x in zip(plan, v._values, strict=True):
                t = type(x)
                if t is passthrough or (bounds is not None and t is int and bounds[0] <= x <= bounds[1]):
                    out[name] = x
                else:
                    out[name] = write(x)
        except _Problem as e:
            e.segments.append("." + name)
            raise
        return out

    return _fast_struct_writer(schema, plan, write_struct_checked)


@functools.lru_cache(maxsize=256)
def _row_writer(names: tuple[str, ...]) -> Callable[..., bytes]:
    """``(x0, x1, ...) -> orjson.dumps({names[0]: x0, ...})`` as one generated dict display,
    mapped over a StructColumn's field columns: half the cost of ``dict(zip(names, row))``
    per row (``benchmarks/transforms.py``). Names are values in the namespace, never code;
    ``tests/connect/test_struct_columns.py`` holds it to ``from_connect_data``."""
    namespace: dict[str, Any] = {"_dumps": orjson.dumps}
    params = ", ".join(f"x{i}" for i in range(len(names)))
    items = ", ".join(f"k{i}: x{i}" for i in range(len(names)))
    namespace.update({f"k{i}": name for i, name in enumerate(names)})
    exec(f"def row({params}):\n    return _dumps({{{items}}})\n", namespace)
    row: Callable[..., bytes] = namespace["row"]
    return row


def _fast_struct_writer(
    schema: Schema,
    plan: Sequence[tuple[str, Writer, type | None, tuple[int, int] | None]],
    checked: Writer,
) -> Writer:
    """``checked`` for a Struct of exactly ``schema``, as one generated dict display (no loop
    or call per field whose value is written as it is). Whatever goes wrong runs ``checked``
    again, which says where (writers are pure). Paid for by ``benchmarks/jdbc_source.py``
    (a struct per row); ``tests/connect/test_struct_columns.py`` holds it to ``checked``."""
    namespace: dict[str, Any] = {
        "_Struct": Struct,
        "_schema": schema,
        "_checked": checked,
        "_Fragment": orjson.Fragment,
        "_repr": repr,
        "_datetime": _DATETIME,
        "_UTC": _UTC,
        "_EPOCH": _EPOCH,
    }
    items = []
    for i, ((name, write, passthrough, bounds), f) in enumerate(zip(plan, schema.fields, strict=True)):
        namespace[f"n{i}"], namespace[f"w{i}"], x = name, write, f"x{i}"
        fs = f.schema
        if fs.name == Timestamp.LOGICAL_NAME:
            # write_timestamp's common case, inline
            items.append(
                f"n{i}: ((d := {x} - _EPOCH).days * 86400 + d.seconds) * 1000 + d.microseconds // 1000 "
                f"if type({x}) is _datetime and {x}.tzinfo is _UTC else w{i}({x})"
            )
            continue
        if fs.type is Type.FLOAT64 and fs.name not in _LOGICAL_WRITER_NAMES:
            # write_float's common case (format_double's plain range), inline
            items.append(
                f"n{i}: _Fragment(_repr({x})) if type({x}) is float and "
                f"(1e-3 <= {x} < 1e7 or -1e7 < {x} <= -1e-3) else w{i}({x})"
            )
            continue
        kept = []
        if passthrough is not None:
            namespace[f"p{i}"] = passthrough
            kept.append(f"type({x}) is p{i}")
        if bounds is not None:
            kept.append(f"(type({x}) is int and {bounds[0]} <= {x} <= {bounds[1]})")
        expression = f"{x} if {' or '.join(kept)} else w{i}({x})" if kept else f"w{i}({x})"
        items.append(f"n{i}: {expression}")
    unpack = "".join(f"x{i}, " for i in range(len(plan)))
    source = (
        "def write_struct(v):\n"
        "    if type(v) is _Struct and v._schema is _schema:\n"
        "        try:\n"
        f"            ({unpack}) = v._values\n"
        f"            return {{{', '.join(items)}}}\n"
        "        except Exception:\n"
        "            pass\n"
        "    return _checked(v)\n"
    )
    exec(source, namespace)  # generated from field positions only: names are values
    write_struct: Writer = namespace["write_struct"]
    return write_struct


def _read_base64(v: Any) -> Any:
    if type(v) is not str:
        raise _Problem(f"expected a base64 string for BYTES, got {_json_type(v)}")
    try:
        return base64.b64decode(v, validate=True)
    except binascii.Error:
        raise _Problem("Invalid bytes field: not valid base64") from None


def _array_reader(item: Reader) -> Reader:
    def read_array(v: Any) -> Any:
        if type(v) is not list:
            raise _Problem(f"expected a JSON array for ARRAY, got {_json_type(v)}")
        out = []
        i = 0
        try:
            for i, x in enumerate(v):  # noqa: B007 - i is read in the handler
                out.append(item(x))
        except _Problem as e:
            e.segments.append(f"[{i}]")
            raise
        return out

    return read_array


def _map_reader(key_schema: Schema, key: Reader, value: Reader) -> Reader:
    if key_schema.type is Type.STRING:

        def read_object_map(v: Any) -> Any:
            if type(v) is not dict:
                raise _Problem(
                    f"Maps with string fields should be encoded as JSON objects, but found {_json_type(v)}"
                )
            out = {}
            k = ""
            try:
                for k, x in v.items():
                    out[k] = value(x)
            except _Problem as e:
                e.segments.append(f"[{k!r}]")
                raise
            return out

        return read_object_map
    hashable_keys = key_schema.type.is_primitive

    def read_pair_map(v: Any) -> Any:
        if type(v) is not list:
            raise _Problem(
                "Maps with non-string fields should be encoded as JSON array of tuples, "
                f"but found {_json_type(v)}"
            )
        out = {}
        for i, entry in enumerate(v):
            if type(entry) is not list:
                raise _Problem(
                    f"Found invalid map entry instead of array tuple: {_json_type(entry)} (entry {i})"
                )
            if len(entry) != 2:
                raise _Problem(
                    f"Found invalid map entry, expected length 2 but found: {len(entry)} (entry {i})"
                )
            if not hashable_keys:
                raise _Problem(f"Map keys of type {key_schema.type.name} cannot be Python dict keys")
            try:
                k = key(entry[0])
            except _Problem as e:
                e.segments.append(f"<key #{i}>")
                raise
            try:
                out[k] = value(entry[1])
            except _Problem as e:
                e.segments.append(f"[{k!r}]")
                raise
        return out

    return read_pair_map


def _struct_reader(schema: Schema, fields: list[tuple[str, Reader]]) -> Reader:
    def read_struct(v: Any) -> Any:
        if type(v) is not dict:
            raise _Problem(f"Structs should be encoded as JSON objects, but found {_json_type(v)}")
        values = []
        name = ""
        try:
            for name, read in fields:
                values.append(read(v.get(name)))
        except _Problem as e:
            e.segments.append("." + name)
            raise
        return Struct._from_values(schema, values)

    return read_struct


def _logical_reader(schema: Schema) -> Reader | None:
    name = schema.name
    if name == Decimal.LOGICAL_NAME:
        Decimal.scale(schema)  # fail early on a bad schema

        def read_decimal(v: Any) -> Any:
            if type(v) is str:
                try:
                    return Decimal.to_logical(schema, base64.b64decode(v, validate=True))
                except (binascii.Error, DataException):
                    raise _Problem("Invalid bytes for Decimal field") from None
            if type(v) is int:
                return decimal.Decimal(v)
            if type(v) is decimal.Decimal:
                return v
            if type(v) is float:
                raise _NeedExactNumbers
            raise _Problem(
                "Invalid type for Decimal, underlying representation should be numeric or bytes "
                f"but was {_json_type(v)}"
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
            raise _Problem(
                f"Invalid type for {label}, underlying representation should be integer but was {v!r}"
            )
        try:
            return to_logical(schema, v)
        except DataException as e:
            raise _Problem(str(e)) from None

    return read_temporal
