"""Column types → Connect schemas and values (connectors.jdbc.query.types, rows, and the
result-metadata readers of dialects): pure, no database."""

from __future__ import annotations

import contextlib
import datetime as dt
import decimal
import uuid
import zoneinfo
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import types as sat
from sqlalchemy.dialects import mysql, postgresql, sqlite

from connect.api import DataException, Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp
from connectors.jdbc.query.dialects import mysql_column, postgres_column
from connectors.jdbc.query.rows import RowMapper
from connectors.jdbc.query.types import (
    PRECISION_PARAMETER,
    ColumnSpec,
    NumericMapping,
    map_column,
    numeric_field,
    timestamp_converter,
)

UTC = dt.UTC
PARIS = zoneinfo.ZoneInfo("Europe/Paris")


def schema_of(t: sat.TypeEngine[Any], dialect: str = "postgresql", nullable: bool = False) -> Schema:
    return map_column(ColumnSpec("c", t, nullable), dialect).schema


def decimal_schema(scale: int, precision: int) -> Schema:
    return Decimal.builder(scale).parameter(PRECISION_PARAMETER, str(precision)).build()


@pytest.mark.parametrize(
    ("t", "dialect", "expected"),
    [
        (sa.Boolean(), "postgresql", Schema.BOOLEAN_SCHEMA),
        (mysql.TINYINT(display_width=1), "mysql", Schema.BOOLEAN_SCHEMA),
        (mysql.BIT(1), "mysql", Schema.BOOLEAN_SCHEMA),
        (mysql.BIT(8), "mysql", Schema.BYTES_SCHEMA),
        (mysql.TINYINT(display_width=4), "mysql", Schema.INT8_SCHEMA),
        (mysql.TINYINT(display_width=3, unsigned=True), "mysql", Schema.INT16_SCHEMA),
        (sa.SmallInteger(), "postgresql", Schema.INT16_SCHEMA),
        (mysql.SMALLINT(unsigned=True), "mysql", Schema.INT32_SCHEMA),
        (mysql.MEDIUMINT(), "mysql", Schema.INT32_SCHEMA),
        (sa.Integer(), "postgresql", Schema.INT32_SCHEMA),
        (mysql.INTEGER(unsigned=True), "mysql", Schema.INT64_SCHEMA),
        (sa.Integer(), "sqlite", Schema.INT64_SCHEMA),
        (sa.BigInteger(), "postgresql", Schema.INT64_SCHEMA),
        (mysql.BIGINT(unsigned=True), "mysql", decimal_schema(0, 20)),
        (mysql.YEAR(), "mysql", Schema.INT16_SCHEMA),
        (sa.REAL(), "postgresql", Schema.FLOAT32_SCHEMA),
        (mysql.FLOAT(), "mysql", Schema.FLOAT32_SCHEMA),
        (sa.REAL(), "sqlite", Schema.FLOAT64_SCHEMA),
        (postgresql.DOUBLE_PRECISION(), "postgresql", Schema.FLOAT64_SCHEMA),
        (mysql.DOUBLE(), "mysql", Schema.FLOAT64_SCHEMA),
        (sa.Float(53), "postgresql", Schema.FLOAT64_SCHEMA),
        (sa.Numeric(10, 2), "postgresql", decimal_schema(2, 10)),
        (mysql.DECIMAL(30, 0), "mysql", decimal_schema(0, 30)),
        (sa.Numeric(), "postgresql", Schema.STRING_SCHEMA),
        (sa.Date(), "postgresql", Date.SCHEMA),
        (sa.Time(), "postgresql", Time.SCHEMA),
        (sa.Time(timezone=True), "postgresql", Time.SCHEMA),
        (sa.DateTime(), "postgresql", Timestamp.SCHEMA),
        (sa.DateTime(timezone=True), "postgresql", Timestamp.SCHEMA),
        (mysql.DATETIME(fsp=6), "mysql", Timestamp.SCHEMA),
        (sqlite.DATETIME(), "sqlite", Timestamp.SCHEMA),
        (sa.Text(), "postgresql", Schema.STRING_SCHEMA),
        (sa.VARCHAR(10), "postgresql", Schema.STRING_SCHEMA),
        (sa.CHAR(3), "postgresql", Schema.STRING_SCHEMA),
        (mysql.ENUM("a", "b"), "mysql", Schema.STRING_SCHEMA),
        (mysql.SET("a", "b"), "mysql", Schema.STRING_SCHEMA),
        (postgresql.JSONB(), "postgresql", Schema.STRING_SCHEMA),
        (sa.Uuid(), "postgresql", Schema.STRING_SCHEMA),
        (postgresql.INTERVAL(), "postgresql", Schema.STRING_SCHEMA),
        (postgresql.BYTEA(), "postgresql", Schema.BYTES_SCHEMA),
        (mysql.VARBINARY(10), "mysql", Schema.BYTES_SCHEMA),
        (sa.BLOB(), "sqlite", Schema.BYTES_SCHEMA),
        (sat.NullType(), "sqlite", Schema.STRING_SCHEMA),
    ],
)
def test_column_types_map_to_connect_schemas(t: sat.TypeEngine[Any], dialect: str, expected: Schema) -> None:
    assert schema_of(t, dialect) == expected


