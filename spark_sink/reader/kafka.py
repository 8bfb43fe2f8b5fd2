"""The "sluiceway" source's Kafka side, with confluent-kafka (librdkafka): no JVM Kafka client.

- ``KafkaOffsets`` runs where Spark plans (the driver's Python worker): which partitions a
  query reads and their earliest / latest / by-timestamp offsets, through one AdminClient.
- ``read_range`` runs in Spark's executor Python workers: it reads one partition's offset
  range with a consumer of its own (assign + seek; no group membership, no commits) and
  yields pyarrow RecordBatches in the source's schema, which Spark takes without converting
  row by row.
"""

from __future__ import annotations

import gc
import logging
import re
import time
import uuid
from bisect import bisect_left
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from contextlib import contextmanager
from operator import itemgetter
from typing import TypeVar, cast

import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
import pyarrow.compute as pc  # type: ignore[import-untyped, unused-ignore]
from confluent_kafka import Consumer, IsolationLevel, KafkaError, KafkaException, Message
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec  # type: ignore[attr-defined]

from spark_sink.reader.options import (
    EARLIEST,
    LATEST,
    Assign,
    EarliestOffsets,
    GlobalTimestamp,
    LatestOffsets,
    OffsetLimit,
    OptionError,
    PartitionOffsets,
    ReaderOptions,
    SpecificOffsets,
    SpecificTimestamps,
    Subscribe,
    SubscribePattern,
    TopicPartition,
    selected_topics,
)

log = logging.getLogger(__name__)

#: Records per Arrow batch: Spark's default spark.sql.execution.arrow.maxRecordsPerBatch.
BATCH_RECORDS = 10_000
#: How long one consume() call may wait. librdkafka's batch consume waits its whole timeout
#: when fewer records than asked for exist (e.g. the range ends in transaction markers), so
#: it is short; kafkaConsumer.pollTimeoutMs bounds the wait for data that does not come.
_CONSUME_WAIT_S = 0.2
#: Metadata and ListOffsets requests.
_REQUEST_TIMEOUT_S = 30.0

_TIMESTAMP = pa.timestamp("us", tz="UTC")
_TIMESTAMP_MS = pa.timestamp("ms", tz="UTC")
_ONE = pa.scalar(1, pa.int32())
_HEADER = pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())])
# Message's methods called through map() rather than a comprehension a column: the calls
# stay in C (a few percent of read_range's CPU; benchmarks/spark_reader.py, "read_range alone").
_ERROR = Message.error
_OFFSET = Message.offset
_KEY = Message.key
_VALUE = Message.value
_TIMESTAMP_OF = Message.timestamp
_HEADERS_OF = Message.headers
_FIRST = itemgetter(0)
_SECOND = itemgetter(1)
# Spark converts its schema to Arrow with list items named "element"; batches must match exactly.
_HEADERS = pa.list_(pa.field("element", _HEADER))

_FAIL_ON_DATA_LOSS_TRUE = (
    "Some data may have been lost because they are not available in Kafka any more; either the data was "
    "aged out by Kafka or the topic may have been deleted before all the data in the topic was processed. "
    "If you don't want your query to fail on such cases, set the source option 'failOnDataLoss' to 'false'."
)
_FAIL_ON_DATA_LOSS_FALSE = (
    "Some data may have been lost because they are not available in Kafka any more; either the data was "
    "aged out by Kafka or the topic may have been deleted before all the data in the topic was processed. "
    "If you want your query to fail on such cases, set the source option 'failOnDataLoss' to 'true'."
)


class DataLossError(RuntimeError):
    """Records the query should read are gone from Kafka (and failOnDataLoss is true)."""


def report_data_loss(opts: ReaderOptions, message: str) -> None:
    """Fail (failOnDataLoss=true, the default) or log a warning and go on, as Spark does."""
    if opts.fail_on_data_loss:
        raise DataLossError(f"{message}. {_FAIL_ON_DATA_LOSS_TRUE}")
    log.warning("%s. %s", message, _FAIL_ON_DATA_LOSS_FALSE)


