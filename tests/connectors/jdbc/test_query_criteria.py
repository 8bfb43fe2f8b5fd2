"""Offsets and the incremental SQL (connectors.jdbc.query.criteria): pure, compiled per dialect."""

from __future__ import annotations

import contextlib
import datetime as dt
import decimal
import random
import sqlite3
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import mysql, postgresql, sqlite

from connect.api import DataException
from connectors.jdbc.query.criteria import (
    Criteria,
    Mode,
    Offset,
    OffsetColumns,
    bulk_select,
    incrementing_value,
    query_source,
    record_offsets,
    table_source,
)
from connectors.jdbc.query.dialects import SqliteDialect, sqlite_milliseconds, sqlite_timestamp_text
from connectors.jdbc.query.tables import TableId

UTC = dt.UTC
T0 = dt.datetime(2024, 5, 1, 10, 0, 0, 123456, tzinfo=UTC)
ORDERS = TableId(None, "public", "orders")


def sql(stmt: Any, dialect: sa.Dialect | None = None) -> str:
    """Compiled SQL on one line."""
    return " ".join(str(stmt.compile(dialect=dialect or postgresql.dialect())).split())


# -- offsets -------------------------------------------------------------------------------------


def test_offset_maps_have_confluents_keys() -> None:
    assert Offset(incrementing=42).to_map() == {"incrementing": 42}
    assert Offset(T0).to_map() == {"timestamp": 1714557600123, "timestamp_nanos": 123456000}
    assert Offset(T0, 7).to_map() == {
        "incrementing": 7,
        "timestamp": 1714557600123,
        "timestamp_nanos": 123456000,
    }


@pytest.mark.parametrize(
    "moment",
    [
        T0,
        dt.datetime(1970, 1, 1, tzinfo=UTC),
        dt.datetime(1969, 12, 31, 23, 59, 59, 500000, tzinfo=UTC),  # before the epoch: Java's floor
        dt.datetime(2038, 1, 19, 3, 14, 8, 999999, tzinfo=UTC),
    ],
)
def test_offsets_round_trip_to_the_microsecond(moment: dt.datetime) -> None:
    offset = Offset(moment, 3)
    assert Offset.from_map(offset.to_map()) == offset


def test_pre_epoch_offset_is_what_java_timestamp_writes() -> None:
    # new Timestamp(-500) is 1969-12-31T23:59:59.5Z; getTime() -500, getNanos() 500000000
    moment = dt.datetime(1969, 12, 31, 23, 59, 59, 500000, tzinfo=UTC)
    assert Offset(moment).to_map() == {"timestamp": -500, "timestamp_nanos": 500000000}


def test_an_offset_without_nanos_uses_the_milliseconds() -> None:
    assert Offset.from_map({"timestamp": 1714557600123}) == Offset(T0.replace(microsecond=123000))