def test_nullable_columns_get_optional_schemas() -> None:
    assert schema_of(sa.Integer(), nullable=True) == Schema.OPTIONAL_INT32_SCHEMA
    optional_decimal = map_column(ColumnSpec("c", sa.Numeric(5, 1), True), "postgresql").schema
    assert optional_decimal.optional and optional_decimal.name == Decimal.LOGICAL_NAME


I8, I16, I32, I64, F64 = (
    Schema.INT8_SCHEMA,
    Schema.INT16_SCHEMA,
    Schema.INT32_SCHEMA,
    Schema.INT64_SCHEMA,
    Schema.FLOAT64_SCHEMA,
)


@pytest.mark.parametrize(
    ("precision", "scale", "mapping", "expected"),
    [
        (5, 0, NumericMapping.NONE, decimal_schema(0, 5)),
        (2, 0, NumericMapping.PRECISION_ONLY, I8),
        (4, 0, NumericMapping.PRECISION_ONLY, I16),
        (9, 0, NumericMapping.PRECISION_ONLY, I32),
        (18, 0, NumericMapping.PRECISION_ONLY, I64),
        (19, 0, NumericMapping.PRECISION_ONLY, decimal_schema(0, 19)),
        (10, 2, NumericMapping.PRECISION_ONLY, decimal_schema(2, 10)),
        (3, 0, NumericMapping.BEST_FIT, I16),
        (10, 2, NumericMapping.BEST_FIT, F64),
        (18, 4, NumericMapping.BEST_FIT, F64),
        (20, 4, NumericMapping.BEST_FIT, decimal_schema(4, 20)),
        (20, 0, NumericMapping.BEST_FIT, decimal_schema(0, 20)),
        (20, 4, NumericMapping.BEST_FIT_EAGER_DOUBLE, F64),
        (12, 0, NumericMapping.BEST_FIT_EAGER_DOUBLE, I64),
        (30, 0, NumericMapping.BEST_FIT_EAGER_DOUBLE, decimal_schema(0, 30)),
        (None, None, NumericMapping.BEST_FIT, Schema.STRING_SCHEMA),
        (None, None, NumericMapping.BEST_FIT_EAGER_DOUBLE, F64),
    ],
)
def test_numeric_mapping_follows_confluents_rules(
    precision: int | None, scale: int | None, mapping: NumericMapping, expected: Schema
) -> None:
    assert numeric_field(precision, scale, mapping, optional=False).schema == expected


