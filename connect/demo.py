"""``make demo`` / ``sluiceway demo``: a whole pipeline on one machine with nothing else installed.

A standalone worker starts Sluiceway's broker in-process, a FileStreamSource reads
``config/demo/orders.txt`` into the topic ``demo-orders`` and a FileStreamSink writes
that topic to ``data/demo/orders-out.txt``. Progress is shown as it happens; then
the worker keeps running (Ctrl-C stops it) so the REST API can be explored.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import socket
import time
from pathlib import Path

from rich.console import Console
from rich.live import Live
from rich.table import Table

from connect.runtime.properties import PropertiesFile
from connect.standalone import StandaloneRuntime, configure_logging, start, worker_config

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "config" / "demo" / "orders.txt"
TOPIC = "demo-orders"


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


def _table(runtime: StandaloneRuntime, total: int, written: int, started: float) -> Table:
    t = Table(title="Sluiceway demo: file → topic → file", title_justify="left")
    t.add_column("connector")
    t.add_column("state")
    t.add_column("tasks")
    for name in ("demo-file-source", "demo-file-sink"):
        status = runtime.herder.connector_status_raw(name)
        tasks = [runtime.herder.task_status_raw(task) for task in runtime.herder.task_ids(name)]
        t.add_row(
            name,
            status.state.value if status else "UNASSIGNED",
            ", ".join(s.state.value if s else "UNASSIGNED" for s in tasks) or "-",
        )
    t.caption = f"{written}/{total} lines written in {time.monotonic() - started:.1f} s"
    return t


async def run(data_dir: Path, exit_when_done: bool, console: Console) -> int:
    data_dir.mkdir(parents=True, exist_ok=True)
    output = data_dir / "orders-out.txt"
    output.unlink(missing_ok=True)
    offsets = data_dir / "offsets.json"
    offsets.unlink(missing_ok=True)
    broker_port, rest_port = _free_port(), _free_port()
    worker = _props(
        data_dir / "worker.properties",
        {
            "bootstrap.servers": f"127.0.0.1:{broker_port}",
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            "offset.storage.file.filename": str(offsets),
            "offset.flush.interval.ms": "1000",
            "listeners": f"http://127.0.0.1:{rest_port}",
            "embedded.broker.enable": "true",
            "embedded.broker.log.dirs": str(data_dir / "broker"),
        },
    )
    source = _props(
        data_dir / "file-source.properties",
        {
            "name": "demo-file-source",
            "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
            "tasks.max": "1",
            "file": str(SAMPLE),
            "topic": TOPIC,
        },
    )
    sink = _props(
        data_dir / "file-sink.properties",
        {
            "name": "demo-file-sink",
            "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
            "tasks.max": "1",
            "file": str(output),
            "topics": TOPIC,
        },
    )
    total = _lines(SAMPLE)
    console.print(
        f"[bold]Starting a standalone worker[/] with its embedded broker on 127.0.0.1:{broker_port}"
    )
    console.print(f"  reading  {SAMPLE}\n  writing  {output}\n  configs  {data_dir}/*.properties")
    runtime = await start(worker_config(worker), [source, sink])
    started = time.monotonic()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    ok = False
    try:
        with Live(_table(runtime, total, 0, started), console=console, refresh_per_second=4) as live:
            while not stop.is_set():
                written = _lines(output)
                live.update(_table(runtime, total, written, started))
                if written >= total:
                    ok = True
                    break
                if time.monotonic() - started > 120:
                    break
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), 0.25)
        if ok:
            same = output.read_bytes() == SAMPLE.read_bytes()
            console.print(
                f"[green]All {total} lines went through the topic {TOPIC!r}[/]"
                + (
                    " and the output is identical to the input."
                    if same
                    else " [red]but the output differs from the input![/]"
                )
            )
            ok = same
        else:
            console.print(f"[red]Only {_lines(output)} of {total} lines arrived.[/]")
        url = runtime.url
        console.print(f"\nThe REST API (Kafka Connect's) is at [bold]{url}[/]. Try:")
        console.print(f"  curl -s {url}/connectors?expand=status")
        console.print(f"  curl -s {url}/connectors/demo-file-source/offsets")
        console.print(f"  curl -s -X PUT {url}/connectors/demo-file-sink/pause")
        console.print(f"  kcat -b 127.0.0.1:{broker_port} -C -t {TOPIC} -o beginning -e")
        console.print(f"  append lines to {SAMPLE.name}? they flow to {output.name} while the worker runs")
        if not exit_when_done and ok:
            console.print("\n[dim]The worker keeps running; press Ctrl-C to stop it.[/]")
            await stop.wait()
    finally:
        await runtime.stop()
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="sluiceway demo", description=__doc__.splitlines()[0] if __doc__ else None
    )
    p.add_argument("--data-dir", default=str(ROOT / "data" / "demo"), help="where the demo keeps its files")
    p.add_argument("--exit-when-done", action="store_true", help="stop once every line has arrived")
    p.add_argument("--log-level", default="WARNING")
    args = p.parse_args(argv)
    configure_logging(args.log_level)
    logging.getLogger("uvicorn.error").setLevel(logging.WARNING)
    return asyncio.run(run(Path(args.data_dir), args.exit_when_done, Console()))