@pytest.mark.parametrize(
    "stored",
    [{"timestamp": "yesterday"}, {"incrementing": 1.5}, {"incrementing": True}, {"position": 3}],
)
def test_foreign_offsets_are_refused(stored: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Offset.from_map(stored)


def test_no_stored_offset_is_none() -> None:
    assert Offset.from_map(None) is None
    assert Offset.from_map({}) is None


# -- statements --------------------------------------------------------------------------------------


def test_incrementing_query() -> None:
    c = Criteria(Mode.INCREMENTING, incrementing_column="id")
    first = c.select(table_source(ORDERS, True), last=None, limit=100)
    assert sql(first) == 'SELECT * FROM "public"."orders" ORDER BY "id" ASC LIMIT %(param_1)s::INTEGER'
    stmt = c.select(table_source(ORDERS, True), last=Offset(incrementing=41), limit=100)
    assert sql(stmt) == (
        'SELECT * FROM "public"."orders" WHERE "id" > %(last_inc)s::BIGINT '
        'ORDER BY "id" ASC LIMIT %(param_1)s::INTEGER'
    )
    assert stmt.compile().params["last_inc"] == 41


def test_timestamp_query_has_both_bounds() -> None:
    c = Criteria(Mode.TIMESTAMP, timestamp_columns=("updated",))
    stmt = c.select(table_source(ORDERS, True), last=Offset(T0), begin="B", end="E", limit=10)
    assert sql(stmt) == (
        'SELECT * FROM "public"."orders" WHERE "updated" > %(begin)s::TIMESTAMP WITHOUT TIME ZONE '
        'AND "updated" < %(end)s::TIMESTAMP WITHOUT TIME ZONE ORDER BY "updated" ASC '
        "LIMIT %(param_1)s::INTEGER"
    )
    params = stmt.compile().params
    assert (params["begin"], params["end"]) == ("B", "E")


def test_timestamp_query_without_offset_has_only_the_end_bound() -> None:
    c = Criteria(Mode.TIMESTAMP, timestamp_columns=("updated",))
    stmt = c.select(table_source(ORDERS, True), last=None, begin=None, end="E")
    assert sql(stmt) == (
        'SELECT * FROM "public"."orders" WHERE "updated" < %(end)s::TIMESTAMP WITHOUT TIME ZONE '
        'ORDER BY "updated" ASC'
    )


def test_timestamp_incrementing_query_is_confluents() -> None:
    c = Criteria(Mode.TIMESTAMP_INCREMENTING, timestamp_columns=("updated",), incrementing_column="id")
    stmt = c.select(table_source(ORDERS, True), last=Offset(T0, 5), begin="B", end="E", limit=10)
    assert sql(stmt, mysql.dialect()) == (
        "SELECT * FROM `public`.`orders` WHERE `updated` < %s AND "
        "(`updated` = %s AND `id` > %s OR `updated` > %s) ORDER BY `updated` ASC, `id` ASC LIMIT %s"
    )


def test_timestamp_incrementing_from_timestamp_initial_includes_that_instant() -> None:
    c = Criteria(Mode.TIMESTAMP_INCREMENTING, timestamp_columns=("updated",), incrementing_column="id")
    stmt = c.select(table_source(ORDERS, True), last=None, begin="B", end="E")
    assert '"updated" >= %(begin)s' in sql(stmt)


def test_several_timestamp_columns_are_coalesced_in_order() -> None:
    c = Criteria(Mode.TIMESTAMP, timestamp_columns=("modified", "created"))
    stmt = c.select(table_source(ORDERS, True), last=None, end="E")
    assert 'WHERE coalesce("modified", "created") < %(end)s' in sql(stmt)
    assert 'ORDER BY coalesce("modified", "created") ASC' in sql(stmt)


def test_identifiers_are_not_quoted_with_never() -> None:
    c = Criteria(Mode.INCREMENTING, incrementing_column="Id", quote=False)
    stmt = c.select(table_source(TableId("shop", None, "Orders"), False), last=Offset(incrementing=1))
    assert sql(stmt, mysql.dialect()) == "SELECT * FROM shop.Orders WHERE Id > %s ORDER BY Id ASC"


def test_identifiers_are_always_quoted_even_lowercase_ones() -> None:
    stmt = bulk_select(table_source(TableId(None, None, "orders"), True))
    assert sql(stmt, sqlite.dialect()) == 'SELECT * FROM "orders"'


def test_a_suffix_replaces_the_limit_and_comes_last() -> None:
    c = Criteria(Mode.INCREMENTING, incrementing_column="id")
    stmt = c.select(table_source(ORDERS, True), last=None, limit=100, suffix="LIMIT 5")
    assert sql(stmt).endswith('ORDER BY "id" ASC LIMIT 5')
    assert "param_1" not in sql(stmt)
    assert (
        sql(bulk_select(table_source(ORDERS, True), "FOR SHARE"))
        == 'SELECT * FROM "public"."orders" FOR SHARE'
    )


def test_a_custom_query_is_wrapped_so_its_where_clause_keeps_working() -> None:
    source = query_source("SELECT o.id, o.updated FROM orders o WHERE o.state = 'paid' AND o.at > '10:30';")
    c = Criteria(Mode.INCREMENTING, incrementing_column="id")
    stmt = c.select(source, last=Offset(incrementing=3))
    assert sql(stmt) == (
        "SELECT * FROM (SELECT o.id, o.updated FROM orders o WHERE o.state = 'paid' AND o.at > '10:30') "
        'AS sluiceway_query WHERE "id" > %(last_inc)s::BIGINT ORDER BY "id" ASC'
    )
    assert set(stmt.compile().params) == {"last_inc"}  # '10:30' is not a bind parameter


def test_percent_signs_of_a_custom_query_survive_pyformat_drivers() -> None:
    stmt = bulk_select(query_source("SELECT * FROM t WHERE name LIKE 'a%'"))
    assert "LIKE 'a%%'" in sql(stmt)  # psycopg turns %% back into %
    assert "LIKE 'a%'" in sql(stmt, sqlite.dialect())


def test_rest_of_a_timestamp_selects_every_row_with_it() -> None:
    c = Criteria(Mode.TIMESTAMP, timestamp_columns=("updated",))
    assert sql(c.rest_of_timestamp(table_source(ORDERS, True), "T")) == (
        'SELECT * FROM "public"."orders" WHERE "updated" = %(at)s::TIMESTAMP WITHOUT TIME ZONE'
    )


def test_sqlite_compares_timestamps_in_one_text_format() -> None:
    d = SqliteDialect()
    c = Criteria(Mode.TIMESTAMP, timestamp_columns=("updated",), normalize_timestamp=d.normalize_timestamp)
    stmt = c.select(
        table_source(TableId(None, None, "t"), True), last=None, end="E", timestamp_type=d.timestamp_type
    )
    assert sql(stmt, sqlite.dialect()) == (
        'SELECT * FROM "t" WHERE strftime(\'%Y-%m-%d %H:%M:%f\', "updated") < '
        "strftime('%Y-%m-%d %H:%M:%f', ?) "
        "ORDER BY strftime('%Y-%m-%d %H:%M:%f', \"updated\") ASC"
    )
    moment = dt.datetime(2024, 5, 1, 10, 0, 0, 123999)
    assert sqlite_timestamp_text(moment) == "2024-05-01 10:00:00.123999"
    assert d.timestamp_parameter(T0, dt.timezone(dt.timedelta(hours=2))) == "2024-05-01 12:00:00.123456"


def test_modes_need_their_columns() -> None:
    with pytest.raises(ValueError, match="timestamp columns"):
        Criteria(Mode.TIMESTAMP)
    with pytest.raises(ValueError, match="incrementing column"):
        Criteria(Mode.TIMESTAMP_INCREMENTING, timestamp_columns=("t",))


# -- offsets of rows ----------------------------------------------------------------------------------


def test_offset_columns_are_found_exactly_then_ignoring_case() -> None:
    c = Criteria(
        Mode.TIMESTAMP_INCREMENTING, timestamp_columns=("Updated", "created"), incrementing_column="ID"
    )
    columns = OffsetColumns.locate(c, ["id", "name", "updated", "created"], "table t")
    assert columns == OffsetColumns((2, 3), 0)
    row = [7, "x", None, T0]
    assert columns.offset_of(row) == Offset(T0, 7)  # the first non-null timestamp column


def test_a_missing_offset_column_is_named() -> None:
    c = Criteria(Mode.INCREMENTING, incrementing_column="seq")
    with pytest.raises(ValueError, match=r"incrementing\.column\.name 'seq' is not a column of table t"):
        OffsetColumns.locate(c, ["id"], "table t")


def test_rows_without_timestamp_or_id_are_refused() -> None:
    columns = OffsetColumns((0,), 1)
    with pytest.raises(DataException, match="timestamp"):
        columns.offset_of([None, 1])
    with pytest.raises(DataException, match="null"):
        columns.offset_of([T0, None])


@pytest.mark.parametrize(
    ("value", "expected"), [(5, 5), (decimal.Decimal("12"), 12), (decimal.Decimal("12.000"), 12)]
)
def test_incrementing_values(value: Any, expected: int) -> None:
    assert incrementing_value(value) == expected


@pytest.mark.parametrize("value", [decimal.Decimal("1.5"), 2.0, "3", True])
def test_incrementing_values_must_be_integral(value: Any) -> None:
    with pytest.raises(DataException):
        incrementing_value(value)


def ts(second: int) -> dt.datetime:
    return dt.datetime(2024, 1, 1, 0, 0, second, tzinfo=UTC)


def test_timestamp_mode_offsets_advance_only_past_a_complete_timestamp() -> None:
    rows = [Offset(ts(1)), Offset(ts(2)), Offset(ts(2)), Offset(ts(2)), Offset(ts(3))]
    attached = record_offsets(Mode.TIMESTAMP, rows, previous=Offset(ts(0)))
    assert attached == [Offset(ts(1)), Offset(ts(1)), Offset(ts(1)), Offset(ts(2)), Offset(ts(3))]


def test_timestamp_mode_offsets_before_any_safe_point_are_none() -> None:
    attached = record_offsets(Mode.TIMESTAMP, [Offset(ts(5)), Offset(ts(5))], previous=None)
    assert attached == [None, Offset(ts(5))]


def test_other_modes_attach_each_rows_own_offset() -> None:
    rows = [Offset(ts(2), 1), Offset(ts(2), 2)]
    assert record_offsets(Mode.TIMESTAMP_INCREMENTING, rows, None) == rows
    assert record_offsets(Mode.INCREMENTING, [Offset(None, 1)], None) == [Offset(None, 1)]


@pytest.mark.parametrize("seed", range(3))
def test_sqlite_timestamps_group_as_sqlite_compares_them(seed: int) -> None:
    """Offsets must group rows as SQLite's strftime does, and parameters are normalized by
    SQLite in the query: with a truncation here half of the rows compared later than their
    own offset and were read again on every poll (the demo's newest row, a thousand times)."""
    rng = random.Random(seed)
    moments = [dt.datetime(2026, 11, 22, 4, 29, 59, 999_500), dt.datetime(2024, 12, 31, 23, 59, 59, 999_999)]
    moments += [dt.datetime(2026, 11, 22, 4, 29, 51, 928_500), dt.datetime(2026, 11, 22, 4, 29, 51, 1_500)]
    for _ in range(5000):
        hms = (rng.randrange(24), rng.randrange(60), rng.randrange(60))
        moments.append(dt.datetime(2026, 11, 22, *hms, rng.randrange(10**6)))
        moments.append(dt.datetime(2026, 11, 22, *hms, rng.randrange(1000) * 1000 + 500))  # halves
    with contextlib.closing(sqlite3.connect(":memory:")) as db:
        for moment in moments:
            text = sqlite_timestamp_text(moment)
            assert dt.datetime.fromisoformat(text) == moment  # the parameter loses nothing
            (theirs,) = db.execute("SELECT strftime('%Y-%m-%d %H:%M:%f', ?)", (text,)).fetchone()
            ours = sqlite_milliseconds(moment)
            assert ours.strftime("%Y-%m-%d %H:%M:%S.") + f"{ours.microsecond // 1000:03d}" == theirs, text
