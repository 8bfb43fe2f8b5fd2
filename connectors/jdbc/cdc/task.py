"""PostgresCdcSourceTask: snapshot, then stream the slot; confirm only what Kafka acknowledged.

The task runs through phases, all I/O happening in ``poll`` (``start`` only reads the
config and the stored offset), so that a database that is away yields
``RetriableException`` (the worker polls again after a backoff) and a configuration
problem fails the task with a message saying what to fix:

1. *starting*: connect, check ``wal_level``, make sure the publication exists
   (``publication.autocreate.mode``), look at the slot and the stored offset, and
   decide (``offsets.plan_start``) whether to snapshot and how;
2. *snapshot*: read every captured table in the slot's exported snapshot, emitting
   ``r`` events, the last one marked ``snapshot: "last"``;
3. *streaming*: read pgoutput messages from the slot, emitting change events
   (``changes.ChangeStream``) and heartbeats; after the database went away,
   *reconnecting* resumes from the slot without snapshotting again;
4. *idle*: ``snapshot.mode=initial_only`` after its snapshot.

Acknowledgements: the worker stores an offset only once Kafka has that record and every
one before it, then calls ``commit``; there the task reads the stored offset back and the
``CommitTracker`` tells which transactions are wholly in Kafka. The slot is told
(``send_feedback``) the highest end LSN that allows, forced, in ``commit``, and again
with the next polls. So a crash at any moment leaves the slot at or before the first
record Kafka lacks, and nothing is lost; on restart, records up to the stored offset are
skipped. (No ``commit_record``: a call per record would cost as much as making it.)

Polls: a run of inserts (and updates without an old row) into one table comes back as
one ``SourceRecordBatch`` of columns (``ChangeStream.take``; the inserts that follow in
the same transaction are read by ``ReplicationStream.read_while`` and kept undecoded,
``ChangeStream.take_insert``); any other change ends the run and goes out in the next
poll, as a list of records. A run's source offsets are made when read, and its
transaction's unit learns its last one once (at the Commit, or when the run is handed out).

Threads: the worker calls ``poll`` and ``commit`` on the task thread;
``stop`` comes from another thread, so it takes the I/O lock before closing connections.
"""

from __future__ import annotations

import enum
import logging
import time
from collections.abc import Sequence
from typing import Any, NoReturn

from connect.api import (
    RetriableException,
    SourceRecord,
)
from connectors.jdbc.cdc.catalog import Catalog, ColumnInfo, TableInfo, TableName
from connectors.jdbc.cdc.changes import ChangeStream
from connectors.jdbc.cdc.config import PostgresCdcConfig, SnapshotMode
from connectors.jdbc.cdc.connection import close_quietly, connect
from connectors.jdbc.cdc.events import EventBuilder, SourcePosition
from connectors.jdbc.cdc.faults import FatalDatabaseError, translate, wal_level_message
from connectors.jdbc.cdc.lsn_tracker import CommitTracker, Unit
from connectors.jdbc.cdc.offsets import (
    SlotState,
    SnapshotKind,
    StartPlan,
    StoredOffset,
    StreamPosition,
    format_lsn,
    heartbeat_offset,
    plan_start,
    snapshot_offset,
)
from connectors.jdbc.cdc.pgoutput import Begin, Commit, Message, Relation, decode
from connectors.jdbc.cdc.publication import ensure_publication
from connectors.jdbc.cdc.replication import ReplicationMessage, ReplicationStream, SlotInUse
from connectors.jdbc.cdc.slots import drop_slot, drop_slot_when_released, slot_state
from connectors.jdbc.cdc.snapshot import SnapshotReader, SnapshotRow
from connectors.jdbc.cdc.table_model import TableModel, build_table_model
from connectors.jdbc.debezium.task import FIRST_BACKOFF_S, SerialSourceTask, now_us

__all__ = ["VERSION", "PostgresCdcSourceTask"]

log = logging.getLogger(__name__)

VERSION = "1.0.0"
_MIN_SERVER_VERSION = 120000


