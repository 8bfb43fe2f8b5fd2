"""MySQL and MariaDB column values to Connect values, mapped as Debezium's MySQL connector maps them.

Values come from two readers: python-mysql-replication decoding binlog row images, and
pymysql reading the snapshot's SELECTs. They differ in form (a ``BIT`` is ``"0101"`` from
the binlog, big-endian bytes from pymysql; a ``SET`` is a Python set or a comma list; a
``FLOAT`` is the stored single-precision value or its shortest text), so every converter
here takes either form and gives the same Connect value.

=========================================  ================================================
``BOOLEAN``, ``BIT(1)``                    BOOLEAN
``BIT(n>1)``                               BYTES ``io.debezium.data.Bits`` (little-endian)
``TINYINT``, ``SMALLINT``                  INT16 (unsigned ``SMALLINT``: INT32)
``MEDIUMINT``, ``INT``                     INT32 (unsigned ``INT``: INT64)
``BIGINT``                                 INT64; unsigned per ``bigint.unsigned.handling.mode``
``FLOAT``, ``FLOAT(p<=23)``                FLOAT32; ``FLOAT(p>23)``, ``FLOAT(m,d)``, ``DOUBLE``: FLOAT64
``DECIMAL``                                per ``decimal.handling.mode`` (Kafka ``Decimal``, FLOAT64, STRING)
``CHAR``, ``VARCHAR``, ``*TEXT``           STRING
``BINARY``, ``VARBINARY``, ``*BLOB``       per ``binary.handling.mode``
``JSON``                                   STRING ``io.debezium.data.Json``
``ENUM`` / ``SET``                         STRING ``io.debezium.data.Enum`` / ``EnumSet`` (``allowed``)
``YEAR``                                   INT32 ``io.debezium.time.Year``
``DATE``                                   INT32 ``io.debezium.time.Date``
``TIME``                                   INT64 ``io.debezium.time.MicroTime``
``DATETIME(0..3)`` / ``(4..6)``            INT64 ``io.debezium.time.Timestamp`` / ``MicroTimestamp``
``TIMESTAMP``                              STRING ``io.debezium.time.ZonedTimestamp`` (ISO-8601, UTC)
geometry types                             ``io.debezium.data.geometry.Geometry`` {wkb, srid}
=========================================  ================================================

``time.precision.mode=connect`` uses Kafka Connect's ``Date``, ``Time`` and ``Timestamp``.
Zero dates (``0000-00-00``) become null, or the epoch in a NOT NULL column, as in Debezium.
``DATETIME`` values are taken as UTC; ``TIMESTAMP`` values are read in UTC (the snapshot
session runs with ``time_zone='+00:00'``, and the binlog holds seconds since the epoch).
"""

from __future__ import annotations

import base64
import datetime
import decimal
import enum
import json
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from connect.api import ConnectException, Date, Schema, SchemaBuilder, Struct, Time, Timestamp
from connect.api import Decimal as DecimalType
from connectors.jdbc.debezium.value_modes import BinaryMode, DecimalMode

if TYPE_CHECKING:
    from connectors.jdbc.mysql.schema import MySqlColumn

__all__ = [
    "BigintUnsignedMode",
    "BinaryMode",
    "Conversion",
    "DecimalMode",
    "TimePrecisionMode",
    "UnsupportedTypeError",
    "ValueSettings",
    "binlog_charset",
    "conversion_for",
]


class TimePrecisionMode(enum.StrEnum):
    ADAPTIVE_TIME_MICROSECONDS = "adaptive_time_microseconds"
    CONNECT = "connect"


class BigintUnsignedMode(enum.StrEnum):
    LONG = "long"
    PRECISE = "precise"


@dataclass(frozen=True, slots=True)
class ValueSettings:
    decimal_mode: DecimalMode = DecimalMode.PRECISE
    time_precision_mode: TimePrecisionMode = TimePrecisionMode.ADAPTIVE_TIME_MICROSECONDS
    bigint_unsigned_mode: BigintUnsignedMode = BigintUnsignedMode.LONG
    binary_mode: BinaryMode = BinaryMode.BYTES


@dataclass(frozen=True, slots=True)
class Conversion:
    """One column's Connect schema, and how a non-null value of either reader becomes a Connect
    value (``None`` when the value needs no conversion)."""

    schema: Schema
    convert: Callable[[Any], Any] | None


class UnsupportedTypeError(ConnectException):
    def __init__(self, column: str, type_name: str) -> None:
        super().__init__(
            f"column {column} has type {type_name}, which the connector cannot map; leave it out with "
            "column.exclude.list"
        )


