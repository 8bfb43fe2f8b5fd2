"""The JDBC sink's writer against real databases (SQLite, and the session's throwaway
PostgreSQL and MariaDB): every insert mode with every pk mode, auto-create and evolve,
deletes, Debezium change events, types and table names, bad records isolated from good
ones, and exactly-once offsets. Values read back as written: ``test_sink_round_trips``."""

from __future__ import annotations

import datetime as dt
import decimal
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from connect.api import (
    ConnectException,
    DataException,
    Decimal,
    Schema,
    SchemaBuilder,
    SinkRecord,
    Struct,
    TopicPartition,
)
from connectors.jdbc.sink.config import ConfluentSinkConfig, DebeziumSinkConfig, SinkSettings
from connectors.jdbc.sink.writer import Writer
from tests.databases import MariaDBServer, PostgresServer

DIALECTS = ("sqlite", "postgresql", "mariadb")


class Target:
    """A fresh database of one kind, its URL and an engine to check it with."""

    def __init__(self, kind: str, url: str) -> None:
        self.kind = kind
        self.url = url
        self.engine = sa.create_engine(url)
        self.reports: list[tuple[SinkRecord, DataException]] = []

    def settings(self, debezium: bool = False, **props: Any) -> SinkSettings:
        raw = {
            "connection.url": self.url,
            "name": "sink",
            **{k.replace("_", "."): v for k, v in props.items()},
        }
        if debezium:
            return DebeziumSinkConfig.parse(raw).settings()
        return ConfluentSinkConfig.parse(raw).settings()

    def writer(self, debezium: bool = False, **props: Any) -> Writer:
        s = self.settings(debezium, **props)
        return Writer(s, sa.create_engine(s.url.url), lambda r, e: self.reports.append((r, e)))

    def rows(self, table: str, order: str | None = None) -> list[tuple[Any, ...]]:
        with self.engine.connect() as c:
            t = sa.Table(table, sa.MetaData(), autoload_with=c)
            q = sa.select(t).order_by(t.c[order] if order else t.columns[0])
            return [tuple(r) for r in c.execute(q).all()]

    def table(self, name: str) -> sa.Table:
        with self.engine.connect() as c:
            return sa.Table(name, sa.MetaData(), autoload_with=c)

    def execute(self, sql: str) -> None:
        with self.engine.begin() as c:
            c.execute(sa.text(sql))


@pytest.fixture(params=DIALECTS)
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Target]:
    kind = request.param
    name = f"s{uuid.uuid4().hex[:12]}"
    if kind == "sqlite":
        url = f"sqlite:///{tmp_path / 'sink.db'}"
    elif kind == "postgresql":
        pg: PostgresServer = request.getfixturevalue("postgres")
        pg.execute(f"CREATE DATABASE {name}")
        url = pg.url(name)
    else:
        maria: MariaDBServer = request.getfixturevalue("mariadb")
        maria.execute(f"CREATE DATABASE {name}")
        url = maria.url(name)
    t = Target(kind, url)
    yield t
    t.engine.dispose()


KEY = SchemaBuilder.struct().field("id", Schema.INT32_SCHEMA).build()
ROW = (
    SchemaBuilder.struct()
    .field("id", Schema.INT32_SCHEMA)
    .field("name", Schema.OPTIONAL_STRING_SCHEMA)
    .field("qty", Schema.OPTIONAL_INT32_SCHEMA)
    .build()
)


def rec(
    i: int,
    name: str | None = "a",
    qty: int | None = 1,
    offset: int = 0,
    topic: str = "orders",
    tombstone: bool = False,
) -> SinkRecord:
    key = Struct(KEY).put("id", i)
    value = None if tombstone else Struct(ROW).put("id", i).put("name", name).put("qty", qty)
    return SinkRecord(topic, 0, KEY, key, None if tombstone else ROW, value, kafka_offset=offset)


def numbered(records: list[SinkRecord]) -> list[SinkRecord]:
    for n, r in enumerate(records):
        r.kafka_offset = n
    return records


# -- modes ------------------------------------------------------------------------------------

MODES = [
    ("insert", "none"),
    ("insert", "kafka"),
    ("insert", "record_key"),
    ("insert", "record_value"),
    ("upsert", "kafka"),
    ("upsert", "record_key"),
    ("upsert", "record_value"),
    ("update", "kafka"),
    ("update", "record_key"),
    ("update", "record_value"),
]


