"""The consistent snapshot (Debezium's flow), and reading its rows.

1. pick the captured tables (``SHOW DATABASES``, ``SHOW FULL TABLES``, the filters);
2. lock: ``FLUSH TABLES WITH READ LOCK`` (``snapshot.locking.mode`` minimal or extended);
   where the global read lock is refused (no RELOAD, or a managed server), ``LOCK TABLES
   ... READ`` of the tables, held to the end instead of a transaction (starting one would
   release them); ``none``: no lock;
3. ``START TRANSACTION WITH CONSISTENT SNAPSHOT`` at REPEATABLE READ;
4. read the binlog position (and GTIDs) the snapshot corresponds to;
5. ``SHOW CREATE DATABASE`` of each database whose tables' schemas are read (their default
   character sets), then ``SHOW CREATE TABLE`` of each table, for the schema catalog and history;
6. minimal: unlock (the transaction keeps its consistent view);
7. scan the tables (``SELECT *``, unbuffered), then commit and unlock.

The global read lock makes 3-5 see one moment: rows the snapshot reads are exactly those
committed before the binlog position, so streaming from there loses and repeats nothing.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from connectors.jdbc.cdc.filters import Filters
from connectors.jdbc.mysql.config import LockingMode, MySqlCdcConfig
from connectors.jdbc.mysql.events import TableModel
from connectors.jdbc.mysql.server import ServerInfo, close_quietly, current_position

if TYPE_CHECKING:
    pass

__all__ = ["SnapshotPoint", "SnapshotReader", "SnapshotRow", "begin_snapshot", "quote"]

log = logging.getLogger(__name__)

SYSTEM_DATABASES = frozenset({"mysql", "information_schema", "performance_schema", "sys"})


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


@dataclass(frozen=True, slots=True)
class SnapshotPoint:
    file: str
    pos: int
    gtids: str | None


@dataclass(slots=True)
class SnapshotRow:
    model: TableModel
    values: tuple[Any, ...]
    marker: str = "true"


@dataclass(slots=True)
class SchemaSnapshot:
    point: SnapshotPoint
    #: (database, SHOW CREATE DATABASE text) of every database whose tables' schemas were read
    databases: list[tuple[str, str]]
    #: (database, table, SHOW CREATE TABLE text) of every table whose schema was read
    ddl: list[tuple[str, str, str]]
    captured: list[tuple[str, str]]


def captured_tables(
    conn: Any, filters: Filters, all_tables: bool
) -> tuple[list[str], list[tuple[str, str]], list[tuple[str, str]]]:
    """(databases whose schema to read, tables whose schema to read, tables to capture), the
    tables as (database, table)."""
    with conn.cursor() as cur:
        cur.execute("SHOW DATABASES")
        databases = [str(r[0]) for r in cur.fetchall() if str(r[0]).lower() not in SYSTEM_DATABASES]
        schemas: list[tuple[str, str]] = []
        captured: list[tuple[str, str]] = []
        selected: list[str] = []
        for db in databases:
            if not filters.captures_table(db, "") and not any(p.pattern for p in filters.table_include):
                pass
            cur.execute(f"SHOW FULL TABLES FROM {quote(db)} WHERE Table_type = 'BASE TABLE'")
            for name, _kind in cur.fetchall():
                table = str(name)
                capture = _captures(filters, db, table)
                if capture:
                    captured.append((db, table))
                if capture or (all_tables and _database_captured(filters, db)):
                    schemas.append((db, table))
            if (all_tables and _database_captured(filters, db)) or any(d == db for d, _ in schemas):
                selected.append(db)
    return selected, schemas, captured


def _database_captured(filters: Filters, db: str) -> bool:
    include, exclude = filters.schema_include, filters.schema_exclude
    if include:
        return any(p.fullmatch(db) for p in include)
    return not any(p.fullmatch(db) for p in exclude)


def _captures(filters: Filters, db: str, table: str) -> bool:
    return db.lower() not in SYSTEM_DATABASES and filters.captures_table(db, table)


def begin_snapshot(
    conn: Any, info: ServerInfo, config: MySqlCdcConfig, filters: Filters, store_all_schemas: bool
) -> tuple[SchemaSnapshot, bool]:
    """Steps 1-6 on ``conn`` (left inside the snapshot transaction). Returns the schemas and
    position, and whether locks are still held (released by ``SnapshotReader.finish``)."""
    import pymysql

    databases, schemas, captured = captured_tables(conn, filters, store_all_schemas)
    mode = config.locking_mode
    held = False
    global_lock = False
    with conn.cursor() as cur:
        cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        if mode is not LockingMode.NONE:
            try:
                cur.execute("FLUSH TABLES WITH READ LOCK")
                global_lock = True
                held = True
            except pymysql.err.OperationalError as exc:
                if not exc.args or exc.args[0] not in (1227, 1142, 1045):
                    raise
                log.warning(
                    "the global read lock is not allowed (%s); locking the %d tables instead, until "
                    "the snapshot is read",
                    exc.args[-1],
                    len(schemas),
                )
                if schemas:
                    cur.execute("LOCK TABLES " + ", ".join(f"{quote(d)}.{quote(t)} READ" for d, t in schemas))
                    held = True
        if global_lock or not held:
            # (Starting a transaction would release table locks: with those, the locks alone
            # keep the tables still while the snapshot reads them.)
            cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        file, pos, gtids = current_position(conn, info, config)
        created: list[tuple[str, str]] = []
        for db in databases:
            cur.execute(f"SHOW CREATE DATABASE {quote(db)}")
            created.append((db, str(cur.fetchone()[1])))
        ddl: list[tuple[str, str, str]] = []
        for db, table in schemas:
            cur.execute(f"SHOW CREATE TABLE {quote(db)}.{quote(table)}")
            ddl.append((db, table, str(cur.fetchone()[1])))
        if held and global_lock and mode is LockingMode.MINIMAL:
            cur.execute("UNLOCK TABLES")
            held = False
    log.info("snapshot at binlog %s:%d (gtids %s), %d tables captured", file, pos, gtids, len(captured))
    return SchemaSnapshot(SnapshotPoint(file, pos, gtids), created, ddl, captured), held


class SnapshotReader:
    """Reads the captured tables' rows inside the snapshot transaction, marking the first and
    last rows as Debezium does (first, first_in_data_collection, last_in_data_collection, last)."""

    def __init__(
        self,
        conn: Any,
        tables: list[TableModel],
        locked: bool,
        fetch_size: int,
    ) -> None:
        self.conn = conn
        self.tables = tables
        self.locked = locked
        self.fetch_size = fetch_size
        self.rows_read = 0
        self._index = -1
        self._cursor: Any = None
        self._held: SnapshotRow | None = None
        self._first = True
        self._table_first = False

    def _next_table(self) -> bool:
        if self._cursor is not None:
            self._cursor.close()
            self._cursor = None
        self._index += 1
        if self._index >= len(self.tables):
            return False
        table = self.tables[self._index].table
        import pymysql.cursors

        self._cursor = self.conn.cursor(pymysql.cursors.SSCursor)
        self._cursor.execute(f"SELECT * FROM {quote(table.database)}.{quote(table.name)}")
        self._table_first = True
        return True

    def read(self, limit: int) -> list[SnapshotRow]:
        """Up to ``limit`` rows; an empty list once every table was read."""
        out: list[SnapshotRow] = []
        while len(out) < limit:
            if self._cursor is None and not self._next_table():
                break
            rows = self._cursor.fetchmany(min(self.fetch_size, limit - len(out)))
            if not rows:
                if self._held is not None and self._held.model is self.tables[self._index]:
                    self._held.marker = (
                        "last_in_data_collection" if self._held.marker == "true" else self._held.marker
                    )
                if not self._next_table():
                    break
                continue
            model = self.tables[self._index]
            for values in rows:
                row = SnapshotRow(model, values)
                if self._first:
                    row.marker = "first"
                    self._first = False
                elif self._table_first:
                    row.marker = "first_in_data_collection"
                self._table_first = False
                if self._held is not None:
                    out.append(self._held)
                self._held = row
            self.rows_read += len(rows)
        if self._cursor is None and self._held is not None:
            self._held.marker = "last"
            out.append(self._held)
            self._held = None
        return out

    @property
    def done(self) -> bool:
        return self._cursor is None and self._index >= len(self.tables)

    def finish(self) -> None:
        with self.conn.cursor() as cur:
            cur.execute("COMMIT")
            if self.locked:
                cur.execute("UNLOCK TABLES")
        self.close()

    def close(self) -> None:
        if self._cursor is not None:
            with contextlib.suppress(Exception):  # a broken connection: closing it releases all
                self._cursor.close()
            self._cursor = None
        close_quietly(self.conn)


SnapshotModelOf = Callable[[str, str], TableModel | None]