def convert(t: sat.TypeEngine[Any], raw: Any, dialect: str = "postgresql", zone: dt.tzinfo = UTC) -> Any:
    return map_column(ColumnSpec("c", t), dialect, NumericMapping.NONE, zone).convert(raw)


def test_decimals_are_held_at_the_columns_scale() -> None:
    assert str(convert(sa.Numeric(10, 2), decimal.Decimal("1.5"))) == "1.50"
    assert str(convert(sa.Numeric(10, 2), 3, "sqlite")) == "3.00"
    assert str(convert(sa.Numeric(10, 2), 0.1, "sqlite")) == "0.10"
    assert convert(sa.Numeric(), decimal.Decimal("1E+3")) == "1000"  # unconstrained: exact text
    best_fit = numeric_field(10, 2, NumericMapping.BEST_FIT).convert
    assert best_fit(decimal.Decimal("2.25")) == 2.25
    assert numeric_field(9, 0, NumericMapping.BEST_FIT).convert(decimal.Decimal("7")) == 7


def test_naive_timestamps_are_read_in_db_timezone() -> None:
    naive = dt.datetime(2024, 7, 1, 12, 0, 0, 250000)
    assert convert(sa.DateTime(), naive) == dt.datetime(2024, 7, 1, 12, 0, 0, 250000, tzinfo=UTC)
    assert convert(sa.DateTime(), naive, zone=PARIS) == dt.datetime(2024, 7, 1, 10, 0, 0, 250000, tzinfo=UTC)
    winter = dt.datetime(2024, 1, 1, 12, 0)
    assert convert(sa.DateTime(), winter, zone=PARIS) == dt.datetime(2024, 1, 1, 11, 0, tzinfo=UTC)


def test_aware_timestamps_are_converted_to_utc_whatever_db_timezone_says() -> None:
    aware = dt.datetime(2024, 7, 1, 12, 0, tzinfo=dt.timezone(dt.timedelta(hours=-5)))
    assert convert(sa.DateTime(timezone=True), aware, zone=PARIS) == dt.datetime(
        2024, 7, 1, 17, 0, tzinfo=UTC
    )


def test_sqlite_timestamp_text_in_any_iso_format() -> None:
    conv = timestamp_converter(UTC)
    assert conv("2024-07-01 12:00:00") == dt.datetime(2024, 7, 1, 12, tzinfo=UTC)
    assert conv("2024-07-01T12:00:00.123") == dt.datetime(2024, 7, 1, 12, 0, 0, 123000, tzinfo=UTC)
    assert conv("2024-07-01 12:00:00+02:00") == dt.datetime(2024, 7, 1, 10, tzinfo=UTC)
    with pytest.raises(DataException, match="not a date and time"):
        conv("yesterday")
    with pytest.raises(DataException, match="not a timestamp"):
        conv(1719835200)


