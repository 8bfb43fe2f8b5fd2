"""Kafka's ``Values.parseString``: a typed value from its text, as ``InsertHeader``'s
``value.literal`` is read.

``parse_literal(text)`` gives a ``SchemaAndValue`` (or None for ``null``):

- ``null`` → None; ``true`` / ``false`` → BOOLEAN (case-sensitive, and alone: ``true}``
  is a string);
- a whole number → the smallest of INT8, INT16, INT32, INT64 that holds it; one too big
  for INT64 → ``Decimal`` with scale 0;
- a number with a fraction or exponent → FLOAT32 whenever it is a finite 32-bit float (as
  Kafka chooses, so ``3.14`` is FLOAT32), else FLOAT64, else ``Decimal``. A FLOAT32 value
  is the Python float with the digits Java prints for that float (``3.14``, not
  ``3.140000104904175``);
- ``HH:mm:ss.SSS'Z'``, ``yyyy-MM-dd'T'HH:mm:ss.SSS'Z'`` and ``yyyy-MM-dd`` (chosen by
  length, read leniently) → Time, Timestamp and Date;
- ``[...]`` → ARRAY and ``{k:v,...}`` → MAP of numbers, booleans, nulls, temporals and
  ``"quoted strings"``, with the elements' common schema (numbers widen: INT8 < INT16 <
  INT32 < INT64 < FLOAT32 < FLOAT64). An array or map that cannot be parsed (a bare word,
  a missing delimiter, a null next to typed elements) is a STRING;
- anything else → STRING holding the whole original text (``""`` too).

Differences from Kafka, all forced by Python's data model:

- Temporal text is read in UTC (Kafka uses the JVM's default time zone). A Time that
  rolls past midnight (``25:00:00.000Z``) keeps its time of day.
- An array or map whose elements have no common schema (all null, or mixed types) has no
  schema (``SchemaAndValue(None, [...])``): Kafka gives it an ARRAY/MAP schema with a null
  element schema, which ``connect.api`` schemas cannot express. The same holds when the
  common schema Kafka picks would not accept the elements (``[[300],[1]]``: Kafka types it
  ``array<array<int8>>``).
- Java's ``Byte 1``, ``Boolean true`` and ``Double 1.0`` are different map keys; in a
  Python dict they are one. A map keyed by arrays or maps (``{[1]:2}``) is a STRING, as
  a Python dict cannot hold such keys.

Kafka's quirks are kept: only the first token of a top-level number is read (``12:30``
is INT8 ``12``, ``1,2`` is INT8 ``1``), text after a closing ``]`` or ``}`` is ignored,
and backslash escapes stay in quoted strings.
"""

from __future__ import annotations

import datetime
import decimal
import math
import re
import struct
from typing import Any

from connect.api import (
    DataException,
    Date,
    Decimal,
    Schema,
    SchemaAndValue,
    SchemaBuilder,
    Time,
    Timestamp,
    Type,
)
from connect.api.java_dates import JavaDateFormat

__all__ = ["parse_literal"]

_DELIMITERS = frozenset(':,{}[]"')
_JAVA_SPACE = "".join(chr(c) for c in range(0x21))  # what String.trim() strips
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_BIGGER_THAN_LONG = decimal.Decimal("1e19")
# Java's BigDecimal(String) grammar; Python's Decimal() is looser (spaces, "_", "NaN").
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_TEMPORAL = {
    13: (JavaDateFormat("HH:mm:ss.SSS'Z'"), Time.SCHEMA),
    24: (JavaDateFormat("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"), Timestamp.SCHEMA),
    10: (JavaDateFormat("yyyy-MM-dd"), Date.SCHEMA),
}
_TRUE = SchemaAndValue(Schema.BOOLEAN_SCHEMA, True)
_FALSE = SchemaAndValue(Schema.BOOLEAN_SCHEMA, False)
_INT_TYPES = (
    (Schema.INT8_SCHEMA, -(2**7), 2**7 - 1),
    (Schema.INT16_SCHEMA, -(2**15), 2**15 - 1),
    (Schema.INT32_SCHEMA, -(2**31), 2**31 - 1),
    (Schema.INT64_SCHEMA, _LONG_MIN, _LONG_MAX),
)
# Kafka's numeric widening order for the common schema of array elements and map entries.
_RANK = {Type.INT8: 0, Type.INT16: 1, Type.INT32: 2, Type.INT64: 3, Type.FLOAT32: 4, Type.FLOAT64: 5}
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_FLOAT32_MAX: float = struct.unpack("<f", b"\xff\xff\x7f\x7f")[0]
_MS_PER_DAY = 86_400_000


