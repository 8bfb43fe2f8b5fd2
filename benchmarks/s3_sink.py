"""The S3 sink against raw boto3 ``put_object`` uploads of the same objects to the same server,
in one run.

    python benchmarks/s3_sink.py [--records 2000000] [--flush-size 50000] [--partitions 1]

``--records`` payment-like schemaless JSON records (~150 bytes: id, account, amount,
merchant, status, created_at) wait in a topic, spread over ``--partitions`` partitions
(record i in partition i % partitions). The server is moto's S3 (tests/contract_servers)
in its own process, so it does not share a GIL with either side, with its default settings
(it keeps an object over 5 MB in a temporary file).

The sink runs in a standalone worker process: JsonFormat, ``flush.size`` records per
object, JsonConverter without schemas, 10000 records a poll and 16 MiB fetched per
partition (``consumer.override.max.partition.fetch.bytes``; Kafka's 1 MiB costs the
consumer ~7% here), defaults otherwise. It copies each value's JSON text into its object
(``SinkRecordBatch.value_runs("json")``). The worker is warmed first on a small topic. Its time is
steady state: from the first rotation in the bucket to the last (what was committed in
between, scaled to all records), so the task's start and group join are left out; the
time from creating the connector is printed too. A rotation counts when its object is in
the bucket: with DefaultPartitioner a rotation is one object, a partition's rotations land
in offset order but for the two it uploads at once, and the sink moves its position only
once an object is in S3; a HEAD of the next awaited key every 10-50 ms tells, and a
listing at the end finds any key still to come. (The consumer offsets, which follow every
offset.flush.interval.ms, 10 s here, would time the commit interval instead; they are
checked at the end.) Only full rotations are counted: the records % flush.size left over
per partition stay in the open object.

The baseline is what a boto3 user would write: the same values (decoded from the same JSON
beforehand) serialised with ``orjson.dumps`` into JSON lines, ``flush.size`` records per
object, each ``put_object`` sequentially under the sink's key into another bucket of the
same server, with a client configured like the sink's (path-style, one attempt, checksums
only when required). Objects above 25 MiB (the sink's s3.part.size) would go as multipart
uploads in 25 MiB parts, as the sink sends them; at the default flush.size (50000 records,
~7.5 MB) every object is a single put_object on both sides. Only serialisation and uploads
are timed. It runs before and after the sink, each time into a new bucket (new keys, as
the sink's), and the ratio is against the mean; the time in put_object alone is printed as
well, the ceiling of any sink on this server.

At the end the sink's bucket must hold exactly the expected keys, byte-identical to the
baseline's objects, with as many lines as the connector's committed offsets say.

Target: sink >= 0.8x raw boto3.
"""

from __future__ import annotations

import argparse
import io
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import boto3
import httpx
import orjson
from botocore.config import Config
from botocore.exceptions import ClientError
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from benchmarks._common import broker_process
from benchmarks._worker import Worker, create_topic, wait_for
from tests.contract_servers.s3 import DEFAULT_CREDENTIALS, REGION, MotoS3Server

SINK_BUCKET = "bench-sink"
# The baseline writes into a bucket of its own each time so that, like the sink, it stores
# new keys: moto replaces a key faster than it stores a new one (a second pass of the
# baseline over the same keys ran about 1.4 times as fast as the first).
RAW_BUCKETS = ("bench-raw-before", "bench-raw-after")
PART_SIZE = 25 * 1024 * 1024  # the sink's default s3.part.size
MERCHANTS = [
    "Blue Bottle Coffee",
    "Whole Foods Market",
    "Shell Station 4412",
    "Amazon Marketplace",
    "Uber Trip",
    "Corner Bakery Cafe",
]
STATUSES = ["authorized", "captured", "settled", "refunded"]


