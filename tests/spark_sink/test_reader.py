"""The "sluiceway" data source end to end: a real local Spark reading a real broker.

Batch reads of offset ranges (JSON, words, timestamps, split ranges, compaction gaps, data
loss), streaming queries that grow, stop and restart from their checkpoint, read limits,
topic patterns, and the errors bad options give.
"""

from __future__ import annotations

import gc
import pickle
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
import pytest
from confluent_kafka import Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.streaming.query import StreamingQuery

from broker.server import EmbeddedBroker
from spark_sink.reader.kafka import arrow_schema, read_range
from spark_sink.reader.options import parse_options
from spark_sink.reader.source import SluicewayStreamReader, kafka_schema
from tests.support import embedded_broker, unique, wait_until

# An hour ago, to the second: the shared broker's time-based retention (7 days, checked every
# 5 minutes) would delete records stamped years back in the middle of a long run.
BASE_TS = (int(time.time()) - 3600) * 1000
COLUMNS = ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType"]


@dataclass(frozen=True)
class Rec:
    partition: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] | None = None
    timestamp: int | None = None


def create_topic(bootstrap: str, topic: str, partitions: int, config: dict[str, str] | None = None) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1, config=config or {})])[topic].result(10)


def produce(bootstrap: str, topic: str, records: Iterable[Rec], **conf: Any) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 2, **conf})
    for r in records:
        p.produce(
            topic,
            key=r.key,
            value=r.value,
            partition=r.partition,
            headers=list(r.headers) if r.headers is not None else None,
            timestamp=r.timestamp or 0,
        )
    assert p.flush(30) == 0


def numbered(partitions: int, per_partition: int, tag: str = "v") -> list[Rec]:
    """Records ``{tag}-{partition}-{i}`` with timestamps BASE_TS + i, round robin over the partitions."""
    return [
        Rec(p, f"k{i}".encode(), f"{tag}-{p}-{i}".encode(), timestamp=BASE_TS + i)
        for i in range(per_partition)
        for p in range(partitions)
    ]


def read(spark: SparkSession, bootstrap: str, **options: str) -> DataFrame:
    reader = spark.read.format("sluiceway").option("kafka.bootstrap.servers", bootstrap)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def coordinates(df: DataFrame) -> list[tuple[str, int, int]]:
    """(topic, partition, offset) of every row, sorted, duplicates kept."""
    return sorted(
        (r.topic, r.partition, r.offset) for r in df.select("topic", "partition", "offset").collect()
    )


def expect(topic: str, ranges: dict[int, range]) -> list[tuple[str, int, int]]:
    return sorted((topic, p, o) for p, offs in ranges.items() for o in offs)


# -- schema ----------------------------------------------------------------------------


@pytest.mark.parametrize("headers", [False, True])
def test_arrow_batches_match_the_arrow_schema_spark_expects(headers: bool) -> None:
    # Spark refuses RecordBatches whose schema differs from its own conversion of the Spark schema.
    assert to_arrow_schema(kafka_schema(headers), timezone="UTC").equals(arrow_schema(headers))


# -- batch reads -----------------------------------------------------------------------


