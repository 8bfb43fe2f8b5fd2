"""Kafka's ``SimpleHeaderConverter``: header values as UTF-8 text with inferred schemas.

Writing follows Kafka's ``Values.convertToString``: numbers and booleans as Java
prints them (``true``, ``1.5``, ``1.0E20``), strings as-is, bytes as base64, and
lists, maps and structs as compact JSON-like text (``[1,2]``, ``{"a":1}``) with
strings inside them quoted. Dates, times and timestamps use Kafka's ISO formats
(``2024-05-01``, ``12:30:00.000Z``, ``2024-05-01T12:30:00.000Z``).

Reading follows Kafka's ``Values.parseString``: ``true``/``false`` become BOOLEAN,
integers the smallest of INT8/INT16/INT32/INT64 that holds them, other numbers
FLOAT64, ISO dates/times/timestamps their logical types, ``[...]`` and ``{...}``
arrays and maps of parsed elements, and anything else STRING.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
import decimal
import math
import re
from collections.abc import Mapping
from typing import Any, ClassVar

from connect.api.converter import HeaderConverter
from connect.api.data import (
    INT_RANGES,
    Date,
    Decimal,
    Schema,
    SchemaAndValue,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    Type,
)
from connect.api.errors import DataException
from connect.converters.json import format_double, format_float

__all__ = ["SimpleHeaderConverter", "convert_to_string", "parse_string"]


class SimpleHeaderConverter(HeaderConverter):
    """Headers as UTF-8 strings; Kafka's ``org.apache.kafka.connect.storage.SimpleHeaderConverter``."""

    aliases: ClassVar[tuple[str, ...]] = ("org.apache.kafka.connect.storage.SimpleHeaderConverter",)

    def configure(self, configs: Mapping[str, Any]) -> None:
        """No settings."""

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        if value is None:
            return None
        return convert_to_string(schema, value).encode("utf-8")

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue.NULL
        raw = bytes(value)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            # Kafka decodes with replacement characters and keeps the result as a string.
            return SchemaAndValue(Schema.STRING_SCHEMA, raw.decode("utf-8", "replace"))
        return parse_string(text)


# -- Connect value -> text ---------------------------------------------------------------------------------


def convert_to_string(schema: Schema | None, value: Any) -> str:
    """Kafka's ``Values.convertToString``; ``schema`` only selects 32-bit float formatting."""
    out: list[str] = []
    _append(out, schema, value, embedded=False)
    return "".join(out)


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _format_time_ms(ms: int) -> str:
    seconds, millis = divmod(ms, 1000)
    minutes, s = divmod(seconds, 60)
    h, m = divmod(minutes, 60)
    return f"{h:02d}:{m:02d}:{s:02d}.{millis:03d}Z"


def _format_date(d: datetime.date) -> str:
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}"


def _append(out: list[str], schema: Schema | None, value: Any, embedded: bool) -> None:
    if value is None:
        out.append("null")
    elif isinstance(value, bool):
        out.append("true" if value else "false")
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        single = schema is not None and schema.type is Type.FLOAT32
        out.append(format_float(value) if single else format_double(value))
    elif isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise DataException(f"Failed to serialize non-finite decimal {value}")
        # BigDecimal.toString and str(Decimal) share the scientific-notation rules; Java has no -0.
        out.append(str(value.copy_abs() if value.is_zero() else value))
    elif isinstance(value, str):
        out.append(f'"{_escape(value)}"' if embedded else value)
    elif isinstance(value, (bytes, bytearray, memoryview)):
        encoded = base64.b64encode(value).decode("ascii")
        out.append(f'"{encoded}"' if embedded else encoded)
    elif isinstance(value, (list, tuple)):
        item_schema = schema.value_schema if schema is not None and schema.type is Type.ARRAY else None
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _append(out, item_schema, item, embedded=True)
        out.append("]")
    elif isinstance(value, dict):
        is_map = schema is not None and schema.type is Type.MAP
        key_schema = schema.key_schema if is_map and schema is not None else None
        value_schema = schema.value_schema if is_map and schema is not None else None
        out.append("{")
        for i, (k, v) in enumerate(value.items()):
            if i:
                out.append(",")
            _append(out, key_schema, k, embedded=True)
            out.append(":")
            _append(out, value_schema, v, embedded=True)
        out.append("}")
    elif isinstance(value, Struct):
        out.append("{")
        for i, f in enumerate(value.schema.fields):
            if i:
                out.append(",")
            out.append(f'"{_escape(f.name)}":')
            _append(out, f.schema, value.get(f.name), embedded=True)
        out.append("}")
    elif isinstance(value, datetime.datetime):
        ms = Timestamp.from_logical(Timestamp.SCHEMA, value)
        days, ms_of_day = divmod(ms, 86_400_000)
        out.append(f"{_format_date(datetime.date(1970, 1, 1) + datetime.timedelta(days=days))}T")
        out.append(_format_time_ms(ms_of_day))
    elif isinstance(value, datetime.date):
        out.append(_format_date(value))
    elif isinstance(value, datetime.time):
        out.append(_format_time_ms(Time.from_logical(Time.SCHEMA, value)))
    else:
        raise DataException(f"Failed to serialize unexpected value type {type(value).__name__}: {value!r}")


