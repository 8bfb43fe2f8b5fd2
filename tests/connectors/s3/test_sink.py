"""The S3 sink in a real worker, fed through the real broker, writing with boto3 to moto's
S3 server (through a fault proxy where faults are wanted): every partitioner and format,
rotation by size, record time and wall clock, multipart uploads, recovery of the position
from the bucket, throttling and outages, a missing bucket, and records a format refuses."""

from __future__ import annotations

import datetime as dt
import gzip
import io
import time
import zoneinfo
from collections import defaultdict
from typing import Any

import orjson
import pyarrow.parquet as pq
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from sluiceway.embedded import EmbeddedConnect
from tests.contract_servers.s3 import MotoS3Server, S3FaultProxy
from tests.support import unique

JSON = "io.confluent.connect.s3.format.json.JsonFormat"
PARQUET = "io.confluent.connect.s3.format.parquet.ParquetFormat"
BYTES = "io.confluent.connect.s3.format.bytearray.ByteArrayFormat"
P = "io.confluent.connect.storage.partitioner."
HOUR = 3_600_000
# A UTC midnight two days back: recent enough for the broker's 7-day time-based retention.
T0 = (int(time.time() * 1000) // (24 * HOUR) - 2) * 24 * HOUR


def sink_config(url: str, bucket: str, topic: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "io.confluent.connect.s3.S3SinkConnector",
        "topics": topic,
        "s3.bucket.name": bucket,
        "s3.region": "us-east-1",
        "store.url": url,
        "aws.access.key.id": "testing",
        "aws.secret.access.key": "testing",
        "format.class": JSON,
        "flush.size": "10",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
        "s3.retry.backoff.ms": "20",
        **extra,
    }


def produce(
    connect: EmbeddedConnect,
    topic: str,
    rows: list[tuple[int, int | None, bytes | None]],
    partitions: int = 1,
) -> None:
    """(partition, timestamp ms, value) rows, in order."""
    admin = AdminClient({"bootstrap.servers": connect.bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)
    p = Producer({"bootstrap.servers": connect.bootstrap, "linger.ms": 5})
    for partition, ts, value in rows:
        p.produce(topic, value=value, partition=partition, timestamp=ts or 0)
    assert p.flush(30) == 0


def committed(connect: EmbeddedConnect, name: str) -> dict[int, int]:
    offsets = connect.request("GET", f"/connectors/{name}/offsets").json()["offsets"]
    return {o["partition"]["kafka_partition"]: o["offset"]["kafka_offset"] for o in offsets}


def objects(s3: Any, bucket: str) -> dict[str, bytes]:
    out = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        for item in page.get("Contents") or ():
            out[item["Key"]] = s3.get_object(Bucket=bucket, Key=item["Key"])["Body"].read()
    return out


def json_lines(data: bytes) -> list[Any]:
    return [orjson.loads(line) for line in data.splitlines()]


def test_default_partitioner_json_lines_rotated_by_size(
    connect: EmbeddedConnect, s3_server: MotoS3Server, bucket: str, s3: Any
) -> None:
    topic, name = unique("orders"), unique("s3")
    produce(connect, topic, [(i % 2, None, orjson.dumps({"id": i})) for i in range(45)], partitions=2)
    connect.create_connector(name, sink_config(s3_server.url, bucket, topic))
    connect.wait_for(lambda: committed(connect, name) == {0: 20, 1: 20}, 30, "two rotations per partition")
    found = objects(s3, bucket)
    expected = {
        f"topics/{topic}/partition={p}/{topic}+{p}+{start:010d}.json" for p in (0, 1) for start in (0, 10)
    }
    assert set(found) == expected
    assert json_lines(found[f"topics/{topic}/partition=1/{topic}+1+0000000010.json"]) == [
        {"id": 2 * o + 1} for o in range(10, 20)
    ]
    # The last 2 or 3 records of each partition wait for flush.size: nothing of them is committed.
    time.sleep(1.0)
    assert committed(connect, name) == {0: 20, 1: 20}
    head = s3.head_object(Bucket=bucket, Key=f"topics/{topic}/partition=0/{topic}+0+0000000010.json")
    # Uploaded beside the rotation before it (if that one was not in S3 yet), it names it.
    assert head["Metadata"].pop("sluiceway-previous-start", "0") == "0"
    assert head["Metadata"] == {
        "sluiceway-range-start": "10",
        "sluiceway-range-end": "19",
        "sluiceway-records": "10",
    }


def test_json_values_are_written_as_their_text_and_values_spanning_lines_compacted(
    connect: EmbeddedConnect, s3_server: MotoS3Server, bucket: str, s3: Any
) -> None:
    # JSON in, JSON lines out: each value is copied as the text the producer wrote (the
    # worker checks it is JSON without decoding it); a value over several lines cannot be
    # a line of its own, so it is decoded and written compact.
    topic, name = unique("texts"), unique("s3")
    texts = [b'{"id": 0, "note": "spaced out"}', b'{\n  "id": 1\n}', b'{"id":2,"n":1.5e2}', b"[3]"] * 5
    produce(connect, topic, [(0, None, t) for t in texts])
    connect.create_connector(name, sink_config(s3_server.url, bucket, topic))
    connect.wait_for(lambda: committed(connect, name) == {0: 20}, 30, "two objects")
    found = objects(s3, bucket)
    lines = [t if b"\n" not in t else orjson.dumps(orjson.loads(t)) for t in texts]
    assert found == {
        f"topics/{topic}/partition=0/{topic}+0+0000000000.json": b"".join(x + b"\n" for x in lines[:10]),
        f"topics/{topic}/partition=0/{topic}+0+0000000010.json": b"".join(x + b"\n" for x in lines[10:]),
    }


def test_field_partitioner_parquet_with_schemas(
    connect: EmbeddedConnect, s3_server: MotoS3Server, bucket: str, s3: Any
) -> None:
    topic, name = unique("payments"), unique("s3")
    schema = {
        "type": "struct",
        "fields": [
            {"field": "id", "type": "int64", "optional": False},
            {"field": "country", "type": "string", "optional": False},
            {
                "field": "amount",
                "type": "bytes",
                "optional": False,
                "name": "org.apache.kafka.connect.data.Decimal",
                "parameters": {"scale": "2"},
            },
        ],
    }
    rows = [
        (
            0,
            None,
            orjson.dumps(
                {"schema": schema, "payload": {"id": i, "country": "DE" if i % 3 else "FR", "amount": "AJY="}}
            ),
        )
        for i in range(20)
    ]
    produce(connect, topic, rows)
    connect.create_connector(
        name,
        sink_config(
            s3_server.url,
            bucket,
            topic,
            **{
                "format.class": PARQUET,
                "value.converter.schemas.enable": "true",
                "partitioner.class": P + "FieldPartitioner",
                "partition.field.name": "country",
            },
        ),
    )
    connect.wait_for(lambda: committed(connect, name) == {0: 20}, 30, "both rotations")
    found = objects(s3, bucket)
    assert set(found) == {
        f"topics/{topic}/country=FR/{topic}+0+0000000000.snappy.parquet",
        f"topics/{topic}/country=DE/{topic}+0+0000000001.snappy.parquet",
        f"topics/{topic}/country=DE/{topic}+0+0000000010.snappy.parquet",
        f"topics/{topic}/country=FR/{topic}+0+0000000012.snappy.parquet",
    }
    ids = []
    for key, data in found.items():
        table = pq.read_table(io.BytesIO(data))
        assert str(table.schema.field("amount").type) == "decimal128(38, 2)"
        assert set(table.column("country").to_pylist()) == {key.split("country=")[1][:2]}
        ids += table.column("id").to_pylist()
    assert sorted(ids) == list(range(20))


def test_hourly_partitions_by_record_field_rotating_on_record_time(
    connect: EmbeddedConnect, s3_server: MotoS3Server, bucket: str, s3: Any
) -> None:
    topic, name = unique("clicks"), unique("s3")
    # 12 records, 20 minutes apart: two hours and a bit. rotate.interval.ms = 1 h of record time.
    rows = [(0, None, orjson.dumps({"n": i, "at": T0 + i * 20 * 60_000})) for i in range(12)]
    produce(connect, topic, rows)
    connect.create_connector(
        name,
        sink_config(
            s3_server.url,
            bucket,
            topic,
            **{
                "flush.size": "1000",
                "rotate.interval.ms": str(HOUR),
                "partitioner.class": P + "HourlyPartitioner",
                "timezone": "UTC",
                "locale": "en-US",
                "timestamp.extractor": "RecordField",
                "timestamp.field": "at",
            },
        ),
    )
    # Rotations start at n=0, 3, 6, 9 (each an hour of record time); the last stays open.
    connect.wait_for(lambda: committed(connect, name) == {0: 9}, 30, "three rotations by record time")
    found = objects(s3, bucket)
    day = time.strftime("year=%Y/month=%m/day=%d", time.gmtime(T0 / 1000))
    assert set(found) == {f"topics/{topic}/{day}/hour={h:02d}/{topic}+0+{3 * h:010d}.json" for h in range(3)}
    assert [r["n"] for r in json_lines(found[f"topics/{topic}/{day}/hour=01/{topic}+0+0000000003.json"])] == [
        3,
        4,
        5,
    ]


def test_daily_partitions_by_kafka_timestamps_bytes_gzip(
    connect: EmbeddedConnect, s3_server: MotoS3Server, bucket: str, s3: Any
) -> None:
    topic, name = unique("logs"), unique("s3")
    rows = [(0, T0 + (i // 3) * 24 * HOUR + 1000, f"line {i}".encode()) for i in range(6)]
    produce(connect, topic, rows)
    connect.create_connector(
        name,
        sink_config(
            s3_server.url,
            bucket,
            topic,
            **{
                "format.class": BYTES,
                "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
                "s3.compression.type": "gzip",
                "flush.size": "6",
                "partitioner.class": P + "DailyPartitioner",
                "timezone": "UTC",
                "timestamp.extractor": "Record",
            },
        ),
    )
    connect.wait_for(lambda: committed(connect, name) == {0: 6}, 30, "one rotation")
    found = objects(s3, bucket)
    days = [
        time.strftime("year=%Y/month=%m/day=%d", time.gmtime((T0 + d * 24 * HOUR) / 1000)) for d in (0, 1)
    ]
    assert set(found) == {
        f"topics/{topic}/{days[0]}/{topic}+0+0000000000.bin.gz",
        f"topics/{topic}/{days[1]}/{topic}+0+0000000003.bin.gz",
    }
    assert (
        gzip.decompress(found[f"topics/{topic}/{days[1]}/{topic}+0+0000000003.bin.gz"])
        == b"line 3\nline 4\nline 5\n"
    )
    head = s3.head_object(Bucket=bucket, Key=f"topics/{topic}/{days[0]}/{topic}+0+0000000000.bin.gz")
    assert head["ContentEncoding"] == "gzip"


def test_wall_clock_rotation_commits_a_quiet_partition(
    connect: EmbeddedConnect, s3_server: MotoS3Server, bucket: str, s3: Any
) -> None:
    topic, name = unique("quiet"), unique("s3")
    produce(connect, topic, [(0, None, orjson.dumps({"i": i})) for i in range(3)])
    connect.create_connector(
        name,
        sink_config(
            s3_server.url,
            bucket,
            topic,
            **{"flush.size": "1000", "rotate.schedule.interval.ms": "1000", "timezone": "UTC"},
        ),
    )
    connect.wait_for(lambda: committed(connect, name) == {0: 3}, 30, "the scheduled rotation")
    assert list(objects(s3, bucket)) == [f"topics/{topic}/partition=0/{topic}+0+0000000000.json"]


def test_large_objects_go_up_in_parts(
    connect: EmbeddedConnect, s3_server: MotoS3Server, bucket: str, s3: Any, proxy: S3FaultProxy
) -> None:
    topic, name = unique("big"), unique("s3")
    blob = "x" * 100_000
    produce(connect, topic, [(0, None, orjson.dumps({"i": i, "blob": blob})) for i in range(120)])
    connect.create_connector(
        name,
        sink_config(proxy.url, bucket, topic, **{"flush.size": "120", "s3.part.size": str(5 * 1024 * 1024)}),
    )
    connect.wait_for(lambda: committed(connect, name) == {0: 120}, 60, "one large object")
    assert proxy.count("CreateMultipartUpload") == 1 and proxy.count("UploadPart") == 3
    assert proxy.count("CompleteMultipartUpload") == 1
    data = objects(s3, bucket)[f"topics/{topic}/partition=0/{topic}+0+0000000000.json"]
    assert [r["i"] for r in json_lines(data)] == list(range(120))


def test_throttling_5xx_and_dropped_connections_are_retried(
    connect: EmbeddedConnect, bucket: str, s3: Any, proxy: S3FaultProxy
) -> None:
    topic, name = unique("busy"), unique("s3")
    produce(connect, topic, [(0, None, orjson.dumps({"i": i})) for i in range(50)])
    proxy.fail_next(3, status=503, code="SlowDown", operation="PutObject")
    proxy.fail_next(2, status=500, code="InternalError", operation="PutObject")
    proxy.drop_next(1, operation="PutObject")
    connect.create_connector(name, sink_config(proxy.url, bucket, topic, **{"s3.part.retries": "2"}))
    connect.wait_for(lambda: committed(connect, name) == {0: 50}, 60, "all five objects despite the faults")
    assert proxy.pending_faults == 0
    found = objects(s3, bucket)
    assert len(found) == 5
    assert sorted(r["i"] for data in found.values() for r in json_lines(data)) == list(range(50))
    assert connect.status(name)["tasks"][0]["state"] == "RUNNING"


def test_a_rotation_that_lands_before_the_one_ahead_of_it_names_it_and_recovery_goes_back(
    connect: EmbeddedConnect, bucket: str, s3: Any, proxy: S3FaultProxy
) -> None:
    # A partition's two oldest rotations upload at once. Here the first can never land and
    # the second does: nothing may be committed past the first, and a new owner of the
    # partition, reading the bucket, must start over at the first, not after the second.
    topic, first = unique("overtaken"), unique("s3")
    produce(connect, topic, [(0, None, orjson.dumps({"i": i})) for i in range(20)])
    keys = [f"topics/{topic}/partition=0/{topic}+0+{start:010d}.json" for start in (0, 10)]
    proxy.fail_next(100_000, operation="PutObject", key=keys[0].rsplit("/", 1)[1])
    connect.create_connector(first, sink_config(proxy.url, bucket, topic, **{"s3.part.retries": "0"}))
    connect.wait_for(lambda: keys[1] in objects(s3, bucket), 30, "the second rotation, past the first")
    assert s3.head_object(Bucket=bucket, Key=keys[1])["Metadata"]["sluiceway-previous-start"] == "0"
    time.sleep(1.0)  # two offset flush intervals
    assert committed(connect, first) == {}
    assert connect.status(first)["tasks"][0]["state"] == "RUNNING"
    assert connect.request("DELETE", f"/connectors/{first}").status_code == 204
    assert list(objects(s3, bucket)) == [keys[1]]

    proxy.clear_faults()
    second = unique("s3")  # a new consumer group: only the bucket says where to start
    connect.create_connector(second, sink_config(proxy.url, bucket, topic))
    connect.wait_for(lambda: committed(connect, second) == {0: 20}, 30, "both rotations")
    found = objects(s3, bucket)
    assert sorted(found) == keys
    assert [r["i"] for key in keys for r in json_lines(found[key])] == list(range(20))


def test_an_unreachable_store_keeps_the_task_running_and_commits_nothing_new(
    connect: EmbeddedConnect, bucket: str, s3: Any, proxy: S3FaultProxy
) -> None:
    topic, name = unique("outage"), unique("s3")
    produce(connect, topic, [(0, None, orjson.dumps({"i": i})) for i in range(10)])
    connect.create_connector(name, sink_config(proxy.url, bucket, topic, **{"s3.part.retries": "1"}))
    connect.wait_for(lambda: committed(connect, name) == {0: 10}, 30, "the first object")
    proxy.stop()
    p = Producer({"bootstrap.servers": connect.bootstrap})
    for i in range(10, 30):
        p.produce(topic, orjson.dumps({"i": i}))
    p.flush(30)
    time.sleep(2.0)
    assert committed(connect, name) == {0: 10}
    assert connect.status(name)["tasks"][0]["state"] == "RUNNING"
    proxy.start()
    connect.wait_for(lambda: committed(connect, name) == {0: 30}, 60, "the rest once S3 is back")
    assert sorted(r["i"] for data in objects(s3, bucket).values() for r in json_lines(data)) == list(
        range(30)
    )


def test_a_new_consumer_group_resumes_from_the_bucket_not_from_the_start(
    connect: EmbeddedConnect, bucket: str, s3: Any, proxy: S3FaultProxy
) -> None:
    topic, first = unique("resume"), unique("s3")
    produce(connect, topic, [(0, None, orjson.dumps({"i": i})) for i in range(30)])
    connect.create_connector(first, sink_config(proxy.url, bucket, topic))
    connect.wait_for(lambda: committed(connect, first) == {0: 30}, 30, "three objects")
    assert connect.request("DELETE", f"/connectors/{first}").status_code == 204
    before = {k: s3.head_object(Bucket=bucket, Key=k)["ETag"] for k in objects(s3, bucket)}
    proxy.reset_observations()
    # Another connector (a new consumer group, which would start at offset 0) on the same bucket.
    second = unique("s3")
    p = Producer({"bootstrap.servers": connect.bootstrap})
    for i in range(30, 40):
        p.produce(topic, orjson.dumps({"i": i}))
    p.flush(30)
    connect.create_connector(second, sink_config(proxy.url, bucket, topic))
    connect.wait_for(lambda: committed(connect, second) == {0: 40}, 30, "the fourth object")
    found = objects(s3, bucket)
    assert len(found) == 4 and all(before[k] == s3.head_object(Bucket=bucket, Key=k)["ETag"] for k in before)
    assert proxy.count("PutObject") == 1  # only the new object was written
    assert sorted(r["i"] for data in found.values() for r in json_lines(data)) == list(range(40))


def test_records_a_format_cannot_write_go_to_the_dead_letter_queue(
    connect: EmbeddedConnect, s3_server: MotoS3Server, bucket: str, s3: Any
) -> None:
    topic, name, dlq = unique("mixed"), unique("s3"), unique("dlq")
    values = [orjson.dumps({"n": i}) if i != 4 else b'"just text"' for i in range(10)] + [
        orjson.dumps({"n": "nan"})
    ]
    produce(connect, topic, [(0, None, v) for v in values])
    connect.create_connector(
        name,
        sink_config(
            s3_server.url,
            bucket,
            topic,
            **{
                "format.class": PARQUET,
                "flush.size": "10",  # records written: the refused one at offset 4 does not count
                "errors.tolerance": "all",
                "errors.deadletterqueue.topic.name": dlq,
                "errors.deadletterqueue.topic.replication.factor": "1",
                "errors.deadletterqueue.context.headers.enable": "true",
            },
        ),
    )
    connect.wait_for(lambda: committed(connect, name) == {0: 11}, 30, "the object, without the misfits")
    [data] = objects(s3, bucket).values()
    assert pq.read_table(io.BytesIO(data)).column("n").to_pylist() == [0, 1, 2, 3, 5, 6, 7, 8, 9]
    dead = connect.consume(dlq, 2)
    assert sorted(m.value() for m in dead) == sorted([b'"just text"', b'{"n":"nan"}'])
    reasons = " ".join(dict(m.headers())["__connect.errors.exception.message"].decode() for m in dead)
    assert "Parquet rows are structs or JSON objects" in reasons and "@10" in reasons


def test_tombstones_and_misfits_inside_a_run_of_records_are_handled_one_by_one(
    connect: EmbeddedConnect, s3_server: MotoS3Server, bucket: str, s3: Any
) -> None:
    # A run of one partition's records goes to the object a rotation at a time; a tombstone
    # or a record the format refuses sends its rotation's records through one by one, with
    # the same objects, offsets and dead letters as if they had always gone that way.
    topic, name, dlq = unique("runs"), unique("s3"), unique("dlq")
    values: list[bytes | None] = [b'"r%d"' % i for i in range(25)]
    values[3] = None  # a tombstone: skipped (behavior.on.null.values=ignore)
    values[12] = b'{"not": "text"}'  # a JSON object: ByteArrayFormat writes bytes and strings only
    produce(connect, topic, [(0, None, v) for v in values])
    connect.create_connector(
        name,
        sink_config(
            s3_server.url,
            bucket,
            topic,
            **{
                "format.class": BYTES,
                "flush.size": "10",
                "behavior.on.null.values": "ignore",
                "consumer.override.max.poll.records": "500",
                "errors.tolerance": "all",
                "errors.deadletterqueue.topic.name": dlq,
                "errors.deadletterqueue.topic.replication.factor": "1",
            },
        ),
    )
    # 23 records written: offsets 0-10 (without 3) and 11-21 (without 12) fill two objects.
    connect.wait_for(lambda: committed(connect, name) == {0: 22}, 30, "two objects")
    found = objects(s3, bucket)
    first = f"topics/{topic}/partition=0/{topic}+0+0000000000.bin"
    second = f"topics/{topic}/partition=0/{topic}+0+0000000011.bin"
    assert set(found) == {first, second}
    assert found[first].split(b"\n")[:-1] == [b"r%d" % i for i in range(11) if i != 3]
    assert found[second].split(b"\n")[:-1] == [b"r%d" % i for i in range(11, 22) if i != 12]
    [dead] = connect.consume(dlq, 1)
    assert dead.value() == b'{"not": "text"}'


def test_a_missing_bucket_is_refused_at_creation_and_fails_a_running_task(
    connect: EmbeddedConnect, s3_server: MotoS3Server, s3: Any
) -> None:
    topic = unique("nowhere")
    r = connect.request(
        "PUT", f"/connectors/{unique('s3')}/config", sink_config(s3_server.url, "no-such-bucket-here", topic)
    )
    assert r.status_code == 400 and "s3.bucket.name" in r.text and "does not exist" in r.text
    bucket, name = unique("gone").lower(), unique("s3")
    s3.create_bucket(Bucket=bucket)
    produce(connect, topic, [(0, None, orjson.dumps({"i": i})) for i in range(5)])
    connect.create_connector(name, sink_config(s3_server.url, bucket, topic))
    connect.wait_for(lambda: committed(connect, name) == {}, 10, "no commit yet")
    s3.delete_bucket(Bucket=bucket)
    p = Producer({"bootstrap.servers": connect.bootstrap})
    for i in range(5, 10):
        p.produce(topic, orjson.dumps({"i": i}))
    p.flush(30)
    status = connect.wait_for_state(name, "RUNNING", 1, task_state="FAILED")
    assert (
        f"bucket {bucket}" in status["tasks"][0]["trace"] and "does not exist" in status["tasks"][0]["trace"]
    )


def test_bad_credentials_are_named(connect: EmbeddedConnect) -> None:
    with MotoS3Server(process=True, auth=True) as secured:
        key, secret = secured.credentials
        bucket = unique("private").lower()
        secured.client().create_bucket(Bucket=bucket)
        config = sink_config(
            secured.url, bucket, unique("t"), **{"aws.access.key.id": "AKIAWRONGWRONGWRONG1"}
        )
        r = connect.request("PUT", f"/connectors/{unique('s3')}/config", config)
        assert r.status_code == 400 and "aws.access.key.id" in r.text and "InvalidAccessKeyId" in r.text
        assert "testing" not in r.text  # the secret is not echoed
        good = sink_config(
            secured.url, bucket, unique("t"), **{"aws.access.key.id": key, "aws.secret.access.key": secret}
        )
        good["name"] = "checked"
        checked = connect.request("PUT", "/connector-plugins/S3SinkConnector/config/validate", good).json()
        problems = [c["value"] for c in checked["configs"] if c["value"]["errors"]]
        assert checked["error_count"] == 0, problems


def test_objects_by_partition_path_hold_each_record_once(
    connect: EmbeddedConnect, s3_server: MotoS3Server, bucket: str, s3: Any
) -> None:
    """Many partition paths interleaved: one open object per path, committed together."""
    topic, name = unique("cities"), unique("s3")
    cities = ["berlin", "paris", "rome", "oslo"]
    produce(
        connect, topic, [(0, None, orjson.dumps({"i": i, "city": cities[(i * 7) % 4]})) for i in range(40)]
    )
    connect.create_connector(
        name,
        sink_config(
            s3_server.url,
            bucket,
            topic,
            **{"partitioner.class": "FieldPartitioner", "partition.field.name": "city", "flush.size": "20"},
        ),
    )
    connect.wait_for(lambda: committed(connect, name) == {0: 40}, 30, "two rotations")
    by_city: dict[str, list[int]] = defaultdict(list)
    for key, data in objects(s3, bucket).items():
        city = key.split("city=")[1].split("/")[0]
        by_city[city] += [r["i"] for r in json_lines(data)]
    assert {c: sorted(v) for c, v in by_city.items()} == {
        c: [i for i in range(40) if cities[(i * 7) % 4] == c] for c in cities
    }


def test_time_based_partitioner_with_a_path_format_and_a_zone(
    connect: EmbeddedConnect, s3_server: MotoS3Server, bucket: str, s3: Any
) -> None:
    """6-hour directories in Berlin time from a Joda pattern, times from the records' field."""
    topic, name = unique("sensors"), unique("s3")
    # Records every 2 hours from T0 (00:00 UTC).
    rows = [(0, None, orjson.dumps({"n": i, "at": T0 + i * 2 * HOUR})) for i in range(6)]
    produce(connect, topic, rows)
    connect.create_connector(
        name,
        sink_config(
            s3_server.url,
            bucket,
            topic,
            **{
                "flush.size": "6",
                "partitioner.class": P + "TimeBasedPartitioner",
                "path.format": "'dt'=YYYY-MM-dd/'h'=HH",
                "partition.duration.ms": str(6 * HOUR),
                "timezone": "Europe/Berlin",
                "timestamp.extractor": "RecordField",
                "timestamp.field": "at",
            },
        ),
    )
    connect.wait_for(lambda: committed(connect, name) == {0: 6}, 30, "one rotation")
    # Computed independently: each record's Berlin wall time, floored to 6 hours.
    berlin = zoneinfo.ZoneInfo("Europe/Berlin")
    expected: dict[str, int] = {}
    for i in range(6):
        local = dt.datetime.fromtimestamp((T0 + i * 2 * HOUR) / 1000, berlin)
        directory = f"dt={local:%Y-%m-%d}/h={local.hour - local.hour % 6:02d}"
        expected.setdefault(directory, i)
    assert set(objects(s3, bucket)) == {
        f"topics/{topic}/{d}/{topic}+0+{start:010d}.json" for d, start in expected.items()
    }
    assert len(expected) >= 2