def test_batch_read_returns_every_record_once_with_its_columns(
    spark: SparkSession, shared_broker: EmbeddedBroker
) -> None:
    bootstrap, topic = shared_broker.bootstrap, unique("read")
    create_topic(bootstrap, topic, 3)
    records = [
        Rec(
            partition=i % 3,
            key=None if i == 7 else f"k{i}".encode(),
            value=None if i == 8 else f"v{i}".encode() * (i % 5 + 1),
            headers=None if i % 10 == 0 else (("h", str(i).encode()), ("empty", None), ("h", b"again")),
            timestamp=BASE_TS + 1000 * i,
        )
        for i in range(60)
    ]
    produce(bootstrap, topic, records)
    expected: dict[tuple[int, int], Rec] = {}  # (partition, offset): record
    next_offset = [0, 0, 0]
    for r in records:
        expected[(r.partition, next_offset[r.partition])] = r
        next_offset[r.partition] += 1

    df = read(spark, bootstrap, subscribe=topic, includeHeaders="true")
    assert df.columns == [*COLUMNS, "headers"]
    assert df.schema == kafka_schema(True)
    rows = df.selectExpr("*", "unix_millis(timestamp) AS ts_ms").collect()

    assert sorted((r.partition, r.offset) for r in rows) == sorted(expected)  # each exactly once
    for row in rows:
        rec = expected[(row.partition, row.offset)]
        assert (row.key, row.value, row.topic) == (rec.key, rec.value, topic)
        assert row.ts_ms == rec.timestamp and row.timestampType == 0  # CreateTime
        if rec.headers is None:
            assert row.headers is None  # as Spark's source: no headers is null
        else:
            assert [(h.key, h.value) for h in row.headers] == list(rec.headers)

    plain = read(spark, bootstrap, subscribe=topic)
    assert plain.columns == COLUMNS and plain.count() == 60


def test_batch_offset_ranges_from_json_words_and_timestamps(
    spark: SparkSession, shared_broker: EmbeddedBroker
) -> None:
    bootstrap, topic = shared_broker.bootstrap, unique("ranges")
    create_topic(bootstrap, topic, 3)
    produce(bootstrap, topic, numbered(3, 10))
    everything = expect(topic, {0: range(10), 1: range(10), 2: range(10)})

    df = read(
        spark,
        bootstrap,
        subscribe=topic,
        startingOffsets=f'{{"{topic}":{{"0":2,"1":-2,"2":5}}}}',
        endingOffsets=f'{{"{topic}":{{"0":7,"1":-1,"2":5}}}}',
    )
    assert coordinates(df) == expect(topic, {0: range(2, 7), 1: range(10)})
    values = {r.value for r in df.where("partition = 0").collect()}
    assert values == {f"v-0-{i}".encode() for i in range(2, 7)}

    assert coordinates(
        read(spark, bootstrap, subscribe=topic, startingOffsets="earliest", endingOffsets="latest")
    ) == (everything)

    # Large ranges split into more Spark tasks; still every record exactly once.
    split = read(spark, bootstrap, subscribe=topic, minPartitions="6", maxRecordsPerPartition="3")
    assert split.rdd.getNumPartitions() == 12  # 3 x 10 -> 6 x 5 -> 12 x (3 or 2)
    assert coordinates(split) == everything

    # From the first record at or after a time; to the first at or after another (or the end).
    by_time = read(
        spark,
        bootstrap,
        subscribe=topic,
        startingTimestamp=str(BASE_TS + 4),
        endingOffsetsByTimestamp=f'{{"{topic}":{{"0":{BASE_TS + 6},"1":{BASE_TS + 99},"2":{BASE_TS + 6}}}}}',
    )
    assert coordinates(by_time) == expect(topic, {0: range(4, 6), 1: range(4, 10), 2: range(4, 6)})

    assign = read(spark, bootstrap, assign=f'{{"{topic}":[0,2]}}')
    assert coordinates(assign) == expect(topic, {0: range(10), 2: range(10)})


def test_deleted_records_fail_the_read_unless_failondataloss_is_false(
    spark: SparkSession, shared_broker: EmbeddedBroker
) -> None:
    bootstrap, topic = shared_broker.bootstrap, unique("loss")
    create_topic(bootstrap, topic, 1)
    produce(bootstrap, topic, numbered(1, 10))
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.delete_records([TopicPartition(topic, 0, 4)]).values():
        f.result(10)
    from_zero = f'{{"{topic}":{{"0":0}}}}'

    with pytest.raises(Exception, match="failOnDataLoss") as exc:
        read(spark, bootstrap, subscribe=topic, startingOffsets=from_zero).collect()
    assert "earliest available offset is 4" in str(exc.value)

    lenient = read(spark, bootstrap, subscribe=topic, startingOffsets=from_zero, failOnDataLoss="false")
    assert coordinates(lenient) == expect(topic, {0: range(4, 10)})
    # "earliest" is where the log starts now: no loss to report.
    assert coordinates(read(spark, bootstrap, subscribe=topic)) == expect(topic, {0: range(4, 10)})


