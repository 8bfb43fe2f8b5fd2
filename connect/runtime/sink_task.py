"""The sink pipeline: consume → convert → transform → put → flush/pre_commit → commit.

The consumer group is ``connect-<connector>``. Offsets are committed only as far as
the task says it has durably written (``pre_commit``), every
``offset.flush.interval.ms``, when the task asks (``request_commit``), before
partitions are revoked and when the task stops. ``put`` raising
``RetriableException`` pauses consumption and hands the same batch back after
``context.timeout`` ms; the consumer keeps being polled meanwhile, so the group
does not consider the task dead. Rebalance callbacks run inside ``consume`` on this
task's thread. A task that takes JSON runs (``SinkTask.accepts_json_runs``) gets polls
whose values are all JSON documents as a ``SinkRecordBatch`` of their texts, checked but
not decoded; its records are made only if read. Text runs
(``SinkTask.accepts_text_runs``) are the same for values a string converter reads.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from functools import partial
from itertools import groupby, repeat
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

from connect.api.converter import ConvertedBatch, Converter, HeaderConverter
from connect.api.errors import ConnectException, RetriableException
from connect.api.headers import Headers
from connect.api.plugin_metrics import PluginMetrics
from connect.api.records import SinkRecord, TimestampType, TopicPartition
from connect.api.sink_batch import RunKind, SinkRecordBatch
from connect.api.task import ErrantRecordReporter, SinkTask, SinkTaskContext
from connect.runtime.errors import TOLERATED, ProcessingContext, RawRecord, RetryWithToleranceOperator, Stage
from connect.runtime.status import ConnectorTaskId, StatusListener, TargetState
from connect.runtime.transformation_chain import TransformationChain
from connect.runtime.worker_task import WorkerTask

log = logging.getLogger(__name__)

_TIMESTAMP_TYPES = {
    0: TimestampType.NO_TIMESTAMP_TYPE,
    1: TimestampType.CREATE_TIME,
    2: TimestampType.LOG_APPEND_TIME,
}
_POLL_S = 0.5
_CONSUME_SLICE = 1000
_KIND_NAMES: dict[RunKind, str] = {"json": "JSON documents", "text": "UTF-8 text"}
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
        self._retry_batch: Sequence[SinkRecord] | None = None
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
        # The kinds of runs polls go to put() as when their values allow, in the order they
        # are tried, each with the value converter's check (decided at start).
        self._run_kinds: list[tuple[RunKind, Callable[[str, Sequence[bytes | None]], bool]]] = []

    # -- lifecycle --------------------------------------------------------------------

    def initialize_plugin(self) -> None:
        self.consumer = Consumer(self.consumer_config)
        self.task.initialize(self.context)
        self.task.start(dict(self.task_config))
        # A transformation reads and replaces values, so it needs records whatever the task takes.
        self._run_kinds = []
        if not self.chain.stages:
            if self.task.accepts_json_runs():
                self._run_kinds.append(("json", self.value_converter.are_json_documents))
            if self.task.accepts_text_runs():
                self._run_kinds.append(("text", self.value_converter.are_texts))
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
            records = self._convert_all(messages) if messages else []
            offsets, self._batch_offsets = self._batch_offsets, {}
            if self._retry_batch is not None:
                # The refused batch is handed over again, alone, when its wait is over (as
                # Kafka does); an empty put() meanwhile could be refused too and replace it.
                if records:  # fetched before the pause took effect
                    self._retry_batch = [*self._retry_batch, *records]
                    self._retry_offsets.update(offsets)
            elif records or offsets or self.assigned:
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

    def _deliver(self, records: Sequence[SinkRecord], offsets: dict[TopicPartition, int]) -> None:
        """``put`` a batch; ``offsets`` (next offset per partition it covers) become current
        only once ``put`` has taken it, so a commit never passes a batch awaiting a retry."""
        started = time.perf_counter()
        try:
            self.task.put(records)
        except RetriableException as exc:
            wait_ms = self.context.timeout_ms or (exc.retry_after * 1000 if exc.retry_after else 0)
            log.warning("%s: put() asked for a retry in %d ms: %s", self.id, wait_ms, exc)
            self._retry_batch = records
            self._retry_offsets = offsets
            self._retry_at = time.monotonic() + wait_ms / 1000
            self.apply_pauses()
            return
        for tp, offset in offsets.items():
            if tp in self.assigned:
                self.current_offsets[tp] = offset
        if records:
            self.metrics.batch(len(records), (time.perf_counter() - started) * 1000)
            self.metrics.records_out += len(records)
        self.apply_pauses()

    def _convert_all(self, messages: list[Message]) -> Sequence[SinkRecord]:
        """Messages to SinkRecords: the per-record hot path.

        Each run of one topic is converted as columns: the messages' fields read with
        C-level maps, keys and values by one ``to_connect_batch`` call of each converter,
        the records then made in one loop. Should a converter refuse the run, it is
        converted again one record at a time (``_convert_each``), where the failing record
        goes through the tolerance operator (which retries, reports and maybe skips it).
        Where the task takes JSON (or text) runs, a poll whose values all are JSON
        documents (or UTF-8 strings) is not converted at all but checked (``_run_batch``).
        The batch's messages are kept so a record can be traced back to what was consumed.
        """
        self._batch = messages
        self._batch_index = None
        errors = list(map(Message.error, messages))
        # Consumer errors and end-of-partition events (KafkaError cannot be compared with
        # None by ==, so no errors.count(None)).
        if any(map(is_not, errors, repeat(None))):
            messages = self._without_events(messages, errors)
        self.metrics.records_in += len(messages)
        if not messages:
            return []
        topics: list[str] = list(map(Message.topic, messages))  # type: ignore[arg-type]
        partitions: list[int] = list(map(Message.partition, messages))  # type: ignore[arg-type]
        offsets: list[int] = list(map(Message.offset, messages))  # type: ignore[arg-type]
        runs = _spans(topics, partitions)
        # The next offset of each partition: its last message's, plus one (a partition's
        # messages come in offset order, its runs too).
        for start, end in runs:
            self._batch_offsets[TopicPartition(topics[start], partitions[start])] = offsets[end - 1] + 1
        for topic in dict.fromkeys(topics).keys() - self._used_topics:
            self._first_sight(topic)
        if self._run_kinds:
            batch = self._run_batch(messages, topics, partitions, offsets, runs)
            if batch is not None:
                return batch
        out: list[SinkRecord] = []
        for start, end in _spans(topics):
            if end - start == len(messages):
                return self._convert_run(topics[0], messages, partitions, offsets)
            out += self._convert_run(
                topics[start], messages[start:end], partitions[start:end], offsets[start:end]
            )
        return out

    def _run_batch(
        self,
        messages: list[Message],
        topics: list[str],
        partitions: list[int],
        offsets: list[int],
        partition_runs: list[tuple[int, int]],
    ) -> SinkRecordBatch | None:
        """The poll as runs of its values' texts (JSON or text, the first kind the task
        takes whose check every value passes), or None when it must be converted as usual:
        a value the checks refuse (null, malformed: tolerance handles it there), or a key or
        header its converter refuses. Keys and headers are converted here, so a record made
        later only decodes its value, which cannot fail."""
        values: list[bytes] = list(map(Message.value, messages))  # type: ignore[arg-type]
        topic_spans = _spans(topics)
        kind = next(
            (
                kind
                for kind, check in self._run_kinds
                if all(check(topics[start], values[start:end]) for start, end in topic_spans)
            ),
            None,
        )
        if kind is None:
            return None
        headers: list[Any] = list(map(Message.headers, messages))
        columns: list[tuple[str, int, int, ConvertedBatch, list[Any]]] = []
        for start, end in topic_spans:
            topic = topics[start]
            raw = headers[start:end]
            try:
                keys = self._convert_keys(topic, messages[start:end])
                converted = (
                    raw
                    if raw.count(None) == len(raw)
                    else [self._headers(topic, h) if h else None for h in raw]
                )
            except Exception:
                return None
            columns.append((topic, start, end, keys, converted))
        runs = [
            (topics[start], partitions[start], offsets[start:end], values[start:end])
            for start, end in partition_runs
        ]

        def make_records() -> list[SinkRecord]:
            out: list[SinkRecord] = []
            for topic, start, end, keys, converted in columns:
                texts = values[start:end]
                try:
                    decoded = self.value_converter.to_connect_batch(topic, texts)
                except Exception as exc:
                    raise ConnectException(
                        f"{_name(self.value_converter)} said the values of {topic} at offsets "
                        f"{offsets[start]}..{offsets[end - 1]} are {_KIND_NAMES[kind]}, then could not "
                        f"read them: {exc}"
                    ) from exc
                out += self._records(
                    topic,
                    messages[start:end],
                    partitions[start:end],
                    offsets[start:end],
                    keys,
                    decoded,
                    converted,
                )
            return out

        return SinkRecordBatch(runs, make_records, kind)

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

    def _convert_run(
        self, topic: str, messages: list[Message], partitions: list[int], offsets: list[int]
    ) -> list[SinkRecord]:
        n = len(messages)
        # A record left out (a conversion failed and errors.tolerance=all skipped it) is
        # marked TOLERATED in this column, which every record's loop looks at anyway.
        headers: list[Any] = list(map(Message.headers, messages))
        if headers.count(None) != n:
            headers = self._convert_headers(topic, messages, headers)
        try:
            keys, values = self._convert_batch(topic, messages)
        except Exception:
            keys, values = self._convert_each(topic, messages, headers)
        out = self._records(topic, messages, partitions, offsets, keys, values, headers)
        if len(out) == n:
            return self._transform(out, messages) if self.chain.stages else out
        self.metrics.records_skipped += n - len(out)
        if not self.chain.stages:
            return out
        return self._transform(out, [m for m, h in zip(messages, headers, strict=True) if h is not TOLERATED])

    @staticmethod
    def _records(
        topic: str,
        messages: list[Message],
        partitions: list[int],
        offsets: list[int],
        keys: ConvertedBatch,
        values: ConvertedBatch,
        headers: list[Any],
    ) -> list[SinkRecord]:
        """A SinkRecord of each message of one topic from its converted columns, leaving out
        those marked TOLERATED in ``headers``."""
        types = _TIMESTAMP_TYPES
        create_time = TimestampType.CREATE_TIME
        out: list[SinkRecord] = []
        append = out.append
        for partition, offset, key_schema, key, value_schema, value, (ts_type, ts), h in zip(
            partitions,
            offsets,
            keys.schemas,
            keys.values,
            values.schemas,
            values.values,
            map(Message.timestamp, messages),
            headers,
            strict=True,
        ):
            if h is TOLERATED:
                continue
            append(
                SinkRecord(
                    topic,
                    partition,
                    key_schema,
                    key,
                    value_schema,
                    value,
                    ts if ts_type else None,
                    h,
                    offset,
                    types.get(ts_type, create_time),
                )
            )
        return out

    def _convert_batch(self, topic: str, messages: list[Message]) -> tuple[ConvertedBatch, ConvertedBatch]:
        """Keys and values of a run, each by one converter call; raises if one is refused."""
        n = len(messages)
        keys = self._convert_keys(topic, messages)
        values = self.value_converter.to_connect_batch(topic, list(map(Message.value, messages)))
        if not len(values.schemas) == len(values.values) == n:
            raise ConnectException("to_connect_batch returned a different number of values than given")
        return keys, values

    def _convert_keys(self, topic: str, messages: list[Message]) -> ConvertedBatch:
        """Keys of a run by one converter call; raises if one is refused."""
        n = len(messages)
        raw_keys = list(map(Message.key, messages))
        if raw_keys.count(None) == n:  # most keys are null: convert null once
            null = self.key_converter.to_connect_data(topic, None)
            return ConvertedBatch([null.schema] * n, [null.value] * n)
        keys = self.key_converter.to_connect_batch(topic, raw_keys)
        if not len(keys.schemas) == len(keys.values) == n:
            raise ConnectException("to_connect_batch returned a different number of keys than given")
        return keys

    def _convert_each(
        self, topic: str, messages: list[Message], headers: list[Any]
    ) -> tuple[ConvertedBatch, ConvertedBatch]:
        """Keys and values of a run one record at a time: a failing conversion goes to the
        tolerance operator as its first attempt (never run twice), which retries, reports or
        skips; a skipped record is marked TOLERATED in ``headers``."""
        key_to = self.key_converter.to_connect_data
        value_to = self.value_converter.to_connect_data
        n = len(messages)
        key_schemas: list[Any] = [None] * n
        key_values: list[Any] = [None] * n
        value_schemas: list[Any] = [None] * n
        value_values: list[Any] = [None] * n
        for i, msg in enumerate(messages):
            if headers[i] is TOLERATED:
                continue
            raw_key, raw_value = msg.key(), msg.value()
            key: Any
            value: Any
            try:
                key = key_to(topic, raw_key)
            except Exception as exc:
                key = self._recover(
                    Stage.KEY_CONVERTER, self.key_converter, partial(key_to, topic, raw_key), exc, msg
                )
            try:
                value = value_to(topic, raw_value)
            except Exception as exc:
                value = self._recover(
                    Stage.VALUE_CONVERTER, self.value_converter, partial(value_to, topic, raw_value), exc, msg
                )
            if key is TOLERATED or value is TOLERATED:
                headers[i] = TOLERATED
                continue
            key_schemas[i], key_values[i] = key
            value_schemas[i], value_values[i] = value
        return ConvertedBatch(key_schemas, key_values), ConvertedBatch(value_schemas, value_values)

    def _convert_headers(self, topic: str, messages: list[Message], raw: list[Any]) -> list[Any]:
        """Connect headers for each message that has any (None for the rest; TOLERATED for
        one whose headers failed and were skipped under errors.tolerance=all)."""
        out: list[Any] = [None] * len(raw)
        for i, (msg, headers) in enumerate(zip(messages, raw, strict=True)):
            if headers:
                try:
                    out[i] = self._headers(topic, headers)
                except Exception as exc:
                    out[i] = self._recover(
                        Stage.HEADER_CONVERTER,
                        self.header_converter,
                        partial(self._headers, topic, headers),
                        exc,
                        msg,
                    )
        return out

    def _transform(self, records: list[SinkRecord], messages: list[Message]) -> list[SinkRecord]:
        """The transformation chain over converted records, as one batch; ``messages[i]`` is
        the message ``records[i]`` came from (for the dead letter queue)."""

        def context(original: SinkRecord) -> dict[str, Any]:
            # Only a record that failed asks: find its message by identity.
            msg = next(m for r, m in zip(records, messages, strict=True) if r is original)
            return _consumed(msg)

        out = self.chain.apply_batch(records, self.operator, context)
        self.metrics.records_skipped += out.skipped
        columns = out.columns
        return [columns.record(j) for j in range(len(columns))]

    def _warn_once(self, err: KafkaError) -> None:
        key = (err.code(), err.str())
        if key not in self._warned:
            self._warned.add(key)
            log.warning("%s: consumer reports %s (the task keeps running)", self.id, err.str())

    def _first_sight(self, topic: str) -> None:
        self._used_topics.add(topic)
        if self.topic_tracking:
            self.status.on_topic_used(self.id.connector, self.id.task, topic)

    def _headers(self, topic: str, raw: Any) -> Headers:
        convert = self.header_converter.to_connect_header
        out = Headers()
        for k, v in raw:
            sv = convert(topic, k, v)
            out.add(k, sv.value, sv.schema)
        return out

    def _recover(
        self, stage: Stage, converter: object, fn: Callable[[], Any], error: Exception, msg: Message
    ) -> Any:
        return self.operator.execute(stage, _name(converter), fn, first_error=error, consumed=_raw(msg))

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
            return _raw(msg)
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
            self._retry_batch = [r for r in self._retry_batch if r.topic_partition not in gone] or None
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


def _spans(*columns: list[Any]) -> list[tuple[int, int]]:
    """(start, end) of each run of messages alike in every column (one topic; one topic
    partition), in a poll's order."""
    n = len(columns[0])
    if all(c.count(c[0]) == n for c in columns):  # the usual poll: a single run
        return [(0, n)]
    out = []
    start = 0
    for _, run in groupby(zip(*columns, strict=True)):
        end = start + sum(1 for _ in run)
        out.append((start, end))
        start = end
    return out


def _consumed(msg: Message) -> dict[str, Any]:
    return {"consumed": _raw(msg)}


def _raw(msg: Message) -> RawRecord:
    kind, ts = msg.timestamp()
    headers: list[tuple[str, Any]] = msg.headers() or []  # type: ignore[assignment]
    return RawRecord(
        msg.topic() or "",
        msg.partition() or 0,
        msg.offset() or 0,
        ts if kind else None,
        msg.key(),
        msg.value(),
        tuple((k, v if v is None or isinstance(v, bytes) else str(v).encode()) for k, v in headers),
    )


def _ktp(tp: TopicPartition) -> KafkaTopicPartition:
    return KafkaTopicPartition(tp.topic, tp.partition)


def _name(obj: object) -> str:
    t = type(obj)
    return f"{t.__module__}.{t.__qualname__}"
