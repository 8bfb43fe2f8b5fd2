"""MySqlSourceTask driven directly, as the worker drives it, against a real MariaDB with a
row-based binlog and the real broker (the schema history topic): the snapshot/stream
boundary under concurrent writes, DDL mid-stream, binlog rotation, a server restart,
resuming after a task restart inside a transaction, a purged binlog, and bad server settings."""

from __future__ import annotations

import decimal
import threading
import time

import pytest

from broker.server import EmbeddedBroker
from connect.api import ConnectException, SourceRecord, SourceRecordBatch
from connectors.jdbc.mysql.task import MariaDbSourceTask, MySqlSourceTask
from tests.connectors.jdbc.test_cdc_support import workers
from tests.connectors.jdbc.test_mysql_support import (
    BinlogDatabase,
    Worker,
    binlog_db,
    brief,
    data,
    offset,
    restart,
    row,
    start,
)
from tests.support import unique

FIXTURES = (binlog_db, workers)


def ids(records: list[SourceRecord], op: str | None = None) -> list[int]:
    out = []
    for r in data(records):
        if r.value is None:
            continue
        if op is None or r.value.get("op") == op:
            image = r.value.get("after") or r.value.get("before")
            out.append(image.get("id"))
    return out


def test_snapshot_and_stream_meet_without_loss_or_duplicates_under_concurrent_writes(
    binlog_db: BinlogDatabase, shared_broker: EmbeddedBroker, workers: list[Worker]
) -> None:
    binlog_db.run(
        "CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL)",
        "INSERT INTO t VALUES " + ",".join(f"({i}, 0)" for i in range(300)),
    )
    worker = start(binlog_db, shared_broker, workers, max_batch_size="50", snapshot_fetch_size="50")
    stop = threading.Event()
    written: list[int] = []

    def write() -> None:
        conn = binlog_db.connect()
        i = 1000
        while not stop.is_set() and i < 1150:
            with conn.cursor() as cur:
                cur.execute(f"INSERT INTO t VALUES ({i}, 1)")
            written.append(i)
            i += 1
        conn.close()

    writer = threading.Thread(target=write)
    writer.start()
    try:
        records = worker.poll_until(lambda out: len(data(out)) >= 300 + 10)
    finally:
        stop.set()
        writer.join()
    expected = set(range(300)) | set(written)
    records += worker.poll_until(lambda out: set(ids(records + out)) >= expected)
    seen = ids(records)
    assert sorted(seen) == sorted(expected), "a row was lost or delivered twice"
    snapshot = [r for r in data(records) if r.value.get("op") == "r"]
    assert snapshot[0].value.get("source").get("snapshot") == "first"
    assert snapshot[-1].value.get("source").get("snapshot") == "last"
    assert offset(snapshot[-1]).get("snapshot_completed") is True
    created = [r for r in data(records) if r.value.get("op") == "c"]
    assert {r.value.get("after").get("v") for r in created} <= {1}
    source = created[-1].value.get("source") if created else snapshot[-1].value.get("source")
    assert source.get("connector") == "mysql" and source.get("db") == binlog_db.name
    assert source.get("table") == "t" and source.get("file").startswith("mysql-bin.")


def changes_of_one_table(
    binlog_db: BinlogDatabase, broker: EmbeddedBroker, workers: list[Worker], task: type
) -> SourceRecord:
    """Inserts, an update in their transaction, a delete and a key change streamed by
    ``task``: each as Debezium sends it (deletes with their tombstones, a key change as a
    delete and a create); the update's record, for the server's GTIDs to be checked."""
    binlog_db.run("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))")
    worker = start(binlog_db, broker, workers, task=task)
    worker.streaming()
    binlog_db.transaction("INSERT INTO t VALUES (1, 'a'), (2, 'b')", "UPDATE t SET v = 'c' WHERE id = 1")
    binlog_db.run("DELETE FROM t WHERE id = 2", "UPDATE t SET id = 3 WHERE id = 1")
    records = worker.count(8)
    ops = [brief(r)[:2] for r in data(records)]
    assert ops[:8] == [
        ("c", 1),
        ("c", 2),
        ("u", 1),
        ("d", 2),
        ("tombstone", 2),
        ("d", 1),
        ("tombstone", 1),
        ("c", 3),
    ]
    update = data(records)[2]
    assert row(update, "before") == {"id": 1, "v": "a"} and row(update, "after") == {"id": 1, "v": "c"}
    return update


