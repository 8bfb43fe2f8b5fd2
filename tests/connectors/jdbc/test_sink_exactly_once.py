"""Exactly once into the table: a worker process writing with ``insert.mode=insert`` (no key,
so a redelivered record would be a second row) is killed with SIGKILL before it ever
commits consumer offsets to Kafka; the restarted worker resumes from the offsets the
database holds, committed with the rows, and the table ends with every record once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import sqlalchemy as sa
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from tests.support import BrokerProcess, StandaloneWorkerProcess, free_port, unique, wait_until, write_props

JSON = "org.apache.kafka.connect.json.JsonConverter"
SCHEMA = {
    "type": "struct",
    "optional": False,
    "fields": [
        {"field": "n", "type": "int64", "optional": False},
        {"field": "text", "type": "string", "optional": True},
    ],
}


def produce(bootstrap: str, topic: str, numbers: range) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for n in numbers:
        p.produce(
            topic,
            key=str(n).encode(),
            value=orjson.dumps({"schema": SCHEMA, "payload": {"n": n, "text": f"#{n}"}}),
        )
    assert p.flush(30) == 0


def counts(db: Path, topic: str) -> tuple[int, int, int]:
    """(rows, distinct numbers, next offsets stored), zeros for tables not there yet."""
    engine = sa.create_engine(f"sqlite:///{db}")
    try:
        with engine.connect() as c:
            inspector = sa.inspect(c)
            total = distinct = 0
            stored: Any = 0
            if inspector.has_table(topic):
                total, distinct = c.execute(
                    sa.text(f'SELECT COUNT(*), COUNT(DISTINCT n) FROM "{topic}"')
                ).one()
            if inspector.has_table("__connect_sink_offsets"):
                stored = c.execute(
                    sa.text("SELECT COALESCE(SUM(next_offset), 0) FROM __connect_sink_offsets")
                ).scalar()
            return int(total), int(distinct), int(stored or 0)
    finally:
        engine.dispose()


def test_a_killed_worker_resumes_from_the_offsets_in_the_database(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "broker").start()
    try:
        topic = unique("events")
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
        db = tmp_path / "target.db"
        files = [
            write_props(
                tmp_path / "worker.properties",
                {
                    "bootstrap.servers": broker.bootstrap,
                    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
                    "value.converter": JSON,
                    "offset.storage.file.filename": str(tmp_path / "offsets"),
                    # Consumer offsets are never committed to Kafka before the kill.
                    "offset.flush.interval.ms": "600000",
                    "consumer.session.timeout.ms": "3000",
                    "consumer.heartbeat.interval.ms": "1000",
                    "listeners": f"http://127.0.0.1:{free_port()}",
                },
            ),
            write_props(
                tmp_path / "sink.properties",
                {
                    "name": "events-to-sqlite",
                    "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",
                    "topics": topic,
                    "connection.url": f"jdbc:sqlite:{db}",
                    "insert.mode": "insert",
                    "pk.mode": "none",
                    "auto.create": "true",
                    "exactly.once.enabled": "true",
                    "batch.size": "50",
                },
            ),
        ]
        produce(broker.bootstrap, topic, range(300))
        worker = StandaloneWorkerProcess(*files).start()
        try:
            wait_until(lambda: counts(db, topic)[0] >= 300, 60, interval=0.1, message="300 rows")
            worker.kill9()
            produce(broker.bootstrap, topic, range(300, 500))
            worker = StandaloneWorkerProcess(*files).start()
            # Offsets are stored with their rows: once they cover all 500 records, any
            # redelivered row would be in the table already.
            wait_until(lambda: counts(db, topic)[2] == 500, 90, interval=0.1, message="offsets at 500")
            assert counts(db, topic) == (500, 500, 500)
        finally:
            worker.stop()
    finally:
        broker.stop()
