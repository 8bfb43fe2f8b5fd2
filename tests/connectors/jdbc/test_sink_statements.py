"""The JDBC sink's pure parts, without a database: statements per database and mode, the
column type of every Connect type per database, value conversion (Debezium's temporal
types), both configurations' checks, and what records ask and which columns they fill."""

from __future__ import annotations

import datetime as dt
import decimal
import re
import zoneinfo
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import given, settings
from hypothesis import strategies as st

from connect.api import (
    ConfigValidationError,
    DataException,
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    SinkRecord,
    Struct,
    Time,
    Timestamp,
)
from connectors.jdbc.sink import DebeziumJdbcSinkConnector, JdbcSinkConnector
from connectors.jdbc.sink.config import ConfluentSinkConfig, DebeziumSinkConfig, SinkSettings
from connectors.jdbc.sink.records import Action, change_of, plan_fields
from connectors.jdbc.sink.statements import UnsupportedUpsert, delete_statement, sql_text, write_statement
from connectors.jdbc.sink.types import UnsupportedType, column_type, value_converter

DIALECTS = ("postgresql", "mysql", "sqlite")


def table(*values: str) -> sa.Table:
    return sa.Table(
        "orders",
        sa.MetaData(),
        sa.Column("id", sa.Integer, primary_key=True),
        *(sa.Column(v, sa.Text) for v in values),
    )


def flat(text: str) -> str:
    """One line, without psycopg's parameter casts (``%(p0)s::INTEGER``)."""
    return re.sub(r"::[A-Z]+", "", " ".join(text.split()))


# -- statements ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dialect", "expected"),
    [
        (
            "postgresql",
            'INSERT INTO orders (id, name, "Qty") VALUES (%(p0)s, %(p1)s, %(p2)s) '
            'ON CONFLICT (id) DO UPDATE SET name = excluded.name, "Qty" = excluded."Qty"',
        ),
        (
            "mysql",
            "INSERT INTO orders (id, name, `Qty`) VALUES (%s, %s, %s) "
            "ON DUPLICATE KEY UPDATE name = VALUES(name), `Qty` = VALUES(`Qty`)",
        ),
        (
            "sqlite",
            'INSERT INTO orders (id, name, "Qty") VALUES (?, ?, ?) '
            'ON CONFLICT (id) DO UPDATE SET name = excluded.name, "Qty" = excluded."Qty"',
        ),
    ],
)
def test_upserts_per_database(dialect: str, expected: str) -> None:
    statement = write_statement(table("name", "Qty"), ["id"], ["name", "Qty"], "upsert", dialect)
    assert flat(sql_text(statement, dialect)) == expected


def test_upsert_of_key_columns_only() -> None:
    t = table()
    assert flat(sql_text(write_statement(t, ["id"], [], "upsert", "postgresql"), "postgresql")).endswith(
        "ON CONFLICT (id) DO NOTHING"
    )
    assert flat(sql_text(write_statement(t, ["id"], [], "upsert", "sqlite"), "sqlite")).endswith(
        "ON CONFLICT (id) DO NOTHING"
    )
    # MySQL assigns the keys to themselves, as Confluent's dialect does.
    assert flat(sql_text(write_statement(t, ["id"], [], "upsert", "mysql"), "mysql")).endswith(
        "ON DUPLICATE KEY UPDATE id = VALUES(id)"
    )


@pytest.mark.parametrize("dialect", DIALECTS)
def test_insert_update_delete(dialect: str) -> None:
    t = table("name")
    mark = {"postgresql": "%(p{})s", "mysql": "%s", "sqlite": "?"}[dialect]
    p0, p1 = mark.format(0), mark.format(1)
    assert flat(sql_text(write_statement(t, ["id"], ["name"], "insert", dialect), dialect)) == (
        f"INSERT INTO orders (id, name) VALUES ({p0}, {p1})"
    )
    assert flat(sql_text(write_statement(t, ["id"], ["name"], "update", dialect), dialect)) == (
        f"UPDATE orders SET name={p1} WHERE orders.id = {p0}"
    )
    assert (
        flat(sql_text(delete_statement(t, ["id"]), dialect)) == f"DELETE FROM orders WHERE orders.id = {p0}"
    )


