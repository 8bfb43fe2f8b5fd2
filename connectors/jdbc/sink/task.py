"""``JdbcSinkTask`` (Confluent's keys) and ``DebeziumJdbcSinkTask`` (Debezium's): one
writer each, and what to do when the database fails.

A database error that is not about a record's data (the server down, a lost connection,
a lock timeout, a table changed behind the sink's back) is retried as Confluent's sink
retries it: ``put`` raises ``RetriableException`` after asking the worker to wait
``retry.backoff.ms``, the worker hands the same batch back, up to ``max.retries`` times;
then the task fails with a ``ConnectException`` naming the database URL (password masked)
and the driver's message. A successful ``put`` restores the retries.

With ``exactly.once.enabled`` the task reads the offsets the database holds for the
partitions it is given (``open``) and rewinds its consumer to them
(``SinkTaskContext.offset``), so a restarted task resumes exactly after the last batch
committed with its rows, whatever Kafka's own committed offsets say. Should the database
be away then, ``put`` reads them first, under the retry policy; the writer skips records
the database already holds either way.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from typing import ClassVar

from sqlalchemy import exc as sa_exc

from connect.api import (
    ConnectException,
    DataException,
    RetriableException,
    SinkRecord,
    SinkRecordBatch,
    SinkTask,
    TopicPartition,
)
from connectors.jdbc.query.database import Database
from connectors.jdbc.sink.config import ConfluentSinkConfig, DebeziumSinkConfig, SinkSettings
from connectors.jdbc.sink.writer import Writer

log = logging.getLogger(__name__)

VERSION = "1.0.0"


class JdbcSinkTask(SinkTask):
    """Writes records into tables, Confluent's ``JdbcSinkTask`` semantics."""

    Config: ClassVar[type[ConfluentSinkConfig] | type[DebeziumSinkConfig]] = ConfluentSinkConfig

    settings: SinkSettings

    def __init__(self) -> None:
        self.database: Database | None = None
        self.writer: Writer | None = None
        self.retries_left = 0
        self._unread: set[TopicPartition] = set()  # assigned, stored offsets not read yet

    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        self.settings = settings = self.Config.parse(props).settings()
        if settings.url.ignored:
            log.warning(
                "connection.url parameters with no Python equivalent are ignored: %s", settings.url.ignored
            )
        self.database = Database(
            settings.url.url, attempts=1, backoff_s=0, zone_name=str(settings.zone), zone=settings.zone
        )
        self.writer = Writer(settings, self.database.engine, self._report)
        self.retries_left = settings.max_retries

    def _report(self, record: SinkRecord, error: DataException) -> None:
        reporter = self.context.errant_record_reporter()
        if reporter is None:
            raise error
        reporter.report(record, error)

    def open(self, partitions: Collection[TopicPartition]) -> None:
        if not self.settings.exactly_once or self.writer is None or not partitions:
            return
        self._unread |= set(partitions)
        try:
            self._resume()
        except sa_exc.SQLAlchemyError as exc:
            # Not fatal here: put() reads them again under the retry policy, and skips the
            # records the database holds meanwhile.
            log.warning(
                "cannot read the stored offsets from %s yet: %s", self.settings.shown_url, _message(exc)
            )

    def _resume(self) -> None:
        """Rewind the partitions just assigned to the offsets the database holds."""
        if not self._unread or self.writer is None:
            return
        stored = self.writer.stored_offsets(self._unread)
        self._unread = set()
        if stored:
            log.info("resuming from the offsets stored in the database: %s", stored)
            self.context.offset(stored)

    def close(self, partitions: Collection[TopicPartition]) -> None:
        self._unread -= set(partitions)
        if self.writer is not None:
            self.writer.forget(partitions)

    def put(self, records: SinkRecordBatch) -> None:
        if self.writer is None or not (records or self._unread):
            return
        try:
            self._resume()
            if records:
                self.writer.write(records)
        except sa_exc.SQLAlchemyError as exc:
            self.writer.forget_tables()
            if self.retries_left <= 0:
                raise ConnectException(
                    f"writing to {self.settings.shown_url} failed after {self.settings.max_retries} "
                    f"retries: {_message(exc)}"
                ) from exc
            self.retries_left -= 1
            log.warning(
                "writing to %s failed (%d retries left): %s",
                self.settings.shown_url,
                self.retries_left,
                _message(exc),
            )
            self.context.timeout(self.settings.retry_backoff_ms)
            raise RetriableException(f"writing to {self.settings.shown_url} failed: {_message(exc)}") from exc
        self.retries_left = self.settings.max_retries

    def stop(self) -> None:
        database, self.database = self.database, None
        if database is not None:
            database.close()


class DebeziumJdbcSinkTask(JdbcSinkTask):
    """The same writer under Debezium's keys, reading change events natively."""

    Config = DebeziumSinkConfig


def _message(exc: BaseException) -> str:
    if isinstance(exc, sa_exc.DBAPIError) and exc.orig is not None:
        return f"{type(exc.orig).__name__}: {str(exc.orig).strip()}"
    return f"{type(exc).__name__}: {exc}"
