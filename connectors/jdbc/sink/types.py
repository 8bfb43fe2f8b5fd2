"""Connect schemas to SQL column types, and Connect values to what the driver binds. Pure.

``column_type(schema, dialect, key)`` is the type a column gets when the sink creates or
evolves a table (Confluent's mapping, the table in ``docs/connectors/jdbc-sink.md``);
``value_converter(schema, zone)`` turns a field's Connect value into the bound parameter,
worked out once per schema so a batch costs one call per non-trivial value.

Debezium's semantic types (what its MySQL and PostgreSQL sources emit) map to proper
column types, as Debezium's JDBC sink maps them: ``io.debezium.time.Date`` (INT32 days)
→ DATE, ``Time``/``MicroTime``/``NanoTime`` → TIME, ``Timestamp``/``MicroTimestamp``/
``NanoTimestamp`` (wall-clock time, no zone) → TIMESTAMP, ``ZonedTimestamp`` (ISO-8601)
→ TIMESTAMP (WITH TIME ZONE on PostgreSQL), ``Json``/``Enum``/``EnumSet``/``Uuid``/``Xml``
→ TEXT, ``Year`` → INTEGER, ``Bits`` → bytes, ``VariableScaleDecimal`` → NUMERIC.

A string column of a key is VARCHAR(255) on MySQL/MariaDB, which cannot index TEXT.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from sqlalchemy import types as sat
from sqlalchemy.dialects import mysql, postgresql, sqlite
from sqlalchemy.dialects.sqlite.pysqlite import _SQLite_pysqliteTimeStamp

from connect.api import Date, Decimal, Schema, Struct, Time, Timestamp, Type

Converter = Callable[[Any], Any]

DEBEZIUM_DATE = "io.debezium.time.Date"
DEBEZIUM_TIME = "io.debezium.time.Time"
DEBEZIUM_MICRO_TIME = "io.debezium.time.MicroTime"
DEBEZIUM_NANO_TIME = "io.debezium.time.NanoTime"
DEBEZIUM_TIMESTAMP = "io.debezium.time.Timestamp"
DEBEZIUM_MICRO_TIMESTAMP = "io.debezium.time.MicroTimestamp"
DEBEZIUM_NANO_TIMESTAMP = "io.debezium.time.NanoTimestamp"
DEBEZIUM_ZONED_TIMESTAMP = "io.debezium.time.ZonedTimestamp"
DEBEZIUM_YEAR = "io.debezium.time.Year"
DEBEZIUM_VARIABLE_DECIMAL = "io.debezium.data.VariableScaleDecimal"
_TEXT_NAMES = frozenset(
    {
        "io.debezium.data.Json",
        "io.debezium.data.Enum",
        "io.debezium.data.EnumSet",
        "io.debezium.data.Uuid",
        "io.debezium.data.Xml",
        "io.debezium.time.ZonedTime",
    }
)
_TIME_UNITS = {DEBEZIUM_TIME: 1_000, DEBEZIUM_MICRO_TIME: 1, DEBEZIUM_NANO_TIME: 0}
_TIMESTAMP_UNITS = {DEBEZIUM_TIMESTAMP: 1_000, DEBEZIUM_MICRO_TIMESTAMP: 1, DEBEZIUM_NANO_TIMESTAMP: 0}
_EPOCH_DATE = dt.date(1970, 1, 1)
_EPOCH = dt.datetime(1970, 1, 1)
_MIDNIGHT = dt.datetime(1970, 1, 1)
_KEY_STRING_LENGTH = 255
_INTEGERS = frozenset({Type.INT8, Type.INT16, Type.INT32, Type.INT64})


class UnsupportedType(ValueError):
    """A schema no column type holds (ARRAY, MAP, STRUCT)."""


def _fraction(name: str | None) -> int:
    """Fractional second digits a temporal type carries."""
    if name in (Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME, DEBEZIUM_TIME, DEBEZIUM_TIMESTAMP):
        return 3
    return 6


def column_type(schema: Schema, dialect: str, key: bool = False) -> sat.TypeEngine[Any]:
    """The SQL type of a column holding ``schema``'s values in ``dialect`` (SQLAlchemy's
    dialect name: postgresql, mysql, mariadb, sqlite, ...)."""
    my = dialect in ("mysql", "mariadb")
    pg = dialect == "postgresql"
    name = schema.name
    if name == Decimal.LOGICAL_NAME:
        scale = Decimal.scale(schema)
        if my:
            return sa.Numeric(65, scale)
        return sa.Numeric() if pg else sa.Numeric(scale=scale)
    if name == DEBEZIUM_VARIABLE_DECIMAL:
        return sa.Numeric(65, 30) if my else sa.Numeric()
    if name in (Date.LOGICAL_NAME, DEBEZIUM_DATE):
        return sa.Date()
    if name in (Time.LOGICAL_NAME, *_TIME_UNITS):
        return mysql.TIME(fsp=_fraction(name)) if my else sa.Time()
    if name in (Timestamp.LOGICAL_NAME, *_TIMESTAMP_UNITS):
        return mysql.DATETIME(fsp=_fraction(name)) if my else sa.DateTime()
    if name == DEBEZIUM_ZONED_TIMESTAMP:
        if pg:
            return postgresql.TIMESTAMP(timezone=True)
        return mysql.DATETIME(fsp=6) if my else sa.DateTime()
    if name in _TEXT_NAMES:
        return sa.String(_KEY_STRING_LENGTH) if my and key else sa.Text()
    t = schema.type
    if t is Type.INT8:
        return mysql.TINYINT() if my else sa.SmallInteger()
    if t is Type.INT16:
        return sa.SmallInteger()
    if t is Type.INT32:
        return sa.Integer()
    if t is Type.INT64:
        return sa.BigInteger()
    if t is Type.FLOAT32:
        return mysql.FLOAT() if my else sa.REAL()
    if t is Type.FLOAT64:
        return mysql.DOUBLE() if my else postgresql.DOUBLE_PRECISION() if pg else sa.Float()
    if t is Type.BOOLEAN:
        return sa.Boolean()
    if t is Type.STRING:
        return sa.String(_KEY_STRING_LENGTH) if my and key else sa.Text()
    if t is Type.BYTES:
        if my:
            return mysql.VARBINARY(_KEY_STRING_LENGTH) if key else mysql.LONGBLOB()
        return sa.LargeBinary()
    raise UnsupportedType(f"{t.name} values cannot be written to a column")


def value_converter(schema: Schema, zone: dt.tzinfo) -> Converter | None:
    """How a value of ``schema`` is bound; None when it is bound as it is. Converters get
    non-null values only."""
    name = schema.name
    if name == Timestamp.LOGICAL_NAME:
        return _in_zone(zone)
    if name == DEBEZIUM_DATE:
        return _days
    if name in _TIME_UNITS:
        unit = _TIME_UNITS[name]
        return _time_of(unit)
    if name in _TIMESTAMP_UNITS:
        unit = _TIMESTAMP_UNITS[name]
        return _timestamp_of(unit)
    if name == DEBEZIUM_ZONED_TIMESTAMP:
        return _zoned(zone)
    if name == DEBEZIUM_VARIABLE_DECIMAL:
        return _variable_decimal
    if schema.type is Type.STRUCT or schema.type is Type.ARRAY or schema.type is Type.MAP:
        raise UnsupportedType(f"{schema.type.name} values cannot be written to a column")
    return None


def _in_zone(zone: dt.tzinfo) -> Converter:
    utc = zone is dt.UTC

    def convert(value: dt.datetime) -> dt.datetime:
        tz = value.tzinfo
        if tz is None:
            if utc:
                return value
            value = value.replace(tzinfo=dt.UTC)
        elif utc and tz is dt.UTC:
            return value.replace(tzinfo=None)  # what converters make: no arithmetic needed
        return value.astimezone(zone).replace(tzinfo=None)

    return convert


#: SQLAlchemy's SQLite DATETIME text (its default ``storage_format``) as a tuple format.
_SQLITE_DATETIME = "%04d-%02d-%02d %02d:%02d:%02d.%06d"
#: The types whose bind processor is SQLAlchemy's DATETIME one (pysqlite's TIMESTAMP: the
#: same unless the dialect binds native datetimes, when it has none).
_SQLITE_DATETIMES = (sqlite.DATETIME, _SQLite_pysqliteTimeStamp)


def sqlite_utc_timestamp(
    schema: Schema, zone: dt.tzinfo, bound_type: Any, general: Converter
) -> Converter | None:
    """For a Timestamp written in UTC to a SQLite DATETIME column of SQLAlchemy's default
    storage format, one converter giving the text ``general`` (``_in_zone`` then
    SQLAlchemy's bind processor) gives, without the dict SQLAlchemy formats from or the
    naive copy: 2.3 us a value down to 0.7, a sixth of the sink's preparing of
    benchmarks/jdbc_sink.py's rows. None when the column is not of that kind."""
    if (
        schema.name != Timestamp.LOGICAL_NAME
        or zone is not dt.UTC
        or type(bound_type) not in _SQLITE_DATETIMES
        or bound_type._storage_format != sqlite.DATETIME._storage_format
    ):
        return None
    text = _SQLITE_DATETIME
    datetime, utc = dt.datetime, dt.UTC

    def convert(value: Any) -> Any:
        if value.__class__ is datetime:
            tz = value.tzinfo
            if tz is None or tz is utc:  # the instant's UTC wall clock as it is
                return text % (
                    value.year,
                    value.month,
                    value.day,
                    value.hour,
                    value.minute,
                    value.second,
                    value.microsecond,
                )
        return general(value)

    return convert


def _days(value: int) -> dt.date:
    return _EPOCH_DATE + dt.timedelta(days=value)


def _time_of(unit: int) -> Converter:
    def convert(value: int) -> dt.time:
        micros = value * unit if unit else value // 1000
        return (_MIDNIGHT + dt.timedelta(microseconds=micros % 86_400_000_000)).time()

    return convert


def _timestamp_of(unit: int) -> Converter:
    # Debezium's Timestamp types are the column's wall-clock time with no zone: written as they are.
    def convert(value: int) -> dt.datetime:
        micros = value * unit if unit else value // 1000
        return _EPOCH + dt.timedelta(microseconds=micros)

    return convert


def _zoned(zone: dt.tzinfo) -> Converter:
    def convert(value: str) -> dt.datetime:
        parsed = dt.datetime.fromisoformat(value)
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=dt.UTC)
        return parsed.astimezone(zone)

    return convert


