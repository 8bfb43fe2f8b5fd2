"""The S3 sink in a standalone worker process, killed with SIGKILL twice while records stream
in and rotations are being uploaded, then restarted: the bucket (moto's S3 in its own
process) ends up holding exactly the objects one uninterrupted run would have written,
every record once. The restarted tasks find their position in the bucket itself."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tests.contract_servers.s3 import MotoS3Server
from tests.support import BrokerProcess, StandaloneWorkerProcess, free_port, unique, wait_until, write_props

pytestmark = pytest.mark.slow

N = 15_000
PARTITIONS = 3
FLUSH = 500
CITIES = ["berlin", "paris", "rome"]


def city(i: int) -> str:
    return CITIES[(i * 7 // 3) % 3]


class Feeder(threading.Thread):
    """Records 0..N-1, record i to partition i % 3, at a steady pace over several seconds."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        super().__init__(daemon=True)
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all"})
        self.topic = topic
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            for i in range(N):
                value = orjson.dumps({"id": i, "city": city(i)})
                self.producer.produce(self.topic, value=value, partition=i % PARTITIONS)
                if i % 500 == 499:
                    self.producer.poll(0)
                    time.sleep(0.04)
            if self.producer.flush(60):
                raise AssertionError("records were not delivered")
        except BaseException as exc:
            self.error = exc


def expected_keys(topic: str) -> set[str]:
    """The objects an uninterrupted run writes: per partition, rotations of FLUSH records, one
    object per city named after the city's first record in the rotation."""
    keys = set()
    for p in range(PARTITIONS):
        ids = [i for i in range(N) if i % PARTITIONS == p]  # offset o holds ids[o]
        for start in range(0, len(ids), FLUSH):
            first: dict[str, int] = {}
            for offset in range(start, start + FLUSH):
                first.setdefault(city(ids[offset]), offset)
            for c, offset in first.items():
                keys.add(f"topics/{topic}/city={c}/{topic}+{p}+{offset:010d}.json")
    return keys


def listing(s3: Any, bucket: str) -> list[str]:
    keys: list[str] = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        keys += [item["Key"] for item in page.get("Contents") or ()]
    return keys


def test_kill_9_during_uploads_then_restart_the_bucket_holds_each_record_once(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "broker").start()
    moto = MotoS3Server(process=True).start()
    try:
        s3 = moto.client()
        bucket, topic = unique("lake").lower(), unique("events")
        s3.create_bucket(Bucket=bucket)
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(30)
        files = [
            write_props(
                tmp_path / "worker.properties",
                {
                    "bootstrap.servers": broker.bootstrap,
                    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
                    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                    "value.converter.schemas.enable": "false",
                    "offset.storage.file.filename": str(tmp_path / "offsets"),
                    "offset.flush.interval.ms": "300",
                    # The killed worker's consumers hold up the restarted one's first rebalance until
                    # their sessions time out: each kill costs about two of these.
                    "consumer.session.timeout.ms": "3000",
                    "consumer.heartbeat.interval.ms": "1000",
                    "listeners": f"http://127.0.0.1:{free_port()}",
                },
            ),
            write_props(
                tmp_path / "s3.properties",
                {
                    "name": "events-to-s3",
                    "connector.class": "io.confluent.connect.s3.S3SinkConnector",
                    "topics": topic,
                    "tasks.max": "2",
                    "s3.bucket.name": bucket,
                    "s3.region": "us-east-1",
                    "store.url": moto.url,
                    "aws.access.key.id": "testing",
                    "aws.secret.access.key": "testing",
                    "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
                    "flush.size": str(FLUSH),
                    "partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner",
                    "partition.field.name": "city",
                },
            ),
        ]
        expected = expected_keys(topic)
        feeder = Feeder(broker.bootstrap, topic)
        worker = StandaloneWorkerProcess(*files).start()
        try:
            feeder.start()
            for fraction in (0.25, 0.6):
                wait_until(
                    lambda f=fraction: len(listing(s3, bucket)) >= len(expected) * f,
                    120,
                    interval=0.1,
                    message=f"{fraction:.0%} of the objects",
                )
                worker.kill9()
                worker = StandaloneWorkerProcess(*files).start()
            feeder.join(120)
            assert feeder.error is None, feeder.error
            wait_until(
                lambda: len(listing(s3, bucket)) >= len(expected), 120, interval=0.3, message="every object"
            )
            time.sleep(1.5)  # an object written twice under another name would show by now
            keys = listing(s3, bucket)
            assert set(keys) == expected
            ids = []
            for key in keys:
                lines = s3.get_object(Bucket=bucket, Key=key)["Body"].read().splitlines()
                rows = [orjson.loads(line) for line in lines]
                assert {r["city"] for r in rows} == {key.split("city=")[1].split("/")[0]}
                ids += [r["id"] for r in rows]
            assert len(ids) == N and sorted(ids) == list(range(N))
            # The restarted tasks took their position from the bucket, not from the (older)
            # committed consumer offsets.
            assert worker.log_path.read_text().count("Resuming from the objects in the bucket") >= 2
        finally:
            worker.stop()
    finally:
        moto.stop()
        broker.stop()
