"""How the MySQL CDC task uses the schema history, against the session's MariaDB and broker:
every DDL statement is recorded (also database-level ones, with no table changes), the
snapshot records each database's ``SHOW CREATE DATABASE``, only captured tables' DDL when
asked, and system-versioned tables with hidden row period columns stream."""

from __future__ import annotations

import json
from typing import Any

from confluent_kafka import Consumer, TopicPartition

from broker.server import EmbeddedBroker
from connect.api import SourceRecord
from connectors.jdbc.mysql.task import MySqlSourceTask
from tests.connectors.jdbc.test_cdc_support import workers
from tests.connectors.jdbc.test_mysql_support import (
    BinlogDatabase,
    Worker,
    binlog_db,
    data,
    restart,
    row,
    start,
)
from tests.support import unique

FIXTURES = (binlog_db, workers)


def history(worker: Worker) -> list[dict[str, Any]]:
    """Every record of the worker's schema history topic (record() returns once written)."""
    topic = worker.config["schema.history.internal.kafka.topic"]
    bootstrap = worker.config["schema.history.internal.kafka.bootstrap.servers"]
    settings = {"bootstrap.servers": bootstrap, "group.id": unique("h"), "enable.auto.commit": False}
    consumer = Consumer(settings)
    try:
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        consumer.assign([TopicPartition(topic, 0, low)])
        out: list[dict[str, Any]] = []
        for _ in range(200):
            for message in consumer.consume(100, 0.1):
                if message.error() is None:
                    out.append(json.loads(message.value() or b"null"))
            if consumer.position([TopicPartition(topic, 0)])[0].offset >= high:
                break
        return out
    finally:
        consumer.close()


def schema_changes(worker: Worker, records: list[SourceRecord]) -> list[SourceRecord]:
    return [r for r in records if r.topic == worker.config["topic.prefix"]]


def test_every_ddl_statement_is_recorded_and_reported_but_no_dml(
    binlog_db: BinlogDatabase, shared_broker: EmbeddedBroker, workers: list[Worker]
) -> None:
    binlog_db.run("CREATE TABLE t (id INT PRIMARY KEY)")
    worker = start(binlog_db, shared_broker, workers)
    worker.streaming()
    other = f"{binlog_db.name}_other"
    binlog_db.run(
        f"CREATE DATABASE {other} CHARACTER SET latin1",
        f"DROP DATABASE {other}",
        f"ALTER DATABASE {binlog_db.name} CHARACTER SET latin1",
        # DML logged as a statement is no DDL: neither recorded nor reported.
        "SET SESSION binlog_format = 'STATEMENT'",
        "INSERT INTO t VALUES (1)",
        "SET SESSION binlog_format = 'ROW'",
        "INSERT INTO t VALUES (2)",
    )
    records = worker.count(1)
    assert [row(r) for r in data(records)] == [{"id": 2}]
    ddl = [h["ddl"] for h in history(worker)]
    assert f"CREATE DATABASE {other} CHARACTER SET latin1" in ddl
    assert f"DROP DATABASE {other}" in ddl
    altered = [h for h in history(worker) if h["ddl"].startswith("ALTER DATABASE")]
    assert [(h["databaseName"], h["tableChanges"]) for h in altered] == [(binlog_db.name, [])]
    assert not any(d.startswith("INSERT") for d in ddl)
    # Schema change events for the statements on captured databases only (not on `other`).
    reported = schema_changes(worker, records)
    seen = [(r.key.get("databaseName"), r.value.get("ddl"), r.value.get("tableChanges")) for r in reported]
    assert seen == [(binlog_db.name, f"ALTER DATABASE {binlog_db.name} CHARACTER SET latin1", [])]
    assert reported[0].value.get("source").get("db") == binlog_db.name
    # A new task recovers the database's default character set from the history: a table
    # created afterwards without one has latin1 columns.
    worker.acknowledge(records[-1])
    worker = restart(worker, workers)
    worker.streaming()
    binlog_db.run("CREATE TABLE u (id INT PRIMARY KEY, s VARCHAR(10))", "INSERT INTO u VALUES (1, 'é')")
    assert binlog_db.rows("SELECT HEX(s) FROM u") == [("E9",)]
    records = worker.count(1)
    assert row(data(records)[0]) == {"id": 1, "s": "é"}