def payment(i: int) -> dict[str, Any]:
    return {
        "id": 1_000_000_000 + i,
        "account": f"ACC-{i * 7919 % 1_000_000:06d}",
        "amount": round((i * 37) % 100_000 / 100 + 0.01, 2),
        "merchant": MERCHANTS[i % len(MERCHANTS)],
        "status": STATUSES[i % len(STATUSES)],
        "created_at": f"2026-11-21T10:{i // 60_000 % 60:02d}:{i // 1000 % 60:02d}.{i % 1000:03d}Z",
    }


def produce(bootstrap: str, topic: str, n: int, partitions: int = 1) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.num.messages": 10000})
    for i in range(n):
        while True:
            try:
                p.produce(topic, orjson.dumps(payment(i)), partition=i % partitions)
                break
            except BufferError:
                p.poll(0.05)
    if p.flush(120):
        raise RuntimeError("records were not delivered")


def create_partitioned_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, partitions, 1)]).values():
        f.result(30)


def topic_size(bootstrap: str, topic: str, partitions: int) -> int:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-watermarks"})
    try:
        return sum(
            c.get_watermark_offsets(TopicPartition(topic, p), timeout=10, cached=False)[1]
            for p in range(partitions)
        )
    finally:
        c.close()


def s3_client(url: str) -> Any:
    """A client configured like the sink's (connectors/s3/store.py)."""
    session = boto3.session.Session(
        aws_access_key_id=DEFAULT_CREDENTIALS[0],
        aws_secret_access_key=DEFAULT_CREDENTIALS[1],
        region_name=REGION,
    )
    return session.client(
        "s3",
        endpoint_url=url,
        config=Config(
            retries={"total_max_attempts": 1, "mode": "standard"},
            connect_timeout=10,
            read_timeout=60,
            s3={"addressing_style": "path"},
            request_checksum_calculation="when_required",
            response_checksum_validation="when_required",
        ),
    )


def list_keys(s3: Any, bucket: str, prefix: str) -> list[str]:
    keys: list[str] = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        keys.extend(str(item["Key"]) for item in page.get("Contents") or ())
    return keys


def layout(topic: str, n: int, partitions: int, flush: int) -> dict[str, list[int]]:
    """The sink's key → the record numbers in it, for every full rotation (DefaultPartitioner)."""
    objects = {}
    for p in range(partitions):
        ids = list(range(p, n, partitions))  # offset o of partition p holds record ids[o]
        for start in range(0, len(ids) - len(ids) % flush, flush):
            key = f"topics/{topic}/partition={p}/{topic}+{p}+{start:010d}.json"
            objects[key] = ids[start : start + flush]
    return objects


def committed(worker: Worker, name: str, topic: str) -> int:
    r = httpx.get(f"{worker.url}/connectors/{name}/offsets", timeout=60)
    r.raise_for_status()
    return sum(
        int(o["offset"]["kafka_offset"])
        for o in r.json()["offsets"]
        if o["partition"]["kafka_topic"] == topic
    )


