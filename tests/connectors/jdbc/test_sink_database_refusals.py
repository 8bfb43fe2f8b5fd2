"""Records only the database refuses (a CHECK constraint the sink cannot know), in batches
among others: each reaches the dead letter queue as it was consumed, the batch is written
again record by record so its other records and the later batches are written, and the
offsets committed cover them all. (Any sink that writes a batch while the next is
converted must keep this too.)"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from sluiceway.embedded import EmbeddedConnect
from tests.connectors.jdbc.test_sink_worker import CONFLUENT, JSON, committed, key, order, rows
from tests.support import unique

N = 300
# The offsets (and ids) of the records the database refuses, spread over the batches.
BAD = (40, 90, 160, 240)


@pytest.fixture(scope="module")
def connect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedConnect]:
    with EmbeddedConnect(
        tmp_path_factory.mktemp("jdbc-sink-refused"), {"offset.flush.interval.ms": "200"}
    ) as c:
        yield c


def offset_of(message: Any) -> int:
    value = dict(message.headers() or [])["__connect.errors.offset"]
    assert isinstance(value, bytes)
    return int(value)


def test_records_the_database_refuses_reach_the_dead_letter_queue_as_consumed(
    connect: EmbeddedConnect, tmp_path: Path
) -> None:
    topic, name, dlq = unique("orders"), unique("jdbc-refused"), unique("dlq")
    db = tmp_path / "shop.db"
    engine = sa.create_engine(f"sqlite:///{db}")
    with engine.begin() as c:
        # The sink cannot know this rule: only the database refuses the record.
        c.execute(
            sa.text(
                f'CREATE TABLE "{topic}" (id INTEGER PRIMARY KEY, product VARCHAR(40), '
                "quantity INTEGER CHECK (quantity > 0), placed TIMESTAMP)"
            )
        )
    engine.dispose()
    records: list[tuple[bytes, bytes]] = [
        (key(i), order(i, f"tea {i}", 0 if i in BAD else i + 1)) for i in range(N)
    ]
    connect.produce(topic, records)
    connect.create_connector(
        name,
        {
            "connector.class": CONFLUENT,
            "topics": topic,
            "connection.url": f"jdbc:sqlite:{db}",
            "insert.mode": "upsert",
            "pk.mode": "record_key",
            "key.converter": JSON,
            "value.converter": JSON,
            # Batches of up to 100: several batches, each with its refused record.
            "consumer.override.max.poll.records": "100",
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": dlq,
            "errors.deadletterqueue.topic.replication.factor": "1",
            "errors.deadletterqueue.context.headers.enable": "true",
        },
    )
    connect.wait_for(lambda: committed(connect, name) == N, 60, "all records committed")
    assert rows(f"sqlite:///{db}", f'SELECT id, quantity FROM "{topic}" ORDER BY id') == [
        (i, i + 1) for i in range(N) if i not in BAD
    ]
    dead = sorted(connect.consume(dlq, len(BAD)), key=lambda m: m.key() or b"")
    # The bytes consumed, not the records serialized again.
    assert [(m.key(), m.value()) for m in dead] == sorted(records[i] for i in BAD)
    dead.sort(key=offset_of)
    for m, i in zip(dead, BAD, strict=True):
        headers: dict[str, Any] = dict(m.headers() or [])
        message = bytes(headers["__connect.errors.exception.message"]).decode()
        assert f"{topic}-0@{i}" in message and "refused it" in message
        assert headers["__connect.errors.offset"] == str(i).encode()
    assert connect.status(name)["tasks"][0]["state"] == "RUNNING"
    connect.request("DELETE", f"/connectors/{name}")