def test_statements_refuse_what_cannot_be() -> None:
    t = table("name")
    with pytest.raises(UnsupportedUpsert, match="not supported on mssql"):
        write_statement(t, ["id"], ["name"], "upsert", "mssql")
    with pytest.raises(ValueError, match="upsert needs key columns"):
        write_statement(t, [], ["name"], "upsert", "postgresql")
    with pytest.raises(ValueError, match="update needs key columns"):
        write_statement(t, [], ["name"], "update", "postgresql")
    with pytest.raises(ValueError, match="delete needs key columns"):
        delete_statement(t, [])


# -- types ----------------------------------------------------------------------------------

TYPES: list[tuple[Schema, dict[str, str]]] = [
    (Schema.INT8_SCHEMA, {"postgresql": "SMALLINT", "mysql": "TINYINT", "sqlite": "SMALLINT"}),
    (Schema.INT16_SCHEMA, {"postgresql": "SMALLINT", "mysql": "SMALLINT", "sqlite": "SMALLINT"}),
    (Schema.INT32_SCHEMA, {"postgresql": "INTEGER", "mysql": "INTEGER", "sqlite": "INTEGER"}),
    (Schema.INT64_SCHEMA, {"postgresql": "BIGINT", "mysql": "BIGINT", "sqlite": "BIGINT"}),
    (Schema.FLOAT32_SCHEMA, {"postgresql": "REAL", "mysql": "FLOAT", "sqlite": "REAL"}),
    (Schema.FLOAT64_SCHEMA, {"postgresql": "DOUBLE PRECISION", "mysql": "DOUBLE", "sqlite": "FLOAT"}),
    (Schema.BOOLEAN_SCHEMA, {"postgresql": "BOOLEAN", "mysql": "BOOL", "sqlite": "BOOLEAN"}),
    (Schema.STRING_SCHEMA, {"postgresql": "TEXT", "mysql": "TEXT", "sqlite": "TEXT"}),
    (Schema.BYTES_SCHEMA, {"postgresql": "BYTEA", "mysql": "LONGBLOB", "sqlite": "BLOB"}),
    (Decimal.schema(2), {"postgresql": "NUMERIC", "mysql": "NUMERIC(65, 2)", "sqlite": "NUMERIC"}),
    (Date.SCHEMA, {"postgresql": "DATE", "mysql": "DATE", "sqlite": "DATE"}),
    (Time.SCHEMA, {"postgresql": "TIME WITHOUT TIME ZONE", "mysql": "TIME(3)", "sqlite": "TIME"}),
    (
        Timestamp.SCHEMA,
        {"postgresql": "TIMESTAMP WITHOUT TIME ZONE", "mysql": "DATETIME(3)", "sqlite": "DATETIME"},
    ),
]


def debezium(schema: SchemaBuilder, name: str) -> Schema:
    return schema.name(name).build()


DEBEZIUM_TYPES: list[tuple[Schema, dict[str, str]]] = [
    (debezium(SchemaBuilder.int32(), "io.debezium.time.Date"), {"postgresql": "DATE", "mysql": "DATE"}),
    (
        debezium(SchemaBuilder.int64(), "io.debezium.time.MicroTimestamp"),
        {"postgresql": "TIMESTAMP WITHOUT TIME ZONE", "mysql": "DATETIME(6)"},
    ),
    (
        debezium(SchemaBuilder.int64(), "io.debezium.time.Timestamp"),
        {"postgresql": "TIMESTAMP WITHOUT TIME ZONE", "mysql": "DATETIME(3)"},
    ),
    (
        debezium(SchemaBuilder.string(), "io.debezium.time.ZonedTimestamp"),
        {"postgresql": "TIMESTAMP WITH TIME ZONE", "mysql": "DATETIME(6)"},
    ),
    (
        debezium(SchemaBuilder.int64(), "io.debezium.time.MicroTime"),
        {"postgresql": "TIME WITHOUT TIME ZONE", "mysql": "TIME(6)"},
    ),
    (debezium(SchemaBuilder.string(), "io.debezium.data.Json"), {"postgresql": "TEXT", "mysql": "TEXT"}),
    (debezium(SchemaBuilder.string(), "io.debezium.data.Enum"), {"postgresql": "TEXT", "mysql": "TEXT"}),
]


