"""What the PostgreSQL catalog says about tables, types, publications and slots.

pgoutput's Relation messages name a table's columns and their type OIDs, but not which
columns form the primary key, which are NOT NULL, nor what a non-built-in type is (an
enum's labels, a domain's base type, an array's element type). Debezium reads those from
the JDBC metadata; this module reads them from ``pg_catalog`` over an ordinary
connection. The catalog describes the tables as they are now, which can differ from the
WAL being decoded after an ``ALTER TABLE`` (Debezium has the same window).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from connectors.jdbc.cdc.values import PgType

__all__ = ["Catalog", "ColumnInfo", "SlotInfo", "TableInfo", "TableName"]


@dataclass(frozen=True, slots=True, order=True)
class TableName:
    schema: str
    table: str

    def __str__(self) -> str:
        return f"{self.schema}.{self.table}"

    def quoted(self) -> str:
        return f"{quote_ident(self.schema)}.{quote_ident(self.table)}"


@dataclass(frozen=True, slots=True)
class ColumnInfo:
    name: str
    pg_type: PgType
    modifier: int
    not_null: bool


@dataclass(frozen=True, slots=True)
class TableInfo:
    oid: int
    name: TableName
    columns: tuple[ColumnInfo, ...]  # in attnum order, without dropped and generated columns
    key_columns: tuple[str, ...]  # the primary key (or the replica identity index), in index order
    replica_identity: str  # d(efault), n(othing), f(ull), i(ndex)


@dataclass(frozen=True, slots=True)
class SlotInfo:
    name: str
    plugin: str | None
    slot_type: str
    database: str | None
    active: bool
    active_pid: int | None
    confirmed_flush_lsn: str | None
    wal_status: str | None  # PostgreSQL 13+: "lost" when the WAL it needs was removed


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def quote_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


_USER_TABLES = """
    SELECT c.oid, n.nspname, c.relname
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema')
      AND n.nspname NOT LIKE 'pg_toast%%' AND n.nspname NOT LIKE 'pg_temp%%'
"""


class Catalog:
    """Catalog queries over one psycopg2 connection (types are cached: they do not change
    under a running connector, apart from enums gaining labels, see ``forget_types``)."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self._types: dict[int, PgType] = {}

    def _rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self.conn.cursor() as cur:
            cur.execute(sql, args)
            return list(cur.fetchall())

    # -- server ----------------------------------------------------------------------------------

    def setting(self, name: str) -> str:
        return str(self._rows("SELECT current_setting(%s)", (name,))[0][0])

    def server_version(self) -> int:
        return int(self.setting("server_version_num"))

    def current_wal_lsn(self) -> str:
        return str(self._rows("SELECT pg_current_wal_lsn()")[0][0])

    # -- types -------------------------------------------------------------------------------------

    def forget_types(self) -> None:
        self._types.clear()

    def pg_type(self, oid: int) -> PgType:
        found = self._types.get(oid)
        if found is None:
            found = self._types[oid] = self._load_type(oid)
        return found

    def _load_type(self, oid: int) -> PgType:
        rows = self._rows(
            """
            SELECT t.typname, n.nspname, t.typtype, t.typcategory, t.typelem, t.typbasetype, t.typtypmod
            FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace WHERE t.oid = %s
            """,
            (oid,),
        )
        if not rows:
            return PgType(oid, f"unknown type {oid}", "", "p")
        name, namespace, kind, category, elem, base, base_modifier = rows[0]
        element = self.pg_type(int(elem)) if category == "A" and elem else None
        base_type = self.pg_type(int(base)) if kind == "d" and base else None
        labels: tuple[str, ...] = ()
        if kind == "e":
            labels = tuple(
                r[0]
                for r in self._rows(
                    "SELECT enumlabel FROM pg_enum WHERE enumtypid = %s ORDER BY enumsortorder", (oid,)
                )
            )
        return PgType(oid, name, namespace, kind, element, base_type, int(base_modifier), labels)

    # -- tables ------------------------------------------------------------------------------------

    def user_tables(self, publication: str | None = None) -> list[tuple[int, TableName]]:
        """Ordinary tables outside the system schemas (in ``publication`` if given), sorted by name."""
        sql = _USER_TABLES
        args: tuple[Any, ...] = ()
        if publication is not None:
            sql += """ AND EXISTS (SELECT 1 FROM pg_publication_tables p
                        WHERE p.pubname = %s AND p.schemaname = n.nspname AND p.tablename = c.relname)"""
            args = (publication,)
        rows = self._rows(sql + " ORDER BY 2, 3", args)
        return [(int(oid), TableName(schema, table)) for oid, schema, table in rows]

    def table(self, oid: int) -> TableInfo | None:
        """The table with this OID, or None if it no longer exists."""
        rows = self._rows(
            """
            SELECT n.nspname, c.relname, c.relreplident
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = %s
            """,
            (oid,),
        )
        if not rows:
            return None
        schema, name, identity = rows[0]
        columns = tuple(
            ColumnInfo(col, self.pg_type(int(type_oid)), int(modifier), bool(not_null))
            for col, type_oid, modifier, not_null in self._rows(
                """
                SELECT attname, atttypid, atttypmod, attnotnull FROM pg_attribute
                WHERE attrelid = %s AND attnum > 0 AND NOT attisdropped AND attgenerated = ''
                ORDER BY attnum
                """,
                (oid,),
            )
        )
        return TableInfo(oid, TableName(schema, name), columns, self._key_columns(oid), str(identity))

    def _key_columns(self, oid: int) -> tuple[str, ...]:
        rows = self._rows(
            """
            SELECT i.indisprimary, a.attname
            FROM pg_index i
            JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord) ON true
            JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
            WHERE i.indrelid = %s AND (i.indisprimary OR i.indisreplident)
            ORDER BY i.indisprimary DESC, k.ord
            """,
            (oid,),
        )
        primary = tuple(name for is_pk, name in rows if is_pk)
        return primary or tuple(name for _, name in rows)

    # -- publications and slots --------------------------------------------------------------------

    def publication(self, name: str) -> bool | None:
        """None if there is no such publication, else whether it is FOR ALL TABLES."""
        rows = self._rows("SELECT puballtables FROM pg_publication WHERE pubname = %s", (name,))
        return None if not rows else bool(rows[0][0])

    def slot(self, name: str) -> SlotInfo | None:
        rows = self._rows("SELECT row_to_json(s) FROM pg_replication_slots s WHERE slot_name = %s", (name,))
        if not rows:
            return None
        s: dict[str, Any] = rows[0][0]
        return SlotInfo(
            name=name,
            plugin=s.get("plugin"),
            slot_type=str(s.get("slot_type")),
            database=s.get("database"),
            active=bool(s.get("active")),
            active_pid=s.get("active_pid"),
            confirmed_flush_lsn=s.get("confirmed_flush_lsn"),
            wal_status=s.get("wal_status"),
        )