def arrow_schema(include_headers: bool) -> pa.Schema:
    """The Arrow form of the source's schema, as Spark derives it from the Spark schema."""
    fields = [
        pa.field("key", pa.binary()),
        pa.field("value", pa.binary()),
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("offset", pa.int64()),
        pa.field("timestamp", _TIMESTAMP),
        pa.field("timestampType", pa.int32()),
    ]
    if include_headers:
        fields.append(pa.field("headers", _HEADERS))
    return pa.schema(fields)


# Settings of the librdkafka handles; a user's kafka.* options override the tunables but
# not what reading correctly depends on.
_CONSUMER_DEFAULTS = {
    # Kafka's (Java) default; librdkafka's own default is read_committed.
    "isolation.level": "read_uncommitted",
    # One fetch returns plenty for a 10k-record batch, and the fetcher does not idle for
    # librdkafka's default 1 s back-off whenever more than queued.min.messages are buffered.
    "max.partition.fetch.bytes": "8388608",
    "queued.min.messages": "1000000",
    "fetch.queue.backoff.ms": "10",
    "client.id": "sluiceway-spark-reader",
}
_CONSUMER_FIXED = {
    "enable.auto.commit": "false",
    "enable.auto.offset.store": "false",
    # The end of what is there is an event: a range must never wait for offsets that never come.
    "enable.partition.eof": "true",
    # Out-of-range positions surface as errors (data loss), never as a silent jump.
    "auto.offset.reset": "error",
}
# Consumer-only settings that would make librdkafka warn when given to the AdminClient.
_CONSUMER_ONLY_PREFIXES = (
    "group.",
    "isolation.level",
    "enable.auto.",
    "enable.partition.eof",
    "auto.offset.reset",
    "fetch.",
    "max.partition.fetch.bytes",
    "queued.",
    "check.crcs",
    "session.timeout.ms",
    "heartbeat.interval.ms",
    "partition.assignment.strategy",
    "max.poll.interval.ms",
)


def consumer_config(opts: ReaderOptions) -> dict[str, str]:
    """librdkafka consumer settings for reading one range: a fresh group id, nothing committed."""
    conf = {**_CONSUMER_DEFAULTS, **opts.kafka, **_CONSUMER_FIXED}
    # A consumer that only assign()s never joins its group; the unique id keeps it that way
    # even if something were committed (Spark does the same).
    conf.setdefault("group.id", f"{opts.group_id_prefix}-{uuid.uuid4()}-executor")
    return conf


def admin_config(opts: ReaderOptions) -> dict[str, str | int | float | bool]:
    conf = {"client.id": "sluiceway-spark-reader", **opts.kafka}
    return {k: v for k, v in conf.items() if not k.startswith(_CONSUMER_ONLY_PREFIXES)}


def _client_error(exc: KafkaException) -> OptionError | None:
    """An OptionError naming the kafka.* option librdkafka refused, or None for other errors."""
    err = exc.args[0] if exc.args else None
    if isinstance(err, KafkaError) and err.code() == KafkaError._INVALID_ARG:
        named = re.search(r'"([^"]+)"', err.str())
        option = f" (option 'kafka.{named.group(1)}')" if named else ""
        return OptionError(f"The Kafka client (librdkafka) refused a kafka.* option{option}: {err.str()}")
    return None


def new_consumer(opts: ReaderOptions) -> Consumer:
    try:
        return Consumer(consumer_config(opts))
    except KafkaException as exc:
        raise (_client_error(exc) or exc) from None


T = TypeVar("T")