def test_updates_deletes_tombstones_and_mariadb_gtids(
    binlog_db: BinlogDatabase, shared_broker: EmbeddedBroker, workers: list[Worker]
) -> None:
    update = changes_of_one_table(binlog_db, shared_broker, workers, MariaDbSourceTask)
    source = update.value.get("source")
    assert source.get("connector") == "mariadb"
    gtid = source.get("gtid")
    assert gtid is not None and gtid.count("-") == 2  # domain-server-seq
    assert offset(update)["gtids"] is not None and offset(update)["event"] == 1


def test_alter_table_mid_stream_applies_to_later_rows(
    binlog_db: BinlogDatabase, shared_broker: EmbeddedBroker, workers: list[Worker]
) -> None:
    binlog_db.run("CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(10))", "INSERT INTO t VALUES (1, 'x')")
    worker = start(binlog_db, shared_broker, workers)
    records = worker.count(1)
    binlog_db.run(
        "INSERT INTO t VALUES (2, 'y')",
        "ALTER TABLE t ADD COLUMN b INT NOT NULL DEFAULT 7 AFTER id",
        "INSERT INTO t VALUES (3, 8, 'z')",
        "ALTER TABLE t DROP COLUMN a",
        "UPDATE t SET b = 9 WHERE id = 3",
    )
    records = worker.count(3)
    changes = data(records)
    assert row(changes[0]) == {"id": 2, "a": "y"}
    assert row(changes[1]) == {"id": 3, "b": 8, "a": "z"}
    assert row(changes[2], "before") == {"id": 3, "b": 8} and row(changes[2]) == {"id": 3, "b": 9}
    prefix = worker.config["topic.prefix"]
    ddl = [r for r in records if r.topic == prefix]
    assert any("ADD COLUMN" in r.value.get("ddl") for r in ddl)
    # A new task recovers the schema from the history topic: rows after the ALTERs still decode.
    worker = restart(worker, workers)
    binlog_db.run("INSERT INTO t VALUES (4, 10)")
    again = worker.count(1)
    assert row(data(again)[-1]) == {"id": 4, "b": 10}


def test_rotation_and_a_server_restart_are_ridden_out(
    binlog_db: BinlogDatabase, shared_broker: EmbeddedBroker, workers: list[Worker]
) -> None:
    binlog_db.run("CREATE TABLE t (id INT PRIMARY KEY)")
    worker = start(binlog_db, shared_broker, workers)
    worker.streaming()
    binlog_db.run("INSERT INTO t VALUES (1)", "FLUSH BINARY LOGS", "INSERT INTO t VALUES (2)")
    records = worker.count(2)
    assert offset(data(records)[1])["file"] != offset(data(records)[0])["file"]
    binlog_db.server.restart()
    binlog_db.run("INSERT INTO t VALUES (3)")
    records += worker.poll_until(lambda out: 3 in ids(out), retriable=True)
    binlog_db.run("INSERT INTO t VALUES (4)")
    records += worker.poll_until(lambda out: 4 in ids(out), retriable=True)
    assert sorted(ids(records)) == [1, 2, 3, 4]