class _ParseError(Exception):
    """Kafka's DataException inside the parser: an array or map that is not one."""


def parse_literal(text: str) -> SchemaAndValue | None:
    """``text`` as Kafka's ``Values.parseString`` reads it; None for ``null``."""
    if not text:
        return SchemaAndValue(Schema.STRING_SCHEMA, text)
    return _parse(_Tokens(text), embedded=False)


def _trim(s: str) -> str:
    return s.strip(_JAVA_SPACE)


class _Tokens:
    """Kafka's ``Values.Parser``: tokens split at unescaped ``: , { } [ ] "``, with one
    token of look-ahead and marks to rewind to."""

    __slots__ = ("_ahead", "_pos", "original", "previous")

    def __init__(self, original: str) -> None:
        self.original = original
        self._pos = 0
        self._ahead: str | None = None
        self.previous: str | None = None

    def position(self) -> int:
        return self._pos

    def mark(self) -> int:
        return self._pos - (len(self._ahead) if self._ahead is not None else 0)

    def rewind_to(self, position: int) -> None:
        self._pos = position
        self._ahead = None
        self.previous = None

    def has_next(self) -> bool:
        return self._ahead is not None or self._pos < len(self.original)

    def next(self) -> str:
        if self._ahead is not None:
            self.previous, self._ahead = self._ahead, None
        else:
            self.previous = self._consume()
        return self.previous

    def next_n(self, n: int) -> str | None:
        """The text of the next ``n`` tokens, or None (and nothing consumed) if fewer remain."""
        start = self.mark()
        for _ in range(n):
            if not self.has_next():
                self.rewind_to(start)
                return None
            self.next()
        return self.original[start : self._pos]

    def can_consume(self, expected: str) -> bool:
        """Consume the next non-blank token if, trimmed, it is ``expected``."""
        if self._ahead is None:
            if not self.has_next():
                return False
            self._ahead = self._consume()
        while not _trim(self._ahead) and self._pos < len(self.original):
            self._ahead = self._consume()
        if _trim(self._ahead) == expected:
            self._ahead = None
            return True
        return False

    def _consume(self) -> str:
        s = self.original
        start = i = self._pos
        end = len(s)
        escaped = False
        while i < end:
            c = s[i]
            if c == "\\":
                escaped = not escaped
            elif c in _DELIMITERS and not escaped:
                if start < i:
                    self._pos = i
                    return s[start:i]
                self._pos = i + 1
                return c
            else:
                escaped = False
            i += 1
        self._pos = end
        return s[start:end]


def _parse(tokens: _Tokens, embedded: bool) -> SchemaAndValue | None:
    if not tokens.has_next():
        return None
    if embedded and tokens.can_consume('"'):
        return _quoted_string(tokens)
    if _single_token_literal(tokens, embedded, "null"):
        return None
    if _single_token_literal(tokens, embedded, "true"):
        return _TRUE
    if _single_token_literal(tokens, embedded, "false"):
        return _FALSE
    start = tokens.mark()
    try:
        if tokens.can_consume("["):
            return _array(tokens)
        if tokens.can_consume("{"):
            return _map(tokens)
    except _ParseError:
        tokens.rewind_to(start)  # not an array or map after all: read it as a token
    token = tokens.next()
    if not _trim(token):
        return SchemaAndValue(Schema.STRING_SCHEMA, token)
    return _token_value(tokens, embedded, _trim(token))


def _single_token_literal(tokens: _Tokens, embedded: bool, literal: str) -> bool:
    start = tokens.mark()
    # At the top level the literal must be all there is: "true}" is a string.
    if tokens.can_consume(literal) and (embedded or not tokens.has_next()):
        return True
    tokens.rewind_to(start)
    return False


def _token_value(tokens: _Tokens, embedded: bool, token: str) -> SchemaAndValue:
    first = token[0]
    if first.isdecimal():
        # Temporal text is the more restrictive reading, so it goes first.
        temporal = _multi_token_temporal(tokens, token)
        if temporal is not None:
            return temporal
    if first.isdecimal() or first in "+-":
        number = _number(token)
        if number is not None:
            return number
    if embedded:
        raise _ParseError("Failed to parse embedded value")
    return SchemaAndValue(Schema.STRING_SCHEMA, tokens.original)


