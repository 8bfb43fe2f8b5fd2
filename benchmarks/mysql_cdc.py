"""MySQL CDC (Debezium's MySqlConnector) against a raw python-mysql-replication loop, on the same
broker and the same MariaDB binlog.

    python benchmarks/mysql_cdc.py [--rows 200000] [--rounds 3]

A throwaway MariaDB (tests/databases.py) runs with the binlog Debezium needs (``log-bin``,
``binlog-format=ROW``, ``binlog-row-image=FULL``, ``server-id``). Each round:

- connector: MySqlConnector (``snapshot.mode=no_data``, JSON without schemas) in a standalone
  worker process starts on an empty table; rows are inserted one a second until one arrives
  (the stream is live), then ``--rows`` rows are inserted in one statement; timed from its
  commit until the last change event is in the topic. The connector is deleted before the
  baseline runs, so it does not read the baseline's binlog events too.
- raw: ``pymysqlreplication.BinLogStreamReader`` (blocking, from the binlog position before the
  insert, write-rows events of its table only) reads the same kind of insert into another
  table; each row becomes a JSON change event (before/after/source/op/ts_ms) produced with
  confluent-kafka; timed from the commit until the last event is in the topic.

As benchmarks/jdbc_source.py measures the PostgreSQL CDC. Rounds interleave connector and raw
(on two cores single runs swing); medians are compared.
Targets (issue 25): >= 30,000 changes/s and >= 0.5x the raw loop.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
import orjson
import pymysql
from confluent_kafka import Producer
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.row_event import WriteRowsEvent

from benchmarks._common import broker_process
from benchmarks._worker import Worker, close_watermarks, create_topic, end_offset, wait_for
from tests.databases import MariaDBServer

BINLOG = {"log-bin": "mysql-bin", "binlog-format": "ROW", "server-id": "1", "binlog-row-image": "FULL"}
DB = "cdcbench"
JSON_NO_SCHEMA = {
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "key.converter.schemas.enable": "false",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter.schemas.enable": "false",
}
CONNECTOR_CLASS = "io.debezium.connector.mysql.MySqlConnector"


def rate(rows: float, seconds: float) -> str:
    return f"{rows / seconds:>10,.0f} changes/s ({seconds:.2f} s)"


def connect(server: MariaDBServer) -> pymysql.connections.Connection:
    return pymysql.connect(host="127.0.0.1", port=server.port, user="root", database=DB, autocommit=True)


def create_table(server: MariaDBServer, table: str) -> None:
    server.execute(
        f"CREATE TABLE {table} (id bigint AUTO_INCREMENT PRIMARY KEY, account varchar(64), "
        "amount decimal(12,2))",
        DB,
    )


def insert_rows(server: MariaDBServer, table: str, rows: int) -> float:
    """``rows`` rows in one statement (MariaDB's sequence engine); returns when it committed."""
    conn = connect(server)
    try:
        with conn.cursor() as cur:
            cur.execute(
                f"INSERT INTO {table} (account, amount) "
                f"SELECT concat('acct-', seq), seq / 100 FROM seq_1_to_{rows}"
            )
        return time.perf_counter()
    finally:
        conn.close()


def status(worker: Worker, name: str) -> str:
    try:
        return httpx.get(f"{worker.url}/connectors/{name}/status", timeout=10).text
    except httpx.HTTPError as exc:
        return str(exc)


def connector(worker: Worker, server: MariaDBServer, bootstrap: str, r: int, rows: int) -> float:
    name, table = f"mysql-cdc-{r}", f"cdc_rows_{r}"
    create_table(server, table)
    topic = f"{name}.{DB}.{table}"
    worker.create(
        name,
        {
            "connector.class": CONNECTOR_CLASS,
            "database.hostname": "127.0.0.1",
            "database.port": str(server.port),
            "database.user": "root",
            "database.server.id": str(5400 + r),
            "topic.prefix": name,
            "table.include.list": f"{DB}.{table}",
            "snapshot.mode": "no_data",
            "schema.history.internal.kafka.topic": f"{name}.history",
            "schema.history.internal.kafka.bootstrap.servers": bootstrap,
            **JSON_NO_SCHEMA,
        },
    )
    # Rows committed before the connector read its binlog position are, rightly, not
    # streamed: a row a second until one arrives proves the stream is live.
    deadline = time.monotonic() + 120
    while True:
        if time.monotonic() > deadline:
            raise TimeoutError(f"no change event from {name}: {status(worker, name)}")
        insert_rows(server, table, 1)
        try:
            wait_for(lambda: end_offset(bootstrap, topic) >= 1, 1.0)
            break
        except TimeoutError:
            continue
    time.sleep(1.0)  # the last warm-up rows land too
    base = end_offset(bootstrap, topic)
    committed = insert_rows(server, table, rows)
    try:
        wait_for(lambda: end_offset(bootstrap, topic) >= base + rows, 600, interval=0.02)
    except TimeoutError:
        raise TimeoutError(
            f"{name}: {end_offset(bootstrap, topic) - base} of {rows} changes: {status(worker, name)}"
        ) from None
    seconds = time.perf_counter() - committed
    worker.delete(name)
    return seconds


def raw(server: MariaDBServer, bootstrap: str, r: int, rows: int) -> float:
    """BinLogStreamReader over the binlog, each inserted row produced as a JSON change event
    with confluent-kafka: what the connector does, minus Connect."""
    table, topic = f"raw_rows_{r}", f"raw-mysql-cdc-{r}"
    create_table(server, table)
    create_topic(bootstrap, topic)
    conn = connect(server)
    with conn.cursor() as cur:
        cur.execute("SHOW MASTER STATUS")
        log_file, log_pos = cur.fetchone()[:2]
    conn.close()
    # It warns on every start that binlog_row_metadata is not FULL: the loop reads by position.
    logging.getLogger("pymysqlreplication").setLevel(logging.ERROR)
    stream = BinLogStreamReader(
        connection_settings={"host": "127.0.0.1", "port": server.port, "user": "root", "password": ""},
        server_id=9400 + r,
        blocking=True,
        resume_stream=True,
        log_file=log_file,
        log_pos=int(log_pos),
        only_events=[WriteRowsEvent],
        only_schemas=[DB],
        only_tables=[table],
    )
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True, "linger.ms": 5})
    p.list_topics(topic, timeout=10)
    committed = insert_rows(server, table, rows)
    dumps, produce, now = orjson.dumps, p.produce, time.time
    seen = 0
    for event in stream:
        source = {
            "name": "raw",
            "db": DB,
            "table": table,
            "server_id": 1,
            "file": stream.log_file,
            "pos": event.packet.log_pos,
        }
        for row in event.rows:
            # Without binlog_row_metadata=FULL the column names are not in the binlog: by position.
            row_id, account, amount = row["values"].values()
            value = dumps(
                {
                    "before": None,
                    "after": {"id": row_id, "account": account, "amount": float(amount)},
                    "source": source,
                    "op": "c",
                    "ts_ms": int(now() * 1000),
                }
            )
            while True:
                try:
                    produce(topic, value, dumps({"id": row_id}))  # the key by position: ~1 us less
                    break
                except BufferError:
                    p.poll(0.01)
            seen += 1
        if seen >= rows:
            break
    stream.close()
    p.flush(120)
    wait_for(lambda: end_offset(bootstrap, topic) >= rows, 600, interval=0.02)
    return time.perf_counter() - committed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--keep-log", help="copy the worker's log here")
    args = ap.parse_args()
    n = args.rows
    conn_s: list[float] = []
    raw_s: list[float] = []
    with (
        tempfile.TemporaryDirectory(prefix="sluiceway-mysql-cdc-bench-") as tmp,
        MariaDBServer(BINLOG) as maria,
    ):
        work = Path(tmp)
        maria.execute(f"CREATE DATABASE {DB}")
        with broker_process(data_dir=str(work / "broker")) as (bootstrap, _broker):
            worker = Worker(work, bootstrap)
            try:
                for r in range(args.rounds):
                    conn_s.append(connector(worker, maria, bootstrap, r, n))
                    raw_s.append(raw(maria, bootstrap, r, n))
                    print(f"  round {r}: raw {rate(n, raw_s[-1])}, connector {rate(n, conn_s[-1])}")
            finally:
                worker.stop()
                close_watermarks()
                if args.keep_log:
                    Path(args.keep_log).write_bytes((work / "worker.log").read_bytes())
    raw_m, conn_m = statistics.median(raw_s), statistics.median(conn_s)
    print()
    print(
        f"mysql cdc throughput, {n:,} rows in one statement, commit -> last in the topic "
        f"(medians of {args.rounds})"
    )
    print(f"  raw BinLogStreamReader + produce {rate(n, raw_m)}")
    print(f"  MySqlConnector                   {rate(n, conn_m)}")
    print(
        f"  ratio                            {raw_m / conn_m:.2f}x (target >= 0.5x, and >= 30,000 changes/s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
