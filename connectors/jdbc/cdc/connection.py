"""Opening the connector's PostgreSQL connections (psycopg2), all with the same session settings.

Three kinds, all to ``database.dbname``: a *metadata* connection (autocommit: catalog
queries, publication and slot management), a *snapshot* connection (one REPEATABLE READ
transaction) and a *replication* connection (the walsender protocol, psycopg2's
``LogicalReplicationConnection``; psycopg 3 has no replication protocol).

Every value the connector parses is text printed by the server, so every connection
fixes the formats: ISO dates, ISO-8601 intervals, UTC, shortest-exact floats, hex bytea,
``$1,234.56`` money, UTF-8.

The replication connection also turns ``wal_sender_timeout`` off. On a keepalive,
psycopg2 raises the flush position it reports to the keepalive's WAL end whenever the
last message it read carries no LSN (Relation messages carry none); a keepalive between
the messages of a transaction, which the server only sends when it is about to time the
client out, could then confirm transactions Kafka does not have yet. Without the
timeout, keepalives only come between transactions, and the reported position never
passes a record the broker has not acknowledged. TCP keepalives still notice a dead
connector.
"""

from __future__ import annotations

import contextlib
from typing import Any, Protocol

from connect.api import SecretStr
from connectors.jdbc.cdc.faults import translate

__all__ = ["REPLICATION_OPTIONS", "SESSION_OPTIONS", "ConnectionSettings", "close_quietly", "connect"]

SESSION_OPTIONS = (
    "-c DateStyle=ISO -c IntervalStyle=iso_8601 -c TimeZone=UTC -c extra_float_digits=3 "
    "-c bytea_output=hex -c lc_monetary=C -c client_encoding=UTF8"
)
REPLICATION_OPTIONS = SESSION_OPTIONS + " -c wal_sender_timeout=0"
_CONNECT_TIMEOUT_S = 10


class ConnectionSettings(Protocol):
    @property
    def hostname(self) -> str: ...
    @property
    def port(self) -> int: ...
    @property
    def user(self) -> str: ...
    @property
    def password(self) -> SecretStr | None: ...
    @property
    def dbname(self) -> str: ...
    @property
    def sslmode(self) -> str: ...


def connect(settings: ConnectionSettings, *, replication: bool = False, autocommit: bool = True) -> Any:
    """A psycopg2 connection; failures become ``RetriableException`` or a fatal ``ConnectException``."""
    import psycopg2
    import psycopg2.extras

    kwargs: dict[str, Any] = {
        "host": settings.hostname,
        "port": settings.port,
        "user": settings.user,
        "dbname": settings.dbname,
        "sslmode": settings.sslmode,
        "connect_timeout": _CONNECT_TIMEOUT_S,
        "application_name": "sluiceway-postgres-cdc",
        "options": REPLICATION_OPTIONS if replication else SESSION_OPTIONS,
        # A dead peer must not hang a poll forever: TCP keepalives notice it.
        "keepalives": 1,
        "keepalives_idle": 30,
        "keepalives_interval": 10,
        "keepalives_count": 3,
    }
    if settings.password is not None:
        kwargs["password"] = settings.password.get_secret_value()
    if replication:
        kwargs["connection_factory"] = psycopg2.extras.LogicalReplicationConnection
    try:
        conn = psycopg2.connect(**kwargs)
    except psycopg2.Error as exc:
        kind = "a replication connection to" if replication else "connecting to"
        raise translate(exc, f"opening {kind} PostgreSQL", settings) from None
    if not replication:
        conn.autocommit = autocommit
    return conn


def close_quietly(conn: Any) -> None:
    if conn is None:
        return
    # Closing a broken connection may fail; it is gone either way.
    with contextlib.suppress(Exception):
        conn.close()
