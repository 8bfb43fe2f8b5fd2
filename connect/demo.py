"""``make demo`` / ``sluiceway demo``: whole pipelines on one machine with nothing else installed.

A standalone worker starts Sluiceway's broker in-process and runs two pipelines:

- files: a FileStreamSource reads ``config/demo/orders.txt`` into the topic
  ``demo-orders`` and a FileStreamSink writes that topic to ``data/demo/orders-out.txt``;
- a bank: ``data/demo/bank.db`` (SQLite, built from ``config/demo/bank.sql``) gets new
  transactions, and settles pending ones, from a writer thread while the JDBC source
  (timestamp+incrementing on ``updated_at``, ``id``) streams every change to the topic
  ``demo-bank-transactions``; one sink writes them all to
  ``data/demo/transactions-out.jsonl``, another, through a plain-Python transform,
  only the large ones (>= 1,000) to ``data/demo/large-transactions.jsonl``, and the
  Spark sink lands them in a Parquet table, ``data/demo/bank-lake``, which the demo
  then queries with Spark SQL (totals per account).

Progress is shown as it happens; then the worker keeps running (Ctrl-C stops it) so
the REST API can be explored.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import random
import shutil
import signal
import socket
import sqlite3
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import orjson
from rich.console import Console
from rich.live import Live
from rich.table import Table

from connect.api import SinkRecord
from connect.runtime.properties import PropertiesFile
from connect.standalone import StandaloneRuntime, configure_logging, start, worker_config

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "config" / "demo" / "orders.txt"
BANK_SQL = ROOT / "config" / "demo" / "bank.sql"
TOPIC = "demo-orders"
BANK_TOPIC = "demo-bank-transactions"
CONNECTORS = (
    "demo-file-source",
    "demo-file-sink",
    "demo-bank-source",
    "demo-bank-sink",
    "demo-large-transactions",
    "demo-bank-lake",
)
LARGE = 1000
_JSON = {
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "key.converter.schemas.enable": "false",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter.schemas.enable": "false",
}


def large_transactions(record: SinkRecord) -> SinkRecord | None:
    """A plain-Python transformation (``transforms.large.type=connect.demo:large_transactions``):
    keep transactions of at least 1,000, as one JSON line each."""
    value = record.value
    if not isinstance(value, dict) or float(value.get("amount") or 0) < LARGE:
        return None
    return record.with_value(None, orjson.dumps(value).decode())


class BankWriter:
    """Adds a transaction every ``interval`` seconds and settles pending ones, as a bank's
    application would, in ``bank.db``; the JDBC source sees both inserts and updates."""

    MERCHANTS = ("Grocer", "Airline", "Bookshop", "Rent", "Coffee", "Car dealer", "Pharmacy", "Jeweller")

    def __init__(self, path: Path, interval: float = 0.4) -> None:
        self.path = path
        self.interval = interval
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name="demo-bank-writer", daemon=True)
        self.rng = random.Random(7)

    @staticmethod
    def create(path: Path) -> None:
        path.unlink(missing_ok=True)
        with contextlib.closing(sqlite3.connect(path)) as db:
            db.executescript(BANK_SQL.read_text(encoding="utf-8"))
            db.commit()

    def start(self) -> BankWriter:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join(5)

    def _run(self) -> None:
        with contextlib.closing(sqlite3.connect(self.path)) as db:
            while not self.stopped.wait(self.interval):
                now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
                large = self.rng.random() < 0.15
                amount = round(self.rng.uniform(1000, 9000) if large else self.rng.uniform(1, 300), 2)
                db.execute(
                    "INSERT INTO transactions (account_id, amount, merchant, updated_at) VALUES (?, ?, ?, ?)",
                    (self.rng.randint(1, 5), amount, self.rng.choice(self.MERCHANTS), now),
                )
                # Settle the oldest pending transaction now and then: an update the source
                # picks up through updated_at.
                if self.rng.random() < 0.3:
                    db.execute(
                        "UPDATE transactions SET status = 'settled', updated_at = ? WHERE id = "
                        "(SELECT min(id) FROM transactions WHERE status = 'pending')",
                        (now,),
                    )
                db.commit()

    def changes(self) -> set[tuple[int, str]]:
        """Every transaction's current (id, status)."""
        with contextlib.closing(sqlite3.connect(self.path)) as db:
            return set(db.execute("SELECT id, status FROM transactions").fetchall())

    def large(self) -> set[int]:
        with contextlib.closing(sqlite3.connect(self.path)) as db:
            return {r[0] for r in db.execute("SELECT id FROM transactions WHERE amount >= ?", (LARGE,))}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _props(path: Path, values: dict[str, str]) -> PropertiesFile:
    path.write_text("".join(f"{k}={v}\n" for k, v in values.items()), encoding="utf-8")
    return PropertiesFile(path, values, {k: i + 1 for i, k in enumerate(values)})


