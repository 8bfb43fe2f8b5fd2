"""A database round trip, MariaDB to PostgreSQL, through real worker processes and the broker:
Debezium's MySQL connector captures a MariaDB table (binlog on) into a topic; Debezium's JDBC
sink applies the change events to a PostgreSQL table (upserts by key, deletes, schema
evolution), and Confluent's JDBC sink writes the same events, flattened by Debezium's
ExtractNewRecordState (deletes as tombstones), into another.

The table is snapshotted, then changed under a steady load of inserts, updates and deletes,
with an ``ALTER TABLE ... ADD COLUMN`` mid-stream and the worker killed with SIGKILL
mid-stream and restarted. The source resumes from its last stored offset and sends some
changes again, the sinks consume again from their last committed offsets; since the sinks
upsert by key and replays keep their order, the tables end up equal, every row and column.
The configs are those of docs/connectors/database-round-trip.md."""

from __future__ import annotations

import datetime as dt
import random
import threading
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import psycopg
import pymysql
import pytest

from tests.databases import MariaDBServer, PostgresServer, ServerUnavailable
from tests.support import BrokerProcess, StandaloneWorkerProcess, free_port, wait_until, write_props

pytestmark = pytest.mark.slow

SOURCE_CLASS = "io.debezium.connector.mysql.MySqlConnector"
SINK_CLASS = "io.debezium.connector.jdbc.JdbcSinkConnector"
FLAT_SINK_CLASS = "io.confluent.connect.jdbc.JdbcSinkConnector"
BINLOG = {"log-bin": "mysql-bin", "binlog-format": "ROW", "server-id": "1", "binlog-row-image": "FULL"}
CDC_USER, CDC_PASSWORD = "debezium", "dbz-secret"
TOPIC = "shop.inventory.customers"
COLUMNS = ["id", "name", "email", "balance", "updated_at"]
ADDED = "tier"
TABLES = ("customers", "customers_flat")  # Debezium's sink, Confluent's sink after the unwrap


class Writer(threading.Thread):
    """Inserts, updates and deletes rows of ``inventory.customers`` (a few changes per
    transaction) until stopped; once ``altered`` is set, it writes the added column too."""

    def __init__(self, port: int, first_id: int) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.live = list(range(1, first_id))
        self.next_id = first_id
        self.changes = 0
        self.altered = threading.Event()
        self.halt = threading.Event()
        self.error: BaseException | None = None
        self.random = random.Random(25)

    def run(self) -> None:
        try:
            conn = pymysql.connect(host="127.0.0.1", port=self.port, user="root", database="inventory")
            try:
                while not self.halt.is_set():
                    with conn.cursor() as cur:
                        for _ in range(3):
                            self.change(cur)
                    conn.commit()
                    time.sleep(0.05)  # a steady trickle: hundreds of changes over the test, not thousands
            finally:
                conn.close()
        except BaseException as exc:
            self.error = exc

    def change(self, cur: Any) -> None:
        pick, r = self.random.random(), self.random
        tier = r.choice(["gold", "silver", None]) if self.altered.is_set() else None
        extra = ", tier = %s" if self.altered.is_set() else ""
        if pick < 0.5 or len(self.live) < 20:
            i = self.next_id
            self.next_id += 1
            cur.execute(
                "INSERT INTO customers (id, name, email, balance, updated_at) VALUES (%s, %s, %s, %s, %s)",
                (i, f"customer {i}", f"c{i}@example.com" if i % 3 else None, Decimal(i) / 4, stamp(i)),
            )
            if extra:
                cur.execute("UPDATE customers SET tier = %s WHERE id = %s", (tier, i))
            self.live.append(i)
        elif pick < 0.85:
            i = r.choice(self.live)
            cur.execute(
                "UPDATE customers SET name = %s, balance = balance + 1.25, "
                f"updated_at = %s{extra} WHERE id = %s",
                (f"customer {i} v{self.changes}", stamp(self.changes), *([tier] if extra else []), i),
            )
        else:
            i = self.live.pop(r.randrange(len(self.live)))
            cur.execute("DELETE FROM customers WHERE id = %s", (i,))
        self.changes += 1


