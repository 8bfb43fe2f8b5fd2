"""Exactly-once sources (KIP-618) survive a worker killed with SIGKILL mid-stream.

A broker and three distributed worker processes with ``exactly.once.source.support=enabled``
run the file source and the JDBC query source (SQLite, incrementing mode). Lines and rows
keep coming while the worker running the file task is killed with -9: its open
transaction is left behind, another worker takes the task over, and the task's
``init_transactions`` aborts it. A read_committed consumer (confluent-kafka) must then see
every line and every row exactly once: none lost, none twice.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

from sluiceway.embedded import DistributedWorkerProcess
from tests.support import ROOT, BrokerProcess, unique, wait_until

pytestmark = pytest.mark.slow

LINES = 60_000
ROWS = 6_000


def worker(tmp: Path, name: str, bootstrap: str) -> DistributedWorkerProcess:
    return DistributedWorkerProcess(
        tmp,
        name,
        bootstrap,
        cwd=ROOT,
        **{
            "exactly.once.source.support": "enabled",
            "offset.storage.partitions": "5",
            "status.storage.partitions": "3",
            "session.timeout.ms": "6000",
            "heartbeat.interval.ms": "1000",
            "rebalance.timeout.ms": "20000",
            "scheduled.rebalance.max.delay.ms": "0",
            "task.shutdown.graceful.timeout.ms": "5000",
        },
    )


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[BrokerProcess, list[DistributedWorkerProcess]]]:
    broker = BrokerProcess(tmp_path / "broker").start()
    workers = [worker(tmp_path, f"w{i}", broker.bootstrap) for i in range(3)]
    try:
        for w in workers:
            w.start()
        wait_until(lambda: all(w.healthy() for w in workers), 60, message="all workers healthy")
        yield broker, workers
    finally:
        for w in workers:
            w.stop()
        broker.stop()


def status(workers: list[DistributedWorkerProcess], name: str) -> dict[str, Any]:
    for w in workers:
        if not w.alive():
            continue
        try:
            r = httpx.get(w.url + f"connectors/{name}/status", timeout=5)
        except httpx.HTTPError:
            continue
        if r.status_code == 200:
            return r.json()  # type: ignore[no-any-return]
    return {}


def task_owner(workers: list[DistributedWorkerProcess], name: str) -> str | None:
    s = status(workers, name)
    tasks = s.get("tasks") or []
    if tasks and tasks[0]["state"] == "RUNNING":
        return str(tasks[0]["worker_id"])
    return None


def read_committed(bootstrap: str, topic: str) -> list[bytes]:
    """Every value of ``topic`` a read_committed consumer reads up to the partitions' ends."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique("judge"),
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
            "enable.partition.eof": True,
        }
    )
    try:
        metadata = consumer.list_topics(topic, timeout=10).topics.get(topic)
        if metadata is None or metadata.error is not None:
            return []
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in metadata.partitions])
        values: list[bytes] = []
        left, deadline = set(metadata.partitions), time.monotonic() + 60
        while left and time.monotonic() < deadline:
            for m in consumer.consume(1000, 0.2):
                if m.error() is not None:
                    if m.error().code() == KafkaError._PARTITION_EOF:
                        left.discard(m.partition())
                    continue
                values.append(m.value())
        return values
    finally:
        consumer.close()


def test_kill_9_mid_stream_every_line_and_row_exactly_once(
    tmp_path: Path, cluster: tuple[BrokerProcess, list[DistributedWorkerProcess]]
) -> None:
    broker, workers = cluster
    source, db = tmp_path / "in.txt", tmp_path / "rows.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE rows (id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT NOT NULL)")
    source.write_text("".join(f"line-{n:06d}\n" for n in range(LINES // 2)))
    connectors = {
        "eos-file": {
            "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
            "file": str(source),
            "topic": "eos-lines",
            "batch.size": "500",
            "exactly.once.support": "required",
        },
        "eos-jdbc": {
            "connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector",
            "connection.url": f"jdbc:sqlite:{db}",
            "mode": "incrementing",
            "incrementing.column.name": "id",
            "table.whitelist": "rows",
            "topic.prefix": "eos-",
            "poll.interval.ms": "50",
            "batch.max.rows": "200",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false",
            "exactly.once.support": "required",
        },
    }
    for name, config in connectors.items():
        r = httpx.put(workers[1].url + f"connectors/{name}/config", json=config, timeout=30)
        assert r.status_code == 201, r.text

    stop = threading.Event()

    def insert_rows() -> None:
        # Rows keep arriving in small transactions of their own, through the kill.
        n = 0
        while n < ROWS and not stop.is_set():
            with sqlite3.connect(db, timeout=30) as conn:
                conn.executemany(
                    "INSERT INTO rows (v) VALUES (?)", [(f"row-{n + i:05d}",) for i in range(100)]
                )
            n += 100
            time.sleep(0.01)

    inserter = threading.Thread(target=insert_rows, daemon=True)
    inserter.start()
    try:
        wait_until(lambda: task_owner(workers, "eos-file") is not None, 60, message="the file task RUNNING")
        wait_until(
            lambda: len(read_committed(broker.bootstrap, "eos-lines")) > 5000, 60, message="lines flowing"
        )
        owner = task_owner(workers, "eos-file")
        victim = next(w for w in workers if w.worker_id == owner)
        with source.open("a") as f:  # more lines, while the victim is busy
            f.write("".join(f"line-{n:06d}\n" for n in range(LINES // 2, LINES * 3 // 4)))
        victim.kill9()
        with source.open("a") as f:  # and more after it died
            f.write("".join(f"line-{n:06d}\n" for n in range(LINES * 3 // 4, LINES)))
        survivors = [w for w in workers if w.alive()]
        wait_until(
            lambda: task_owner(survivors, "eos-file") not in (None, owner), 60, message="the file task moved"
        )
        inserter.join(120)
        wait_until(
            lambda: len(read_committed(broker.bootstrap, "eos-lines")) >= LINES, 120, message="every line"
        )
        wait_until(
            lambda: len(read_committed(broker.bootstrap, "eos-rows")) >= ROWS, 120, message="every row"
        )
    finally:
        stop.set()
    lines = Counter(v.decode() for v in read_committed(broker.bootstrap, "eos-lines"))
    assert set(lines) == {f"line-{n:06d}" for n in range(LINES)}
    assert [line for line, times in lines.items() if times > 1] == []
    rows = Counter(orjson.loads(v)["v"] for v in read_committed(broker.bootstrap, "eos-rows"))
    assert set(rows) == {f"row-{n:05d}" for n in range(ROWS)}
    assert [row for row, times in rows.items() if times > 1] == []
