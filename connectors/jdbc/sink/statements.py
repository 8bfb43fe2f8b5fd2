"""The statements a batch runs: INSERT, upsert, UPDATE and DELETE of one table, built with
SQLAlchemy's dialect constructs and no I/O.

Parameters are named ``p0``, ``p1``... in column order (key columns first), so one row of
values serves every statement of a table: ``executemany`` gets a list of such rows.

Upserts, per database (Confluent's forms):

- PostgreSQL and SQLite: ``INSERT ... ON CONFLICT (keys) DO UPDATE SET c = excluded.c``,
  ``DO NOTHING`` when every column is a key column;
- MySQL/MariaDB: ``INSERT ... ON DUPLICATE KEY UPDATE c = VALUES(c)``, the key columns
  assigned to themselves when there are no others;
- any other database: refused (``UnsupportedUpsert``), as Confluent's generic dialect does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import mysql, postgresql, sqlite
from sqlalchemy.engine import URL
from sqlalchemy.sql.dml import Delete, Insert, Update

from connectors.jdbc.sink.config import InsertMode


class UnsupportedUpsert(ValueError):
    """The database has no upsert the sink knows."""


def param(i: int) -> str:
    return f"p{i}"


def _binds(table: sa.Table, names: Sequence[str], start: int = 0) -> dict[str, Any]:
    return {name: sa.bindparam(param(start + i), type_=table.c[name].type) for i, name in enumerate(names)}


def _key_clause(table: sa.Table, keys: Sequence[str]) -> sa.ColumnElement[bool]:
    return sa.and_(
        *(table.c[name] == sa.bindparam(param(i), type_=table.c[name].type) for i, name in enumerate(keys))
    )


def write_statement(
    table: sa.Table, keys: Sequence[str], values: Sequence[str], mode: InsertMode, dialect: str
) -> Insert | Update:
    """The statement writing rows of ``keys`` + ``values`` (parameters ``p0``... in that order)."""
    if mode == "update":
        if not keys:
            raise ValueError("update needs key columns")
        if not values:
            # Nothing to set: a no-op update that still matches the key (Confluent's sink
            # writes nothing either).
            return sa.update(table).where(_key_clause(table, keys)).values(_binds(table, keys))
        return sa.update(table).where(_key_clause(table, keys)).values(_binds(table, values, len(keys)))
    binds = _binds(table, [*keys, *values])
    if mode == "insert":
        return sa.insert(table).values(binds)
    if not keys:
        raise ValueError("upsert needs key columns")
    if dialect == "postgresql":
        pg = postgresql.insert(table).values(binds)
        if not values:
            return pg.on_conflict_do_nothing(index_elements=[table.c[k] for k in keys])
        return pg.on_conflict_do_update(
            index_elements=[table.c[k] for k in keys], set_={v: pg.excluded[v] for v in values}
        )
    if dialect == "sqlite":
        lite = sqlite.insert(table).values(binds)
        if not values:
            return lite.on_conflict_do_nothing(index_elements=[table.c[k] for k in keys])
        return lite.on_conflict_do_update(
            index_elements=[table.c[k] for k in keys], set_={v: lite.excluded[v] for v in values}
        )
    if dialect in ("mysql", "mariadb"):
        my = mysql.insert(table).values(binds)
        return my.on_duplicate_key_update({c: my.inserted[c] for c in (values or keys)})
    raise UnsupportedUpsert(
        f"insert.mode=upsert is not supported on {dialect} databases (PostgreSQL, MySQL/MariaDB and "
        "SQLite are); use insert or update"
    )


def delete_statement(table: sa.Table, keys: Sequence[str]) -> Delete:
    """DELETE by the key columns (parameters ``p0``... in key order)."""
    if not keys:
        raise ValueError("delete needs key columns")
    return sa.delete(table).where(_key_clause(table, keys))


def sql_text(statement: sa.ClauseElement, dialect: str) -> str:
    """The statement as the database gets it (for logs and tests)."""
    chosen = URL.create(dialect).get_dialect()()
    return str(statement.compile(dialect=chosen))
