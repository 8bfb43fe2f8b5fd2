"""Column text → Connect values, as Debezium maps PostgreSQL types (pure), and the text formats
the connector's sessions make the server print (real server)."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pytest

from connect.api import DataException, Schema, Struct, Type
from connectors.jdbc.cdc.connection import SESSION_OPTIONS
from connectors.jdbc.cdc.values import (
    BinaryMode,
    DecimalMode,
    IntervalMode,
    PgType,
    TimePrecisionMode,
    UnsupportedTypeError,
    ValueSettings,
    civil_from_days,
    conversion_for,
    days_from_civil,
    parse_array,
)
from tests.databases import PostgresServer

DEFAULT = ValueSettings()
INT4 = PgType(23, "int4")
TEXT = PgType(25, "text")


def t(oid: int, name: str, **kw: Any) -> PgType:
    return PgType(oid, name, **kw)


def convert(pg_type: PgType, text: str, modifier: int = -1, settings: ValueSettings = DEFAULT) -> Any:
    conversion = conversion_for(pg_type, modifier, True, settings)
    value = conversion.parse(text)
    Schema.validate_value(conversion.schema, value)
    return value


def schema_of(
    pg_type: PgType, modifier: int = -1, settings: ValueSettings = DEFAULT, optional: bool = True
) -> Schema:
    return conversion_for(pg_type, modifier, optional, settings).schema


def numeric_modifier(precision: int, scale: int) -> int:
    return (precision << 16 | (scale & 0x7FF)) + 4


# -- calendar ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ymd", "days"),
    [
        ((1970, 1, 1), 0),
        ((2000, 2, 29), 11016),
        ((1969, 12, 31), -1),
        ((1, 1, 1), -719162),
        ((0, 12, 31), -719163),
    ],
)
def test_days_from_civil_matches_the_proleptic_calendar(ymd: tuple[int, int, int], days: int) -> None:
    assert days_from_civil(*ymd) == days
    assert civil_from_days(days) == ymd


def test_days_round_trip_across_eras() -> None:
    for days in range(-800_000, 3_000_000, 997):
        assert days_from_civil(*civil_from_days(days)) == days


# -- basic types -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pg_type", "text", "expected", "schema_type"),
    [
        (t(16, "bool"), "t", True, Type.BOOLEAN),
        (t(16, "bool"), "f", False, Type.BOOLEAN),
        (t(21, "int2"), "-32768", -32768, Type.INT16),
        (INT4, "2147483647", 2147483647, Type.INT32),
        (t(20, "int8"), "-9223372036854775808", -9223372036854775808, Type.INT64),
        (t(26, "oid"), "4294967295", 4294967295, Type.INT64),
        (t(700, "float4"), "1.5", 1.5, Type.FLOAT32),
        (t(701, "float8"), "0.1", 0.1, Type.FLOAT64),
        (t(701, "float8"), "-Infinity", float("-inf"), Type.FLOAT64),
        (TEXT, "héllo", "héllo", Type.STRING),
        (t(1043, "varchar"), "", "", Type.STRING),
        (t(1042, "bpchar"), "ab  ", "ab  ", Type.STRING),
        (t(869, "inet"), "10.0.0.1/8", "10.0.0.1/8", Type.STRING),
        (t(3904, "int4range"), "[1,5)", "[1,5)", Type.STRING),
        (t(17, "bytea"), "\\x00ff10", b"\x00\xff\x10", Type.BYTES),
        (t(17, "bytea"), "\\x", b"", Type.BYTES),
    ],
)
def test_basic_types(pg_type: PgType, text: str, expected: Any, schema_type: Type) -> None:
    assert convert(pg_type, text) == expected
    schema = schema_of(pg_type)
    assert (schema.type, schema.name, schema.optional) == (schema_type, None, True)


def test_nan_float() -> None:
    assert convert(t(701, "float8"), "NaN") != convert(t(701, "float8"), "NaN")


@pytest.mark.parametrize(
    ("oid", "name", "semantic"),
    [
        (114, "json", "io.debezium.data.Json"),
        (3802, "jsonb", "io.debezium.data.Json"),
        (142, "xml", "io.debezium.data.Xml"),
        (2950, "uuid", "io.debezium.data.Uuid"),
    ],
)
def test_semantic_strings(oid: int, name: str, semantic: str) -> None:
    schema = schema_of(t(oid, name))
    assert (schema.type, schema.name, schema.version) == (Type.STRING, semantic, 1)
    assert convert(t(oid, name), '{"a": [1, 2]}') == '{"a": [1, 2]}'


def test_required_columns_have_required_schemas_and_zero_fallbacks() -> None:
    conversion = conversion_for(INT4, -1, False, DEFAULT)
    assert not conversion.schema.optional and conversion.fallback == 0
    assert conversion_for(TEXT, -1, False, DEFAULT).fallback == ""
    assert conversion_for(TEXT, -1, True, DEFAULT).fallback is None


def test_unchanged_toast_placeholder_for_strings_and_bytes_only() -> None:
    assert conversion_for(TEXT, -1, True, DEFAULT).unavailable == "__debezium_unavailable_value"
    assert conversion_for(t(17, "bytea"), -1, True, DEFAULT).unavailable == b"__debezium_unavailable_value"
    assert conversion_for(INT4, -1, True, DEFAULT).unavailable is None
    custom = ValueSettings(unavailable_placeholder="??")
    assert conversion_for(t(3802, "jsonb"), -1, True, custom).unavailable == "??"


# -- numeric and money --------------------------------------------------------------------------------------


def test_numeric_with_precision_is_a_kafka_decimal_with_debezium_precision_parameter() -> None:
    schema = schema_of(t(1700, "numeric"), numeric_modifier(10, 2))
    assert schema.name == "org.apache.kafka.connect.data.Decimal"
    assert dict(schema.parameters or {}) == {"scale": "2", "connect.decimal.precision": "10"}
    assert convert(t(1700, "numeric"), "-12.50", numeric_modifier(10, 2)) == decimal.Decimal("-12.50")
    assert convert(t(1700, "numeric"), "NaN", numeric_modifier(10, 2)) is None


def test_numeric_without_precision_is_a_variable_scale_decimal() -> None:
    numeric = t(1700, "numeric")
    schema = schema_of(numeric)
    assert (schema.type, schema.name, schema.version) == (
        Type.STRUCT,
        "io.debezium.data.VariableScaleDecimal",
        1,
    )
    value = convert(numeric, "-12.345")
    assert isinstance(value, Struct)
    assert value.get("scale") == 3
    assert int.from_bytes(value.get("value"), "big", signed=True) == -12345
    assert convert(numeric, "128").get("value") == b"\x00\x80"  # BigInteger.toByteArray
    assert convert(numeric, "0").get("value") == b"\x00"


@pytest.mark.parametrize(
    ("mode", "text", "expected", "schema_type"),
    [
        (DecimalMode.DOUBLE, "1.25", 1.25, Type.FLOAT64),
        (DecimalMode.STRING, "1.250", "1.250", Type.STRING),
        (DecimalMode.STRING, "NaN", "NAN", Type.STRING),
    ],
)
def test_decimal_handling_modes(mode: DecimalMode, text: str, expected: Any, schema_type: Type) -> None:
    settings = ValueSettings(decimal_mode=mode)
    assert convert(t(1700, "numeric"), text, numeric_modifier(6, 3), settings) == expected
    assert schema_of(t(1700, "numeric"), numeric_modifier(6, 3), settings).type is schema_type


@pytest.mark.parametrize(
    ("text", "expected"), [("$1,234.56", "1234.56"), ("-$1.50", "-1.50"), ("($7.00)", "-7.00")]
)
def test_money(text: str, expected: str) -> None:
    money = t(790, "money")
    assert convert(money, text) == decimal.Decimal(expected)
    assert dict(schema_of(money).parameters or {}) == {"scale": "2"}
    assert convert(money, text, settings=ValueSettings(decimal_mode=DecimalMode.STRING)) == expected


# -- temporal types (time.precision.mode) -------------------------------------------------------------------


def test_date_is_debezium_date_days() -> None:
    date = t(1082, "date")
    assert (schema_of(date).name, schema_of(date).type) == ("io.debezium.time.Date", Type.INT32)
    assert convert(date, "2000-02-29") == 11016
    assert convert(date, "1969-12-31") == -1
    assert convert(date, "0044-03-15 BC") == days_from_civil(-43, 3, 15)
    assert convert(date, "infinity") == 2**31 - 1


@pytest.mark.parametrize(
    ("modifier", "name", "text", "expected"),
    [
        (-1, "io.debezium.time.MicroTimestamp", "2018-06-20 15:13:16.945104", 1529507596945104),
        (6, "io.debezium.time.MicroTimestamp", "1969-12-31 23:59:59.5", -500000),
        (3, "io.debezium.time.Timestamp", "2018-06-20 15:13:16.945", 1529507596945),
        (0, "io.debezium.time.Timestamp", "2018-06-20 15:13:16", 1529507596000),
        (3, "io.debezium.time.Timestamp", "1969-12-31 23:59:59.999", -1),
        (-1, "io.debezium.time.MicroTimestamp", "infinity", 9223372036825200000),
        (-1, "io.debezium.time.MicroTimestamp", "-infinity", -9223372036832400000),
    ],
)
def test_timestamp_adaptive(modifier: int, name: str, text: str, expected: int) -> None:
    ts = t(1114, "timestamp")
    assert schema_of(ts, modifier).name == name
    assert convert(ts, text, modifier) == expected


def test_timestamptz_is_a_zoned_timestamp_in_utc() -> None:
    tz = t(1184, "timestamptz")
    assert (schema_of(tz).name, schema_of(tz).type) == ("io.debezium.time.ZonedTimestamp", Type.STRING)
    assert convert(tz, "2024-01-02 01:04:05.5+00") == "2024-01-02T01:04:05.5Z"
    assert convert(tz, "2024-01-02 03:04:05+02") == "2024-01-02T01:04:05Z"
    assert convert(tz, "2024-01-01 00:30:00-05:30") == "2024-01-01T06:00:00Z"
    assert convert(tz, "infinity") == "infinity"


@pytest.mark.parametrize(
    ("modifier", "name", "text", "expected"),
    [
        (-1, "io.debezium.time.MicroTime", "13:14:15.5", 47655500000),
        (3, "io.debezium.time.Time", "13:14:15.5", 47655500),
        (-1, "io.debezium.time.MicroTime", "24:00:00", 86400000000),
    ],
)
def test_time_adaptive(modifier: int, name: str, text: str, expected: int) -> None:
    assert schema_of(t(1083, "time"), modifier).name == name
    assert convert(t(1083, "time"), text, modifier) == expected


def test_adaptive_time_microseconds_makes_every_time_micro() -> None:
    settings = ValueSettings(time_precision_mode=TimePrecisionMode.ADAPTIVE_TIME_MICROSECONDS)
    assert schema_of(t(1083, "time"), 3, settings).name == "io.debezium.time.MicroTime"
    assert convert(t(1083, "time"), "00:00:01.001", 3, settings) == 1001000


def test_timetz_is_a_zoned_time_in_utc() -> None:
    assert convert(t(1266, "timetz"), "13:14:15+05:30") == "07:44:15Z"
    assert convert(t(1266, "timetz"), "23:00:00.25-02") == "01:00:00.25Z"


def test_connect_mode_uses_kafka_logical_types() -> None:
    settings = ValueSettings(time_precision_mode=TimePrecisionMode.CONNECT)
    assert schema_of(t(1082, "date"), settings=settings).name == "org.apache.kafka.connect.data.Date"
    assert convert(t(1082, "date"), "2000-02-29", settings=settings) == dt.date(2000, 2, 29)
    assert convert(t(1083, "time"), "13:14:15.123456", settings=settings) == dt.time(13, 14, 15, 123456)
    assert convert(t(1114, "timestamp"), "2018-06-20 15:13:16.945", settings=settings) == dt.datetime(
        2018, 6, 20, 15, 13, 16, 945000, tzinfo=dt.UTC
    )


@pytest.mark.parametrize(
    ("text", "micros", "iso"),
    [
        (
            "P1Y2M3DT4H5M6.78S",
            ((14 * 2629800 + 3 * 86400 + 4 * 3600 + 5 * 60) * 10**6 + 6780000),
            "P1Y2M3DT4H5M6.78S",
        ),
        ("P-1DT-2H", -(86400 + 7200) * 10**6, "P0Y0M-1DT-2H0M0S"),
        ("PT0S", 0, "P0Y0M0DT0H0M0S"),
        ("PT-0.5S", -500000, "P0Y0M0DT0H0M-0.5S"),
    ],
)
def test_interval_modes(text: str, micros: int, iso: str) -> None:
    interval = t(1186, "interval")
    assert schema_of(interval).name == "io.debezium.time.MicroDuration"
    assert convert(interval, text) == micros
    settings = ValueSettings(interval_mode=IntervalMode.STRING)
    assert schema_of(interval, settings=settings).name == "io.debezium.time.Interval"
    assert convert(interval, text, settings=settings) == iso


@pytest.mark.parametrize(
    ("text", "problem"),
    [("2024-13", "not a valid date"), ("yesterday", "not a valid date")],
)
def test_bad_text_is_a_data_exception(text: str, problem: str) -> None:
    with pytest.raises(DataException, match=problem):
        convert(t(1082, "date"), text)


# -- bits, binary modes ----------------------------------------------------------------------------


def test_bit_one_is_boolean_longer_bits_are_debezium_bits() -> None:
    bit = t(1560, "bit")
    assert schema_of(bit, 1).type is Type.BOOLEAN
    assert convert(bit, "1", 1) is True
    schema = schema_of(bit, 10)
    assert (schema.name, dict(schema.parameters or {})) == ("io.debezium.data.Bits", {"length": "10"})
    assert convert(bit, "1000000001", 10) == b"\x01\x02"  # little-endian
    assert dict(schema_of(t(1562, "varbit")).parameters or {}) == {"length": str(2**31 - 1)}


@pytest.mark.parametrize(
    ("mode", "expected"),
    [(BinaryMode.BASE64, "AP8Q"), (BinaryMode.BASE64_URL_SAFE, "AP8Q"), (BinaryMode.HEX, "00ff10")],
)
def test_binary_handling_modes(mode: BinaryMode, expected: str) -> None:
    assert convert(t(17, "bytea"), "\\x00ff10", settings=ValueSettings(binary_mode=mode)) == expected


# -- arrays, enums, domains, unknown types ------------------------------------------------------------


def test_parse_array_literals() -> None:
    assert parse_array("{}", str) == []
    assert parse_array('{a,"b c","d\\"e",NULL,"NULL",null}', str) == ["a", "b c", 'd"e', None, "NULL", None]
    assert parse_array("{{1,2},{3,4}}", int) == [[1, 2], [3, 4]]
    assert parse_array("[0:1]={7,8}", int) == [7, 8]
    with pytest.raises(DataException):
        parse_array("{1,2", int)


def test_arrays_of_any_mapped_type() -> None:
    int_array = t(1007, "_int4", element=INT4)
    schema = schema_of(int_array)
    assert schema.type is Type.ARRAY and schema.value_schema == Schema.OPTIONAL_INT32_SCHEMA
    assert convert(int_array, "{1,NULL,3}") == [1, None, 3]
    ts_array = t(1115, "_timestamp", element=t(1114, "timestamp"))
    assert convert(ts_array, '{"1970-01-01 00:00:01"}') == [1_000_000]


def test_enums_list_their_labels() -> None:
    mood = t(16386, "mood", namespace="public", kind="e", labels=("sad", "happy"))
    schema = schema_of(mood)
    assert (schema.name, dict(schema.parameters or {})) == ("io.debezium.data.Enum", {"allowed": "sad,happy"})
    assert convert(mood, "happy") == "happy"


def test_domains_map_as_their_base_type_with_its_modifier() -> None:
    price = t(
        16400,
        "price",
        namespace="public",
        kind="d",
        base=t(1700, "numeric"),
        base_modifier=numeric_modifier(8, 2),
    )
    assert dict(schema_of(price).parameters or {}) == {"scale": "2", "connect.decimal.precision": "8"}
    assert convert(price, "3.10") == decimal.Decimal("3.10")


def test_unknown_types_are_refused_unless_included_as_text() -> None:
    point = t(600, "point")
    with pytest.raises(UnsupportedTypeError, match="point"):
        conversion_for(point, -1, True, DEFAULT)
    settings = ValueSettings(include_unknown=True)
    assert schema_of(point, settings=settings).type is Type.STRING
    assert convert(point, "(1,2)", settings=settings) == "(1,2)"


# -- the server's text, as the connector's sessions make it print ------------------------------------------


def test_the_session_settings_produce_the_formats_the_parsers_expect(postgres: PostgresServer) -> None:
    import psycopg2

    conn = psycopg2.connect(postgres.dsn(), options=SESSION_OPTIONS)
    try:
        with conn.cursor() as cur:
            cur.execute(
                "SELECT '2024-01-02 03:04:05.5+02'::timestamptz::text,"
                " '1 year 2 mons -3 days 04:05:06.78'::interval::text,"
                " '\\x00ff'::bytea::text, 0.1::float8::text, '2000-02-29'::date::text"
            )
            tz, interval, bytea, float8, date = cur.fetchone()
    finally:
        conn.close()
    assert convert(t(1184, "timestamptz"), tz) == "2024-01-02T01:04:05.5Z"
    assert (
        convert(t(1186, "interval"), interval)
        == (14 * 2629800 - 3 * 86400 + 4 * 3600 + 5 * 60) * 10**6 + 6780000
    )
    assert convert(t(17, "bytea"), bytea) == b"\x00\xff"
    assert convert(t(701, "float8"), float8) == 0.1
    assert convert(t(1082, "date"), date) == 11016