def compiled(schema: Schema, dialect: str, key: bool = False) -> str:
    chosen = sa.engine.URL.create(dialect).get_dialect()()
    return column_type(schema, dialect, key).compile(dialect=chosen)


@pytest.mark.parametrize(
    ("schema", "expected"), TYPES + DEBEZIUM_TYPES, ids=lambda v: getattr(v, "name", None)
)
def test_column_types(schema: Schema, expected: dict[str, str]) -> None:
    assert {d: compiled(schema, d) for d in expected} == expected


def test_mysql_key_columns_get_a_length() -> None:
    assert compiled(Schema.STRING_SCHEMA, "mysql", key=True) == "VARCHAR(255)"
    assert compiled(Schema.BYTES_SCHEMA, "mysql", key=True) == "VARBINARY(255)"
    assert compiled(Schema.STRING_SCHEMA, "postgresql", key=True) == "TEXT"


def test_structs_arrays_and_maps_have_no_column() -> None:
    for schema in (
        SchemaBuilder.array(Schema.INT32_SCHEMA).build(),
        SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build(),
        SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build(),
    ):
        with pytest.raises(UnsupportedType):
            column_type(schema, "postgresql")
        with pytest.raises(UnsupportedType):
            value_converter(schema, dt.UTC)


def convert(schema: Schema, value: Any, zone: dt.tzinfo = dt.UTC) -> Any:
    converter = value_converter(schema, zone)
    return value if converter is None else converter(value)


def test_debezium_values_become_python_temporal_values() -> None:
    assert convert(debezium(SchemaBuilder.int32(), "io.debezium.time.Date"), 18_262) == dt.date(2020, 1, 1)
    assert convert(debezium(SchemaBuilder.int32(), "io.debezium.time.Time"), 3_723_004) == dt.time(
        1, 2, 3, 4000
    )
    assert convert(debezium(SchemaBuilder.int64(), "io.debezium.time.MicroTime"), 3_723_000_005) == dt.time(
        1, 2, 3, 5
    )
    assert convert(
        debezium(SchemaBuilder.int64(), "io.debezium.time.NanoTime"), 3_723_000_005_000
    ) == dt.time(1, 2, 3, 5)
    assert convert(debezium(SchemaBuilder.int64(), "io.debezium.time.Timestamp"), 1_577_836_800_123) == (
        dt.datetime(2020, 1, 1, 0, 0, 0, 123_000)
    )
    assert convert(
        debezium(SchemaBuilder.int64(), "io.debezium.time.MicroTimestamp"), 1_577_836_800_000_001
    ) == (dt.datetime(2020, 1, 1, 0, 0, 0, 1))
    zoned = convert(
        debezium(SchemaBuilder.string(), "io.debezium.time.ZonedTimestamp"), "2020-01-01T10:00:00Z"
    )
    assert zoned == dt.datetime(2020, 1, 1, 10, tzinfo=dt.UTC)
    variable = SchemaBuilder.struct().name("io.debezium.data.VariableScaleDecimal")
    variable = variable.field("scale", Schema.INT32_SCHEMA).field("value", Schema.BYTES_SCHEMA)
    vs = variable.build()
    struct = Struct(vs).put("scale", 2).put("value", (-12345).to_bytes(2, "big", signed=True))
    assert convert(vs, struct) == decimal.Decimal("-123.45")


@settings(max_examples=60, deadline=None)
@given(st.datetimes(timezones=st.just(dt.UTC)), st.sampled_from(["UTC", "Europe/Paris", "America/New_York"]))
def test_timestamps_are_written_in_the_database_zone(instant: dt.datetime, zone_name: str) -> None:
    zone = dt.UTC if zone_name == "UTC" else zoneinfo.ZoneInfo(zone_name)
    written = convert(Timestamp.SCHEMA, instant, zone)
    assert written.tzinfo is None
    assert written == instant.astimezone(zone).replace(tzinfo=None)


@settings(max_examples=80, deadline=None)
@given(st.integers(-(2**31), 2**31 - 1))
def test_debezium_dates_are_days_since_the_epoch(days: int) -> None:
    schema = debezium(SchemaBuilder.int32(), "io.debezium.time.Date")
    try:
        expected = dt.date(1970, 1, 1) + dt.timedelta(days=days)
    except OverflowError:
        with pytest.raises(OverflowError):
            convert(schema, days)
        return
    assert convert(schema, days) == expected


