"""PostgreSQL errors, translated once into Connect's: retry, or fail saying what to fix.

::

    psycopg2.Error
    ├── the server is away (refused, restarting, shutting down, connection lost)
    │       → RetriableException: the task reconnects with backoff and resumes
    ├── wrong credentials, unknown database, no pg_hba.conf entry, missing privileges,
    │   no free replication slots or WAL senders, wal_level below logical
    │       → ConnectException naming the setting or the SQL that fixes it
    └── anything else → ConnectException with the server's message

Credentials never appear in messages (psycopg2 does not echo passwords).
"""

from __future__ import annotations

from typing import Any

from connect.api import ConnectException, RetriableException

__all__ = ["FatalDatabaseError", "translate"]

# Fragments of libpq/server messages that mean "the server is not there right now".
_TRANSIENT = (
    "connection refused",
    "could not connect to server",
    "connection to server at",
    "the database system is starting up",
    "the database system is shutting down",
    "the database system is in recovery mode",
    "the database system is not yet accepting connections",
    "server closed the connection unexpectedly",
    "terminating connection due to administrator command",
    "terminating walsender process",
    "connection already closed",
    "could not receive data from server",
    "could not send data to server",
    "no connection to the server",
    "ssl syscall error",
    "timeout expired",
    "canceling statement due to conflict with recovery",
    "cannot connect now",
    "server conn crashed",
    "no message from the libpq",  # the connection died in the middle of the replication stream
)
_CREDENTIALS = (
    "password authentication failed",
    "authentication failed for user",
    "no password supplied",
    "password is required",
    "is not permitted to log in",
)


class FatalDatabaseError(ConnectException):
    """A database problem no retry fixes; the message says what to change."""


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def translate(exc: BaseException, what: str, settings: Any) -> ConnectException:
    """The Connect exception for ``exc``, raised while ``what`` (e.g. "connecting to PostgreSQL").

    ``settings`` has ``hostname``, ``port``, ``user`` and ``dbname`` (the connector config).
    """
    if isinstance(exc, ConnectException):
        return exc
    message = str(exc)
    lower = message.lower()
    server = f"{settings.hostname}:{settings.port}"
    code = getattr(exc, "pgcode", None)
    if "does not exist" in lower and "database" in lower and f'"{settings.dbname.lower()}"' in lower:
        return FatalDatabaseError(
            f"database {settings.dbname!r} does not exist on PostgreSQL at {server}: check database.dbname"
        )
    unknown_role = 'role "' in lower and "does not exist" in lower
    if code in ("28P01", "28000") or unknown_role or any(f in lower for f in _CREDENTIALS):
        return FatalDatabaseError(
            f"cannot log in to PostgreSQL at {server} as user {settings.user!r} ({_first_line(exc)}): check "
            "database.user and database.password"
        )
    if "no pg_hba.conf entry" in lower:
        return FatalDatabaseError(
            f"PostgreSQL at {server} does not let user {settings.user!r} connect from this host "
            f"({_first_line(exc)}): add a pg_hba.conf entry for it (for both database "
            f"{settings.dbname!r} and 'replication' connections) and reload the server"
        )
    if (
        "must be superuser or replication role" in lower
        or "permission denied to start walsender" in lower
        or ("replication" in lower and "permission denied" in lower)
    ):
        return FatalDatabaseError(
            f"user {settings.user!r} may not use replication ({_first_line(exc)}): grant it with "
            f"ALTER ROLE {settings.user} REPLICATION"
        )
    if "logical decoding requires wal_level" in lower:
        return FatalDatabaseError(wal_level_message(server, "replica"))
    if "all replication slots are in use" in lower:
        return FatalDatabaseError(
            f"PostgreSQL at {server} has no free replication slot ({_first_line(exc)}): drop unused slots "
            "(SELECT pg_drop_replication_slot(name)) or raise max_replication_slots and restart the server"
        )
    if "number of requested standby connections exceeds" in lower or "max_wal_senders" in lower:
        return FatalDatabaseError(
            f"PostgreSQL at {server} has no free WAL sender ({_first_line(exc)}): raise max_wal_senders and "
            "restart the server"
        )
    if code == "42501" or "permission denied" in lower:
        return FatalDatabaseError(
            f"user {settings.user!r} lacks a privilege while {what} ({_first_line(exc)}): grant it, or let "
            "an administrator create the publication and set publication.autocreate.mode=disabled"
        )
    if any(f in lower for f in _TRANSIENT) or _is_connection_error(exc):
        return RetriableException(f"PostgreSQL at {server} is unavailable while {what}: {_first_line(exc)}")
    return ConnectException(f"PostgreSQL error while {what}: {message.strip()}")


def _is_connection_error(exc: BaseException) -> bool:
    try:
        import psycopg2
    except ImportError:  # pragma: no cover - the driver is a dependency
        return False
    if isinstance(exc, psycopg2.InterfaceError):
        return True
    # An error without an SQLSTATE comes from libpq, not the server: the connection itself failed.
    return (
        isinstance(exc, psycopg2.DatabaseError)
        and not isinstance(exc, psycopg2.ProgrammingError)
        and getattr(exc, "pgcode", None) is None
    )


def wal_level_message(server: str, level: str) -> str:
    return (
        f"PostgreSQL at {server} runs with wal_level={level}; logical decoding needs wal_level=logical: "
        "set wal_level = logical in postgresql.conf (or ALTER SYSTEM SET wal_level = logical) and restart "
        "the server"
    )
