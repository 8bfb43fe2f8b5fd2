"""The Elasticsearch sink task: records into bulk requests, several in flight, offsets
committed only as far as Elasticsearch has acknowledged.

``put`` turns records into bulk actions and appends them to the open batch; a batch
is sent when it reaches ``batch.size`` or ``bulk.size.bytes``, or has waited
``linger.ms`` (a small linger thread sees to that). Up to ``max.in.flight.requests``
batches are sent at once, each on a pool thread that retries what failed transiently,
item by item. When ``max.buffered.records`` are outstanding, the task pauses its
partitions rather than buffering without bound, and resumes once requests complete.

Nothing is committed that Elasticsearch has not acknowledged (``offsets``): after a
crash the records since the last commit come again, and their document ids (with
external versions when keys are ids) make indexing them again harmless.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Collection, Mapping
from concurrent.futures import ThreadPoolExecutor

from connect.api import (
    ConnectException,
    DataException,
    RetriableException,
    SinkRecord,
    SinkRecordBatch,
    SinkTask,
    TopicPartition,
)
from connect.api.retry import backoff_seconds
from connectors.elasticsearch.bulk_items import Outcome, classify
from connectors.elasticsearch.config import ElasticsearchSinkConfig
from connectors.elasticsearch.documents import Action, DocumentBuilder
from connectors.elasticsearch.errors import TransientError
from connectors.elasticsearch.mapping import index_mapping
from connectors.elasticsearch.offsets import OffsetTracker, Pending

log = logging.getLogger(__name__)

VERSION = "1.0"
#: How long put() waits for requests to complete before pausing the partitions.
_BACKPRESSURE_WAIT_S = 1.0


class _Item:
    """An action on its way: the record it came from and its place in the offset tracker."""

    __slots__ = ("action", "entry", "lines", "record")

    def __init__(self, action: Action, record: SinkRecord) -> None:
        self.action = action
        self.record = record
        self.lines = action.lines()
        self.entry: Pending


class ElasticsearchSinkTask(SinkTask):
    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        self.config = config = ElasticsearchSinkConfig.parse(props)
        self.tolerate_all = str(props.get("errors.tolerance", "none")).strip().lower() == "all"
        self.documents = DocumentBuilder(config)
        # The client is imported here, not with the module: see connectors.elasticsearch.errors.
        from connectors.elasticsearch.cluster import Cluster

        self.cluster = Cluster(config)
        self.tracker = OffsetTracker()
        self.lock = threading.Condition()
        self.batch: list[_Item] = []
        self.batch_bytes = 0
        self.batch_since = 0.0
        self.failure: BaseException | None = None
        self.stopping = threading.Event()
        self.paused = False
        self.index_attempts = 0  # consecutive put() calls that could not reach the cluster
        self.pool = ThreadPoolExecutor(config.max_in_flight_requests, thread_name_prefix="es-bulk")
        self.linger = threading.Thread(target=self._linger_loop, name="es-linger", daemon=True)
        self.linger.start()
        log.info("Elasticsearch sink writing to %s", ", ".join(self.cluster.urls))

    # -- records -------------------------------------------------------------------------

    def put(self, records: SinkRecordBatch) -> None:
        self._raise_failure()
        if records:
            self._ensure_indices(records)
            self.index_attempts = 0
            self._add(records)
        self._apply_backpressure()

    def _ensure_indices(self, records: Collection[SinkRecord]) -> None:
        """Create the indices these records need before any is buffered, so that a cluster
        out of reach makes put() retriable with nothing half-done."""
        first_of: dict[str, SinkRecord] = {}
        for r in records:
            if r.topic not in first_of or (
                first_of[r.topic].value_schema is None and r.value_schema is not None
            ):
                first_of[r.topic] = r
        try:
            for topic, record in first_of.items():
                try:
                    index = self.documents.index_for(topic)
                except DataException:
                    continue  # reported per record by _add
                mappings = None
                if not self.config.ignores_schema(topic):
                    mappings = index_mapping(record.value_schema, self.config.compact_map_entries)
                self.cluster.ensure(index, mappings)
        except TransientError as exc:
            self.index_attempts += 1
            if self.index_attempts > self.config.max_retries:
                raise ConnectException(f"{exc} ({self.index_attempts} attempts)") from None
            wait = backoff_seconds(self.index_attempts - 1, self.config.retry_backoff_ms)
            self.context.timeout(int(wait * 1000))
            raise RetriableException(str(exc), retry_after=wait) from None

    def _add(self, records: Collection[SinkRecord]) -> None:
        # Documents are built outside the lock (the bulk threads need it meanwhile); the
        # tracker and the open batch take the whole put() under it at once.
        built: list[tuple[SinkRecord, _Item | None]] = []
        for record in records:
            try:
                action = self.documents.build(record)
            except DataException as exc:
                self._invalid(record, exc)
                continue
            built.append((record, _Item(action, record) if action is not None else None))
        batch_size, limit = self.config.batch_size, self.config.bulk_size_bytes
        with self.lock:
            add = self.tracker.add
            for record, item in built:
                entry = add(
                    TopicPartition(record.original_topic, record.original_kafka_partition or 0),
                    record.original_kafka_offset,
                )
                if item is None:  # a deliberately skipped tombstone
                    self.tracker.done(entry)
                    continue
                item.entry = entry
                if not self.batch:
                    self.batch_since = time.monotonic()
                    self.lock.notify()
                self.batch.append(item)
                self.batch_bytes += item.action.size()
                if len(self.batch) >= batch_size or (limit > 0 and self.batch_bytes >= limit):
                    self._send_batch()

    def _invalid(self, record: SinkRecord, exc: DataException) -> None:
        if self.config.drop_invalid_message:
            log.warning("Dropping record %s (drop.invalid.message=true): %s", record.where, exc)
            return
        reporter = self.context.errant_record_reporter()
        if reporter is None:
            raise exc
        reporter.report(record, exc)  # fails the task unless errors.tolerance=all

    def _apply_backpressure(self) -> None:
        limit = self.config.max_buffered_records
        with self.lock:
            if self.tracker.unacked >= limit and not self.paused:
                # Requests complete every few milliseconds under a steady stream: wait for one
                # briefly rather than pause, since a paused consumer only resumes after its
                # next poll times out. A cluster that stays behind gets the partitions paused.
                self.lock.wait_for(
                    lambda: (
                        self.tracker.unacked < limit or self.failure is not None or self.stopping.is_set()
                    ),
                    _BACKPRESSURE_WAIT_S,
                )
            outstanding = self.tracker.unacked
        if outstanding >= limit and not self.paused:
            partitions = self.context.assignment()
            log.info("%d records await Elasticsearch (max.buffered.records=%d): pausing", outstanding, limit)
            self.context.pause(*partitions)
            self.paused = True
        elif self.paused and outstanding < limit:
            self.context.resume(*self.context.assignment())
            self.paused = False

    # -- commits and partitions ----------------------------------------------------------

    def pre_commit(self, current_offsets: Mapping[TopicPartition, int]) -> Mapping[TopicPartition, int]:
        self._raise_failure()
        with self.lock:
            return self.tracker.committable(dict(current_offsets))

    def flush(self, current_offsets: Mapping[TopicPartition, int]) -> None:
        """Send everything and wait until Elasticsearch has acknowledged it."""
        deadline = time.monotonic() + self.config.flush_timeout_ms / 1000
        with self.lock:
            if self.batch:
                self._send_batch()
            while self.tracker.unacked and self.failure is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ConnectException(
                        f"{self.tracker.unacked} records not acknowledged by Elasticsearch within "
                        f"flush.timeout.ms={self.config.flush_timeout_ms}"
                    )
                self.lock.wait(min(left, 0.1))
        self._raise_failure()

    def close(self, partitions: Collection[TopicPartition]) -> None:
        gone = set(partitions)
        with self.lock:
            self.tracker.close(list(gone))
            # Records of these partitions not sent yet are the next owner's, from the commit.
            kept = [
                i
                for i in self.batch
                if TopicPartition(i.record.original_topic, i.record.original_kafka_partition or 0) not in gone
            ]
            self.batch = kept
            self.batch_bytes = sum(i.action.size() for i in kept)

    def stop(self) -> None:
        self.stopping.set()
        with self.lock:
            self.lock.notify_all()
        pool = getattr(self, "pool", None)
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        cluster = getattr(self, "cluster", None)
        if cluster is not None:
            cluster.close()

    # -- sending -------------------------------------------------------------------------

    def _send_batch(self) -> None:
        """Hand the open batch to a pool thread (call with the lock held)."""
        batch, self.batch, self.batch_bytes = self.batch, [], 0
        if batch and not self.stopping.is_set():
            self.pool.submit(self._send, batch)

    def _linger_loop(self) -> None:
        linger = self.config.linger_ms / 1000
        with self.lock:
            while not self.stopping.is_set():
                if not self.batch:
                    self.lock.wait(1.0)
                    continue
                due = self.batch_since + linger - time.monotonic()
                if due > 0:
                    self.lock.wait(due)
                    continue
                try:
                    self._send_batch()
                except RuntimeError:  # the pool shut down under us: the task is stopping
                    return

    def _send(self, items: list[_Item]) -> None:
        try:
            self._send_with_retries(items)
        except BaseException as exc:
            self._fail(exc)

    def _send_with_retries(self, items: list[_Item]) -> None:
        config = self.config
        attempt = 0
        while items:
            if self.stopping.is_set() or self.failure is not None:
                return  # unacknowledged: not committed, read again by whoever resumes
            try:
                answers = self.cluster.bulk([line for item in items for line in item.lines])
            except TransientError as exc:
                if attempt >= config.max_retries:
                    raise ConnectException(
                        f"{exc}; gave up after {attempt + 1} attempts (max.retries={config.max_retries})"
                    ) from None
                wait = backoff_seconds(attempt, config.retry_backoff_ms)
                log.warning(
                    "%s; retrying %d documents in %.2f s (attempt %d)", exc, len(items), wait, attempt + 1
                )
                attempt += 1
                self.stopping.wait(wait)
                continue
            if len(answers) != len(items):
                raise ConnectException(
                    f"Elasticsearch answered a bulk request of {len(items)} documents "
                    f"with {len(answers)} items"
                )
            retry: list[_Item] = []
            done: list[_Item] = []
            reason = ""
            for item, answer in zip(items, answers, strict=True):
                action = item.action
                outcome, why = classify(action.op, action.version is not None, answer)
                if outcome is Outcome.DONE:
                    done.append(item)
                elif outcome is Outcome.RETRY:
                    retry.append(item)
                    reason = why
                elif outcome is Outcome.MALFORMED:
                    self._malformed(item, why)
                else:
                    raise ConnectException(
                        f"Elasticsearch refused record {item.record.where} "
                        f"({action.op} in {action.index}): {why}"
                    )
            self._done(done)
            if retry:
                if attempt >= config.max_retries:
                    raise ConnectException(
                        f"Elasticsearch kept refusing {len(retry)} documents ({reason}); gave up after "
                        f"{attempt + 1} attempts (max.retries={config.max_retries})"
                    )
                wait = backoff_seconds(attempt, config.retry_backoff_ms)
                log.info(
                    "Elasticsearch refused %d of %d documents for now (%s); retrying in %.2f s",
                    len(retry),
                    len(items),
                    reason,
                    wait,
                )
                attempt += 1
                self.stopping.wait(wait)
            items = retry

    def _malformed(self, item: _Item, reason: str) -> None:
        record, action = item.record, item.action
        message = f"Elasticsearch refused the document of record {record.where} in {action.index}: {reason}"
        behavior = self.config.behavior_on_malformed_documents
        if self.tolerate_all:
            # The dead letter queue gets it with the reason, whatever the behaviour says.
            reporter = self.context.errant_record_reporter()
            if reporter is not None:
                reporter.report(record, DataException(message))
            (log.debug if behavior == "ignore" else log.warning)("%s (sent to error reporting)", message)
        elif behavior == "ignore":
            log.debug("%s (ignored)", message)
        elif behavior == "warn":
            log.warning("%s (skipped: behavior.on.malformed.documents=warn)", message)
        else:
            raise ConnectException(
                f"{message}. Set behavior.on.malformed.documents=ignore or warn to skip such documents, "
                "or errors.tolerance=all to send them to the dead letter queue"
            )
        self._done([item])

    def _done(self, items: list[_Item]) -> None:
        with self.lock:
            for item in items:
                self.tracker.done(item.entry)
            self.lock.notify_all()  # flush() and the backpressure wait are watching the count

    def _fail(self, exc: BaseException) -> None:
        with self.lock:
            if self.failure is None:
                self.failure = exc
                log.error("Elasticsearch sink failed: %s", exc)
            self.lock.notify_all()

    def _raise_failure(self) -> None:
        if self.failure is not None:
            raise self.failure
