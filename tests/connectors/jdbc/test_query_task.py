"""JdbcSourceTask driven directly against real databases, with the runtime's own source task
context and offset store: what is easier to pin down one poll at a time than through a
worker (offsets committed mid-batch, lost connections, tables changing under the task)."""

from __future__ import annotations

import datetime as dt
import threading
import zoneinfo
from typing import Any

import pytest

from connect.api import ConnectException, RetriableException, SourceRecord
from connect.runtime.source_task import _SourceTaskContext
from connect.storage.offsets import ConnectorOffsetReader, MemoryOffsetBackingStore, OffsetStorageWriter
from connectors.jdbc.query import JdbcSourceTask
from connectors.jdbc.query.tables import TableId, encode_tables
from tests.connectors.jdbc.test_query_support import (
    TestDatabase,
    db_fixture,
    maria_db_fixture,
    pg_db_fixture,
    sqlite_db_fixture,
)

# Imported for pytest, which finds fixtures among a module's names.
FIXTURES = (db_fixture, maria_db_fixture, pg_db_fixture, sqlite_db_fixture)
CONNECTOR = "jdbc-task-test"
UTC = dt.UTC


def table_id(db: TestDatabase, name: str) -> TableId:
    return {
        "sqlite": TableId(None, None, name),
        "postgresql": TableId(None, "public", name),
        "mariadb": TableId(db.name, None, name),
    }[db.kind]


def start(
    db: TestDatabase, tables: list[str], store: MemoryOffsetBackingStore | None = None, **settings: str
) -> JdbcSourceTask:
    props = {
        "connection.url": db.url,
        "topic.prefix": "t-",
        "poll.interval.ms": "10",
        "tables": encode_tables([table_id(db, t) for t in tables]),
        **{k.replace("_", "."): v for k, v in settings.items()},
    }
    task = JdbcSourceTask()
    task.initialize(
        _SourceTaskContext(props, ConnectorOffsetReader(store or MemoryOffsetBackingStore(), CONNECTOR))
    )
    task.start(props)
    return task


def poll_all(task: JdbcSourceTask, quiet: int = 3, polls: int = 50) -> list[SourceRecord]:
    """Poll until ``quiet`` polls in a row return nothing (each poll queries one table)."""
    out: list[SourceRecord] = []
    empty = 0
    for _ in range(polls):
        got = task.poll() or []
        out += got
        empty = 0 if got else empty + 1
        if empty >= quiet:
            break
    return out


def names(records: list[SourceRecord]) -> list[str]:
    return [r.value.get("name") for r in records]


def ts(second: float) -> str:
    moment = dt.datetime(2024, 3, 1, 12, 0) + dt.timedelta(seconds=second)
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def orders(db: TestDatabase, *rows: tuple[str, float], table: str = "orders") -> None:
    db.run(
        f"CREATE TABLE {table} (id {db.serial}, name VARCHAR(40) NOT NULL, updated {db.timestamp} NOT NULL)"
    )
    insert(db, *rows, table=table)


def insert(db: TestDatabase, *rows: tuple[str, float], table: str = "orders") -> None:
    if rows:
        db.run(*(f"INSERT INTO {table} (name, updated) VALUES ('{n}', '{ts(s)}')" for n, s in rows))


def offsets_of(records: list[SourceRecord]) -> list[dict[str, Any] | None]:
    return [dict(r.source_offset) if r.source_offset is not None else None for r in records]


def at(second: float) -> dict[str, int]:
    moment = dt.datetime(2024, 3, 1, 12, 0, tzinfo=UTC) + dt.timedelta(seconds=second)
    return {"timestamp": int(moment.timestamp() * 1000), "timestamp_nanos": 0}


def test_a_run_of_equal_timestamps_longer_than_a_batch_is_streamed_whole(db: TestDatabase) -> None:
    """In timestamp mode the offset cannot tell rows with one timestamp apart: a batch that
    ends inside such a run is followed by the rest of the run, batch by batch, and only the
    run's last row carries its timestamp as offset."""
    orders(db, ("a", 1), *[(f"b{i}", 2) for i in range(5)], ("c", 3))
    task = start(db, ["orders"], mode="timestamp", timestamp_column_name="updated", batch_max_rows="2")
    batches = [task.poll() or [] for _ in range(5)]
    task.stop()
    assert [len(b) for b in batches] == [1, 2, 2, 1, 1]
    records = [r for b in batches for r in b]
    assert names(records)[0] == "a" and names(records)[-1] == "c"
    assert sorted(names(records)[1:6]) == ["b0", "b1", "b2", "b3", "b4"]
    assert offsets_of(records) == [at(1), at(1), at(1), at(1), at(1), at(2), at(3)]


