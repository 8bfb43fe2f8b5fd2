"""Throwaway database servers for the JDBC tests, one of each per test session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.databases import MariaDBServer, PostgresServer, ServerUnavailable


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """PostgreSQL with wal_level=logical, on an ephemeral port; create a database per test."""
    server = PostgresServer()
    try:
        server.start()
    except ServerUnavailable as exc:
        pytest.skip(str(exc))
    try:
        yield server
    finally:
        server.remove()


@pytest.fixture(scope="session")
def mariadb() -> Iterator[MariaDBServer]:
    """MariaDB on an ephemeral port, root without a password, database ``test``."""
    server = MariaDBServer()
    try:
        server.start()
    except ServerUnavailable as exc:
        pytest.skip(str(exc))
    try:
        yield server
    finally:
        server.remove()