def test_times_and_dates() -> None:
    assert convert(sa.Time(), dt.timedelta(hours=10, minutes=11, seconds=12), "mysql") == dt.time(10, 11, 12)
    with pytest.raises(DataException, match="not a time of day"):
        convert(sa.Time(), dt.timedelta(hours=25), "mysql")
    with_zone = dt.time(10, 0, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert convert(sa.Time(timezone=True), with_zone) == dt.time(8, 0)
    assert convert(sa.Time(), "23:59:59.5", "sqlite") == dt.time(23, 59, 59, 500000)
    assert convert(sa.Date(), "2024-02-29", "sqlite") == dt.date(2024, 2, 29)
    assert convert(sa.Date(), dt.date(2024, 2, 29)) == dt.date(2024, 2, 29)


def test_other_values() -> None:
    assert convert(mysql.TINYINT(display_width=1), 1, "mysql") is True
    assert convert(mysql.BIT(1), b"\x00", "mysql") is False
    assert convert(sa.Boolean(), 0, "sqlite") is False
    assert convert(postgresql.BYTEA(), memoryview(b"\x00\xff")) == b"\x00\xff"
    assert convert(postgresql.JSONB(), {"a": [1, 2]}) == '{"a": [1, 2]}'
    assert convert(sa.Uuid(), uuid.UUID(int=1)) == "00000000-0000-0000-0000-000000000001"
    assert convert(postgresql.INTERVAL(), dt.timedelta(days=1)) == "1 day, 0:00:00"
    assert convert(sa.Float(), 1) == 1.0


# -- result metadata of custom queries -------------------------------------------------------------------


def test_postgres_result_columns_by_type_oid() -> None:
    assert postgres_column("n", 1700, 10, 2).type.precision == 10  # type: ignore[attr-defined]
    assert isinstance(postgres_column("n", 1700, None, None).type, sa.Numeric)
    assert isinstance(postgres_column("t", 1184, None, None).type, sa.DateTime)
    assert isinstance(postgres_column("a", 1007, None, None).type, sat.NullType)  # int[]: as text
    assert postgres_column("x", 23, None, None).nullable


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((3, 11, 0, 1), Schema.INT32_SCHEMA),  # INT NOT NULL
        ((3, 10, 0, 32), Schema.OPTIONAL_INT64_SCHEMA),  # INT UNSIGNED
        ((1, 1, 0), Schema.OPTIONAL_BOOLEAN_SCHEMA),  # TINYINT(1)
        ((246, 12, 2), Decimal.builder(2).parameter(PRECISION_PARAMETER, "10").optional().build()),
        ((246, 10, 0, 32), Decimal.builder(0).parameter(PRECISION_PARAMETER, "10").optional().build()),
        ((252, 65535, 0, 0, 63), Schema.OPTIONAL_BYTES_SCHEMA),  # BLOB
        ((252, 65535, 0, 0, 45), Schema.OPTIONAL_STRING_SCHEMA),  # TEXT
        ((254, 4, 0, 256, 63), Schema.OPTIONAL_STRING_SCHEMA),  # ENUM
        ((12, 26, 6), Timestamp.builder().optional().build()),
        ((11, 10, 0), Time.builder().optional().build()),
    ],
)
def test_mysql_result_columns_from_field_packets(args: tuple[int, ...], expected: Schema) -> None:
    spec = mysql_column("c", *args)
    assert map_column(spec, "mysql").schema == expected


# -- rows ---------------------------------------------------------------------------------------------------


COLUMNS = (
    ColumnSpec("id", sa.Integer(), False),
    ColumnSpec("tenant", sa.Integer(), False),
    ColumnSpec("name", sa.Text(), True),
    ColumnSpec("at", sa.DateTime(), True),
)


def test_rows_become_value_and_primary_key_structs() -> None:
    mapper = RowMapper.build(COLUMNS, "postgresql", schema_name="orders", primary_key=("tenant", "id"))
    assert mapper.value_schema.name == "orders"
    assert [f.name for f in mapper.value_schema.fields] == ["id", "tenant", "name", "at"]
    assert mapper.key_schema == (
        SchemaBuilder.struct()
        .name("orders.Key")
        .field("tenant", Schema.INT32_SCHEMA)
        .field("id", Schema.INT32_SCHEMA)
        .build()
    )
    values = mapper.convert((1, 9, None, dt.datetime(2024, 1, 1)))
    key, value = mapper.structs(values)
    assert key == Struct(mapper.key_schema).put("tenant", 9).put("id", 1)
    assert value.get("at") == dt.datetime(2024, 1, 1, tzinfo=UTC)
    assert value.get("name") is None


def test_without_primary_key_the_key_is_null_and_queries_are_unnamed() -> None:
    mapper = RowMapper.build(COLUMNS, "postgresql", schema_name=None)
    assert mapper.key_schema is None and mapper.value_schema.name is None
    assert mapper.structs(mapper.convert((1, 2, "x", None)))[0] is None