@pytest.mark.parametrize(("insert_mode", "pk_mode"), MODES)
def test_every_insert_mode_with_every_pk_mode(target: Target, insert_mode: str, pk_mode: str) -> None:
    pk_fields = {"record_value": "id"}.get(pk_mode, "")
    first = [rec(1, "a", 1), rec(2, "b", 2)]
    if insert_mode == "update":
        # Rows to update must exist: written by an upsert first (same key columns).
        target.writer(insert_mode="upsert", pk_mode=pk_mode, pk_fields=pk_fields, auto_create="true").write(
            numbered(first)
        )
    w = target.writer(insert_mode=insert_mode, pk_mode=pk_mode, pk_fields=pk_fields, auto_create="true")
    if insert_mode != "update":
        w.write(numbered(first))
    later = [rec(1, "a2", 10, offset=0), rec(3, "c", 3, offset=1)]
    if insert_mode == "insert" and pk_mode in ("record_key", "record_value"):
        later = [rec(3, "c", 3, offset=2)]  # inserting key 1 again would be refused
    if insert_mode == "insert" and pk_mode == "kafka":
        later = [rec(1, "a2", 10, offset=2), rec(3, "c", 3, offset=3)]  # new coordinates
    w.write(later)
    assert target.reports == []
    if pk_mode == "kafka":
        # Keys are (topic, partition, offset): upserts and updates rewrite offsets 0 and 1.
        got = target.rows("orders", "__connect_offset")
        names = [r[-2] for r in got]
        assert (
            names
            == {"insert": ["a", "b", "a2", "c"], "upsert": ["a2", "c"], "update": ["a2", "c"]}[insert_mode]
        )
        return
    got = target.rows("orders", "id")
    by_id = {r[0]: r for r in got}
    by_name = {i: r[1] for i, r in by_id.items()}
    if insert_mode == "insert":
        if pk_mode == "none":
            assert sorted(r[1] for r in got) == ["a", "a2", "b", "c"]
        else:
            assert by_name == {1: "a", 2: "b", 3: "c"}
    elif insert_mode == "upsert":
        assert by_name == {1: "a2", 2: "b", 3: "c"}
    else:  # update touches existing rows only
        assert by_name == {1: "a2", 2: "b"}


def test_upserts_of_one_key_within_a_batch_keep_the_last(target: Target) -> None:
    w = target.writer(insert_mode="upsert", pk_mode="record_key", auto_create="true")
    w.write(numbered([rec(1, "a"), rec(1, "b"), rec(2, "x"), rec(1, "c")]))
    assert target.rows("orders") == [(1, "c", 1), (2, "x", 1)]


def test_tombstones_delete_by_key_in_order(target: Target) -> None:
    w = target.writer(insert_mode="upsert", pk_mode="record_key", auto_create="true", delete_enabled="true")
    w.write(
        numbered([rec(1), rec(2), rec(1, tombstone=True), rec(3), rec(2, tombstone=True), rec(2, "back")])
    )
    assert target.rows("orders") == [(2, "back", 1), (3, "a", 1)]
    w.write(numbered([rec(9, tombstone=True)]))  # deleting what is not there is fine
    w.write([rec(1, tombstone=True, topic="never_written")])  # nor is deleting from no table
    assert target.reports == []


# -- tables ---------------------------------------------------------------------------------------


def test_auto_create_makes_keys_and_types(target: Target) -> None:
    target.writer(insert_mode="upsert", pk_mode="record_key", auto_create="true").write([rec(1)])
    t = target.table("orders")
    assert [c.name for c in t.primary_key.columns] == ["id"]
    assert [c.name for c in t.columns] == ["id", "name", "qty"]
    assert t.c["name"].nullable and not t.c["id"].nullable


def test_auto_evolve_adds_optional_columns_only(target: Target) -> None:
    w = target.writer(insert_mode="upsert", pk_mode="record_key", auto_create="true", auto_evolve="true")
    w.write([rec(1)])
    wider = SchemaBuilder.struct()
    for f in ROW.fields:
        wider.field(f.name, f.schema)
    v2 = (
        wider.field("note", Schema.OPTIONAL_STRING_SCHEMA)
        .field("n", SchemaBuilder.int32().default_value(5).build())
        .build()
    )
    value = Struct(v2).put("id", 2).put("name", "b").put("qty", 2).put("note", "new")
    w.write([SinkRecord("orders", 0, KEY, Struct(KEY).put("id", 2), v2, value, kafka_offset=1)])
    assert target.rows("orders") == [(1, "a", 1, None, 5), (2, "b", 2, "new", 5)]
    required = (
        SchemaBuilder.struct().field("id", Schema.INT32_SCHEMA).field("must", Schema.STRING_SCHEMA).build()
    )
    bad = SinkRecord(
        "orders", 0, KEY, Struct(KEY).put("id", 3), required, Struct(required).put("id", 3).put("must", "x")
    )
    with pytest.raises(
        ConnectException, match="cannot add column must to table orders: the field is required"
    ):
        w.write([bad])
    fixed = target.writer(insert_mode="upsert", pk_mode="record_key", auto_create="true")
    with pytest.raises(ConnectException, match=r"has no column\(s\) must and auto\.evolve is off"):
        fixed.write([bad])


