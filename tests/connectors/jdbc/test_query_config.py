"""The JDBC source's settings and table bookkeeping (config, tables): pure, no database."""

from __future__ import annotations

import datetime as dt

import pytest

from connect.api import ConfigValidationError
from connectors.jdbc.query import JdbcSourceConnector
from connectors.jdbc.query.config import JdbcSourceConfig
from connectors.jdbc.query.tables import (
    TableId,
    decode_tables,
    encode_tables,
    group_contiguous,
    like_pattern,
    select_tables,
)
from connectors.jdbc.query.types import NumericMapping

BASE = {"connection.url": "jdbc:sqlite:/tmp/x.db", "mode": "bulk", "topic.prefix": "db-"}


def issues(**overrides: str) -> dict[str, str]:
    """The problems of BASE plus ``overrides`` (dotted keys given with underscores), by key."""
    props = {**BASE, **{k.replace("_", "."): v for k, v in overrides.items()}}
    return {i.key: i.message for i in JdbcSourceConnector().validate(props)}


def test_defaults_are_confluents() -> None:
    config = JdbcSourceConfig.parse(BASE)
    assert config.connection_attempts == 3
    assert config.connection_backoff_ms == 10000
    assert config.poll_interval_ms == 5000
    assert config.batch_max_rows == 100
    assert config.table_poll_interval_ms == 60000
    assert config.timestamp_delay_interval_ms == 0
    assert config.validate_non_null is True
    assert config.table_types == ["TABLE"]
    assert config.quote is True
    assert config.numeric is NumericMapping.NONE
    assert config.zone is dt.UTC
    assert config.timestamp_initial is None


def test_a_valid_config_has_no_issues() -> None:
    assert issues() == {}
    assert (
        issues(
            mode="timestamp+incrementing",
            timestamp_column_name="updated, created",
            incrementing_column_name="id",
            numeric_mapping="BEST_FIT",
            quote_sql_identifiers="Never",
            db_timezone="Europe/Paris",
            table_types="table,view,Partitioned Table",
        )
        == {}
    )


def test_the_password_is_secret() -> None:
    config = JdbcSourceConfig.parse({**BASE, "connection.password": "hunter2"})
    assert "hunter2" not in repr(config) and "hunter2" not in str(config.model_dump())
    assert config.url().url.password == "hunter2"
    problems = JdbcSourceConfig.issues({**BASE, "connection.password": "hunter2", "batch.max.rows": "x"})
    assert all("hunter2" not in i.message for i in problems)


@pytest.mark.parametrize(
    ("overrides", "key", "message"),
    [
        ({"mode": "sometimes"}, "mode", "Input should be 'bulk'"),
        (
            {"mode": "timestamp"},
            "timestamp.column.name",
            "timestamp.column.name is required with mode timestamp",
        ),
        (
            {"mode": "incrementing", "query": "SELECT * FROM t"},
            "incrementing.column.name",
            "auto-increment column of a query cannot be found",
        ),
        ({"table.whitelist": "a", "table.blacklist": "b"}, "table.blacklist", "are exclusive"),
        ({"table.include.list": "a", "table.exclude.list": "b"}, "table.exclude.list", "are exclusive"),
        ({"table.whitelist": "a", "table.include.list": "b"}, "table.include.list", "set only one"),
        ({"query": "SELECT 1", "table.whitelist": "a"}, "query", "may not be combined"),
        ({"query": "SELECT 1", "topic.prefix": ""}, "topic.prefix", "is the topic"),
        ({"topic.prefix": "bad prefix!"}, "topic.prefix", "ASCII alphanumerics"),
        ({"table.types": "TABLE,SYNONYM"}, "table.types", "'SYNONYM' is not supported"),
        ({"quote.sql.identifiers": "sometimes"}, "quote.sql.identifiers", "always or never"),
        ({"numeric.mapping": "best"}, "numeric.mapping", "best_fit_eager_double"),
        ({"db.timezone": "Mars/Olympus"}, "db.timezone", "unknown time zone"),
        ({"connection.url": "jdbc:oracle:thin:@db:1521:x"}, "connection.url", "not supported"),
        ({"connection.url": "mysql://root@db/x"}, "connection.url", "No module named 'MySQLdb'"),
        ({"connection.url": ""}, "connection.url", "at least 1 character"),
        ({"batch.max.rows": "0"}, "batch.max.rows", "greater than or equal to 1"),
        ({"connection.attempts": "0"}, "connection.attempts", "greater than or equal to 1"),
        ({"poll.interval.ms": "soon"}, "poll.interval.ms", "Invalid value soon"),
        ({"validate.non.null": "yes"}, "validate.non.null", "true or false"),
    ],
)
def test_each_problem_names_its_key(overrides: dict[str, str], key: str, message: str) -> None:
    props = {**BASE, **overrides}
    found = {i.key: i.message for i in JdbcSourceConnector().validate(props)}
    assert key in found, found
    assert message in found[key]