def test_a_value_that_does_not_fit_names_its_column() -> None:
    mapper = RowMapper.build(COLUMNS, "sqlite", schema_name="t")
    with pytest.raises(DataException, match="column 'at'"):
        mapper.convert((1, 2, "x", "not a time"))


def test_duplicate_column_names_are_refused_with_advice() -> None:
    with pytest.raises(DataException, match="two columns named 'id'"):
        RowMapper.build((COLUMNS[0], COLUMNS[0]), "postgresql", schema_name=None)


# The generated fast paths (connectors/jdbc/query/rows.py, paid for by benchmarks/jdbc_source.py)
# against the per-column code they stand for: the same values, the same structs, the same errors.
_ROW_VALUES = st.one_of(
    st.none(),
    st.integers(-(2**40), 2**40),
    st.text(max_size=4),
    st.floats(allow_nan=False),
    st.booleans(),
    st.datetimes(min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2200, 1, 1)),
    st.binary(max_size=3),
)
_MIXED = (
    ColumnSpec("id", sa.Integer(), False),
    ColumnSpec("small", sa.SmallInteger(), True),
    ColumnSpec("name", sa.Text(), True),
    ColumnSpec("at", sa.DateTime(), True),
    ColumnSpec("ratio", sa.Float(), True),
    ColumnSpec("ok", sa.Boolean(), True),
)


_PROPER = (
    st.integers(-(2**31), 2**31 - 1),
    st.none() | st.integers(-(2**15), 2**15 - 1),
    st.none() | st.text(max_size=4),
    st.none() | st.datetimes(min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2200, 1, 1)),
    st.none() | st.floats(allow_nan=False),
    st.none() | st.booleans(),
)


@settings(max_examples=500, deadline=None)
@given(
    st.tuples(*[st.one_of(proper, proper, proper, _ROW_VALUES) for proper in _PROPER]),
    st.sampled_from(["postgresql", "sqlite"]),
)
def test_generated_row_code_equals_the_checked_path(row: tuple[Any, ...], dialect: str) -> None:
    mapper = RowMapper.build(_MIXED, dialect, schema_name="t", primary_key=("id",))

    def outcome(fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except DataException as exc:
            return type(exc)

    checked = outcome(mapper._convert_each, row)
    assert outcome(mapper.convert, row) == checked
    if isinstance(checked, list):
        fast = mapper._fast_structs(checked)
        careful = outcome(
            lambda: (
                Struct.from_values(mapper.key_schema, [checked[i] for i in mapper.key_positions]),
                Struct.from_values(mapper.value_schema, checked),
            )
        )
        if fast is not None:  # None: the fast path declined, the checked one decides
            assert fast == careful


def test_the_generated_struct_path_is_taken_by_plain_rows() -> None:
    mapper = RowMapper.build(_MIXED, "postgresql", schema_name="t", primary_key=("id",))
    values = mapper.convert((1, 2, "x", dt.datetime(2024, 1, 1), 0.5, True))
    assert mapper._fast_structs(values) is not None


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(*[st.one_of(proper, proper, proper, _ROW_VALUES) for proper in _PROPER]), max_size=5),
    st.sampled_from(["postgresql", "sqlite"]),
)
def test_a_poll_of_rows_as_columns_equals_its_rows_one_by_one(
    rows: list[tuple[Any, ...]], dialect: str
) -> None:
    # mapper.columns (the query source's batches) against mapper.structs per row: the same
    # keys and values, or None where some row's structs would be refused.
    mapper = RowMapper.build(_MIXED, dialect, schema_name="t", primary_key=("id",))
    converted = []
    for row in rows:
        with contextlib.suppress(DataException):
            converted.append(mapper.convert(row))
    try:
        expected: list[tuple[Any, Any]] | None = [mapper.structs(v) for v in converted]
    except DataException:
        expected = None
    got = mapper.columns(converted)
    if not converted or expected is None:
        assert got is None
    else:
        assert got is not None
        keys, values = got
        assert keys is not None
        assert list(zip(keys, values, strict=True)) == expected
