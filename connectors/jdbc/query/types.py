"""Column types → Connect schemas, and raw driver values → Connect values (pure, no I/O).

``map_column`` looks at a column's SQLAlchemy type (reflected, or worked out from a
query's result metadata) once, and returns the field's schema with the function that
converts each raw DB-API value; nothing is looked up per row.

=========================================  ============================================
SQL type                                   Connect schema
=========================================  ============================================
BOOLEAN, MySQL TINYINT(1) and BIT(1)       BOOLEAN
TINYINT / SMALLINT / INTEGER / BIGINT      INT8 / INT16 / INT32 / INT64 (unsigned MySQL
                                           types one size up; BIGINT UNSIGNED: Decimal)
SQLite INTEGER                             INT64 (SQLite integers are 64-bit)
REAL, MySQL FLOAT                          FLOAT32 (SQLite REAL: FLOAT64)
DOUBLE PRECISION, DOUBLE, FLOAT(>24)       FLOAT64
NUMERIC(p, s), DECIMAL(p, s)               Decimal(s), or by ``numeric.mapping``
NUMERIC without a precision                STRING (exact), FLOAT64 with best_fit_eager_double
DATE / TIME / TIMESTAMP, DATETIME          Date / Time / Timestamp
CHAR, VARCHAR, TEXT, ENUM, SET, UUID, JSON STRING
BYTEA, BLOB, BINARY, VARBINARY, BIT(n>1)   BYTES
anything else (INTERVAL, arrays, ...)      STRING (the value's text)
=========================================  ============================================

Nullable columns get optional schemas. Timestamps come out as aware UTC datetimes:
values with a time zone are converted, naive ones (TIMESTAMP WITHOUT TIME ZONE,
MySQL DATETIME) are taken as wall-clock times in ``db.timezone``. A TIME WITH TIME
ZONE is converted to UTC; a plain TIME or DATE is kept as it is.
"""

from __future__ import annotations

import datetime as dt
import decimal
import enum
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import types as sat
from sqlalchemy.dialects import mysql

from connect.api import DataException, Date, Decimal, Schema, SchemaBuilder, Time, Timestamp

Converter = Callable[[Any], Any]
"""Turns one raw, non-null DB-API value into the Connect value of its field."""

#: Decimal schema parameter with the column's precision (as Confluent's connector sets it).
PRECISION_PARAMETER = "connect.decimal.precision"
# Integral NUMERICs of up to 18 digits fit an INT64 (Confluent's MAX_INTEGER_TYPE_PRECISION).
_MAX_INTEGER_PRECISION = 18
_UTC = dt.UTC
_EPOCH_DAY = dt.date(1970, 1, 1)


class NumericMapping(enum.Enum):
    """``numeric.mapping``: how NUMERIC/DECIMAL columns map (Confluent's names)."""

    NONE = "none"
    PRECISION_ONLY = "precision_only"
    BEST_FIT = "best_fit"
    BEST_FIT_EAGER_DOUBLE = "best_fit_eager_double"


@dataclass(frozen=True, slots=True)
class ColumnSpec:
    """What the mapping needs to know about a column."""

    name: str
    type: sat.TypeEngine[Any]
    nullable: bool = True


@dataclass(frozen=True, slots=True)
class FieldMapping:
    """A column's Connect schema and the converter of its raw values."""

    schema: Schema
    convert: Converter


def map_column(
    spec: ColumnSpec,
    dialect: str,
    numeric_mapping: NumericMapping = NumericMapping.NONE,
    zone: dt.tzinfo = _UTC,
) -> FieldMapping:
    """The Connect schema of ``spec`` on a ``dialect`` database (SQLAlchemy's dialect name:
    ``postgresql``, ``mysql``, ``sqlite``, ...) and its value converter; ``zone`` is
    ``db.timezone``, where naive timestamps are read."""
    t = spec.type
    optional = spec.nullable
    if isinstance(t, sat.Boolean):
        return _mapped(SchemaBuilder.boolean(), optional, _to_bool)
    if isinstance(t, mysql.BIT):
        if (t.length or 1) == 1:
            return _mapped(SchemaBuilder.boolean(), optional, _to_bool)
        return _mapped(SchemaBuilder.bytes(), optional, _to_bytes)
    if isinstance(t, mysql.TINYINT) and t.display_width == 1:
        # MySQL's BOOLEAN is TINYINT(1); Connector/J (tinyInt1isBit) reads it as a boolean too.
        return _mapped(SchemaBuilder.boolean(), optional, _to_bool)
    if isinstance(t, mysql.YEAR):
        return _mapped(SchemaBuilder.int16(), optional, int)
    if isinstance(t, sat.Integer):
        return _integer(t, dialect, optional)
    if isinstance(t, sat.Float):
        return _mapped(_float_builder(t, dialect), optional, float)
    if isinstance(t, sat.Numeric):
        return numeric_field(t.precision, t.scale, numeric_mapping, optional)
    if isinstance(t, sat.DateTime):
        return _mapped(Timestamp.builder(), optional, timestamp_converter(zone))
    if isinstance(t, sat.Date):
        return _mapped(Date.builder(), optional, _to_date)
    if isinstance(t, sat.Time):
        return _mapped(Time.builder(), optional, _to_time)
    if isinstance(t, sat._Binary):
        return _mapped(SchemaBuilder.bytes(), optional, _to_bytes)
    if isinstance(t, sat.JSON):
        return _mapped(SchemaBuilder.string(), optional, _json_text)
    if isinstance(t, sat.String):
        return _mapped(SchemaBuilder.string(), optional, _to_str)
    # UUID, INTERVAL, arrays, types SQLite leaves undeclared: their text, rather than
    # dropping the column.
    return _mapped(SchemaBuilder.string(), optional, _to_str)