def test_a_restarted_task_resumes_inside_a_transaction_without_loss_or_repeats(
    binlog_db: BinlogDatabase, shared_broker: EmbeddedBroker, workers: list[Worker]
) -> None:
    binlog_db.run("CREATE TABLE t (id INT PRIMARY KEY)", "CREATE TABLE u (id INT PRIMARY KEY)")
    worker = start(binlog_db, shared_broker, workers)
    worker.streaming()
    binlog_db.transaction(
        "INSERT INTO t VALUES (1), (2), (3)",
        "INSERT INTO u VALUES (10)",
        "INSERT INTO t VALUES (4), (5)",
    )
    records = data(worker.count(6))
    assert [r.value.get("after").get("id") for r in records] == [1, 2, 3, 10, 4, 5]
    worker.acknowledge(records[1])  # Kafka has 1 and 2; then the task dies
    worker = restart(worker, workers)
    binlog_db.run("INSERT INTO t VALUES (6)")
    again = data(worker.count(5))
    assert [r.value.get("after").get("id") for r in again] == [3, 10, 4, 5, 6]
    worker.acknowledge(again[3])  # up to 5: the whole transaction
    worker = restart(worker, workers)
    binlog_db.run("INSERT INTO t VALUES (7)")
    third = data(worker.count(2))
    assert [r.value.get("after").get("id") for r in third] == [6, 7]


def test_a_purged_binlog_fails_the_task_unless_when_needed(
    binlog_db: BinlogDatabase, shared_broker: EmbeddedBroker, workers: list[Worker]
) -> None:
    binlog_db.run("CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)")
    worker = start(binlog_db, shared_broker, workers)
    binlog_db.run("INSERT INTO t VALUES (2)")
    records = worker.count(2)
    worker.acknowledge(records[-1])
    worker.stop()
    workers.remove(worker)
    binlog_db.run("FLUSH BINARY LOGS", "INSERT INTO t VALUES (3)", "FLUSH BINARY LOGS")
    current = binlog_db.rows("SHOW BINARY LOGS")[-1][0]  # MySQL 8.4 has no SHOW MASTER STATUS
    stored = offset(records[-1])["file"]
    deadline = time.monotonic() + 20
    # The server keeps a file a binlog reader still has open (the stopped task's dump thread
    # may linger a moment): purge until it is gone.
    while stored in [r[0] for r in binlog_db.rows("SHOW BINARY LOGS")]:
        assert time.monotonic() < deadline, f"{stored} was not purged"
        binlog_db.run(f"PURGE BINARY LOGS TO '{current}'")
        time.sleep(0.1)
    failed = Worker(MySqlSourceTask(), worker.config, worker.store)
    workers.append(failed)
    with pytest.raises(ConnectException, match=r"snapshot\.mode=when_needed"):
        failed.poll()
    again = restart(failed, workers, snapshot_mode="when_needed")
    records = again.count(3)
    assert sorted(ids(records, "r")) == [1, 2, 3]


def test_server_settings_the_connector_needs_are_checked(
    binlog_db: BinlogDatabase, shared_broker: EmbeddedBroker, workers: list[Worker]
) -> None:
    binlog_db.run("CREATE TABLE t (id INT PRIMARY KEY)")
    binlog_db.run("SET GLOBAL binlog_row_image = 'MINIMAL'")
    try:
        worker = start(binlog_db, shared_broker, workers)
        with pytest.raises(ConnectException, match="binlog_row_image=FULL"):
            worker.poll()
    finally:
        binlog_db.run("SET GLOBAL binlog_row_image = 'FULL'")
    user = unique("u").replace("-", "_")
    binlog_db.run(
        f"CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'",
        f"GRANT SELECT, RELOAD, SHOW DATABASES ON *.* TO '{user}'@'%'",
    )
    try:
        worker = start(binlog_db, shared_broker, workers, database_user=user, database_password="pw")
        with pytest.raises(ConnectException, match="REPLICATION"):
            worker.poll_until(lambda out: False, timeout=15)
    finally:
        binlog_db.run(f"DROP USER '{user}'@'%'")


def test_heartbeats_carry_the_position_reached_while_idle(
    binlog_db: BinlogDatabase, shared_broker: EmbeddedBroker, workers: list[Worker]
) -> None:
    binlog_db.run("CREATE TABLE t (id INT PRIMARY KEY)")
    worker = start(
        binlog_db, shared_broker, workers, heartbeat_interval_ms="100", include_schema_changes="false"
    )
    assert worker.streaming() == []  # no rows, and schema changes are off
    binlog_db.run("INSERT INTO t VALUES (1)")
    records = worker.poll_until(lambda out: any(r.topic.startswith("__debezium-heartbeat") for r in out[1:]))
    change = data(records)[0]
    beat = [r for r in records if r.topic == f"__debezium-heartbeat.{worker.config['topic.prefix']}"][-1]
    assert beat.key is not None and beat.key.get("serverName") == worker.config["topic.prefix"]
    # After the insert's transaction: the same file, further on, nothing left to skip.
    assert offset(beat)["file"] == offset(change)["file"] and offset(beat)["pos"] > offset(change)["pos"]
    assert (offset(beat)["event"], offset(beat)["row"]) == (0, 0)


