"""``make demo``'s pipelines, run the way the README runs them; the bank topic's Avro judged
afterwards by Confluent's clients over the demo's own broker data."""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO

import orjson
import psutil
import pyarrow.parquet as pq
import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

from tests.schema_registry.support import start_registry
from tests.support import ROOT, embedded_broker

pytestmark = pytest.mark.slow

SUCCESS_LINES = (
    "All 500 lines went through the topic 'demo-orders'",
    "Every transaction change in bank.db up to the cut-off",
    "And every one of them landed in the Spark table",
    "Spark SQL over",
    "Confluent's AvroDeserializer read all",
    "refused, HTTP 409, error_code 409",
)
TOPIC = "demo-bank-transactions"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _reader(stream: IO[str], into: queue.Queue[str | None]) -> None:
    for line in stream:
        into.put(line)
    into.put(None)


def test_make_demo_with_its_output_piped_succeeds_keeps_running_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    """`make demo` exactly as the README says, its output going to a pipe (no terminal): it
    prints progress while it waits, its success lines once the cut-off arrived everywhere,
    then keeps serving until SIGINT, and exits 0."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    make = subprocess.Popen(
        ["make", "--no-print-directory", "demo", f"DEMO_ARGS=--data-dir {tmp_path}"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # Spark's JVM writes its start-up notes there
        text=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_reader, args=(make.stdout, lines), daemon=True).start()
    seen: list[str] = []
    try:
        deadline = time.monotonic() + 360
        while not any("press Ctrl-C" in line for line in seen):
            assert make.poll() is None or not lines.empty(), "the demo ended early:\n" + "".join(seen)
            with contextlib.suppress(queue.Empty):
                line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
                if line is None:
                    break
                seen.append(line)
            assert time.monotonic() < deadline, "no success within 360 s:\n" + "".join(seen)
        out = "".join(seen)
        for expected in SUCCESS_LINES:
            assert expected in out, out
        # Progress came while it waited, as plain lines (no terminal here).
        assert any(line.startswith("[") and " s] " in line and "order lines written" in line for line in seen)
        assert "did not deliver" not in out
        # Still running: the worker answers on its REST port and the writer goes on.
        demo = _demo_processes(make.pid)
        assert len(demo) == 1, "make's child `sluiceway demo`"
        rows = _rows(tmp_path / "bank.db")
        time.sleep(1.5)
        assert make.poll() is None
        assert _rows(tmp_path / "bank.db") > rows
        demo[0].send_signal(signal.SIGINT)  # Ctrl-C
        assert make.wait(60) == 0
    finally:
        if make.poll() is None:
            for child in psutil.Process(make.pid).children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    child.kill()
            make.kill()
            make.wait(30)


def _demo_processes(make_pid: int) -> list[psutil.Process]:
    """make's running `sluiceway demo` child (make may still hold an exited shell, a zombie
    whose command line cannot be read)."""
    found = []
    for child in psutil.Process(make_pid).children():
        with contextlib.suppress(psutil.Error):
            if "demo" in " ".join(child.cmdline()):
                found.append(child)
    return found


def _rows(db: Path) -> int:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return int(conn.execute("SELECT count(*) FROM transactions").fetchone()[0])


def test_the_demo_runs_both_pipelines_to_the_end(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sluiceway.cli", "demo", "--exit-when-done", "--data-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=420,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (tmp_path / "orders-out.txt").read_bytes() == (
        ROOT / "config" / "demo" / "orders.txt"
    ).read_bytes()
    rows = [orjson.loads(line) for line in (tmp_path / "transactions-out.jsonl").read_text().splitlines()]
    ids = {r["id"] for r in rows}
    assert set(range(1, 9)) <= ids, "the bundled transactions"
    assert len(ids) >= 20, "and the writer's"
    # The two seed rows that share a timestamp both arrived (timestamp+incrementing tie-break).
    assert {3, 4} <= ids
    # And each change once: SQLite compares timestamps rounded to the millisecond, and when
    # the source's offsets truncated instead, rows were read again on every poll.
    assert len({(r["id"], r["status"], r["updated_at"]) for r in rows}) == len(rows)
    with contextlib.closing(sqlite3.connect(tmp_path / "bank.db")) as db:
        final = set(db.execute("SELECT id, status FROM transactions"))
        large_in_db = {r[0] for r in db.execute("SELECT id FROM transactions WHERE amount >= 1000")}
    # Every row's last state arrived, inserts and settlements alike.
    assert final <= {(r["id"], r["status"]) for r in rows}
    large = [orjson.loads(line) for line in (tmp_path / "large-transactions.jsonl").read_text().splitlines()]
    assert all(float(r["amount"]) >= 1000 for r in large)
    assert {r["id"] for r in large} == large_in_db
    # The Spark table holds every change once (one row per topic offset) and the demo
    # printed Spark SQL's totals per account over it.
    lake = pq.read_table(tmp_path / "bank-lake").to_pylist()
    assert len({r["_offset"] for r in lake}) == len(lake) == len(rows)
    assert final <= {(r["id"], r["status"]) for r in lake}
    for expected in SUCCESS_LINES:
        assert expected in done.stdout, done.stdout
    _judge_the_avro(tmp_path / "broker", rows, final)


def _judge_the_avro(log_dirs: Path, rows: list[dict[str, object]], final: set[tuple[int, str]]) -> None:
    """The demo's broker data, served again with a registry on its ``_schemas``: Confluent's
    client finds the AvroConverter's subjects (the value schema evolved once, BACKWARD, and
    the refused schema left no trace), and every value on the topic is framed (magic 0, an id
    of the value subject) and read by Confluent's AvroDeserializer into exactly the records
    the file sink wrote, ending in the bank's final state."""
    with embedded_broker(log_dirs) as broker:
        registry = start_registry(broker.bootstrap, topic="_schemas")
        try:
            client = SchemaRegistryClient({"url": registry.url})
            assert sorted(client.get_subjects()) == [f"{TOPIC}-key", f"{TOPIC}-value"]
            assert client.get_versions(f"{TOPIC}-value") == [1, 2]
            v1, v2 = (client.get_version(f"{TOPIC}-value", v) for v in (1, 2))
            fields = [[f["name"] for f in orjson.loads(str(v.schema.schema_str))["fields"]] for v in (v1, v2)]
            assert fields[1] == [*fields[0], "channel"]
            value_ids = {v1.schema_id, v2.schema_id}
            values = _values(broker.bootstrap)
            assert values and all(v[0] == 0 and int.from_bytes(v[1:5], "big") in value_ids for v in values)
            read = AvroDeserializer(client)
            ctx = SerializationContext(TOPIC, MessageField.VALUE)
            decoded = [read(v, ctx) for v in values]
        finally:
            registry.stop()
    # The file sink's JSON (Kafka's JsonConverter) has timestamps as epoch milliseconds.
    as_json = [{**d, "updated_at": (d["updated_at"] - EPOCH) // timedelta(milliseconds=1)} for d in decoded]
    assert sorted(as_json, key=orjson.dumps) == sorted(rows, key=orjson.dumps)
    assert {"channel"} <= rows[-1].keys() and "channel" not in rows[0]
    assert final <= {(int(str(d["id"])), str(d["status"])) for d in as_json}


def _values(bootstrap: str) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "judge", "enable.auto.commit": False})
    try:
        low, high = consumer.get_watermark_offsets(TopicPartition(TOPIC, 0), timeout=10)
        consumer.assign([TopicPartition(TOPIC, 0, low)])
        out: list[bytes] = []
        deadline = time.monotonic() + 30
        while len(out) < high - low:
            assert time.monotonic() < deadline, f"read {len(out)} of {high - low} records"
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                out.append(bytes(msg.value() or b""))
        return out
    finally:
        consumer.close()
