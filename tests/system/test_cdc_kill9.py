"""The PostgreSQL CDC connector in a standalone worker process, killed with SIGKILL mid-stream
under a steady write load and restarted: every change arrives, and what arrives twice is only
what had been sent but not yet acknowledged (the restarted worker resumes exactly after the
offset the dead ones had stored).

Each worker marks its records with a header naming it (an InsertHeader transform), so the
test knows which worker sent what without relying on timestamps. The offset a worker starts
from is the one in the offsets file when the worker before it died: usually stored by that
worker, but one killed before its first offset flush (it caught up a backlog in a burst)
stored nothing, and the next worker resumes from an older worker's offset and sends again
everything after it, from both dead workers."""

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
WORKER_HEADER = "sluiceway.test.worker"


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
    """Everything on the topic, read as it arrives: (the worker that sent it, value payload)."""

    def __init__(self, bootstrap: str) -> None:
        self.consumer = Consumer(
            {"bootstrap.servers": bootstrap, "group.id": unique("kill9"), "enable.auto.commit": False}
        )
        self.consumer.assign([TopicPartition(TOPIC, 0, OFFSET_BEGINNING)])
        self.events: list[tuple[int, dict[str, Any]]] = []

    def read(self) -> int:
        for m in self.consumer.consume(1000, 0.2):
            if m.error() is None and m.value() is not None:
                worker = dict(m.headers() or ())[WORKER_HEADER]
                self.events.append((int(worker), json.loads(m.value())))
        return len(self.events)

    def ids(self) -> list[int]:
        return [v["after"]["id"] for _, v in self.events if v["op"] in ("c", "r")]


def stored_offset(path: Path) -> dict[str, Any] | None:
    """The offset the standalone workers last stored for the connector (their offsets file,
    replaced atomically), None before the first."""
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    values = [json.loads(v) for k, v in data.items() if json.loads(k)[0] == "cdc"]
    return dict(values[0]) if values else None


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
    worker_props = write_props(
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
    )

    def start_worker(number: int) -> StandaloneWorkerProcess:
        """Worker ``number`` (0 first), its records marked with a header saying so."""
        cdc_props = write_props(
            tmp_path / f"cdc-{number}.properties",
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
                "transforms": "worker",
                "transforms.worker.type": "org.apache.kafka.connect.transforms.InsertHeader",
                "transforms.worker.header": WORKER_HEADER,
                "transforms.worker.value.literal": str(number),
            },
        )
        return StandaloneWorkerProcess(worker_props, cdc_props).start()

    writer = Writer(server.dsn("loaddb"))
    topic = Topic(broker.bootstrap)
    worker = start_worker(0)
    try:
        wait_until(
            lambda: bool(server_rows(server, "SELECT 1 FROM pg_replication_slots WHERE slot_name = 'kill9'")),
            60,
            message="the replication slot",
        )
        writer.start()
        resumed: list[dict[str, Any]] = []  # resumed[n - 1]: the stored offset worker n started from
        for number, target in enumerate((2000, 5000), start=1):
            wait_until(lambda t=target: topic.read() >= t, 90, message=f"{target} events")
            # Kill mid-stream, not before any offset was stored (a restart without one snapshots again).
            wait_until(lambda: stored_offset(offsets) is not None, 30, message="a stored offset")
            worker.kill9()
            stored = stored_offset(offsets)  # no worker runs: exactly what the next one starts from
            assert stored is not None
            resumed.append(stored)
            worker = start_worker(number)
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
    assert len(ids) == len(topic.events)  # inserts only
    assert set(ids) == set(range(1, last + 1))  # nothing lost
    assert list(dict.fromkeys(ids)) == sorted(set(ids))  # first appearances in commit order
    sent: list[list[int]] = [[] for _ in range(len(resumed) + 1)]  # the ids each worker sent, in order
    for number, value in topic.events:
        sent[number].append(value["after"]["id"])
    # Ids follow commit order, so "exactly the changes after X, in order" is a run of consecutive ids.
    assert sent[0] == list(range(1, len(sent[0]) + 1))
    repeated = 0
    for number, stored in enumerate(resumed, start=1):
        before = [v for n, v in topic.events if n < number]
        # The stored offset names a change Kafka had: offsets never run ahead of the acknowledgements.
        named = {
            v["after"]["id"]
            for v in before
            if v["source"]["lsn"] == stored["lsn"] and v["source"]["txId"] == stored["txId"]
        }
        assert len(named) == 1, (number, stored, named)
        (acknowledged,) = named
        # The worker resumes exactly after the stored offset and sends nothing twice itself.
        mine = sent[number]
        assert mine == list(range(acknowledged + 1, acknowledged + 1 + len(mine))), (
            number,
            stored,
            acknowledged,
            mine[:5],
        )
        # So it sends again exactly what the dead workers had sent after the stored offset (as far as
        # it got itself): the unacknowledged, and none of the acknowledged.
        earlier = {v["after"]["id"] for v in before}
        again = [i for i in mine if i in earlier]
        assert again == sorted(i for i in earlier if acknowledged < i <= acknowledged + len(mine))
        repeated += len(again)
    assert len(ids) - len(set(ids)) == repeated


def server_rows(server: PostgresServer, query: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(server.dsn("loaddb"), autocommit=True) as conn:
        return list(conn.execute(query).fetchall())  # type: ignore[arg-type]