def _multi_token_temporal(tokens: _Tokens, token: str) -> SchemaAndValue | None:
    # Unescaped colons split "12:30:45.123Z" into five tokens; try them joined first.
    position = tokens.mark()
    rest = tokens.next_n(4)
    if rest is not None:
        temporal = _temporal(token + rest)
        if temporal is not None:
            return temporal
    tokens.rewind_to(position)
    return _temporal(token)


def _temporal(text: str) -> SchemaAndValue | None:
    text = text.replace("\\:", ":")
    entry = _TEMPORAL.get(len(text))
    if entry is None:
        return None
    fmt, schema = entry
    try:
        parsed = fmt.parse(text)
    except ValueError:
        return None
    if schema is Timestamp.SCHEMA:
        return SchemaAndValue(schema, parsed)
    if schema is Date.SCHEMA:
        return SchemaAndValue(schema, parsed.date())
    return SchemaAndValue(schema, parsed.time())


def _quoted_string(tokens: _Tokens) -> SchemaAndValue:
    parts: list[str] = []
    while tokens.has_next():
        if tokens.can_consume('"'):
            break
        parts.append(tokens.next())
    content = "".join(parts)
    # Quoted text of a temporal shape is still a temporal value.
    return _temporal(content) or SchemaAndValue(Schema.STRING_SCHEMA, content)


def _number(token: str) -> SchemaAndValue | None:
    if _NUMBER.fullmatch(token) is None:
        return None
    d = decimal.Decimal(token)
    exponent = d.as_tuple().exponent
    assert isinstance(exponent, int)
    magnitude = abs(d)
    if magnitude <= _BIGGER_THAN_LONG and (magnitude >= 1 or magnitude == 0) and d == d.to_integral_value():
        n = int(d)
        for schema, lo, hi in _INT_TYPES:
            if lo <= n <= hi:
                return SchemaAndValue(schema, n)
    scale = -exponent
    if scale != 0:
        as_double = float(d)
        as_float = _float32(as_double)
        if as_float is not None:
            return SchemaAndValue(Schema.FLOAT32_SCHEMA, as_float)
        if math.isfinite(as_double):
            return SchemaAndValue(Schema.FLOAT64_SCHEMA, as_double)
    return SchemaAndValue(Decimal.schema(scale), d)


def _float32(value: float) -> float | None:
    """``value`` as Java's ``(float)``, written with the digits Java prints for that float
    (the shortest that read back to it); None if it overflows to infinity."""
    try:
        single = struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return None
    if math.isinf(single):
        return None
    for digits in range(1, 10):
        shortest = float(f"{single:.{digits}g}")
        # Near the largest float the short form can exceed it (3.4028235e38); keep it exact there.
        if struct.unpack("f", struct.pack("f", shortest))[0] == single and abs(shortest) <= _FLOAT32_MAX:
            return shortest
    return float(single)


class _Merger:
    """Kafka's ``SchemaMerger``: the common schema of the values seen, if there is one."""

    __slots__ = ("common", "compatible")

    def __init__(self) -> None:
        self.common: Schema | None = None
        self.compatible = True

    def merge(self, latest: SchemaAndValue | None) -> None:
        if latest is None or latest.schema is None or not self.compatible:
            return
        if self.common is None:
            self.common = latest.schema
        else:
            self.common = _merge_schemas(self.common, latest.schema)
            self.compatible = self.common is not None


def _merge_schemas(previous: Schema, new: Schema) -> Schema | None:
    if previous.type is not new.type:
        a, b = _RANK.get(previous.type), _RANK.get(new.type)
        if a is None or b is None:
            return None
        return previous if a > b else new
    if previous.optional == new.optional:
        return previous if previous.optional else new
    return previous if previous == new else None


def _array(tokens: _Tokens) -> SchemaAndValue:
    result: list[Any] = []
    merger = _Merger()
    while tokens.has_next():
        if tokens.can_consume("]"):
            if merger.common is None:
                return SchemaAndValue(None, result)
            schema = SchemaBuilder.array(merger.common).build()
            return _checked(schema, [_align(merger.common, v) for v in result])
        if tokens.can_consume(","):
            raise _ParseError(f"Unable to parse an empty array element: {tokens.original}")
        element = _parse(tokens, embedded=True)
        merger.merge(element)
        result.append(None if element is None else element.value)
        position = tokens.mark()
        if tokens.can_consume("]"):
            tokens.rewind_to(position)
        elif not tokens.can_consume(","):
            raise _ParseError("Array elements missing ',' delimiter")
    if tokens.previous == ",":
        raise _ParseError(f"Array is missing element after ',': {tokens.original}")
    raise _ParseError(f"Array is missing terminating ']': {tokens.original}")