def stamp(i: int) -> dt.datetime:
    return dt.datetime(2026, 11, 29, 8, 0) + dt.timedelta(milliseconds=7 * i)


def mariadb_table(server: MariaDBServer) -> tuple[list[str], list[tuple[Any, ...]]]:
    conn = pymysql.connect(host="127.0.0.1", port=server.port, user="root", database="inventory")
    try:
        with conn.cursor() as cur:
            cur.execute(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_schema = 'inventory' AND table_name = 'customers' ORDER BY ordinal_position"
            )
            columns = [str(c) for (c,) in cur.fetchall()]
            cur.execute(f"SELECT {', '.join(columns)} FROM customers ORDER BY id")
            return columns, [tuple(r) for r in cur.fetchall()]
    finally:
        conn.close()


def postgres_table(server: PostgresServer, table: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    with psycopg.connect(server.dsn("replica"), autocommit=True) as conn:
        columns = [
            str(c)
            for (c,) in conn.execute(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_schema = 'public' AND table_name = %s ORDER BY ordinal_position",
                (table,),
            ).fetchall()
        ]
        if not columns:
            return [], []
        rows = conn.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY id").fetchall()
        return columns, [tuple(r) for r in rows]


def test_mariadb_to_postgres_through_cdc_and_the_jdbc_sink_survives_kill_9(tmp_path: Path) -> None:
    maria, pg = MariaDBServer(BINLOG), PostgresServer()
    try:
        maria.start()
        pg.start()
    except ServerUnavailable as exc:
        maria.remove()
        pg.remove()
        pytest.skip(str(exc))
    broker = BrokerProcess(tmp_path / "broker")
    worker: StandaloneWorkerProcess | None = None
    writer = Writer(maria.port, first_id=101)
    try:
        broker.start()
        maria.execute("CREATE DATABASE inventory")
        maria.execute(
            "CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(100) NOT NULL, email VARCHAR(200), "
            "balance DECIMAL(12,2) NOT NULL, updated_at DATETIME(3) NOT NULL)",
            "inventory",
        )
        # The grants Debezium documents for its connector user.
        maria.execute(f"CREATE USER '{CDC_USER}'@'%' IDENTIFIED BY '{CDC_PASSWORD}'")
        maria.execute(
            "GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT "
            f"ON *.* TO '{CDC_USER}'@'%'"
        )
        conn = pymysql.connect(host="127.0.0.1", port=maria.port, user="root", database="inventory")
        with conn.cursor() as cur:  # rows before the connector: the snapshot's
            cur.executemany(
                "INSERT INTO customers VALUES (%s, %s, %s, %s, %s)",
                [(i, f"customer {i}", f"c{i}@example.com", Decimal(i) / 4, stamp(i)) for i in range(1, 101)],
            )
        conn.commit()
        conn.close()
        pg.execute("CREATE DATABASE replica")

        files = [
            write_props(
                tmp_path / "worker.properties",
                {
                    "bootstrap.servers": broker.bootstrap,
                    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
                    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                    "offset.storage.file.filename": str(tmp_path / "offsets.json"),
                    "offset.flush.interval.ms": "200",
                    "listeners": f"http://127.0.0.1:{free_port()}",
                    # The killed worker's sink member holds up the restarted one's first
                    # rebalance until its session ends.
                    "consumer.session.timeout.ms": "3000",
                    "consumer.heartbeat.interval.ms": "1000",
                },
            ),
            write_props(
                tmp_path / "source.properties",
                {
                    "name": "inventory-source",
                    "connector.class": SOURCE_CLASS,
                    "database.hostname": "127.0.0.1",
                    "database.port": str(maria.port),
                    "database.user": CDC_USER,
                    "database.password": CDC_PASSWORD,
                    "database.server.id": "184054",
                    "topic.prefix": "shop",
                    "database.include.list": "inventory",
                    "table.include.list": "inventory.customers",
                    "snapshot.mode": "initial",
                    "schema.history.internal.kafka.topic": "schema-changes.inventory",
                    "schema.history.internal.kafka.bootstrap.servers": broker.bootstrap,
                },
            ),
            # Confluent's sink, the events flattened by Debezium's ExtractNewRecordState, deletes
            # as tombstones: the same rows into a table of its own.
            write_props(
                tmp_path / "flat-sink.properties",
                {
                    "name": "replica-flat-sink",
                    "connector.class": FLAT_SINK_CLASS,
                    "topics": TOPIC,
                    "connection.url": f"jdbc:postgresql://127.0.0.1:{pg.port}/replica",
                    "connection.user": pg.USER,
                    "insert.mode": "upsert",
                    "pk.mode": "record_key",
                    "delete.enabled": "true",
                    "auto.create": "true",
                    "auto.evolve": "true",
                    "table.name.format": "customers_flat",
                    "transforms": "unwrap",
                    "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
                    "transforms.unwrap.delete.tombstone.handling.mode": "tombstone",
                },
            ),
            write_props(
                tmp_path / "sink.properties",
                {
                    "name": "replica-sink",
                    "connector.class": SINK_CLASS,
                    "topics": TOPIC,
                    "connection.url": f"jdbc:postgresql://127.0.0.1:{pg.port}/replica",
                    "connection.username": pg.USER,
                    "insert.mode": "upsert",
                    "primary.key.mode": "record_key",
                    "delete.enabled": "true",
                    "schema.evolution": "basic",
                    "collection.name.format": "customers",
                },
            ),
        ]
        worker = StandaloneWorkerProcess(*files).start()

        def waiting(predicate: Callable[[], bool], timeout: float, what: str) -> None:
            """wait_until, and on a timeout the end of the worker's log in the failure."""
            try:
                wait_until(predicate, timeout, interval=0.2, message=what)
            except AssertionError as exc:
                assert worker is not None
                tail = worker.log_path.read_text(errors="replace").splitlines()[-40:]
                raise AssertionError(f"{exc}; the worker's log ends:\n" + "\n".join(tail)) from None

        def equal() -> bool:
            source = mariadb_table(maria)
            return all(postgres_table(pg, table) == source for table in TABLES)

        def max_replica_id() -> int:
            return min(max((r[0] for r in postgres_table(pg, table)[1]), default=0) for table in TABLES)

        # The snapshot: 100 rows, as they are.
        waiting(equal, 120, "the snapshot in PostgreSQL")
        assert all(postgres_table(pg, table)[0] == COLUMNS for table in TABLES)

        writer.start()
        wait_until(lambda: writer.changes >= 150, 60, message="150 changes")
        maria.execute(f"ALTER TABLE customers ADD COLUMN {ADDED} VARCHAR(20) NULL", "inventory")
        writer.altered.set()
        # The sink added the column: changes after the ALTER have reached PostgreSQL.
        waiting(
            lambda: all(ADDED in postgres_table(pg, table)[0] for table in TABLES),
            90,
            "the added column in PostgreSQL",
        )
        worker.kill9()  # mid-stream: the writer goes on
        restarted_at = writer.next_id
        worker = StandaloneWorkerProcess(*files).start()
        # The restarted worker streams: rows inserted after the restart reach PostgreSQL.
        waiting(lambda: max_replica_id() >= restarted_at, 90, "rows inserted after the restart in PostgreSQL")
        writer.halt.set()
        writer.join(10)
        assert writer.error is None, writer.error
        waiting(equal, 120, "equal tables")
        columns, rows = postgres_table(pg, "customers")
    finally:
        writer.halt.set()
        if worker is not None:
            worker.stop()
        broker.stop()
        maria.remove()
        pg.remove()

    # What the tables agree on covers every kind of change.
    assert columns == [*COLUMNS, ADDED]
    ids = {r[0] for r in rows}
    assert set(range(1, writer.next_id)) - ids  # deleted rows, gone from both
    assert any(r[0] > 100 for r in rows)  # inserted while streaming
    assert any(r[1].count(" v") for r in rows)  # updated
    assert any(r[-1] is not None for r in rows)  # the added column, filled after the ALTER
