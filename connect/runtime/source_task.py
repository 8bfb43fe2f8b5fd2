"""The source pipeline: poll → transform → convert → produce → acknowledge → commit offsets.

Offsets are committed every ``offset.flush.interval.ms`` and when the task stops,
and only as far as Kafka has acknowledged: ``SubmittedRecords`` keeps each source
partition's records in order, so an unacknowledged record holds back the offsets
behind it. Delivery callbacks run in ``producer.poll`` on this task's thread, so
none of this state is shared between threads.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from operator import attrgetter
from typing import Any, NamedTuple

from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # re-exported untyped

from connect.api.converter import Converter, HeaderConverter
from connect.api.data import Schema
from connect.api.errors import ConnectException, RetriableException
from connect.api.headers import Headers
from connect.api.plugin_metrics import NoPluginMetrics, PluginMetrics
from connect.api.record_columns import RecordColumns
from connect.api.records import SourceRecord
from connect.api.source_batch import SourceRecordBatch
from connect.api.task import SourceTask, SourceTaskContext, TransactionContext
from connect.runtime.errors import TOLERATED, RetryWithToleranceOperator, Stage
from connect.runtime.exactly_once import ExactlyOnceSetup, WorkerTransactionContext
from connect.runtime.sink_conversion import spans
from connect.runtime.source_delivery import (
    BulkAcks,
    CommitPoint,
    DeliveryHooks,
    Offsets,
    PerRecordAcks,
    wants_per_record_acks,
)
from connect.runtime.status import ConnectorTaskId, StatusListener, TargetState
from connect.runtime.topic_creation import TopicCreation
from connect.runtime.transactional_delivery import Transactional
from connect.runtime.transformation_chain import ChainOutput, TransformationChain
from connect.runtime.worker_task import WorkerTask
from connect.storage.offsets import ConnectorOffsetReader, OffsetStorageWriter

log = logging.getLogger(__name__)

_POLL_RETRY_S = 0.1


class _SourceTaskContext(SourceTaskContext):
    def __init__(
        self,
        config: dict[str, str],
        reader: ConnectorOffsetReader,
        metrics: PluginMetrics | None = None,
        transactions: TransactionContext | None = None,
    ) -> None:
        self._config = config
        self._reader = reader
        self._metrics = metrics or NoPluginMetrics()
        self._transactions = transactions

    def transaction_context(self) -> TransactionContext | None:
        return self._transactions

    def plugin_metrics(self) -> PluginMetrics:
        return self._metrics

    def configs(self) -> dict[str, str]:
        return dict(self._config)

    def offset_storage_reader(self) -> ConnectorOffsetReader:
        return self._reader


class _PlainSend(NamedTuple):
    """A poll that ``_send_plain`` sends in its tight loop: one topic and source partition,
    every value and key converted, one set of headers (or none)."""

    topic: str
    values: Sequence[Any]
    keys: Sequence[Any]
    headers: list[tuple[str, str | bytes | None]] | None
    partition: Mapping[str, Any] | None
    offsets: Sequence[Mapping[str, Any] | None]


class WorkerSourceTask(WorkerTask):
    def __init__(
        self,
        task_id: ConnectorTaskId,
        task: SourceTask,
        task_config: dict[str, str],
        worker_id: str,
        status: StatusListener,
        target_state: TargetState,
        operator: RetryWithToleranceOperator,
        key_converter: Converter,
        value_converter: Converter,
        header_converter: HeaderConverter,
        chain: TransformationChain[Any],
        producer_config: dict[str, Any],
        admin_config: dict[str, Any],
        offset_reader: ConnectorOffsetReader,
        offset_writer: OffsetStorageWriter,
        flush_interval_ms: int,
        flush_timeout_ms: int,
        topic_creation: TopicCreation | None = None,
        topic_tracking: bool = True,
        exactly_once: ExactlyOnceSetup | None = None,
        transaction_boundary: str = "poll",
        transaction_boundary_interval_ms: int | None = None,
    ) -> None:
        super().__init__(task_id, worker_id, status, target_state, operator)
        self.task = task
        self.task_config = task_config
        self.key_converter = key_converter
        self.value_converter = value_converter
        self.header_converter = header_converter
        self.chain = chain
        self.admin_config = admin_config
        self.offset_reader = offset_reader
        self.offset_writer = offset_writer
        self.flush_interval_s = flush_interval_ms / 1000
        self.flush_timeout_s = flush_timeout_ms / 1000
        self.topic_creation = topic_creation
        self.topic_tracking = topic_tracking
        # Delivery semantics, chosen once: exactly once is transactional; at least once, a
        # task that wants commit_record() needs a delivery report per record, every other
        # one only hears about failures.
        self.delivery: DeliveryHooks
        self.transaction_context: WorkerTransactionContext | None = None
        if exactly_once is not None:
            if transaction_boundary == "connector":
                self.transaction_context = WorkerTransactionContext()
            interval = transaction_boundary_interval_ms
            self.delivery = Transactional(
                task,
                str(task_id),
                exactly_once,
                transaction_boundary,
                interval / 1000 if interval is not None else None,
                self.transaction_context,
                self._on_failed_delivery,
                self._stopping,
            )
        elif wants_per_record_acks(task):
            self.delivery = PerRecordAcks(task, str(task_id), self._tolerate_failed_send, offset_writer)
        else:
            self.delivery = BulkAcks(str(task_id), self._on_failed_delivery, offset_writer)
        self.producer_config = self.delivery.producer_config(producer_config)
        # Exactly once with a transaction per poll: each commit runs in the background while
        # the next poll is read, transformed and converted (``Transactional.start_commit``).
        self._pipeline = (
            self.delivery if isinstance(self.delivery, Transactional) and self.delivery.pipelined else None
        )
        self._commit_started = 0.0
        # Exactly once: the offsets topic the task's transactions write (the task may not).
        self.exactly_once = exactly_once is not None
        self._own_offsets_topic = exactly_once.offsets_topic if exactly_once is not None else None
        self._written_at_commit = 0  # records_out at the last commit (transaction sizes)
        self.producer: Producer | None = None
        self._producer_error: BaseException | None = None
        self._known_topics: set[str] = set()
        self._used_topics: set[str] = set()
        self._to_send: Sequence[SourceRecord] = []
        self._next = 0  # the next polled record to send (or to count as dropped)
        self._out: ChainOutput[SourceRecord] | None = None  # the chain's columns of _to_send
        self._values: list[Any] = []  # each row's value as converted, or _UNCONVERTED
        self._keys: list[Any] = []  # each row's key as converted, or _UNCONVERTED
        self._values_complete = False  # whether no row of _values is _UNCONVERTED
        self._keys_complete = False  # whether no row of _keys is _UNCONVERTED
        self._row = 0  # the next row of _out to send
        self._plain: _PlainSend | None = None  # how _send_plain sends _to_send, when it can
        # A SourceRecordBatch's per-record header pairs (all of one schema), sent as they are
        # converted; None when the rows' headers are the columns' Headers.
        self._header_pairs: Sequence[Sequence[tuple[str, Any]] | None] | None = None
        self._header_schema: Schema | None = None
        self._last_commit = time.monotonic()

    # -- lifecycle --------------------------------------------------------------------

    def initialize_plugin(self) -> None:
        self.producer = Producer(self.producer_config)
        self.delivery.start(self.producer)
        if self.stopping:
            return
        self.task.initialize(
            _SourceTaskContext(
                self.task_config, self.offset_reader, self.plugin_metrics, self.transaction_context
            )
        )
        self.task.start(dict(self.task_config))

    def signal_plugin_stop(self) -> None:
        self.task.stop()

    def close(self) -> None:
        if self.producer is not None and not self._cancelled and not self.failed:
            # (maybe_commit collects a commit still under way first.)
            try:
                self.maybe_commit("stop")
            except Exception:
                log.exception("%s: the final commit failed", self.id)
        self.delivery.close(self.producer, self.failed or self._cancelled)
        for c in (self.key_converter, self.value_converter, self.header_converter):
            try:
                c.close()
            except Exception:
                log.exception("%s: closing converter %s failed", self.id, type(c).__name__)
        self.chain.close()

    # -- the loop ---------------------------------------------------------------------

    def execute(self) -> None:
        assert self.producer is not None
        while not self.stopping:
            self.report_target_state()
            if self.paused:
                self._finish_commit()
                self.producer.poll(0)
                self.maybe_commit("pause")
                self.wait_while_paused(0.2)
                continue
            if self._next >= len(self._to_send):
                self._to_send = self._poll()
                self._next = self._row = 0
                self._out = self._transform(self._to_send) if self._to_send else None
                self._keys, self._values = self._convert(self._out) if self._out is not None else ([], [])
                # Checked before the wait below: with exactly once, what happens between the last
                # commit and this poll's first record holds the next commit back.
                self._plain = self._plan_plain() if self._out is not None else None
                self._finish_commit()  # the last poll's transaction, committed meanwhile
                if not self._to_send:
                    self.producer.poll(0)
                    self._raise_producer_error()
                    self.maybe_commit("batch")
                    continue
            self._send_all()
            self.producer.poll(0)
            self._raise_producer_error()
            self.maybe_commit("batch" if self._next >= len(self._to_send) else "send")

    def _poll(self) -> Sequence[SourceRecord]:
        started = time.perf_counter()
        try:
            records = self.task.poll()
        except RetriableException as exc:
            log.warning("%s: poll() raised a retriable error, polling again: %s", self.id, exc)
            self.note_retrying(exc)
            self.sleep(exc.retry_after if exc.retry_after is not None else _POLL_RETRY_S)
            return []
        if self.retrying:
            self.note_recovered()
        if not records:
            return []
        self.metrics.records_in += len(records)
        self.metrics.batch(len(records), (time.perf_counter() - started) * 1000)
        # A SourceRecordBatch stays columns (records made only if read); other sequences
        # become a list.
        return records if isinstance(records, list | SourceRecordBatch) else list(records)

    def _transform(self, records: Sequence[SourceRecord]) -> ChainOutput[SourceRecord]:
        """The poll through the chain, as columns; without transformations, the records'
        own fields as columns (no copies either way)."""
        self._header_pairs = None
        batch = records if isinstance(records, SourceRecordBatch) and records.has_row_columns else None
        if self.chain.stages:
            # The chain's columns of a batch take its shared fields only: one with per-record
            # partitions, timestamps or headers goes through as records.
            out = self.chain.apply_batch(
                records if batch is None else list(records), self.operator, _source_context
            )
            self.metrics.records_skipped += out.skipped
            return out
        columns = RecordColumns(records)
        if batch is not None:
            n = len(batch)
            if batch.kafka_partitions is not None:
                columns.kafka_partition = list(batch.kafka_partitions)
            if batch.timestamps is not None:
                columns.timestamp = list(batch.timestamps)
            if batch.headers is not None:
                self._header_pairs, self._header_schema = batch.headers, batch.header_schema
                columns.headers = [None] * n
        return ChainOutput(columns, list(range(len(records))), 0)

    def _convert(self, out: ChainOutput[SourceRecord]) -> tuple[list[Any], list[Any]]:
        """The rows' keys and values converted a topic's run at a time
        (``Converter.from_connect_batch``); a run the converter refuses is marked, and
        converted row by row in ``_send_all`` where a failing record meets the error
        handling. A run of null keys (most records have none) is left to ``_send_all`` too,
        which converts null once per topic and batch."""
        columns = out.columns
        topics = columns.topic
        runs = spans(topics) if topics else []
        keys, self._keys_complete = _convert_runs(
            self.key_converter, topics, runs, columns.key_schema, columns.key, True
        )
        values, self._values_complete = _convert_runs(
            self.value_converter, topics, runs, columns.value_schema, columns.value, False
        )
        return keys, values

    def _send_all(self) -> None:
        """Send the polled records from ``_next`` on; returns early only when stopping.

        The loop body is the per-record hot path, kept to local variables over the chain's
        columns: no per-record closures, dicts or operator calls unless a record needs them
        (a converter that fails goes to the operator, which retries, reports or skips it),
        and with bulk acks offsets are noted per source partition as the partition
        changes rather than per record (``benchmarks/file_pipeline.py`` pays for this).
        """
        producer = self.producer
        assert producer is not None and self._out is not None
        self.delivery.sending(producer)
        plain, self._plain = self._plain, None  # (not kept alive through the next poll)
        if self._next == 0 and ((plain is not None and self._send_plain(plain)) or self._send_rows()):
            return
        produce = producer.produce
        records = self._to_send
        columns, origin = self._out.columns, self._out.origin
        topics, partitions, timestamps = columns.topic, columns.kafka_partition, columns.timestamp
        key_schemas, keys = columns.key_schema, columns.key
        value_schemas, values, headers_of = columns.value_schema, columns.value, columns.headers
        converted, converted_keys = self._values, self._keys
        # Headers converted once per Headers object of the batch: a transformation adding the
        # same header to every record shares one (benchmarks/transforms.py).
        converted_headers: dict[tuple[str, int], Any] = {}
        delivery = self.delivery
        bulk = delivery if delivery.notes_runs else None
        acks = delivery if isinstance(delivery, PerRecordAcks) else None
        ack_callback: Callable[..., None] | None = None
        ack_sent: Callable[[int], None] | None = None
        if acks is not None:
            ack_callback, ack_sent = acks.begin(records)
        pairs_of, pair_schema = self._header_pairs, self._header_schema
        header_from = self.header_converter.from_connect_header
        key_from = self.key_converter.from_connect_data
        value_from = self.value_converter.from_connect_data
        known = self._known_topics
        stopping = self._stopping
        i, j = self._next, self._row
        # A record is read from ``records`` only where it is needed (reporting, per-record
        # acks): a SourceRecordBatch makes it then, and gives offsets as a column.
        batch_partition: Mapping[str, Any] | None = None
        batch_offsets: Sequence[Mapping[str, Any] | None] | None = None
        if isinstance(records, SourceRecordBatch):
            batch_partition, batch_offsets = records.source_partition, records.source_offsets
        sent = 0
        n, rows = len(records), len(origin)
        # The newest sent offset of the partition being sent right now; noted whenever the
        # partition changes and when the loop ends.
        cur_partition: Mapping[str, Any] | None = None
        cur_offset: Mapping[str, Any] | None = None
        null_topic: str | None = None
        null_schema: Any = None
        null_key: Any = None
        try:
            while i < n:
                if j >= rows or origin[j] != i:
                    # Dropped by a transformation (or skipped by error tolerance in the chain).
                    self._flush_run(cur_partition, cur_offset)
                    cur_partition = cur_offset = None
                    if acks is not None:
                        acks.dropped_row(i)
                    elif delivery.dropped(records[i]):
                        self._commit_at_boundary(producer)
                    i += 1
                    continue
                topic = topics[j]
                key: Any = converted_keys[j]
                value: Any
                headers: Any = None
                if key is _UNCONVERTED:
                    key_schema, key_in = key_schemas[j], keys[j]
                    try:
                        if key_in is None and topic == null_topic and key_schema is null_schema:
                            key = null_key  # most keys are null: convert null once per topic and batch
                        else:
                            key = key_from(topic, key_schema, key_in)
                            if key_in is None:
                                null_topic, null_schema, null_key = topic, key_schema, key
                    except Exception as exc:
                        key = self._recover(
                            Stage.KEY_CONVERTER,
                            self.key_converter,
                            partial(key_from, topic, key_schema, key_in),
                            exc,
                            records[i],
                        )
                value = converted[j]
                if value is _UNCONVERTED:
                    try:
                        value = value_from(topic, value_schemas[j], values[j])
                    except Exception as exc:
                        value = self._recover(
                            Stage.VALUE_CONVERTER,
                            self.value_converter,
                            partial(value_from, topic, value_schemas[j], values[j]),
                            exc,
                            records[i],
                        )
                row_pairs = None if pairs_of is None else pairs_of[j]
                if row_pairs:
                    try:
                        headers = [(k, header_from(topic, k, pair_schema, v)) for k, v in row_pairs]
                    except Exception as exc:
                        headers = self._recover(
                            Stage.HEADER_CONVERTER,
                            self.header_converter,
                            partial(self._pair_headers, topic, row_pairs),
                            exc,
                            records[i],
                        )
                row_headers = headers_of[j]
                if row_headers is not None:  # not truthiness: that is a Python call per record
                    headers = converted_headers.get((topic, id(row_headers)))
                    if headers is None:
                        try:
                            headers = self._headers(topic, row_headers)
                            converted_headers[topic, id(row_headers)] = headers
                        except Exception as exc:
                            headers = self._recover(
                                Stage.HEADER_CONVERTER,
                                self.header_converter,
                                partial(self._headers, topic, row_headers),
                                exc,
                                records[i],
                            )
                if key is TOLERATED or value is TOLERATED or headers is TOLERATED:
                    self.metrics.records_skipped += 1
                    self._flush_run(cur_partition, cur_offset)
                    cur_partition = cur_offset = None
                    if acks is not None:
                        acks.dropped_row(i)
                    elif delivery.dropped(records[i]):
                        self._commit_at_boundary(producer)
                    i += 1
                    j += 1
                    continue
                if topic not in known:
                    self._ensure_topic(topic)
                partition, timestamp = partitions[j], timestamps[j]
                try:
                    # Positional: a keyword argument costs confluent-kafka about 1 us a call,
                    # as much as the rest of produce() (benchmarks/transforms.py). The fifth
                    # is ``callback`` (the sixth, ``on_delivery``, is its alias, read only
                    # when ``callback`` is missing); None leaves the producer's own.
                    produce(
                        topic,
                        value,
                        key,
                        -1 if partition is None else partition,
                        None
                        if bulk is not None
                        else partial(ack_callback, i)
                        if ack_callback is not None
                        else delivery.on_delivery(records[i]),
                        None,
                        timestamp or 0,
                        headers or None,
                    )
                except BufferError:
                    # The producer's queue is full: serve callbacks and try this record again.
                    producer.poll(0.05)
                    self._raise_producer_error()
                    if stopping.is_set():
                        return
                    continue
                except KafkaException as exc:
                    raise ConnectException(f"failed to send a record to topic {topic}: {exc}") from exc
                i += 1
                j += 1
                sent += 1
                if acks is not None:
                    if ack_sent is not None:
                        ack_sent(i - 1)
                elif bulk is None:
                    if delivery.sent(records[i - 1]):
                        self._commit_at_boundary(producer)
                else:
                    if batch_offsets is None:
                        record = records[i - 1]
                        sp, so = record.source_partition, record.source_offset
                    else:  # a SourceRecordBatch: its columns, no record made
                        sp, so = batch_partition, batch_offsets[i - 1]
                    if sp is not None and so is not None:
                        if sp is not cur_partition:
                            self._flush_run(cur_partition, cur_offset)
                            cur_partition = sp
                            if sent == 1:  # the batch's first offset noted at once (exactly once writes it)
                                self._flush_run(sp, so)
                        cur_offset = so
        finally:
            self._next, self._row = i, j
            self._flush_run(cur_partition, cur_offset)
            # Kafka's source-record-write: records handed to the producer.
            self.metrics.records_out += sent

    def _plan_plain(self) -> _PlainSend | None:
        """Whether the whole poll can go in one tight loop (``_send_plain``), because nothing
        about it needs the general one: at-least-once acks, no record dropped, one topic,
        one source partition, values converted, keys converted (or null keys of one
        schema), one Headers object (or none) for every record, no partitions or
        timestamps; and what that loop sends. A file or a table read into one topic is
        this case, with or without a header-adding transformation;
        ``benchmarks/file_pipeline.py``, ``benchmarks/transforms.py`` and
        ``benchmarks/jdbc_source.py`` pay for it (the general loop's checks cost about as
        much per record as ``produce`` itself)."""
        delivery, out, records = self.delivery, self._out, self._to_send
        assert out is not None
        n = len(records)
        columns = out.columns
        topics, key_schemas = columns.topic, columns.key_schema
        if not (
            n
            and delivery.notes_runs
            and self._header_pairs is None
            and len(out.origin) == n
            and self._values_complete
            and type(topics) is list
            and topics.count(topics[0]) == n
            and (
                self._keys_complete or (key_schemas.count(key_schemas[0]) == n and _all_none(columns.key, n))
            )
            and _one_object(columns.headers)
            and _all_none(columns.kafka_partition, n)
            and _all_none(columns.timestamp, n)
        ):
            return None
        offsets: Sequence[Mapping[str, Any] | None]
        if isinstance(records, SourceRecordBatch):
            partition, offsets = records.source_partition, records.source_offsets
        else:
            parts = list(map(_SOURCE_PARTITION, records))
            if parts.count(parts[0]) != n:
                return None
            partition, offsets = parts[0], list(map(_SOURCE_OFFSET, records))
        if partition is not None and None in offsets:
            return None  # the general loop notes the newest offset that is there
        topic, shared_headers = topics[0], columns.headers[0]
        try:
            keys = (
                self._keys
                if self._keys_complete
                else [self.key_converter.from_connect_data(topic, key_schemas[0], None)] * n
            )
            headers = self._headers(topic, shared_headers) if shared_headers is not None else None
        except Exception:
            return None  # the general loop converts it again, through the error handling
        return _PlainSend(topic, self._values, keys, headers, partition, offsets)

    def _send_plain(self, plain: _PlainSend) -> bool:
        """The poll ``_plan_plain`` planned, in one tight loop; returns early only when
        stopping."""
        assert self.producer is not None
        topic, values, keys, headers, partition, offsets = plain
        n = len(values)
        if topic not in self._known_topics:
            self._ensure_topic(topic)
        producer, stopping = self.producer, self._stopping
        produce = producer.produce
        k = 0
        # The first record goes alone, then the poll's last offset is noted: exactly once
        # writes it into the transaction at once, so that the offsets partition joins the
        # transaction in the same AddPartitionsToTxn as the records' own, and it is the
        # transaction's one offsets record (``Transactional._write_early``). The rest go in
        # one loop; when that ends early (stopping), ``finally`` notes the offset reached
        # before anything can commit, and the commit writes it after the first (the later
        # record of a key is the one that counts).
        end = 1
        try:
            while k < n:
                first = k
                try:
                    if headers:
                        # Positional: a keyword costs confluent-kafka about 1 us a call.
                        for k in range(first, end):  # on a full queue, k is the record to retry
                            produce(topic, values[k], keys[k], -1, None, None, 0, headers)
                    else:
                        for k in range(first, end):
                            produce(topic, values[k], keys[k])
                    k = end
                    if end < n:
                        self._flush_run(partition, offsets[n - 1])
                        end = n
                except BufferError:
                    # The producer's queue is full: serve callbacks and try this record again.
                    producer.poll(0.05)
                    self._raise_producer_error()
                    if stopping.is_set():
                        return True
                except KafkaException as exc:
                    raise ConnectException(f"failed to send a record to topic {topic}: {exc}") from exc
        finally:
            self._next = self._row = k
            if k:
                self._flush_run(partition, offsets[k - 1])
            self.metrics.records_out += k
        return True

    def _send_rows(self) -> bool:
        """A ``SourceRecordBatch`` with its own partition, timestamp or headers per record
        (a copy of another topic: MirrorSourceTask) in one tight loop, when nothing else
        about it needs the general one: bulk or per-record acks, no record dropped, one
        topic, values converted, keys converted (or null), headers that all convert.
        False (nothing sent) otherwise. ``benchmarks/mirror.py`` pays for it: the general
        loop's checks per record cost more than the record's produce."""
        delivery, out, records = self.delivery, self._out, self._to_send
        assert out is not None and self.producer is not None
        acks = delivery if isinstance(delivery, PerRecordAcks) else None
        n = len(records)
        columns = out.columns
        topics, key_schemas = columns.topic, columns.key_schema
        if not (
            n
            and isinstance(records, SourceRecordBatch)
            and records.has_row_columns
            and (isinstance(delivery, BulkAcks) or acks is not None)
            and len(out.origin) == n
            and self._values_complete
            and type(topics) is list
            and topics.count(topics[0]) == n
            and (
                self._keys_complete or (key_schemas.count(key_schemas[0]) == n and _all_none(columns.key, n))
            )
            and (self._header_pairs is not None or _one_object(columns.headers))
        ):
            return False
        topic = topics[0]
        try:
            keys = (
                self._keys
                if self._keys_complete
                else [self.key_converter.from_connect_data(topic, key_schemas[0], None)] * n
            )
            headers: list[Any]
            pairs = self._header_pairs
            if pairs is not None:
                # The converter's batch form (ByteArrayConverter: bytes pass as they are,
                # benchmarks/mirror.py).
                headers = list(
                    self.header_converter.from_connect_header_rows(topic, self._header_schema, pairs)
                )
            else:
                shared = columns.headers[0]
                headers = [self._headers(topic, shared) if shared is not None else None] * n
        except Exception:
            return False  # the general loop converts them again, through the error handling
        partitions = [-1 if p is None else p for p in columns.kafka_partition]
        timestamps = [t or 0 for t in columns.timestamp]
        if topic not in self._known_topics:
            self._ensure_topic(topic)
        producer, values, stopping = self.producer, self._values, self._stopping
        produce = producer.produce
        callback = acks.begin(records)[0] if acks is not None else None
        offsets = records.source_offsets
        k = 0
        try:
            while k < n:
                first = k
                try:
                    # Positional, as in _send_plain: partition, callback, on_delivery, timestamp,
                    # headers.
                    if callback is not None:
                        for k in range(first, n):  # on a full queue, k is the record to retry
                            produce(
                                topic,
                                values[k],
                                keys[k],
                                partitions[k],
                                partial(callback, k),
                                None,
                                timestamps[k],
                                headers[k],
                            )
                    else:
                        for k in range(first, n):
                            produce(
                                topic,
                                values[k],
                                keys[k],
                                partitions[k],
                                None,
                                None,
                                timestamps[k],
                                headers[k],
                            )
                    k = n
                except BufferError:
                    # The producer's queue is full: serve callbacks and try this record again.
                    producer.poll(0.05)
                    self._raise_producer_error()
                    if stopping.is_set():
                        return True
                except KafkaException as exc:
                    raise ConnectException(f"failed to send a record to topic {topic}: {exc}") from exc
        finally:
            self._next = self._row = k
            if k and acks is None:
                offset = next((o for o in reversed(offsets[:k]) if o is not None), None)
                self._flush_run(records.source_partition, offset)
            self.metrics.records_out += k
        return True

    def _flush_run(self, partition: Mapping[str, Any] | None, offset: Mapping[str, Any] | None) -> None:
        if partition is not None and offset is not None:
            self.delivery.note_run(partition, offset)

    def _headers(self, topic: str, headers: Headers) -> list[tuple[str, str | bytes | None]]:
        convert = self.header_converter.from_connect_header
        return [(h.key, convert(topic, h.key, h.schema, h.value)) for h in headers]

    def _pair_headers(
        self, topic: str, pairs: Sequence[tuple[str, Any]]
    ) -> list[tuple[str, str | bytes | None]]:
        convert, schema = self.header_converter.from_connect_header, self._header_schema
        return [(k, convert(topic, k, schema, v)) for k, v in pairs]

    def _recover(
        self, stage: Stage, converter: object, fn: Callable[[], Any], error: Exception, record: SourceRecord
    ) -> Any:
        return self.operator.execute(stage, _name(converter), fn, first_error=error, source_record=record)

    def _on_failed_delivery(self, err: KafkaError | None, msg: Any) -> None:
        """The producer-wide delivery report when only failures are reported."""
        if err is not None:
            self._tolerate_failed_send(err, msg, None)

    def _tolerate_failed_send(self, err: KafkaError, msg: Any, record: SourceRecord | None) -> bool:
        if self.operator.config.tolerate_all:
            # KIP-779: with errors.tolerance=all a record Kafka refused is reported and
            # skipped, not retried forever.
            # Counted by the operator (task error metrics); the record was already counted as
            # written when the producer took it, as Kafka counts source-record-write.
            self.operator.execute(Stage.KAFKA_PRODUCE, "Producer", _raiser(err, msg), source_record=record)
            return True
        self._producer_error = ConnectException(
            f"Unrecoverable exception from producer send callback: {err.str()} (topic {msg.topic()})"
        )
        return False

    def _raise_producer_error(self) -> None:
        if self._producer_error is not None:
            raise self._producer_error

    # -- topics -------------------------------------------------------------------------

    def _track(self, topic: str) -> None:
        self._used_topics.add(topic)
        self.status.on_topic_used(self.id.connector, self.id.task, topic)

    def _ensure_topic(self, topic: str) -> None:
        """First record for ``topic``: create it per topic.creation.* if asked and missing."""
        if topic == self._own_offsets_topic:
            # Kafka's rule: a record in the offsets topic would sit in a transaction that stays
            # open until the task's next poll, and reading offsets waits for open ones to end.
            raise ConnectException(
                "Source tasks may not produce to their own offsets topics when exactly-once support is "
                "enabled"
            )
        if self.topic_tracking and topic not in self._used_topics:
            self._track(topic)
        if self.topic_creation is not None:
            # Create, and take "already exists" as found (Kafka's TopicAdmin.createOrFindTopics).
            # Asking first would not do: a metadata request for a missing topic makes
            # brokers with auto.create.topics.enable create it with their defaults.
            settings = self.topic_creation.settings_for(topic)
            admin = AdminClient(self.admin_config)
            fut = admin.create_topics(
                [
                    NewTopic(
                        topic, settings.partitions, settings.replication_factor, config=dict(settings.configs)
                    )
                ]
            )[topic]
            try:
                fut.result(30)
                log.info(
                    "%s: created topic %s (group %s: %d partitions, replication factor %d)",
                    self.id,
                    topic,
                    settings.group,
                    settings.partitions,
                    settings.replication_factor,
                )
            except KafkaException as exc:
                err = exc.args[0]
                if err.code() != KafkaError.TOPIC_ALREADY_EXISTS:
                    if err.retriable():
                        raise RetriableException(f"cannot create topic {topic}: {err.str()}") from exc
                    raise ConnectException(f"cannot create topic {topic}: {err.str()}") from exc
        self._known_topics.add(topic)

    # -- offsets ----------------------------------------------------------------------

    def maybe_commit(self, point: CommitPoint = "send") -> None:
        self._finish_commit()
        elapsed = time.monotonic() - self._last_commit
        if self.delivery.commit_due(elapsed, self.flush_interval_s, point):
            if point == "batch" and self._pipeline is not None:
                assert self.producer is not None
                self._last_commit = time.monotonic()
                self._commit_started = time.perf_counter()
                try:
                    self._pipeline.start_commit(self.producer)
                except ConnectException:
                    self.metrics.commit(False, (time.perf_counter() - self._commit_started) * 1000)
                    raise
            else:
                self.commit_offsets()

    def _finish_commit(self) -> None:
        """Collect the commit ``maybe_commit`` left running, if any, as ``commit_offsets``
        would have (metrics, ``task.commit()`` on this thread)."""
        if self._pipeline is None or not self._pipeline.pending:
            return
        try:
            offsets = self._pipeline.finish_commit()
        except ConnectException:
            self.metrics.commit(False, (time.perf_counter() - self._commit_started) * 1000)
            raise
        self._committed(offsets, self._commit_started)

    def _commit_at_boundary(self, producer: Producer) -> None:
        """A boundary the connector drew inside a batch: commit, and go on in a new transaction."""
        self.commit_offsets()
        self.delivery.sending(producer)

    def commit_offsets(self) -> bool:
        """Commit the offsets of what was sent as the delivery semantics do: never ahead of
        what Kafka acknowledged (at least once), or in the records' transaction (exactly once)."""
        self._finish_commit()
        self._last_commit = time.monotonic()
        started = time.perf_counter()
        assert self.producer is not None
        try:
            offsets = self.delivery.commit(self.producer, self.flush_timeout_s)
        except ConnectException:
            self.metrics.commit(False, (time.perf_counter() - started) * 1000)
            raise
        return self._committed(offsets, started)

    def _committed(self, offsets: Offsets | None, started: float) -> bool:
        """What follows ``delivery.commit``: metrics, ``task.commit()``; whether it committed."""
        if self.exactly_once and offsets is not None:
            size = self.metrics.records_out - self._written_at_commit
            self._written_at_commit = self.metrics.records_out
            if size:
                self.metrics.transaction(size)
        if self._producer_error is not None:
            return False
        if offsets is None:
            self.metrics.commit(False, (time.perf_counter() - started) * 1000)
            return False
        if not offsets:
            return True
        self.metrics.commit(True, (time.perf_counter() - started) * 1000)
        log.debug("%s: committed offsets of %d source partitions", self.id, len(offsets))
        try:
            self.task.commit()
        except Exception:
            log.exception("%s: commit() raised; continuing", self.id)
        return True