_INTEGERS: Final = {
    # type -> (signed schema, unsigned schema)
    "TINYINT": (SchemaBuilder.int16, SchemaBuilder.int16),
    "SMALLINT": (SchemaBuilder.int16, SchemaBuilder.int32),
    "MEDIUMINT": (SchemaBuilder.int32, SchemaBuilder.int32),
    "INT": (SchemaBuilder.int32, SchemaBuilder.int64),
}
_STRINGS: Final = frozenset(
    {"CHAR", "VARCHAR", "TINYTEXT", "TEXT", "MEDIUMTEXT", "LONGTEXT", "NCHAR", "NVARCHAR"}
)
_BINARIES: Final = frozenset({"BINARY", "VARBINARY", "TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB"})
_GEOMETRIES: Final = frozenset(
    {
        "GEOMETRY",
        "POINT",
        "LINESTRING",
        "POLYGON",
        "MULTIPOINT",
        "MULTILINESTRING",
        "MULTIPOLYGON",
        "GEOMETRYCOLLECTION",
        "GEOMCOLLECTION",
    }
)
_EPOCH_DATE: Final = datetime.date(1970, 1, 1)
_EPOCH: Final = datetime.datetime(1970, 1, 1)
_EPOCH_UTC: Final = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def _geometry_builder() -> SchemaBuilder:
    return (
        SchemaBuilder.struct()
        .name("io.debezium.data.geometry.Geometry")
        .version(1)
        .doc("Geometry")
        .field("wkb", Schema.BYTES_SCHEMA)
        .field("srid", Schema.OPTIONAL_INT32_SCHEMA)
    )


def binlog_charset(column: MySqlColumn, table_charset: str | None) -> str | None:
    """The character set python-mysql-replication decodes a column's binlog bytes with:
    ``binary`` (kept as bytes) for binary types, the column's or table's charset for text."""
    name = column.type_name
    if name in _BINARIES or name in _GEOMETRIES or name == "BIT":
        return "binary"
    if name == "JSON":
        return "utf8mb4"
    if name in _STRINGS or name in ("ENUM", "SET"):
        return column.charset or table_charset or "utf8mb4"
    return None


def _finish(builder: SchemaBuilder, optional: bool) -> Schema:
    return (builder.optional() if optional else builder).build()


def _semantic(builder: SchemaBuilder, name: str) -> SchemaBuilder:
    return builder.name(name).version(1)


def _bits_int(value: Any) -> int:
    if isinstance(value, str):  # python-mysql-replication: "0101..."
        return int(value, 2) if value else 0
    if isinstance(value, bytes | bytearray):  # pymysql: big-endian bytes
        return int.from_bytes(value, "big")
    return int(value)


def _float32(value: Any) -> float:
    # The stored single-precision value, whichever text or double the reader made of it.
    result: float = struct.unpack("<f", struct.pack("<f", float(value)))[0]
    return result


def _wrap64(value: Any) -> int:
    v = int(value)
    return v - (1 << 64) if v >= 1 << 63 else v


def _as_bytes(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape")
    return bytes(value)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "replace")
    return str(value)


def _json_default(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, decimal.Decimal):
        return float(value)
    return str(value)


def _json_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")

    # MySQL's binary JSON as python-mysql-replication parsed it (keys may be bytes).
    def keys(v: Any) -> Any:
        if isinstance(v, dict):
            return {(k.decode() if isinstance(k, bytes) else k): keys(x) for k, x in v.items()}
        if isinstance(v, list):
            return [keys(x) for x in v]
        return v

    return json.dumps(keys(value), default=_json_default, ensure_ascii=False)


def _days(value: Any) -> int | None:
    if isinstance(value, datetime.datetime):
        value = value.date()
    if isinstance(value, datetime.date):
        return (value - _EPOCH_DATE).days
    return None  # a zero or invalid date (pymysql gives its text, the binlog reader None)


def _micros(value: Any) -> int | None:
    if isinstance(value, datetime.datetime):
        delta = value.replace(tzinfo=None) - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    if isinstance(value, datetime.date):
        return (value - _EPOCH_DATE).days * 86_400_000_000
    return None


