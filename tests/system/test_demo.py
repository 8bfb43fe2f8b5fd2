"""``make demo``'s pipelines, run the way the README runs them (``sluiceway demo``)."""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
import sys
from pathlib import Path

import orjson
import pyarrow.parquet as pq
import pytest

from tests.support import ROOT

pytestmark = pytest.mark.slow


def test_the_demo_runs_both_pipelines_to_the_end(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "connect.cli", "demo", "--exit-when-done", "--data-dir", str(tmp_path)],
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
    assert "Spark SQL over" in done.stdout and "settled" in done.stdout