_UNCONVERTED: Any = object()  # a row whose key or value its batch conversion did not give


_SOURCE_PARTITION = attrgetter("source_partition")
_SOURCE_OFFSET = attrgetter("source_offset")


def _all_none(column: Sequence[Any], n: int) -> bool:
    return type(column) is list and column.count(None) == n


def _one_object(column: Sequence[Any]) -> bool:
    """Every row holds the same object (by identity: equality would call ``__eq__`` per
    row)."""
    return type(column) is list and len(set(map(id, column))) == 1


def _convert_runs(
    converter: Converter,
    topics: Sequence[str],
    runs: Sequence[tuple[int, int]],
    schemas: Sequence[Schema | None],
    data: Sequence[Any],
    skip_nulls: bool,
) -> tuple[list[Any], bool]:
    """``data`` converted a run of one topic at a time; a run that fails (or, with
    ``skip_nulls``, holds only nulls) is all ``_UNCONVERTED``; and whether none is."""
    converted: list[Any] = []
    complete = True
    batch = converter.from_connect_batch
    for start, end in runs:
        part = data[start:end]
        if skip_nulls and type(part) is list and part.count(None) == end - start:
            converted += [_UNCONVERTED] * (end - start)
            complete = False
            continue
        try:
            got = batch(topics[start], schemas[start:end], part)
            if len(got) != end - start:
                raise ConnectException("from_connect_batch returned a different number of values than given")
        except Exception:
            got = [_UNCONVERTED] * (end - start)
            complete = False
        converted += got
    return converted, complete


def _source_context(record: SourceRecord) -> dict[str, Any]:
    return {"source_record": record}


def _name(obj: object) -> str:
    t = type(obj)
    return f"{t.__module__}.{t.__qualname__}"


def _raiser(err: KafkaError, msg: Any) -> Callable[[], None]:
    def fail() -> None:
        raise ConnectException(f"Kafka refused a record for topic {msg.topic()}: {err.str()}")

    return fail
