"""The Spark sink in a standalone worker process, killed with SIGKILL while records stream in
and batches are being written, then restarted: a plain Spark reader of the table sees every
record exactly once. A worker without a usable Java fails the task saying what to install."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from spark_sink.table_log import STAGING
from tests.support import BrokerProcess, StandaloneWorkerProcess, free_port, unique, wait_until, write_props

pytestmark = pytest.mark.slow

N = 30_000


class Feeder(threading.Thread):
    """Produces records 0..N-1 at a steady pace over several seconds."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        super().__init__(daemon=True)
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all"})
        self.topic = topic
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            for i in range(N):
                self.producer.produce(
                    self.topic,
                    key=str(i).encode(),
                    value=orjson.dumps({"id": i, "account": i % 17, "amount": i / 4}),
                )
                if i % 500 == 499:
                    self.producer.poll(0)
                    time.sleep(0.05)
            if self.producer.flush(60):
                raise AssertionError("records were not delivered")
        except BaseException as exc:
            self.error = exc


def rows(table: Path) -> int:
    """Rows a plain reader sees now, from the published files' Parquet footers.

    Only for waiting: a Spark job per poll would compete with the worker's Spark for the
    CPU all along. Files are renamed into place whole; like Spark, names starting with
    ``_`` or ``.`` (staging, the commit log) are skipped. The verdict is Spark's (below).
    """
    total = 0
    # os.walk, pruned before it descends: the staging directories come and go while the
    # worker writes, and a walk into one that vanished must not fail the wait (rglob does).
    for root, dirs, files in os.walk(table):
        dirs[:] = [d for d in dirs if not d.startswith(("_", "."))]
        for name in files:
            if name.endswith(".parquet") and not name.startswith(("_", ".")):
                with contextlib.suppress(OSError, pa.ArrowInvalid):  # gone or replaced under us
                    total += pq.read_metadata(os.path.join(root, name)).num_rows
    return total


def worker_files(tmp_path: Path, bootstrap: str, topic: str, table: Path, port: int = 0) -> list[Path]:
    return [
        write_props(
            tmp_path / "worker.properties",
            {
                "bootstrap.servers": bootstrap,
                "key.converter": "org.apache.kafka.connect.storage.StringConverter",
                "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                "value.converter.schemas.enable": "false",
                "offset.storage.file.filename": str(tmp_path / "offsets"),
                "offset.flush.interval.ms": "300",
                # The killed worker's consumers leave the group when their session times out.
                "consumer.session.timeout.ms": "6000",
                "consumer.heartbeat.interval.ms": "1000",
                "listeners": f"http://127.0.0.1:{port or free_port()}",
            },
        ),
        write_props(
            tmp_path / "spark.properties",
            {
                "name": "lake",
                "connector.class": "SparkSinkConnector",
                "topics": topic,
                "tasks.max": "2",
                "table.path": str(table),
                "partition.by": "account",
                "flush.size": "1500",
                "flush.interval.ms": "400",
                "include.kafka.coordinates": "true",
                "spark.master": "local[2]",
                "spark.conf.spark.sql.shuffle.partitions": "2",
            },
        ),
    ]


def test_kill_9_while_writing_then_restart_every_record_exactly_once(tmp_path: Path, spark: Any) -> None:
    broker = BrokerProcess(tmp_path / "broker").start()
    topic, table = unique("lake"), tmp_path / "table"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic, 3, 1)])[topic].result(30)
    files = worker_files(tmp_path, broker.bootstrap, topic, table)
    feeder = Feeder(broker.bootstrap, topic)
    worker = StandaloneWorkerProcess(*files).start()
    try:
        feeder.start()
        wait_until(lambda: rows(table) > 0, 120, interval=0.5, message="the first rows")
        for fraction in (0.25, 0.6):
            wait_until(lambda f=fraction: rows(table) >= N * f, 120, interval=0.2, message=f"{fraction:.0%}")
            worker.kill9()
            worker = StandaloneWorkerProcess(*files).start()
        feeder.join(120)
        assert feeder.error is None, feeder.error
        wait_until(lambda: rows(table) >= N, 180, interval=0.5, message=f"{N} rows")
        time.sleep(2)  # anything written twice would show up by now
        df = spark.read.parquet(str(table))
        assert df.count() == N
        assert df.select("id").distinct().count() == N
        assert df.selectExpr("min(id)", "max(id)").first() == (0, N - 1)
        # Rows carry the Kafka coordinates they came from, each pair once.
        assert df.select("_partition", "_offset").distinct().count() == N
        assert not [p for p in (table / STAGING).glob("*/*")]
    finally:
        worker.stop()
        broker.stop()


def test_a_worker_without_java_fails_the_task_saying_what_to_install(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "broker").start()
    topic = unique("nojava")
    port = free_port()
    files = worker_files(tmp_path, broker.bootstrap, topic, tmp_path / "table", port)
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = str(tmp_path / "empty-bin")  # no java here; the worker is started by absolute path
    worker = StandaloneWorkerProcess(*files, env=env).start()
    try:

        def task_trace() -> str:
            try:
                status = httpx.get(f"http://127.0.0.1:{port}/connectors/lake/status", timeout=2).json()
            except (httpx.HTTPError, ValueError):
                return ""
            tasks = status.get("tasks") or [{}]
            return str(tasks[0].get("trace", "")) if tasks[0].get("state") == "FAILED" else ""

        wait_until(lambda: bool(task_trace()), 60, interval=0.3, message="a FAILED task")
        trace = task_trace()
        assert "Cannot start Spark: no java on PATH" in trace
        assert "apt-get install openjdk-17-jre-headless" in trace
    finally:
        worker.stop()
        broker.stop()