def run_sink(
    work: Path,
    bootstrap: str,
    url: str,
    topic: str,
    expected: dict[str, list[int]],
    flush: int,
    partitions: int,
) -> float:
    work.mkdir(parents=True, exist_ok=True)
    worker = Worker(work, bootstrap)
    s3 = s3_client(url)
    total = sum(len(ids) for ids in expected.values())
    prefix = f"topics/{topic}/"
    config = {
        "connector.class": "io.confluent.connect.s3.S3SinkConnector",
        "store.url": url,
        "s3.region": REGION,
        "s3.bucket.name": SINK_BUCKET,
        "aws.access.key.id": DEFAULT_CREDENTIALS[0],
        "aws.secret.access.key": DEFAULT_CREDENTIALS[1],
        "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
        "flush.size": str(flush),
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
        "consumer.override.max.poll.records": "10000",
        "consumer.override.max.partition.fetch.bytes": str(16 * 1024 * 1024),
    }

    def in_bucket() -> int:
        return len(list_keys(s3, SINK_BUCKET, prefix))

    def landed(key: str) -> bool:
        try:
            s3.head_object(Bucket=SINK_BUCKET, Key=key)
        except ClientError:
            return False
        return True

    # A partition's rotations land in offset order but for the two uploading at once, so
    # once its last key is in the bucket at most the one before it is still to come. A HEAD
    # of one key costs the server next to nothing; listing the growing bucket 50 times a
    # second, as this did before, had it list up to hundreds of keys beside the sink's
    # uploads (the baseline is not watched).
    keys = sorted(expected)
    first_key = keys[0]
    last_keys = [max(k for k in keys if f"/partition={p}/" in k) for p in range(partitions)]

    try:
        # Warm the worker (imports, the boto3 client and its connections) on a small topic first.
        warm = topic + "-warmup"
        create_topic(bootstrap, warm)
        produce(bootstrap, warm, 2000)
        worker.create("warmup", {**config, "topics": warm, "flush.size": "1000"})
        wait_for(lambda: len(list_keys(s3, SINK_BUCKET, f"topics/{warm}/")) >= 2, 120)
        created = time.perf_counter()
        worker.create("payments", {**config, "topics": topic})
        # Steady state: from the first rotation in the bucket (the task has started and joined
        # its group) to the last, counting only what was committed in between.
        wait_for(lambda: landed(first_key), 120, interval=0.01)
        first_seen, already = time.perf_counter(), in_bucket() * flush
        if already >= total:
            raise RuntimeError("every rotation landed at once: use more records or a smaller --flush-size")
        for key in last_keys:
            wait_for(lambda key=key: landed(key), 900, interval=0.05)
        listed = set(list_keys(s3, SINK_BUCKET, prefix))
        for key in [k for k in keys if k not in listed]:
            wait_for(lambda key=key: landed(key), 60, interval=0.01)
        done = time.perf_counter()
        print(
            f"sink, connector created -> all rotations in S3: {total / (done - created):,.0f} records/s "
            "(with startup)"
        )
        # The consumer group's offsets follow within offset.flush.interval.ms (10 s).
        wait_for(lambda: committed(worker, "payments", topic) >= total, 60, interval=1)
        offsets = committed(worker, "payments", topic)
        assert offsets == total, f"committed offsets sum to {offsets:,}, expected {total:,}"
        return (done - first_seen) * total / (total - already)
    finally:
        worker.stop()
        s3.close()


def run_raw(url: str, bucket: str, expected: dict[str, list[int]]) -> tuple[float, float]:
    """Seconds for the baseline, and of them the seconds in put_object alone."""
    # The values as a consumer would have them: decoded from the same JSON, beforehand.
    values = {key: [orjson.loads(orjson.dumps(payment(i))) for i in ids] for key, ids in expected.items()}
    s3 = s3_client(url)
    try:
        first = next(iter(values.values()))[:1000]
        s3.put_object(Bucket=bucket, Key="warmup.json", Body=json_lines(first))
        uploading = 0.0
        started = time.perf_counter()
        for key, docs in values.items():
            body = json_lines(docs)
            t = time.perf_counter()
            upload(s3, bucket, key, body)
            uploading += time.perf_counter() - t
        return time.perf_counter() - started, uploading
    finally:
        s3.close()


def json_lines(docs: list[Any]) -> bytes:
    """The fastest way we know to make JSON lines with orjson, and the sink's: each line
    streamed into a buffer. ``b"\\n".join(map(orjson.dumps, docs))`` is about five times
    slower (a hundred thousand results alive at once), and the baseline must not be the
    slower of the two at the part both do."""
    buf = io.BytesIO()
    write = buf.write
    for doc in docs:
        write(orjson.dumps(doc))
        write(b"\n")
    return buf.getvalue()


