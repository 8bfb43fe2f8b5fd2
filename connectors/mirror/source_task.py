"""MirrorSourceTask: copies its assigned partitions of the source cluster, record for
record, to their remote topics (same partition, key, value, timestamp, headers).

Kafka's MirrorSourceTask: a consumer on the source that is assigned its partitions (never
subscribed: the connector decides who reads what), each partition resumed one past the
offset the worker stored for it, or by ``auto.offset.reset`` when none is stored. Keys,
values and headers stay bytes (``Schema.OPTIONAL_BYTES_SCHEMA``); the worker is meant to
run ByteArrayConverter for all three, so the target receives the source's bytes.

Each poll returns the records of one source partition as a ``SourceRecordBatch``, columns
with each record's own partition, timestamp and headers (the other partitions a fetch
brought wait for the next polls): the worker sends those without making a record each,
which ``benchmarks/mirror.py`` pays for. Each acknowledged record is handed to the
offset-sync writer (``commit_records``, the batch form of ``commit_record``), which writes
``OffsetSync`` records so that consumer groups can be translated later.

A source cluster that does not answer makes ``poll`` raise ``RetriableException`` with
backoff, saying which cluster and why; the consumer keeps its position, so nothing
acknowledged on the source is skipped when it comes back.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any, Final, overload

from confluent_kafka import Consumer, KafkaError, KafkaException
from confluent_kafka import TopicPartition as KafkaPartition

from connect.api import (
    ConnectException,
    RetriableException,
    Schema,
    SourceRecord,
    SourceRecordBatch,
    SourceTask,
)
from connect.api.retry import backoff_seconds
from connect.api.source_batch import RecordMetadataBatch
from connect.api.task import RecordMetadata
from connectors.mirror.config import MirrorSourceConfig, offset_syncs_cluster
from connectors.mirror.offset_sync_writer import OffsetSyncWriter
from connectors.mirror.topic_plan import TASK_PARTITIONS_KEY, decode_partitions

log = logging.getLogger(__name__)

VERSION: Final = "1.0.0"

_BYTES = Schema.OPTIONAL_BYTES_SCHEMA
#: Records per poll when the config does not say (Kafka's max.poll.records default).
_DEFAULT_BATCH: Final = 500
_BATCH_KEYS: Final = ("source.consumer.max.poll.records", "consumer.max.poll.records")
#: Backoff while the source cluster does not answer: from 200 ms, doubling, up to ~6 s.
_BACKOFF_BASE_MS: Final = 200
_BACKOFF_MAX_ATTEMPT: Final = 5


def _offset_of(stored: Mapping[str, Any] | None) -> int:
    """The stored offset (Kafka's ``unwrapOffset``): -1 when there is none."""
    if not stored:
        return -1
    value = stored.get("offset")
    return value if isinstance(value, int) else -1


class MirrorSourceTask(SourceTask):
    """Replicates a set of topic-partitions (``task.assigned.partitions``)."""

    def __init__(self) -> None:
        self._consumer: Consumer | None = None
        self._writer: OffsetSyncWriter | None = None
        # poll() holds it while it uses the consumer; stop() takes it to close the consumer
        # (confluent-kafka must not close a consumer another thread is polling).
        self._consumer_lock = threading.Lock()
        self._stopping = False
        self._client_error: KafkaError | None = None  # the last error the consumer reported
        self._failures = 0  # consecutive polls the source cluster did not answer
        self._source_partitions: dict[tuple[str, int], dict[str, Any]] = {}
        self._remote: dict[str, str] = {}
        self._poll_timeout_s = 1.0
        # A fetch's records of other partitions than the one poll() returned, in order.
        self._ready: deque[SourceRecordBatch] = deque()

    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        config = MirrorSourceConfig.parse(props)
        self._alias = config.source_cluster_alias
        target_alias = config.target_cluster_alias
        self._format = config.replication_policy().format_remote_topic
        self._poll_timeout_s = config.consumer_poll_timeout_ms / 1000
        self._batch = _batch_size(props)
        partitions = decode_partitions(props.get(TASK_PARTITIONS_KEY, ""))

        # Offsets live in the worker, as Kafka's: the consumer never commits (client_config
        # sees to it) and its group.id is never joined.
        consumer_config = config.client_config("source", "consumer", "replication-consumer")
        consumer_config["error_cb"] = self._on_client_error
        self._bootstrap = str(consumer_config.get("bootstrap.servers", "?"))
        self._consumer = Consumer(consumer_config)

        if config.emit_offset_syncs_enabled:
            self._writer = OffsetSyncWriter(
                config.client_config(offset_syncs_cluster(config), "producer", "offset-syncs-producer"),
                config.offset_syncs_topic(),
                config.offset_lag_max,
            )

        # One source-partition map per partition, shared by its records (the worker groups
        # offsets by it, and building one per record would cost a dict each).
        for tp in partitions:
            self._source_partitions[tp.topic, tp.partition] = {
                "cluster": self._alias,
                "topic": tp.topic,
                "partition": tp.partition,
            }
        reader = self.context.offset_storage_reader()
        assignment = []
        resumed = 0
        for tp in partitions:
            offset = _offset_of(reader.offset(self._source_partitions[tp.topic, tp.partition]))
            if offset >= 0:
                assignment.append(KafkaPartition(tp.topic, tp.partition, offset + 1))
                resumed += 1
            else:
                assignment.append(KafkaPartition(tp.topic, tp.partition))  # auto.offset.reset
        self._consumer.assign(assignment)
        log.info(
            "replicating %d topic-partitions %s->%s (%d resumed from stored offsets): %s",
            len(partitions),
            self._alias,
            target_alias,
            resumed,
            ", ".join(f"{tp.topic}-{tp.partition}" for tp in partitions),
        )

    # -- the data path ------------------------------------------------------------------

    def poll(self) -> Sequence[SourceRecord] | None:
        if self._ready:
            return None if self._stopping else self._ready.popleft()
        if not self._consumer_lock.acquire(blocking=False):
            return None  # stop() is closing the consumer
        try:
            consumer = self._consumer
            if self._stopping or consumer is None:
                return None
            if self._client_error is not None:
                self._check_source(consumer)
            # What is already fetched, without waiting; else wait for the first record only
            # (consume(n, timeout) would wait for n) and take what came with it.
            messages = consumer.consume(self._batch, 0)
            if not messages:
                first = consumer.poll(self._poll_timeout_s)
                if first is None:
                    return None
                messages = [first]
                if self._batch > 1:
                    messages.extend(consumer.consume(self._batch - 1, 0))
            return self._records(messages)
        finally:
            self._consumer_lock.release()

    def _records(self, messages: list[Any]) -> SourceRecordBatch | None:
        """The messages as one batch per topic-partition, in order; returns the first and
        keeps the others for the next polls."""
        # The per-record hot path: the messages grouped by partition in one pass, each
        # column made in one comprehension, no per-record objects but the offset map.
        runs: dict[tuple[str, int], list[Any]] = {}
        for m in messages:
            error = m.error()
            if error is not None:
                self._on_message_error(error)
                continue
            key = (m.topic(), m.partition())
            run = runs.get(key)
            if run is None:
                run = runs[key] = []
            run.append(m)
        if not runs:
            return None
        if self._failures:
            log.info("source cluster %r (%s) answers again", self._alias, self._bootstrap)
        self._failures = 0
        self._client_error = None
        remote = self._remote
        for (topic, partition), run in runs.items():
            target = remote.get(topic)
            if target is None:
                target = remote[topic] = self._format(self._alias, topic)
            self._ready.append(
                SourceRecordBatch(
                    self._source_partitions[topic, partition],
                    _Offsets([m.offset() for m in run]),
                    target,
                    _BYTES,
                    [m.value() for m in run],
                    key_schema=_BYTES,
                    keys=[m.key() for m in run],
                    kafka_partition=partition,
                    timestamps=[ts if ts >= 0 else None for _, ts in (m.timestamp() for m in run)],
                    headers=[m.headers() for m in run],
                    header_schema=_BYTES,
                )
            )
        return self._ready.popleft()

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        writer = self._writer
        if writer is None or metadata is None or metadata.offset < 0:
            return  # dropped by a transformation, or no offset to sync
        sp = record.source_partition
        so = record.source_offset
        assert sp is not None and so is not None
        writer.acked(sp["topic"], sp["partition"], so["offset"], metadata.offset)

    def commit_records(
        self, records: Sequence[SourceRecord], metadata: Sequence[RecordMetadata | None]
    ) -> None:
        """``commit_record`` for each, reading a batch's columns (``benchmarks/mirror.py``)."""
        writer = self._writer
        if writer is None:
            return
        if not isinstance(records, SourceRecordBatch):
            super().commit_records(records, metadata)
            return
        sp = records.source_partition
        assert sp is not None
        topic, partition = sp["topic"], sp["partition"]
        if isinstance(metadata, RecordMetadataBatch):
            # Both sides as columns, decided a run at a time (no metadata: offset -1, skipped).
            offsets = records.source_offsets
            upstreams = (
                offsets.ints if isinstance(offsets, _Offsets) else [so["offset"] for so in offsets]  # type: ignore[index]
            )
            writer.acked_many(topic, partition, upstreams, metadata.offsets)
            return
        acked = writer.acked
        for so, meta in zip(records.source_offsets, metadata, strict=True):
            if meta is not None and meta.offset >= 0:  # else dropped, or no offset to sync
                assert so is not None
                acked(topic, partition, so["offset"], meta.offset)

    def commit(self) -> None:
        if self._writer is not None:
            self._writer.commit()

    def stop(self) -> None:
        self._stopping = True
        # Wait for a poll under way (it returns within consumer.poll.timeout.ms), then close.
        locked = self._consumer_lock.acquire(timeout=max(self._poll_timeout_s * 3, 5))
        try:
            consumer, self._consumer = self._consumer, None
            if consumer is not None:
                if not locked:
                    log.warning("a poll did not return in time; closing the source consumer anyway")
                try:
                    consumer.close()
                except (KafkaException, RuntimeError) as exc:
                    log.warning("closing the source consumer: %s", exc)
        finally:
            if locked:
                self._consumer_lock.release()
        if self._writer is not None:
            self._writer.close()

    # -- an unreachable source cluster ------------------------------------------------------

    def _on_client_error(self, error: KafkaError) -> None:
        """librdkafka's error callback (runs inside poll/consume, on this thread)."""
        if error.fatal():
            self._client_error = error
            return
        code = error.code()
        if code in (KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN, KafkaError._RESOLVE) or (
            code in (KafkaError._AUTHENTICATION, KafkaError._SSL, KafkaError._TIMED_OUT)
        ):
            self._client_error = error
        else:
            log.warning("source consumer of cluster %r: %s", self._alias, error.str())

    def _on_message_error(self, error: KafkaError) -> None:
        if error.fatal():
            raise ConnectException(f"source cluster {self._where()}: {error.str()}")
        if error.code() == KafkaError._PARTITION_EOF:
            return
        log.warning("source cluster %s: %s", self._where(), error.str())

    def _where(self) -> str:
        return f"'{self._alias}' ({self._bootstrap})"

    def _check_source(self, consumer: Consumer) -> None:
        """The consumer reported a connection problem: ask the cluster for metadata, and
        raise RetriableException (with a growing backoff) while it does not answer."""
        error = self._client_error
        assert error is not None
        if error.fatal():
            raise ConnectException(f"source cluster {self._where()} failed: {error.str()}")
        try:
            consumer.list_topics(timeout=min(self._poll_timeout_s, 5.0) or 1.0)
        except KafkaException as exc:
            attempt = min(self._failures, _BACKOFF_MAX_ATTEMPT)
            self._failures += 1
            wait = backoff_seconds(attempt, _BACKOFF_BASE_MS)
            reason = exc.args[0].str() if exc.args and isinstance(exc.args[0], KafkaError) else str(exc)
            raise RetriableException(
                f"source cluster {self._where()} does not answer ({error.str()}; {reason}); "
                f"retrying in {wait:.1f} s (attempt {self._failures}); replication resumes "
                "where it stopped",
                retry_after=wait,
            ) from exc
        if self._failures:
            log.info("source cluster %s answers again", self._where())
        self._failures = 0
        self._client_error = None


class _Offsets(Sequence[Mapping[str, Any]]):
    """A batch's source offsets (Kafka's ``{"offset": n}``) kept as the consumer's ints,
    each map made when read: the worker reads a few (the offsets it commits), the offset
    syncs read the ints (``benchmarks/mirror.py``: a dict per record, made and read back,
    was about 5% of the task)."""

    __slots__ = ("ints",)

    def __init__(self, ints: list[int]) -> None:
        self.ints = ints

    def __len__(self) -> int:
        return len(self.ints)

    @overload
    def __getitem__(self, index: int) -> Mapping[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> _Offsets: ...

    def __getitem__(self, index: int | slice) -> Mapping[str, Any] | _Offsets:
        if isinstance(index, slice):
            return _Offsets(self.ints[index])
        return {"offset": self.ints[index]}


def _batch_size(props: Mapping[str, str]) -> int:
    for key in _BATCH_KEYS:
        value = props.get(key)
        if value is not None:
            try:
                n = int(value)
            except ValueError:
                raise ConnectException(f"{key} must be an integer, not {value!r}") from None
            if n < 1:
                raise ConnectException(f"{key} must be at least 1, not {n}")
            return n
    return _DEFAULT_BATCH
