"""The demo's bank: a SQLite database a writer keeps changing, and the transform that flags
large transactions."""

from __future__ import annotations

import contextlib
import random
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path

import orjson

from connect.api import SinkRecord
from sluiceway.demo.checks import Cutoff

BANK_SQL = Path(__file__).resolve().parents[2] / "config" / "demo" / "bank.sql"
LARGE = 1000


def large_transactions(record: SinkRecord) -> SinkRecord | None:
    """A plain-Python transformation
    (``transforms.large.type=sluiceway.demo.bank:large_transactions``): keep transactions of
    at least 1,000, as one JSON line each."""
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

    def rows(self) -> int:
        with contextlib.closing(sqlite3.connect(self.path)) as db:
            return int(db.execute("SELECT count(*) FROM transactions").fetchone()[0])

    def cutoff(self) -> Cutoff:
        """Every transaction's current state, read in one transaction."""
        with contextlib.closing(sqlite3.connect(self.path)) as db:
            changes = frozenset(
                (int(i), str(s)) for i, s in db.execute("SELECT id, status FROM transactions")
            )
            large = frozenset(
                int(r[0]) for r in db.execute("SELECT id FROM transactions WHERE amount >= ?", (LARGE,))
            )
        return Cutoff(changes, large)