def test_ranges_over_compaction_gaps_end_without_waiting(spark: SparkSession, tmp_path: Path) -> None:
    with embedded_broker(tmp_path, log_cleaner_backoff_ms="100") as eb:
        topic = unique("compact")
        config = {"cleanup.policy": "compact", "segment.bytes": "100", "min.cleanable.dirty.ratio": "0.01"}
        create_topic(eb.bootstrap, topic, 1, config)
        for key, value in [
            (b"A", b"1"),
            (b"B", b"1"),
            (b"C", b"1"),
            (b"A", b"2"),
            (b"B", b"2"),
            (b"E", b"-"),
        ]:
            produce(eb.bootstrap, topic, [Rec(0, key, value)], **{"linger.ms": 0})  # a batch (segment) each
        wait_until(
            lambda: (
                coordinates(read(spark, eb.bootstrap, subscribe=topic)) == expect(topic, {0: range(2, 6)})
            ),
            30,
            interval=0.5,
            message="compaction of offsets 0 and 1",
        )

        def ending_at(end: int) -> list[tuple[str, int, int]]:
            return coordinates(
                read(spark, eb.bootstrap, subscribe=topic, endingOffsets=f'{{"{topic}":{{"0":{end}}}}}')
            )

        started = time.monotonic()
        assert ending_at(2) == []  # a range with no records left in it
        assert ending_at(4) == expect(topic, {0: range(2, 4)})
        assert time.monotonic() - started < 20  # no range waited kafkaConsumer.pollTimeoutMs (120 s)


def test_read_range_closes_its_consumer_and_stops_at_the_end(shared_broker: EmbeddedBroker) -> None:
    bootstrap, topic = shared_broker.bootstrap, unique("range")
    create_topic(bootstrap, topic, 1)
    produce(bootstrap, topic, numbered(1, 25_000))
    opts = parse_options({"kafka.bootstrap.servers": bootstrap, "subscribe": topic}, "batch")
    batches = list(read_range(opts, topic, 0, 100, 24_990))
    assert all(b.schema.equals(arrow_schema(False)) for b in batches)
    offsets = [o for b in batches for o in b.column("offset").to_pylist()]
    assert offsets == list(range(100, 24_990))
    assert max(b.num_rows for b in batches) <= 10_000  # Spark's default Arrow batch size

    # Stopped early: closing the generator closes the consumer (its finally block).
    it = read_range(opts, topic, 0, 0, 25_000)
    first = next(it)
    it.close()
    assert first.num_rows > 0
    assert list(read_range(opts, topic, 0, 5, 5)) == []


def test_read_range_hands_out_batches_with_the_garbage_collector_as_it_found_it(
    shared_broker: EmbeddedBroker,
) -> None:
    # read_range pauses the cyclic collector while it builds a batch; the code it yields to
    # (Spark's worker) must always run with the collector as it was, on or off.
    bootstrap, topic = shared_broker.bootstrap, unique("gc")
    create_topic(bootstrap, topic, 1)
    produce(bootstrap, topic, numbered(1, 25_000))
    opts = parse_options({"kafka.bootstrap.servers": bootstrap, "subscribe": topic}, "batch")
    assert gc.isenabled()
    seen = [gc.isenabled() for _ in read_range(opts, topic, 0, 0, 25_000)]
    assert len(seen) >= 3 and all(seen) and gc.isenabled()

    it = read_range(opts, topic, 0, 0, 25_000)
    next(it)
    assert gc.isenabled()
    it.close()  # stopped early
    assert gc.isenabled()

    gc.disable()
    try:
        seen = [gc.isenabled() for _ in read_range(opts, topic, 0, 0, 25_000)]
        assert seen and not any(seen) and not gc.isenabled()  # left off by whoever turned it off
    finally:
        gc.enable()


