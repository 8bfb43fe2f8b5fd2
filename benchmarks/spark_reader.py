"""The "sluiceway" Spark source against a raw confluent-kafka consumer loop, same topic, same run.

    python benchmarks/spark_reader.py [--records 1000000] [--size 100] [--partitions 4] [--master local[*]]
                                      [--rounds 3]

What is measured, each round (interleaved, so both sides see the same machine):

- raw: one confluent-kafka consumer assigned every partition from the beginning,
  ``consume()`` until it has seen every record (and touched each value).
- spark: one streaming query, ``readStream.format("sluiceway")`` from earliest with
  ``trigger(availableNow=True)`` into the ``noop`` sink. Two rates come from it:
  - **running query** (the headline ratio): records / the query's micro-batch time, the sum
    of ``durationMs.triggerExecution`` over its micro-batches in ``recentProgress``. This is
    the rate Spark itself reports as ``processedRowsPerSecond``, and what a running query
    sustains: each micro-batch's offset lookups, planning, reading, write-ahead log and
    commit are in it.
  - **end to end**: from ``start()`` until the query terminates. It adds the query's one-off
    start and stop (Spark starts a Python process to plan the stream and sets the query up
    before the first micro-batch: about 1-2 s here, whatever the number of records), which a
    streaming query pays once in its life, not per record. Printed with its own ratio.
- read_range alone: the reader's Kafka side (``spark_sink.reader.kafka.read_range``, the
  Arrow batches Spark's Python workers hand over) over every partition, one after the other,
  in this process with no Spark: what the reader itself costs, wall and CPU time.

Why a running query's rate is the headline: a streaming reader's throughput is what a
query sustains once it runs; the start-up is a fixed cost that would dominate any topic
small enough to benchmark here (1,000,000 records take the raw loop about a second).

``measure()`` is the piece benchmarks/spark_sink.py calls with its own broker and session.
Run standalone, this starts a broker subprocess, produces ``--records`` records of
``--size`` bytes and prints the rates and ratios (medians of ``--rounds``, and every
round). Each measurement first reads the topic once untimed (a batch read into noop),
because the first read of a Spark session starts Python workers and leaves the JVM's code
cold. Nothing is tuned: the source's and Spark's default settings.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# The raw loop's consumer: the settings of benchmarks/_common.py's consume_timed.
RAW_CONSUMER = {
    "enable.auto.commit": False,
    "enable.auto.offset.store": False,
    "fetch.max.bytes": 52_428_800,
    "max.partition.fetch.bytes": 10_485_760,
    "queued.max.messages.kbytes": 1_048_576,
    "queued.min.messages": 1_000_000,
    "fetch.queue.backoff.ms": 10,
}


def spark_stream(bootstrap: str, topic: str, records: int, spark: SparkSession) -> dict[str, float]:
    """Seconds for an availableNow streaming query to read the topic into the noop sink."""
    from spark_sink.session import register_data_source

    register_data_source(spark)
    with tempfile.TemporaryDirectory(prefix="sluiceway-reader-bench-") as checkpoint:
        started = time.perf_counter()
        query = (
            spark.readStream.format("sluiceway")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
            .load()
            .writeStream.format("noop")
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        elapsed = time.perf_counter() - started
        if query.exception() is not None:
            raise RuntimeError(f"the streaming query failed: {query.exception()}")
        progress = query.recentProgress
    rows = sum(p["numInputRows"] for p in progress)
    if rows != records:
        raise RuntimeError(f"the streaming query read {rows} records, expected {records}")
    batches = [p for p in progress if p["numInputRows"]]
    in_batches = sum(p["durationMs"]["triggerExecution"] for p in batches) / 1000
    return {"seconds": elapsed, "batch_seconds": in_batches, "batches": len(batches)}


def raw_consumer(bootstrap: str, topic: str, records: int) -> float:
    """Seconds for one confluent-kafka consumer to read ``records`` records of the topic."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-raw-{time.time_ns()}", **RAW_CONSUMER})
    try:
        partitions = c.list_topics(topic, timeout=30).topics[topic].partitions
        c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        seen = 0
        started = time.perf_counter()
        deadline = started + 600
        while seen < records:
            if time.perf_counter() > deadline:
                raise RuntimeError(f"the raw consumer saw only {seen} of {records} records")
            for m in c.consume(10_000, 1.0):
                if m.error() is not None:
                    raise RuntimeError(f"consume error: {m.error()}")
                m.value()
                seen += 1
        return time.perf_counter() - started
    finally:
        c.close()


def read_range_alone(bootstrap: str, topic: str, records: int) -> dict[str, float]:
    """Wall and CPU seconds (every thread of this process) for ``read_range`` over every
    partition of ``topic``, one after the other, with no Spark."""
    from confluent_kafka import Consumer as _Consumer

    from spark_sink.reader.kafka import read_range
    from spark_sink.reader.options import parse_options

    opts = parse_options({"kafka.bootstrap.servers": bootstrap, "subscribe": topic}, "batch")
    c = _Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-ranges-{time.time_ns()}"})
    try:
        ends = {}
        for p in c.list_topics(topic, timeout=30).topics[topic].partitions:
            ends[p] = c.get_watermark_offsets(TopicPartition(topic, p), timeout=30)
    finally:
        c.close()
    seen = 0
    started, cpu = time.perf_counter(), time.process_time()
    for p, (low, high) in sorted(ends.items()):
        for batch in read_range(opts, topic, p, low, high):
            seen += batch.num_rows
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    if seen != records:
        raise RuntimeError(f"read_range read {seen} records, expected {records}")
    return {"seconds": wall, "cpu_seconds": cpu}


