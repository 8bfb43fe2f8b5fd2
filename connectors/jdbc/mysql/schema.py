"""The MySQL/MariaDB table model the connector keeps in step with the binlog, and its catalog.

Binlog row events carry values by column position only, so the connector must know every
table's columns at every binlog position: it builds them from ``SHOW CREATE TABLE`` during
the snapshot and replays each DDL statement of the binlog (``SchemaCatalog.apply``), as
Debezium's MySQL connector does with its in-memory ``Tables``. Everything here is pure: no
I/O, so the catalog can be rebuilt from the schema history topic and tested exhaustively.

Names are matched case-insensitively: MySQL column names always are, table and database
names are where ``lower_case_table_names`` is 1 or 2 (Windows, macOS; on Linux with 0 two
tables differing only in case would share one entry). The model keeps the spelling of the DDL
that created it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Literal

from connect.api import ConnectException

__all__ = ["DdlError", "MySqlColumn", "MySqlTable", "SchemaCatalog", "TableChange"]


@dataclass(frozen=True)
class MySqlColumn:
    """One column as ``SHOW CREATE TABLE`` describes it.

    ``type_name`` is the upper-case base type as MySQL names it, aliases normalised
    (``INTEGER`` -> ``INT``, ``BOOL`` -> ``BOOLEAN``, ``DEC``/``NUMERIC``/``FIXED`` ->
    ``DECIMAL``, ``REAL``/``DOUBLE PRECISION`` -> ``DOUBLE``, ...). ``length`` is the
    ``(n)`` of the type: the length of character and binary types, the display width of
    integers, the precision of DECIMAL/FLOAT/DOUBLE, the fractional seconds of TIME/DATETIME/
    TIMESTAMP. ``default`` is the default expression's SQL text as written (string literals
    quoted, ``current_timestamp(3)``, ``(1 + 2)``...); ``"NULL"`` for ``DEFAULT NULL``, which
    MySQL implies for a nullable column without DEFAULT; ``None`` when the column has no default
    (NOT NULL without DEFAULT, AUTO_INCREMENT, generated). ``schema_changes.debezium_default``
    gives Debezium's reading of it. ``charset`` is the column's own character set, ``None``
    when it takes the table's (``MySqlTable.default_charset``).
    """

    name: str
    type_name: str
    position: int
    length: int | None = None
    scale: int | None = None
    unsigned: bool = False
    optional: bool = True
    auto_increment: bool = False
    default: str | None = None
    enum_values: tuple[str, ...] = ()
    charset: str | None = None
    jdbc_type: int = 0
    # Beyond the contract: what Debezium's history records and MySQL's DDL also say.
    zerofill: bool = False
    collation: str | None = None
    comment: str | None = None
    generated: bool = False
    on_update: str | None = None
    type_expression: str | None = None

    def renamed(self, name: str) -> MySqlColumn:
        return replace(self, name=name)


@dataclass(frozen=True)
class MySqlTable:
    """One table: its columns in position order, primary key and default character set."""

    database: str
    name: str
    columns: tuple[MySqlColumn, ...]
    primary_key: tuple[str, ...] = ()
    default_charset: str | None = None
    comment: str | None = None
    # MariaDB's WITH SYSTEM VERSIONING without declared row_start/row_end columns: binlog row
    # images carry two more values (row_start, row_end), after the columns here.
    hidden_row_period: bool = False

    @property
    def id(self) -> str:
        return f"{self.database}.{self.name}"

    def column(self, name: str) -> MySqlColumn | None:
        wanted = name.lower()
        for column in self.columns:
            if column.name.lower() == wanted:
                return column
        return None

    def with_columns(self, columns: Iterable[MySqlColumn]) -> MySqlTable:
        """This table with ``columns`` renumbered 1..n in the given order."""
        numbered = tuple(replace(c, position=i) for i, c in enumerate(columns, start=1))
        return replace(self, columns=numbered)


@dataclass(frozen=True)
class TableChange:
    """What one DDL statement did to one table, as Debezium's ``TableChanges`` records it.

    ``previous_id`` names the table before a rename (``RENAME TABLE``, ``ALTER TABLE ...
    RENAME TO``), which Debezium reports as an ALTER of the new id.
    """

    type: Literal["CREATE", "ALTER", "DROP"]
    id: str
    table: MySqlTable | None
    previous_id: str | None = None


class DdlError(ConnectException):
    """A table DDL statement the parser cannot read; the message names the statement."""


def _key(database: str, name: str) -> tuple[str, str]:
    return database.lower(), name.lower()


@dataclass
class SchemaCatalog:
    """Every known table's schema at one binlog position; mutable, pure (no I/O)."""

    _tables: dict[tuple[str, str], MySqlTable] = field(default_factory=dict)
    # Default character sets of the databases CREATE/ALTER DATABASE named (lower-case keys).
    _database_charsets: dict[str, str | None] = field(default_factory=dict)

    def table(self, database: str, name: str) -> MySqlTable | None:
        return self._tables.get(_key(database, name))

    def tables(self) -> list[MySqlTable]:
        return sorted(self._tables.values(), key=lambda t: (t.database.lower(), t.name.lower()))

    def databases(self) -> list[str]:
        """Databases created by DDL or holding a known table (lower-case)."""
        return sorted(set(self._database_charsets) | {db for db, _ in self._tables})

    def database_charset(self, database: str) -> str | None:
        return self._database_charsets.get(database.lower())

    def put(self, table: MySqlTable) -> None:
        self._tables[_key(table.database, table.name)] = table

    def remove(self, database: str, name: str) -> MySqlTable | None:
        return self._tables.pop(_key(database, name), None)

    def add_database(self, database: str, charset: str | None) -> None:
        self._database_charsets[database.lower()] = charset

    def drop_database(self, database: str) -> list[MySqlTable]:
        """Forget the database and return the tables it held."""
        self._database_charsets.pop(database.lower(), None)
        dropped = [t for k, t in self._tables.items() if k[0] == database.lower()]
        for table in dropped:
            self.remove(table.database, table.name)
        return sorted(dropped, key=lambda t: t.name.lower())

    def apply(self, ddl: str, default_database: str | None) -> list[TableChange]:
        """Parse one QueryEvent's text (it may hold several statements) and apply it.

        Returns the tables each statement created, altered or dropped, in order; statements
        that change no table (BEGIN, GRANT, CREATE USER, SET, views, routines, TRUNCATE...)
        add nothing. Raises ``DdlError`` for table DDL it cannot read, leaving the tables of
        the statements before it applied; callers decide whether to go on
        (``schema.history.internal.skip.unparseable.ddl``).
        """
        # ddl.py builds columns from this module's classes, hence the late import.
        from connectors.jdbc.mysql.ddl import apply_ddl

        return apply_ddl(self, ddl, default_database)

    def copy(self) -> SchemaCatalog:
        return SchemaCatalog(dict(self._tables), dict(self._database_charsets))