def test_log_append_time_records_have_timestamp_type_1(shared_broker: EmbeddedBroker) -> None:
    bootstrap, topic = shared_broker.bootstrap, unique("logappend")
    create_topic(bootstrap, topic, 1, {"message.timestamp.type": "LogAppendTime"})
    before = int(time.time() * 1000)
    produce(bootstrap, topic, numbered(1, 30))
    opts = parse_options({"kafka.bootstrap.servers": bootstrap, "subscribe": topic}, "batch")
    table = pa.Table.from_batches(list(read_range(opts, topic, 0, 0, 30)))
    assert table.column("timestampType").to_pylist() == [1] * 30  # Kafka's LogAppendTime
    assert table.column("timestampType").type == pa.int32()
    stamps = [t.timestamp() * 1000 for t in table.column("timestamp").to_pylist()]
    assert all(before - 1000 <= t <= time.time() * 1000 for t in stamps)  # the broker's clock, not BASE_TS


def test_subscribe_pattern_reads_the_matching_topics(
    spark: SparkSession, shared_broker: EmbeddedBroker
) -> None:
    bootstrap, prefix = shared_broker.bootstrap, unique("pat")
    for name, partitions in (
        (f"{prefix}-a", 2),
        (f"{prefix}-b", 1),
        (f"{prefix}-a-dlq", 1),
        (f"x{prefix}-a", 1),
    ):
        create_topic(bootstrap, name, partitions)
        produce(bootstrap, name, numbered(partitions, 3))
    # A Java regex (\Q...\E quoting) that must match whole topic names.
    df = read(spark, bootstrap, subscribePattern=rf"\Q{prefix}-\E[ab]")
    counts = {r.topic: r["count"] for r in df.groupBy("topic").count().collect()}
    assert counts == {f"{prefix}-a": 6, f"{prefix}-b": 3}


# -- bad options -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"subscribe": "t"}, "kafka.bootstrap.servers"),
        ({"kafka.bootstrap.servers": "h:1"}, "subscribePattern"),
        ({"kafka.bootstrap.servers": "h:1", "subscribe": "t", "subscribePattern": "t.*"}, "subscribePattern"),
        ({"kafka.bootstrap.servers": "h:1", "subscribe": "t", "startingOffsets": "{oops"}, "startingOffsets"),
        ({"kafka.bootstrap.servers": "h:1", "subscribe": "t", "failOnDataLoss": "maybe"}, "failOnDataLoss"),
        (
            {"kafka.bootstrap.servers": "h:1", "subscribe": "t", "startingOffset": "earliest"},
            "startingoffset",
        ),
        (
            {"kafka.bootstrap.servers": "h:1", "subscribe": "t", "kafka.auto.offset.reset": "x"},
            "startingOffsets",
        ),
        ({"kafka.bootstrap.servers": "h:1", "subscribePattern": "a(b"}, "subscribePattern"),
    ],
)
def test_bad_options_fail_load_naming_the_option(
    spark: SparkSession, options: dict[str, str], named: str
) -> None:
    with pytest.raises(Exception) as exc:
        spark.read.format("sluiceway").options(**options).load()
    assert named in str(exc.value) and "OptionError" in str(exc.value)


def test_batch_only_and_broker_side_problems_fail_the_read_naming_the_option(
    spark: SparkSession, shared_broker: EmbeddedBroker
) -> None:
    bootstrap = shared_broker.bootstrap
    topic = unique("opts")
    create_topic(bootstrap, topic, 2)
    cases = [
        ({"subscribe": topic, "startingOffsets": "latest"}, "startingOffsets"),
        ({"subscribe": unique("missing")}, "subscribe"),
        ({"subscribe": topic, "kafka.no.such.setting": "1"}, "kafka.no.such.setting"),
        (
            {"subscribe": topic, "startingOffsets": f'{{"{topic}":{{"0":0}}}}'},
            f"Assigned: [{topic}-0, {topic}-1]",
        ),
    ]
    for options, named in cases:
        with pytest.raises(Exception) as exc:
            read(spark, bootstrap, **options).collect()
        assert named in str(exc.value), options