def upload(s3: Any, bucket: str, key: str, body: bytes) -> None:
    """put_object, or a multipart upload in the sink's part size above it (as the sink does)."""
    if len(body) <= PART_SIZE:
        s3.put_object(Bucket=bucket, Key=key, Body=body, ContentType="application/json")
        return
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key=key, ContentType="application/json")["UploadId"]
    parts = []
    for number, at in enumerate(range(0, len(body), PART_SIZE), start=1):
        etag = s3.upload_part(
            Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=number, Body=body[at : at + PART_SIZE]
        )["ETag"]
        parts.append({"ETag": etag, "PartNumber": number})
    s3.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": parts})


def verify(url: str, topic: str, expected: dict[str, list[int]]) -> None:
    """The sink's bucket holds exactly the expected keys, each the same bytes as the baseline's
    object, with one line per record."""
    s3 = s3_client(url)
    try:
        keys = sorted(list_keys(s3, SINK_BUCKET, f"topics/{topic}/"))
        assert keys == sorted(expected), f"the sink's keys differ: {keys[:3]}... vs {sorted(expected)[:3]}..."
        lines = 0
        for key, ids in expected.items():
            sink = s3.get_object(Bucket=SINK_BUCKET, Key=key)["Body"].read()
            raw = s3.get_object(Bucket=RAW_BUCKETS[-1], Key=key)["Body"].read()
            assert sink == raw, f"{key}: the sink's object differs from the baseline's"
            count = sink.count(b"\n")
            assert count == len(ids), f"{key}: {count} lines, expected {len(ids)}"
            lines += len(ids)
        print(f"verified: {len(keys)} objects, {lines:,} lines, identical to the baseline's")
    finally:
        s3.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--records", type=int, default=2_000_000)
    p.add_argument("--flush-size", type=int, default=50_000)
    p.add_argument("--partitions", type=int, default=1)
    args = p.parse_args()
    n, flush, partitions = args.records, args.flush_size, args.partitions
    topic = "bench-payments"
    expected = layout(topic, n, partitions, flush)
    if not expected:
        raise SystemExit("no partition gets a full rotation: use more records or a smaller --flush-size")
    total = sum(len(ids) for ids in expected.values())
    work = Path(tempfile.mkdtemp(prefix="bench-s3-"))
    try:
        with (
            broker_process(data_dir=str(work / "broker")) as (bootstrap, _),
            MotoS3Server(process=True) as server,
        ):
            admin = server.client()
            admin.create_bucket(Bucket=SINK_BUCKET)
            for bucket in RAW_BUCKETS:
                admin.create_bucket(Bucket=bucket)
            admin.close()
            create_partitioned_topic(bootstrap, topic, partitions)
            t = time.perf_counter()
            produce(bootstrap, topic, n, partitions)
            assert topic_size(bootstrap, topic, partitions) == n
            print(
                f"produced {n:,} records in {time.perf_counter() - t:.1f} s "
                f"({partitions} partition(s); {len(expected)} objects of {flush:,} records to write)"
            )

            # The baseline runs before and after the sink (the server then holds the sink's
            # objects too); the ratio is against the mean of the two.
            raws = [run_raw(server.url, RAW_BUCKETS[0], expected)]
            sink_s = run_sink(work / "worker", bootstrap, server.url, topic, expected, flush, partitions)
            print(f"sink: {total:,} records in {sink_s:.2f} s = {total / sink_s:,.0f} records/s")
            raws.append(run_raw(server.url, RAW_BUCKETS[1], expected))
            for when, (raw_s, put_s) in zip(("before", "after"), raws, strict=True):
                print(
                    f"raw boto3 put_object {when} the sink (orjson lines, {flush:,} records an object, "
                    f"sequential): {total / raw_s:,.0f} records/s; put_object alone {total / put_s:,.0f}"
                )
            raw_s = sum(r for r, _ in raws) / 2
            put_s = sum(u for _, u in raws) / 2
            print(f"sink / raw = {raw_s / sink_s:.2f}x (target >= 0.8x)")
            print(f"sink / put_object alone = {put_s / sink_s:.2f}x (the uploads' own ceiling)")
            verify(server.url, topic, expected)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
