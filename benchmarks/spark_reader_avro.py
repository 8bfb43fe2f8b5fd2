"""The "sluiceway" Spark source decoding Schema Registry-framed Avro, against the same data as JSON.

    python benchmarks/spark_reader_avro.py [--records 300000] [--partitions 2] [--master local[2]]
                                           [--rounds 3]

The same records (a payment of eight fields: a long, a string, a decimal, a date, a
timestamp, a double, a nested record, an array of strings) go to two topics: as
Confluent-framed Avro written by confluent-kafka's ``AvroSerializer``, and as JSON. Each
round times a batch read of each topic into the ``noop`` sink:

- avro: ``format("sluiceway")`` with ``value.format=avro`` (typed columns, decoded in the
  source's Python workers);
- json: ``format("sluiceway")`` then Spark's own ``from_json`` on the value into the same
  Spark types (decoded in the JVM), the way Spark users read JSON topics.

Printed: both rates, and the ratio avro / json (medians of ``--rounds``, after one untimed
read of each that starts Spark's Python workers and warms the JVM). Also the source's
decoding alone, in this process (``read_range`` + ``RecordDecoder``), to tell where time goes.
"""

from __future__ import annotations

import argparse
import datetime as dt
import decimal
import json
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

SCHEMA = {
    "type": "record",
    "name": "Payment",
    "namespace": "bench",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "account", "type": "string"},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "score", "type": "double"},
        {
            "name": "address",
            "type": {
                "type": "record",
                "name": "Address",
                "fields": [{"name": "city", "type": "string"}, {"name": "zip", "type": "string"}],
            },
        },
        {"name": "tags", "type": {"type": "array", "items": "string"}},
    ],
}
JSON_DDL = (
    "id BIGINT, account STRING, amount DECIMAL(12,2), day DATE, at TIMESTAMP, score DOUBLE, "
    "address STRUCT<city: STRING, zip: STRING>, tags ARRAY<STRING>"
)
AT = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def payment(i: int) -> dict[str, Any]:
    return {
        "id": i,
        "account": f"FR76-{i % 50_000:08d}",
        "amount": decimal.Decimal(i % 1_000_000) / 100,
        "day": dt.date(2026, 1, 1) + dt.timedelta(days=i % 365),
        "at": AT + dt.timedelta(milliseconds=i),
        "score": i / 7,
        "address": {"city": f"city-{i % 100}", "zip": f"{i % 99999:05d}"},
        "tags": ["card", "eu"] if i % 2 else ["transfer"],
    }


def as_json(p: dict[str, Any]) -> bytes:
    return json.dumps(
        {**p, "amount": str(p["amount"]), "day": p["day"].isoformat(), "at": p["at"].isoformat()}
    ).encode()


def produce(bootstrap: str, url: str, avro_topic: str, json_topic: str, n: int, partitions: int) -> None:
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    serialize = AvroSerializer(SchemaRegistryClient({"url": url}), json.dumps(SCHEMA))
    ctx = SerializationContext(avro_topic, MessageField.VALUE)
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "queue.buffering.max.messages": 1_000_000})
    for i in range(n):
        rec = payment(i)
        for topic, value in ((avro_topic, serialize(rec, ctx)), (json_topic, as_json(rec))):
            while True:
                try:
                    p.produce(topic, value, partition=i % partitions)
                    break
                except BufferError:
                    p.poll(0.05)
    if p.flush(300):
        raise RuntimeError("records left unsent")


def avro_frame(spark: SparkSession, bootstrap: str, url: str, topic: str) -> DataFrame:
    return (
        spark.read.format("sluiceway")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("value.format", "avro")
        .option("schema.registry.url", url)
        .load()
    )


def json_frame(spark: SparkSession, bootstrap: str, topic: str) -> DataFrame:
    from pyspark.sql.functions import col, from_json

    raw = (
        spark.read.format("sluiceway").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
    )
    return raw.load().select(from_json(col("value").cast("string"), JSON_DDL).alias("v")).select("v.*")