def _variable_decimal(value: Struct) -> decimal.Decimal:
    scale = int(value.get("scale"))
    unscaled = int.from_bytes(bytes(value.get("value")), "big", signed=True)
    return decimal.Decimal(unscaled).scaleb(-scale)


def fits_check(column: sa.Column[Any], dialect: str, schema: Schema) -> Converter | None:
    """A check of bound values against an existing column's type, so that a value the
    column cannot take is refused naming the column (rather than by a driver error that
    names neither row nor column). Returns the value unchanged, raises ValueError. None
    when values of ``schema`` always fit (integers into an integer column)."""
    t = column.type
    if isinstance(t, sa.Integer) and schema.type in _INTEGERS and schema.name is None:
        return None
    length = getattr(t, "length", None)
    if isinstance(t, sa.String) and length:

        def fits_length(value: Any) -> Any:
            if isinstance(value, str) and len(value) > length:
                raise ValueError(f"a value of {len(value)} characters is too long for {t} (at most {length})")
            return value

        return fits_length
    if isinstance(t, sa.Integer) and not isinstance(t, sa.Boolean):

        def fits_integer(value: Any) -> Any:
            if not isinstance(value, int):
                raise ValueError(f"a {type(value).__name__} value does not fit {t}")
            return value

        return fits_integer
    if isinstance(t, (sa.Date, sa.DateTime, sa.Time)) and dialect != "sqlite":
        wanted = dt.datetime if isinstance(t, sa.DateTime) else dt.date if isinstance(t, sa.Date) else dt.time

        def fits_temporal(value: Any) -> Any:
            if not isinstance(value, wanted):
                raise ValueError(f"a {type(value).__name__} value does not fit {t}")
            return value

        return fits_temporal
    return None


def compose(first: Converter | None, then: Converter | None) -> Converter | None:
    if first is None:
        return then
    if then is None:
        return first
    return lambda value: then(first(value))