class KafkaOffsets:
    """Partition discovery and offset lookups for planning (Spark's KafkaOffsetReaderAdmin).

    Holds an AdminClient, created on first use; ``close()`` drops it. Not pickled with it."""

    def __init__(self, opts: ReaderOptions) -> None:
        self.opts = opts
        self._admin: AdminClient | None = None

    def __enter__(self) -> KafkaOffsets:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        # librdkafka frees the handle when the last reference goes.
        self._admin = None

    @property
    def admin(self) -> AdminClient:
        if self._admin is None:
            try:
                self._admin = AdminClient(admin_config(self.opts))
            except KafkaException as exc:
                raise (_client_error(exc) or exc) from None
        return self._admin

    def _with_retries(self, body: Callable[[], T]) -> T:
        """``body()``, retried fetchOffset.numRetries times on Kafka errors (Spark's withRetries)."""
        attempts = self.opts.fetch_offset_retries
        for attempt in range(1, attempts + 1):
            try:
                return body()
            except (KafkaException, TimeoutError) as exc:
                if attempt >= attempts:
                    raise
                log.warning("Error in attempt %d getting Kafka offsets: %s", attempt, exc)
                time.sleep(self.opts.fetch_offset_retry_interval_ms / 1000)
                self.close()  # a fresh client, as Spark resets its admin
        raise AssertionError("unreachable")

    # -- partitions --------------------------------------------------------------------

    def partitions(self) -> list[TopicPartition]:
        """The partitions the query reads now, sorted."""
        return self._with_retries(self._partitions)

    def _partitions(self) -> list[TopicPartition]:
        strategy = self.opts.strategy
        md = self.admin.list_topics(timeout=_REQUEST_TIMEOUT_S)
        topics = selected_topics(strategy, md.topics)
        out: list[TopicPartition] = []
        for topic in topics:
            tmd = md.topics.get(topic)
            unknown = KafkaError.UNKNOWN_TOPIC_OR_PART
            if tmd is None or (tmd.error is not None and tmd.error.code() == unknown):
                if isinstance(strategy, SubscribePattern):
                    continue  # deleted between listing and describing
                option = "subscribe" if isinstance(strategy, Subscribe) else "assign"
                raise OptionError(f"Option '{option}': topic '{topic}' does not exist")
            if tmd.error is not None:
                raise KafkaException(tmd.error)
            out.extend((topic, p) for p in tmd.partitions)
        if isinstance(strategy, Assign):
            # Spark reads the assigned partitions that exist and ignores the others.
            wanted = set(strategy.partitions)
            out = [tp for tp in out if tp in wanted]
        return sorted(out)

    # -- offsets -----------------------------------------------------------------------

    def list_offsets(self, specs: Mapping[TopicPartition, int]) -> PartitionOffsets:
        """Offsets for EARLIEST, LATEST or a timestamp (>= 0) per partition; -1 where no
        record has a timestamp at or after the one asked for."""
        if not specs:
            return {}
        return self._with_retries(lambda: self._list_offsets(specs))

    def _list_offsets(self, specs: Mapping[TopicPartition, int]) -> PartitionOffsets:
        level = (
            IsolationLevel.READ_COMMITTED
            if self.opts.isolation_level == "read_committed"
            else IsolationLevel.READ_UNCOMMITTED
        )
        # OffsetSpec(-2) is earliest, OffsetSpec(-1) latest, OffsetSpec(ts >= 0) by timestamp.
        request = {KafkaTopicPartition(t, p): _offset_spec(v) for (t, p), v in specs.items()}
        futures = self.admin.list_offsets(request, isolation_level=level, request_timeout=_REQUEST_TIMEOUT_S)
        return {(ktp.topic, ktp.partition): int(f.result().offset) for ktp, f in futures.items()}

    def earliest(self, tps: Iterable[TopicPartition]) -> PartitionOffsets:
        return self.list_offsets(dict.fromkeys(tps, EARLIEST))

    def latest(self, tps: Iterable[TopicPartition] | None = None) -> PartitionOffsets:
        return self.list_offsets(dict.fromkeys(self.partitions() if tps is None else tps, LATEST))

    def existing_earliest(self, tps: Iterable[TopicPartition]) -> PartitionOffsets:
        """Earliest offsets of those of ``tps`` that still exist (new partitions of a stream)."""
        wanted = set(tps)
        if not wanted:
            return {}
        existing = set(self.partitions())
        return self.earliest(sorted(wanted & existing))

    def resolve(self, limit: OffsetLimit, starting: bool) -> PartitionOffsets:
        """Actual offsets of every partition read, for a starting or ending offset option."""
        tps = self.partitions()
        option = "startingOffsets" if starting else "endingOffsets"
        if isinstance(limit, EarliestOffsets):
            return self.earliest(tps)
        if isinstance(limit, LatestOffsets):
            return self.latest(tps)
        if isinstance(limit, SpecificOffsets):
            _same_partitions(option, set(limit.offsets), set(tps), "Use -1 for latest, -2 for earliest.")
            markers = {tp: v for tp, v in limit.offsets.items() if v in (EARLIEST, LATEST)}
            resolved = self.list_offsets(markers)
            return {tp: resolved.get(tp, v) for tp, v in sorted(limit.offsets.items())}
        if isinstance(limit, SpecificTimestamps):
            name = "startingOffsetsByTimestamp" if starting else "endingOffsetsByTimestamp"
            _same_partitions(name, set(limit.timestamps), set(tps), "")
            timestamps = dict(limit.timestamps)
        else:
            assert isinstance(limit, GlobalTimestamp)
            timestamps = dict.fromkeys(tps, limit.timestamp)
        found = self.list_offsets(timestamps)
        missing = sorted(tp for tp, off in found.items() if off < 0)
        if missing and starting and self.opts.starting_no_match == "error":
            tp = missing[0]
            raise OptionError(
                f"No offset matched from request of topic-partition {tp[0]}-{tp[1]} and timestamp "
                f"{timestamps[tp]} (startingOffsetsByTimestampStrategy is 'error'; set it to 'latest' to "
                f"start such partitions at their end)."
            )
        # No record at or after the timestamp: the partition's end.
        ends = self.latest(missing) if missing else {}
        return {tp: ends.get(tp, off) for tp, off in sorted(found.items())}


