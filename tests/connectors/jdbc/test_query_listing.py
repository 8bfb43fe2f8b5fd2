"""Which tables each database lists for the connector (dialects' list_tables), on real
databases: table types, schema and catalog patterns."""

from __future__ import annotations

from connectors.jdbc.query.dialects import dialect_for
from connectors.jdbc.query.tables import TableId
from tests.connectors.jdbc.test_query_support import (
    TestDatabase,
    db_fixture,
    maria_db_fixture,
    pg_db_fixture,
)

# Imported for pytest, which finds fixtures among a module's names.
FIXTURES = (db_fixture, maria_db_fixture, pg_db_fixture)


def listed(db: TestDatabase, *types: str, catalog: str | None = None, schema: str | None = None) -> list[str]:
    with db.engine.connect() as connection:
        found = dialect_for(db.engine.dialect.name).list_tables(
            connection, types=frozenset(types), catalog_pattern=catalog, schema_pattern=schema
        )
    return sorted(t.fqn for t in found)


def test_tables_and_views(db: TestDatabase) -> None:
    db.run("CREATE TABLE things (id INTEGER PRIMARY KEY)", "CREATE VIEW some_things AS SELECT id FROM things")
    assert listed(db, "TABLE") == [db.fqn("things")]
    assert listed(db, "VIEW") == [db.fqn("some_things")]
    assert listed(db, "TABLE", "VIEW") == sorted([db.fqn("things"), db.fqn("some_things")])


def test_postgres_partitions_are_tables_and_their_parent_a_partitioned_table(pg_db: TestDatabase) -> None:
    pg_db.run(
        "CREATE TABLE events (id INT, at DATE NOT NULL) PARTITION BY RANGE (at)",
        "CREATE TABLE events_2024 PARTITION OF events FOR VALUES FROM ('2024-01-01') TO ('2025-01-01')",
        "CREATE MATERIALIZED VIEW event_count AS SELECT count(*) AS n FROM events",
    )
    assert listed(pg_db, "TABLE") == ["public.events_2024"]  # never both: rows would be copied twice
    assert listed(pg_db, "PARTITIONED TABLE") == ["public.events"]
    assert listed(pg_db, "MATERIALIZED VIEW") == ["public.event_count"]


def test_postgres_schema_pattern(pg_db: TestDatabase) -> None:
    pg_db.run(
        "CREATE SCHEMA sales",
        "CREATE SCHEMA sales_archive",
        "CREATE TABLE sales.orders (id INT)",
        "CREATE TABLE sales_archive.orders (id INT)",
        "CREATE TABLE public.orders (id INT)",
    )
    assert listed(pg_db, "TABLE") == ["public.orders", "sales.orders", "sales_archive.orders"]
    assert listed(pg_db, "TABLE", schema="sales") == ["sales.orders"]
    assert listed(pg_db, "TABLE", schema="sales%") == ["sales.orders", "sales_archive.orders"]
    assert listed(pg_db, "TABLE", catalog=pg_db.name) == [
        "public.orders",
        "sales.orders",
        "sales_archive.orders",
    ]
    assert listed(pg_db, "TABLE", catalog="elsewhere") == []


def test_mariadb_catalogs_are_databases(maria_db: TestDatabase) -> None:
    maria_db.run("CREATE TABLE orders (id INT)")
    assert listed(maria_db, "TABLE") == [f"{maria_db.name}.orders"]  # the connection's database
    assert listed(maria_db, "TABLE", catalog=maria_db.name) == [f"{maria_db.name}.orders"]
    assert listed(maria_db, "TABLE", catalog="no_such_database") == []
    found = listed(maria_db, "TABLE", catalog="%")
    assert f"{maria_db.name}.orders" in found
    assert not any(t.startswith(("mysql.", "information_schema.", "performance_schema.")) for t in found)


def test_table_ids_are_what_offsets_are_keyed_by(db: TestDatabase) -> None:
    db.run("CREATE TABLE things (id INTEGER PRIMARY KEY)")
    with db.engine.connect() as connection:
        [table] = dialect_for(db.engine.dialect.name).list_tables(connection, types=frozenset({"TABLE"}))
    assert table.partition() == {"protocol": "1", "table": db.fqn("things")}
    assert isinstance(table, TableId)