def test_an_offset_committed_inside_a_run_of_equal_timestamps_loses_nothing(db: TestDatabase) -> None:
    """The worker may commit the offset of any record it has acknowledged, and stop."""
    orders(db, ("a", 1), ("b1", 2), ("b2", 2), ("b3", 2), ("c", 3))
    store = MemoryOffsetBackingStore()
    first = start(
        db, ["orders"], store, mode="timestamp", timestamp_column_name="updated", batch_max_rows="2"
    )
    records = poll_all(first)
    first.stop()
    assert names(records)[0] == "a" and names(records)[-1] == "c"
    middle = next(r for r in records if r.value.get("name") in ("b1", "b2", "b3"))
    assert middle.source_offset == at(1)  # a's timestamp: the run has not been read whole yet
    # Acknowledged up to the middle of the run only, then the task stopped.
    OffsetStorageWriter(store, CONNECTOR).write([(middle.source_partition, middle.source_offset)])
    second = start(
        db, ["orders"], store, mode="timestamp", timestamp_column_name="updated", batch_max_rows="2"
    )
    assert sorted(names(poll_all(second))) == ["b1", "b2", "b3", "c"]  # the run again (at least once)
    second.stop()


@pytest.mark.parametrize("mode", ["incrementing", "timestamp+incrementing"])
def test_each_record_carries_its_own_offset_in_the_totally_ordered_modes(db: TestDatabase, mode: str) -> None:
    orders(db, ("a", 1), ("b", 1), ("c", 2))
    task = start(db, ["orders"], mode=mode, timestamp_column_name="updated", incrementing_column_name="id")
    records = poll_all(task)
    task.stop()
    offsets = [r.source_offset for r in records]
    if mode == "incrementing":
        assert offsets == [{"incrementing": 1}, {"incrementing": 2}, {"incrementing": 3}]
    else:
        assert [o["incrementing"] for o in offsets if o] == [1, 2, 3]
        assert [o["timestamp"] for o in offsets if o] == [1709294401000, 1709294401000, 1709294402000]
    assert {r.source_partition["table"] for r in records} == {db.fqn("orders")}  # type: ignore[index]


def test_the_auto_increment_column_is_found_when_none_is_named(db: TestDatabase) -> None:
    orders(db, ("a", 1), ("b", 2))
    task = start(db, ["orders"], mode="incrementing")
    assert [r.source_offset for r in poll_all(task)] == [{"incrementing": 1}, {"incrementing": 2}]
    task.stop()


def test_offsets_of_confluents_older_protocol_are_resumed(sqlite_db: TestDatabase) -> None:
    orders(sqlite_db, ("a", 1), ("b", 2), ("c", 3))
    store = MemoryOffsetBackingStore()
    OffsetStorageWriter(store, CONNECTOR).write([({"table": "orders"}, {"incrementing": 2})])
    task = start(sqlite_db, ["orders"], store, mode="incrementing", incrementing_column_name="id")
    records = poll_all(task)
    task.stop()
    assert names(records) == ["c"]
    assert records[0].source_partition == {"protocol": "1", "table": "orders"}


def test_timestamp_initial_skips_older_rows(sqlite_db: TestDatabase) -> None:
    orders(sqlite_db, ("old", 1), ("new", 10))
    initial = int((dt.datetime(2024, 3, 1, 12, 0, 5, tzinfo=UTC)).timestamp() * 1000)
    task = start(
        sqlite_db,
        ["orders"],
        mode="timestamp",
        timestamp_column_name="updated",
        timestamp_initial=str(initial),
    )
    assert names(poll_all(task)) == ["new"]
    task.stop()
    now_only = start(
        sqlite_db, ["orders"], mode="timestamp", timestamp_column_name="updated", timestamp_initial="-1"
    )
    assert poll_all(now_only) == []  # every row is older than "now"
    now_only.stop()


@pytest.mark.parametrize("db", ["postgresql", "mariadb"], indirect=True)
def test_naive_timestamps_are_read_and_compared_in_db_timezone(db: TestDatabase) -> None:
    db.run(f"CREATE TABLE local (id {db.serial}, name VARCHAR(10) NOT NULL, updated {db.timestamp} NOT NULL)")
    # Wall-clock time in Kolkata (UTC+05:30, no daylight saving): hours ahead of UTC. Read as
    # UTC, these rows would lie in the future and never pass the end bound.
    zone = zoneinfo.ZoneInfo("Asia/Kolkata")
    local_now = dt.datetime.now(zone).replace(tzinfo=None) - dt.timedelta(seconds=2)
    db.run(f"INSERT INTO local (name, updated) VALUES ('now', '{local_now:%Y-%m-%d %H:%M:%S}')")
    task = start(db, ["local"], mode="timestamp", timestamp_column_name="updated", db_timezone="Asia/Kolkata")
    [record] = poll_all(task)
    task.stop()
    expected = local_now.replace(microsecond=0, tzinfo=zone).astimezone(UTC)
    assert record.value.get("updated") == expected
    assert record.source_offset == {"timestamp": int(expected.timestamp() * 1000), "timestamp_nanos": 0}


