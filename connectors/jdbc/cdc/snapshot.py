"""The initial snapshot: every captured table read inside one consistent transaction.

``SnapshotReader.open`` starts a ``REPEATABLE READ READ ONLY`` transaction on its own
connection and, when given the name of the snapshot a new replication slot exported,
adopts it (``SET TRANSACTION SNAPSHOT``): the rows read are exactly the database as of
the slot's consistent point, where streaming begins, so nothing is missed and nothing
shows twice. Table list and columns are read inside the same transaction, so they
match the rows.

Rows are fetched with a server-side cursor per table, ``snapshot.fetch.size`` at a
time, and come back as the text the server prints for each value (the connection's
typecasters for the tables' types are replaced by the identity), the same text pgoutput
streams, so one set of parsers (``values``) serves both. Columns left out of the value
and not in the key are selected as NULL, not read.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from connectors.jdbc.cdc.catalog import Catalog, TableInfo, quote_ident, quote_literal
from connectors.jdbc.cdc.connection import close_quietly
from connectors.jdbc.cdc.filters import Filters
from connectors.jdbc.cdc.offsets import parse_lsn
from connectors.jdbc.cdc.table_model import TableModel
from connectors.jdbc.cdc.values import PgType

__all__ = ["SnapshotReader", "SnapshotRow"]

_cursor_names = itertools.count()


@dataclass(frozen=True, slots=True)
class SnapshotRow:
    table: TableModel
    values: tuple[str | None, ...]


def _type_oids(pg_type: PgType) -> Iterator[int]:
    yield pg_type.oid
    if pg_type.base is not None:  # a domain's values are described with its base type
        yield from _type_oids(pg_type.base)


def _raw(value: str | None, _cursor: Any) -> str | None:
    return value


def _estimate_rows(conn: Any, oids: list[int], tables: list[TableModel]) -> int:
    """The rows the snapshot will read, for progress: the planner's estimate
    (``pg_class.reltuples``), counted exactly for tables never analysed (-1 since PG 14),
    inside the snapshot transaction so the count is of the rows it will see."""
    if not oids:
        return 0
    with conn.cursor() as cur:
        cur.execute("SELECT oid, reltuples FROM pg_class WHERE oid = ANY(%s)", (oids,))
        estimates = {int(oid): float(n) for oid, n in cur.fetchall()}
        total = 0
        for oid, table in zip(oids, tables, strict=True):
            estimate = estimates.get(oid, -1.0)
            if estimate < 0:
                cur.execute(f"SELECT count(*) FROM {table.name.quoted()}")
                estimate = float(cur.fetchone()[0])
            total += int(estimate)
    return total


class SnapshotReader:
    def __init__(
        self, conn: Any, tables: list[TableModel], xmin: int | None, lsn: int, fetch_size: int
    ) -> None:
        self.conn = conn
        self.tables = tables
        self.xmin = xmin
        self.lsn = lsn  # the WAL position the snapshot corresponds to
        self.fetch_size = fetch_size
        self.rows_estimated = 0  # set by open(): what progress is measured against
        self.rows_read = 0
        self._next_table = 0
        self._cursor: Any = None
        self._current: TableModel | None = None

    @classmethod
    def open(
        cls,
        conn: Any,
        exported_snapshot: str | None,
        consistent_lsn: int | None,
        publication: str | None,
        filters: Filters,
        build: Callable[[TableInfo], TableModel],
        fetch_size: int,
    ) -> SnapshotReader:
        """Begin the snapshot transaction on ``conn`` (which the reader then owns and closes)."""
        import psycopg2.extensions

        conn.set_session(isolation_level="REPEATABLE READ", readonly=True, autocommit=False)
        with conn.cursor() as cur:
            if exported_snapshot is not None:
                # Must be the transaction's first statement; psycopg2 has just sent BEGIN.
                cur.execute(f"SET TRANSACTION SNAPSHOT {quote_literal(exported_snapshot)}")
            cur.execute("SELECT txid_snapshot_xmin(txid_current_snapshot()), pg_current_wal_lsn()::text")
            xmin, current_lsn = cur.fetchone()
        lsn = consistent_lsn if consistent_lsn is not None else parse_lsn(current_lsn)
        catalog = Catalog(conn)
        models = []
        captured = []
        for oid, name in catalog.user_tables(publication):
            if not filters.captures_table(name.schema, name.table):
                continue
            info = catalog.table(oid)
            if info is not None:
                models.append(build(info))
                captured.append(oid)
        estimated = _estimate_rows(conn, captured, models)
        # From here on the connection returns values as the server's text (catalog reads are done).
        oids = {oid for m in models for c in m.columns for oid in _type_oids(c.info.pg_type)}
        if oids:
            psycopg2.extensions.register_type(
                psycopg2.extensions.new_type(tuple(sorted(oids)), "SLUICEWAY_TEXT", _raw), conn
            )
        reader = cls(conn, models, int(xmin) if xmin is not None else None, lsn, fetch_size)
        reader.rows_estimated = estimated
        return reader

    def _open_next(self) -> bool:
        while self._next_table < len(self.tables):
            table = self.tables[self._next_table]
            self._next_table += 1
            columns = ", ".join(
                quote_ident(c.info.name) if (c.value is not None or c.key is not None) else "NULL"
                for c in table.columns
            )
            cursor = self.conn.cursor(name=f"sluiceway_snapshot_{next(_cursor_names)}")
            cursor.itersize = self.fetch_size
            cursor.execute(f"SELECT {columns} FROM {table.name.quoted()}")
            self._cursor, self._current = cursor, table
            return True
        return False

    def read(self, limit: int) -> list[SnapshotRow]:
        """Up to ``limit`` more rows, across tables; an empty list once every table was read."""
        rows: list[SnapshotRow] = []
        while len(rows) < limit:
            if self._cursor is None and not self._open_next():
                break
            assert self._current is not None
            batch = self._cursor.fetchmany(min(limit - len(rows), self.fetch_size))
            if not batch:
                self._cursor.close()
                self._cursor = self._current = None
                continue
            table = self._current
            rows.extend(SnapshotRow(table, tuple(r)) for r in batch)
        self.rows_read += len(rows)
        return rows

    def finish(self) -> None:
        """End the snapshot transaction and close the connection."""
        try:
            if self._cursor is not None:
                self._cursor.close()
            self.conn.rollback()  # read only: nothing to commit
        finally:
            self.close()

    def close(self) -> None:
        close_quietly(self.conn)
        self._cursor = None