def _map(tokens: _Tokens) -> SchemaAndValue:
    result: dict[Any, Any] = {}
    keys, values = _Merger(), _Merger()
    while tokens.has_next():
        if tokens.can_consume("}"):
            if keys.common is None:
                return SchemaAndValue(None, result)
            if values.common is None:
                k = keys.common
                return SchemaAndValue(None, {_align(k, key): v for key, v in result.items()})
            schema = SchemaBuilder.map(keys.common, values.common).build()
            k, v = keys.common, values.common
            return _checked(schema, {_align(k, key): _align(v, value) for key, value in result.items()})
        if tokens.can_consume(","):
            raise _ParseError(f"Unable to parse a map entry with no key or value: {tokens.original}")
        key = _parse(tokens, embedded=True)
        if key is None or key.value is None:
            raise _ParseError(f"Map entry may not have a null key: {tokens.original}")
        if not tokens.can_consume(":"):
            raise _ParseError(f"Map entry is missing ':' at {tokens.position()} in {tokens.original}")
        value = _parse(tokens, embedded=True)
        try:
            result[key.value] = None if value is None else value.value
        except TypeError:  # an array or map as a key: Python cannot hash it
            raise _ParseError(f"Map entry has an unhashable key: {tokens.original}") from None
        tokens.can_consume(",")
        keys.merge(key)
        values.merge(value)
    if tokens.previous == ",":
        raise _ParseError(f"Map is missing element after ',': {tokens.original}")
    raise _ParseError(f"Map is missing terminating '}}': {tokens.original}")


def _checked(schema: Schema, value: Any) -> SchemaAndValue:
    # Kafka keeps its pick even when the elements do not fit it (a nested array typed by the
    # last one seen); ours must hold valid data, so such a value goes without a schema.
    try:
        Schema.validate_value(schema, value)
    except DataException:
        return SchemaAndValue(None, value)
    return SchemaAndValue(schema, value)


def _align(schema: Schema, value: Any) -> Any:
    """``value`` converted to the common ``schema`` (Kafka's ``Values.convertTo``)."""
    if value is None:
        raise _ParseError("Unable to convert a null value to a schema that requires a value")
    name = schema.name
    if name in (Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME):
        return _align_temporal(name, value)
    t = schema.type
    if isinstance(value, (datetime.date, datetime.time)) and t in _RANK:
        raise _ParseError(f"Unable to convert {value} ({type(value).__name__}) to a number")
    if t is Type.FLOAT32:
        single = _float32(float(value))
        if single is None:
            raise _ParseError(f"Unable to convert {value} to FLOAT32")
        return single
    if t is Type.FLOAT64:
        return float(value)
    return value


def _align_temporal(name: str, value: Any) -> Any:
    if isinstance(value, datetime.datetime):
        millis = (value - _EPOCH) // datetime.timedelta(milliseconds=1)
    elif isinstance(value, datetime.date):
        millis = (value - _EPOCH.date()).days * _MS_PER_DAY
    elif isinstance(value, datetime.time):
        millis = Time.from_logical(Time.SCHEMA, value)
    elif isinstance(value, int) and not isinstance(value, bool):
        # A number next to temporals is days (Date) or milliseconds (Time, Timestamp).
        millis = value * _MS_PER_DAY if name == Date.LOGICAL_NAME else value
        if name == Time.LOGICAL_NAME and not 0 <= value < _MS_PER_DAY:
            raise _ParseError(f"Time values must be between 0 and {_MS_PER_DAY}ms: {value}")
    else:
        raise _ParseError(f"Unable to convert {value} ({type(value).__name__}) to a temporal value")
    try:
        if name == Date.LOGICAL_NAME:
            return _EPOCH.date() + datetime.timedelta(days=millis // _MS_PER_DAY)
        if name == Time.LOGICAL_NAME:
            return Time.to_logical(Time.SCHEMA, millis % _MS_PER_DAY)
        return _EPOCH + datetime.timedelta(milliseconds=millis)
    except OverflowError:
        raise _ParseError(f"{value} is outside the supported range") from None