def test_the_snapshot_records_each_databases_create_database_before_its_tables(
    binlog_db: BinlogDatabase, shared_broker: EmbeddedBroker, workers: list[Worker]
) -> None:
    binlog_db.run(
        f"ALTER DATABASE {binlog_db.name} CHARACTER SET latin1", "CREATE TABLE t (id INT PRIMARY KEY)"
    )
    worker = start(binlog_db, shared_broker, workers)
    records = worker.streaming()
    recorded = [(h["databaseName"], h["ddl"], h["tableChanges"]) for h in history(worker)]
    assert recorded[0][0] == binlog_db.name and recorded[0][2] == []
    assert recorded[0][1].startswith(f"CREATE DATABASE `{binlog_db.name}`") and "latin1" in recorded[0][1]
    assert recorded[1][1].startswith("CREATE TABLE `t`")
    reported = [r.value.get("ddl") for r in schema_changes(worker, records)]
    assert reported[:2] == [recorded[0][1], recorded[1][1]]
    # A table created afterwards without a character set takes the database's (latin1): its
    # values decode as latin1, also in a new task that recovers the schemas from the history.
    binlog_db.run("CREATE TABLE u (id INT PRIMARY KEY, s VARCHAR(10))", "INSERT INTO u VALUES (1, 'é')")
    records = worker.count(1)
    assert row(data(records)[0]) == {"id": 1, "s": "é"}
    worker.acknowledge(records[-1])
    worker = restart(worker, workers)
    binlog_db.run("INSERT INTO u VALUES (2, 'ü')")
    assert row(data(worker.count(1))[0]) == {"id": 2, "s": "ü"}


def test_only_captured_tables_ddl_is_recorded_when_asked(
    binlog_db: BinlogDatabase, shared_broker: EmbeddedBroker, workers: list[Worker]
) -> None:
    binlog_db.run("CREATE TABLE t (id INT PRIMARY KEY)", "CREATE TABLE skipped (id INT PRIMARY KEY)")
    worker = start(
        binlog_db,
        shared_broker,
        workers,
        MySqlSourceTask,
        **{
            "table.include.list": f"{binlog_db.name}.t",
            "schema.history.internal.store.only.captured.tables.ddl": "true",
        },
    )
    worker.streaming()
    binlog_db.run(
        "ALTER TABLE skipped ADD COLUMN a INT",
        "CREATE TABLE other (id INT PRIMARY KEY)",
        "ALTER TABLE t ADD COLUMN b INT",
        "INSERT INTO t VALUES (1, 2)",
    )
    assert row(data(worker.count(1))[0]) == {"id": 1, "b": 2}
    tables = [[c["id"] for c in h["tableChanges"]] for h in history(worker)]
    qualified = f'"{binlog_db.name}"."t"'
    assert tables == [[], [qualified], [qualified]]  # CREATE DATABASE, CREATE TABLE t, ALTER TABLE t


def test_a_system_versioned_table_with_hidden_row_period_columns_streams(
    binlog_db: BinlogDatabase, shared_broker: EmbeddedBroker, workers: list[Worker]
) -> None:
    # Its binlog row images end with the hidden row_start and row_end values.
    binlog_db.run("CREATE TABLE v (id INT PRIMARY KEY, a VARCHAR(10)) WITH SYSTEM VERSIONING")
    worker = start(binlog_db, shared_broker, workers, include_schema_changes="false")
    worker.streaming()
    binlog_db.run(
        "INSERT INTO v VALUES (1, 'x'), (2, 'y')",
        "UPDATE v SET a = 'z' WHERE id = 1",
        "DELETE FROM v WHERE id = 2",
    )
    records = data(worker.count(5))
    # As the table's current rows: the old versions MariaDB logs (an UPDATE's, a DELETE's
    # row_end update) are no events of their own; the delete has its tombstone.
    assert [r.value is None for r in records] == [False] * 4 + [True]
    assert [(r.value.get("op"), row(r, "before"), row(r)) for r in records if r.value] == [
        ("c", None, {"id": 1, "a": "x"}),
        ("c", None, {"id": 2, "a": "y"}),
        ("u", {"id": 1, "a": "x"}, {"id": 1, "a": "z"}),
        ("d", {"id": 2, "a": "y"}, None),
    ]
