"""The demo's bank: a SQLite database a writer keeps changing (adding a column on the way, so
the value schema evolves), and the transforms its file sinks run: every transaction as a
JSON line, and only the large ones."""

from __future__ import annotations

import contextlib
import random
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path

from connect.api import SinkRecord, Struct
from connect.converters.json import JsonConverter
from sluiceway.demo.checks import Cutoff, cents

BANK_SQL = Path(__file__).resolve().parents[2] / "config" / "demo" / "bank.sql"
LARGE = 1000
# The writer adds this column once the table holds EVOLVE_AT rows (before the demo's
# cut-off at 20): the source's value schema gains an optional field, version 2 of the
# subject, which BACKWARD compatibility accepts.
NEW_COLUMN = "channel"
EVOLVE_AT = 14

# Kafka's JsonConverter as a sink would write the value (no schema envelope, decimals as
# numbers, timestamps as epoch milliseconds).
_JSON = JsonConverter()
_JSON.configure({"schemas.enable": "false", "decimal.format": "NUMERIC"}, False)


def _json_line(record: SinkRecord) -> SinkRecord:
    rendered = _JSON.from_connect_data(record.topic, record.value_schema, record.value)
    return record.with_value(None, "null" if rendered is None else rendered.decode())


def as_json_line(record: SinkRecord) -> SinkRecord:
    """A plain-Python transformation (``transforms.json.type=sluiceway.demo.bank:as_json_line``):
    the value the AvroConverter read, as one JSON line for FileStreamSink to write."""
    return _json_line(record)


def large_transactions(record: SinkRecord) -> SinkRecord | None:
    """A plain-Python transformation
    (``transforms.large.type=sluiceway.demo.bank:large_transactions``): keep transactions of
    at least 1,000, as one JSON line each."""
    value = record.value
    if not isinstance(value, Struct) or cents(value.get("amount") or 0) < LARGE * 100:
        return None
    return _json_line(record)


class BankWriter:
    """Adds a transaction every ``interval`` seconds and settles pending ones, as a bank's
    application would, in ``bank.db``; the JDBC source sees both inserts and updates. At
    ``EVOLVE_AT`` rows it adds the column ``channel`` (a migration), and fills it from then on."""

    MERCHANTS = ("Grocer", "Airline", "Bookshop", "Rent", "Coffee", "Car dealer", "Pharmacy", "Jeweller")
    CHANNELS = ("card", "online", "transfer")

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
            evolved = NEW_COLUMN in _columns(db)
            while not self.stopped.wait(self.interval):
                now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
                large = self.rng.random() < 0.15
                amount = round(self.rng.uniform(1000, 9000) if large else self.rng.uniform(1, 300), 2)
                row = (self.rng.randint(1, 5), amount, self.rng.choice(self.MERCHANTS), now)
                if not evolved and _count(db) >= EVOLVE_AT:
                    db.execute(f"ALTER TABLE transactions ADD COLUMN {NEW_COLUMN} TEXT")
                    evolved = True
                if evolved:
                    db.execute(
                        "INSERT INTO transactions (account_id, amount, merchant, updated_at, "
                        f"{NEW_COLUMN}) VALUES (?, ?, ?, ?, ?)",
                        (*row, self.rng.choice(self.CHANNELS)),
                    )
                else:
                    db.execute(
                        "INSERT INTO transactions (account_id, amount, merchant, updated_at) "
                        "VALUES (?, ?, ?, ?)",
                        row,
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
            return _count(db)

    def cutoff(self) -> Cutoff:
        """Every transaction's current state, read in one transaction."""
        with contextlib.closing(sqlite3.connect(self.path)) as db:
            rows = db.execute("SELECT id, status, account_id, amount FROM transactions").fetchall()
        changes = frozenset((int(i), str(s)) for i, s, _, _ in rows)
        large = frozenset(int(i) for i, _, _, amount in rows if cents(amount) >= LARGE * 100)
        return Cutoff(changes, large, {int(i): (int(a), cents(amount)) for i, _, a, amount in rows})


def _count(db: sqlite3.Connection) -> int:
    return int(db.execute("SELECT count(*) FROM transactions").fetchone()[0])


def _columns(db: sqlite3.Connection) -> set[str]:
    return {str(r[1]) for r in db.execute("PRAGMA table_info(transactions)")}
