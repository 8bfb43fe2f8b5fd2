"""JdbcSourceConnector end to end: a real worker and broker (EmbeddedConnect), real SQLite,
PostgreSQL and MariaDB databases, records read back from the topics with the JsonConverter.

One worker serves the whole module; each test has its own database, connector name and
topic prefix. Where a test must show that nothing arrived twice, it inserts a *fence*
row after the rows it expects and reads up to the fence: a duplicate would come first.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, Message, TopicPartition

from connect.api import Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp
from connect.converters.json import JsonConverter
from connectors.jdbc.query.types import PRECISION_PARAMETER
from sluiceway.embedded import EmbeddedConnect
from tests.connectors.jdbc.test_query_support import (
    TestDatabase,
    db_fixture,
    maria_db_fixture,
    pg_db_fixture,
    sqlite_db_fixture,
)
from tests.support import free_port, unique

# Imported for pytest, which finds fixtures among a module's names.
FIXTURES = (db_fixture, maria_db_fixture, pg_db_fixture, sqlite_db_fixture)
CLASS = "io.confluent.connect.jdbc.JdbcSourceConnector"
UTC = dt.UTC
MODES = ("bulk", "incrementing", "timestamp", "timestamp+incrementing")


@pytest.fixture(scope="module")
def connect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedConnect]:
    # Offsets flushed often: the tests that read them back, or recreate connectors, wait less.
    with EmbeddedConnect(tmp_path_factory.mktemp("jdbc-worker"), {"offset.flush.interval.ms": "100"}) as c:
        yield c


class Connectors:
    """Creates connectors on the shared worker and deletes them after the test (before its
    database is dropped)."""

    def __init__(self, connect: EmbeddedConnect) -> None:
        self.connect = connect
        self.names: list[str] = []

    def create(
        self, db: TestDatabase, name: str | None = None, **settings: str
    ) -> tuple[str, dict[str, str]]:
        name = name or unique("jdbc")
        config = {
            "connector.class": CLASS,
            "connection.url": db.url,
            "topic.prefix": f"{name}-",
            "poll.interval.ms": "50",
            "tasks.max": "1",
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            **{k.replace("_", "."): v for k, v in settings.items()},
        }
        self.connect.create_connector(name, config)
        if name not in self.names:
            self.names.append(name)
        return name, config

    def delete(self, name: str) -> None:
        r = self.connect.request("DELETE", f"/connectors/{name}")
        assert r.status_code in (204, 404), r.text
        self.connect.wait_for(
            lambda: self.connect.request("GET", f"/connectors/{name}/status").status_code == 404,
            30,
            f"{name} to be deleted",
        )


@pytest.fixture
def connectors(connect: EmbeddedConnect) -> Iterator[Connectors]:
    made = Connectors(connect)
    yield made
    for name in made.names:
        connect.request("DELETE", f"/connectors/{name}")


def decoder() -> JsonConverter:
    converter = JsonConverter()
    converter.configure({"schemas.enable": "true"}, is_key=False)
    return converter


def consume(connect: EmbeddedConnect, topic: str, count: int, timeout: float = 30) -> list[Message]:
    """The first ``count`` messages of ``topic``: ``EmbeddedConnect.consume``, tuned to read
    in milliseconds rather than half a second (the tests read a lot)."""
    consumer = Consumer(
        {
            "bootstrap.servers": connect.bootstrap,
            "group.id": unique("reader"),
            "enable.auto.commit": False,
            "fetch.wait.max.ms": 10,
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])  # offset 0, not BEGINNING: no offset lookup
    out: list[Message] = []
    deadline = time.monotonic() + timeout
    try:
        while len(out) < count and time.monotonic() < deadline:
            out += [m for m in consumer.consume(count - len(out), 0.1) if m.error() is None]
    finally:
        consumer.close()
    assert len(out) >= count, f"only {len(out)} of {count} records arrived on {topic}"
    return out


def read(connect: EmbeddedConnect, topic: str, count: int) -> list[tuple[Any, Struct]]:
    """The first ``count`` (key, value) pairs of ``topic``, as Connect data."""
    json = decoder()
    out = []
    for message in consume(connect, topic, count):
        key = json.to_connect_data(topic, message.key()).value if message.key() else None
        out.append((key, json.to_connect_data(topic, message.value()).value))
    return out


def fields(struct: Struct) -> dict[str, Any]:
    return {f.name: struct.get(f.name) for f in struct.schema.fields}


def values(connect: EmbeddedConnect, topic: str, count: int) -> list[dict[str, Any]]:
    return [fields(value) for _, value in read(connect, topic, count)]


def read_to_fence(
    connect: EmbeddedConnect, topic: str, expected: int, fence: Callable[[dict[str, Any]], bool]
) -> list[dict[str, Any]]:
    """``expected`` rows and then the fence row: fails if anything else (a duplicate) came
    before the fence."""
    rows = values(connect, topic, expected + 1)
    assert fence(rows[-1]), f"expected the fence row last, got {rows[-1]}; rows: {rows}"
    return rows[:-1]


def ts(second: float) -> str:
    moment = dt.datetime(2024, 3, 1, 12, 0, tzinfo=UTC) + dt.timedelta(seconds=second)
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def utc(second: float) -> dt.datetime:
    return dt.datetime(2024, 3, 1, 12, 0, tzinfo=UTC) + dt.timedelta(seconds=second)


def orders_table(db: TestDatabase, table: str = "orders") -> None:
    db.run(
        f"CREATE TABLE {table} (id {db.serial}, name VARCHAR(40) NOT NULL, updated {db.timestamp} NOT NULL)"
    )


def insert(db: TestDatabase, table: str, *rows: tuple[str, float]) -> None:
    db.run(*(f"INSERT INTO {table} (name, updated) VALUES ('{n}', '{ts(s)}')" for n, s in rows))


def mode_settings(mode: str) -> dict[str, str]:
    settings = {"mode": mode}
    if mode in ("incrementing", "timestamp+incrementing"):
        settings["incrementing.column.name"] = "id"
    if mode in ("timestamp", "timestamp+incrementing"):
        settings["timestamp.column.name"] = "updated"
    return settings


# -- every mode, every database ----------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_every_mode_copies_the_table(
    db: TestDatabase, connect: EmbeddedConnect, connectors: Connectors, mode: str
) -> None:
    orders_table(db)
    insert(db, "orders", ("a", 1), ("b", 2), ("c", 3), ("d", 4), ("e", 5))
    name, _ = connectors.create(db, batch_max_rows="2", **mode_settings(mode))
    connect.wait_for_running(name)
    topic = f"{name}-orders"
    first = read(connect, topic, 5)
    assert [v.get("name") for _, v in first] == ["a", "b", "c", "d", "e"]
    key, value = first[0]
    assert value.schema.name == "orders"
    id_schema = Schema.INT64_SCHEMA if db.kind == "sqlite" else Schema.INT32_SCHEMA
    assert key == Struct(SchemaBuilder.struct().name("orders.Key").field("id", id_schema).build()).put(
        "id", 1
    )
    assert value.get("updated") == utc(1)
    if mode == "bulk":
        # The whole table again at every poll interval.
        again = values(connect, topic, 10)[5:]
        assert [v["name"] for v in again] == ["a", "b", "c", "d", "e"]
        return
    insert(db, "orders", ("f", 6))
    if mode == "incrementing":
        rows = values(connect, topic, 6)
        assert rows[5]["name"] == "f"
        return
    # The timestamp modes also see changed rows.
    db.run(f"UPDATE orders SET name = 'b2', updated = '{ts(7)}' WHERE id = 2")
    rows = values(connect, topic, 7)
    assert [r["name"] for r in rows[5:]] == ["f", "b2"]
    offsets = connect.request("GET", f"/connectors/{name}/offsets").json()["offsets"]
    expected: dict[str, int] = {"timestamp": int(utc(7).timestamp() * 1000), "timestamp_nanos": 0}
    if mode == "timestamp+incrementing":
        expected["incrementing"] = 2
    connect.wait_for(
        lambda: (
            connect.request("GET", f"/connectors/{name}/offsets").json()["offsets"]
            == [{"partition": {"protocol": "1", "table": db.fqn("orders")}, "offset": expected}]
        ),
        20,
        f"the committed offset to be {expected} (last seen {offsets})",
    )


# -- restarts --------------------------------------------------------------------------------------------


def test_recreated_connectors_resume_without_duplicates_or_gaps(
    db: TestDatabase, connect: EmbeddedConnect, connectors: Connectors
) -> None:
    """One connector per incremental mode, all deleted and created again under their names."""
    orders_table(db)
    # Timestamps repeat across batch boundaries (batch.max.rows=3).
    insert(db, "orders", *[(f"r{i}", i // 4) for i in range(10)])
    modes = ("incrementing", "timestamp", "timestamp+incrementing")
    names = {mode: connectors.create(db, batch_max_rows="3", **mode_settings(mode))[0] for mode in modes}
    for mode, name in names.items():
        connect.wait_for_running(name)
        assert [v["name"] for v in values(connect, f"{name}-orders", 10)] == [f"r{i}" for i in range(10)], (
            mode
        )
    for name in names.values():
        connectors.delete(name)  # the task stops and commits its offsets
    # Newer timestamps: the timestamp mode cannot tell a row written now with an old
    # timestamp from one it read already (see the late-commit tests).
    insert(db, "orders", *[(f"r{i}", 3 + (i - 10) // 2) for i in range(10, 14)])
    for mode, name in names.items():
        connectors.create(db, name=name, batch_max_rows="3", **mode_settings(mode))
    insert(db, "orders", ("fence", 100))
    for mode, name in names.items():
        connect.wait_for_running(name)
        rows = read_to_fence(connect, f"{name}-orders", 14, lambda r: r["name"] == "fence")
        assert [r["name"] for r in rows] == [f"r{i}" for i in range(14)], mode


def test_a_restarted_worker_resumes_from_its_offsets_file(
    tmp_path_factory: pytest.TempPathFactory, sqlite_db: TestDatabase
) -> None:
    work = tmp_path_factory.mktemp("jdbc-restart")
    orders_table(sqlite_db)
    insert(sqlite_db, "orders", ("a", 1), ("b", 2))
    config = {
        "connector.class": CLASS,
        "connection.url": sqlite_db.url,
        "topic.prefix": "restart-",
        "poll.interval.ms": "50",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        **mode_settings("timestamp+incrementing"),
    }
    with EmbeddedConnect(work) as first:
        first.create_connector("orders-source", config)
        first.wait_for_running("orders-source")
        assert len(consume(first, "restart-orders", 2)) == 2
    insert(sqlite_db, "orders", ("c", 3))
    with EmbeddedConnect(work) as second:  # same broker data, same offsets file
        second.create_connector("orders-source", config)
        second.wait_for_running("orders-source")
        insert(sqlite_db, "orders", ("fence", 4))
        rows = read_to_fence(second, "restart-orders", 3, lambda r: r["name"] == "fence")
        assert [r["name"] for r in rows] == ["a", "b", "c"]


# -- the timestamp modes' edge cases ---------------------------------------------------------------------


def test_rows_sharing_a_timestamp_across_batches_are_all_delivered(
    db: TestDatabase, connect: EmbeddedConnect, connectors: Connectors
) -> None:
    orders_table(db)
    # Groups of 1, 5 and 2 rows with equal timestamps; batches of 2 rows.
    insert(db, "orders", ("a", 1), *[(f"b{i}", 2) for i in range(5)], ("c0", 3), ("c1", 3))
    name, _ = connectors.create(db, batch_max_rows="2", **mode_settings("timestamp"))
    connect.wait_for_running(name)
    insert(db, "orders", ("fence", 9))
    rows = read_to_fence(connect, f"{name}-orders", 8, lambda r: r["name"] == "fence")
    assert sorted(r["name"] for r in rows) == ["a", "b0", "b1", "b2", "b3", "b4", "c0", "c1"]
    assert [r["updated"] for r in rows] == sorted(r["updated"] for r in rows)


def test_a_row_committed_late_within_the_delay_is_delivered(
    db: TestDatabase, connect: EmbeddedConnect, connectors: Connectors
) -> None:
    orders_table(db)
    # Timestamps taken from the database's clock, as the connector's end bound is.
    db.run(f"INSERT INTO orders (name, updated) VALUES ('early', {db.now_sql(-60_000)})")
    name, _ = connectors.create(db, timestamp_delay_interval_ms="1500", **mode_settings("timestamp"))
    connect.wait_for_running(name)
    topic = f"{name}-orders"
    assert values(connect, topic, 1)[0]["name"] == "early"
    # "first" commits now; "late" commits right after it, with an earlier timestamp (say a
    # transaction that started before "first" and committed after it). Neither is visible to
    # the connector before the delay is over, so by then both are there, in timestamp order.
    db.run(f"INSERT INTO orders (name, updated) VALUES ('first', {db.now_sql(-100)})")
    db.run(f"INSERT INTO orders (name, updated) VALUES ('late', {db.now_sql(-700)})")
    assert [r["name"] for r in values(connect, topic, 3)[1:]] == ["late", "first"]


def test_a_row_committed_later_than_the_delay_is_lost_in_timestamp_mode_not_by_id(
    db: TestDatabase, connect: EmbeddedConnect, connectors: Connectors
) -> None:
    """The known limitation of the timestamp modes, and what catches such rows."""
    orders_table(db)
    db.run(f"INSERT INTO orders (name, updated) VALUES ('first', {db.now_sql(-1000)})")
    by_time, _ = connectors.create(db, **mode_settings("timestamp"))
    by_id, _ = connectors.create(db, **mode_settings("incrementing"))
    connect.wait_for_running(by_time)
    connect.wait_for_running(by_id)
    assert values(connect, f"{by_time}-orders", 1)[0]["name"] == "first"
    assert values(connect, f"{by_id}-orders", 1)[0]["name"] == "first"
    # Committed after "first" was read, with an older timestamp: beyond the (zero) delay.
    db.run(f"INSERT INTO orders (name, updated) VALUES ('late', {db.now_sql(-5000)})")
    db.run(f"INSERT INTO orders (name, updated) VALUES ('fence', {db.now_sql(-50)})")
    rows = read_to_fence(connect, f"{by_time}-orders", 1, lambda r: r["name"] == "fence")
    assert [r["name"] for r in rows] == ["first"]  # "late" is never seen by timestamp
    assert [r["name"] for r in values(connect, f"{by_id}-orders", 3)] == ["first", "late", "fence"]


# -- types -----------------------------------------------------------------------------------------------


def dec(scale: int, precision: int, optional: bool = True) -> Schema:
    builder = Decimal.builder(scale).parameter(PRECISION_PARAMETER, str(precision))
    return (builder.optional() if optional else builder).build()


def optional(builder: SchemaBuilder) -> Schema:
    return builder.optional().build()


# (column DDL, inserted SQL literal, expected schema, expected value) per database.
TYPES: dict[str, list[tuple[str, str, str, Schema, Any]]] = {
    "postgresql": [
        ("c_bool", "BOOLEAN", "true", Schema.OPTIONAL_BOOLEAN_SCHEMA, True),
        ("c_int2", "SMALLINT", "-32768", Schema.OPTIONAL_INT16_SCHEMA, -32768),
        ("c_int4", "INTEGER NOT NULL", "2147483647", Schema.INT32_SCHEMA, 2147483647),
        ("c_int8", "BIGINT", "-9223372036854775808", Schema.OPTIONAL_INT64_SCHEMA, -(2**63)),
        ("c_real", "REAL", "1.5", Schema.OPTIONAL_FLOAT32_SCHEMA, 1.5),
        ("c_double", "DOUBLE PRECISION", "2.25", Schema.OPTIONAL_FLOAT64_SCHEMA, 2.25),
        ("c_numeric", "NUMERIC(12,3)", "-123456789.125", dec(3, 12), decimal.Decimal("-123456789.125")),
        ("c_anynum", "NUMERIC", "1.000001", Schema.OPTIONAL_STRING_SCHEMA, "1.000001"),
        ("c_text", "TEXT", "'héllo'", Schema.OPTIONAL_STRING_SCHEMA, "héllo"),
        ("c_varchar", "VARCHAR(10)", "'v'", Schema.OPTIONAL_STRING_SCHEMA, "v"),
        ("c_char", "CHAR(3)", "'ab'", Schema.OPTIONAL_STRING_SCHEMA, "ab "),
        ("c_bytes", "BYTEA", "'\\x00ff'::bytea", Schema.OPTIONAL_BYTES_SCHEMA, b"\x00\xff"),
        ("c_date", "DATE", "'2024-02-29'", optional(Date.builder()), dt.date(2024, 2, 29)),
        ("c_time", "TIME(3)", "'13:14:15.250'", optional(Time.builder()), dt.time(13, 14, 15, 250000)),
        ("c_timetz", "TIMETZ", "'13:00:00+02'", optional(Time.builder()), dt.time(11, 0)),
        ("c_ts", "TIMESTAMP(3)", "'2024-03-01 12:00:00.5'", optional(Timestamp.builder()), utc(0.5)),
        (
            "c_tstz",
            "TIMESTAMPTZ",
            "'2024-03-01 12:00:00+05'",
            optional(Timestamp.builder()),
            utc(-5 * 3600),
        ),
        ("c_json", "JSONB", """'{"a": 1}'""", Schema.OPTIONAL_STRING_SCHEMA, '{"a": 1}'),
        (
            "c_uuid",
            "UUID",
            "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'",
            Schema.OPTIONAL_STRING_SCHEMA,
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        ),
        ("c_null", "INTEGER", "NULL", Schema.OPTIONAL_INT32_SCHEMA, None),
    ],
    "mariadb": [
        ("c_bool", "BOOLEAN", "true", Schema.OPTIONAL_BOOLEAN_SCHEMA, True),
        ("c_bit", "BIT(1)", "b'1'", Schema.OPTIONAL_BOOLEAN_SCHEMA, True),
        ("c_int1", "TINYINT", "-128", Schema.OPTIONAL_INT8_SCHEMA, -128),
        ("c_uint1", "TINYINT UNSIGNED", "255", Schema.OPTIONAL_INT16_SCHEMA, 255),
        ("c_int2", "SMALLINT NOT NULL", "-32768", Schema.INT16_SCHEMA, -32768),
        ("c_int3", "MEDIUMINT", "8388607", Schema.OPTIONAL_INT32_SCHEMA, 8388607),
        ("c_int4", "INT", "2147483647", Schema.OPTIONAL_INT32_SCHEMA, 2147483647),
        ("c_uint4", "INT UNSIGNED", "4294967295", Schema.OPTIONAL_INT64_SCHEMA, 4294967295),
        ("c_int8", "BIGINT", "-9223372036854775808", Schema.OPTIONAL_INT64_SCHEMA, -(2**63)),
        ("c_uint8", "BIGINT UNSIGNED", "18446744073709551615", dec(0, 20), decimal.Decimal(2**64 - 1)),
        ("c_float", "FLOAT", "1.5", Schema.OPTIONAL_FLOAT32_SCHEMA, 1.5),
        ("c_double", "DOUBLE", "2.25", Schema.OPTIONAL_FLOAT64_SCHEMA, 2.25),
        ("c_decimal", "DECIMAL(12,3)", "-123456789.125", dec(3, 12), decimal.Decimal("-123456789.125")),
        ("c_text", "TEXT", "'héllo'", Schema.OPTIONAL_STRING_SCHEMA, "héllo"),
        ("c_varchar", "VARCHAR(10)", "'v'", Schema.OPTIONAL_STRING_SCHEMA, "v"),
        ("c_enum", "ENUM('x','y')", "'y'", Schema.OPTIONAL_STRING_SCHEMA, "y"),
        ("c_blob", "BLOB", "x'00ff'", Schema.OPTIONAL_BYTES_SCHEMA, b"\x00\xff"),
        ("c_varbinary", "VARBINARY(4)", "x'01'", Schema.OPTIONAL_BYTES_SCHEMA, b"\x01"),
        ("c_date", "DATE", "'2024-02-29'", optional(Date.builder()), dt.date(2024, 2, 29)),
        ("c_time", "TIME(3)", "'13:14:15.250'", optional(Time.builder()), dt.time(13, 14, 15, 250000)),
        ("c_datetime", "DATETIME(3)", "'2024-03-01 12:00:00.5'", optional(Timestamp.builder()), utc(0.5)),
        # TIMESTAMP is stored in UTC and shown in the session's time zone, which is db.timezone.
        ("c_ts", "TIMESTAMP NULL", "'2024-03-01 12:00:00'", optional(Timestamp.builder()), utc(0)),
        ("c_year", "YEAR", "2024", Schema.OPTIONAL_INT16_SCHEMA, 2024),
        ("c_null", "INT", "NULL", Schema.OPTIONAL_INT32_SCHEMA, None),
    ],
    "sqlite": [
        ("c_bool", "BOOLEAN", "1", Schema.OPTIONAL_BOOLEAN_SCHEMA, True),
        ("c_int", "INTEGER NOT NULL", "9223372036854775807", Schema.INT64_SCHEMA, 2**63 - 1),
        ("c_smallint", "SMALLINT", "7", Schema.OPTIONAL_INT16_SCHEMA, 7),
        ("c_real", "REAL", "2.25", Schema.OPTIONAL_FLOAT64_SCHEMA, 2.25),
        ("c_numeric", "NUMERIC(12,3)", "-123456.125", dec(3, 12), decimal.Decimal("-123456.125")),
        ("c_text", "TEXT", "'héllo'", Schema.OPTIONAL_STRING_SCHEMA, "héllo"),
        ("c_varchar", "VARCHAR(10)", "'v'", Schema.OPTIONAL_STRING_SCHEMA, "v"),
        ("c_blob", "BLOB", "x'00ff'", Schema.OPTIONAL_BYTES_SCHEMA, b"\x00\xff"),
        ("c_date", "DATE", "'2024-02-29'", optional(Date.builder()), dt.date(2024, 2, 29)),
        ("c_time", "TIME", "'13:14:15.250'", optional(Time.builder()), dt.time(13, 14, 15, 250000)),
        ("c_ts", "TIMESTAMP", "'2024-03-01 12:00:00.500'", optional(Timestamp.builder()), utc(0.5)),
        ("c_datetime", "DATETIME", "'2024-03-01T12:00:00+01:00'", optional(Timestamp.builder()), utc(-3600)),
        ("c_null", "INTEGER", "NULL", Schema.OPTIONAL_INT64_SCHEMA, None),
    ],
}


def test_column_types_map_to_connect_schemas_and_values(
    db: TestDatabase, connect: EmbeddedConnect, connectors: Connectors
) -> None:
    columns = TYPES[db.kind]
    db.run(f"CREATE TABLE alltypes ({', '.join(f'{c} {ddl}' for c, ddl, *_ in columns)})")
    names = ", ".join(c for c, *_ in columns)
    db.run(f"INSERT INTO alltypes ({names}) VALUES ({', '.join(v for _, _, v, *_ in columns)})")
    name, _ = connectors.create(db, mode="bulk", poll_interval_ms="60000")
    connect.wait_for_running(name)
    [(key, value)] = read(connect, f"{name}-alltypes", 1)
    assert key is None  # no primary key
    assert value.schema.name == "alltypes"
    assert [f.name for f in value.schema.fields] == [c for c, *_ in columns]
    for column, ddl, _, schema, expected in columns:
        field = value.schema.field(column)
        assert field is not None
        assert field.schema == schema, f"{column} {ddl}"
        got = value.get(column)
        if isinstance(expected, float):
            assert got == pytest.approx(expected), column
        elif isinstance(expected, dt.time) and isinstance(got, dt.time):
            assert got.replace(tzinfo=None) == expected, column  # Connect's Time has ms precision
        else:
            assert got == expected, f"{column} {ddl}: {got!r}"


def test_numeric_mapping_variants(db: TestDatabase, connect: EmbeddedConnect, connectors: Connectors) -> None:
    kind = db.kind
    db.run(
        "CREATE TABLE money (small NUMERIC(4,0), big NUMERIC(15,0), price NUMERIC(10,2), huge NUMERIC(25,5))"
    )
    db.run("INSERT INTO money VALUES (12, 123456789012345, 19.99, 12345678901234567890.12345)")
    expected = {
        "none": {
            "small": (dec(0, 4), decimal.Decimal("12")),
            "big": (dec(0, 15), decimal.Decimal("123456789012345")),
            "price": (dec(2, 10), decimal.Decimal("19.99")),
            "huge": (dec(5, 25), decimal.Decimal("12345678901234567890.12345")),
        },
        "precision_only": {
            "small": (Schema.OPTIONAL_INT16_SCHEMA, 12),
            "big": (Schema.OPTIONAL_INT64_SCHEMA, 123456789012345),
            "price": (dec(2, 10), decimal.Decimal("19.99")),
            "huge": (dec(5, 25), decimal.Decimal("12345678901234567890.12345")),
        },
        "best_fit": {
            "small": (Schema.OPTIONAL_INT16_SCHEMA, 12),
            "big": (Schema.OPTIONAL_INT64_SCHEMA, 123456789012345),
            "price": (Schema.OPTIONAL_FLOAT64_SCHEMA, 19.99),
            "huge": (dec(5, 25), decimal.Decimal("12345678901234567890.12345")),
        },
        "best_fit_eager_double": {
            "small": (Schema.OPTIONAL_INT16_SCHEMA, 12),
            "big": (Schema.OPTIONAL_INT64_SCHEMA, 123456789012345),
            "price": (Schema.OPTIONAL_FLOAT64_SCHEMA, 19.99),
            "huge": (Schema.OPTIONAL_FLOAT64_SCHEMA, 12345678901234567890.12345),
        },
    }
    if kind == "sqlite":  # SQLite keeps 25 digits as a REAL: only 17 survive
        for mapping in expected.values():
            schema, _ = mapping["huge"]
            mapping["huge"] = (schema, decimal.Decimal("12345678901234567000.00000"))
        expected["best_fit_eager_double"]["huge"] = (Schema.OPTIONAL_FLOAT64_SCHEMA, 12345678901234567890.0)
    names = {}
    for mapping in expected:
        names[mapping], _ = connectors.create(
            db, mode="bulk", numeric_mapping=mapping, poll_interval_ms="60000"
        )
    for mapping, columns in expected.items():
        connect.wait_for_running(names[mapping])
        [(_, value)] = read(connect, f"{names[mapping]}-money", 1)
        for column, (schema, want) in columns.items():
            assert value.schema.field(column).schema == schema, (mapping, column)  # type: ignore[union-attr]
            got = value.get(column)
            assert got == (pytest.approx(want) if isinstance(want, float) else want), (mapping, column)


# -- query mode ---------------------------------------------------------------------------------------------


def test_a_query_with_its_own_where_clause_and_a_suffix(
    db: TestDatabase, connect: EmbeddedConnect, connectors: Connectors
) -> None:
    orders_table(db)
    db.run("CREATE TABLE customers (id INTEGER PRIMARY KEY, vip BOOLEAN NOT NULL)")
    db.run("INSERT INTO customers VALUES (1, true), (2, false)")
    db.run(f"ALTER TABLE orders ADD {'COLUMN ' if db.kind != 'mariadb' else ''}customer INTEGER")
    for i in range(6):
        db.run(f"INSERT INTO orders (name, updated, customer) VALUES ('o{i}', '{ts(i)}', {1 + i % 2})")
    name, _ = connectors.create(
        db,
        mode="incrementing",
        incrementing_column_name="id",
        query="SELECT o.id, o.name, c.vip FROM orders o JOIN customers c ON c.id = o.customer WHERE c.vip",
        query_suffix="LIMIT 2",
        topic_prefix="vip-orders-" + db.name,
    )
    connect.wait_for_running(name)
    topic = "vip-orders-" + db.name  # the prefix is the topic
    db.run(f"INSERT INTO orders (name, updated, customer) VALUES ('fence', '{ts(9)}', 1)")
    rows = read_to_fence(connect, topic, 3, lambda r: r["name"] == "fence")
    assert [r["name"] for r in rows] == ["o0", "o2", "o4"]
    assert rows[0]["vip"] in (True, 1)  # SQLite's expression columns carry no declared type
    offsets = connect.request("GET", f"/connectors/{name}/offsets").json()["offsets"]
    assert all(o["partition"] == {"query": "query"} for o in offsets)


# -- tables -------------------------------------------------------------------------------------------------


def test_include_and_exclude_lists_and_tables_created_while_running(
    db: TestDatabase, connect: EmbeddedConnect, connectors: Connectors
) -> None:
    for table in ("alpha", "beta", "gamma"):
        orders_table(db, table)
        insert(db, table, (table, 1))
    including, _ = connectors.create(
        db,
        table_include_list="alpha,gamma,later",
        table_poll_interval_ms="200",
        **mode_settings("incrementing"),
    )
    excluding, _ = connectors.create(
        db, table_blacklist="beta", table_poll_interval_ms="200", **mode_settings("incrementing")
    )
    for name in (including, excluding):
        connect.wait_for_running(name)
        for table in ("alpha", "gamma"):
            assert values(connect, f"{name}-{table}", 1)[0]["name"] == table
    # A table created while the connectors run is noticed and copied by both.
    orders_table(db, "later")
    insert(db, "later", ("later", 1))
    for name in (including, excluding):
        assert values(connect, f"{name}-later", 1)[0]["name"] == "later"
    # beta was never copied: the excluding connector's tasks never had it.
    tasks = connect.request("GET", f"/connectors/{excluding}/tasks").json()
    assert all("beta" not in t["config"]["tables"] for t in tasks)
    assert any("later" in t["config"]["tables"] for t in tasks)


def test_tasks_max_spreads_the_tables_over_tasks(
    db: TestDatabase, connect: EmbeddedConnect, connectors: Connectors
) -> None:
    tables = [f"t{i}" for i in range(5)]
    for table in tables:
        orders_table(db, table)
        insert(db, table, (table, 1))
    name, _ = connectors.create(db, tasks_max="2", **mode_settings("incrementing"))
    connect.wait_for_running(name, tasks=2)
    configs = connect.request("GET", f"/connectors/{name}/tasks").json()
    assigned = [[t[2] for t in json.loads(c["config"]["tables"])] for c in configs]
    assert assigned == [["t0", "t1", "t2"], ["t3", "t4"]]
    for table in tables:
        assert values(connect, f"{name}-{table}", 1)[0]["name"] == table


def test_nullable_offset_columns_are_refused_unless_told_otherwise(
    db: TestDatabase, connect: EmbeddedConnect, connectors: Connectors
) -> None:
    db.run(f"CREATE TABLE loose (id {db.serial}, updated {db.timestamp} NULL)")
    db.run(f"INSERT INTO loose (updated) VALUES ('{ts(1)}')")
    strict, _ = connectors.create(db, **mode_settings("timestamp"))
    status = connect.wait_for_state(strict, "RUNNING", tasks=1, task_state="FAILED")
    assert "because all of these columns are nullable" in status["tasks"][0]["trace"]
    assert "validate.non.null=false" in status["tasks"][0]["trace"]
    relaxed, _ = connectors.create(db, validate_non_null="false", **mode_settings("timestamp"))
    connect.wait_for_running(relaxed)
    assert values(connect, f"{relaxed}-loose", 1)[0]["id"] == 1


# -- faults -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("problem", ["wrong-user", "unreachable"])
@pytest.mark.parametrize("db", ["postgresql", "mariadb"], indirect=True)
def test_connection_problems_fail_the_connector_with_the_reason(
    db: TestDatabase, connect: EmbeddedConnect, connectors: Connectors, problem: str
) -> None:
    kind = db.kind
    url = db.url
    if problem == "wrong-user":
        settings = {"connection.user": "nobody", "connection.password": "hunter2"}
        reason = 'role "nobody" does not exist' if kind == "postgresql" else "Access denied for user 'nobody'"
    else:
        port = db.engine.url.port
        url = url.replace(f":{port}/", f":{free_port()}/")
        settings = {}
        reason = "Connection refused" if kind == "postgresql" else "Can't connect"
    name = unique("jdbc")
    connect.create_connector(
        name,
        {
            "connector.class": CLASS,
            "connection.url": url,
            "connection.attempts": "2",
            "connection.backoff.ms": "50",
            "mode": "bulk",
            "topic.prefix": "x-",
            **settings,
        },
    )
    connectors.names.append(name)
    status = connect.wait_for_state(name, "FAILED")
    trace = status["connector"]["trace"]
    assert "after 2 attempt(s)" in trace and reason in trace, trace
    assert "hunter2" not in trace


def test_a_lost_connection_is_retried_and_reading_goes_on(
    pg_db: TestDatabase, connect: EmbeddedConnect, connectors: Connectors
) -> None:
    orders_table(pg_db)
    insert(pg_db, "orders", ("a", 1))
    name, _ = connectors.create(pg_db, connection_backoff_ms="100", **mode_settings("incrementing"))
    connect.wait_for_running(name)
    topic = f"{name}-orders"
    assert values(connect, topic, 1)[0]["name"] == "a"
    pg_db.run(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        f"WHERE datname = '{pg_db.name}' AND pid <> pg_backend_pid()"
    )
    insert(pg_db, "orders", ("b", 2))
    assert [r["name"] for r in values(connect, topic, 2)] == ["a", "b"]
    assert connect.status(name)["tasks"][0]["state"] == "RUNNING"


def test_a_bad_query_fails_the_task_with_the_databases_message(
    pg_db: TestDatabase, connect: EmbeddedConnect, connectors: Connectors
) -> None:
    name, _ = connectors.create(pg_db, mode="bulk", query="SELECT * FROM nowhere", topic_prefix="nowhere")
    status = connect.wait_for_state(name, "RUNNING", tasks=1, task_state="FAILED")
    assert 'relation "nowhere" does not exist' in status["tasks"][0]["trace"]


def test_config_validation_names_the_keys(connect: EmbeddedConnect) -> None:
    config = {
        "name": "misconfigured",
        "connector.class": CLASS,
        "connection.url": "jdbc:oracle:thin:@db:1521:x",
        "mode": "timestamp",
        "table.whitelist": "a",
        "table.blacklist": "b",
        "numeric.mapping": "best",
    }
    r = connect.request("PUT", "/connector-plugins/JdbcSourceConnector/config/validate", config)
    assert r.status_code == 200
    body = r.json()
    errors = {c["value"]["name"]: c["value"]["errors"] for c in body["configs"] if c["value"]["errors"]}
    assert set(errors) == {
        "connection.url",
        "timestamp.column.name",
        "table.blacklist",
        "numeric.mapping",
    }, errors
    assert body["error_count"] == 4
    created = connect.request("PUT", "/connectors/misconfigured/config", config)
    assert created.status_code == 400
    assert "timestamp.column.name" in created.json()["message"]


def test_the_connector_answers_to_confluents_class_name(connect: EmbeddedConnect) -> None:
    plugins = connect.request("GET", "/connector-plugins").json()
    assert any(p["class"].endswith("JdbcSourceConnector") and p["type"] == "source" for p in plugins)
    keys = {d["name"]: d for d in connect.request("GET", f"/connector-plugins/{CLASS}/config").json()}
    assert keys["batch.max.rows"]["default_value"] == "100"
    assert keys["poll.interval.ms"]["default_value"] == "5000"
    assert keys["connection.password"]["type"] == "PASSWORD"