# -- configuration --------------------------------------------------------------------------


def issues(
    model: type[ConfluentSinkConfig] | type[DebeziumSinkConfig], props: dict[str, str]
) -> dict[str, str]:
    return {i.key: i.message for i in model.issues(props)}


def test_confluent_defaults() -> None:
    s = ConfluentSinkConfig.parse({"connection.url": "jdbc:sqlite::memory:", "name": "n"}).settings()
    assert (s.insert_mode, s.pk_mode, s.batch_size, s.max_retries, s.retry_backoff_ms) == (
        "insert",
        "none",
        3000,
        10,
        3000,
    )
    assert (s.table_format, s.auto_create, s.auto_evolve, s.delete_enabled, s.quote) == (
        "${topic}",
        False,
        False,
        False,
        True,
    )
    assert s.zone == dt.UTC and not s.exactly_once and s.offsets_table == "__connect_sink_offsets"
    assert s.table_for("orders") == "orders" and s.connector == "n" and not s.debezium


def test_debezium_defaults_and_names() -> None:
    props = {
        "connection.url": "jdbc:postgresql://db:5432/shop",
        "connection.username": "app",
        "connection.password": "secret",
        "table.name.format": "old_${topic}",
    }
    s = DebeziumSinkConfig.parse(props).settings()
    assert (s.insert_mode, s.pk_mode, s.batch_size, s.quote, s.debezium) == (
        "insert",
        "none",
        500,
        False,
        True,
    )
    assert s.table_for("t") == "old_t"  # the deprecated key still works
    assert s.shown_url == "postgresql+psycopg://app:***@db:5432/shop"
    s = DebeziumSinkConfig.parse({**props, "collection.name.format": "new_${topic}"}).settings()
    assert s.table_for("t") == "new_t"
    # Debezium's naming replaces the topic's dots; Confluent's keeps them.
    assert s.table_for("shop.inventory.orders") == "new_shop_inventory_orders"
    confluent = ConfluentSinkConfig.parse({"connection.url": "jdbc:sqlite::memory:"}).settings()
    assert confluent.table_for("shop.inventory.orders") == "shop.inventory.orders"
    s = DebeziumSinkConfig.parse({**props, "schema.evolution": "basic"}).settings()
    assert s.auto_create and s.auto_evolve
    # database.time_zone, the key's name before Debezium 2.5, still works; use.time.zone wins.
    paris = zoneinfo.ZoneInfo("Europe/Paris")
    assert DebeziumSinkConfig.parse({**props, "database.time_zone": "Europe/Paris"}).settings().zone == paris
    both = {**props, "database.time_zone": "Europe/Paris", "use.time.zone": "UTC"}
    assert DebeziumSinkConfig.parse(both).settings().zone == dt.UTC
    assert "database.time_zone" in issues(DebeziumSinkConfig, {**props, "database.time_zone": "Nowhere/City"})


def test_config_errors_name_the_key() -> None:
    base = {"connection.url": "jdbc:sqlite::memory:"}
    assert "delete.enabled" in issues(ConfluentSinkConfig, {**base, "delete.enabled": "true"})
    assert "delete.enabled" in issues(
        ConfluentSinkConfig, {**base, "delete.enabled": "true", "pk.mode": "record_value"}
    )
    assert issues(ConfluentSinkConfig, {**base, "delete.enabled": "true", "pk.mode": "record_key"}) == {}
    assert "pk.mode" in issues(ConfluentSinkConfig, {**base, "insert.mode": "upsert"})
    assert "insert.mode" in issues(ConfluentSinkConfig, {**base, "insert.mode": "merge"})
    assert "pk.fields" in issues(ConfluentSinkConfig, {**base, "pk.mode": "kafka", "pk.fields": "a,b"})
    assert "db.timezone" in issues(ConfluentSinkConfig, {**base, "db.timezone": "Mars/Olympus"})
    assert "quote.sql.identifiers" in issues(
        ConfluentSinkConfig, {**base, "quote.sql.identifiers": "sometimes"}
    )
    assert "connection.url" in issues(ConfluentSinkConfig, {"connection.url": "jdbc:oracle:thin:@db"})
    assert "connection.url" in issues(ConfluentSinkConfig, {})
    assert "batch.size" in issues(ConfluentSinkConfig, {**base, "batch.size": "0"})
    # Debezium deletes by record_value too; its mode key is primary.key.mode.
    assert (
        issues(DebeziumSinkConfig, {**base, "delete.enabled": "true", "primary.key.mode": "record_value"})
        == {}
    )
    assert "primary.key.mode" in issues(DebeziumSinkConfig, {**base, "insert.mode": "upsert"})
    assert "schema.evolution" in issues(DebeziumSinkConfig, {**base, "schema.evolution": "advanced"})
    assert "field.exclude.list" in issues(
        DebeziumSinkConfig, {**base, "field.include.list": "a", "field.exclude.list": "b"}
    )
    with pytest.raises(ConfigValidationError, match=r"delete\.enabled"):
        ConfluentSinkConfig.parse({**base, "delete.enabled": "true"})