def test_a_missing_table_without_auto_create_fails_naming_it(target: Target) -> None:
    with pytest.raises(ConnectException, match=r"table orders does not exist .* auto\.create is off"):
        target.writer().write([rec(1)])


def test_table_name_format_and_unquoted_names(target: Target) -> None:
    w = target.writer(table_name_format="kafka_${topic}", auto_create="true", quote_sql_identifiers="never")
    w.write([rec(1, topic="Orders")])
    # Bare names: PostgreSQL folds them to lower case.
    name = "kafka_orders" if target.kind == "postgresql" else "kafka_Orders"
    assert target.rows(name) == [(1, "a", 1)]


# -- bad records ---------------------------------------------------------------------------------


def test_a_bad_record_is_reported_and_the_others_written(target: Target) -> None:
    target.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, name VARCHAR(5), qty INTEGER NOT NULL)")
    w = target.writer(insert_mode="upsert", pk_mode="record_value", pk_fields="id")
    no_key = SinkRecord("orders", 0, None, None, ROW, Struct(ROW).put("id", 4), kafka_offset=13)
    no_key.value._values[0] = None  # a value whose key field is null: as a lenient converter delivers it
    batch = [
        rec(1, "fine", 1, offset=10),
        rec(2, "much too long", 2, offset=11),
        rec(3, "ok", None, offset=12),  # NOT NULL: refused by the database itself
        no_key,
        rec(5, "last", 5, offset=14),
    ]
    w.write(batch)
    assert target.rows("orders") == [(1, "fine", 1), (5, "last", 5)]
    reported = {r.kafka_offset: str(e) for r, e in target.reports}
    assert sorted(reported) == [11, 12, 13]
    assert "orders-0@11" in reported[11] and "column name" in reported[11] and "too long" in reported[11]
    assert "orders-0@12" in reported[12] and "refused it" in reported[12]
    assert "orders-0@13" in reported[13] and "primary key column id has no value" in reported[13]


def test_a_value_the_column_cannot_take_names_the_column(target: Target) -> None:
    target.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, name INTEGER, qty INTEGER)")
    w = target.writer(insert_mode="upsert", pk_mode="record_key")
    w.write(
        numbered(
            [
                rec(1, "text"),
                SinkRecord(
                    "orders",
                    0,
                    KEY,
                    Struct(KEY).put("id", 2),
                    ROW,
                    Struct(ROW).put("id", 2).put("name", None).put("qty", 1),
                ),
            ]
        )
    )
    assert target.rows("orders") == [(2, None, 1)]
    [(record, error)] = target.reports
    assert record.kafka_offset == 0 and "column name" in str(error) and "does not fit" in str(error)


# -- exactly once --------------------------------------------------------------------------------


def test_exactly_once_offsets_commit_with_the_rows_and_skip_redeliveries(target: Target) -> None:
    props: dict[str, Any] = {
        "insert_mode": "insert",
        "pk_mode": "none",
        "auto_create": "true",
        "exactly_once_enabled": "true",
    }
    w = target.writer(**props)
    w.write(numbered([rec(i) for i in range(5)]))
    tp = TopicPartition("orders", 0)
    # A restarted task: a new writer reads the offsets, and skips what the database holds.
    again = target.writer(**props)
    assert again.stored_offsets([tp, TopicPartition("orders", 1)]) == {tp: 5}
    again.write(numbered([rec(i) for i in range(8)]))
    assert len(target.rows("orders")) == 8
    assert target.rows("__connect_sink_offsets") == [("sink", "orders", 0, 8)]


def test_exactly_once_with_a_bad_record_moves_past_it(target: Target) -> None:
    target.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, name VARCHAR(50), qty INTEGER NOT NULL)")
    props: dict[str, Any] = {"insert_mode": "insert", "pk_mode": "record_key", "exactly_once_enabled": "true"}
    w = target.writer(**props)
    w.write(numbered([rec(1), rec(2, qty=None), rec(3)]))
    assert [r[0] for r in target.rows("orders")] == [1, 3]
    assert [r.kafka_offset for r, _ in target.reports] == [1]
    assert target.writer(**props).stored_offsets([TopicPartition("orders", 0)]) == {
        TopicPartition("orders", 0): 3
    }