def timed_noop(df: DataFrame) -> float:
    started = time.perf_counter()
    df.write.format("noop").mode("overwrite").save()
    return time.perf_counter() - started


def decode_in_process(bootstrap: str, url: str, topic: str, partitions: int, n: int) -> float:
    # n: the topic's records, whichever partition they are in
    """Seconds to read and decode the Avro topic here, without Spark."""
    from spark_sink.reader.kafka import read_range
    from spark_sink.reader.options import parse_options
    from spark_sink.reader.registry_plan import plan_decoding
    from spark_sink.reader.registry_values import RecordDecoder

    opts = parse_options(
        {
            "kafka.bootstrap.servers": bootstrap,
            "subscribe": topic,
            "value.format": "avro",
            "schema.registry.url": url,
        },
        "batch",
    )
    plan = plan_decoding(opts)
    assert plan is not None
    decoder = RecordDecoder(plan)
    rows = 0
    started = time.perf_counter()
    for part in range(partitions):
        for batch in read_range(opts, topic, part, 0, len(range(part, n, partitions))):
            rows += decoder.decode(batch).num_rows
    elapsed = time.perf_counter() - started
    if rows != n:
        raise RuntimeError(f"decoded {rows} records, expected {n}")
    return elapsed


def _rate(records: int, seconds: float) -> str:
    return f"{records / seconds:>10,.0f} records/s ({seconds:.2f} s)"


def main() -> int:
    from benchmarks._common import broker_process
    from schema_registry.server import RegistryConfig, RegistryServer
    from spark_sink.session import register_data_source, shared_session
    from tests.support import free_port

    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=300_000)
    ap.add_argument("--partitions", type=int, default=2)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--rounds", type=int, default=3, help="measurements; medians are printed (default 3)")
    args = ap.parse_args()
    n = args.records
    spark = shared_session(args.master, "sluiceway-reader-avro-bench")
    spark.sparkContext.setLogLevel("ERROR")
    register_data_source(spark)
    with broker_process() as (bootstrap, _proc):
        registry = RegistryServer(
            RegistryConfig.parse(
                {
                    "listeners": f"http://127.0.0.1:{free_port()}",
                    "kafkastore.bootstrap.servers": bootstrap,
                    "kafkastore.topic": "_schemas",
                }
            )
        ).start()
        try:
            avro_topic, json_topic = "payments-avro", "payments-json"
            admin = AdminClient({"bootstrap.servers": bootstrap})
            for topic in (avro_topic, json_topic):
                admin.create_topics([NewTopic(topic, args.partitions, 1)])[topic].result(30)
            produce(bootstrap, registry.url, avro_topic, json_topic, n, args.partitions)
            local_s = decode_in_process(bootstrap, registry.url, avro_topic, args.partitions, n)
            avro_df = avro_frame(spark, bootstrap, registry.url, avro_topic)
            json_df = json_frame(spark, bootstrap, json_topic)
            if avro_df.count() != n or json_df.count() != n:
                raise RuntimeError("a topic did not read back whole")
            rounds = []
            for _ in range(args.rounds):
                avro_s, json_s = timed_noop(avro_df), timed_noop(json_df)
                rounds.append((avro_s, json_s, json_s / avro_s))
        finally:
            registry.stop()
    avro_s = statistics.median(r[0] for r in rounds)
    json_s = statistics.median(r[1] for r in rounds)
    print(f"records: {n:,} payments in {args.partitions} partitions; Spark master {args.master}")
    print(f"avro decoded by the source (value.format=avro):  {_rate(n, avro_s)}")
    print(f"json decoded by Spark (from_json):                {_rate(n, json_s)}")
    print(f"  the source's read + decode alone, one process: {_rate(n, local_s)}")
    print(
        f"ratio avro / json: {json_s / avro_s:.2f}x  (median of {args.rounds}; rounds: "
        + ", ".join(f"{r[2]:.2f}" for r in rounds)
        + ")"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