def test_aliases() -> None:
    assert JdbcSinkConnector.aliases == ("io.confluent.connect.jdbc.JdbcSinkConnector",)
    assert DebeziumJdbcSinkConnector.aliases == ("io.debezium.connector.jdbc.JdbcSinkConnector",)


# -- records --------------------------------------------------------------------------------

KEY = SchemaBuilder.struct().field("id", Schema.INT32_SCHEMA).build()
ROW = (
    SchemaBuilder.struct()
    .field("id", Schema.INT32_SCHEMA)
    .field("name", Schema.OPTIONAL_STRING_SCHEMA)
    .field("qty", Schema.OPTIONAL_INT32_SCHEMA)
    .build()
)
ENVELOPE = (
    SchemaBuilder.struct()
    .field(
        "before",
        SchemaBuilder.struct()
        .field("id", Schema.INT32_SCHEMA)
        .field("name", Schema.OPTIONAL_STRING_SCHEMA)
        .field("qty", Schema.OPTIONAL_INT32_SCHEMA)
        .optional(),
    )
    .field(
        "after",
        SchemaBuilder.struct()
        .field("id", Schema.INT32_SCHEMA)
        .field("name", Schema.OPTIONAL_STRING_SCHEMA)
        .field("qty", Schema.OPTIONAL_INT32_SCHEMA)
        .optional(),
    )
    .field("op", Schema.STRING_SCHEMA)
    .build()
)


def settings_of(**props: str) -> SinkSettings:
    debezium_keys = any(k in props for k in ("primary_key_mode", "primary_key_fields", "field_exclude_list"))
    raw = {"connection.url": "jdbc:sqlite::memory:", **{k.replace("_", "."): v for k, v in props.items()}}
    if debezium_keys:
        return DebeziumSinkConfig.parse(raw).settings()
    return ConfluentSinkConfig.parse(raw).settings()


def row(i: int, name: str | None = "a", qty: int | None = 1) -> Struct:
    return Struct(ROW).put("id", i).put("name", name).put("qty", qty)


def record(value: Any, key: Any = None, offset: int = 7, value_schema: Schema | None = ROW) -> SinkRecord:
    key_schema = KEY if isinstance(key, Struct) else (Schema.STRING_SCHEMA if key is not None else None)
    return SinkRecord(
        "t", 3, key_schema, key, value_schema if value is not None else None, value, kafka_offset=offset
    )


@pytest.mark.parametrize(
    ("props", "keys", "values", "extracted"),
    [
        ({"pk_mode": "none"}, [], ["id", "name", "qty"], [5, "a", 1]),
        (
            {"pk_mode": "kafka"},
            ["__connect_topic", "__connect_partition", "__connect_offset"],
            ["id", "name", "qty"],
            ["t", 3, 7, 5, "a", 1],
        ),
        (
            {"pk_mode": "kafka", "pk_fields": "tp,pa,of"},
            ["tp", "pa", "of"],
            ["id", "name", "qty"],
            ["t", 3, 7, 5, "a", 1],
        ),
        ({"pk_mode": "record_key"}, ["id"], ["name", "qty"], [9, "a", 1]),
        ({"pk_mode": "record_value"}, ["id", "name", "qty"], [], [5, "a", 1]),
        ({"pk_mode": "record_value", "pk_fields": "id"}, ["id"], ["name", "qty"], [5, "a", 1]),
        ({"pk_mode": "record_value", "pk_fields": "id", "fields_whitelist": "qty"}, ["id"], ["qty"], [5, 1]),
    ],
)
def test_columns_per_pk_mode(
    props: dict[str, str], keys: list[str], values: list[str], extracted: list[Any]
) -> None:
    s = settings_of(**props)
    plan = plan_fields(s, "t", KEY, ROW)
    assert [c.name for c in plan.key_columns] == keys
    assert [c.name for c in plan.value_columns] == values
    rec = record(row(5), Struct(KEY).put("id", 9))
    assert plan.extract(rec, rec.value) == extracted