# -- text -> Connect value ---------------------------------------------------------------------------------

_TIMESTAMP = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})Z", re.ASCII)
_TIME = re.compile(r"(\d{2}):(\d{2}):(\d{2})\.(\d{3})Z", re.ASCII)
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})", re.ASCII)
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
_BARE_TOKEN = re.compile(r'[^,\[\]{}:"\s]+')
_WHITESPACE = re.compile(r"\s*")
_BIGGER_THAN_LONG = decimal.Decimal("1e19")
_INT_SCHEMAS = [
    (Type.INT8, Schema.INT8_SCHEMA),
    (Type.INT16, Schema.INT16_SCHEMA),
    (Type.INT32, Schema.INT32_SCHEMA),
    (Type.INT64, Schema.INT64_SCHEMA),
]
_NUMERIC_RANK = {Type.INT8: 0, Type.INT16: 1, Type.INT32: 2, Type.INT64: 3, Type.FLOAT32: 4, Type.FLOAT64: 5}


class _ParseError(Exception):
    pass


def parse_string(text: str) -> SchemaAndValue:
    """Kafka's ``Values.parseString``: infer a schema and value from header text."""
    if text == "":
        return SchemaAndValue(Schema.STRING_SCHEMA, "")
    token = text.strip()
    if token == "null":
        return SchemaAndValue.NULL
    if token in ("true", "false"):
        return SchemaAndValue(Schema.BOOLEAN_SCHEMA, token == "true")
    if token[:1] in ("[", "{"):
        parser = _Parser(text)
        try:
            parsed = parser.value()
            parser.skip_whitespace()
            if parser.pos == len(text) and parsed is not None:
                return parsed
        except _ParseError:
            pass
    temporal = _temporal(token)
    if temporal is not None:
        return temporal
    if _NUMBER.fullmatch(token):
        return _number(token)
    return SchemaAndValue(Schema.STRING_SCHEMA, text)


def _temporal(token: str) -> SchemaAndValue | None:
    try:
        if m := _TIMESTAMP.fullmatch(token):
            y, mo, d, h, mi, s, ms = map(int, m.groups())
            ts = datetime.datetime(y, mo, d, h, mi, s, ms * 1000, tzinfo=datetime.UTC)
            return SchemaAndValue(Timestamp.SCHEMA, ts)
        if m := _TIME.fullmatch(token):
            h, mi, s, ms = map(int, m.groups())
            return SchemaAndValue(Time.SCHEMA, datetime.time(h, mi, s, ms * 1000))
        if m := _DATE.fullmatch(token):
            y, mo, d = map(int, m.groups())
            return SchemaAndValue(Date.SCHEMA, datetime.date(y, mo, d))
    except ValueError:  # a well-shaped but impossible date or time
        return None
    return None


def _number(token: str) -> SchemaAndValue:
    d = decimal.Decimal(token)
    magnitude = d.copy_abs()
    if (d.is_zero() or 1 <= magnitude <= _BIGGER_THAN_LONG) and d == d.to_integral_value():
        n = int(d)
        for t, schema in _INT_SCHEMAS:
            lo, hi = INT_RANGES[t]
            if lo <= n <= hi:
                return SchemaAndValue(schema, n)
    exponent = d.as_tuple().exponent
    assert isinstance(exponent, int)
    if exponent != 0:
        f = float(d)
        if math.isfinite(f):
            # Kafka picks FLOAT32 when the value fits; Python floats are doubles, so keep every digit.
            return SchemaAndValue(Schema.FLOAT64_SCHEMA, f)
    return SchemaAndValue(Decimal.schema(-exponent), d)


def _merge(common: Schema | None, new: Schema) -> Schema | None:
    """Kafka's SchemaMerger: a schema both can use (numeric widening), or None."""
    if common is None or common == new:
        return new
    if (
        common.name is None
        and new.name is None
        and common.type in _NUMERIC_RANK
        and new.type in _NUMERIC_RANK
        and common.optional == new.optional
    ):
        return common if _NUMERIC_RANK[common.type] >= _NUMERIC_RANK[new.type] else new
    return None


