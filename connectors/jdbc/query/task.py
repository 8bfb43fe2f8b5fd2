"""``JdbcSourceTask``: queries its tables in turn and turns their rows into records.

Each call of ``poll`` picks the table that has been due longest, runs one query for
it (at most ``batch.max.rows`` rows) and returns the records (maybe none). A table whose query
filled a batch is due again at once, after the other due tables have had their turn;
one that is caught up waits ``poll.interval.ms``. ``poll`` blocks for at most about a
second when nothing is due, so the task stops and pauses promptly.

Offsets (Confluent's shape) resume each table where the last committed record left
it: source partition ``{"protocol": "1", "table": "<catalog.schema.table>"}`` (or
``{"query": "query"}``), offset ``{"incrementing": id}``, ``{"timestamp": epoch ms,
"timestamp_nanos": ns}`` or both. Offsets Confluent's connector wrote under the older
``{"table": "<name>"}`` partition are read too.

Errors: a lost connection raises ``RetriableException`` and the next poll reconnects
(per ``connection.attempts``; when that fails too the task fails); other transient
database errors (deadlocks, lock timeouts) are retried; SQL the database rejects
(a bad custom query) and values that do not fit their schema fail the task, with the
database's message in the task's status. A table dropped while the task runs is
skipped until the connector's table monitor reassigns the tables.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence

from sqlalchemy import exc as sa_exc

from connect.api import ConnectException, RetriableException, SourceRecord, SourceTask, partition_key
from connectors.jdbc.query.config import JdbcSourceConfig
from connectors.jdbc.query.criteria import Mode, Offset
from connectors.jdbc.query.database import Database, Stopped, describe_error
from connectors.jdbc.query.dialects import TableMissing
from connectors.jdbc.query.querier import TableQuerier
from connectors.jdbc.query.tables import QUERY_PARTITION, TableId, decode_tables

log = logging.getLogger(__name__)

VERSION = "1.0"
#: The task config key with the task's tables (``encode_tables``), as Confluent names it.
TABLES_CONFIG = "tables"
# The longest poll() blocks when no table is due, so that stop and pause are prompt.
_MAX_POLL_WAIT_S = 1.0
# Stop waits this long for a poll in progress before leaving the cleanup to it.
_STOP_WAIT_S = 10.0


class JdbcSourceTask(SourceTask):
    """Copies the tables (or the query) its ``tables`` key names; see the module doc."""

    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        self.config = config = JdbcSourceConfig.parse(props)
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._runs = 0
        self.database = Database.from_config(config, self._stopping)
        tables: list[TableId | None]
        if config.query:
            tables = [None]
        else:
            try:
                tables = list(decode_tables(props.get(TABLES_CONFIG, "")))
            except ValueError as exc:
                raise ConnectException(f"invalid task configuration: {exc}") from None
        offsets = self._stored_offsets(tables)
        dialect = self.database.dialect
        self.queriers = [TableQuerier(config, dialect, t, offsets.get(t)) for t in tables]
        if not self.queriers:
            log.info("no tables assigned: idle until the connector finds some")
            return
        try:
            connection = self.database.connection()
            for querier in self.queriers:
                try:
                    querier.describe(connection)
                except TableMissing:
                    self._mark_missing(querier)
            self.database.end_transaction()
        except Stopped:
            return
        except sa_exc.SQLAlchemyError as exc:
            self.database.close()
            raise ConnectException(f"cannot read the layout of the tables: {describe_error(exc)}") from exc
        except BaseException:
            self.database.close()
            raise
        log.info(
            "copying %s in %s mode: %s",
            "a query" if config.query else f"{len(self.queriers)} table(s)",
            config.mode,
            ", ".join(q.what for q in self.queriers),
        )

    def _stored_offsets(self, tables: list[TableId | None]) -> dict[TableId | None, Offset | None]:
        """Each table's committed offset: protocol 1's partition first, then protocol 0's."""
        if self.config.query_mode is Mode.BULK:
            return {}
        candidates: dict[TableId | None, list[dict[str, str]]] = {
            t: [t.partition(), t.legacy_partition()] if t is not None else [dict(QUERY_PARTITION)]
            for t in tables
        }
        reader = self.context.offset_storage_reader()
        stored = reader.offsets([p for ps in candidates.values() for p in ps])
        out: dict[TableId | None, Offset | None] = {}
        for table, partitions in candidates.items():
            for partition in partitions:
                found = stored.get(partition_key(partition))
                if found:
                    try:
                        out[table] = Offset.from_map(found)
                    except ValueError as exc:
                        raise ConnectException(
                            f"the committed offset of {partition} is unusable: {exc}"
                        ) from None
                    log.info("%s resumes after %s", table.fqn if table else "the query", found)
                    break
        return out

    def _mark_missing(self, querier: TableQuerier) -> None:
        if not querier.missing:
            log.warning("%s does not exist (any more): skipped until the tables are reassigned", querier.what)
        querier.missing = True
        querier.next_due = time.monotonic() + querier.interval_s

    # -- polling ---------------------------------------------------------------------------

    def _next(self) -> TableQuerier | None:
        for querier in self.queriers:
            if querier.streaming:
                return querier  # a bulk read in progress is finished first
        if not self.queriers:
            return None
        return min(self.queriers, key=lambda q: (q.next_due, q.last_run))

    def poll(self) -> Sequence[SourceRecord] | None:
        deadline = time.monotonic() + _MAX_POLL_WAIT_S
        with self._lock:
            try:
                while not self._stopping.is_set():
                    querier = self._next()
                    now = time.monotonic()
                    if querier is None or querier.next_due > now:
                        wake = deadline if querier is None else min(querier.next_due, deadline)
                        if wake >= deadline:
                            self._stopping.wait(max(0.0, deadline - now))
                            return []
                        self._stopping.wait(wake - now)
                        continue
                    # One query per poll: an empty answer returns at once too, and the
                    # next poll moves on to the next table due.
                    return self._read(querier)
                return None
            finally:
                if self._stopping.is_set():
                    self._release()

    def _read(self, querier: TableQuerier) -> Sequence[SourceRecord]:
        database = self.database
        self._runs += 1
        try:
            connection = database.connection()
            records = querier.read(connection, self._runs)
            if not querier.streaming:
                database.end_transaction()
            if querier.missing:
                log.info("%s exists again", querier.what)
                querier.missing = False
            return records
        except Stopped:
            return []
        except TableMissing:
            database.end_transaction()
            self._mark_missing(querier)
            return []
        except sa_exc.DBAPIError as exc:
            querier.reset()
            # The transaction (or the whole connection) is in an unknown state: start afresh.
            database.discard()
            reason = describe_error(exc)
            if exc.connection_invalidated:
                raise RetriableException(
                    f"lost the connection to {database.shown_url} reading {querier.what}: {reason}; "
                    "reconnecting"
                ) from exc
            if database.dialect.is_permanent(exc):
                if querier.table is not None and not self._table_exists(querier.table):
                    self._mark_missing(querier)
                    return []
                raise ConnectException(f"reading {querier.what} failed: {reason}") from exc
            raise RetriableException(
                f"reading {querier.what} failed, retrying: {reason}", retry_after=min(querier.interval_s, 1.0)
            ) from exc
        except BaseException:
            querier.reset()
            raise

    def _table_exists(self, table: TableId) -> bool:
        connection = self.database.connection()
        try:
            return self.database.dialect.table_exists(connection, table)
        finally:
            self.database.end_transaction()

    # -- stopping ---------------------------------------------------------------------------

    def stop(self) -> None:
        stopping: threading.Event | None = getattr(self, "_stopping", None)
        if stopping is None:  # never started
            return
        stopping.set()
        # A poll in progress notices the flag and cleans up itself; otherwise clean up here.
        if self._lock.acquire(timeout=_STOP_WAIT_S):
            try:
                self._release()
            finally:
                self._lock.release()

    def _release(self) -> None:
        for querier in getattr(self, "queriers", []):
            querier.reset()
        database = getattr(self, "database", None)
        if database is not None:
            database.close()