def test_no_data_and_never_modes_stream_without_reading_rows(
    binlog_db: BinlogDatabase, shared_broker: EmbeddedBroker, workers: list[Worker]
) -> None:
    binlog_db.run("CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)")
    no_data = start(binlog_db, shared_broker, workers, snapshot_mode="schema_only")  # Debezium 2.x's old name
    assert data(no_data.streaming()) == []
    # never: no snapshot at all; the binlog from its oldest file rebuilds the schemas.
    never = start(binlog_db, shared_broker, workers, snapshot_mode="never")
    binlog_db.run(
        "CREATE TABLE u (id INT PRIMARY KEY, v INT)",
        "INSERT INTO t VALUES (2)",
        "INSERT INTO u VALUES (3, 4)",
    )
    assert ids(no_data.count(2)) == [2, 3]
    streamed = never.poll_until(lambda out: 3 in ids(out))
    assert 3 in ids(streamed) and row(data(streamed)[-1]) == {"id": 3, "v": 4}


def test_without_reload_the_snapshot_locks_tables_instead(
    binlog_db: BinlogDatabase, shared_broker: EmbeddedBroker, workers: list[Worker]
) -> None:
    binlog_db.run("CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1), (2)")
    user = unique("u").replace("-", "_")
    binlog_db.run(
        f"CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'",
        "GRANT SELECT, LOCK TABLES, SHOW DATABASES, REPLICATION SLAVE, BINLOG MONITOR ON *.* "
        f"TO '{user}'@'%'",
    )
    try:
        worker = start(binlog_db, shared_broker, workers, database_user=user, database_password="pw")
        snapshot = worker.streaming()
        binlog_db.run("INSERT INTO t VALUES (3)")
        assert ids(snapshot + worker.count(1)) == [1, 2, 3]
    finally:
        binlog_db.run(f"DROP USER '{user}'@'%'")


def test_a_bulk_insert_comes_as_one_batch_of_the_same_records(
    binlog_db: BinlogDatabase, shared_broker: EmbeddedBroker, workers: list[Worker]
) -> None:
    binlog_db.run(
        "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10), d DECIMAL(5,2) NOT NULL, s SET('a','b'))"
    )
    worker = start(binlog_db, shared_broker, workers, include_schema_changes="false")
    worker.streaming()
    values = ", ".join(f"({i}, 'v{i}', {i}.5, '{'a' if i % 2 else ''}')" for i in range(100))
    binlog_db.run(f"INSERT INTO t VALUES {values}", "INSERT INTO t VALUES (100, NULL, 1, NULL)")
    batch = worker.task.poll()
    assert isinstance(batch, SourceRecordBatch) and len(batch) == 100
    single = worker.count(1)
    records = list(batch)
    assert [row(r) for r in records[:2]] == [
        {"id": 0, "v": "v0", "d": decimal.Decimal("0.50"), "s": ""},
        {"id": 1, "v": "v1", "d": decimal.Decimal("1.50"), "s": "a"},
    ]
    assert row(single[0]) == {"id": 100, "v": None, "d": decimal.Decimal("1.00"), "s": None}
    # The same shapes as the row path: schemas, source block, offsets.
    assert records[0].value.schema == single[0].value.schema and records[0].key_schema == single[0].key_schema
    assert [r.value.get("source").get("row") for r in records] == list(range(100))
    assert [offset(r)["row"] for r in records] == list(range(1, 101))
    # A restart after the 40th record resumes inside the rows event.
    worker.acknowledge(records[39])
    worker = restart(worker, workers)
    again = worker.count(61)
    assert ids(again) == list(range(40, 101))
