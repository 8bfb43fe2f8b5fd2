"""Talking to the server outside the binlog stream: connections, settings the connector
needs, binlog positions and files (pymysql)."""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from typing import Any

from connectors.jdbc.mysql.config import MySqlCdcConfig
from connectors.jdbc.mysql.faults import GRANT_HINT, FatalDatabaseError

__all__ = [
    "ServerInfo",
    "binlog_files",
    "check_server",
    "close_quietly",
    "connect",
    "current_position",
    "open_binlog",
]


def connect(config: MySqlCdcConfig, streaming: bool = False) -> Any:
    """A pymysql connection: utf8mb4, UTC session time zone, autocommit. ``streaming``
    makes the default cursor unbuffered (the snapshot's table scans)."""
    import pymysql
    import pymysql.cursors

    password = config.password.get_secret_value() if config.password is not None else ""
    return pymysql.connect(
        host=config.hostname,
        port=config.port,
        user=config.user,
        password=password,
        charset="utf8mb4",
        autocommit=True,
        connect_timeout=max(1, config.connect_timeout_ms // 1000),
        init_command="SET time_zone = '+00:00'",
        cursorclass=pymysql.cursors.SSCursor if streaming else pymysql.cursors.Cursor,
    )


def connection_settings(config: MySqlCdcConfig) -> dict[str, Any]:
    """python-mysql-replication's connection settings."""
    password = config.password.get_secret_value() if config.password is not None else ""
    return {
        "host": config.hostname,
        "port": config.port,
        "user": config.user,
        "password": password,
        "connect_timeout": max(1, config.connect_timeout_ms // 1000),
    }


def open_binlog(config: MySqlCdcConfig, start: Any) -> Any:
    """A blocking python-mysql-replication reader from ``start`` (a ``BinlogPosition``: a
    transaction boundary). The server sends heartbeat events every ``poll.interval.ms`` while
    idle, so a read returns at least that often."""
    from pymysqlreplication import BinLogStreamReader
    from pymysqlreplication.event import (
        GtidEvent,
        HeartbeatLogEvent,
        MariadbGtidEvent,
        QueryEvent,
        RotateEvent,
        XidEvent,
    )
    from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent

    # is_mariadb stays False: python-mysql-replication would then position by GTID only;
    # MariaDB takes MySQL's file/position binlog dump as well.
    return BinLogStreamReader(
        connection_settings=connection_settings(config),
        server_id=config.server_id,
        log_file=start.file,
        log_pos=start.pos,
        resume_stream=True,
        blocking=True,
        slave_heartbeat=max(0.05, config.poll_interval_ms / 1000),
        only_events=[
            RotateEvent,
            GtidEvent,
            MariadbGtidEvent,
            QueryEvent,
            XidEvent,
            WriteRowsEvent,
            UpdateRowsEvent,
            DeleteRowsEvent,
            HeartbeatLogEvent,
        ],
        enable_logging=False,
    )


def _not_row_metadata_advice(record: logging.LogRecord) -> bool:
    # python-mysql-replication warns at every connect that binlog_row_metadata is not FULL;
    # the connector names columns from its own schema catalog (DDL and schema history), as
    # Debezium does, so the advice only misleads.
    return "BINLOG_ROW_METADATA" not in record.getMessage()


logging.getLogger("pymysqlreplication").addFilter(_not_row_metadata_advice)


def close_quietly(conn: Any) -> None:
    if conn is None:
        return
    with contextlib.suppress(Exception):  # already broken: nothing to release
        conn.close()


@dataclass(frozen=True, slots=True)
class ServerInfo:
    version: str
    is_mariadb: bool
    server_id: int


def _variable(cur: Any, name: str) -> str | None:
    cur.execute("SHOW GLOBAL VARIABLES LIKE %s", (name,))
    row = cur.fetchone()
    return None if row is None else str(row[1])


def check_server(conn: Any, config: MySqlCdcConfig) -> ServerInfo:
    """The settings row-based CDC needs; FatalDatabaseError naming the one that is wrong."""
    server = f"{config.hostname}:{config.port}"
    with conn.cursor() as cur:
        cur.execute("SELECT VERSION(), @@server_id")
        version, server_id = cur.fetchone()
        log_bin = _variable(cur, "log_bin")
        if (log_bin or "OFF").upper() not in ("ON", "1"):
            raise FatalDatabaseError(
                f"the binary log is off on {server} (log_bin=OFF): start the server with log-bin (e.g. "
                "log-bin=mysql-bin), server-id, binlog_format=ROW and binlog_row_image=FULL"
            )
        binlog_format = (_variable(cur, "binlog_format") or "").upper()
        if binlog_format != "ROW":
            raise FatalDatabaseError(
                f"{server} runs with binlog_format={binlog_format}; the connector needs binlog_format=ROW "
                "(SET GLOBAL binlog_format = 'ROW' and in the server's configuration)"
            )
        row_image = (_variable(cur, "binlog_row_image") or "FULL").upper()
        if row_image != "FULL":
            raise FatalDatabaseError(
                f"{server} runs with binlog_row_image={row_image}; the connector needs binlog_row_image=FULL "
                "(SET GLOBAL binlog_row_image = 'FULL' and in the server's configuration)"
            )
        value_options = (_variable(cur, "binlog_row_value_options") or "").upper()
        if "PARTIAL_JSON" in value_options:
            raise FatalDatabaseError(
                f"{server} runs with binlog_row_value_options=PARTIAL_JSON; the connector needs full JSON "
                "values: SET GLOBAL binlog_row_value_options = ''"
            )
    return ServerInfo(str(version), "mariadb" in str(version).lower(), int(server_id))


def current_position(conn: Any, info: ServerInfo, config: MySqlCdcConfig) -> tuple[str, int, str | None]:
    """(file, pos, gtids) the server's binlog has reached."""
    import pymysql

    with conn.cursor() as cur:
        try:
            try:
                cur.execute("SHOW BINARY LOG STATUS")
            except pymysql.err.ProgrammingError:
                cur.execute("SHOW MASTER STATUS")
            row = cur.fetchone()
        except pymysql.err.OperationalError as exc:
            if exc.args and exc.args[0] in (1227, 1142):
                raise FatalDatabaseError(
                    f"user {config.user!r} may not read the binlog position ({exc.args[1]}): "
                    + GRANT_HINT.replace("<user>", config.user)
                ) from None
            raise
        if row is None:
            raise FatalDatabaseError(
                f"{config.hostname}:{config.port} reports no binlog position (SHOW MASTER STATUS is "
                "empty): is log-bin on?"
            )
        file, pos = str(row[0]), int(row[1])
        gtids: str | None
        if info.is_mariadb:
            cur.execute("SELECT @@GLOBAL.gtid_binlog_pos")
            gtids = str(cur.fetchone()[0] or "") or None
        else:
            gtids = str(row[4]).replace("\n", "") if len(row) > 4 and row[4] else None
    return file, pos, gtids


def binlog_files(conn: Any, config: MySqlCdcConfig) -> list[str]:
    """The binlog files the server still has (SHOW BINARY LOGS)."""
    import pymysql

    with conn.cursor() as cur:
        try:
            cur.execute("SHOW BINARY LOGS")
        except pymysql.err.OperationalError as exc:
            if exc.args and exc.args[0] in (1227, 1142):
                raise FatalDatabaseError(
                    f"user {config.user!r} may not list the binlog files ({exc.args[1]}): "
                    + GRANT_HINT.replace("<user>", config.user)
                ) from None
            raise
        return [str(row[0]) for row in cur.fetchall()]