def _mapped(builder: SchemaBuilder, optional: bool, convert: Converter) -> FieldMapping:
    if optional:
        builder.optional()
    return FieldMapping(builder.build(), convert)


def _integer(t: sat.Integer, dialect: str, optional: bool) -> FieldMapping:
    unsigned = bool(getattr(t, "unsigned", False))
    builder: SchemaBuilder
    if isinstance(t, mysql.TINYINT):
        builder = SchemaBuilder.int16() if unsigned else SchemaBuilder.int8()
    elif isinstance(t, sat.SmallInteger):
        builder = SchemaBuilder.int32() if unsigned else SchemaBuilder.int16()
    elif isinstance(t, mysql.MEDIUMINT):
        builder = SchemaBuilder.int32()
    elif isinstance(t, sat.BigInteger):
        if unsigned:  # up to 2**64 - 1: more than an INT64 holds
            return _mapped(
                Decimal.builder(0).parameter(PRECISION_PARAMETER, "20"), optional, _decimal_converter(0)
            )
        builder = SchemaBuilder.int64()
    elif dialect == "sqlite" or unsigned:
        builder = SchemaBuilder.int64()
    else:
        builder = SchemaBuilder.int32()
    return _mapped(builder, optional, int)


def _float_builder(t: sat.Float[Any], dialect: str) -> SchemaBuilder:
    if dialect == "sqlite" or isinstance(t, sat.Double):
        return SchemaBuilder.float64()  # SQLite's REAL is an 8-byte float
    if isinstance(t, (sat.REAL, mysql.FLOAT)) and (t.precision is None or t.precision <= 24):
        return SchemaBuilder.float32()
    if t.precision is not None and t.precision <= 24:
        return SchemaBuilder.float32()
    return SchemaBuilder.float64()


def numeric_field(
    precision: int | None,
    scale: int | None,
    mapping: NumericMapping = NumericMapping.NONE,
    optional: bool = True,
) -> FieldMapping:
    """A NUMERIC/DECIMAL(precision, scale) column under ``numeric.mapping`` (Confluent's rules):

    - ``none``: always Decimal(scale);
    - ``precision_only``: scale 0 and at most 18 digits → the smallest INT8..INT64 that
      holds the precision; else Decimal;
    - ``best_fit``: at most 18 digits → an integer type when scale ≤ 0, FLOAT64 when
      scale > 0; else Decimal;
    - ``best_fit_eager_double``: FLOAT64 whenever scale > 0; else as ``best_fit``.

    A NUMERIC without precision (PostgreSQL's unconstrained ``numeric``) has no fixed
    scale a Decimal schema could carry: it maps to the exact text (STRING), or to
    FLOAT64 under ``best_fit_eager_double``.
    """
    if precision is None or precision <= 0:
        if mapping is NumericMapping.BEST_FIT_EAGER_DOUBLE:
            return _mapped(SchemaBuilder.float64(), optional, float)
        return _mapped(SchemaBuilder.string(), optional, _decimal_text)
    scale = scale or 0
    fits_integer = precision <= _MAX_INTEGER_PRECISION
    if mapping is NumericMapping.PRECISION_ONLY and scale == 0 and fits_integer:
        return _mapped(_integer_for(precision), optional, int)
    if mapping is NumericMapping.BEST_FIT and fits_integer:
        if scale <= 0:
            return _mapped(_integer_for(precision), optional, int)
        return _mapped(SchemaBuilder.float64(), optional, float)
    if mapping is NumericMapping.BEST_FIT_EAGER_DOUBLE:
        if scale > 0:
            return _mapped(SchemaBuilder.float64(), optional, float)
        if fits_integer:
            return _mapped(_integer_for(precision), optional, int)
    builder = Decimal.builder(scale).parameter(PRECISION_PARAMETER, str(precision))
    return _mapped(builder, optional, _decimal_converter(scale))


