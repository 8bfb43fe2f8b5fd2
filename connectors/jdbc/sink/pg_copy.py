"""PostgreSQL upserts by COPY: a run of upsert rows copied into a temporary table, then one
``INSERT ... SELECT DISTINCT ON (keys) ... ON CONFLICT`` into the target, in the batch's
transaction.

Why: psycopg's ``executemany`` costs about 11 µs a row of Python holding the GIL, more than
half of a worker's time in ``benchmarks/jdbc_sink.py`` (PostgreSQL), which by COPY went from
0.41-0.51x to 0.94-0.97x of raw ``executemany`` (interleaved runs, a busy two-core machine).

The rows are the very parameters ``executemany`` would bind (the same per-column converters,
``binding``), sent as COPY text and parsed by each column's input function. ``executemany``
sends strings untyped (the same parsing) and ints, Decimals, bools, dates, times and
timestamps (naive as ``timestamp``, aware as ``timestamptz``, as the converters make them for
such columns) typed, cast by assignment, which gives the same values as parsing their text.
The temporary table has the target's column types (so a value the target refuses is refused
by the COPY too, a data error), except REAL columns, held as DOUBLE PRECISION: ``executemany``
binds a float as float8 and the server rounds it to float4, as the INSERT's assignment cast
does (parsing the decimal text straight to float4 could round differently).

A ``sluiceway_seq`` column numbers the rows so that the last record of a key wins, as it does when
``executemany`` applies them in order: PostgreSQL refuses to update a row twice in one
statement, so ``DISTINCT ON (keys) ... ORDER BY keys, sluiceway_seq DESC`` keeps one row per key.

The database refusing the data (psycopg's ``DataError``, ``IntegrityError``) comes out as
SQLAlchemy's exception of the same kind, as from ``executemany``, so the writer's fallback
(rollback, record by record) treats both paths alike.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from operator import itemgetter
from typing import Any

import psycopg
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection

from connectors.jdbc.sink.binding import Bound
from connectors.jdbc.sink.records import Action

log = logging.getLogger(__name__)

#: Runs shorter than this keep ``executemany``: creating (once per connection) and emptying
#: the temporary table and the second statement cost more than they save on a few rows.
#: ``benchmarks/jdbc_sink.py`` (batches of hundreds of rows) is the one that pays for it.
MIN_ROWS = 64


class CopyPlan:
    """The SQL of one bound upsert by COPY, made once per ``Bound``."""

    __slots__ = ("copy", "create", "empty", "insert", "values")

    def __init__(self, bound: Bound, table: sa.Table, preparer: Any) -> None:
        q = preparer.quote
        names = list(bound.real)
        keys = names[: bound.key_count]
        rest = names[bound.key_count :]
        target = preparer.format_table(table)
        digest = hashlib.sha1("\0".join([target, *names]).encode()).hexdigest()[:20]
        tmp = q(f"sluiceway_copy_{digest}")
        real = {n for n in names if isinstance(table.c[n].type, sa.REAL)}
        selected = ", ".join(f"{q(n)}::double precision AS {q(n)}" if n in real else q(n) for n in names)
        self.create = (
            f"CREATE TEMP TABLE IF NOT EXISTS {tmp} ON COMMIT DELETE ROWS AS "
            f"SELECT {selected}, 0::bigint AS sluiceway_seq FROM {target} WITH NO DATA"
        )
        self.empty = f"DELETE FROM {tmp}"
        cols = ", ".join(q(n) for n in names)
        self.copy = f"COPY {tmp} ({cols}, sluiceway_seq) FROM STDIN"
        key_list = ", ".join(q(k) for k in keys)
        if rest:
            conflict = "DO UPDATE SET " + ", ".join(f"{q(c)} = EXCLUDED.{q(c)}" for c in rest)
        else:
            conflict = "DO NOTHING"
        self.insert = (
            f"INSERT INTO {target} ({cols}) SELECT DISTINCT ON ({key_list}) {cols} FROM {tmp} "
            f"ORDER BY {key_list}, sluiceway_seq DESC ON CONFLICT ({key_list}) {conflict}"
        )
        get = itemgetter(*bound.names)
        self.values: Callable[[dict[str, Any]], tuple[Any, ...]] = (
            get if len(bound.names) > 1 else lambda row: (get(row),)
        )


class Copier:
    """Upserts by COPY for one writer: plans cached per ``Bound``; the temporary tables used
    in the current transaction (emptied before a second use in it)."""

    def __init__(self, insert_mode: str) -> None:
        self.upserts = insert_mode == "upsert"
        self._plans: dict[int, tuple[Bound, CopyPlan]] = {}
        self.used: set[str] = set()

    def takes(self, bound: Bound, rows: int) -> bool:
        """Whether a run of ``rows`` rows of ``bound`` goes by COPY: upserts of dict rows
        (the statement the sink built, run as it compiled it), at least ``MIN_ROWS``."""
        return (
            rows >= MIN_ROWS
            and self.upserts
            and bound.action is Action.WRITE
            and bound.key_count > 0
            and bound.sql is not None
            and bound.order is None
            and bound.table is not None
        )

    def plan(self, bound: Bound, connection: Connection) -> CopyPlan:
        found = self._plans.get(id(bound))
        if found is not None and found[0] is bound:
            return found[1]
        assert bound.table is not None
        made = CopyPlan(bound, bound.table, connection.dialect.identifier_preparer)
        self._plans[id(bound)] = (bound, made)
        return made

    def forget(self) -> None:
        self._plans.clear()

    def upsert(self, connection: Connection, bound: Bound, rows: list[Any]) -> None:
        """Write ``rows`` (dicts as ``executemany`` takes them) in ``connection``'s transaction."""
        plan = self.plan(bound, connection)
        driver = connection.connection.driver_connection
        assert isinstance(driver, psycopg.Connection)
        values = plan.values
        sql = plan.copy
        log.debug("%d rows into %s by COPY", len(rows), bound.plan.table)
        try:
            with driver.cursor() as cursor:
                cursor.execute(plan.create)
                if plan.create in self.used:
                    cursor.execute(plan.empty)  # a second run of this table in the transaction
                self.used.add(plan.create)
                with cursor.copy(sql) as copy:
                    write = copy.write_row
                    for seq, row in enumerate(rows):
                        write((*values(row), seq))
                sql = plan.insert
                cursor.execute(sql)
        except psycopg.Error as exc:
            raise sa_exc.DBAPIError.instance(sql, None, exc, psycopg.Error) from exc
