"""SparkSinkConnector: topics into a Spark table, exactly once for file formats.

A task buffers records; every ``flush.size`` records (or ``flush.interval.ms``) it
turns the buffer into an Arrow table on its own thread and hands it to its writer
thread, which runs the Spark job and commits (``spark_sink.table_log``). The next
buffer fills meanwhile, so consuming and converting overlap with Spark writing; one
write is in flight at a time, which keeps each partition's ranges in order.

Consumer offsets follow the table: ``pre_commit`` returns only what the writer has
committed, and ``open`` seeks each partition to the table's committed position, so a
crash at any instant neither loses nor repeats a record in the table.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Collection, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from connect.api import (
    ConnectException,
    DataException,
    SinkConnector,
    SinkRecord,
    SinkRecordBatch,
    SinkTask,
    Task,
    TopicPartition,
)
from spark_sink.config import SparkSinkConfig
from spark_sink.session import shared_session
from spark_sink.table_log import FencedException

if TYPE_CHECKING:
    from spark_sink.writer import Prepared

log = logging.getLogger(__name__)

VERSION = "1.0"
TASK_INDEX = "spark.sink.task.index"  # set by the connector: names the task's staging directory


class SparkSinkConnector(SinkConnector):
    Config = SparkSinkConfig

    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        SparkSinkConfig.parse(props)
        self.props = dict(props)

    def task_class(self) -> type[Task]:
        return SparkSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{**self.props, TASK_INDEX: str(i)} for i in range(max_tasks)]

    def stop(self) -> None:
        pass


class SparkSinkTask(SinkTask):
    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        self.config = config = SparkSinkConfig.parse(props)
        self.stopping = threading.Event()
        # pyarrow (and PySpark) are imported when a task starts, not with this module, which
        # the worker imports to discover its plugins: an idle worker does not carry them.
        from connect.api.arrow import BatchBuilder
        from spark_sink.writer import TableWriter

        spark = shared_session(config.spark_master, config.spark_app_name, config.spark_conf())
        declared = None
        if config.value_schema:
            declared = _declared_schema(spark, config.value_schema)
        self.builder = BatchBuilder(
            config.include_kafka_coordinates, config.behavior_on_null_values, declared
        )
        owner = f"{props.get('name', 'connector')}-{props.get(TASK_INDEX, '0')}"
        self.writer = TableWriter(spark, config, owner)
        self.writer.clean_staging()
        self.buffer: list[SinkRecord] = []
        self.buffered_since = 0.0
        self.committed: dict[TopicPartition, int] = {}  # next offset to read, per partition
        self.inflight: Future[dict[TopicPartition, int]] | None = None
        self.failure: BaseException | None = None
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"spark-sink-{owner}")
        log.info("Spark sink writing %s table at %s", config.normalized_format, self.writer.location)

    # -- partitions ----------------------------------------------------------------------

    def open(self, partitions: Collection[TopicPartition]) -> None:
        resume = {}
        for tp in partitions:
            last = self.writer.recover(tp)
            if last is not None:
                resume[tp] = last + 1
                self.committed[tp] = last + 1
        if resume:
            log.info(
                "Resuming from the table's commit log: %s",
                ", ".join(f"{tp}@{o}" for tp, o in sorted(resume.items())),
            )
            self.context.offset(resume)

    def close(self, partitions: Collection[TopicPartition]) -> None:
        self._wait_inflight()
        gone = set(partitions)
        # Buffered records of these partitions were never committed: whoever opens them next
        # resumes from the table's commit log and reads them again.
        self.buffer = [r for r in self.buffer if TopicPartition(r.topic, r.kafka_partition or 0) not in gone]
        for tp in gone:
            self.committed.pop(tp, None)

    # -- records -------------------------------------------------------------------------

    def put(self, records: SinkRecordBatch) -> None:
        self._raise_failure()
        if records:
            if not self.buffer:
                self.buffered_since = time.monotonic()
            self.buffer.extend(records)
        if not self.buffer:
            return
        due = time.monotonic() - self.buffered_since >= self.config.flush_interval_ms / 1000
        if len(self.buffer) >= self.config.flush_size or due:
            self._flush_buffer()

    def pre_commit(self, current_offsets: Mapping[TopicPartition, int]) -> Mapping[TopicPartition, int]:
        self._collect()
        return {tp: off for tp, off in self.committed.items() if tp in current_offsets}

    def flush(self, current_offsets: Mapping[TopicPartition, int]) -> None:
        """Write everything buffered and wait for it (tests and shutdown use this)."""
        if self.buffer:
            self._flush_buffer()
        self._wait_inflight()
        self._raise_failure()

    def stop(self) -> None:
        self.stopping.set()
        pool = getattr(self, "pool", None)
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    # -- the writer thread ---------------------------------------------------------------

    def _flush_buffer(self) -> None:
        records, self.buffer = self.buffer, []
        batch = self.builder.build(records)
        prepared, refused = self.writer.prepare(batch)
        reports = [self._report(r, reason) for r, reason in batch.rejected + refused]
        # One write at a time: partitions' ranges must commit in order.
        self._wait_inflight()
        self._raise_failure()
        self.inflight = self.pool.submit(self._write, prepared, reports)

    def _report(self, record: SinkRecord, reason: str) -> Future[None] | None:
        error = DataException(f"Record {record.where} {reason}")
        reporter = self.context.errant_record_reporter()
        if reporter is None:
            raise error
        return reporter.report(record, error)

    def _write(self, prepared: Prepared, reports: list[Future[None] | None]) -> dict[TopicPartition, int]:
        # Refused records must be in the dead letter queue before the table commits past them.
        for f in reports:
            if f is not None:
                f.result()
        attempt = 0
        while True:
            try:
                started = time.perf_counter()
                committed = self.writer.write(prepared)
                log.debug("Wrote %d rows in %.0f ms", prepared.rows, (time.perf_counter() - started) * 1000)
                return committed
            except FencedException:
                raise
            except Exception as exc:
                if attempt >= self.config.max_retries or self.stopping.is_set():
                    log.error("Writing to %s failed for good", self.writer.location, exc_info=exc)
                    # The JVM's stack trace is in the log; the task's status gets the cause alone.
                    raise ConnectException(
                        f"Writing {prepared.rows} records to {self.writer.location} failed "
                        f"{attempt + 1} times; nothing of them was committed: {_cause(exc)}"
                    ) from None
                backoff = self.config.retry_backoff_ms * 2**attempt / 1000
                attempt += 1
                log.warning(
                    "Writing to %s failed (attempt %d), retrying in %.1f s: %s",
                    self.writer.location,
                    attempt,
                    backoff,
                    _cause(exc),
                )
                if self.stopping.wait(backoff):
                    raise ConnectException("The task stopped while retrying a failed write") from exc

    def _collect(self) -> None:
        """Take the result of a finished write (committed offsets or its failure)."""
        f = self.inflight
        if f is None or not f.done():
            return
        self.inflight = None
        try:
            for tp, last in f.result().items():
                self.committed[tp] = last + 1
        except BaseException as exc:  # kept and raised from put(): the task fails there
            self.failure = exc

    def _wait_inflight(self) -> None:
        f = self.inflight
        if f is not None:
            with contextlib.suppress(BaseException):
                f.result()
            self._collect()

    def _raise_failure(self) -> None:
        self._collect()
        if self.failure is not None:
            raise self.failure


def _cause(exc: BaseException) -> str:
    """One line saying what failed: a JVM exception's class and message, not its stack."""
    java = getattr(exc, "java_exception", None)
    if java is not None:
        try:
            return str(java.toString())
        except Exception:  # the gateway may be gone
            pass
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _declared_schema(spark: Any, ddl: str) -> Any:
    """``value.schema`` (Spark DDL) as an Arrow schema."""
    from pyspark.sql.types import StructType

    from spark_sink.writer import arrow_schema

    try:
        struct = StructType.fromDDL(ddl)
    except Exception as exc:
        raise ConnectException(f"value.schema is not a Spark DDL schema ({ddl!r}): {exc}") from exc
    return arrow_schema(struct)
