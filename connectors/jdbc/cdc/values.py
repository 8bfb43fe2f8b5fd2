"""PostgreSQL column values, in their text form, to Connect values, mapped as Debezium maps them.

pgoutput sends every value as text (the type's output function) and the snapshot reads
text as well (raw typecasters, see ``snapshot``), so one parser per type serves both.
Every connection of the connector runs with ``DateStyle=ISO``, ``IntervalStyle=iso_8601``,
``TimeZone=UTC``, ``extra_float_digits=3`` and ``bytea_output=hex``
(``connection.SESSION_OPTIONS``); the parsers rely on those formats.

Temporal types follow Debezium's default ``time.precision.mode=adaptive``:

===============================  =====================================================
``date``                         INT32 ``io.debezium.time.Date`` (days since the epoch)
``time(0..3)``                   INT32 ``io.debezium.time.Time`` (ms past midnight)
``time``, ``time(4..6)``         INT64 ``io.debezium.time.MicroTime`` (µs past midnight)
``timestamp(0..3)``              INT64 ``io.debezium.time.Timestamp`` (ms since the epoch)
``timestamp``, ``timestamp(4..6)``  INT64 ``io.debezium.time.MicroTimestamp`` (µs)
``timestamptz``                  STRING ``io.debezium.time.ZonedTimestamp`` (ISO-8601, UTC, ``Z``)
``timetz``                       STRING ``io.debezium.time.ZonedTime`` (ISO-8601, UTC, ``Z``)
``interval``                     INT64 ``io.debezium.time.MicroDuration`` (a month is 30.4375 days)
===============================  =====================================================

``adaptive_time_microseconds`` makes every ``time`` a MicroTime; ``connect`` uses Kafka
Connect's ``Date``/``Time``/``Timestamp`` (millisecond precision). ``±infinity``
timestamps become 9223372036825200000 / -9223372036832400000 as in Debezium, ``±infinity``
dates the INT32 extremes.

Other types: ``bool``, ``bit(1)`` → BOOLEAN; ``int2/int4/int8``, ``oid`` → INT16/INT32/INT64;
``float4/float8`` → FLOAT32/FLOAT64; ``numeric`` per ``decimal.handling.mode`` (``precise``:
Kafka ``Decimal`` with ``connect.decimal.precision``, or ``io.debezium.data.VariableScaleDecimal``
for a numeric without a declared scale; ``double``; ``string``), ``money`` likewise with
``money.fraction.digits``; text types, ``inet``/``cidr``/``macaddr``, ranges, ``citext`` →
STRING; ``json``/``jsonb`` → ``io.debezium.data.Json``; ``xml`` → ``io.debezium.data.Xml``;
``uuid`` → ``io.debezium.data.Uuid``; ``ltree`` → ``io.debezium.data.Ltree``; enums →
``io.debezium.data.Enum`` (``allowed`` lists the labels); ``bit(n)``/``varbit`` →
``io.debezium.data.Bits`` (little-endian bytes); ``bytea`` per ``binary.handling.mode``;
domains as their base type; one-dimensional arrays of any of these → ARRAY.

Any other type (geometric types, ``hstore``, composites, ``tsvector``, ...) is refused with
``UnsupportedTypeError`` (the task fails, naming table, column and type) unless
``include.unknown.datatypes=true``: then the value is passed on as its text, a STRING.
Debezium instead drops such columns with a warning; Sluiceway drops nothing silently.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import enum
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from connect.api import DataException, Date, Schema, SchemaBuilder, Struct, Time, Timestamp, Type
from connect.api import Decimal as DecimalType
from connectors.jdbc.debezium.value_modes import BinaryMode, DecimalMode

__all__ = [
    "BinaryMode",
    "Conversion",
    "DecimalMode",
    "IntervalMode",
    "PgType",
    "TimePrecisionMode",
    "UnsupportedTypeError",
    "ValueSettings",
    "conversion_for",
    "days_from_civil",
    "parse_array",
]


class TimePrecisionMode(enum.StrEnum):
    ADAPTIVE = "adaptive"
    ADAPTIVE_TIME_MICROSECONDS = "adaptive_time_microseconds"
    CONNECT = "connect"


class IntervalMode(enum.StrEnum):
    NUMERIC = "numeric"
    STRING = "string"


@dataclass(frozen=True, slots=True)
class ValueSettings:
    """The connector settings that shape values (Debezium's keys of the same names)."""

    decimal_mode: DecimalMode = DecimalMode.PRECISE
    time_precision_mode: TimePrecisionMode = TimePrecisionMode.ADAPTIVE
    binary_mode: BinaryMode = BinaryMode.BYTES
    interval_mode: IntervalMode = IntervalMode.NUMERIC
    money_fraction_digits: int = 2
    include_unknown: bool = False
    unavailable_placeholder: str = "__debezium_unavailable_value"


@dataclass(frozen=True, slots=True)
class PgType:
    """A PostgreSQL type as the catalog describes it (``pg_type``)."""

    oid: int
    name: str
    namespace: str = "pg_catalog"
    kind: str = "b"  # typtype: b(ase), c(omposite), d(omain), e(num), p(seudo), r(ange), m(ultirange)
    element: PgType | None = None  # arrays: the element type
    base: PgType | None = None  # domains: the type the domain is based on
    base_modifier: int = -1  # domains: the domain's own type modifier (typtypmod)
    labels: tuple[str, ...] = ()  # enums: the labels in sort order

    @property
    def qualified(self) -> str:
        if self.namespace in ("", "pg_catalog"):
            return self.name
        return f"{self.namespace}.{self.name}"


class UnsupportedTypeError(Exception):
    """No mapping for this type (and ``include.unknown.datatypes`` is off)."""

    def __init__(self, pg_type: PgType) -> None:
        super().__init__(pg_type.qualified)
        self.pg_type = pg_type


@dataclass(frozen=True, slots=True)
class Conversion:
    """How one column's text becomes a Connect value."""

    schema: Schema
    parse: Callable[[str], Any]
    #: The value of a required field the server did not send (the non-key columns of a
    #: key-only old tuple): the type's zero, as Debezium's fallback values.
    fallback: Any
    #: What stands in for an unchanged TOASTed value the server left out of an update.
    unavailable: Any


# -- calendar arithmetic (proleptic Gregorian, astronomical years: 1 BC is year 0) -----------


def days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (any year, BC as year <= 0)."""
    year -= month <= 2
    era = year // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def civil_from_days(days: int) -> tuple[int, int, int]:
    """The (year, month, day) ``days`` after 1970-01-01; the inverse of ``days_from_civil``."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + (3 if mp < 10 else -9)
    return yoe + era * 400 + (month <= 2), month, day


_US_PER_SECOND: Final = 1_000_000
_US_PER_DAY: Final = 86_400 * _US_PER_SECOND
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
# Debezium's (and the PostgreSQL JDBC driver's) stand-ins for +/-infinity timestamps.
TIMESTAMP_POSITIVE_INFINITY: Final = 9223372036825200000
TIMESTAMP_NEGATIVE_INFINITY: Final = -9223372036832400000

_DATE = re.compile(r"(\d+)-(\d\d)-(\d\d)( BC)?")
_TIMESTAMP = re.compile(
    r"(\d+)-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?"
    r"(?:([+-])(\d\d)(?::?(\d\d))?(?::?(\d\d))?)?( BC)?"
)
_TIME = re.compile(r"(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(?:([+-])(\d\d)(?::?(\d\d))?(?::?(\d\d))?)?")
_INTERVAL = re.compile(
    r"P(?:(-?\d+)Y)?(?:(-?\d+)M)?(?:(-?\d+)W)?(?:(-?\d+)D)?"
    r"(?:T(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?\d+(?:\.\d+)?)S)?)?"
)


def _fraction_us(digits: str | None) -> int:
    if not digits:
        return 0
    return int((digits + "000000")[:6])


def _offset_us(sign: str | None, hours: str | None, minutes: str | None, seconds: str | None) -> int:
    if sign is None:
        return 0
    total = (int(hours or 0) * 3600 + int(minutes or 0) * 60 + int(seconds or 0)) * _US_PER_SECOND
    return -total if sign == "-" else total


def _bad(text: str, what: str) -> DataException:
    return DataException(f"{text!r} is not a valid {what}")


def _date_days(text: str) -> int:
    if text == "infinity":
        return _INT32_MAX
    if text == "-infinity":
        return _INT32_MIN
    m = _DATE.fullmatch(text)
    if m is None:
        raise _bad(text, "date")
    year = int(m[1])
    if m[4]:
        year = 1 - year
    return days_from_civil(year, int(m[2]), int(m[3]))


def _timestamp_us(text: str) -> int:
    """Microseconds since the epoch (UTC) of a timestamp or timestamptz text."""
    if text == "infinity":
        return TIMESTAMP_POSITIVE_INFINITY
    if text == "-infinity":
        return TIMESTAMP_NEGATIVE_INFINITY
    m = _TIMESTAMP.fullmatch(text)
    if m is None:
        raise _bad(text, "timestamp")
    year = int(m[1])
    if m[12]:
        year = 1 - year
    days = days_from_civil(year, int(m[2]), int(m[3]))
    seconds = int(m[4]) * 3600 + int(m[5]) * 60 + int(m[6])
    return (
        days * _US_PER_DAY
        + seconds * _US_PER_SECOND
        + _fraction_us(m[7])
        - _offset_us(m[8], m[9], m[10], m[11])
    )


def _time_us(text: str) -> int:
    """Microseconds past midnight of a time text (24:00:00 is allowed, as PostgreSQL allows it)."""
    m = _TIME.fullmatch(text)
    if m is None or m[5] is not None:
        raise _bad(text, "time")
    return (int(m[1]) * 3600 + int(m[2]) * 60 + int(m[3])) * _US_PER_SECOND + _fraction_us(m[4])


def _iso_fraction(us: int) -> str:
    return f".{us:06d}".rstrip("0") if us else ""


def _iso_year(year: int) -> str:
    if 0 <= year <= 9999:
        return f"{year:04d}"
    return f"{'+' if year > 0 else '-'}{abs(year):04d}"


def _zoned_timestamp(text: str) -> str:
    """ISO-8601 in UTC with a ``Z``: Debezium's ZonedTimestamp."""
    if text in ("infinity", "-infinity"):
        return text
    us = _timestamp_us(text)
    days, rest = divmod(us, _US_PER_DAY)
    year, month, day = civil_from_days(days)
    seconds, fraction = divmod(rest, _US_PER_SECOND)
    hh, mm, ss = seconds // 3600, seconds // 60 % 60, seconds % 60
    return f"{_iso_year(year)}-{month:02d}-{day:02d}T{hh:02d}:{mm:02d}:{ss:02d}{_iso_fraction(fraction)}Z"


def _zoned_time(text: str) -> str:
    """A timetz in UTC with a ``Z``: Debezium's ZonedTime."""
    m = _TIME.fullmatch(text)
    if m is None:
        raise _bad(text, "time with time zone")
    local = (int(m[1]) * 3600 + int(m[2]) * 60 + int(m[3])) * _US_PER_SECOND + _fraction_us(m[4])
    utc = (local - _offset_us(m[5], m[6], m[7], m[8])) % _US_PER_DAY
    seconds, fraction = divmod(utc, _US_PER_SECOND)
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}{_iso_fraction(fraction)}Z"


