"""Shared by the query-based JDBC source tests: a fresh database per test on SQLite,
PostgreSQL or MariaDB (the session's throwaway servers), and the SQL that differs
between them. No tests here; import the ``*_fixture`` functions to use the fixtures they name."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from tests.databases import MariaDBServer, PostgresServer

KINDS = ("sqlite", "postgresql", "mariadb")


@dataclass
class TestDatabase:
    """One empty database the test owns, with the DDL spellings of its kind."""

    __test__ = False  # not a test class, despite its name

    kind: str
    url: str
    name: str
    engine: sa.Engine = field(repr=False)
    #: Runs a statement on the server's maintenance database (PostgreSQL only).
    server: PostgresServer | None = field(default=None, repr=False)

    @property
    def serial(self) -> str:
        """An auto-increment integer primary key column's type."""
        return {
            "sqlite": "INTEGER PRIMARY KEY AUTOINCREMENT",
            "postgresql": "SERIAL PRIMARY KEY",
            "mariadb": "INT AUTO_INCREMENT PRIMARY KEY",
        }[self.kind]

    @property
    def timestamp(self) -> str:
        """A timestamp type with millisecond precision and no time zone."""
        return {"sqlite": "TIMESTAMP", "postgresql": "TIMESTAMP(3)", "mariadb": "DATETIME(3)"}[self.kind]

    def fqn(self, table: str) -> str:
        """The name offsets are keyed by: schema- or database-qualified as the database has it."""
        return {"sqlite": table, "postgresql": f"public.{table}", "mariadb": f"{self.name}.{table}"}[
            self.kind
        ]

    def run(self, *statements: str) -> None:
        """Run statements in one committed transaction."""
        with self.engine.begin() as connection:
            for statement in statements:
                connection.exec_driver_sql(statement)

    def rows(self, statement: str) -> list[Any]:
        with self.engine.connect() as connection:
            return list(connection.exec_driver_sql(statement).fetchall())

    def now_sql(self, offset_ms: int = 0) -> str:
        """SQL for the database's current UTC time plus ``offset_ms``, as a naive timestamp."""
        seconds = offset_ms / 1000
        if self.kind == "sqlite":
            return f"strftime('%Y-%m-%d %H:%M:%f', 'now', '{seconds:+.3f} seconds')"
        if self.kind == "postgresql":
            return f"((now() AT TIME ZONE 'UTC') + interval '{seconds:.3f} seconds')"
        return f"(UTC_TIMESTAMP(3) + INTERVAL {int(offset_ms * 1000)} MICROSECOND)"


def make_database(request: pytest.FixtureRequest, kind: str, tmp_path: Path) -> Iterator[TestDatabase]:
    name = f"q_{uuid.uuid4().hex[:12]}"
    if kind == "sqlite":
        url = f"sqlite:///{tmp_path / (name + '.db')}"
        engine = sa.create_engine(url)
        try:
            yield TestDatabase(kind, url, name, engine)
        finally:
            engine.dispose()
        return
    if kind == "postgresql":
        pg: PostgresServer = request.getfixturevalue("postgres")
        pg.execute(f"CREATE DATABASE {name}")
        url = pg.url(name)
        engine = sa.create_engine(url)
        try:
            yield TestDatabase(kind, url, name, engine, pg)
        finally:
            engine.dispose()
            pg.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        return
    maria: MariaDBServer = request.getfixturevalue("mariadb")
    maria.execute(f"CREATE DATABASE {name}")
    url = maria.url(name)
    engine = sa.create_engine(url)
    try:
        yield TestDatabase(kind, url, name, engine)
    finally:
        engine.dispose()
        maria.execute(f"DROP DATABASE IF EXISTS {name}")


@pytest.fixture(name="db", params=KINDS)
def db_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TestDatabase]:
    """A fresh database of each kind in turn."""
    yield from make_database(request, request.param, tmp_path)


@pytest.fixture(name="sqlite_db")
def sqlite_db_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TestDatabase]:
    yield from make_database(request, "sqlite", tmp_path)


@pytest.fixture(name="pg_db")
def pg_db_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TestDatabase]:
    yield from make_database(request, "postgresql", tmp_path)


@pytest.fixture(name="maria_db")
def maria_db_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TestDatabase]:
    yield from make_database(request, "mariadb", tmp_path)