class Phase(enum.Enum):
    STARTING = "starting"
    SNAPSHOT = "snapshot"
    STREAMING = "streaming"
    RECONNECTING = "reconnecting"
    IDLE = "idle"


class PostgresCdcSourceTask(SerialSourceTask):
    def version(self) -> str:
        return VERSION

    # -- lifecycle -------------------------------------------------------------------------------------

    def start(self, props: dict[str, str]) -> None:
        self.config = PostgresCdcConfig.parse(props)
        self.filters = self.config.filters()
        self.value_settings = self.config.value_settings()
        self.events = EventBuilder(self.config.topic_prefix, self.config.dbname, VERSION, now_us)
        raw = self.context.offset_storage_reader().offset(self.events.partition)
        self.stored = self._parse_stored(StoredOffset.parse, raw, self.config.topic_prefix)
        self.tracker = CommitTracker()
        self.phase = Phase.STARTING
        self._init_serial()
        self._meta: Any = None
        self._catalog: Catalog | None = None
        self._stream: ReplicationStream | None = None
        self._reader: SnapshotReader | None = None
        self._changes: ChangeStream | None = None
        self._plan: StartPlan | None = None
        self._snapshot_unit: Unit | None = None
        self._snapshot_ts_us = 0
        self._held: SnapshotRow | None = None
        self._txn_unit: Unit | None = None
        self._deferred: tuple[Message, int] | None = None  # read, handled by the next poll
        self._models: dict[tuple[Any, ...], TableModel] = {}
        self._safe_lsn = 0  # every transaction committed before this was read
        self._confirmed_sent = 0
        self._slot_attempts = 0
        self._last_heartbeat = time.monotonic()
        self._doing = "starting"
        self._snapshot_rows_estimated = 0
        self._snapshot_rows_scanned = 0
        self._snapshot_completed = False
        self._register_metrics()
        log.info(
            "PostgreSQL CDC task for %s@%s:%d/%s starting (slot %s, publication %s, snapshot.mode %s, stored "
            "offset %s)",
            self.config.user,
            self.config.hostname,
            self.config.port,
            self.config.dbname,
            self.config.slot_name,
            self.config.publication_name,
            self.config.effective_snapshot_mode,
            raw,
        )

    # -- the worker's calls ---------------------------------------------------------------------------

    def commit(self) -> None:
        """The worker stored offsets: tell the server now how far the slot may advance."""
        if self._lock.acquire(blocking=False):
            try:
                self.tracker.committed(self.context.offset_storage_reader().offset(self.events.partition))
                self._confirm(force=True)
            finally:
                self._lock.release()

    # -- phases -------------------------------------------------------------------------------------------

    def _step(self) -> Sequence[SourceRecord]:
        if self.phase is Phase.STARTING:
            self._start_up()
        elif self.phase is Phase.RECONNECTING:
            self._reconnect()
        if self.phase is Phase.SNAPSHOT:
            return self._snapshot_batch()
        if self.phase is Phase.STREAMING:
            self._confirm(force=False)
            return self._stream_batch()
        if self.phase is Phase.IDLE:
            self._stopping.wait(self.config.poll_interval_ms / 1000)
        return []

    def _start_up(self) -> None:
        config = self.config
        catalog = self._connect_metadata()
        mode = config.effective_snapshot_mode
        streams = mode is not SnapshotMode.INITIAL_ONLY
        if streams:
            self._doing = "checking the publication"
            ensure_publication(
                self._meta,
                catalog,
                config.publication_name,
                config.publication_mode,
                config.dbname,
                self.filters,
            )
        self._doing = "checking the replication slot"
        slot = self._slot_state(catalog) if streams else SlotState.MISSING
        plan = plan_start(mode, self.stored, slot, config.slot_name)
        if plan.failure is not None:
            raise FatalDatabaseError(plan.failure)
        log.info("start-up plan: %s", plan)
        self._plan = plan
        if plan.drop_slot:
            log.info(
                'dropping replication slot "%s" (left by a snapshot that did not complete)', config.slot_name
            )
            drop_slot(self._meta, config.slot_name)
        consistent_lsn: int | None = None
        snapshot_name: str | None = None
        if plan.stream:
            self._stream = self._new_stream()
            self._doing = "opening the replication connection"
            self._stream.open()
            if plan.create_slot:
                self._doing = "creating the replication slot"
                created = self._stream.create_slot(export_snapshot=plan.snapshot is SnapshotKind.EXPORTED)
                consistent_lsn, snapshot_name = created.consistent_lsn, created.snapshot_name
                self._safe_lsn = created.consistent_lsn
                log.info(
                    'created replication slot "%s" at %s (exported snapshot %s)',
                    config.slot_name,
                    format_lsn(created.consistent_lsn),
                    snapshot_name,
                )
        if plan.snapshot is SnapshotKind.NONE:
            if plan.stream:
                self._begin_streaming(plan.resume)
            else:
                log.info("snapshot.mode=initial_only and the snapshot is complete: nothing to do")
                self.phase = Phase.IDLE
            return
        self._doing = "starting the snapshot"
        conn = connect(config, autocommit=False)
        try:
            self._reader = SnapshotReader.open(
                conn,
                snapshot_name if plan.snapshot is SnapshotKind.EXPORTED else None,
                consistent_lsn if plan.snapshot is SnapshotKind.EXPORTED else None,
                config.publication_name if plan.stream else None,
                self.filters,
                self._snapshot_model,
                config.snapshot_fetch_size,
            )
        except BaseException:
            close_quietly(conn)
            raise
        self._snapshot_ts_us = now_us()
        self._snapshot_rows_estimated = self._reader.rows_estimated
        self._snapshot_unit = self.tracker.open()
        self._held = None
        log.info(
            "snapshot of %d tables (%s) at %s",
            len(self._reader.tables),
            ", ".join(str(t.name) for t in self._reader.tables),
            format_lsn(self._reader.lsn),
        )
        self.phase = Phase.SNAPSHOT
        self._doing = "reading the snapshot"

    def _new_stream(self) -> ReplicationStream:
        config = self.config
        # psycopg2 reports the position at least every second (its minimum); commit() forces it sooner.
        interval_s = max(1.0, config.status_update_interval_ms / 1000)
        return ReplicationStream(config, config.slot_name, config.publication_name, interval_s)

    def _connect_metadata(self) -> Catalog:
        self._doing = "connecting to PostgreSQL"
        if self._meta is None or self._meta.closed:
            self._meta = connect(self.config)
            self._catalog = Catalog(self._meta)
        assert self._catalog is not None
        catalog = self._catalog
        server = f"{self.config.hostname}:{self.config.port}"
        version = catalog.server_version()
        if version < _MIN_SERVER_VERSION:
            raise FatalDatabaseError(
                f"PostgreSQL at {server} is version {version}; the connector needs 12 or later"
            )
        wal_level = catalog.setting("wal_level")
        if wal_level != "logical":
            raise FatalDatabaseError(wal_level_message(server, wal_level))
        return catalog

    def _slot_state(self, catalog: Catalog) -> SlotState:
        state, confirmed = slot_state(catalog, self.config.slot_name, self.config.dbname)
        if confirmed is not None:
            self._safe_lsn = max(self._safe_lsn, confirmed)
        return state

    def _snapshot_model(self, info: TableInfo) -> TableModel:
        return build_table_model(
            self.config.topic_prefix,
            info.name,
            info.columns,
            info.key_columns,
            self.filters,
            self.value_settings,
            info.replica_identity,
        )

    def _describe(self, relation: Relation) -> TableModel | None:
        """The model of a relation the stream announced (None: not captured)."""
        name = TableName(relation.namespace or "pg_catalog", relation.name)
        if not self.filters.captures_table(name.schema, name.table):
            return None
        signature = (
            relation.relation_id,
            relation.namespace,
            relation.name,
            relation.replica_identity,
            tuple((c.name, c.type_oid, c.type_modifier) for c in relation.columns),
        )
        model = self._models.get(signature)
        if model is not None:
            return model
        catalog = self._catalog
        assert catalog is not None
        catalog.forget_types()  # an enum may have gained labels since
        info = catalog.table(relation.relation_id)
        not_null = {c.name: c.not_null for c in info.columns} if info is not None else {}
        columns = [
            ColumnInfo(c.name, catalog.pg_type(c.type_oid), c.type_modifier, not_null.get(c.name, False))
            for c in relation.columns
        ]
        keys = info.key_columns if info is not None else ()
        model = build_table_model(
            self.config.topic_prefix,
            name,
            columns,
            keys,
            self.filters,
            self.value_settings,
            relation.replica_identity,
        )
        self._models[signature] = model
        log.info("table %s: %s", name, [c.info.name for c in model.columns])
        return model

    # -- snapshot ---------------------------------------------------------------------------------------

    def _register_metrics(self) -> None:
        """Snapshot progress at the worker's /metrics (Debezium's snapshot metrics), which
        ``sluiceway ctl snapshot`` turns into a progress bar."""
        metrics = self.context.plugin_metrics()
        metrics.gauge(
            "snapshot_running",
            "1 while the initial snapshot is being read",
            lambda: 1.0 if self.phase is Phase.SNAPSHOT else 0.0,
        )
        metrics.gauge(
            "snapshot_completed",
            "1 once this task has read its snapshot completely",
            lambda: 1.0 if self._snapshot_completed else 0.0,
        )
        metrics.gauge(
            "snapshot_rows_scanned",
            "Rows the snapshot has read so far",
            lambda: float(self._snapshot_rows_scanned),
        )
        metrics.gauge(
            "snapshot_rows_estimated",
            "Rows the snapshot is expected to read (the catalog's estimate, or a count)",
            lambda: float(self._snapshot_rows_estimated),
        )

    def _snapshot_batch(self) -> list[SourceRecord]:
        reader, unit = self._reader, self._snapshot_unit
        assert reader is not None and unit is not None
        rows = reader.read(self.config.max_batch_size)
        self._snapshot_rows_scanned = reader.rows_read
        records = []
        for row in rows:
            # Hold one row back: only once the next row is known can the last one be marked "last".
            if self._held is not None:
                records.append(self._snapshot_record(self._held, last=False))
            self._held = row
        if not rows:
            if self._held is not None:
                records.append(self._snapshot_record(self._held, last=True))
                self._held = None
            reader.finish()
            self._reader = None
        if records:
            self.tracker.emitted(unit, records[-1].source_offset)
        if self._reader is None:
            self.tracker.close(unit, None)
            self._snapshot_unit = None
            self._after_snapshot()
        return records

    def _snapshot_record(self, row: SnapshotRow, last: bool) -> SourceRecord:
        reader = self._reader
        assert reader is not None
        table = row.table
        position = SourcePosition(self._snapshot_ts_us, "last" if last else "true", reader.xmin, reader.lsn)
        offset = snapshot_offset(reader.lsn, reader.xmin, self._snapshot_ts_us, last)
        return self.events.change(
            table, "r", table.key(row.values), None, table.row(row.values), position, offset
        )

    def _after_snapshot(self) -> None:
        plan = self._plan
        assert plan is not None
        log.info("snapshot complete")
        self._snapshot_completed = True
        if plan.stream:
            self._begin_streaming(plan.resume)
        else:
            self.phase = Phase.IDLE
            self._close_connections()

    # -- streaming --------------------------------------------------------------------------------------

    def _begin_streaming(self, resume: StreamPosition | None) -> None:
        assert self._stream is not None
        # The stream state first: should starting fail, reconnecting resumes it (no second snapshot).
        self._changes = ChangeStream(
            self.events,
            self._describe,
            skipped=self.config.skipped,
            tombstones=self.config.tombstones_on_delete,
            resume=resume,
        )
        self._doing = "starting replication"
        self._start_replication()
        log.info(
            'streaming from replication slot "%s"%s',
            self.config.slot_name,
            f" (skipping up to {resume})" if resume is not None else "",
        )
        self.phase = Phase.STREAMING
        self._doing = "streaming changes"
        self._last_heartbeat = time.monotonic()

    def _start_replication(self) -> None:
        assert self._stream is not None
        self._stream.start()  # SlotInUse while another connection holds the slot: retried in _on_error
        self._slot_attempts = 0

    def _reconnect(self) -> None:
        """After the database went away mid-stream: reopen and stream from the slot again."""
        catalog = self._connect_metadata()
        if self._slot_state(catalog) is not SlotState.USABLE:
            raise FatalDatabaseError(
                f'replication slot "{self.config.slot_name}" disappeared (or lost its WAL) while the '
                "connector streamed from it: changes may be missing. Delete the connector's offsets to "
                "snapshot again"
            )
        self._stream = self._new_stream()
        self._stream.open()
        self._doing = "restarting replication"
        self._start_replication()
        assert self._changes is not None
        self._changes.reconnected()
        log.info('reconnected; streaming from replication slot "%s" again', self.config.slot_name)
        self.phase = Phase.STREAMING
        self._doing = "streaming changes"

    def _stream_batch(self) -> Sequence[SourceRecord]:
        """One poll's records: a run of one table's inserts as a batch, or a list of others."""
        stream, changes = self._stream, self._changes
        assert stream is not None and changes is not None
        records: list[SourceRecord] = []
        limit = self.config.max_batch_size
        wait_s = self.config.poll_interval_ms / 1000
        tracker = self.tracker
        message: ReplicationMessage | None = None  # read by _extend_run, not taken
        while len(records) + changes.run_length < limit and not self._stopping.is_set():
            if self._deferred is not None:
                decoded, lsn = self._deferred
                self._deferred = None
            else:
                if message is None:
                    message = stream.read(wait_s if not records and not changes.run_length and wait_s else 0)
                    wait_s = 0
                if message is None:
                    if not changes.in_transaction:
                        # Nothing pending: everything the server sent before its WAL end has been read.
                        self._safe_lsn = max(self._safe_lsn, stream.wal_end)
                    break
                decoded, lsn = decode(message.payload), message.lsn
                message = None
            if records:
                if changes.appendable(decoded):
                    self._deferred = (decoded, lsn)  # a run starts in a poll of its own
                    break
            elif changes.take(decoded, lsn):
                message = self._extend_run(stream, changes, limit)
                continue
            if changes.run_length and not isinstance(decoded, Begin | Commit | Relation):
                self._deferred = (decoded, lsn)  # a change the run cannot take ends the run
                break
            if isinstance(decoded, Begin):
                self._txn_unit = tracker.open()
            elif isinstance(decoded, Commit) and changes.run_length:
                # The run's changes of this transaction: its unit's last record, told once.
                pending = changes.pending_offset()
                if pending is not None:
                    assert self._txn_unit is not None
                    tracker.emitted(self._txn_unit, pending)
            out = changes.handle(decoded, lsn)
            if out:
                unit = self._txn_unit
                assert unit is not None
                tracker.emitted(unit, out[-1].source_offset)
                records.extend(out)
            if isinstance(decoded, Commit):
                assert self._txn_unit is not None
                tracker.close(self._txn_unit, decoded.end_lsn)
                self._txn_unit = None
                self._safe_lsn = max(self._safe_lsn, decoded.end_lsn)
        if message is not None:  # (stopping) read after a run: the next poll's
            self._deferred = (decode(message.payload), message.lsn)
        self._backoff_s = FIRST_BACKOFF_S
        if changes.run_length:
            pending = changes.pending_offset()  # the open transaction's records in the run
            if pending is not None:
                assert self._txn_unit is not None
                tracker.emitted(self._txn_unit, pending)
            run = changes.take_run()
            changes.delivered()
            return run
        heartbeat = self._heartbeat()
        if heartbeat is not None:
            records.append(heartbeat)
        changes.delivered()
        return records

    @staticmethod
    def _extend_run(
        stream: ReplicationStream, changes: ChangeStream, limit: int
    ) -> ReplicationMessage | None:
        """Take the inserts that continue the open run as they arrive, undecoded (a bulk
        load's stream: ``benchmarks/jdbc_source.py``), up to ``limit`` changes in the run;
        the first message read that does not continue it, or None."""
        return stream.read_while(changes.take_insert, limit - changes.run_length)

    def _heartbeat(self) -> SourceRecord | None:
        interval_ms = self.config.heartbeat_interval_ms
        now = time.monotonic()
        if interval_ms <= 0 or (now - self._last_heartbeat) * 1000 < interval_ms or not self._safe_lsn:
            return None
        if self._changes is not None and self._changes.in_transaction:
            return None  # its offset would fall behind the records of the open transaction
        self._last_heartbeat = now
        record = self.events.heartbeat(
            self.config.heartbeat_topic, heartbeat_offset(self._safe_lsn, now_us())
        )
        unit = self.tracker.open()
        self.tracker.emitted(unit, record.source_offset)
        self.tracker.close(unit, self._safe_lsn)
        return record

    def _confirm(self, force: bool) -> None:
        stream = self._stream
        if stream is None or not stream.streaming or not stream.is_open:
            return
        lsn = self.tracker.confirmable()
        if lsn is not None and lsn > self._confirmed_sent:
            stream.confirm(lsn, force=force)
            self._confirmed_sent = lsn
            log.debug("confirmed %s to the slot", format_lsn(lsn))
        elif force and self._confirmed_sent:
            stream.confirm(self._confirmed_sent, force=True)

    # -- failures and shutdown --------------------------------------------------------------------------

    def _on_error(self, exc: Exception) -> NoReturn:
        """Close what the error broke; retriable errors come back as RetriableException with a backoff."""
        import psycopg2

        error: BaseException = exc
        if isinstance(exc, psycopg2.Error | OSError):
            error = translate(exc, self._doing, self.config)
        elif isinstance(exc, SlotInUse):
            self._slot_attempts += 1
            name = self.config.slot_name
            if self._slot_attempts > self.config.slot_max_retries:
                error = FatalDatabaseError(
                    f'replication slot "{name}" is in use by another connection ({exc}), '
                    f"{self._slot_attempts} attempts: each connector needs its own slot.name; stop the other "
                    "consumer or terminate it (SELECT pg_terminate_backend(active_pid) FROM "
                    f"pg_replication_slots WHERE slot_name = '{name}')"
                )
            else:
                error = RetriableException(
                    f"{exc} (attempt {self._slot_attempts} of {self.config.slot_max_retries})",
                    retry_after=self.config.slot_retry_delay_ms / 1000,
                )
        self._close_connections()
        self._abandon_open_work()
        if isinstance(error, RetriableException):
            if self._changes is not None:
                self.phase = Phase.RECONNECTING
            elif self.phase is not Phase.IDLE:
                self.phase = Phase.STARTING
            self._retry_later(error, exc, self.config.retriable_restart_wait_ms)
        if error is exc:
            raise exc
        raise error from exc

    def _abandon_open_work(self) -> None:
        """Units that will get no more records confirm nothing; a message read for the next
        poll is read again after the reconnect."""
        self._deferred = None
        if self._txn_unit is not None:
            self.tracker.close(self._txn_unit, None)
            self._txn_unit = None
        if self._snapshot_unit is not None:
            self.tracker.close(self._snapshot_unit, None)
            self._snapshot_unit = None
        self._held = None

    def _close_connections(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        if self._stream is not None:
            self._stream.close()
            self._stream = None
        close_quietly(self._meta)
        self._meta = None
        self._catalog = None

    def _shutdown(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._confirm(force=True)
        except Exception as exc:  # the connection may be gone: the slot then keeps the last position
            log.info("could not confirm the final position: %s", exc)
        self._close_connections()
        if self.config.slot_drop_on_stop:
            drop_slot_when_released(self.config, self.config.slot_name)
        log.info("PostgreSQL CDC task stopped")
