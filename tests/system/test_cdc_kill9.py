"""The PostgreSQL CDC connector in a standalone worker process, killed with SIGKILL mid-stream
under a steady write load and restarted: every change arrives, and what arrives twice is only
what had been sent but not yet acknowledged (the restarted worker resumes exactly after the
offset the dead one had stored)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

from tests.databases import PostgresServer, ServerUnavailable
from tests.support import BrokerProcess, StandaloneWorkerProcess, free_port, unique, wait_until, write_props

pytestmark = pytest.mark.slow

TOPIC = "load.public.load"


class Writer(threading.Thread):
    """Inserts rows with increasing ids, a few per transaction, until stopped."""

    def __init__(self, dsn: str) -> None:
        super().__init__(daemon=True)
        self.dsn = dsn
        self.next_id = 1
        self.halt = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with psycopg.connect(self.dsn, autocommit=True) as conn:
                while not self.halt.is_set():
                    with conn.transaction():
                        for _ in range(5):
                            conn.execute("INSERT INTO load VALUES (%s, 'x')", (self.next_id,))
                            self.next_id += 1
                    time.sleep(0.002)
        except BaseException as exc:
            self.error = exc


class Topic:
    """Everything on the topic, read as it arrives: (Kafka timestamp ms, value payload)."""

    def __init__(self, bootstrap: str) -> None:
        self.consumer = Consumer(
            {"bootstrap.servers": bootstrap, "group.id": unique("kill9"), "enable.auto.commit": False}
        )
        self.consumer.assign([TopicPartition(TOPIC, 0, OFFSET_BEGINNING)])
        self.events: list[tuple[int, dict[str, Any]]] = []

    def read(self) -> int:
        for m in self.consumer.consume(1000, 0.2):
            if m.error() is None and m.value() is not None:
                self.events.append((m.timestamp()[1], json.loads(m.value())))
        return len(self.events)

    def ids(self) -> list[int]:
        return [v["after"]["id"] for _, v in self.events if v["op"] in ("c", "r")]


def stored_offset(path: Path) -> dict[str, Any]:
    """The offset the standalone worker last stored for the connector (its offsets file)."""
    data = json.loads(path.read_text())
    (value,) = [json.loads(v) for k, v in data.items() if json.loads(k)[0] == "cdc"]
    return dict(value)


def test_kill_9_mid_stream_loses_no_change_and_repeats_only_the_unacknowledged(tmp_path: Path) -> None:
    server = PostgresServer()
    try:
        server.start()
    except ServerUnavailable as exc:
        pytest.skip(str(exc))
    broker = BrokerProcess(tmp_path / "broker").start()
    server.execute("CREATE DATABASE loaddb")
    server.execute("CREATE TABLE load (id bigint PRIMARY KEY, payload text)", "loaddb")
    offsets = tmp_path / "offsets.json"
    files = [
        write_props(
            tmp_path / "worker.properties",
            {
                "bootstrap.servers": broker.bootstrap,
                "key.converter": "org.apache.kafka.connect.json.JsonConverter",
                "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                "key.converter.schemas.enable": "false",
                "value.converter.schemas.enable": "false",
                "offset.storage.file.filename": str(offsets),
                "offset.flush.interval.ms": "200",
                "listeners": f"http://127.0.0.1:{free_port()}",
            },
        ),
        write_props(
            tmp_path / "cdc.properties",
            {
                "name": "cdc",
                "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
                "database.hostname": server.host,
                "database.port": str(server.port),
                "database.user": server.USER,
                "database.dbname": "loaddb",
                "topic.prefix": "load",
                "slot.name": "kill9",
                "poll.interval.ms": "50",
                "max.batch.size": "200",
                "status.update.interval.ms": "1000",
                "slot.retry.delay.ms": "300",
            },
        ),
    ]
    writer = Writer(server.dsn("loaddb"))
    topic = Topic(broker.bootstrap)
    worker = StandaloneWorkerProcess(*files).start()
    try:
        wait_until(
            lambda: bool(server_rows(server, "SELECT 1 FROM pg_replication_slots WHERE slot_name = 'kill9'")),
            60,
            message="the replication slot",
        )
        writer.start()
        resumed: list[tuple[dict[str, Any], int]] = []  # (offset stored at the kill, restart time ms)
        for target in (2000, 5000):
            wait_until(lambda t=target: topic.read() >= t, 90, message=f"{target} events")
            worker.kill9()
            stored = stored_offset(offsets)
            restarted_at = int(time.time() * 1000)
            worker = StandaloneWorkerProcess(*files).start()
            resumed.append((stored, restarted_at))
            seen = len(topic.events)
            wait_until(lambda n=seen: topic.read() > n + 500, 90, message="events after the restart")
        writer.halt.set()
        writer.join(10)
        assert writer.error is None, writer.error
        last = writer.next_id - 1
        wait_until(lambda: topic.read() > 0 and last in set(topic.ids()), 90, message=f"row {last}")
    finally:
        writer.halt.set()
        worker.stop()
        topic.consumer.close()
        broker.stop()
        server.remove()

    ids = topic.ids()
    assert set(ids) == set(range(1, last + 1))  # nothing lost
    assert list(dict.fromkeys(ids)) == sorted(set(ids))  # first appearances in commit order
    values = [v for _, v in topic.events]
    repeated = 0
    for stored, restarted_at in resumed:
        # The dead worker's stored offset names an event; the new worker's first event is the next one,
        # so what it sends again is exactly what the dead one had sent after that offset.
        first_new = next(i for i, (ts, _) in enumerate(topic.events) if ts >= restarted_at)
        at = max(
            i
            for i in range(first_new)
            if values[i]["source"]["lsn"] == stored["lsn"] and values[i]["source"]["txId"] == stored["txId"]
        )
        assert values[first_new]["after"] == values[at + 1]["after"], (
            stored,
            values[at + 1],
            values[first_new],
        )
        assert values[first_new]["source"]["lsn"] == values[at + 1]["source"]["lsn"]
        repeated += first_new - (at + 1)
    assert len(ids) - len(set(ids)) == repeated


def server_rows(server: PostgresServer, query: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(server.dsn("loaddb"), autocommit=True) as conn:
        return list(conn.execute(query).fetchall())  # type: ignore[arg-type]
