"""The PySpark side of the "sluiceway" source: the DataSource and its batch and stream readers.

Spark runs these in Python workers: ``schema()``/``reader()``/``streamReader()`` and the
planning methods in the driver's, ``read()`` in executors'. The readers are pickled between
them, so they hold only options; Kafka clients are created where they are used (an
AdminClient for planning, dropped when pickled; one consumer per range read).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    ReadMinRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from spark_sink.reader.kafka import KafkaOffsets, read_range, report_data_loss
from spark_sink.reader.options import (
    OffsetRange,
    PartitionOffsets,
    ReaderOptions,
    offsets_from_json,
    offsets_to_json,
    parse_options,
    rate_limit,
    split_ranges,
)

if TYPE_CHECKING:
    from spark_sink.reader.registry_plan import DecodePlan

log = logging.getLogger(__name__)


def kafka_schema(include_headers: bool) -> StructType:
    """The columns of Spark's Kafka source (``headers`` only with includeHeaders=true)."""
    fields = [
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
        StructField("timestampType", IntegerType()),
    ]
    if include_headers:
        header = StructType([StructField("key", StringType()), StructField("value", BinaryType())])
        fields.append(StructField("headers", ArrayType(header)))
    return StructType(fields)


class SluicewayDataSource(DataSource):
    """``spark.read.format("sluiceway")`` / ``spark.readStream.format("sluiceway")``: Kafka topics
    as DataFrames, with the options and columns of Spark's Kafka source."""

    @classmethod
    def name(cls) -> str:
        return "sluiceway"

    def schema(self) -> StructType:
        # Checked here too so that a bad option fails load(), not the first action.
        opts = parse_options(self.options, None)
        plan = self._decoding(opts)
        if plan is None:
            return kafka_schema(opts.include_headers)
        from spark_sink.reader.registry_plan import spark_schema

        return spark_schema(plan)

    def _decoding(self, opts: ReaderOptions) -> DecodePlan | None:
        """The reader schemas of value.format/key.format, fetched once: Spark pickles this
        object after ``schema()``, so ``reader()`` reads what the DataFrame's schema says even
        if a subject gets a new version in between."""
        if opts.registry is None:
            return None
        plan: DecodePlan | None = getattr(self, "_plan", None)
        if plan is None:
            from spark_sink.reader.registry_plan import plan_decoding

            plan = plan_decoding(opts)
            self._plan = plan
        return plan

    def reader(self, schema: StructType) -> DataSourceReader:
        opts = parse_options(self.options, "batch")
        return SluicewayBatchReader(opts, self._decoding(opts))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        opts = parse_options(self.options, "stream")
        return SluicewayStreamReader(opts, self._decoding(opts))


@dataclass
class KafkaRangePartition(InputPartition):
    """One Spark task: offsets [start, end) of one topic partition."""

    topic: str
    partition: int
    start: int
    end: int


def _input_partitions(ranges: list[OffsetRange], opts: ReaderOptions) -> list[InputPartition]:
    split = split_ranges(ranges, opts.min_partitions, opts.max_records_per_partition)
    return [KafkaRangePartition(r.topic, r.partition, r.start, r.end) for r in split]


def _read(
    opts: ReaderOptions, plan: DecodePlan | None, partition: InputPartition
) -> Iterator[pa.RecordBatch]:
    if not isinstance(partition, KafkaRangePartition):
        if type(partition) is InputPartition and partition.value is None:
            # Spark reads one InputPartition(None) when partitions() planned none: nothing to read.
            return iter(())
        raise TypeError(f"not a sluiceway partition: {partition!r}")
    batches = read_range(opts, partition.topic, partition.partition, partition.start, partition.end)
    if plan is None:
        return batches
    from spark_sink.reader.registry_values import RecordDecoder

    decoder = RecordDecoder(plan)
    return (decoder.decode(batch) for batch in batches)


class SluicewayBatchReader(DataSourceReader):
    """A batch read: one partition per topic partition (more with minPartitions /
    maxRecordsPerPartition), its offsets resolved when Spark plans the read."""

    def __init__(self, opts: ReaderOptions, plan: DecodePlan | None = None) -> None:
        self.opts = opts
        self.plan = plan

    def partitions(self) -> list[InputPartition]:
        with KafkaOffsets(self.opts) as kafka:
            start = kafka.resolve(self.opts.starting, starting=True)
            end = kafka.resolve(self.opts.ending, starting=False)
        if set(start) != set(end):
            # Partitions were added or removed between the two lookups.
            raise RuntimeError(
                f"different topic partitions for starting offsets {_tps(set(start))} and ending offsets "
                f"{_tps(set(end))}"
            )
        ranges: list[OffsetRange] = []
        for tp in sorted(start):
            s, e = start[tp], end[tp]
            if s > e:
                raise ValueError(
                    f"The resolved starting offset ({s}) of {tp[0]}-{tp[1]} is greater than its resolved "
                    f"ending offset ({e}) (options startingOffsets*/endingOffsets*)"
                )
            ranges.append(OffsetRange(tp[0], tp[1], s, e))
        return _input_partitions(ranges, self.opts)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return _read(self.opts, self.plan, partition)


class SluicewayStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """A streaming read. Offsets are Spark's Kafka source offsets, ``{"topic": {"0": 42}}``
    (the next offset to read per partition), kept in the query's checkpoint by Spark, so a
    restarted query goes on exactly where the last committed micro-batch ended."""

    def __init__(self, opts: ReaderOptions, plan: DecodePlan | None = None) -> None:
        self.opts = opts
        self.plan = plan
        self._kafka: KafkaOffsets | None = None
        self._available_now_target: PartitionOffsets | None = None
        self._available_now = False
        self._latest: PartitionOffsets | None = None
        self._last_trigger_ms = 0.0

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_kafka"] = None
        return state

    @property
    def kafka(self) -> KafkaOffsets:
        if self._kafka is None:
            self._kafka = KafkaOffsets(self.opts)
        return self._kafka

    def initialOffset(self) -> dict[str, Any]:
        return offsets_to_json(self.kafka.resolve(self.opts.starting, starting=True))

    def getDefaultReadLimit(self) -> ReadLimit:
        # pyspark has no composite limit: with both options set, the minimum is applied here
        # (latestOffset) under the ReadMaxRows limit, as Spark's Kafka source applies both.
        if self.opts.max_offsets_per_trigger is not None:
            return ReadMaxRows(self.opts.max_offsets_per_trigger)
        if self.opts.min_offsets_per_trigger is not None:
            return ReadMinRows(self.opts.min_offsets_per_trigger)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        self._available_now = True

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        begin = offsets_from_json(start)
        if self._available_now:
            # Trigger.AvailableNow: what is there now is the target; later records wait for the next run.
            if self._available_now_target is None:
                self._available_now_target = self.kafka.latest()
            latest = self._available_now_target
        else:
            latest = self.kafka.latest()
        self._latest = latest
        if isinstance(limit, ReadAllAvailable):
            return offsets_to_json(latest)
        if self._delay(begin, latest):
            return start
        if isinstance(limit, ReadMaxRows):
            new = self.kafka.existing_earliest(set(latest) - set(begin))
            return offsets_to_json(rate_limit(limit.max_rows, begin, latest, new))
        return offsets_to_json(latest)

    def _delay(self, begin: PartitionOffsets, latest: PartitionOffsets) -> bool:
        """minOffsetsPerTrigger: wait for that many new offsets, at most maxTriggerDelay (not with
        Trigger.AvailableNow, which must finish)."""
        wanted = self.opts.min_offsets_per_trigger
        if wanted is None or self._available_now:
            return False
        now = time.time() * 1000
        if now - self._last_trigger_ms >= self.opts.max_trigger_delay_ms:
            self._last_trigger_ms = now
            return False
        if sum(off - begin.get(tp, 0) for tp, off in latest.items()) < wanted:
            return True
        self._last_trigger_ms = now
        return False

    def reportLatestOffset(self) -> dict[str, Any] | None:
        return offsets_to_json(self._latest) if self._latest else None

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[InputPartition]:
        begin, until = offsets_from_json(start), offsets_from_json(end)
        new = set(until) - set(begin)
        # Partitions that appeared since the last batch are read from their beginning.
        new_starts = self.kafka.existing_earliest(new) if new else {}
        if set(new_starts) != new:
            report_data_loss(
                self.opts,
                f"Cannot find earliest offsets of {_tps(new - set(new_starts))}. Some data may have been "
                f"missed",
            )
        for tp, off in sorted(new_starts.items()):
            if off != 0:
                report_data_loss(
                    self.opts,
                    f"Added partition {tp[0]}-{tp[1]} starts from {off} instead of 0. Some data may have "
                    f"been missed",
                )
        gone = set(begin) - set(until)
        if gone:
            report_data_loss(self.opts, f"{_tps(gone)} are gone. Some data may have been missed")
        ranges: list[OffsetRange] = []
        for tp in sorted(until):
            frm = begin.get(tp, new_starts.get(tp))
            if frm is None:
                continue
            if until[tp] < frm:
                report_data_loss(
                    self.opts,
                    f"Partition {tp[0]}-{tp[1]}'s offset was changed from {frm} to {until[tp]}, some data "
                    f"may have been missed",
                )
            ranges.append(OffsetRange(tp[0], tp[1], frm, until[tp]))
        return _input_partitions(ranges, self.opts)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return _read(self.opts, self.plan, partition)

    def commit(self, end: dict[str, Any]) -> None:
        # Nothing to do: offsets live in Spark's checkpoint, and nothing is committed to Kafka.
        pass

    def stop(self) -> None:
        if self._kafka is not None:
            self._kafka.close()
            self._kafka = None


def _tps(tps: set[tuple[str, int]]) -> str:
    return "[" + ", ".join(f"{t}-{p}" for t, p in sorted(tps)) + "]"