# -- streaming -------------------------------------------------------------------------


def stream(spark: SparkSession, bootstrap: str, **options: str) -> DataFrame:
    reader = spark.readStream.format("sluiceway").option("kafka.bootstrap.servers", bootstrap)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def rows_in(query: StreamingQuery) -> list[int]:
    return [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]


@pytest.fixture
def queries() -> Iterator[list[StreamingQuery]]:
    started: list[StreamingQuery] = []
    yield started
    for q in started:
        if q.isActive:
            q.stop()


def test_stream_grows_stops_and_restarts_without_skipping_or_repeating(
    spark: SparkSession, shared_broker: EmbeddedBroker, tmp_path: Path, queries: list[StreamingQuery]
) -> None:
    bootstrap, topic = shared_broker.bootstrap, unique("grow")
    out, checkpoint = str(tmp_path / "out"), str(tmp_path / "checkpoint")
    create_topic(bootstrap, topic, 2)
    produce(bootstrap, topic, numbered(2, 10, "a"))

    def start(trigger: dict[str, Any]) -> StreamingQuery:
        q = (
            stream(spark, bootstrap, subscribe=topic, startingOffsets="earliest", includeHeaders="true")
            .writeStream.format("parquet")
            .option("path", out)
            .option("checkpointLocation", checkpoint)
            .trigger(**trigger)
            .start()
        )
        queries.append(q)
        return q

    first = start({"processingTime": "200 milliseconds"})
    wait_until(lambda: sum(rows_in(first)) == 20, 60, interval=0.2, message="the first 20 records")
    produce(bootstrap, topic, numbered(2, 10, "b"))  # while it runs
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_partitions([NewPartitions(topic, 3)])[topic].result(10)
    wait_until(lambda: len(admin.list_topics(topic, timeout=10).topics[topic].partitions) == 3, 10)
    # Records in a partition that is new since the last batch are read from its start.
    produce(bootstrap, topic, [Rec(2, b"k", f"c-2-{i}".encode()) for i in range(5)])
    wait_until(lambda: sum(rows_in(first)) == 45, 60, interval=0.2, message="45 records")
    first.stop()

    # More while it is stopped.
    produce(bootstrap, topic, [Rec(i % 3, b"k", f"d-{i % 3}-{i}".encode()) for i in range(12)])
    second = start({"availableNow": True})
    second.awaitTermination(60)
    assert second.exception() is None
    assert sum(rows_in(second)) == 12  # only what came after the first query's last batch

    result = spark.read.parquet(out)
    got = coordinates(result)
    assert got == sorted(set(got))  # nothing twice
    assert got == expect(topic, {0: range(24), 1: range(24), 2: range(9)})  # nothing skipped
    values = sorted(r.value.decode() for r in result.select("value").collect())
    assert values == sorted(
        [f"{tag}-{p}-{i}" for tag in "ab" for p in range(2) for i in range(10)]
        + [f"c-2-{i}" for i in range(5)]
        + [f"d-{i % 3}-{i}" for i in range(12)]
    )


def test_max_offsets_per_trigger_caps_micro_batches(
    spark: SparkSession, shared_broker: EmbeddedBroker, queries: list[StreamingQuery]
) -> None:
    bootstrap, topic = shared_broker.bootstrap, unique("limit")
    create_topic(bootstrap, topic, 3)
    produce(bootstrap, topic, numbered(3, 20))
    q = (
        stream(spark, bootstrap, subscribe=topic, startingOffsets="earliest", maxOffsetsPerTrigger="25")
        .writeStream.format("noop")
        .trigger(availableNow=True)
        .start()
    )
    queries.append(q)
    q.awaitTermination(60)
    sizes = rows_in(q)
    # 25 shared by three equal backlogs: 8 each per batch.
    assert sizes == [24, 24, 12]