# -- Debezium --------------------------------------------------------------------------------------

MYSQL_ROW = (
    SchemaBuilder.struct()
    .name("shop.inventory.orders.Value")
    .field("id", Schema.INT32_SCHEMA)
    .field("born", SchemaBuilder.int32().name("io.debezium.time.Date").optional().build())
    .field("at", SchemaBuilder.int64().name("io.debezium.time.MicroTimestamp").optional().build())
    .field("at_ms", SchemaBuilder.int64().name("io.debezium.time.Timestamp").optional().build())
    .field("changed", SchemaBuilder.string().name("io.debezium.time.ZonedTimestamp").optional().build())
    .field("slot", SchemaBuilder.int64().name("io.debezium.time.MicroTime").optional().build())
    .field("doc", SchemaBuilder.string().name("io.debezium.data.Json").optional().build())
    .field(
        "size",
        SchemaBuilder.string().name("io.debezium.data.Enum").parameter("allowed", "S,M").optional().build(),
    )
    .field("price", Decimal.builder(2).optional().build())
    .optional()
    .build()
)
SOURCE = SchemaBuilder.struct().field("db", Schema.STRING_SCHEMA).build()
ENVELOPE = (
    SchemaBuilder.struct()
    .name("shop.inventory.orders.Envelope")
    .field("before", MYSQL_ROW)
    .field("after", MYSQL_ROW)
    .field("source", SOURCE)
    .field("op", Schema.STRING_SCHEMA)
    .field("ts_ms", Schema.OPTIONAL_INT64_SCHEMA)
    .build()
)
DBZ_KEY = SchemaBuilder.struct().name("shop.inventory.orders.Key").field("id", Schema.INT32_SCHEMA).build()


def mysql_row(i: int, size: str = "S") -> Struct:
    return (
        Struct(MYSQL_ROW)
        .put("id", i)
        .put("born", 18_262 + i)
        .put("at", 1_577_836_800_000_001)
        .put("at_ms", 1_577_836_800_123)
        .put("changed", "2020-01-01T10:00:00Z")
        .put("slot", 3_723_000_005)
        .put("doc", '{"a": [1, 2]}')
        .put("size", size)
        .put("price", decimal.Decimal("12.34"))
    )


def change(
    op: str, i: int, offset: int, before: Struct | None = None, after: Struct | None = None
) -> SinkRecord:
    e = Struct(ENVELOPE).put("op", op).put("source", Struct(SOURCE).put("db", "inventory"))
    e.put("before", before).put("after", after)
    return SinkRecord(
        "shop.inventory.orders", 0, DBZ_KEY, Struct(DBZ_KEY).put("id", i), ENVELOPE, e, kafka_offset=offset
    )


def test_debezium_change_events_and_mysql_types(target: Target) -> None:
    w = target.writer(
        debezium=True,
        insert_mode="upsert",
        primary_key_mode="record_key",
        delete_enabled="true",
        schema_evolution="basic",
        collection_name_format="orders",
    )
    tomb = SinkRecord(
        "shop.inventory.orders", 0, DBZ_KEY, Struct(DBZ_KEY).put("id", 2), None, None, kafka_offset=4
    )
    w.write(
        [
            change("r", 1, 0, after=mysql_row(1)),
            change("c", 2, 1, after=mysql_row(2)),
            change("u", 1, 2, before=mysql_row(1), after=mysql_row(1, "M")),
            change("d", 2, 3, before=mysql_row(2)),
            tomb,
            change("c", 3, 5, after=mysql_row(3)),
        ]
    )
    t = target.table("orders")
    kinds = {c.name: type(c.type) for c in t.columns}
    if target.kind != "sqlite":  # SQLite keeps whatever type names it is given
        assert issubclass(kinds["born"], sa.Date) and issubclass(kinds["at"], sa.DateTime)
        assert issubclass(kinds["slot"], sa.Time) and issubclass(kinds["price"], sa.Numeric)
        assert issubclass(kinds["doc"], sa.Text) and issubclass(kinds["changed"], sa.DateTime)
    rows = target.rows("orders")
    assert [r[0] for r in rows] == [1, 3]
    one = dict(zip([c.name for c in t.columns], rows[0], strict=True))
    assert one["born"] == dt.date(2020, 1, 2)
    assert one["at"] == dt.datetime(2020, 1, 1, 0, 0, 0, 1)
    assert one["at_ms"] == dt.datetime(2020, 1, 1, 0, 0, 0, 123_000)
    assert one["slot"] in (dt.time(1, 2, 3, 5), dt.timedelta(hours=1, minutes=2, seconds=3, microseconds=5))
    changed = one["changed"]
    assert (changed if changed.tzinfo else changed.replace(tzinfo=dt.UTC)) == dt.datetime(
        2020, 1, 1, 10, tzinfo=dt.UTC
    )
    assert one["doc"] == '{"a": [1, 2]}' and one["size"] == "M"
    assert decimal.Decimal(str(one["price"])) == decimal.Decimal("12.34")
    assert target.reports == []