def _same_partitions(
    option: str, given: set[TopicPartition], assigned: set[TopicPartition], hint: str
) -> None:
    if given != assigned:
        raise OptionError(
            f"Option '{option}': if it contains specific offsets, you must specify all TopicPartitions. "
            f"{hint + ' ' if hint else ''}Specified: {_tps(given)} Assigned: {_tps(assigned)}"
        )


def _tps(tps: Iterable[TopicPartition]) -> str:
    return "[" + ", ".join(f"{t}-{p}" for t, p in sorted(tps)) + "]"


# ---------------------------------------------------------------------------------------
# Reading a range (executors).


def read_range(
    opts: ReaderOptions, topic: str, partition: int, start: int, end: int
) -> Generator[pa.RecordBatch, None, None]:
    """The records at offsets [start, end) of one partition, as Arrow batches in the source's schema.

    Offsets with no record (compacted away, transaction markers, aborted records under
    read_committed) are skipped, never waited for: the range ends when the consumer's
    position reaches ``end``, which librdkafka's end-of-partition event also tells. The
    consumer exists only while the iterator runs and is closed when it ends or is closed."""
    if start >= end:
        return
    consumer = new_consumer(opts)
    try:
        yield from _read(consumer, opts, topic, partition, start, end)
    finally:
        consumer.close()


