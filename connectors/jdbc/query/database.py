"""The database connection: one SQLAlchemy engine, connections made with retries.

``Database.connect`` tries ``connection.attempts`` times, ``connection.backoff.ms``
apart (waking at once when the owner stops), then raises ``ConnectException`` with
the driver's own words (wrong password, unknown database, connection refused) and
the URL without its password. A task keeps one connection (``connection()``) and
drops it when the driver reports it lost (``discard``); the next call reconnects.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import URL, Connection, Engine

from connect.api import ConnectException
from connectors.jdbc.query.dialects import DatabaseDialect, dialect_for

if TYPE_CHECKING:
    from connectors.jdbc.query.config import JdbcSourceConfig

log = logging.getLogger(__name__)

# libpq otherwise waits for the operating system's TCP timeout (minutes) on a host that
# drops packets; PyMySQL's default is 10 s too.
_CONNECT_TIMEOUT_S = 10


class Stopped(Exception):
    """The owner was stopped while waiting to connect again."""


def describe_error(error: BaseException) -> str:
    """The driver's message, without SQLAlchemy's statement echo and help link."""
    if isinstance(error, sa_exc.DBAPIError) and error.orig is not None:
        return f"{type(error.orig).__name__}: {str(error.orig).strip()}"
    return f"{type(error).__name__}: {error}"


class Database:
    """An engine for ``url`` whose sessions use ``db.timezone`` (``zone_name``)."""

    def __init__(
        self,
        url: URL,
        *,
        attempts: int = 3,
        backoff_s: float = 10.0,
        zone_name: str = "UTC",
        zone: dt.tzinfo = dt.UTC,
        stopping: threading.Event | None = None,
    ) -> None:
        self.url = url
        self.shown_url = url.render_as_string(hide_password=True)
        self.attempts = attempts
        self.backoff_s = backoff_s
        self.zone_name = zone_name
        self.zone = zone
        self.stopping = stopping or threading.Event()
        connect_args: dict[str, Any] = {}
        if url.get_backend_name() == "postgresql" and "connect_timeout" not in url.query:
            connect_args["connect_timeout"] = _CONNECT_TIMEOUT_S
        if url.get_driver_name() == "psycopg":
            # psycopg prepares statements run often; a prepared SELECT * fails once the table
            # gains or loses a column ("cached plan must not change result type").
            connect_args["prepare_threshold"] = None
        self.engine: Engine = sa.create_engine(url, connect_args=connect_args)
        self.dialect: DatabaseDialect = dialect_for(self.engine.dialect.name)
        sa.event.listen(self.engine, "connect", self._on_connect)
        self._connection: Connection | None = None

    @classmethod
    def from_config(cls, config: JdbcSourceConfig, stopping: threading.Event) -> Database:
        """The database ``config`` names, with its retry and time zone settings."""
        return cls(
            config.url().url,
            attempts=config.connection_attempts,
            backoff_s=config.connection_backoff_ms / 1000,
            zone_name=config.db_timezone,
            zone=config.zone,
            stopping=stopping,
        )

    def _on_connect(self, dbapi_connection: Any, _record: Any) -> None:
        self.dialect.prepare_session(dbapi_connection, self.zone_name, self.zone)

    def connect(self) -> Connection:
        """A new connection, after up to ``attempts`` tries; ConnectException naming the
        problem when none succeeds, ``Stopped`` when the owner stops meanwhile."""
        last: BaseException | None = None
        for attempt in range(1, self.attempts + 1):
            if self.stopping.is_set():
                raise Stopped()
            try:
                return self.engine.connect()
            except sa_exc.DBAPIError as exc:
                last = exc
                log.warning(
                    "connection attempt %d of %d to %s failed: %s",
                    attempt,
                    self.attempts,
                    self.shown_url,
                    describe_error(exc),
                )
            if attempt < self.attempts and self.stopping.wait(self.backoff_s):
                raise Stopped()
        assert last is not None
        raise ConnectException(
            f"could not connect to {self.shown_url} after {self.attempts} attempt(s): {describe_error(last)}"
        ) from last

    def connection(self) -> Connection:
        """The kept connection, (re)connecting when there is none."""
        if self._connection is None or self._connection.closed or self._connection.invalidated:
            self._connection = None
            self._connection = self.connect()
        return self._connection

    def discard(self) -> None:
        """Drop the kept connection (it was lost, or is in an unknown state)."""
        connection, self._connection = self._connection, None
        if connection is not None:
            try:
                connection.invalidate()
                connection.close()
            except Exception:  # already broken: nothing more to release
                log.debug("closing a lost connection to %s failed", self.shown_url, exc_info=True)

    def end_transaction(self) -> None:
        """Commit the read transaction, so that the next statement sees a new snapshot."""
        if self._connection is not None and self._connection.in_transaction():
            self._connection.commit()

    def close(self) -> None:
        connection, self._connection = self._connection, None
        try:
            if connection is not None:
                connection.close()
        finally:
            self.engine.dispose()