def test_primitive_keys_need_one_column_name() -> None:
    plan = plan_fields(settings_of(pk_mode="record_key", pk_fields="code"), "t", Schema.STRING_SCHEMA, ROW)
    rec = record(row(1), "k1")
    assert [c.name for c in plan.key_columns] == ["code"] and plan.extract(rec, rec.value)[0] == "k1"
    with pytest.raises(DataException, match="name its one column"):
        plan_fields(settings_of(pk_mode="record_key"), "t", Schema.STRING_SCHEMA, ROW)
    with pytest.raises(DataException, match="no primary key field 'nope'"):
        plan_fields(settings_of(pk_mode="record_value", pk_fields="nope"), "t", KEY, ROW)
    with pytest.raises(DataException, match="key schema"):
        plan_fields(settings_of(pk_mode="record_key"), "t", None, ROW)


def test_debezium_field_lists_take_topic_prefixes() -> None:
    s = settings_of(primary_key_mode="record_value", primary_key_fields="id", field_exclude_list="t:qty")
    assert [c.name for c in plan_fields(s, "t", None, ROW).value_columns] == ["name"]
    assert [c.name for c in plan_fields(s, "other", None, ROW).value_columns] == ["name", "qty"]


def event(op: str, before: Struct | None, after: Struct | None) -> Struct:
    e = Struct(ENVELOPE).put("op", op)
    sub = ENVELOPE.field("after").schema  # type: ignore[union-attr]
    if before is not None:
        e.put(
            "before",
            Struct(sub)
            .put("id", before.get("id"))
            .put("name", before.get("name"))
            .put("qty", before.get("qty")),
        )
    if after is not None:
        e.put(
            "after",
            Struct(sub)
            .put("id", after.get("id"))
            .put("name", after.get("name"))
            .put("qty", after.get("qty")),
        )
    return e


def test_what_records_ask() -> None:
    confluent = settings_of(pk_mode="record_key", delete_enabled="true")
    change = change_of(record(row(1), Struct(KEY).put("id", 1)), confluent)
    assert change is not None and change.action is Action.WRITE
    tomb = change_of(record(None, Struct(KEY).put("id", 1)), confluent)
    assert tomb is not None and tomb.action is Action.DELETE and tomb.struct is None
    with pytest.raises(DataException, match=r"delete\.enabled=false"):
        change_of(record(None, Struct(KEY).put("id", 1)), settings_of(pk_mode="record_key"))
    with pytest.raises(DataException, match="not a Struct"):
        change_of(record({"id": 1}, value_schema=None), confluent)
    dbz = settings_of(primary_key_mode="record_value", delete_enabled="true")
    for op in ("c", "r", "u"):
        got = change_of(record(event(op, None, row(2, "b")), value_schema=ENVELOPE), dbz)
        assert got is not None and got.action is Action.WRITE and got.struct is not None
        assert got.struct.get("name") == "b"
    deleted = change_of(record(event("d", row(2), None), value_schema=ENVELOPE), dbz)
    assert deleted is not None and deleted.action is Action.DELETE and deleted.struct is not None
    assert deleted.struct.get("id") == 2
    assert change_of(record(event("t", None, None), value_schema=ENVELOPE), dbz) is None
    assert change_of(record(None), dbz) is None  # the tombstone after a delete event
    no_deletes = settings_of(primary_key_mode="record_value")
    assert change_of(record(event("d", row(2), None), value_schema=ENVELOPE), no_deletes) is None
    assert change_of(record(None), no_deletes) is None