def test_stream_starts_at_latest_by_default(
    spark: SparkSession, shared_broker: EmbeddedBroker, tmp_path: Path, queries: list[StreamingQuery]
) -> None:
    bootstrap, topic = shared_broker.bootstrap, unique("latest")
    create_topic(bootstrap, topic, 2)
    produce(bootstrap, topic, numbered(2, 5))

    def run() -> list[int]:
        q = (
            stream(spark, bootstrap, subscribe=topic)
            .writeStream.format("noop")
            .option("checkpointLocation", str(tmp_path / "checkpoint"))
            .trigger(availableNow=True)
            .start()
        )
        queries.append(q)
        q.awaitTermination(60)
        assert q.exception() is None
        return rows_in(q)

    assert run() == []  # what was there before the query started is not read
    produce(bootstrap, topic, numbered(2, 3, "new"))
    assert run() == [6]


def test_stream_only_options_fail_the_query_naming_the_option(
    spark: SparkSession, shared_broker: EmbeddedBroker, queries: list[StreamingQuery]
) -> None:
    q = (
        stream(spark, shared_broker.bootstrap, subscribe="t", endingOffsets="latest")
        .writeStream.format("noop")
        .start()
    )
    queries.append(q)
    with pytest.raises(Exception, match="endingOffsets") as exc:
        q.awaitTermination(60)
    assert "not valid in streaming queries" in str(exc.value)


def test_stream_reader_pickles_without_its_admin_client(shared_broker: EmbeddedBroker) -> None:
    topic = unique("pickle")
    create_topic(shared_broker.bootstrap, topic, 1)
    reader = SluicewayStreamReader(
        parse_options({"kafka.bootstrap.servers": shared_broker.bootstrap, "subscribe": topic}, "stream")
    )
    assert reader.initialOffset() == {topic: {"0": 0}}  # opens an AdminClient
    copy = pickle.loads(pickle.dumps(reader))
    assert copy._kafka is None and copy.opts == reader.opts
    reader.stop()


def test_min_offsets_per_trigger_waits_for_enough_records_or_the_max_delay(
    shared_broker: EmbeddedBroker,
) -> None:
    topic = unique("min")
    create_topic(shared_broker.bootstrap, topic, 2)
    produce(shared_broker.bootstrap, topic, numbered(2, 3))  # 6 new records
    options = {"kafka.bootstrap.servers": shared_broker.bootstrap, "subscribe": topic}
    reader = SluicewayStreamReader(parse_options({**options, "minOffsetsPerTrigger": "10"}, "stream"))
    start = {topic: {"0": 0, "1": 0}}
    limit = reader.getDefaultReadLimit()
    # The first trigger runs (nothing ran for maxTriggerDelay); the next waits for 10 records.
    assert reader.latestOffset(start, limit) == {topic: {"0": 3, "1": 3}}
    assert reader.latestOffset(start, limit) == start
    produce(shared_broker.bootstrap, topic, numbered(2, 2))
    assert reader.latestOffset(start, limit) == {topic: {"0": 5, "1": 5}}
    reader.stop()

    short = SluicewayStreamReader(
        parse_options({**options, "minOffsetsPerTrigger": "100", "maxTriggerDelay": "200ms"}, "stream")
    )
    assert short.latestOffset(start, limit) != start
    assert short.latestOffset(start, limit) == start
    time.sleep(0.25)
    assert short.latestOffset(start, limit) == {topic: {"0": 5, "1": 5}}  # waited long enough
    short.prepareForTriggerAvailableNow()
    assert short.latestOffset(start, limit) == {topic: {"0": 5, "1": 5}}  # AvailableNow never waits
    short.stop()
