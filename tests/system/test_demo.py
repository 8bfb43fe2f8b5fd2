"""``make demo``'s pipelines, run the way the README runs them."""

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
from pathlib import Path
from typing import IO

import orjson
import psutil
import pyarrow.parquet as pq
import pytest

from tests.support import ROOT

pytestmark = pytest.mark.slow

SUCCESS_LINES = (
    "All 500 lines went through the topic 'demo-orders'",
    "Every transaction change in bank.db up to the cut-off",
    "And every one of them landed in the Spark table",
    "Spark SQL over",
)


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