def _lines(path: Path) -> int:
    try:
        with open(path, "rb") as f:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 16), b""))
    except FileNotFoundError:
        return 0


def _flagged(path: Path) -> set[int]:
    return {i for i, _ in _delivered(path)}


def _delivered(path: Path) -> set[tuple[int, str]]:
    """(id, status) of every transaction change in the sink's file."""
    out: set[tuple[int, str]] = set()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return out
    for line in text.splitlines():
        with contextlib.suppress(orjson.JSONDecodeError, KeyError, TypeError):
            row = orjson.loads(line)
            out.add((int(row["id"]), str(row["status"])))
    return out


def _table(runtime: StandaloneRuntime, progress: list[str], started: float) -> Table:
    t = Table(
        title="Sluiceway demo: file → topic → file, and bank.db → topic → files and a Spark table",
        title_justify="left",
    )
    t.add_column("connector")
    t.add_column("state")
    t.add_column("tasks")
    for name in CONNECTORS:
        status = runtime.herder.connector_status_raw(name)
        tasks = [runtime.herder.task_status_raw(task) for task in runtime.herder.task_ids(name)]
        t.add_row(
            name,
            status.state.value if status else "UNASSIGNED",
            ", ".join(s.state.value if s else "UNASSIGNED" for s in tasks) or "-",
        )
    t.caption = "; ".join(progress) + f" ({time.monotonic() - started:.1f} s)"
    return t


def _connectors(data_dir: Path, output: Path, bank: Path) -> list[PropertiesFile]:
    return [
        _props(
            data_dir / "file-source.properties",
            {
                "name": "demo-file-source",
                "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
                "tasks.max": "1",
                "file": str(SAMPLE),
                "topic": TOPIC,
            },
        ),
        _props(
            data_dir / "file-sink.properties",
            {
                "name": "demo-file-sink",
                "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
                "tasks.max": "1",
                "file": str(output),
                "topics": TOPIC,
            },
        ),
        _props(
            data_dir / "bank-source.properties",
            {
                "name": "demo-bank-source",
                "connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector",
                "connection.url": f"jdbc:sqlite:{bank}",
                "mode": "timestamp+incrementing",
                "timestamp.column.name": "updated_at",
                "incrementing.column.name": "id",
                "table.whitelist": "transactions",
                "topic.prefix": "demo-bank-",
                "numeric.mapping": "best_fit",
                "poll.interval.ms": "300",
                **_JSON,
            },
        ),
        _props(
            data_dir / "bank-sink.properties",
            {
                "name": "demo-bank-sink",
                "connector.class": "FileStreamSink",
                "file": str(data_dir / "transactions-out.jsonl"),
                "topics": BANK_TOPIC,
            },
        ),
        _props(
            data_dir / "large-transactions.properties",
            {
                "name": "demo-large-transactions",
                "connector.class": "FileStreamSink",
                "file": str(data_dir / "large-transactions.jsonl"),
                "topics": BANK_TOPIC,
                "transforms": "large",
                "transforms.large.type": "connect.demo:large_transactions",
                **_JSON,
            },
        ),
        _props(
            data_dir / "bank-lake.properties",
            {
                "name": "demo-bank-lake",
                "connector.class": "SparkSinkConnector",
                "topics": BANK_TOPIC,
                "table.path": str(data_dir / "bank-lake"),
                "include.kafka.coordinates": "true",
                "flush.interval.ms": "1000",
                "spark.master": "local[2]",
                "spark.conf.spark.log.level": "ERROR",
                "spark.conf.spark.sql.shuffle.partitions": "2",
                **_JSON,
            },
        ),
    ]