def _integer_for(precision: int) -> SchemaBuilder:
    if precision > 9:
        return SchemaBuilder.int64()
    if precision > 4:
        return SchemaBuilder.int32()
    if precision > 2:
        return SchemaBuilder.int16()
    return SchemaBuilder.int8()


# -- converters --------------------------------------------------------------------------------


def _to_bool(value: Any) -> bool:
    if isinstance(value, (bytes, bytearray)):  # MySQL BIT(1)
        return any(value)
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in ("t", "true", "1", "y", "yes"):
            return True
        if lowered in ("f", "false", "0", "n", "no"):
            return False
        raise DataException(f"{value!r} is not a boolean")
    return bool(value)


def _to_bytes(value: Any) -> bytes:
    if isinstance(value, str):
        return value.encode()
    return bytes(value)


def _to_str(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, decimal.Decimal):
        return _decimal_text(value)
    return str(value)


def _json_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode()
    return json.dumps(value, ensure_ascii=False, default=str)


def _as_decimal(value: Any) -> decimal.Decimal:
    if isinstance(value, decimal.Decimal):
        return value
    if isinstance(value, float):
        return decimal.Decimal(repr(value))  # the shortest text that reads back as this float
    return decimal.Decimal(value)


def _decimal_text(value: Any) -> str:
    return format(_as_decimal(value), "f")


def _decimal_converter(scale: int) -> Converter:
    quantum = decimal.Decimal(1).scaleb(-scale)

    def convert(value: Any) -> decimal.Decimal:
        d = _as_decimal(value)
        exponent = d.as_tuple().exponent
        if exponent == -scale or not d.is_finite():
            return d
        return d.quantize(quantum)

    return convert


def _parse_datetime(value: str) -> dt.datetime:
    try:
        return dt.datetime.fromisoformat(value.strip())
    except ValueError:
        raise DataException(f"{value!r} is not a date and time (ISO 8601)") from None


def timestamp_converter(zone: dt.tzinfo) -> Callable[[Any], dt.datetime]:
    """Raw timestamp → aware UTC datetime; naive values are wall-clock times in ``zone``."""

    def convert(value: Any) -> dt.datetime:
        moment: dt.datetime
        if isinstance(value, dt.datetime):
            moment = value
        elif isinstance(value, str):  # SQLite keeps timestamps as text
            moment = _parse_datetime(value)
        elif isinstance(value, dt.date):
            moment = dt.datetime.combine(value, dt.time())
        else:
            raise DataException(f"{value!r} ({type(value).__name__}) is not a timestamp")
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=zone)
        return moment.astimezone(_UTC)

    return convert


def _to_date(value: Any) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value.strip()[:10])
        except ValueError:
            raise DataException(f"{value!r} is not a date (YYYY-MM-DD)") from None
    raise DataException(f"{value!r} ({type(value).__name__}) is not a date")


def _to_time(value: Any) -> dt.time:
    if isinstance(value, dt.timedelta):  # MySQL's TIME is a duration (-838:59:59 .. 838:59:59)
        if not dt.timedelta(0) <= value < dt.timedelta(days=1):
            raise DataException(f"TIME value {value} is not a time of day (00:00:00 to 23:59:59.999999)")
        return (dt.datetime.min + value).time()
    if isinstance(value, str):
        try:
            value = dt.time.fromisoformat(value.strip())
        except ValueError:
            raise DataException(f"{value!r} is not a time of day (HH:MM:SS)") from None
    if not isinstance(value, dt.time):
        raise DataException(f"{value!r} ({type(value).__name__}) is not a time of day")
    if value.tzinfo is not None:
        offset = value.utcoffset() or dt.timedelta(0)
        moment = dt.datetime.combine(_EPOCH_DAY, value.replace(tzinfo=None)) - offset
        return moment.time()
    return value


#: Converters that return a raw value of the given (exact) type unchanged.
_PASSTHROUGH: dict[Any, type] = {
    int: int,
    float: float,
    _to_str: str,
    _json_text: str,
    _to_bytes: bytes,
    _to_bool: bool,
    _to_date: dt.date,
}


def passthrough_type(convert: Converter) -> type | None:
    """The raw value type ``convert`` returns as it is (so it need not be called), if any."""
    return _PASSTHROUGH.get(convert)