def _read(
    consumer: Consumer, opts: ReaderOptions, topic: str, partition: int, start: int, end: int
) -> Iterator[pa.RecordBatch]:
    where = f"{topic}-{partition}"
    ktp = KafkaTopicPartition(topic, partition)
    low, high = consumer.get_watermark_offsets(ktp, timeout=_REQUEST_TIMEOUT_S, cached=False)
    if start < low:
        report_data_loss(
            opts,
            f"Cannot fetch offset {start} of {where}: its earliest available offset is {low}, so "
            f"offsets [{start}, {min(low, end)}) are skipped",
        )
        start = low
    if end > high:
        report_data_loss(
            opts,
            f"{where} ends at offset {high}, before the end of the range to read ({end}), so offsets "
            f"[{max(start, high)}, {end}) are skipped",
        )
        end = high
    if start >= end:
        return

    schema = arrow_schema(opts.include_headers)
    topic_value = pa.scalar(topic, pa.string())
    partition_value = pa.scalar(partition, pa.int32())
    consumer.assign([KafkaTopicPartition(topic, partition, start)])
    pos = start
    patience = opts.poll_timeout_ms / 1000
    deadline = time.monotonic() + patience
    while pos < end:
        batch: pa.RecordBatch | None = None
        eof_at: int | None = None
        lost_to: int | None = None
        with _cyclic_gc_paused():
            # Asking for no more than the range holds lets consume() return as soon as the last one is in.
            msgs = consumer.consume(min(BATCH_RECORDS, end - pos), _CONSUME_WAIT_S)
            if not msgs:
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"Cannot fetch record for offset {pos} of {where} in {opts.poll_timeout_ms} "
                        f"milliseconds (option kafkaConsumer.pollTimeoutMs)"
                    )
                continue
            deadline = time.monotonic() + patience
            # Errors (end of partition, offset reset) are rare events among records: one pass in C
            # tells whether there is any, and only then are messages sorted out one by one.
            records = msgs
            if any(map(_ERROR, msgs)):
                records = []
                for m in msgs:
                    err = m.error()
                    if err is None:
                        records.append(m)
                    elif err.code() == KafkaError._PARTITION_EOF:
                        eof_at = m.offset()
                    elif err.code() == KafkaError._AUTO_OFFSET_RESET:
                        # The position fell below the log start while reading (retention deleted it).
                        lost_to, _ = consumer.get_watermark_offsets(
                            ktp, timeout=_REQUEST_TIMEOUT_S, cached=False
                        )
                    else:
                        raise KafkaException(err)
            if records:
                # Record messages always carry an offset.
                offsets = cast(list[int], list(map(_OFFSET, records)))
                last = offsets[-1]
                if last >= end:
                    cut = bisect_left(offsets, end)
                    records, offsets = records[:cut], offsets[:cut]
                if records:
                    batch = _to_batch(
                        records, offsets, schema, topic_value, partition_value, opts.include_headers
                    )
                pos = max(pos, last + 1)
            del msgs, records
        if batch is not None:
            yield batch
        if lost_to is not None:
            report_data_loss(
                opts, f"Cannot fetch offset {pos} of {where}: its earliest available offset is now {lost_to}"
            )
            pos = max(pos, lost_to)
            consumer.assign([KafkaTopicPartition(topic, partition, pos)])
        elif eof_at is not None:
            # Offsets up to the end of the log that came with no record were invisible ones.
            pos = max(pos, eof_at)
            if pos < end:
                report_data_loss(
                    opts, f"{where} ends at offset {pos}, before the end of the range to read ({end})"
                )
                return


@contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while one consume() becomes one batch.

    A 10,000-record batch is ~30,000 GC-tracked objects (Messages, timestamp pairs, lists)
    alive at once: the collector runs dozens of times per batch, finds nothing (none of them
    can be in a cycle; reference counting frees them), and by promoting them sets off full
    collections of the Python worker's whole heap. That was about 45 % of the thread's CPU in
    read_range (1.2 s -> 0.66 s per 1,000,000 records; ``benchmarks/spark_reader.py``'s
    "read_range alone" line). The collector is on again before each batch is handed to
    Spark, so no code but this loop ever runs with it off."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _to_batch(
    records: list[Message],
    offsets: list[int],
    schema: pa.Schema,
    topic: pa.Scalar,
    partition: pa.Scalar,
    include_headers: bool,
) -> pa.RecordBatch:
    n = len(records)
    pairs = list(map(_TIMESTAMP_OF, records))  # (type, ms since the epoch)
    columns = [
        pa.array(list(map(_KEY, records)), pa.binary()),
        pa.array(list(map(_VALUE, records)), pa.binary()),
        pa.repeat(topic, n),
        pa.repeat(partition, n),
        pa.array(offsets, pa.int64()),
        pa.array(list(map(_SECOND, pairs)), _TIMESTAMP_MS).cast(_TIMESTAMP),
        # confluent-kafka: 0 none, 1 CreateTime, 2 LogAppendTime; Kafka (and Spark): -1, 0, 1.
        pc.subtract(pa.array(list(map(_FIRST, pairs)), pa.int32()), _ONE),
    ]
    if include_headers:
        # No headers is null, as in Spark's source.
        columns.append(pa.array(list(map(_HEADERS_OF, records)), _HEADERS))
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def _offset_spec(value: int) -> OffsetSpec:
    # OffsetSpec's constructor picks the subclass: -2 earliest, -1 latest, >= 0 by timestamp.
    return OffsetSpec(value)  # type: ignore[abstract]
