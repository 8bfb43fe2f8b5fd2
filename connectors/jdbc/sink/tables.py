"""The target tables: reflected once, created (``auto.create``) and given missing columns
(``auto.evolve``) from the records' schemas, as Confluent's ``DbStructure`` does.

Evolution only ADDs columns, each nullable or with a default (a required field without a
default cannot be added to a table holding rows: refused, naming table and field); it
never drops or retypes one. Tables are reflected when first used and after a change, not
per record. With ``quote.sql.identifiers=never`` (Debezium: ``quote.identifiers=false``)
names are written bare, so PostgreSQL folds them to lower case, as in Confluent's sink.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.schema import CreateColumn
from sqlalchemy.sql.elements import quoted_name

from connect.api import ConnectException
from connectors.jdbc.sink.config import SinkSettings
from connectors.jdbc.sink.records import ColumnDef
from connectors.jdbc.sink.types import column_type

log = logging.getLogger(__name__)

#: MySQL/MariaDB tables take the database's default character set, often latin1 or the
#: three-byte utf8; records carry any Unicode text. Other databases ignore these options.
TABLE_OPTIONS: dict[str, Any] = {"mysql_charset": "utf8mb4", "mysql_collate": "utf8mb4_bin"}


class Tables:
    """Reflected tables by name, for one database."""

    def __init__(self, settings: SinkSettings, dialect: str) -> None:
        self.settings = settings
        self.dialect = dialect
        self._tables: dict[str, sa.Table] = {}

    def name(self, name: str) -> str:
        if self.settings.quote:
            return quoted_name(name, True)
        # Bare names: PostgreSQL folds them to lower case, MySQL/SQLite keep them.
        return quoted_name(name.lower() if self.dialect == "postgresql" else name, False)

    def forget(self, name: str | None = None) -> None:
        if name is None:
            self._tables.clear()
        else:
            self._tables.pop(name, None)

    def find(self, connection: Connection, name: str) -> sa.Table | None:
        """The table, reflected; None when it does not exist."""
        table = self._tables.get(name)
        if table is not None:
            return table
        inspector = sa.inspect(connection)
        real = self.name(name)
        if not inspector.has_table(real):
            return None
        if "VIEW" not in self.settings.table_types and real in inspector.get_view_names():
            raise ConnectException(f"{name} is a view, and table.types does not include VIEW")
        table = sa.Table(real, sa.MetaData(), autoload_with=connection)
        self._tables[name] = table
        return table

    def ensure(self, connection: Connection, name: str, columns: Sequence[ColumnDef]) -> sa.Table:
        """The table, with every column of ``columns``: created or evolved as allowed."""
        table = self.find(connection, name)
        if table is None:
            if not self.settings.auto_create:
                raise ConnectException(
                    f"table {name} does not exist in {self.settings.shown_url} and auto.create is off "
                    "(Debezium: schema.evolution=none)"
                )
            self._create(connection, name, columns)
        else:
            missing = [c for c in columns if self._column(table, c.name) is None]
            if not missing:
                return table
            if not self.settings.auto_evolve:
                names = ", ".join(c.name for c in missing)
                raise ConnectException(
                    f"table {name} has no column(s) {names} and auto.evolve is off "
                    "(Debezium: schema.evolution=none)"
                )
            self._evolve(connection, name, table, missing)
        self.forget(name)
        found = self.find(connection, name)
        assert found is not None
        return found

    def _column(self, table: sa.Table, name: str) -> sa.Column[Any] | None:
        wanted = self.name(name)
        return table.c.get(wanted)

    def _column_of(self, c: ColumnDef, primary: bool) -> sa.Column[Any]:
        try:
            sql_type = column_type(c.schema, self.dialect, key=c.key)
        except ValueError as exc:
            raise ConnectException(f"column {c.name}: {exc}") from None
        default = c.schema.default_value
        server_default = None
        if default is not None and isinstance(default, (bool, int, float, str)) and c.schema.name is None:
            server_default = sa.text(_literal(default, self.dialect))
        return sa.Column(
            self.name(c.name),
            sql_type,
            primary_key=primary,
            nullable=not primary and c.schema.optional,
            server_default=server_default,
            autoincrement=False,
        )

    def _create(self, connection: Connection, name: str, columns: Sequence[ColumnDef]) -> None:
        table = sa.Table(
            self.name(name),
            sa.MetaData(),
            *(self._column_of(c, c.key) for c in columns),
            **TABLE_OPTIONS,
        )
        log.info("creating table %s", name)
        table.create(connection, checkfirst=True)

    def _evolve(
        self, connection: Connection, name: str, table: sa.Table, missing: Sequence[ColumnDef]
    ) -> None:
        for c in missing:
            if not c.schema.optional and c.schema.default_value is None:
                raise ConnectException(
                    f"cannot add column {c.name} to table {name}: the field is required and has no default "
                    "(auto.evolve adds only optional fields or fields with a default)"
                )
        preparer = connection.dialect.identifier_preparer
        for c in missing:
            column = self._column_of(c, False)
            spec = CreateColumn(column).compile(dialect=connection.dialect)
            log.info("adding column %s to table %s", c.name, name)
            connection.execute(sa.text(f"ALTER TABLE {preparer.format_table(table)} ADD {spec}"))


def _literal(value: bool | int | float | str, dialect: str) -> str:
    if isinstance(value, bool):
        return ("TRUE" if value else "FALSE") if dialect == "postgresql" else str(int(value))
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + value.replace("'", "''") + "'"
