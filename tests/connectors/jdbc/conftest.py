"""Throwaway database servers for the JDBC tests, one of each per test session."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypeVar

import pytest

from tests.databases import MariaDBServer, PostgresServer, ServerUnavailable

# MariaDB's settings for change data capture: a row-based binlog with full row images.
BINLOG_SETTINGS = {
    "log-bin": "mysql-bin",
    "binlog-format": "ROW",
    "server-id": "1",
    "binlog-row-image": "FULL",
}

_Server = TypeVar("_Server", PostgresServer, MariaDBServer)


def _serve(server: _Server) -> Iterator[_Server]:
    """Start ``server`` for the session (skipping where it cannot run) and remove it after."""
    try:
        server.start()
    except ServerUnavailable as exc:
        pytest.skip(str(exc))
    try:
        yield server
    finally:
        server.remove()


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """PostgreSQL with wal_level=logical, on an ephemeral port; create a database per test."""
    yield from _serve(PostgresServer())


@pytest.fixture(scope="session")
def mariadb() -> Iterator[MariaDBServer]:
    """MariaDB on an ephemeral port, root without a password, database ``test``."""
    yield from _serve(MariaDBServer())


@pytest.fixture(scope="session")
def mariadb_binlog() -> Iterator[MariaDBServer]:
    """MariaDB with a row-based binlog (full row images), root without a password."""
    yield from _serve(MariaDBServer(BINLOG_SETTINGS))