# The latest state of every transaction (the table holds every change, in offset order),
# totalled per account.
TOTALS_SQL = """
WITH latest AS (
    SELECT *, row_number() OVER (PARTITION BY id ORDER BY _offset DESC) AS newest FROM bank_lake
)
SELECT account_id,
       count(*) AS transactions,
       round(sum(CASE WHEN status = 'settled' THEN amount ELSE 0 END), 2) AS settled,
       round(sum(CASE WHEN status = 'pending' THEN amount ELSE 0 END), 2) AS pending
FROM latest WHERE newest = 1
GROUP BY account_id ORDER BY account_id
"""


def _lake_rows(lake: Path) -> list[tuple[int, str]]:
    """(id, status) of every row of the Spark table, through the worker's SparkSession."""
    if not any((lake / "_sluiceway" / "commits").glob("*/*.json")):
        # Nothing committed yet: the sink may not have started its SparkSession, and asking
        # for one here would start a default one that the sink would then have to share.
        return []
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession() or SparkSession.builder.getOrCreate()
    try:
        rows = spark.read.parquet(str(lake)).select("id", "status").collect()
        return [(int(r[0]), str(r[1])) for r in rows]
    except Exception:  # no data file yet
        return []


def _totals(lake: Path) -> Table:
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession() or SparkSession.builder.getOrCreate()
    spark.read.parquet(str(lake)).createOrReplaceTempView("bank_lake")
    t = Table(title="Spark SQL over data/demo/bank-lake: totals per account", title_justify="left")
    for column in ("account", "transactions", "settled", "pending"):
        t.add_column(column, justify="right")
    for row in spark.sql(TOTALS_SQL).collect():
        t.add_row(*(str(v) for v in row))
    return t


