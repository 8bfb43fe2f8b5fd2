"""``make demo`` / ``sluiceway demo``: whole pipelines on one machine with nothing else installed.

A standalone worker starts Sluiceway's broker and a Schema Registry in-process and runs two
pipelines:

- files: a FileStreamSource reads ``config/demo/orders.txt`` into the topic
  ``demo-orders`` and a FileStreamSink writes that topic to ``data/demo/orders-out.txt``;
- a bank: ``data/demo/bank.db`` (SQLite, built from ``config/demo/bank.sql``) gets new
  transactions, and settles pending ones, from a writer thread while the JDBC source
  (timestamp+incrementing on ``updated_at``, ``id``) streams every change to the topic
  ``demo-bank-transactions`` as Avro (Confluent's AvroConverter, schemas in the embedded
  registry; the writer adds a column on the way, so the value schema gets a version 2);
  reading through the AvroConverter, one sink writes them all to
  ``data/demo/transactions-out.jsonl``, another, through a plain-Python transform,
  only the large ones (>= 1,000) to ``data/demo/large-transactions.jsonl``, and the
  Spark sink lands them in a Parquet table, ``data/demo/bank-lake``, which the demo
  then queries with Spark SQL (totals per account).

Then Confluent's own clients look at the Avro: the registry's subjects, versions and ids, one
record's framing (magic byte 0, schema id), the whole topic read back by Confluent's
AvroDeserializer and checked against the bank (``checks.topic_shortfalls``), and the
registry refusing an incompatible schema (``sluiceway.demo.avro_view``).

The demo is done once everything in the bank up to a cut-off (taken when the writer has
made a few changes) has reached every output (``sluiceway.demo.checks``); then the
worker keeps running (Ctrl-C stops it) so the REST API can be explored while the
writer goes on. Progress is a live table on a terminal and a plain line every few
seconds anywhere else.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import shutil
import signal
import sys
import time
from pathlib import Path

import orjson
from rich.console import Console
from rich.live import Live
from rich.table import Table

from connect.standalone import StandaloneRuntime, configure_logging, start, worker_config
from sluiceway.demo import avro_view, checks, pipelines
from sluiceway.demo.bank import BankWriter
from sluiceway.demo.lake import lake_rows, totals
from sluiceway.demo.preflight import DemoInputError, check_data_dir, check_java, check_port, free_port

CUTOFF_ROWS = 20  # the writer's rows (8 bundled) before the cut-off: a few inserts and settlements
DEADLINE_S = 240.0  # a pipeline this small that has not delivered by then is broken
PLAIN_EVERY_S = 5.0  # how often a non-terminal gets a progress line


def _lines(path: Path) -> int:
    try:
        with open(path, "rb") as f:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 16), b""))
    except FileNotFoundError:
        return 0


def _json_lines(path: Path) -> list[dict[str, object]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    out: list[dict[str, object]] = []
    for line in text.splitlines():
        with contextlib.suppress(orjson.JSONDecodeError):
            row = orjson.loads(line)
            if isinstance(row, dict):
                out.append(row)
    return out


def _changes(rows: list[dict[str, object]]) -> frozenset[checks.Change]:
    return frozenset((int(str(r["id"])), str(r["status"])) for r in rows if "id" in r and "status" in r)


def _rows(rows: list[dict[str, object]]) -> list[checks.Row]:
    return [
        (int(str(r["id"])), str(r["status"]), int(str(r["account_id"])), checks.cents(r["amount"]))
        for r in rows
        if {"id", "status", "account_id", "amount"} <= r.keys()
    ]


class Demo:
    def __init__(self, data_dir: Path, exit_when_done: bool, console: Console) -> None:
        self.data_dir = data_dir
        self.exit_when_done = exit_when_done
        self.console = console
        self.output = data_dir / "orders-out.txt"
        self.bank_out = data_dir / "transactions-out.jsonl"
        self.large_out = data_dir / "large-transactions.jsonl"
        self.lake = data_dir / "bank-lake"
        self.bank = data_dir / "bank.db"
        self.total = _lines(pipelines.SAMPLE)
        self.cutoff: checks.Cutoff | None = None
        self.lake_rows: tuple[tuple[int, str, int], ...] = ()

    def outputs(self) -> checks.Outputs:
        return checks.Outputs(
            lines_written=_lines(self.output),
            delivered=_changes(_json_lines(self.bank_out)),
            flagged=frozenset(tid for tid, _ in _changes(_json_lines(self.large_out))),
            lake=self.lake_rows,
        )

    def progress(self, out: checks.Outputs, runtime: StandaloneRuntime) -> list[str]:
        said = [f"{out.lines_written}/{self.total} order lines written"]
        cutoff = self.cutoff
        if cutoff is None:
            said.append(
                f"bank: {len(out.delivered)} changes delivered, the cut-off comes at {CUTOFF_ROWS} rows"
            )
            return said
        n = len(cutoff.changes)
        said.append(f"{len(cutoff.arrived(out.delivered))}/{n} transaction changes delivered")
        said.append(f"{len(cutoff.large & out.flagged)}/{len(cutoff.large)} large ones flagged")
        if out.lake:
            in_lake = cutoff.arrived((row[0], row[1]) for row in out.lake)
            said.append(f"{len(in_lake)}/{n} in the Spark table")
        else:
            said.append(self._spark_state(runtime))
        return said

    @staticmethod
    def _spark_state(runtime: StandaloneRuntime) -> str:
        tasks = [runtime.herder.task_status_raw(t) for t in runtime.herder.task_ids("demo-bank-lake")]
        if tasks and all(s is not None and s.state.value == "FAILED" for s in tasks):
            return "the Spark sink FAILED (see its status)"
        return "Spark table: waiting for Spark's first commit"

    def table(self, runtime: StandaloneRuntime, progress: list[str], elapsed: float) -> Table:
        t = Table(
            title="Sluiceway demo: file → topic → file, and bank.db → Avro topic → files and a Spark table",
            title_justify="left",
        )
        t.add_column("connector")
        t.add_column("state")
        t.add_column("tasks")
        for name in pipelines.CONNECTORS:
            status = runtime.herder.connector_status_raw(name)
            tasks = [runtime.herder.task_status_raw(task) for task in runtime.herder.task_ids(name)]
            t.add_row(
                name,
                status.state.value if status else "UNASSIGNED",
                ", ".join(s.state.value if s else "UNASSIGNED" for s in tasks) or "-",
            )
        t.caption = "; ".join(progress) + f" ({elapsed:.1f} s)"
        return t

    async def watch(self, runtime: StandaloneRuntime, writer: BankWriter, stop: asyncio.Event) -> bool:
        """Until the cut-off has arrived everywhere (True), the deadline passes or Ctrl-C (False)."""
        started = time.monotonic()
        lake_checked = 0.0
        last_plain = -PLAIN_EVERY_S
        live = Live(console=self.console, refresh_per_second=4) if self.console.is_terminal else None
        with live or contextlib.nullcontext():
            while not stop.is_set():
                elapsed = time.monotonic() - started
                if self.cutoff is None and writer.rows() >= CUTOFF_ROWS:
                    if self.exit_when_done:
                        # A run that must end stops writing first, so its outputs end final.
                        await asyncio.to_thread(writer.stop)
                    self.cutoff = writer.cutoff()
                if time.monotonic() - lake_checked > 1.0:
                    self.lake_rows = await asyncio.to_thread(lake_rows, self.lake)
                    lake_checked = time.monotonic()
                out = self.outputs()
                progress = self.progress(out, runtime)
                if live is not None:
                    live.update(self.table(runtime, progress, elapsed))
                elif elapsed - last_plain >= PLAIN_EVERY_S:
                    line = f"[{elapsed:5.1f} s] " + "; ".join(progress)
                    self.console.print(line, highlight=False, soft_wrap=True)
                    last_plain = elapsed
                if self.cutoff is not None and self._done(out):
                    if live is not None:
                        live.update(self.table(runtime, progress, elapsed))
                    self.console.print(f"Done in {elapsed:.1f} s.", highlight=False)
                    return True
                if elapsed > DEADLINE_S:
                    return False
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), 0.25)
        return False

    def _done(self, out: checks.Outputs) -> bool:
        assert self.cutoff is not None
        if not checks.judge(self.cutoff, self.total, out).done:
            return False
        if self.exit_when_done:
            # The writer has stopped, so the outputs can be final: every record the topic got
            # is in the Spark table too (one the source sent twice included).
            return len(out.lake) == _lines(self.bank_out)
        return True

    def report(self, finished: bool) -> bool:
        """Print what arrived; True when everything did."""
        out = self.outputs()
        cutoff = self.cutoff or checks.Cutoff(frozenset(), frozenset())
        said = checks.shortfalls(cutoff, self.total, out)
        if self.cutoff is None:
            said.append("the bank writer never reached the cut-off")
        same = self.output.read_bytes() == pipelines.SAMPLE.read_bytes() if self.output.exists() else False
        if not said and not same:
            said.append(f"{self.output.name} differs from {pipelines.SAMPLE.name}")
        if said:
            why = "" if finished else " (stopped before the end)"
            self.console.print(f"[red]The demo's pipelines did not deliver everything{why}:[/]")
            for line in said:
                self.console.print(f"[red]  - {line}[/]", highlight=False)
            return False
        n = len(cutoff.changes)
        c = self.console
        c.print(
            f"[green]All {self.total} lines went through the topic {pipelines.TOPIC!r}[/] and "
            f"{self.output.name} is identical to the input."
        )
        c.print(
            f"[green]Every transaction change in bank.db up to the cut-off ({n} transactions) reached "
            f"{self.bank_out.name}[/] through {pipelines.BANK_TOPIC!r}; the "
            f"{len(cutoff.large)} large ones are in {self.large_out.name}."
        )
        c.print(f"[green]And every one of them landed in the Spark table {self.lake}[/], each record once:")
        return True

    def avro(self, registry_url: str, bootstrap: str) -> bool:
        """Show the bank topic's Avro side through Confluent's clients and check the topic
        against the cut-off; True when it holds everything, exactly."""
        c = self.console
        assert self.cutoff is not None
        sink_rows = _rows(_json_lines(self.bank_out))  # before the topic: each must be in it
        found = avro_view.subjects(registry_url)
        level = avro_view.compatibility(registry_url)
        avro_view.show_registry(c, registry_url, found, level)
        value = next((s for s in found if s.name == pipelines.VALUE_SUBJECT), None)
        if value is None or not any(s.name == pipelines.KEY_SUBJECT for s in found):
            c.print(f"[red]The AvroConverter registered no {pipelines.BANK_TOPIC} key and value subjects[/]")
            return False
        view = avro_view.read_topic(
            bootstrap, pipelines.BANK_TOPIC, registry_url, {v.id for v in value.versions}
        )
        avro_view.show_framing(c, pipelines.BANK_TOPIC, view, found)
        said = checks.topic_shortfalls(self.cutoff, view.read, sink_rows, final=self.exit_when_done)
        refusal = avro_view.refuse(registry_url, value)
        if said:
            c.print("[red]Read back with Confluent's AvroDeserializer, the topic falls short:[/]")
            for line in said:
                c.print(f"[red]  - {line}[/]", highlight=False)
        else:
            balances = ", ".join(
                f"{account}: {checks.money(cents)}" for account, cents in sorted(self.cutoff.totals().items())
            )
            c.print(
                f"[green]Confluent's AvroDeserializer read all {len(view.read.rows)} records of "
                f"{pipelines.BANK_TOPIC!r}[/]: every change up to the cut-off is there, and each account's "
                f"total equals bank.db's to the cent ({balances}); {self.bank_out.name}'s "
                f"{len(sink_rows)} lines are records of the topic.",
                highlight=False,
            )
        avro_view.show_refusal(c, pipelines.VALUE_SUBJECT, refusal)
        return not said and refusal is not None and refusal.status == 409


async def run(
    data_dir: Path, exit_when_done: bool, console: Console, broker_port: int = 0, rest_port: int = 0
) -> int:
    demo = Demo(data_dir, exit_when_done, console)
    for stale in (demo.output, demo.bank_out, demo.large_out, data_dir / "offsets.json"):
        stale.unlink(missing_ok=True)
    shutil.rmtree(demo.lake, ignore_errors=True)
    BankWriter.create(demo.bank)
    broker_port, rest_port, registry_port = broker_port or free_port(), rest_port or free_port(), free_port()
    registry_url = f"http://127.0.0.1:{registry_port}"
    worker = pipelines.worker(data_dir, broker_port, rest_port, registry_port)
    console.print(
        f"[bold]Starting a standalone worker[/] with its embedded broker on 127.0.0.1:{broker_port} "
        f"and its embedded Schema Registry at {registry_url}"
    )
    console.print(
        f"  reading  {pipelines.SAMPLE}\n  writing  {demo.output}\n  bank     {demo.bank} -> {demo.bank_out}"
        f"\n  configs  {data_dir}/*.properties"
    )
    runtime = await start(
        worker_config(worker), pipelines.connectors(data_dir, demo.output, demo.bank, registry_url)
    )
    writer = BankWriter(demo.bank).start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    console.print("[dim]The Spark sink starts a JVM for its SparkSession; that takes 10-30 s.[/]")
    try:
        finished = await demo.watch(runtime, writer, stop)
        ok = demo.report(finished)
        if ok:
            console.print(await asyncio.to_thread(totals, demo.lake))
            ok = await asyncio.to_thread(demo.avro, registry_url, f"127.0.0.1:{broker_port}")
        url = runtime.url
        console.print(f"\nThe REST API (Kafka Connect's) is at [bold]{url}[/]. Try:")
        console.print(f"  curl -s {url}/connectors?expand=status")
        console.print(f"  curl -s {url}/connectors/demo-bank-source/offsets")
        console.print(f"  curl -s -X PUT {url}/connectors/demo-file-sink/pause")
        console.print(f"  curl -s {registry_url}/subjects/{pipelines.VALUE_SUBJECT}/versions/latest")
        # Raw bytes: Debian's kcat is built without Avro (its -s value=avro needs libserdes).
        console.print(
            f"  kcat -b 127.0.0.1:{broker_port} -C -t {pipelines.BANK_TOPIC} -o beginning -c 1 -e"
            " | od -A d -t x1 | head -3"
        )
        if not exit_when_done:
            console.print(f"  tail -f {demo.bank_out}    (the writer keeps adding transactions)")
        console.print(
            f"  append lines to {pipelines.SAMPLE.name}? they flow to {demo.output.name} while it runs"
        )
        if ok and not exit_when_done and not stop.is_set():
            console.print("\n[dim]The worker keeps running; press Ctrl-C to stop it.[/]")
            await stop.wait()
    finally:
        writer.stop()
        await runtime.stop()
    return 0 if ok else 1


def main(argv: list[str] | None = None, prog: str = "sluiceway demo") -> int:
    p = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument(
        "--data-dir", default=str(pipelines.ROOT / "data" / "demo"), help="where the demo keeps its files"
    )
    p.add_argument(
        "--exit-when-done", action="store_true", help="stop the writer at the cut-off, exit when done"
    )
    p.add_argument(
        "--broker-port", type=int, default=0, help="the embedded broker's port (default: any free)"
    )
    p.add_argument("--rest-port", type=int, default=0, help="the REST API's port (default: any free)")
    p.add_argument("--log-level", default="WARNING")
    args = p.parse_args(argv)
    data_dir = Path(args.data_dir).resolve()
    try:
        check_data_dir(data_dir)
        check_port(args.broker_port, "embedded broker", "--broker-port")
        check_port(args.rest_port, "REST API", "--rest-port")
        check_java()
    except DemoInputError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    configure_logging(args.log_level)
    logging.getLogger("uvicorn.error").setLevel(logging.WARNING)
    return asyncio.run(run(data_dir, args.exit_when_done, Console(), args.broker_port, args.rest_port))