def test_mode_is_required() -> None:
    props = {k: v for k, v in BASE.items() if k != "mode"}
    with pytest.raises(ConfigValidationError, match='Missing required configuration "mode"'):
        JdbcSourceConfig.parse(props)


def test_old_and_new_table_list_names_mean_the_same() -> None:
    old = JdbcSourceConfig.parse({**BASE, "table.whitelist": "a, b"})
    new = JdbcSourceConfig.parse({**BASE, "table.include.list": "a,b"})
    assert old.include_tables == new.include_tables == ["a", "b"]
    both = JdbcSourceConfig.parse({**BASE, "table.blacklist": "c", "table.exclude.list": "c"})
    assert both.exclude_tables == ["c"]


def test_deprecated_numeric_precision_mapping_still_works() -> None:
    config = JdbcSourceConfig.parse({**BASE, "numeric.precision.mapping": "true"})
    assert config.numeric is NumericMapping.PRECISION_ONLY
    assert JdbcSourceConfig.parse({**BASE, "numeric.mapping": "best_fit"}).numeric is NumericMapping.BEST_FIT


def test_topics() -> None:
    config = JdbcSourceConfig.parse(BASE)
    assert config.topic_for(TableId(None, "public", "orders")) == "db-orders"
    assert JdbcSourceConfig.parse({**BASE, "query": "SELECT 1", "topic.prefix": "q"}).topic_for(None) == "q"


# -- tables ------------------------------------------------------------------------------------------

PG = [TableId(None, "public", "orders"), TableId(None, "public", "users"), TableId(None, "audit", "orders")]


def test_partitions_are_confluents_protocol_one_with_a_fallback_to_zero() -> None:
    assert TableId(None, "public", "orders").partition() == {"protocol": "1", "table": "public.orders"}
    assert TableId("shop", None, "orders").partition() == {"protocol": "1", "table": "shop.orders"}
    assert TableId(None, None, "orders").partition() == {"protocol": "1", "table": "orders"}
    assert TableId("shop", None, "orders").legacy_partition() == {"table": "orders"}


def test_table_filters_take_bare_or_qualified_names() -> None:
    assert select_tables(PG, include=["orders"]) == [PG[2], PG[0]]
    assert select_tables(PG, include=["public.orders"]) == [PG[0]]
    assert select_tables(PG, exclude=["orders"]) == [PG[1]]
    assert select_tables(PG, exclude=["audit.orders"]) == [PG[0], PG[1]]
    assert select_tables(PG) == [PG[2], PG[0], PG[1]]  # sorted by qualified name
    assert select_tables(PG, include=["Orders"]) == []  # names are compared exactly


@pytest.mark.parametrize(
    ("count", "groups", "sizes"),
    [(5, 2, [3, 2]), (6, 3, [2, 2, 2]), (7, 3, [3, 2, 2]), (2, 2, [1, 1]), (0, 1, [0])],
)
def test_tables_are_grouped_contiguously_like_kafkas_group_partitions(
    count: int, groups: int, sizes: list[int]
) -> None:
    items = list(range(count))
    grouped = group_contiguous(items, groups)
    assert [len(g) for g in grouped] == sizes
    assert [x for g in grouped for x in g] == items


def test_like_patterns() -> None:
    assert like_pattern("pub%").fullmatch("public")
    assert like_pattern("p_blic").fullmatch("public")
    assert not like_pattern("pub").fullmatch("public")
    assert like_pattern(r"a\_b").fullmatch("a_b") and not like_pattern(r"a\_b").fullmatch("axb")
    assert like_pattern("a.b").fullmatch("a.b") and not like_pattern("a.b").fullmatch("axb")


def test_task_table_lists_survive_dots_and_commas_in_names() -> None:
    tables = [TableId("db.1", None, "a,b"), TableId(None, "s", "t"), TableId(None, None, "u")]
    assert decode_tables(encode_tables(tables)) == tables
    assert decode_tables("") == []
    with pytest.raises(ValueError):
        decode_tables('[["a"]]')