@dataclass(frozen=True, slots=True)
class _Interval:
    years: int
    months: int
    days: int
    hours: int
    minutes: int
    seconds: decimal.Decimal


def _interval(text: str) -> _Interval:
    m = _INTERVAL.fullmatch(text)
    if m is None or text == "P":
        raise _bad(text, "interval (IntervalStyle iso_8601)")
    return _Interval(
        years=int(m[1] or 0),
        months=int(m[2] or 0),
        days=int(m[4] or 0) + 7 * int(m[3] or 0),
        hours=int(m[5] or 0),
        minutes=int(m[6] or 0),
        seconds=decimal.Decimal(m[7] or 0),
    )


# Debezium's MicroDuration: a month is 365.25 / 12 = 30.4375 days = 2 629 800 seconds.
_US_PER_MONTH: Final = 2_629_800 * _US_PER_SECOND


def _micro_duration(text: str) -> int:
    i = _interval(text)
    return (
        (i.years * 12 + i.months) * _US_PER_MONTH
        + i.days * _US_PER_DAY
        + (i.hours * 3600 + i.minutes * 60) * _US_PER_SECOND
        + int(i.seconds * _US_PER_SECOND)
    )


def _plain(d: decimal.Decimal) -> str:
    """A decimal without exponent or trailing fractional zeros (``6.780`` → ``6.78``)."""
    text = format(d, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text or "0"


def _interval_string(text: str) -> str:
    i = _interval(text)
    return f"P{i.years}Y{i.months}M{i.days}DT{i.hours}H{i.minutes}M{_plain(i.seconds)}S"


# -- arrays ----------------------------------------------------------------------------------------


def parse_array(text: str, element: Callable[[str], Any]) -> list[Any]:
    """A PostgreSQL array literal (``{1,NULL,"a b"}``) as a (nested) list, elements parsed.

    Handles quoting and backslash escapes, ``NULL``, nested braces (multi-dimensional
    arrays become nested lists) and a leading ``[lower:upper]=`` dimension decoration.
    """
    if text.startswith("["):
        eq = text.find("=")
        if eq < 0:
            raise _bad(text, "array")
        text = text[eq + 1 :]
    if not text.startswith("{"):
        raise _bad(text, "array")
    value, end = _array_items(text, 0, element)
    if text[end:].strip():
        raise _bad(text, "array")
    return value


def _array_items(text: str, pos: int, element: Callable[[str], Any]) -> tuple[list[Any], int]:
    assert text[pos] == "{"
    pos += 1
    items: list[Any] = []
    n = len(text)
    if pos < n and text[pos] == "}":
        return items, pos + 1
    while pos < n:
        c = text[pos]
        if c == "{":
            nested, pos = _array_items(text, pos, element)
            items.append(nested)
        elif c == '"':
            pos += 1
            chars = []
            while pos < n and text[pos] != '"':
                if text[pos] == "\\" and pos + 1 < n:
                    pos += 1
                chars.append(text[pos])
                pos += 1
            if pos >= n:
                raise _bad(text, "array (unterminated quote)")
            pos += 1
            items.append(element("".join(chars)))
        else:
            end = pos
            while end < n and text[end] not in ",}":
                end += 1
            raw = text[pos:end].strip()
            items.append(None if raw.upper() == "NULL" else element(raw))
            pos = end
        if pos >= n:
            break
        if text[pos] == ",":
            pos += 1
            continue
        if text[pos] == "}":
            return items, pos + 1
        raise _bad(text, "array")
    raise _bad(text, "array (unterminated)")


# -- the mappings ----------------------------------------------------------------------------------

_INT_OIDS: Final = {21: Type.INT16, 23: Type.INT32, 20: Type.INT64, 26: Type.INT64}
_STRING_OIDS: Final = frozenset(
    {
        18,  # "char"
        19,  # name
        25,  # text
        1042,  # bpchar
        1043,  # varchar
        650,  # cidr
        869,  # inet
        829,  # macaddr
        774,  # macaddr8
        3904,  # int4range
        3906,  # numrange
        3908,  # tsrange
        3910,  # tstzrange
        3912,  # daterange
        3926,  # int8range
    }
)
_SEMANTIC_STRING_OIDS: Final = {
    114: "io.debezium.data.Json",
    3802: "io.debezium.data.Json",
    142: "io.debezium.data.Xml",
    2950: "io.debezium.data.Uuid",
}
# Extension types have no fixed OIDs: they are known by name.
_STRING_TYPE_NAMES: Final = {"citext": None, "ltree": "io.debezium.data.Ltree"}


def _semantic(builder: SchemaBuilder, name: str) -> SchemaBuilder:
    return builder.name(name).version(1)


def _finish(builder: SchemaBuilder, optional: bool) -> Schema:
    return (builder.optional() if optional else builder).build()


def _identity(text: str) -> str:
    return text


def _boolean(text: str) -> bool:
    if text == "t":
        return True
    if text == "f":
        return False
    raise _bad(text, "boolean")


def _bit_boolean(text: str) -> bool:
    if text in ("0", "1"):
        return text == "1"
    raise _bad(text, "bit(1)")


def _bits(text: str) -> bytes:
    """A bit string as little-endian bytes (Debezium's io.debezium.data.Bits)."""
    if text.strip("01"):
        raise _bad(text, "bit string")
    if not text:
        return b""
    return int(text, 2).to_bytes((len(text) + 7) // 8, "little")


def _bytea(text: str) -> bytes:
    if not text.startswith("\\x"):
        raise _bad(text[:20], "bytea in hex format (bytea_output=hex)")
    try:
        return bytes.fromhex(text[2:])
    except ValueError:
        raise _bad(text[:20], "bytea in hex format") from None


def _decimal(text: str) -> decimal.Decimal | None:
    """A numeric text; None for NaN and infinities, which Kafka's Decimal cannot carry."""
    try:
        value = decimal.Decimal(text)
    except decimal.InvalidOperation:
        raise _bad(text, "numeric") from None
    return value if value.is_finite() else None


def _decimal_column(texts: Sequence[str]) -> list[decimal.Decimal | None]:
    """``_decimal`` over a column of texts, parsed at C level (``benchmarks/jdbc_source.py``);
    a malformed text raises ``decimal.InvalidOperation``."""
    values: list[decimal.Decimal | None] = list(map(decimal.Decimal, texts))
    if not all(map(decimal.Decimal.is_finite, values)):  # type: ignore[arg-type]
        return [None if v is None or not v.is_finite() else v for v in values]
    return values


#: Parsers of a whole column of texts (none NULL) that give what ``parse`` gives per text,
#: a Python call per value fewer; what they raise, the per-text parse names.
COLUMN_PARSERS: dict[Callable[[str], Any], Callable[[Sequence[str]], list[Any]]] = {
    _identity: list,
    _decimal: _decimal_column,
}


def _money(text: str, scale: int) -> decimal.Decimal:
    """``$1,234.56`` / ``-$1.50`` / ``($1.50)`` → Decimal at ``scale`` (lc_monetary=C format)."""
    negative = "-" in text or text.startswith("(")
    digits = "".join(c for c in text if c.isdigit() or c == ".")
    if not digits:
        raise _bad(text, "money")
    value = decimal.Decimal(digits).quantize(decimal.Decimal(1).scaleb(-scale))
    return -value if negative else value


def _unscaled_bytes(unscaled: int) -> bytes:
    """Java's ``BigInteger.toByteArray``: minimal big-endian two's complement."""
    length = (unscaled if unscaled >= 0 else ~unscaled).bit_length() // 8 + 1
    return unscaled.to_bytes(length, "big", signed=True)


VARIABLE_SCALE_DECIMAL: Final = (
    SchemaBuilder.struct()
    .name("io.debezium.data.VariableScaleDecimal")
    .version(1)
    .doc("Variable scaled decimal")
    .field("scale", Schema.INT32_SCHEMA)
    .field("value", Schema.BYTES_SCHEMA)
)
_VSD_REQUIRED: Final = VARIABLE_SCALE_DECIMAL.build()
_VSD_OPTIONAL: Final = VARIABLE_SCALE_DECIMAL.optional().build()


def _variable_scale(schema: Schema) -> Callable[[str], Struct | None]:
    def parse(text: str) -> Struct | None:
        value = _decimal(text)
        if value is None:
            return None
        sign, digits, exponent = value.as_tuple()
        assert isinstance(exponent, int)
        unscaled = int("".join(map(str, digits))) * (10 ** max(exponent, 0))
        return (
            Struct(schema)
            .put("scale", max(-exponent, 0))
            .put("value", _unscaled_bytes(-unscaled if sign else unscaled))
        )

    return parse


def _numeric(modifier: int, optional: bool, settings: ValueSettings) -> Conversion:
    mode = settings.decimal_mode
    if mode is DecimalMode.DOUBLE:
        return _conversion(_finish(SchemaBuilder.float64(), optional), float)
    if mode is DecimalMode.STRING:
        return _conversion(
            _finish(SchemaBuilder.string(), optional),
            lambda text: "NAN" if text == "NaN" else text,
        )
    if modifier < 0:  # numeric without a declared precision: the scale varies per value
        schema = _VSD_OPTIONAL if optional else _VSD_REQUIRED
        return _conversion(schema, _variable_scale(schema))
    precision = ((modifier - 4) >> 16) & 0xFFFF
    # An 11-bit signed field: PostgreSQL 15 allows negative scales.
    scale = (((modifier - 4) & 0x7FF) ^ 1024) - 1024
    builder = DecimalType.builder(scale).parameter("connect.decimal.precision", str(precision))
    return _conversion(_finish(builder, optional), _decimal)


def _money_conversion(optional: bool, settings: ValueSettings) -> Conversion:
    scale = settings.money_fraction_digits
    mode = settings.decimal_mode
    if mode is DecimalMode.DOUBLE:
        return _conversion(_finish(SchemaBuilder.float64(), optional), lambda t: float(_money(t, scale)))
    if mode is DecimalMode.STRING:
        return _conversion(_finish(SchemaBuilder.string(), optional), lambda t: format(_money(t, scale), "f"))
    return _conversion(_finish(DecimalType.builder(scale), optional), lambda t: _money(t, scale))


def _date(optional: bool, settings: ValueSettings) -> Conversion:
    if settings.time_precision_mode is TimePrecisionMode.CONNECT:

        def as_date(text: str) -> datetime.date:
            if text in ("infinity", "-infinity"):
                return datetime.date.max if text == "infinity" else datetime.date.min
            days = _date_days(text)
            try:
                return datetime.date(1970, 1, 1) + datetime.timedelta(days=days)
            except OverflowError:
                raise _bad(text, "date Kafka's Date can carry") from None

        return _conversion(_finish(Date.builder(), optional), as_date)
    return _conversion(
        _finish(_semantic(SchemaBuilder.int32(), "io.debezium.time.Date"), optional), _date_days
    )


def _time(modifier: int, optional: bool, settings: ValueSettings) -> Conversion:
    precision = modifier if modifier >= 0 else 6
    mode = settings.time_precision_mode
    if mode is TimePrecisionMode.CONNECT:

        def as_time(text: str) -> datetime.time:
            us = min(_time_us(text), _US_PER_DAY - 1)  # 24:00:00 has no datetime.time
            seconds, fraction = divmod(us, _US_PER_SECOND)
            return datetime.time(seconds // 3600, seconds // 60 % 60, seconds % 60, fraction)

        return _conversion(_finish(Time.builder(), optional), as_time)
    if mode is TimePrecisionMode.ADAPTIVE and precision <= 3:
        return _conversion(
            _finish(_semantic(SchemaBuilder.int32(), "io.debezium.time.Time"), optional),
            lambda text: _time_us(text) // 1000,
        )
    return _conversion(
        _finish(_semantic(SchemaBuilder.int64(), "io.debezium.time.MicroTime"), optional), _time_us
    )


def _timestamp(modifier: int, optional: bool, settings: ValueSettings) -> Conversion:
    precision = modifier if modifier >= 0 else 6
    if settings.time_precision_mode is TimePrecisionMode.CONNECT:
        epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)

        def as_datetime(text: str) -> datetime.datetime:
            if text in ("infinity", "-infinity"):
                edge = datetime.datetime.max if text == "infinity" else datetime.datetime.min
                return edge.replace(tzinfo=datetime.UTC)
            try:
                return epoch + datetime.timedelta(microseconds=_timestamp_us(text))
            except OverflowError:
                raise _bad(text, "timestamp Kafka's Timestamp can carry") from None

        return _conversion(_finish(Timestamp.builder(), optional), as_datetime)
    if precision <= 3:

        def millis(text: str) -> int:
            us = _timestamp_us(text)
            if us in (TIMESTAMP_POSITIVE_INFINITY, TIMESTAMP_NEGATIVE_INFINITY):
                return us
            return us // 1000

        return _conversion(
            _finish(_semantic(SchemaBuilder.int64(), "io.debezium.time.Timestamp"), optional), millis
        )
    return _conversion(
        _finish(_semantic(SchemaBuilder.int64(), "io.debezium.time.MicroTimestamp"), optional), _timestamp_us
    )


def _interval_conversion(optional: bool, settings: ValueSettings) -> Conversion:
    if settings.interval_mode is IntervalMode.STRING:
        return _conversion(
            _finish(_semantic(SchemaBuilder.string(), "io.debezium.time.Interval"), optional),
            _interval_string,
        )
    return _conversion(
        _finish(_semantic(SchemaBuilder.int64(), "io.debezium.time.MicroDuration"), optional), _micro_duration
    )


def _binary(optional: bool, settings: ValueSettings) -> Conversion:
    mode = settings.binary_mode
    if mode is BinaryMode.BYTES:
        return _conversion(_finish(SchemaBuilder.bytes(), optional), _bytea)
    encode: Callable[[bytes], str]
    if mode is BinaryMode.BASE64:
        encode = lambda b: base64.b64encode(b).decode("ascii")  # noqa: E731
    elif mode is BinaryMode.BASE64_URL_SAFE:
        encode = lambda b: base64.urlsafe_b64encode(b).decode("ascii")  # noqa: E731
    else:
        encode = bytes.hex
    return _conversion(_finish(SchemaBuilder.string(), optional), lambda text: encode(_bytea(text)))


def _bit(pg_type: PgType, modifier: int, optional: bool) -> Conversion:
    if pg_type.oid == 1560 and modifier in (-1, 1):  # bit, bit(1)
        return _conversion(_finish(SchemaBuilder.boolean(), optional), _bit_boolean)
    length = modifier if modifier > 0 else _INT32_MAX
    builder = _semantic(SchemaBuilder.bytes(), "io.debezium.data.Bits").parameter("length", str(length))
    return _conversion(_finish(builder, optional), _bits)


def _array(pg_type: PgType, modifier: int, optional: bool, settings: ValueSettings) -> Conversion:
    assert pg_type.element is not None
    item = conversion_for(pg_type.element, modifier, True, settings)
    schema = _finish(SchemaBuilder.array(item.schema), optional)
    return Conversion(
        schema=schema,
        parse=lambda text: parse_array(text, item.parse),
        fallback=[],
        unavailable=[item.unavailable] if item.unavailable is not None else None,
    )


def _conversion(schema: Schema, parse: Callable[[str], Any]) -> Conversion:
    return Conversion(schema, parse, _fallback(schema), None)


def _fallback(schema: Schema) -> Any:
    """The zero value Debezium puts in a required field whose value the server did not send."""
    if schema.optional:
        return None
    name = schema.name
    if name == DecimalType.LOGICAL_NAME:
        return decimal.Decimal(0)
    if name == Date.LOGICAL_NAME:
        return datetime.date(1970, 1, 1)
    if name == Time.LOGICAL_NAME:
        return datetime.time(0)
    if name == Timestamp.LOGICAL_NAME:
        return datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
    t = schema.type
    if t is Type.STRUCT:  # VariableScaleDecimal
        return Struct(schema).put("scale", 0).put("value", b"\x00")
    return {
        Type.INT8: 0,
        Type.INT16: 0,
        Type.INT32: 0,
        Type.INT64: 0,
        Type.FLOAT32: 0.0,
        Type.FLOAT64: 0.0,
        Type.BOOLEAN: False,
        Type.STRING: "",
        Type.BYTES: b"",
        Type.ARRAY: [],
    }.get(t)


def _with_placeholder(conversion: Conversion, settings: ValueSettings) -> Conversion:
    """Strings and plain bytes carry Debezium's placeholder for an unchanged TOASTed value."""
    schema = conversion.schema
    value: str | bytes
    if schema.type is Type.STRING:
        value = settings.unavailable_placeholder
    elif schema.type is Type.BYTES and schema.name is None:
        value = settings.unavailable_placeholder.encode()
    else:
        return conversion
    return Conversion(schema, conversion.parse, conversion.fallback, value)


def conversion_for(pg_type: PgType, modifier: int, optional: bool, settings: ValueSettings) -> Conversion:
    """The schema and parser of a column of ``pg_type`` (with type modifier ``modifier``).

    Raises ``UnsupportedTypeError`` for a type without a mapping, unless
    ``settings.include_unknown`` (then: its text, as an optional-or-not STRING).
    """
    return _with_placeholder(_conversion_for(pg_type, modifier, optional, settings), settings)


def _conversion_for(pg_type: PgType, modifier: int, optional: bool, settings: ValueSettings) -> Conversion:
    oid = pg_type.oid
    if pg_type.kind == "d" and pg_type.base is not None:
        return _conversion_for(
            pg_type.base, modifier if modifier >= 0 else pg_type.base_modifier, optional, settings
        )
    if pg_type.element is not None:
        return _array(pg_type, modifier, optional, settings)
    if oid == 16:
        return _conversion(_finish(SchemaBuilder.boolean(), optional), _boolean)
    int_type = _INT_OIDS.get(oid)
    if int_type is not None:
        return _conversion(_finish(SchemaBuilder.type(int_type), optional), int)
    if oid == 700:
        return _conversion(_finish(SchemaBuilder.float32(), optional), float)
    if oid == 701:
        return _conversion(_finish(SchemaBuilder.float64(), optional), float)
    if oid == 1700:
        return _numeric(modifier, optional, settings)
    if oid == 790:
        return _money_conversion(optional, settings)
    if oid in _STRING_OIDS or pg_type.kind == "r":
        return _conversion(_finish(SchemaBuilder.string(), optional), _identity)
    semantic = _SEMANTIC_STRING_OIDS.get(oid)
    if semantic is not None:
        return _conversion(_finish(_semantic(SchemaBuilder.string(), semantic), optional), _identity)
    if oid == 17:
        return _binary(optional, settings)
    if oid in (1560, 1562):
        return _bit(pg_type, modifier, optional)
    if oid == 1082:
        return _date(optional, settings)
    if oid == 1083:
        return _time(modifier, optional, settings)
    if oid == 1114:
        return _timestamp(modifier, optional, settings)
    if oid == 1184:
        return _conversion(
            _finish(_semantic(SchemaBuilder.string(), "io.debezium.time.ZonedTimestamp"), optional),
            _zoned_timestamp,
        )
    if oid == 1266:
        return _conversion(
            _finish(_semantic(SchemaBuilder.string(), "io.debezium.time.ZonedTime"), optional), _zoned_time
        )
    if oid == 1186:
        return _interval_conversion(optional, settings)
    if pg_type.kind == "e":
        builder = _semantic(SchemaBuilder.string(), "io.debezium.data.Enum").parameter(
            "allowed", ",".join(pg_type.labels)
        )
        return _conversion(_finish(builder, optional), _identity)
    if pg_type.name in _STRING_TYPE_NAMES:
        name = _STRING_TYPE_NAMES[pg_type.name]
        builder = SchemaBuilder.string() if name is None else _semantic(SchemaBuilder.string(), name)
        return _conversion(_finish(builder, optional), _identity)
    if settings.include_unknown:
        return _conversion(_finish(SchemaBuilder.string(), optional), _identity)
    raise UnsupportedTypeError(pg_type)