def kill_connections(db: TestDatabase) -> None:
    if db.kind == "postgresql":
        db.run(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            f"WHERE datname = '{db.name}' AND pid <> pg_backend_pid()"
        )
        return
    with db.engine.connect() as connection:
        ids = connection.exec_driver_sql(
            f"SELECT id FROM information_schema.processlist WHERE db = '{db.name}' AND id <> CONNECTION_ID()"
        ).fetchall()
        for (pid,) in ids:
            connection.exec_driver_sql(f"KILL {pid}")


@pytest.mark.parametrize("db", ["postgresql", "mariadb"], indirect=True)
def test_a_lost_connection_is_retriable_and_the_next_poll_reconnects(db: TestDatabase) -> None:
    orders(db, ("a", 1))
    task = start(
        db, ["orders"], mode="incrementing", incrementing_column_name="id", connection_backoff_ms="10"
    )
    assert names(poll_all(task)) == ["a"]
    kill_connections(db)
    insert(db, ("b", 2))
    with pytest.raises(RetriableException, match="lost the connection"):
        for _ in range(5):
            task.poll()
    assert names(poll_all(task)) == ["b"]
    task.stop()


def test_when_reconnecting_fails_too_the_task_fails_saying_why(pg_db: TestDatabase) -> None:
    assert pg_db.server is not None
    orders(pg_db, ("a", 1))
    task = start(
        pg_db,
        ["orders"],
        mode="incrementing",
        incrementing_column_name="id",
        connection_attempts="2",
        connection_backoff_ms="10",
    )
    assert names(poll_all(task)) == ["a"]
    pg_db.server.execute(f"ALTER DATABASE {pg_db.name} ALLOW_CONNECTIONS false")
    try:
        kill_connections(pg_db)
        with pytest.raises(RetriableException, match="lost the connection"):
            for _ in range(5):
                task.poll()
        with pytest.raises(ConnectException, match=r"after 2 attempt.*not currently accepting connections"):
            task.poll()
    finally:
        task.stop()
        pg_db.server.execute(f"ALTER DATABASE {pg_db.name} ALLOW_CONNECTIONS true")


def test_a_dropped_table_is_skipped_and_the_others_go_on(db: TestDatabase) -> None:
    orders(db, ("a", 1))
    orders(db, ("x", 1), table="other")
    task = start(db, ["orders", "other"], mode="incrementing", incrementing_column_name="id")
    assert sorted(names(poll_all(task))) == ["a", "x"]
    db.run("DROP TABLE other")
    insert(db, ("b", 2))
    assert names(poll_all(task)) == ["b"]
    task.stop()


def test_a_column_added_while_running_appears_in_the_schema(db: TestDatabase) -> None:
    orders(db, ("a", 1))
    task = start(db, ["orders"], mode="incrementing", incrementing_column_name="id")
    [first] = poll_all(task)
    assert [f.name for f in first.value_schema.fields] == ["id", "name", "updated"]  # type: ignore[union-attr]
    db.run("ALTER TABLE orders ADD COLUMN note VARCHAR(10)")
    db.run(f"INSERT INTO orders (name, updated, note) VALUES ('b', '{ts(2)}', 'hi')")
    [second] = poll_all(task)
    task.stop()
    assert [f.name for f in second.value_schema.fields] == ["id", "name", "updated", "note"]  # type: ignore[union-attr]
    assert second.value.get("note") == "hi"


def test_quote_never_lets_the_database_fold_names(pg_db: TestDatabase) -> None:
    pg_db.run("CREATE TABLE mixed (id SERIAL PRIMARY KEY, name TEXT NOT NULL)")
    pg_db.run("INSERT INTO mixed (name) VALUES ('a')")
    task = start(
        pg_db, ["mixed"], mode="incrementing", incrementing_column_name="ID", quote_sql_identifiers="never"
    )
    assert names(poll_all(task)) == ["a"]
    task.stop()


def test_stop_ends_a_poll_waiting_for_the_next_interval(sqlite_db: TestDatabase) -> None:
    orders(sqlite_db)
    task = start(
        sqlite_db, ["orders"], mode="incrementing", incrementing_column_name="id", poll_interval_ms="60000"
    )
    assert task.poll() == []  # the table is read: the next read is a minute away
    polled: list[object] = []
    poller = threading.Thread(target=lambda: polled.append(task.poll()))
    poller.start()
    task.stop()
    poller.join(30)
    assert not poller.is_alive()
    assert task.poll() is None


def test_an_idle_task_without_tables_polls_nothing(sqlite_db: TestDatabase) -> None:
    task = start(sqlite_db, [], mode="bulk")
    assert task.poll() == []
    task.stop()
