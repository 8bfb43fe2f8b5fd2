"""MySQL/MariaDB errors, translated once into Connect's: retry, or fail saying what to fix.

::

    pymysql.Error / OSError
    ├── the server is away (refused, gone away, lost connection, shutting down)
    │       → RetriableException: the task reconnects with backoff from its last position
    ├── wrong credentials, missing privileges (REPLICATION SLAVE / CLIENT, BINLOG MONITOR, RELOAD),
    │   a duplicate server id, a purged binlog
    │       → ConnectException naming the setting or the GRANT that fixes it
    └── anything else → ConnectException with the server's message
"""

from __future__ import annotations

from typing import Any

from connect.api import ConnectException, RetriableException

__all__ = ["BinlogPurged", "FatalDatabaseError", "translate"]

# Client (20xx) and server codes that mean "the server is not there right now".
_TRANSIENT_CODES = frozenset({2002, 2003, 2006, 2013, 2055, 1053, 1927, 1152, 1158, 1159, 1160, 1161})
_ACCESS_DENIED = frozenset({1044, 1045, 1698})
_PRIVILEGE = frozenset({1227, 1142, 1143, 1370})
_BINLOG_GONE = 1236  # ER_MASTER_FATAL_ERROR_READING_BINLOG


class FatalDatabaseError(ConnectException):
    """A database problem no retry fixes; the message says what to change."""


class BinlogPurged(FatalDatabaseError):
    """The server no longer has the binlog position the connector needs."""


GRANT_HINT = (
    "GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '<user>' "
    "(MariaDB 10.5+: REPLICATION SLAVE, BINLOG MONITOR instead of REPLICATION CLIENT)"
)


def _code(exc: BaseException) -> int | None:
    args: tuple[Any, ...] = getattr(exc, "args", ())
    if args and isinstance(args[0], int):
        return args[0]
    return None


def _message(exc: BaseException) -> str:
    args: tuple[Any, ...] = getattr(exc, "args", ())
    if len(args) >= 2 and isinstance(args[1], str):
        return args[1]
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def translate(exc: BaseException, what: str, settings: Any) -> ConnectException:
    """The Connect exception for ``exc``, raised while ``what`` (e.g. "reading the binlog").

    ``settings`` has ``hostname``, ``port``, ``user`` and ``server_id`` (the connector config).
    """
    if isinstance(exc, ConnectException):
        return exc
    server = f"{settings.hostname}:{settings.port}"
    code = _code(exc)
    message = _message(exc)
    lower = message.lower()
    if code in _ACCESS_DENIED:
        return FatalDatabaseError(
            f"cannot log in to {server} as user {settings.user!r} ({message}): check database.user and "
            "database.password"
        )
    if code in _PRIVILEGE or "access denied" in lower:
        return FatalDatabaseError(
            f"user {settings.user!r} lacks a privilege while {what} ({message}): the connector needs "
            + GRANT_HINT.replace("<user>", settings.user)
        )
    if code == _BINLOG_GONE:
        if "server_id" in lower or "server-id" in lower or "same server" in lower or "server id" in lower:
            return FatalDatabaseError(
                f"{server} refused the binlog connection ({message}): another replica or connector uses "
                f"database.server.id={settings.server_id}; give this connector a unique one"
            )
        if (
            "could not find" in lower
            or "purged" in lower
            or "first log file" in lower
            or "not found" in lower
        ):
            return BinlogPurged(
                f"{server} no longer has the binlog the connector needs ({message}); set snapshot.mode="
                "when_needed to take a new snapshot, or delete the connector's offsets to start over"
            )
        return FatalDatabaseError(f"{server} stopped sending the binlog while {what}: {message}")
    if code in _TRANSIENT_CODES or (code is None and isinstance(exc, OSError | EOFError)):
        return RetriableException(f"{server} is unavailable while {what}: {message}")
    if type(exc).__name__ in ("OperationalError", "InterfaceError") and (code is None or code >= 2000):
        return RetriableException(f"{server} is unavailable while {what}: {message}")
    return ConnectException(f"MySQL error while {what} on {server}: {message}")