def test_debezium_truncate_events_empty_the_table_when_enabled(target: Target) -> None:
    props: dict[str, Any] = {"insert_mode": "upsert", "primary_key_mode": "record_key"}
    w = target.writer(debezium=True, schema_evolution="basic", collection_name_format="orders", **props)
    truncate = SinkRecord("shop.inventory.orders", 0, None, None, ENVELOPE, Struct(ENVELOPE).put("op", "t"))
    w.write([change("c", 1, 0, after=mysql_row(1)), truncate, change("c", 2, 2, after=mysql_row(2))])
    assert [r[0] for r in target.rows("orders")] == [1, 2]  # skipped without truncate.enabled
    emptying = target.writer(debezium=True, collection_name_format="orders", truncate_enabled="true", **props)
    emptying.write([truncate, change("c", 3, 4, after=mysql_row(3))])
    assert [r[0] for r in target.rows("orders")] == [3]
    by_topic = target.writer(debezium=True, truncate_enabled="true", **props)
    by_topic.write([SinkRecord("elsewhere", 0, None, None, ENVELOPE, Struct(ENVELOPE).put("op", "t"))])
    assert target.reports == []  # truncating a table that does not exist is a no-op
    assert [r[0] for r in target.rows("orders")] == [3]


def test_debezium_tables_named_by_topic_or_source(target: Target) -> None:
    by_topic = target.writer(debezium=True, schema_evolution="basic")
    by_topic.write([change("c", 1, 0, after=mysql_row(1))])
    assert [r[0] for r in target.rows("shop_inventory_orders")] == [1]
    by_source = target.writer(
        debezium=True, schema_evolution="basic", collection_name_format="${source.db}_copy"
    )
    by_source.write([change("c", 2, 1, after=mysql_row(2))])
    assert [r[0] for r in target.rows("inventory_copy")] == [2]
    flat = SinkRecord("shop.inventory.orders", 0, None, None, ROW, Struct(ROW).put("id", 3), kafka_offset=2)
    by_source.write([flat])
    [(record, error)] = target.reports
    assert record is flat and "needs the 'source' of a Debezium change event" in str(error)


def test_debezium_flat_records_and_deletes_by_value(target: Target) -> None:
    w = target.writer(
        debezium=True,
        insert_mode="upsert",
        primary_key_mode="record_value",
        primary_key_fields="id",
        delete_enabled="true",
        schema_evolution="basic",
        field_exclude_list="orders:qty",
    )
    flat_rows = numbered([rec(1, "a"), rec(2, "b")])
    w.write(flat_rows)
    assert [c.name for c in target.table("orders").columns] == ["id", "name"]
    assert target.rows("orders") == [(1, "a"), (2, "b")]


# -- values read back as written -------------------------------------------------------------------


def test_string_keys_upsert_and_delete(target: Target) -> None:
    # MySQL/MariaDB cannot index TEXT: a string key column is VARCHAR(255) there.
    w = target.writer(
        insert_mode="upsert",
        pk_mode="record_key",
        pk_fields="code",
        auto_create="true",
        delete_enabled="true",
    )
    value = SchemaBuilder.struct().field("name", Schema.OPTIONAL_STRING_SCHEMA).build()

    def keyed(code: str, name: str | None, offset: int) -> SinkRecord:
        v = None if name is None else Struct(value).put("name", name)
        return SinkRecord(
            "codes", 0, Schema.STRING_SCHEMA, code, None if v is None else value, v, kafka_offset=offset
        )

    w.write([keyed("é-1", "a", 0), keyed("b", "b", 1), keyed("é-1", "c", 2), keyed("b", None, 3)])
    assert target.rows("codes") == [("é-1", "c")]
    assert [c.name for c in target.table("codes").primary_key.columns] == ["code"]
