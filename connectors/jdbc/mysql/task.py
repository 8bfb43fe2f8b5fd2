"""MySqlSourceTask: snapshot, then stream the binlog, in Debezium's MySQL event format.

All I/O happens in ``poll`` (``start`` only reads the config and the stored offset), so a
server that is away yields ``RetriableException`` (the worker polls again after a backoff,
and the task reconnects from its last transaction boundary) and a configuration problem
fails the task with a message saying what to fix. Phases:

1. *starting*: connect, check the server (log_bin, binlog_format=ROW, binlog_row_image=FULL),
   look at the stored offset, the binlog files and the schema history, and decide
   (``offsets.plan_start``) whether to snapshot; recover the schemas from the history;
2. *snapshot*: read every captured table inside the consistent snapshot, emitting ``r``
   events (``snapshot`` first, ..., last);
3. *streaming*: read the binlog from the snapshot's position (or the stored one), emitting
   change events, schema change events and heartbeats (``stream.ChangeStream``);
4. *idle*: ``snapshot.mode=initial_only`` after its snapshot.

Threads: the worker calls ``poll`` on the task thread; ``stop`` comes from another thread,
so it takes the I/O lock before closing connections. A blocking binlog read returns at
least every ``poll.interval.ms``: the server sends heartbeat events while idle.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import re
import time
from collections.abc import Sequence
from typing import Any, NoReturn

from connect.api import ConnectException, RetriableException, SourceRecord, SourceRecordBatch
from connectors.jdbc.debezium.task import FIRST_BACKOFF_S, SerialSourceTask, now_us
from connectors.jdbc.mysql.config import MySqlCdcConfig
from connectors.jdbc.mysql.events import EventBuilder, Position, TableModel, build_table_model
from connectors.jdbc.mysql.faults import BinlogPurged, FatalDatabaseError, translate
from connectors.jdbc.mysql.history import SchemaHistory
from connectors.jdbc.mysql.offsets import (
    BinlogPosition,
    SnapshotKind,
    StartPlan,
    StoredOffset,
    plan_start,
    snapshot_offset,
)
from connectors.jdbc.mysql.schema import DdlError, MySqlTable, SchemaCatalog
from connectors.jdbc.mysql.schema_changes import schema_change_record
from connectors.jdbc.mysql.server import (
    ServerInfo,
    binlog_files,
    check_server,
    close_quietly,
    connect,
    open_binlog,
)
from connectors.jdbc.mysql.snapshot import (
    SYSTEM_DATABASES,
    SnapshotPoint,
    SnapshotReader,
    SnapshotRow,
    begin_snapshot,
)
from connectors.jdbc.mysql.stream import ChangeStream

__all__ = ["VERSION", "MySqlSourceTask"]

log = logging.getLogger(__name__)

VERSION = "1.0.0"
_DATABASE_DDL = re.compile(
    r"\s*(?:CREATE|DROP|ALTER)\s+(?:DATABASE|SCHEMA)\s+(?:IF\s+(?:NOT\s+)?EXISTS\s+)?(`(?:[^`]|``)+`|[\w$]+)",
    re.IGNORECASE,
)


def database_of(ddl: str) -> str | None:
    """The database a CREATE/ALTER/DROP DATABASE statement names (None for other statements)."""
    match = _DATABASE_DDL.match(ddl)
    if match is None:
        return None
    name = match.group(1)
    return name[1:-1].replace("``", "`") if name.startswith("`") else name


class Phase(enum.Enum):
    STARTING = "starting"
    SNAPSHOT = "snapshot"
    STREAMING = "streaming"
    IDLE = "idle"


class MySqlSourceTask(SerialSourceTask):
    #: "mysql" or "mariadb": the source block's ``connector``
    connector_name = "mysql"

    def version(self) -> str:
        return VERSION

    # -- lifecycle -------------------------------------------------------------------------------------

    def start(self, props: dict[str, str]) -> None:
        self.config = MySqlCdcConfig.parse(props)
        self.filters = self.config.filters()
        self.value_settings = self.config.value_settings()
        self.gtid_filter = self.config.gtid_filter()
        self.events = EventBuilder(self.config.topic_prefix, self.connector_name, VERSION, now_us)
        raw = self.context.offset_storage_reader().offset(self.events.partition)
        self.stored = self._parse_stored(StoredOffset.parse, raw, self.config.topic_prefix)
        self.phase = Phase.STARTING
        self._init_serial()
        self._meta: Any = None
        self._info: ServerInfo | None = None
        self._history: SchemaHistory | None = None
        self._catalog = SchemaCatalog()
        self._models: dict[tuple[str, str], tuple[MySqlTable, TableModel | None]] = {}
        self._reader: SnapshotReader | None = None
        self._point: SnapshotPoint | None = None
        self._snapshot_ts_ms = 0
        self._stream: ChangeStream | None = None
        self._binlog: Any = None
        self._plan: StartPlan | None = None
        self._deferred_error: Exception | None = None
        self._last_heartbeat = time.monotonic()
        self._doing = "starting"
        self._snapshot_completed = False
        log.info(
            "MySQL CDC task for %s@%s:%d starting (server id %d, snapshot.mode %s, stored offset %s)",
            self.config.user,
            self.config.hostname,
            self.config.port,
            self.config.server_id,
            self.config.effective_snapshot_mode,
            raw,
        )

    # -- phases -------------------------------------------------------------------------------------------

    def _step(self) -> Sequence[SourceRecord]:
        if self.phase is Phase.STARTING:
            return self._start_up()
        if self.phase is Phase.SNAPSHOT:
            return self._snapshot_batch()
        if self.phase is Phase.STREAMING:
            return self._stream_batch()
        self._stopping.wait(self.config.poll_interval_ms / 1000)
        return []

    def _connect_meta(self) -> tuple[Any, ServerInfo]:
        self._doing = "connecting to the server"
        if self._meta is None:
            self._meta = connect(self.config)
        self._doing = "checking the server's binlog settings"
        self._info = check_server(self._meta, self.config)
        return self._meta, self._info

    def _new_history(self) -> SchemaHistory:
        if self._history is None:
            config = self.config
            self._history = SchemaHistory(
                config.history_topic,
                config.history_client_config(),
                config.topic_prefix,
                recovery_attempts=config.history_recovery_attempts,
                store_only_captured_tables_ddl=config.history_store_only_captured,
                skip_unparseable_ddl=config.history_skip_unparseable,
                captured=self._captures,  # for store.only.captured.tables.ddl
            )
        return self._history

    def _start_up(self) -> list[SourceRecord]:
        config = self.config
        meta, info = self._connect_meta()
        mode = config.effective_snapshot_mode
        stored = self.stored
        self._doing = "listing the binlog files"
        files = binlog_files(meta, config)
        available = stored is None or stored.position.file in files
        history = self._new_history()
        self._doing = "reading the schema history topic"
        history_exists = stored is None or not stored.snapshot_completed or history.exists()
        plan = plan_start(mode, stored, available, history_exists, config.history_topic)
        if plan.failure is not None:
            raise BinlogPurged(plan.failure) if not available else FatalDatabaseError(plan.failure)
        log.info("start-up plan: %s", plan)
        self._plan = plan
        self._catalog = SchemaCatalog()
        self._models.clear()
        if plan.snapshot is SnapshotKind.NONE:
            if plan.recover_history and stored is not None:
                self._doing = "recovering the schemas from the schema history"
                history.recover(self._offset_of(stored.position), self._catalog)
            if not plan.stream:
                log.info("snapshot.mode=initial_only and the snapshot is complete: nothing to do")
                self.phase = Phase.IDLE
                return []
            if plan.from_oldest:
                start = BinlogPosition(files[0], 4) if files else BinlogPosition("", 4)
            else:
                assert plan.resume is not None
                start = plan.resume
            self._begin_streaming(start)
            return []
        return self._take_snapshot(plan, info)

    def _offset_of(self, position: BinlogPosition) -> dict[str, Any]:
        offset: dict[str, Any] = {
            "file": position.file,
            "pos": position.pos,
            "event": position.event,
            "row": position.row,
        }
        if position.gtids:
            offset["gtids"] = position.gtids
        return offset

    # -- snapshot ---------------------------------------------------------------------------------------

    def _take_snapshot(self, plan: StartPlan, info: ServerInfo) -> list[SourceRecord]:
        config = self.config
        history = self._new_history()
        self._doing = "creating the schema history topic"
        history.ensure_topic()
        self._doing = "starting the snapshot"
        conn = connect(config)
        try:
            schemas, locked = begin_snapshot(
                conn, info, config, self.filters, not config.history_store_only_captured
            )
        except BaseException:
            close_quietly(conn)
            raise
        point = schemas.point
        self._point = point
        self._snapshot_ts_ms = now_us() // 1000
        ts_sec = self._snapshot_ts_ms // 1000
        offset = snapshot_offset(point.file, point.pos, point.gtids, ts_sec, info.server_id, False)
        # recovery: today's schemas stand for the schemas at the stored position, so the history
        # records them there (a later recovery up to that offset must find them).
        history_position = self._offset_of(plan.resume) if plan.resume is not None else offset
        records: list[SourceRecord] = []
        position = Position(self._snapshot_ts_ms, "true", info.server_id, None, point.file, point.pos, 0)
        # Each database's CREATE DATABASE first, as Debezium's snapshot: its default character
        # set is what a later CREATE TABLE without one gets.

        def apply(db: str, table: str | None, ddl: str, selected: bool) -> None:
            """Apply one snapshot DDL statement to the catalog and the history, and emit it."""
            changes = self._catalog.apply(ddl, db)
            history.record(
                {"server": config.topic_prefix}, history_position, db, ddl, changes, self._snapshot_ts_ms
            )
            if config.include_schema_changes and selected:
                source = self.events.source(db, table, position)
                records.append(
                    schema_change_record(
                        config.topic_prefix,
                        source,
                        db,
                        ddl,
                        changes,
                        self._snapshot_ts_ms,
                        self.events.partition,
                        offset,
                    )
                )

        for db, ddl in schemas.databases:
            self._doing = f"reading the schema of database {db}"
            apply(db, None, ddl, self._database_selected(db))
        for db, table, ddl in schemas.ddl:
            self._doing = f"reading the schema of {db}.{table}"
            self._catalog.remove(db, table)
            apply(db, table, ddl, (db, table) in schemas.captured)
        if plan.snapshot is SnapshotKind.SCHEMA:
            with conn.cursor() as cur:
                cur.execute("COMMIT")
                if locked:
                    cur.execute("UNLOCK TABLES")
            close_quietly(conn)
            start = plan.resume or BinlogPosition(point.file, point.pos, 0, 0, point.gtids)
            self._snapshot_completed = True
            self._begin_streaming(start)
            return records
        models = []
        for db, table in schemas.captured:
            found = self._model(db, table)
            if found is not None:
                models.append(found[1])
        self._reader = SnapshotReader(conn, models, locked, config.snapshot_fetch_size)
        self.phase = Phase.SNAPSHOT
        self._doing = "reading the snapshot"
        log.info("snapshot of %d tables: %s", len(models), ", ".join(m.table.id for m in models))
        return records

    def _snapshot_batch(self) -> list[SourceRecord]:
        reader, point, info = self._reader, self._point, self._info
        assert reader is not None and point is not None and info is not None
        rows = reader.read(self.config.max_batch_size)
        records = [self._snapshot_record(row, point, info) for row in rows]
        if reader.done:
            reader.finish()
            self._reader = None
            self._snapshot_completed = True
            log.info("snapshot complete: %d rows", reader.rows_read)
            plan = self._plan
            assert plan is not None
            if plan.stream:
                self._begin_streaming(BinlogPosition(point.file, point.pos, 0, 0, point.gtids))
            else:
                self.phase = Phase.IDLE
        return records

    def _snapshot_record(self, row: SnapshotRow, point: SnapshotPoint, info: ServerInfo) -> SourceRecord:
        model = row.model
        ts_ms = self._snapshot_ts_ms
        position = Position(ts_ms, row.marker, info.server_id, None, point.file, point.pos, 0)
        offset = snapshot_offset(
            point.file, point.pos, point.gtids, ts_ms // 1000, info.server_id, row.marker == "last"
        )
        values = row.values
        return self.events.change(model, "r", model.key(values), None, model.value(values), position, offset)

    # -- models -----------------------------------------------------------------------------------------

    def _model(self, database: str, name: str) -> tuple[MySqlTable, TableModel] | None:
        """The table's current model (None: not captured); rebuilt when the catalog's table changed."""
        table = self._catalog.table(database, name)
        key = (database, name)
        cached = self._models.get(key)
        if table is None:
            if cached is None and self._captures(database, name):
                raise ConnectException(
                    f"rows of table {database}.{name} arrived, but the connector does not know its schema "
                    "(no CREATE TABLE in the snapshot or the schema history): set snapshot.mode=recovery (no "
                    "DDL since) or when_needed and restart"
                )
            return None
        if cached is not None and cached[0] is table:
            model = cached[1]
            return None if model is None else (table, model)
        model = None
        if self._captures(database, name):
            model = build_table_model(self.config.topic_prefix, table, self.filters, self.value_settings)
            log.info("table %s: columns %s", table.id, [c.name for c in table.columns])
        self._models[key] = (table, model)
        return None if model is None else (table, model)

    def _captures(self, database: str, name: str) -> bool:
        return database.lower() not in SYSTEM_DATABASES and self.filters.captures_table(database, name)

    # -- streaming --------------------------------------------------------------------------------------

    def _begin_streaming(self, start: BinlogPosition) -> None:
        self._stream = ChangeStream(
            self.events, self._model, self._ddl, self.gtid_filter, start, self.config.tombstones_on_delete
        )
        self._open_binlog(start)
        log.info("streaming the binlog from %s", start.describe())
        self.phase = Phase.STREAMING
        self._last_heartbeat = time.monotonic()

    def _open_binlog(self, start: BinlogPosition) -> None:
        self._doing = "opening the binlog stream"
        self._binlog = open_binlog(self.config, start)

    def _stream_batch(self) -> Sequence[SourceRecord]:
        stream = self._stream
        assert stream is not None
        if self._deferred_error is not None:
            error, self._deferred_error = self._deferred_error, None
            raise error
        if self._binlog is None:
            self._doing = "reconnecting to the binlog"
            self._connect_meta()
            self._open_binlog(stream.boundary())
            log.info("reconnected; streaming the binlog from %s again", stream.boundary().describe())
        binlog = self._binlog
        self._doing = "reading the binlog"
        records: list[SourceRecord] = []
        limit = self.config.max_batch_size
        deadline = time.monotonic() + self.config.poll_interval_ms / 1000
        while len(records) < limit and not self._stopping.is_set():
            try:
                event = binlog.fetchone()
                if event is None:  # the server ended the stream (shutting down)
                    self._close_binlog()
                    raise RetriableException(
                        f"{self.config.hostname}:{self.config.port} ended the binlog stream"
                    )
                if type(event).__name__ == "HeartbeatLogEvent":
                    break
                out = stream.handle(event, batch=not records)
                if isinstance(out, SourceRecordBatch):
                    return out  # a bulk insert: one batch of columns for this poll
                records.extend(out)
            except Exception as exc:
                if not records:
                    raise
                # The stream counts these records as delivered: hand them over first, fail next poll.
                self._deferred_error = exc
                break
            if records and time.monotonic() > deadline:
                break  # a trickle of changes: hand over what there is
        self._backoff_s = FIRST_BACKOFF_S
        heartbeat = self._heartbeat()
        if heartbeat is not None:
            records.append(heartbeat)
        return records

    def _ddl(
        self, database: str | None, ddl: str, position: Position, offset: dict[str, Any]
    ) -> list[SourceRecord]:
        config = self.config
        try:
            changes = self._catalog.apply(ddl, database)
        except DdlError as exc:
            if config.history_skip_unparseable:
                log.warning("skipping DDL the connector cannot parse (%s): %s", exc, ddl)
                return []
            raise
        history = self._history
        assert history is not None
        # Every DDL statement is recorded, also one that changes no table (CREATE DATABASE
        # ... CHARACTER SET: recovery needs the database's default character set).
        if changes or not config.history_store_only_captured or self._names_selected_database(ddl):
            history.record({"server": config.topic_prefix}, offset, database, ddl, changes, position.ts_ms)
        if not config.include_schema_changes:
            return []
        if not changes:
            # A database-level statement, as Debezium's: reported for the database it names
            # (or runs in) when the database filters select it, with no table changes.
            target = database_of(ddl) or database
            if target is not None and not self._database_selected(target):
                return []
            source = self.events.source(target or "", None, position)
            prefix = config.topic_prefix
            return [
                schema_change_record(
                    prefix, source, target, ddl, [], position.ts_ms, self.events.partition, offset
                )
            ]
        captured = [c for c in changes if self._captures(*c.id.split(".", 1))]
        if not captured:
            return []
        first = captured[0].id.split(".", 1)
        source = self.events.source(first[0], first[1], position)
        return [
            schema_change_record(
                config.topic_prefix,
                source,
                database,
                ddl,
                captured,
                position.ts_ms,
                self.events.partition,
                offset,
            )
        ]

    def _names_selected_database(self, ddl: str) -> bool:
        """Whether a statement that changes no table is a CREATE/ALTER/DROP DATABASE of a
        selected database: with store.only.captured.tables.ddl the only such statements
        recorded, as Debezium (an ALTER of a table it never read changes nothing either)."""
        target = database_of(ddl)
        return target is not None and self._database_selected(target)

    def _database_selected(self, database: str) -> bool:
        filters = self.filters
        if database.lower() in SYSTEM_DATABASES:
            return False
        if filters.schema_include:
            return any(p.fullmatch(database) for p in filters.schema_include)
        return not any(p.fullmatch(database) for p in filters.schema_exclude)

    def _heartbeat(self) -> SourceRecord | None:
        interval_ms = self.config.heartbeat_interval_ms
        now = time.monotonic()
        stream = self._stream
        if interval_ms <= 0 or stream is None or (now - self._last_heartbeat) * 1000 < interval_ms:
            return None
        if stream.in_transaction:
            return None  # its offset would fall behind the records of the open transaction
        self._last_heartbeat = now
        return self.events.heartbeat(self.config.heartbeat_topic, stream.idle_offset(int(time.time())))

    # -- failures and shutdown --------------------------------------------------------------------------

    def _on_error(self, exc: Exception) -> NoReturn:
        error: BaseException = exc
        if not isinstance(exc, ConnectException):
            error = translate(exc, self._doing, self.config)
        self._close_binlog()
        if isinstance(error, RetriableException):
            close_quietly(self._meta)
            self._meta = None
            if self._reader is not None:
                self._reader.close()
                self._reader = None
            if self.phase is Phase.SNAPSHOT:
                self.phase = Phase.STARTING  # an interrupted snapshot starts over
            self._retry_later(error, exc, self.config.retriable_restart_wait_ms)
        if error is exc:
            raise exc
        raise error from exc

    def _close_binlog(self) -> None:
        if self._binlog is not None:
            with contextlib.suppress(Exception):  # already broken
                self._binlog.close()
            self._binlog = None

    def _shutdown(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._close_binlog()
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        close_quietly(self._meta)
        self._meta = None
        if self._history is not None:
            try:
                self._history.close()
            except Exception as exc:  # closing must not fail the stop
                log.info("closing the schema history: %s", exc)
            self._history = None
        log.info("MySQL CDC task stopped")


class MariaDbSourceTask(MySqlSourceTask):
    connector_name = "mariadb"