class _Elements:
    """Collects parsed elements and their common schema."""

    __slots__ = ("common", "compatible", "has_null")

    def __init__(self) -> None:
        self.common: Schema | None = None
        self.compatible = True
        self.has_null = False

    def add(self, parsed: SchemaAndValue | None) -> Any:
        if parsed is None or parsed.schema is None:
            self.has_null = self.has_null or parsed is None or parsed.value is None
            if parsed is not None and parsed.value is not None:
                self.compatible = False  # a schemaless nested container
            return None if parsed is None else parsed.value
        if self.compatible:
            self.common = _merge(self.common, parsed.schema)
            self.compatible = self.common is not None
        return parsed.value

    def schema(self) -> Schema | None:
        if not self.compatible or self.common is None:
            return None
        if self.has_null and not self.common.optional:
            return dataclasses.replace(self.common, optional=True)
        return self.common

    @staticmethod
    def align(schema: Schema, value: Any) -> Any:
        if value is not None and schema.type in (Type.FLOAT32, Type.FLOAT64) and isinstance(value, int):
            return float(value)
        return value


class _Parser:
    """Recursive-descent parser of the embedded values inside ``[...]`` and ``{...}``."""

    __slots__ = ("pos", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def skip_whitespace(self) -> None:
        m = _WHITESPACE.match(self.text, self.pos)
        assert m is not None
        self.pos = m.end()

    def peek(self) -> str:
        self.skip_whitespace()
        if self.pos >= len(self.text):
            raise _ParseError("unexpected end of input")
        return self.text[self.pos]

    def value(self) -> SchemaAndValue | None:
        """The next embedded value; None stands for ``null``."""
        c = self.peek()
        if c == '"':
            return self.quoted()
        if c == "[":
            return self.array()
        if c == "{":
            return self.map()
        for pattern in (_TIMESTAMP, _TIME, _DATE):
            m = pattern.match(self.text, self.pos)
            if m and self._at_boundary(m.end()):
                temporal = _temporal(m.group())
                if temporal is not None:
                    self.pos = m.end()
                    return temporal
        m = _BARE_TOKEN.match(self.text, self.pos)
        if m is None:
            raise _ParseError(f"unexpected {c!r} at {self.pos}")
        token = m.group()
        self.pos = m.end()
        if token == "null":
            return None
        if token in ("true", "false"):
            return SchemaAndValue(Schema.BOOLEAN_SCHEMA, token == "true")
        if _NUMBER.fullmatch(token):
            return _number(token)
        raise _ParseError(f"Failed to parse embedded value {token!r}")

    def _at_boundary(self, end: int) -> bool:
        return end >= len(self.text) or self.text[end] in ',]}:"' or self.text[end].isspace()

    def quoted(self) -> SchemaAndValue:
        text = self.text
        i = self.pos + 1
        chars: list[str] = []
        while i < len(text):
            c = text[i]
            if c == "\\" and i + 1 < len(text):
                chars.append(text[i + 1])
                i += 2
            elif c == '"':
                self.pos = i + 1
                content = "".join(chars)
                return _temporal(content) or SchemaAndValue(Schema.STRING_SCHEMA, content)
            else:
                chars.append(c)
                i += 1
        raise _ParseError("unterminated quoted string")

    def array(self) -> SchemaAndValue:
        self.pos += 1
        elements = _Elements()
        values: list[Any] = []
        if self.peek() == "]":
            self.pos += 1
            return SchemaAndValue(None, values)
        while True:
            values.append(elements.add(self.value()))
            c = self.peek()
            self.pos += 1
            if c == "]":
                break
            if c != ",":
                raise _ParseError("Array elements missing ',' delimiter")
        schema = elements.schema()
        if schema is None:
            return SchemaAndValue(None, values)
        return SchemaAndValue(
            SchemaBuilder.array(schema).build(), [_Elements.align(schema, v) for v in values]
        )

    def map(self) -> SchemaAndValue:
        self.pos += 1
        keys, vals = _Elements(), _Elements()
        entries: dict[Any, Any] = {}
        if self.peek() == "}":
            self.pos += 1
            return SchemaAndValue(None, entries)
        while True:
            key = self.value()
            if key is None or key.value is None:
                raise _ParseError("Map entry may not have a null key")
            if self.peek() != ":":
                raise _ParseError(f"Map entry is missing ':' at {self.pos}")
            self.pos += 1
            k = keys.add(key)
            v = vals.add(self.value())
            try:
                entries[k] = v
            except TypeError:
                raise _ParseError("Map keys must be hashable") from None
            c = self.peek()
            self.pos += 1
            if c == "}":
                break
            if c != ",":
                raise _ParseError("Map entries missing ',' delimiter")
        key_schema, value_schema = keys.schema(), vals.schema()
        if key_schema is None or value_schema is None:
            return SchemaAndValue(None, entries)
        aligned = {
            _Elements.align(key_schema, k): _Elements.align(value_schema, v) for k, v in entries.items()
        }
        return SchemaAndValue(SchemaBuilder.map(key_schema, value_schema).build(), aligned)
