"""The sink pipeline: consume → convert → transform → put → flush/pre_commit → commit.

The consumer group is ``connect-<connector>``. Offsets are committed only as far as
the task says it has durably written (``pre_commit``), every
``offset.flush.interval.ms``, when the task asks (``request_commit``), before
partitions are revoked and when the task stops. ``put`` raising
``RetriableException`` pauses consumption and hands the same batch back after
``context.timeout`` ms; the consumer keeps being polled meanwhile, so the group
does not consider the task dead. Rebalance callbacks run inside ``consume`` on this
task's thread. What a poll becomes for ``put`` (a ``SinkRecordBatch``) is
``connect.runtime.sink_conversion``'s.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Mapping
from concurrent.futures import Future
from itertools import repeat
from operator import is_not
from typing import Any

from confluent_kafka import (
    OFFSET_INVALID,
    Consumer,
    KafkaError,
    KafkaException,
    Message,
)
from confluent_kafka import (
    TopicPartition as KafkaTopicPartition,
)

from connect.api.converter import Converter, HeaderConverter
from connect.api.errors import ConnectException, RetriableException
from connect.api.plugin_metrics import PluginMetrics
from connect.api.records import SinkRecord, TimestampType, TopicPartition
from connect.api.sink_batch import SinkRecordBatch
from connect.api.task import ErrantRecordReporter, SinkTask, SinkTaskContext
from connect.runtime.errors import ProcessingContext, RawRecord, RetryWithToleranceOperator, Stage
from connect.runtime.sink_conversion import SinkConversion, raw_record, spans
from connect.runtime.status import ConnectorTaskId, StatusListener, TargetState
from connect.runtime.transformation_chain import TransformationChain
from connect.runtime.worker_task import WorkerTask

log = logging.getLogger(__name__)

_EMPTY = SinkRecordBatch.of(())

_TIMESTAMP_TYPES = {
    0: TimestampType.NO_TIMESTAMP_TYPE,
    1: TimestampType.CREATE_TIME,
    2: TimestampType.LOG_APPEND_TIME,
}
_POLL_S = 0.5
_CONSUME_SLICE = 1000
# Consumer errors no retry can fix: the task fails with them.
_FATAL_CONSUMER_ERRORS = frozenset(
    {
        KafkaError.TOPIC_AUTHORIZATION_FAILED,
        KafkaError.GROUP_AUTHORIZATION_FAILED,
        KafkaError.SASL_AUTHENTICATION_FAILED,
        KafkaError._AUTHENTICATION,
        KafkaError._INVALID_ARG,
    }
)


class _SinkContext(SinkTaskContext):
    def __init__(self, runner: WorkerSinkTask) -> None:
        self.runner = runner
        self.rewinds: dict[TopicPartition, int] = {}
        self.timeout_ms = 0
        self.commit_requested = False
        self.paused_by_task: set[TopicPartition] = set()

    def configs(self) -> dict[str, str]:
        return dict(self.runner.task_config)

    def plugin_metrics(self) -> PluginMetrics:
        return self.runner.plugin_metrics

    def offset(
        self, offsets: Mapping[TopicPartition, int] | TopicPartition, offset: int | None = None
    ) -> None:
        if isinstance(offsets, TopicPartition):
            if offset is None:
                raise ValueError("offset() with a single partition needs an offset")
            self.rewinds[offsets] = offset
        else:
            self.rewinds.update(offsets)

    def timeout(self, timeout_ms: int) -> None:
        self.timeout_ms = timeout_ms

    def assignment(self) -> set[TopicPartition]:
        return set(self.runner.assigned)

    def pause(self, *partitions: TopicPartition) -> None:
        self._check_assigned(partitions)
        self.paused_by_task.update(partitions)
        self.runner.apply_pauses()

    def resume(self, *partitions: TopicPartition) -> None:
        self._check_assigned(partitions)
        self.paused_by_task.difference_update(partitions)
        self.runner.apply_pauses()

    def _check_assigned(self, partitions: tuple[TopicPartition, ...]) -> None:
        unknown = [str(p) for p in partitions if p not in self.runner.assigned]
        if unknown:
            raise ConnectException(f"partitions not assigned to this task: {', '.join(unknown)}")

    def request_commit(self) -> None:
        self.commit_requested = True

    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        return self.runner.errant_reporter


class _ErrantRecordReporter(ErrantRecordReporter):
    def __init__(self, runner: WorkerSinkTask) -> None:
        self.runner = runner
        self.outstanding: list[Future[None]] = []

    def report(self, record: SinkRecord, error: BaseException) -> Future[None]:
        raw = self.runner.raw_of(record)
        op = self.runner.operator
        ctx = ProcessingContext(
            self.runner.id.connector,
            self.runner.id.task,
            Stage.TASK_PUT,
            f"{type(self.runner.task).__module__}.{type(self.runner.task).__qualname__}",
            error,
            consumed=raw,
        )
        futures = op.report(ctx)
        if not op.config.tolerate_all:
            raise ConnectException("Tolerance exceeded in error handler") from error
        done: Future[None] = Future()

        def finish(_: Future[None]) -> None:
            if all(f.done() for f in futures) and not done.done():
                errors = [f.exception() for f in futures if f.exception() is not None]
                if errors:
                    done.set_exception(errors[0])
                else:
                    done.set_result(None)

        if not futures:
            done.set_result(None)
        for f in futures:
            f.add_done_callback(finish)
        self.outstanding.append(done)
        return done

    def await_outstanding(self) -> None:
        # Sinks may report from their own threads while this runs: take futures one by one.
        while self.outstanding:
            self.outstanding.pop(0).result()


class WorkerSinkTask(WorkerTask):
    is_sink = True

    def __init__(
        self,
        task_id: ConnectorTaskId,
        task: SinkTask,
        task_config: dict[str, str],
        worker_id: str,
        status: StatusListener,
        target_state: TargetState,
        operator: RetryWithToleranceOperator,
        key_converter: Converter,
        value_converter: Converter,
        header_converter: HeaderConverter,
        chain: TransformationChain[Any],
        consumer_config: dict[str, Any],
        topics: list[str],
        topics_regex: str | None,
        batch_size: int,
        flush_interval_ms: int,
        errant_reporting: bool,
        topic_tracking: bool = True,
    ) -> None:
        super().__init__(task_id, worker_id, status, target_state, operator)
        self.task = task
        self.task_config = task_config
        self.key_converter = key_converter
        self.value_converter = value_converter
        self.header_converter = header_converter
        self.chain = chain
        self.consumer_config = consumer_config
        self.topics = topics
        self.topics_regex = topics_regex
        self.batch_size = batch_size
        self.flush_interval_s = flush_interval_ms / 1000
        self.topic_tracking = topic_tracking
        self.consumer: Consumer | None = None
        self.context = _SinkContext(self)
        self.errant_reporter = _ErrantRecordReporter(self) if errant_reporting else None
        self.assigned: set[TopicPartition] = set()
        self.current_offsets: dict[TopicPartition, int] = {}  # next offset to read, per partition put so far
        self.last_committed: dict[TopicPartition, int] = {}
        self._retry_batch: SinkRecordBatch | None = None
        self._retry_offsets: dict[TopicPartition, int] = {}
        self._retry_at = 0.0
        # Next offsets of the batch being converted; they become current once put() takes it.
        self._batch_offsets: dict[TopicPartition, int] = {}
        self._consumer_paused: set[TopicPartition] = set()
        self._batch: list[Message] = []
        self._batch_index: dict[tuple[Any, Any, Any], Message] | None = None
        self._used_topics: set[str] = set()
        self._last_commit = time.monotonic()
        self._closing = False
        self._warned: set[tuple[int, str]] = set()
        self.conversion = SinkConversion(
            key_converter, value_converter, header_converter, chain, operator, self._count_skipped
        )

    # -- lifecycle --------------------------------------------------------------------

    def initialize_plugin(self) -> None:
        self.consumer = Consumer(self.consumer_config)
        self.task.initialize(self.context)
        self.task.start(dict(self.task_config))
        if self.topics_regex:
            pattern = self.topics_regex if self.topics_regex.startswith("^") else "^" + self.topics_regex
            re.compile(pattern)
            subscription = [pattern]
        else:
            subscription = list(self.topics)
        self.consumer.subscribe(
            subscription, on_assign=self._on_assign, on_revoke=self._on_revoke, on_lost=self._on_lost
        )

    def signal_plugin_stop(self) -> None:
        pass  # a sink task is stopped from its own thread, after the loop ends (Kafka does the same)

    def close(self) -> None:
        try:
            if self.consumer is not None and not self._cancelled and self.assigned and not self.failed:
                self._commit(list(self.assigned), final=True)
        finally:
            # From here on the partitions are closed by us: the revocation that
            # consumer.close() triggers must not commit or close them again.
            self._closing = True
            try:
                if self.assigned:
                    self.task.close(sorted(self.assigned))
            except Exception:
                log.exception("%s: close() raised", self.id)
            self._forget(list(self.assigned))
            try:
                self.task.stop()
            except Exception:
                log.exception("%s: stop() raised", self.id)
            if self.consumer is not None:
                try:
                    self.consumer.close()
                except Exception:
                    log.exception("%s: closing the consumer failed", self.id)
            for c in (self.key_converter, self.value_converter, self.header_converter):
                try:
                    c.close()
                except Exception:
                    log.exception("%s: closing converter %s failed", self.id, type(c).__name__)
            self.chain.close()

    # -- the loop ---------------------------------------------------------------------

    def execute(self) -> None:
        assert self.consumer is not None
        while not self.stopping:
            self.apply_pauses()
            # Paused partitions return nothing more: records fetched before are held back.
            self.report_target_state()
            self._apply_rewinds()
            if self._retry_batch is not None and time.monotonic() >= self._retry_at:
                batch, self._retry_batch = self._retry_batch, None
                self._deliver(batch, self._retry_offsets)
                continue
            timeout = (
                _POLL_S
                if self._retry_batch is None
                else max(min(self._retry_at - time.monotonic(), _POLL_S), 0)
            )
            messages = self._consume(timeout)
            if messages and self._consumer_paused:
                messages = self._hold_back(messages)
            records = self._convert_all(messages) if messages else _EMPTY
            offsets, self._batch_offsets = self._batch_offsets, {}
            if self._retry_batch is not None:
                # The refused batch is handed over again, alone, when its wait is over (as
                # Kafka does); an empty put() meanwhile could be refused too and replace it.
                if records is not _EMPTY:  # fetched before the pause took effect
                    self._retry_batch = SinkRecordBatch.of([*self._retry_batch, *records])
                    self._retry_offsets.update(offsets)
            elif records is not _EMPTY or offsets or self.assigned:
                # put() runs after every poll, with an empty batch when nothing came, as in
                # Kafka: sinks that flush on time (rotation, flush intervals) rely on the call.
                self._deliver(records, offsets)
            if self.context.commit_requested or time.monotonic() - self._last_commit >= self.flush_interval_s:
                self.context.commit_requested = False
                self._commit(list(self.assigned))

    def _consume(self, timeout: float) -> list[Message]:
        """Up to ``batch_size`` messages, returning as soon as one is there.

        ``consume(n, timeout)`` would wait for all ``n``; instead wait for the first
        message, then take whatever else is already fetched, so a trickle of records is
        delivered within milliseconds and a flood still comes in full batches.
        """
        assert self.consumer is not None
        first = self.consumer.poll(timeout)
        if first is None:
            return []
        # Taken in slices: consume() holds the GIL while it makes each message's object
        # (about 0.6 us each), so a slice of 1,000 lets the task's I/O threads (an S3
        # upload back from a send) in after half a millisecond, not after six.
        # benchmarks/s3_sink.py ran 7% faster so.
        out = [first]
        want = self.batch_size - 1
        while want > 0:
            got = self.consumer.consume(min(want, _CONSUME_SLICE), 0)
            out += got
            if len(got) < min(want, _CONSUME_SLICE):
                break  # nothing more fetched yet
            want -= len(got)
        return out

    def _hold_back(self, messages: list[Message]) -> list[Message]:
        """Paused partitions deliver nothing: messages fetched before the pause took effect
        are handed back to the consumer (seek to the first of them) for after the resume."""
        first: dict[TopicPartition, int] = {}
        kept = []
        for m in messages:
            if m.error() is None:
                tp = TopicPartition(m.topic(), m.partition())  # type: ignore[arg-type]
                if tp in self._consumer_paused:
                    off: int = m.offset()  # type: ignore[assignment]
                    first[tp] = min(off, first.get(tp, off))
                    continue
            kept.append(m)
        for tp, off in first.items():
            assert self.consumer is not None
            self.consumer.seek(KafkaTopicPartition(tp.topic, tp.partition, off))
        return kept

    def _deliver(self, records: SinkRecordBatch, offsets: dict[TopicPartition, int]) -> None:
        """``put`` a batch; ``offsets`` (next offset per partition it covers) become current
        only once ``put`` has taken it, so a commit never passes a batch awaiting a retry."""
        started = time.perf_counter()
        try:
            self.task.put(records)
        except RetriableException as exc:
            wait_ms = self.context.timeout_ms or (exc.retry_after * 1000 if exc.retry_after else 0)
            log.warning("%s: put() asked for a retry in %d ms: %s", self.id, wait_ms, exc)
            self.note_retrying(exc)
            self._retry_batch = records
            self._retry_offsets = offsets
            self._retry_at = time.monotonic() + wait_ms / 1000
            self.apply_pauses()
            return
        if self.retrying and records:  # an empty put proves nothing about what failed
            self.note_recovered()
        for tp, offset in offsets.items():
            if tp in self.assigned:
                self.current_offsets[tp] = offset
        if records:
            self.metrics.batch(len(records), (time.perf_counter() - started) * 1000)
            self.metrics.records_out += len(records)
        self.apply_pauses()

    def _convert_all(self, messages: list[Message]) -> SinkRecordBatch:
        """A poll's messages to what put() gets (``connect.runtime.sink_conversion``), after
        noting the offsets it covers. The batch's messages are kept so a record can be
        traced back to what was consumed."""
        self._batch = messages
        self._batch_index = None
        errors = list(map(Message.error, messages))
        # Consumer errors and end-of-partition events (KafkaError cannot be compared with
        # None by ==, so no errors.count(None)).
        if any(map(is_not, errors, repeat(None))):
            messages = self._without_events(messages, errors)
        self.metrics.records_in += len(messages)
        if not messages:
            return _EMPTY
        topics: list[str] = list(map(Message.topic, messages))  # type: ignore[arg-type]
        partitions: list[int] = list(map(Message.partition, messages))  # type: ignore[arg-type]
        offsets: list[int] = list(map(Message.offset, messages))  # type: ignore[arg-type]
        runs = spans(topics, partitions)
        # The next offset of each partition: its last message's, plus one (a partition's
        # messages come in offset order, its runs too).
        for start, end in runs:
            self._batch_offsets[TopicPartition(topics[start], partitions[start])] = offsets[end - 1] + 1
        for topic in dict.fromkeys(topics).keys() - self._used_topics:
            self._first_sight(topic)
        return self.conversion.batch(messages, topics, partitions, offsets)

    def _without_events(self, messages: list[Message], errors: list[KafkaError | None]) -> list[Message]:
        """The messages that are records; consumer errors fail the task if fatal and are
        otherwise logged once (the consumer keeps trying, as Kafka Connect's does)."""
        for err in errors:
            if err is None or err.code() == KafkaError._PARTITION_EOF:
                continue
            if err.fatal() or err.code() in _FATAL_CONSUMER_ERRORS:
                raise ConnectException(f"consumer error: {err.str()}")
            self._warn_once(err)  # a subscribed topic that does not exist yet, a broker away
        return [m for m, err in zip(messages, errors, strict=True) if err is None]

    def _count_skipped(self, n: int) -> None:
        self.metrics.records_skipped += n

    def _warn_once(self, err: KafkaError) -> None:
        key = (err.code(), err.str())
        if key not in self._warned:
            self._warned.add(key)
            log.warning("%s: consumer reports %s (the task keeps running)", self.id, err.str())

    def _first_sight(self, topic: str) -> None:
        self._used_topics.add(topic)
        if self.topic_tracking:
            self.status.on_topic_used(self.id.connector, self.id.task, topic)

    def raw_of(self, record: SinkRecord) -> RawRecord | None:
        """The consumed message a record came from (errant record reporting): the message
        itself while its batch is current, else the record serialized again with the task's
        converters, as Kafka does for records a sink reports later (asynchronous writers)."""
        batch, index = self._batch, self._batch_index
        if index is None:
            index = {(m.topic(), m.partition(), m.offset()): m for m in batch if m.error() is None}
            if self._batch is batch:  # a writer thread may report while the next batch arrives
                self._batch_index = index
        msg = index.get(
            (record.original_topic, record.original_kafka_partition, record.original_kafka_offset)
        )
        if msg is not None:
            return raw_record(msg)
        topic = record.original_topic
        try:
            key = self.key_converter.from_connect_data(topic, record.key_schema, record.key)
            value = self.value_converter.from_connect_data(topic, record.value_schema, record.value)
            headers = tuple(
                (h.key, self.header_converter.from_connect_header(topic, h.key, h.schema, h.value))
                for h in (record.headers if record.has_headers else ())
            )
        except Exception:
            log.warning(
                "%s: cannot serialize %s again for the dead letter queue", self.id, record, exc_info=True
            )
            return None
        return RawRecord(
            topic,
            record.original_kafka_partition or 0,
            record.original_kafka_offset,
            record.timestamp,
            key,
            value,
            headers,
        )

    # -- pausing and rewinding --------------------------------------------------------

    def apply_pauses(self) -> None:
        if self.consumer is None:
            return
        wanted = (
            set(self.assigned)
            if (self.paused or self._retry_batch is not None)
            else (self.context.paused_by_task & self.assigned)
        )
        to_pause = wanted - self._consumer_paused
        to_resume = (self._consumer_paused - wanted) & self.assigned
        if to_pause:
            self.consumer.pause([_ktp(tp) for tp in sorted(to_pause)])
        if to_resume:
            self.consumer.resume([_ktp(tp) for tp in sorted(to_resume)])
        self._consumer_paused = (self._consumer_paused | to_pause) - to_resume

    def _apply_rewinds(self) -> None:
        if not self.context.rewinds or self.consumer is None:
            return
        rewinds, self.context.rewinds = self.context.rewinds, {}
        for tp, offset in rewinds.items():
            if tp not in self.assigned:
                log.warning("%s: ignoring a rewind of %s, which is not assigned to this task", self.id, tp)
                continue
            log.info("%s: rewinding %s to offset %d", self.id, tp, offset)
            self.consumer.seek(KafkaTopicPartition(tp.topic, tp.partition, offset))
            self.current_offsets[tp] = offset
        self._retry_batch = None  # a rewind replaces whatever was waiting
        self._retry_offsets = {}

    # -- rebalances -------------------------------------------------------------------

    def _on_assign(self, consumer: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        new = {TopicPartition(p.topic, p.partition) for p in partitions}
        self.assigned |= new
        positions = consumer.committed(partitions, timeout=30)
        for p in positions:
            if p.offset != OFFSET_INVALID and p.offset >= 0:
                self.last_committed[TopicPartition(p.topic, p.partition)] = p.offset
        try:
            self.task.open(sorted(new))
        except Exception as exc:
            self._fail_in_callback(exc)
            return
        rewinds = {tp: off for tp, off in self.context.rewinds.items() if tp in new}
        if rewinds:
            for tp in rewinds:
                del self.context.rewinds[tp]
            consumer.assign(
                [
                    KafkaTopicPartition(tp.topic, tp.partition, rewinds.get(tp, p.offset))
                    for p in partitions
                    for tp in [TopicPartition(p.topic, p.partition)]
                ]
            )
            self.current_offsets.update(rewinds)
        self._consumer_paused -= new
        self.apply_pauses()
        log.info("%s: assigned %s", self.id, ", ".join(str(p) for p in sorted(new)) or "nothing")

    def _on_revoke(self, consumer: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        gone = [TopicPartition(p.topic, p.partition) for p in partitions]
        if not gone or self._closing:
            return
        if self._retry_batch is not None:
            kept = [r for r in self._retry_batch if r.topic_partition not in gone]
            self._retry_batch = SinkRecordBatch.of(kept) if kept else None
            self._retry_offsets = {tp: o for tp, o in self._retry_offsets.items() if tp not in gone}
        try:
            if not self.failed:
                self._commit(gone, final=True)
            self.task.close(gone)
        except Exception as exc:
            self._fail_in_callback(exc)
        self._forget(gone)
        log.info("%s: revoked %s", self.id, ", ".join(str(p) for p in gone))

    def _on_lost(self, consumer: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        gone = [TopicPartition(p.topic, p.partition) for p in partitions]
        if not gone or self._closing:
            return
        try:
            self.task.close(gone)
        except Exception as exc:
            self._fail_in_callback(exc)
        self._forget(gone)

    def _forget(self, gone: list[TopicPartition]) -> None:
        for tp in gone:
            self.assigned.discard(tp)
            self.current_offsets.pop(tp, None)
            self.last_committed.pop(tp, None)
            self._consumer_paused.discard(tp)
            self.context.paused_by_task.discard(tp)

    def _fail_in_callback(self, exc: BaseException) -> None:
        # Exceptions cannot cross librdkafka's callback boundary: remember and stop the loop.
        log.error("%s: failure in a rebalance callback", self.id, exc_info=exc)
        self._callback_error = exc
        raise exc

    @property
    def partition_count(self) -> int:
        return len(self.assigned)

    # -- commits ----------------------------------------------------------------------

    def _commit(self, partitions: list[TopicPartition], final: bool = False) -> None:
        self._last_commit = time.monotonic()
        started = time.perf_counter()
        assert self.consumer is not None
        wanted = {tp: off for tp, off in self.current_offsets.items() if tp in partitions}
        if not wanted:
            return
        if self.errant_reporter is not None:
            self.errant_reporter.await_outstanding()
        try:
            committable = dict(self.task.pre_commit(dict(wanted)))
        except Exception:
            self.metrics.commit(False, (time.perf_counter() - started) * 1000)
            log.exception("%s: pre_commit() raised; rewinding to the last committed offsets", self.id)
            for tp in partitions:
                if tp in self.last_committed:
                    self.context.rewinds[tp] = self.last_committed[tp]
            return
        todo = [
            KafkaTopicPartition(tp.topic, tp.partition, off)
            for tp, off in sorted(committable.items())
            if tp in self.assigned and self.last_committed.get(tp) != off
        ]
        if not todo:
            self.metrics.commit_skips += 1
            return
        try:
            self.consumer.commit(offsets=todo, asynchronous=False)
        except KafkaException as exc:
            self.metrics.commit(False, (time.perf_counter() - started) * 1000)
            log.warning("%s: offset commit failed%s: %s", self.id, " (final)" if final else "", exc)
            return
        self.metrics.commit(True, (time.perf_counter() - started) * 1000)
        for p in todo:
            self.last_committed[TopicPartition(p.topic, p.partition)] = p.offset


def _ktp(tp: TopicPartition) -> KafkaTopicPartition:
    return KafkaTopicPartition(tp.topic, tp.partition)
