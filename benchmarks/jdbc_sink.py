"""The JDBC sink's upserts against raw SQLAlchemy ``executemany`` of the same rows into the same
table, in one run.

    python benchmarks/jdbc_sink.py [--rows 200000] [--rounds 3] [--databases postgresql,sqlite]

``--rows`` records (key ``id``, value id, account, amount, note, created_at as a Connect
Timestamp; JSON with schemas, as JsonConverter writes them) wait in a topic of a broker
process. The table ``bench_rows`` (id bigint primary key) exists in a throwaway PostgreSQL
(tests/databases.py, PostgreSQL's own durability defaults) and, with ``sqlite`` in
``--databases``, in a SQLite file; it is emptied before every run.

- sink: Confluent's JdbcSinkConnector (``insert.mode=upsert``, ``pk.mode=record_key``,
  ``batch.size`` and ``consumer.override.max.poll.records`` = ``--batch``, defaults
  otherwise) in a standalone worker process consumes the topic into the table. A warm-up
  connector has run first (imports, engine); each round is a new connector, so a new
  consumer group that reads the topic from the start. Its time is steady state: from the
  first rows in the table to all of them (what was written in between, scaled to all rows),
  so the task's start and group join are left out; the time from creating the connector is
  printed too.
- raw: what a Python user would write: the same rows, decoded beforehand, upserted with
  SQLAlchemy (``conn.execute(text(INSERT ... ON CONFLICT (id) DO UPDATE ...), rows)``,
  an ``executemany``) in transactions of ``--batch`` rows, into the same table.

Rounds interleave raw and sink (on two cores single runs swing); medians are compared.
Target (issue 25): sink >= 0.7x raw.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
import orjson
import sqlalchemy as sa
from confluent_kafka import Producer

from benchmarks._common import broker_process
from benchmarks._worker import Worker, close_watermarks, create_topic, end_offset, wait_for
from tests.databases import PostgresServer

# PostgreSQL's own defaults, not the test servers' speed-ups (as benchmarks/jdbc_source.py).
PRODUCTION = {"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on"}

TABLE = "bench_rows"
EPOCH_MS = 1_764_000_000_000
KEY_SCHEMA = {"type": "int64", "optional": False}
VALUE_SCHEMA = {
    "type": "struct",
    "name": "bench.Row",
    "optional": False,
    "fields": [
        {"field": "id", "type": "int64", "optional": False},
        {"field": "account", "type": "string", "optional": False},
        {"field": "amount", "type": "double", "optional": False},
        {"field": "note", "type": "string", "optional": True},
        {
            "field": "created_at",
            "type": "int64",
            "optional": False,
            "name": "org.apache.kafka.connect.data.Timestamp",
            "version": 1,
        },
    ],
}
UPSERT = sa.text(
    f"INSERT INTO {TABLE} (id, account, amount, note, created_at) "
    "VALUES (:id, :account, :amount, :note, :created_at) ON CONFLICT (id) DO UPDATE SET "
    "account = excluded.account, amount = excluded.amount, note = excluded.note, "
    "created_at = excluded.created_at"
)
DDL = (
    f"CREATE TABLE {TABLE} (id bigint PRIMARY KEY, account text NOT NULL, "
    "amount double precision NOT NULL, note text, created_at timestamp NOT NULL)"
)


def row(i: int) -> dict[str, Any]:
    return {
        "id": i,
        "account": f"acct-{i % 1000}",
        "amount": (i % 100_000) / 100,
        "note": f"payment number {i}",
        "created_at": EPOCH_MS + i,
    }


def produce(bootstrap: str, topic: str, n: int) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.num.messages": 10000})
    dumps = orjson.dumps
    for i in range(1, n + 1):
        key = dumps({"schema": KEY_SCHEMA, "payload": i})
        value = dumps({"schema": VALUE_SCHEMA, "payload": row(i)})
        while True:
            try:
                p.produce(topic, value, key)
                break
            except BufferError:
                p.poll(0.05)
    if p.flush(120):
        raise RuntimeError("records were not delivered")


class Target:
    """One database holding ``bench_rows``: how the sink and SQLAlchemy reach it, and a count."""

    def __init__(self, name: str, jdbc_url: str, user: str | None, sa_url: str) -> None:
        self.name = name
        self.jdbc_url = jdbc_url
        self.user = user
        self.engine = sa.create_engine(sa_url)
        with self.engine.begin() as c:
            c.execute(sa.text(DDL))

    def empty(self) -> None:
        with self.engine.begin() as c:
            c.execute(sa.text(f"DELETE FROM {TABLE}"))

    def count(self) -> int:
        with self.engine.connect() as c:
            return int(c.execute(sa.text(f"SELECT count(*) FROM {TABLE}")).scalar_one())

    def close(self) -> None:
        self.engine.dispose()


def sqlite_target(path: Path) -> Target:
    target = Target("sqlite", f"jdbc:sqlite:{path}", None, f"sqlite:///{path}")
    # WAL: the benchmark's count reads do not block the writer (either of them).
    sqlite3.connect(path).execute("PRAGMA journal_mode=WAL").fetchall()
    return target


def run_raw(target: Target, rows: list[dict[str, Any]], batch: int) -> float:
    target.empty()
    start = time.perf_counter()
    for i in range(0, len(rows), batch):
        with target.engine.begin() as conn:
            conn.execute(UPSERT, rows[i : i + batch])
    seconds = time.perf_counter() - start
    if target.count() != len(rows):
        raise RuntimeError(f"raw {target.name}: {target.count()} rows, not {len(rows)}")
    return seconds


SINK_CLASS = "io.confluent.connect.jdbc.JdbcSinkConnector"


def sink_config(target: Target, topic: str, batch: int) -> dict[str, str]:
    config = {
        "connector.class": SINK_CLASS,
        "topics": topic,
        "connection.url": target.jdbc_url,
        "insert.mode": "upsert",
        "pk.mode": "record_key",
        "pk.fields": "id",
        "table.name.format": TABLE,
        "batch.size": str(batch),
        # A put() holds at most max.poll.records (500) records, and the sink writes each in one
        # transaction; batch.size rows a transaction need polls as big (Confluent's advice too).
        "consumer.override.max.poll.records": str(batch),
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    }
    if target.user:
        config["connection.user"] = target.user
    return config


def status(worker: Worker, name: str) -> str:
    try:
        return httpx.get(f"{worker.url}/connectors/{name}/status", timeout=10).text
    except httpx.HTTPError as exc:
        return str(exc)


def wait_rows(
    worker: Worker, name: str, condition: Callable[[], bool], timeout: float, interval: float
) -> None:
    try:
        wait_for(condition, timeout, interval)
    except TimeoutError:
        raise TimeoutError(
            f"{name} did not write its rows in {timeout:.0f} s: {status(worker, name)}"
        ) from None


def run_sink(
    worker: Worker, target: Target, name: str, topic: str, n: int, batch: int
) -> tuple[float, float]:
    """(steady-state seconds scaled to ``n`` rows, seconds from creating the connector)."""
    target.empty()
    created = time.perf_counter()
    worker.create(name, sink_config(target, topic, batch))
    wait_rows(worker, name, lambda: target.count() > 0, 120, 0.01)
    first_seen, already = time.perf_counter(), target.count()
    wait_rows(worker, name, lambda: target.count() >= n, 900, 0.02)
    done = time.perf_counter()
    worker.delete(name)
    return (done - first_seen) * n / (n - already), done - created


def rate(rows: float, seconds: float) -> str:
    return f"{rows / seconds:>10,.0f} rows/s ({seconds:.2f} s)"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--batch", type=int, default=3000, help="the sink's batch.size, and the raw transaction size"
    )
    ap.add_argument("--databases", default="postgresql,sqlite", help="postgresql and/or sqlite")
    ap.add_argument("--keep-log", help="copy the worker's log here")
    args = ap.parse_args()
    n, wanted = args.rows, set(args.databases.split(","))
    rows = [
        {**row(i), "created_at": dt.datetime(2025, 11, 24, 16) + dt.timedelta(milliseconds=i)}
        for i in range(1, n + 1)
    ]
    results: dict[str, tuple[list[float], list[float], list[float]]] = {}
    with (
        tempfile.TemporaryDirectory(prefix="sluiceway-jdbc-sink-bench-") as tmp,
        PostgresServer(PRODUCTION) as pg,
    ):
        work = Path(tmp)
        targets: list[Target] = []
        if "postgresql" in wanted:
            pg.execute("CREATE DATABASE sinkbench")
            targets.append(
                Target(
                    "postgresql",
                    f"jdbc:postgresql://127.0.0.1:{pg.port}/sinkbench",
                    pg.USER,
                    pg.url("sinkbench"),
                )
            )
        if "sqlite" in wanted:
            targets.append(sqlite_target(work / "sinkbench.db"))
        with broker_process(data_dir=str(work / "broker")) as (bootstrap, _broker):
            topic = "bench-sink"
            create_topic(bootstrap, topic)
            t = time.perf_counter()
            produce(bootstrap, topic, n)
            if end_offset(bootstrap, topic) != n:
                raise RuntimeError("the topic does not hold every record")
            print(f"produced {n:,} records in {time.perf_counter() - t:.1f} s")
            worker = Worker(work, bootstrap)
            try:
                for target in targets:
                    warm = f"warm-up-{target.name}"
                    create_topic(bootstrap, warm)
                    produce(bootstrap, warm, 2000)
                    target.empty()
                    worker.create(warm, sink_config(target, warm, args.batch))
                    wait_rows(worker, warm, lambda: target.count() >= 2000, 120, 0.05)  # noqa: B023
                    worker.delete(warm)
                    raw, sink, startup = results.setdefault(target.name, ([], [], []))
                    for r in range(args.rounds):
                        raw.append(run_raw(target, rows, args.batch))
                        steady, total = run_sink(
                            worker, target, f"sink-{target.name}-{r}", topic, n, args.batch
                        )
                        sink.append(steady)
                        startup.append(total)
                        print(f"  {target.name} round {r}: raw {rate(n, raw[-1])}, sink {rate(n, sink[-1])}")
            finally:
                worker.stop()
                close_watermarks()
                for target in targets:
                    target.close()
                if args.keep_log:
                    Path(args.keep_log).write_bytes((work / "worker.log").read_bytes())
    print()
    for name, (raw, sink, startup) in results.items():
        raw_s, sink_s = statistics.median(raw), statistics.median(sink)
        print(f"{name}: upsert of {n:,} rows, batch {args.batch} (medians of {args.rounds} rounds)")
        print(f"  raw SQLAlchemy executemany  {rate(n, raw_s)}")
        print(f"  JdbcSinkConnector           {rate(n, sink_s)}")
        print(f"    (connector created -> all rows: {rate(n, statistics.median(startup))})")
        print(f"  ratio                       {raw_s / sink_s:.2f}x (target >= 0.7x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