def _time_micros(value: Any) -> int:
    if isinstance(value, datetime.timedelta):
        return (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
    if isinstance(value, datetime.time):
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond
    raise ValueError(f"not a time: {value!r}")


def _zoned(fsp: int) -> Callable[[Any], str | None]:
    def zoned(value: Any) -> str | None:
        if not isinstance(value, datetime.datetime):
            return None
        text = value.strftime("%Y-%m-%dT%H:%M:%S")
        if fsp > 0:
            text += "." + f"{value.microsecond:06d}"[:fsp]
        return text + "Z"

    return zoned


def _or_zero(convert: Callable[[Any], Any], zero: Any, optional: bool) -> Callable[[Any], Any]:
    """A zero date is null in an optional column, the epoch in a NOT NULL one (Debezium)."""
    if optional:
        return convert

    def or_zero(value: Any) -> Any:
        result = convert(value)
        return zero if result is None else result

    return or_zero


def _decimal(column: MySqlColumn, optional: bool, settings: ValueSettings) -> Conversion:
    mode = settings.decimal_mode
    if mode is DecimalMode.DOUBLE:
        return Conversion(_finish(SchemaBuilder.float64(), optional), float)
    if mode is DecimalMode.STRING:
        return Conversion(
            _finish(SchemaBuilder.string(), optional), lambda v: format(decimal.Decimal(v), "f")
        )
    precision = column.length if column.length is not None else 10
    scale = column.scale if column.scale is not None else 0
    builder = DecimalType.builder(scale).parameter("connect.decimal.precision", str(precision))
    quantum = decimal.Decimal(1).scaleb(-scale)
    context = decimal.Context(prec=100)

    def precise(value: Any) -> decimal.Decimal:
        d = value if isinstance(value, decimal.Decimal) else decimal.Decimal(str(value))
        return d.quantize(quantum, context=context)

    return Conversion(_finish(builder, optional), precise)


def _binary(optional: bool, settings: ValueSettings, pad_to: int | None = None) -> Conversion:
    """``pad_to``: BINARY(n) values are n bytes, padded with zero bytes; the binlog leaves the
    padding out, the snapshot's SELECT keeps it."""
    as_bytes = _as_bytes
    if pad_to:
        width = pad_to

        def as_bytes(value: Any) -> bytes:
            return _as_bytes(value).ljust(width, b"\0")

    mode = settings.binary_mode
    if mode is BinaryMode.BYTES:
        return Conversion(_finish(SchemaBuilder.bytes(), optional), as_bytes)
    encode: Callable[[bytes], str]
    if mode is BinaryMode.BASE64:
        encode = lambda b: base64.b64encode(b).decode("ascii")  # noqa: E731
    elif mode is BinaryMode.BASE64_URL_SAFE:
        encode = lambda b: base64.urlsafe_b64encode(b).decode("ascii")  # noqa: E731
    else:
        encode = bytes.hex
    return Conversion(_finish(SchemaBuilder.string(), optional), lambda v: encode(as_bytes(v)))


def _temporal(column: MySqlColumn, optional: bool, settings: ValueSettings) -> Conversion:
    name = column.type_name
    fsp = column.length or 0
    connect_mode = settings.time_precision_mode is TimePrecisionMode.CONNECT
    if name == "DATE":
        if connect_mode:
            zero_date = _EPOCH_DATE

            def as_date(value: Any) -> datetime.date | None:
                days = _days(value)
                return None if days is None else _EPOCH_DATE + datetime.timedelta(days=days)

            return Conversion(_finish(Date.builder(), optional), _or_zero(as_date, zero_date, optional))
        schema = _finish(_semantic(SchemaBuilder.int32(), "io.debezium.time.Date"), optional)
        return Conversion(schema, _or_zero(_days, 0, optional))
    if name == "TIME":
        if connect_mode:

            def as_time(value: Any) -> datetime.time:
                us = _time_micros(value) % 86_400_000_000
                seconds, fraction = divmod(us, 1_000_000)
                return datetime.time(
                    seconds // 3600, seconds // 60 % 60, seconds % 60, fraction // 1000 * 1000
                )

            return Conversion(_finish(Time.builder(), optional), as_time)
        return Conversion(
            _finish(_semantic(SchemaBuilder.int64(), "io.debezium.time.MicroTime"), optional), _time_micros
        )
    if name == "DATETIME":
        if connect_mode:

            def as_timestamp(value: Any) -> datetime.datetime | None:
                us = _micros(value)
                if us is None:
                    return None
                return _EPOCH_UTC + datetime.timedelta(microseconds=us // 1000 * 1000)

            return Conversion(
                _finish(Timestamp.builder(), optional), _or_zero(as_timestamp, _EPOCH_UTC, optional)
            )
        if fsp <= 3:

            def millis(value: Any) -> int | None:
                us = _micros(value)
                return None if us is None else us // 1000

            schema = _finish(_semantic(SchemaBuilder.int64(), "io.debezium.time.Timestamp"), optional)
            return Conversion(schema, _or_zero(millis, 0, optional))
        schema = _finish(_semantic(SchemaBuilder.int64(), "io.debezium.time.MicroTimestamp"), optional)
        return Conversion(schema, _or_zero(_micros, 0, optional))
    # TIMESTAMP: always an ISO-8601 string in UTC
    schema = _finish(_semantic(SchemaBuilder.string(), "io.debezium.time.ZonedTimestamp"), optional)
    return Conversion(schema, _or_zero(_zoned(fsp), "1970-01-01T00:00:00Z", optional))


def _geometry(optional: bool) -> Conversion:
    schema = _finish(_geometry_builder(), optional)

    def geometry(value: Any) -> Struct:
        raw = _as_bytes(value)  # MySQL's internal form: a little-endian SRID, then the WKB
        srid = int.from_bytes(raw[:4], "little") if len(raw) >= 4 else 0
        return Struct.unchecked(schema, [raw[4:], srid])

    return Conversion(schema, geometry)


def conversion_for(column: MySqlColumn, settings: ValueSettings, where: str = "") -> Conversion:
    """The conversion of one column; ``where`` (``db.table``) names it in errors."""
    name = column.type_name
    optional = column.optional
    if name == "BOOLEAN" or (name == "BIT" and (column.length or 1) == 1):
        return Conversion(_finish(SchemaBuilder.bool(), optional), lambda v: _bits_int(v) != 0)
    if name == "BIT":
        bits = column.length or 1
        size = (bits + 7) // 8
        builder = _semantic(SchemaBuilder.bytes(), "io.debezium.data.Bits").parameter("length", str(bits))
        return Conversion(_finish(builder, optional), lambda v: _bits_int(v).to_bytes(size, "little"))
    if name in _INTEGERS:
        signed, unsigned = _INTEGERS[name]
        return Conversion(_finish((unsigned if column.unsigned else signed)(), optional), None)
    if name == "BIGINT":
        if column.unsigned and settings.bigint_unsigned_mode is BigintUnsignedMode.PRECISE:
            builder = DecimalType.builder(0).parameter("connect.decimal.precision", "20")
            return Conversion(_finish(builder, optional), decimal.Decimal)
        return Conversion(_finish(SchemaBuilder.int64(), optional), _wrap64 if column.unsigned else None)
    if name == "FLOAT":
        if column.scale is not None or (column.length is not None and column.length > 23):
            return Conversion(_finish(SchemaBuilder.float64(), optional), float)
        return Conversion(_finish(SchemaBuilder.float32(), optional), _float32)
    if name == "DOUBLE":
        return Conversion(_finish(SchemaBuilder.float64(), optional), float)
    if name == "DECIMAL":
        return _decimal(column, optional, settings)
    if name in _STRINGS:
        return Conversion(_finish(SchemaBuilder.string(), optional), _text)
    if name in _BINARIES:
        return _binary(optional, settings, column.length if name == "BINARY" else None)
    if name == "JSON":
        return Conversion(
            _finish(_semantic(SchemaBuilder.string(), "io.debezium.data.Json"), optional), _json_text
        )
    if name == "ENUM":
        builder = _semantic(SchemaBuilder.string(), "io.debezium.data.Enum").parameter(
            "allowed", ",".join(column.enum_values)
        )
        return Conversion(_finish(builder, optional), _text)
    if name == "SET":
        members = column.enum_values
        builder = _semantic(SchemaBuilder.string(), "io.debezium.data.EnumSet").parameter(
            "allowed", ",".join(members)
        )

        def as_set(value: Any) -> str:
            if isinstance(value, set | frozenset):  # the binlog reader: members, unordered
                return ",".join(m for m in members if m in value)
            return _text(value)

        return Conversion(_finish(builder, optional), as_set)
    if name == "YEAR":
        return Conversion(_finish(_semantic(SchemaBuilder.int32(), "io.debezium.time.Year"), optional), int)
    if name in ("DATE", "TIME", "DATETIME", "TIMESTAMP"):
        return _temporal(column, optional, settings)
    if name in _GEOMETRIES:
        return _geometry(optional)
    raise UnsupportedTypeError(f"{where}.{column.name}" if where else column.name, name)
