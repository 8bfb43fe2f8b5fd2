"""The Spark sink against raw PySpark writing the same records, and the "sluiceway" Spark
source against a raw confluent-kafka consumer loop, on one broker, in one run.

    python benchmarks/spark_sink.py [--records 1000000] [--flush-size 100000]

- sink: ``--records`` schemaless JSON records (id, account, amount, merchant, status,
  created_at ms) wait in a topic. A standalone worker process runs SparkSinkConnector
  (Parquet, local[2]) on them; its SparkSession is warmed first by a small connector,
  so the time is the steady state: from the first commit in the table's log to the last
  flush of ``--flush-size`` records, scaled to every record. The records left at the end
  (fewer than a flush) wait for flush.interval.ms (2 s), which times the timer and not the
  sink, so that last commit is left out, as benchmarks/s3_sink.py leaves out the open
  object. The time from creating the connector to the very last commit is printed too.
  The baseline is what a PySpark user would write: the same values (decoded from the
  same JSON) in ``--flush-size`` chunks, each pyarrow table → ``createDataFrame`` →
  ``write.parquet`` (append), in this process's own SparkSession.
- reader: a streaming query over the same topic (``trigger(availableNow=True)``) against
  a confluent-kafka consume loop, records/s (benchmarks/spark_reader.py).

Target (issue #7): sink >= 0.8x raw PySpark.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
import orjson
import pyarrow as pa
from confluent_kafka import Producer

from benchmarks._common import broker_process
from benchmarks._worker import Worker, create_topic, end_offset, wait_for

MERCHANTS = ["Corner Bakery", "Rent", "Bookshop", "Grocer", "Airline", "Cinema", "Pharmacy"]


def value(i: int) -> bytes:
    return orjson.dumps(
        {
            "id": i,
            "account": i % 97,
            "amount": round((i * 7919) % 100_000 / 100, 2),
            "merchant": MERCHANTS[i % len(MERCHANTS)],
            "status": "settled" if i % 3 else "pending",
            "created_at": 1_790_000_000_000 + i,
        }
    )


def produce(bootstrap: str, topic: str, n: int) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.num.messages": 10000})
    for i in range(n):
        while True:
            try:
                p.produce(topic, value(i))
                break
            except BufferError:
                p.poll(0.05)
    if p.flush(120):
        raise RuntimeError("records were not delivered")


def committed(table: Path) -> int:
    """Records the table's commit log holds: the newest manifest's end + 1, per partition."""
    total = 0
    for tp in (table / "_sluiceway" / "commits").glob("*"):
        newest = sorted(tp.glob("*.json"))
        if newest:
            total += json.loads(newest[-1].read_text())["end"] + 1
    return total


def sink_config(topic: str, table: Path, flush_size: int) -> dict[str, str]:
    return {
        "connector.class": "SparkSinkConnector",
        "topics": topic,
        "table.path": str(table),
        "flush.size": str(flush_size),
        "flush.interval.ms": "2000",
        "spark.master": "local[2]",
        "spark.conf.spark.log.level": "ERROR",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
        "consumer.override.max.poll.records": "10000",
    }


def watch_commits(table: Path, n: int, flush_size: int) -> list[tuple[float, int]]:
    """(time first seen, records committed) for each commit until all ``n`` are."""
    commits: list[tuple[float, int]] = []
    deadline = time.monotonic() + 900
    while not commits or commits[-1][1] < n:
        if time.monotonic() > deadline:
            raise RuntimeError(f"only {commits[-1][1] if commits else 0:,} of {n:,} records were committed")
        count = committed(table)
        if count and (not commits or count > commits[-1][1]):
            commits.append((time.perf_counter(), count))
        time.sleep(0.01)
    if len(commits) < 3:
        raise RuntimeError(f"only {len(commits)} commits: use more records or a smaller --flush-size")
    return commits


def run_sink(work: Path, bootstrap: str, topic: str, n: int, flush_size: int) -> float:
    work.mkdir(parents=True, exist_ok=True)
    worker = Worker(work, bootstrap)
    try:
        # Warm the worker's SparkSession (JVM start, first job) on a small topic first.
        warm_topic, warm_table = topic + "-warmup", work / "warmup"
        create_topic(bootstrap, warm_topic)
        produce(bootstrap, warm_topic, 2000)
        r = httpx.put(
            f"{worker.url}/connectors/warmup/config", json=sink_config(warm_topic, warm_table, 1000)
        )
        r.raise_for_status()
        wait_for(lambda: committed(warm_table) >= 2000, 180)
        table = work / "table"
        created = time.perf_counter()
        r = httpx.put(f"{worker.url}/connectors/lake/config", json=sink_config(topic, table, flush_size))
        r.raise_for_status()
        # Steady state, as in benchmarks/s3_sink.py: from the first commit (the task has
        # started, joined its group and written a flush) to the last flush of flush.size
        # records, counting what was committed in between; the baseline has no start-up to
        # pay either. The records left over at the end (fewer than flush.size) are written
        # when flush.interval.ms has passed, a wait that says nothing about throughput: that
        # last commit is left out, as the S3 benchmark leaves out the open object.
        commits = watch_commits(table, n, flush_size)
        done = commits[-1][0]
        rate = n / (done - created)
        print(f"sink, connector created -> every record committed: {rate:,.0f} records/s (with startup)")
        full = commits[:-1] if commits[-1][1] - commits[-2][1] < flush_size else commits
        if len(full) < 2:
            raise RuntimeError("fewer than two full flushes after the first: use more records")
        (t0, c0), (t1, c1) = full[0], full[-1]
        print(
            f"sink: {len(full) - 1} flushes of {c1 - c0:,} records timed "
            f"(the first commit of {c0:,} records and a last partial one excluded)"
        )
        return (t1 - t0) * n / (c1 - c0)
    finally:
        worker.stop()


def run_raw(spark: Any, bootstrap: str, topic: str, n: int, flush_size: int, out: Path) -> float:
    """The same records as a PySpark user would write them, timed without the reading."""
    values = [orjson.loads(value(i)) for i in range(n)]
    started = time.perf_counter()
    for at in range(0, n, flush_size):
        table = pa.Table.from_pylist(values[at : at + flush_size])
        spark.createDataFrame(table).write.mode("append").parquet(str(out))
    return time.perf_counter() - started


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--records", type=int, default=1_000_000)
    p.add_argument("--flush-size", type=int, default=100_000)
    args = p.parse_args()
    n = args.records
    work = Path(tempfile.mkdtemp(prefix="bench-spark-"))
    try:
        with broker_process(data_dir=str(work / "broker")) as (bootstrap, _):
            topic = "bench-spark"
            create_topic(bootstrap, topic)
            t = time.perf_counter()
            produce(bootstrap, topic, n)
            assert end_offset(bootstrap, topic) == n
            print(f"produced {n:,} records in {time.perf_counter() - t:.1f} s")

            sink_s = run_sink(work / "worker", bootstrap, topic, n, args.flush_size)
            print(f"sink: {n:,} records in {sink_s:.2f} s = {n / sink_s:,.0f} records/s")

            from spark_sink.session import shared_session

            spark = shared_session("local[2]", "bench-raw", {"spark.log.level": "ERROR"})
            spark.sparkContext.setLogLevel("ERROR")
            # Warm this session the same way before timing.
            run_raw(spark, bootstrap, topic, 2000, 1000, work / "raw-warmup")
            raw_s = run_raw(spark, bootstrap, topic, n, args.flush_size, work / "raw")
            print(f"raw PySpark (pyarrow table -> createDataFrame -> write): {n / raw_s:,.0f} records/s")
            print(f"sink / raw = {raw_s / sink_s:.2f}x (target >= 0.8x)")

            from benchmarks.spark_reader import measure

            reader = measure(bootstrap, topic, n, spark)
            print(f"reader: {json.dumps(reader)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