async def run(data_dir: Path, exit_when_done: bool, console: Console) -> int:
    data_dir.mkdir(parents=True, exist_ok=True)
    output = data_dir / "orders-out.txt"
    bank_out = data_dir / "transactions-out.jsonl"
    for stale in (output, bank_out, data_dir / "large-transactions.jsonl", data_dir / "offsets.json"):
        stale.unlink(missing_ok=True)
    shutil.rmtree(data_dir / "bank-lake", ignore_errors=True)
    bank = data_dir / "bank.db"
    BankWriter.create(bank)
    broker_port, rest_port = _free_port(), _free_port()
    worker = _props(
        data_dir / "worker.properties",
        {
            "bootstrap.servers": f"127.0.0.1:{broker_port}",
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            "offset.storage.file.filename": str(data_dir / "offsets.json"),
            "offset.flush.interval.ms": "1000",
            "listeners": f"http://127.0.0.1:{rest_port}",
            "embedded.broker.enable": "true",
            "embedded.broker.log.dirs": str(data_dir / "broker"),
        },
    )
    total = _lines(SAMPLE)
    console.print(
        f"[bold]Starting a standalone worker[/] with its embedded broker on 127.0.0.1:{broker_port}"
    )
    console.print(
        f"  reading  {SAMPLE}\n  writing  {output}\n  bank     {bank} -> {bank_out}"
        f"\n  configs  {data_dir}/*.properties"
    )
    runtime = await start(worker_config(worker), _connectors(data_dir, output, bank))
    writer = BankWriter(bank).start()
    started = time.monotonic()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    files_ok = bank_ok = lake_ok = False
    lake, lake_rows, lake_checked = data_dir / "bank-lake", list[tuple[int, str]](), 0.0
    try:
        with Live(console=console, refresh_per_second=4) as live:
            while not stop.is_set():
                written = _lines(output)
                files_ok = written >= total
                if exit_when_done and not writer.stopped.is_set() and len(writer.changes()) >= 20:
                    # A run that must end stops writing first, so "everything arrived" is final.
                    await asyncio.to_thread(writer.stop)
                changes, large = writer.changes(), writer.large()
                delivered, flagged = _delivered(bank_out), _flagged(data_dir / "large-transactions.jsonl")
                # Done once the writer has added a few and every current row state arrived.
                bank_ok = (
                    len(changes) >= 20
                    and changes <= delivered
                    and large <= flagged
                    and (writer.stopped.is_set() or not exit_when_done)
                )
                if time.monotonic() - lake_checked > 2:  # a Spark job: not on every refresh
                    lake_rows, lake_checked = await asyncio.to_thread(_lake_rows, lake), time.monotonic()
                lake_states = set(lake_rows)
                # Every state is there, and every record: a state the source sent twice (two
                # records) must not let the run end with the second one still on its way.
                lake_ok = bank_ok and changes <= lake_states and len(lake_rows) == _lines(bank_out)
                progress = [
                    f"{written}/{total} lines written",
                    f"{len(changes & delivered)}/{len(changes)} transactions delivered",
                    f"{len(large & flagged)}/{len(large)} large ones flagged",
                    f"{len(changes & lake_states)}/{len(changes)} in the Spark table",
                ]
                live.update(_table(runtime, progress, started))
                done = files_ok and bank_ok and lake_ok
                if done and exit_when_done:
                    break
                if done and not exit_when_done and time.monotonic() - started > 5:
                    break
                if time.monotonic() - started > 300:
                    break
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), 0.25)
        ok = files_ok and bank_ok and lake_ok
        if files_ok:
            same = output.read_bytes() == SAMPLE.read_bytes()
            console.print(
                f"[green]All {total} lines went through the topic {TOPIC!r}[/]"
                + (
                    " and the output is identical to the input."
                    if same
                    else " [red]but the output differs from the input![/]"
                )
            )
            ok = ok and same
        else:
            console.print(f"[red]Only {_lines(output)} of {total} lines arrived.[/]")
        if bank_ok:
            console.print(
                f"[green]Every transaction change in bank.db reached {bank_out.name}[/] through "
                f"{BANK_TOPIC!r}; large ones are in large-transactions.jsonl."
            )
        else:
            console.print(f"[red]Not every transaction change in bank.db reached {bank_out.name}.[/]")
        if lake_ok:
            console.print(f"[green]And every change landed in the Spark table {lake}[/], once:")
            console.print(await asyncio.to_thread(_totals, lake))
        else:
            console.print(f"[red]Not every transaction change landed in the Spark table {lake}.[/]")
        url = runtime.url
        console.print(f"\nThe REST API (Kafka Connect's) is at [bold]{url}[/]. Try:")
        console.print(f"  curl -s {url}/connectors?expand=status")
        console.print(f"  curl -s {url}/connectors/demo-bank-source/offsets")
        console.print(f"  curl -s -X PUT {url}/connectors/demo-file-sink/pause")
        console.print(f"  kcat -b 127.0.0.1:{broker_port} -C -t {BANK_TOPIC} -o beginning -e")
        console.print(f"  tail -f {bank_out}    (the writer keeps adding transactions)")
        console.print(f"  append lines to {SAMPLE.name}? they flow to {output.name} while the worker runs")
        if not exit_when_done and ok:
            console.print("\n[dim]The worker keeps running; press Ctrl-C to stop it.[/]")
            await stop.wait()
    finally:
        writer.stop()
        await runtime.stop()
    return 0 if ok else 1


def main(argv: list[str] | None = None, prog: str = "sluiceway demo") -> int:
    p = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--data-dir", default=str(ROOT / "data" / "demo"), help="where the demo keeps its files")
    p.add_argument("--exit-when-done", action="store_true", help="stop once every line has arrived")
    p.add_argument("--log-level", default="WARNING")
    args = p.parse_args(argv)
    configure_logging(args.log_level)
    logging.getLogger("uvicorn.error").setLevel(logging.WARNING)
    return asyncio.run(run(Path(args.data_dir), args.exit_when_done, Console()))
