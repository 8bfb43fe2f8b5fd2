"""The "sluiceway" Spark source against a raw confluent-kafka consumer loop, same topic, same run.

    python benchmarks/spark_reader.py [--records 1000000] [--size 100] [--partitions 4] [--master local[*]]
                                      [--rounds 3]

- spark: a streaming query, ``readStream.format("sluiceway")`` from earliest with
  ``trigger(availableNow=True)`` into the ``noop`` sink, timed from ``start()`` until it
  terminates (query start-up and planning included; the time inside micro-batches
  alone is printed too).
- raw: one confluent-kafka consumer assigned every partition from the beginning,
  ``consume()`` until it has seen every record (and touched each value).

``measure()`` is the piece benchmarks/spark_sink.py calls with its own broker and session.
Run standalone, this starts a broker subprocess, produces ``--records`` records of
``--size`` bytes and prints both rates and their ratio (medians of ``--rounds``). Each
measurement first reads the topic once untimed (a batch read into noop), because the
first read of a Spark session starts Python workers and leaves the JVM's code cold.
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


def measure(bootstrap: str, topic: str, records: int, spark: SparkSession) -> dict[str, Any]:
    """Records/s of the sluiceway streaming source and of a raw consumer loop over ``topic``
    (which holds exactly ``records`` records), and their ratio (spark / raw)."""
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
    stream = spark_stream(bootstrap, topic, records, spark)
    raw_s = raw_consumer(bootstrap, topic, records)
    spark_rps = records / stream["seconds"]
    raw_rps = records / raw_s
    return {
        "records": records,
        "spark_seconds": stream["seconds"],
        "spark_records_per_s": spark_rps,
        "spark_batch_seconds": stream["batch_seconds"],
        "spark_batch_records_per_s": records / stream["batch_seconds"] if stream["batch_seconds"] else 0.0,
        "spark_micro_batches": stream["batches"],
        "raw_seconds": raw_s,
        "raw_records_per_s": raw_rps,
        "ratio": spark_rps / raw_rps,
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
    print(
        f"records: {n:,} x {args.size} bytes in {args.partitions} partitions; Spark master {args.master} "
        f"({spark.sparkContext.defaultParallelism} cores)"
    )
    print(f"raw confluent-kafka consumer loop:          {fmt_rate(n, nbytes, result['raw_seconds'])}")
    print(f"sluiceway stream (availableNow, noop sink): {fmt_rate(n, nbytes, result['spark_seconds'])}")
    print(
        f"  of which inside {result['spark_micro_batches']} micro-batch(es):    "
        f"{fmt_rate(n, nbytes, result['spark_batch_seconds'])}"
    )
    print(
        f"ratio sluiceway stream / raw loop: {result['ratio']:.2f}x  (median of {args.rounds}; rounds: "
        + ", ".join(f"{r['ratio']:.2f}" for r in runs)
        + ")"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