def measure(bootstrap: str, topic: str, records: int, spark: SparkSession) -> dict[str, Any]:
    """Records/s of the sluiceway streaming source (a running query's, and end to end) and of
    a raw consumer loop over ``topic`` (which holds exactly ``records`` records), and their
    ratios (spark / raw); see the module's docstring."""
    from spark_sink.session import register_data_source

    register_data_source(spark)
    # Warm up first (untimed): Spark's Python workers start and the JVM compiles its Arrow
    # and row code on the first read, which takes several times longer than the next ones.
    (
        spark.read.format("sluiceway")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .load()
        .write.format("noop")
        .mode("overwrite")
        .save()
    )
    raw_s = raw_consumer(bootstrap, topic, records)
    stream = spark_stream(bootstrap, topic, records, spark)
    alone = read_range_alone(bootstrap, topic, records)
    raw_rps = records / raw_s
    running_rps = records / stream["batch_seconds"]
    end_to_end_rps = records / stream["seconds"]
    return {
        "records": records,
        "raw_seconds": raw_s,
        "raw_records_per_s": raw_rps,
        "spark_batch_seconds": stream["batch_seconds"],
        "spark_batch_records_per_s": running_rps,
        "spark_micro_batches": stream["batches"],
        "spark_seconds": stream["seconds"],
        "spark_records_per_s": end_to_end_rps,
        "read_range_seconds": alone["seconds"],
        "read_range_cpu_seconds": alone["cpu_seconds"],
        "ratio": running_rps / raw_rps,
        "end_to_end_ratio": end_to_end_rps / raw_rps,
    }


def produce(bootstrap: str, topic: str, n: int, size: int, partitions: int) -> None:
    p = Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 5,
            "batch.size": 1_000_000,
            "queue.buffering.max.messages": 2_000_000,
            "queue.buffering.max.kbytes": 2_000_000,
        }
    )
    payload = b"x" * size
    for i in range(n):
        key = b"%d" % (i % 10_000)
        try:
            p.produce(topic, payload, key=key, partition=i % partitions)
        except BufferError:
            p.poll(0.01)
            p.produce(topic, payload, key=key, partition=i % partitions)
    if p.flush(300):
        raise RuntimeError("records left unsent")


def main() -> int:
    from benchmarks._common import broker_process, fmt_rate
    from spark_sink.session import shared_session

    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--master", default="local[*]")
    ap.add_argument("--rounds", type=int, default=3, help="measurements; medians are printed (default 3)")
    args = ap.parse_args()
    n, nbytes = args.records, args.records * args.size
    spark = shared_session(args.master, "sluiceway-reader-bench")
    spark.sparkContext.setLogLevel("ERROR")
    with broker_process() as (bootstrap, _proc):
        topic = "spark-reader-bench"
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic(topic, args.partitions, 1)])[topic].result(30)
        produce(bootstrap, topic, n, args.size, args.partitions)
        # On a small machine single runs swing a lot: medians of several.
        runs = [measure(bootstrap, topic, n, spark) for _ in range(args.rounds)]
    result = {key: statistics.median(r[key] for r in runs) for key in runs[0]}

    def rounds(key: str, fmt: str = "{:.2f}") -> str:
        return ", ".join(fmt.format(r[key]) for r in runs)

    print(
        f"records: {n:,} x {args.size} bytes in {args.partitions} partitions; Spark master {args.master} "
        f"({spark.sparkContext.defaultParallelism} cores); medians of {args.rounds} rounds"
    )
    print(f"raw confluent-kafka consumer loop:           {fmt_rate(n, nbytes, result['raw_seconds'])}")
    print(
        f"sluiceway stream, running query (in {result['spark_micro_batches']:.0f} micro-batch(es)): "
        f"{fmt_rate(n, nbytes, result['spark_batch_seconds'])}"
    )
    print(f"sluiceway stream, end to end (availableNow): {fmt_rate(n, nbytes, result['spark_seconds'])}")
    print(
        f"read_range alone, no Spark:                  {fmt_rate(n, nbytes, result['read_range_seconds'])}"
        f" CPU {result['read_range_cpu_seconds']:.2f} s"
    )
    print(f"ratio running query / raw loop: {result['ratio']:.2f}x  (rounds: {rounds('ratio')})")
    e2e = result["end_to_end_ratio"]
    print(f"ratio end to end / raw loop:    {e2e:.2f}x  (rounds: {rounds('end_to_end_ratio')})")
    print(
        "rounds, records/s: raw "
        + rounds("raw_records_per_s", "{:,.0f}")
        + "; running query "
        + rounds("spark_batch_records_per_s", "{:,.0f}")
        + "; end to end "
        + rounds("spark_records_per_s", "{:,.0f}")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
