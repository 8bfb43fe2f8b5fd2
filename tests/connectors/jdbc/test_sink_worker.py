"""The JDBC sinks in a real worker fed through the real broker: a published Confluent config
(upsert into PostgreSQL by record key, auto.create, delete.enabled) loaded unchanged, a
Debezium config applying change events, a bad record routed to the dead letter queue while
the others are written, the validate endpoint refusing bad configs, and a database that is
down failing the task after its retries, with the password masked."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import sqlalchemy as sa

from sluiceway.embedded import EmbeddedConnect
from tests.databases import PostgresServer
from tests.support import free_port, unique

CONFLUENT = "io.confluent.connect.jdbc.JdbcSinkConnector"
DEBEZIUM = "io.debezium.connector.jdbc.JdbcSinkConnector"
JSON = "org.apache.kafka.connect.json.JsonConverter"

KEY_SCHEMA = {
    "type": "struct",
    "optional": False,
    "fields": [{"field": "id", "type": "int32", "optional": False}],
}
VALUE_SCHEMA = {
    "type": "struct",
    "optional": False,
    "name": "orders.Value",
    "fields": [
        {"field": "id", "type": "int32", "optional": False},
        {"field": "product", "type": "string", "optional": True},
        {"field": "quantity", "type": "int32", "optional": True},
        {
            "field": "placed",
            "type": "int64",
            "optional": True,
            "name": "org.apache.kafka.connect.data.Timestamp",
        },
    ],
}


def key(i: int) -> bytes:
    return orjson.dumps({"schema": KEY_SCHEMA, "payload": {"id": i}})


def order(i: int, product: str, quantity: int) -> bytes:
    payload = {"id": i, "product": product, "quantity": quantity, "placed": 1_700_000_000_000 + i}
    return orjson.dumps({"schema": VALUE_SCHEMA, "payload": payload})


@pytest.fixture(scope="module")
def connect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedConnect]:
    with EmbeddedConnect(
        tmp_path_factory.mktemp("jdbc-sink-worker"), {"offset.flush.interval.ms": "200"}
    ) as c:
        yield c


@pytest.fixture
def pg_database(postgres: PostgresServer) -> str:
    name = f"sink{uuid.uuid4().hex[:10]}"
    postgres.execute(f"CREATE DATABASE {name}")
    return name


def rows(url: str, query: str) -> list[tuple[Any, ...]]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as c:
            if not sa.inspect(c).has_table(query.split(" FROM ")[1].split()[0].strip('"')):
                return []
            return [tuple(r) for r in c.execute(sa.text(query)).all()]
    finally:
        engine.dispose()


def committed(connect: EmbeddedConnect, name: str) -> int | None:
    offsets = connect.request("GET", f"/connectors/{name}/offsets").json()["offsets"]
    return offsets[0]["offset"]["kafka_offset"] if offsets else None


def test_a_published_confluent_config_upserts_and_deletes_in_postgres(
    connect: EmbeddedConnect, postgres: PostgresServer, pg_database: str
) -> None:
    topic, name = unique("orders"), unique("jdbc-sink")
    # Confluent's documented upsert example, as published: JSON with schemas, key as primary key.
    config = {
        "connector.class": CONFLUENT,
        "tasks.max": "1",
        "topics": topic,
        "connection.url": f"jdbc:postgresql://127.0.0.1:{postgres.port}/{pg_database}",
        "connection.user": "postgres",
        "connection.password": "not-checked-by-trust-auth",
        "insert.mode": "upsert",
        "pk.mode": "record_key",
        "pk.fields": "id",
        "auto.create": "true",
        "delete.enabled": "true",
        "key.converter": JSON,
        "key.converter.schemas.enable": "true",
        "value.converter": JSON,
        "value.converter.schemas.enable": "true",
    }
    connect.produce(
        topic,
        [
            (key(1), order(1, "tea", 2)),
            (key(2), order(2, "coffee", 1)),
            (key(1), order(1, "tea", 5)),  # an update of order 1
            (key(3), order(3, "cocoa", 7)),
            (key(2), None),  # a tombstone: order 2 is deleted
        ],
    )
    connect.create_connector(name, config)
    connect.wait_for(lambda: committed(connect, name) == 5, 60, "all five records committed")
    url = postgres.url(pg_database)
    got = rows(url, f'SELECT id, product, quantity, placed FROM "{topic}" ORDER BY id')
    assert [(r[0], r[1], r[2]) for r in got] == [(1, "tea", 5), (3, "cocoa", 7)]
    assert got[0][3].isoformat() == "2023-11-14T22:13:20.001000"  # the Timestamp, as UTC wall-clock time
    assert connect.status(name)["tasks"][0]["state"] == "RUNNING"
    connect.request("DELETE", f"/connectors/{name}")


def envelope_schema() -> dict[str, Any]:
    row = {
        "type": "struct",
        "optional": True,
        "name": "shop.inventory.items.Value",
        "fields": [
            {"field": "id", "type": "int32", "optional": False},
            {"field": "name", "type": "string", "optional": True},
            {"field": "added", "type": "int32", "optional": True, "name": "io.debezium.time.Date"},
            {"field": "seen", "type": "int64", "optional": True, "name": "io.debezium.time.MicroTimestamp"},
        ],
    }
    return {
        "type": "struct",
        "optional": False,
        "name": "shop.inventory.items.Envelope",
        "fields": [
            {**row, "field": "before"},
            {**row, "field": "after"},
            {"field": "op", "type": "string", "optional": False},
            {"field": "ts_ms", "type": "int64", "optional": True},
        ],
    }


def event(op: str, i: int, name: str | None) -> bytes:
    after = None if op == "d" else {"id": i, "name": name, "added": 19_000, "seen": 1_700_000_000_000_001}
    before = {"id": i, "name": name, "added": 19_000, "seen": 1} if op in ("u", "d") else None
    payload = {"before": before, "after": after, "op": op, "ts_ms": 1}
    return orjson.dumps({"schema": envelope_schema(), "payload": payload})


def test_a_debezium_config_applies_change_events(connect: EmbeddedConnect, tmp_path: Path) -> None:
    topic, name = unique("shop.inventory.items"), unique("dbz-sink")
    db = tmp_path / "replica.db"
    connect.produce(
        topic,
        [
            (key(1), event("r", 1, "bolt")),
            (key(2), event("c", 2, "nut")),
            (key(1), event("u", 1, "big bolt")),
            (key(2), event("d", 2, None)),
            (key(2), None),  # Debezium's tombstone after the delete
        ],
    )
    connect.create_connector(
        name,
        {
            "connector.class": DEBEZIUM,
            "topics": topic,
            "connection.url": f"jdbc:sqlite:{db}",
            "insert.mode": "upsert",
            "primary.key.mode": "record_key",
            "delete.enabled": "true",
            "schema.evolution": "basic",
            "collection.name.format": "items",
            "key.converter": JSON,
            "value.converter": JSON,
        },
    )
    connect.wait_for(lambda: committed(connect, name) == 5, 60, "all five events committed")
    assert rows(f"sqlite:///{db}", "SELECT id, name, added, seen FROM items") == [
        (1, "big bolt", "2022-01-08", "2023-11-14 22:13:20.000001")
    ]
    connect.request("DELETE", f"/connectors/{name}")


def test_a_bad_record_goes_to_the_dead_letter_queue_and_the_others_are_written(
    connect: EmbeddedConnect, tmp_path: Path
) -> None:
    topic, name, dlq = unique("orders"), unique("jdbc-dlq"), unique("dlq")
    db = tmp_path / "shop.db"
    engine = sa.create_engine(f"sqlite:///{db}")
    with engine.begin() as c:
        c.execute(
            sa.text(
                f'CREATE TABLE "{topic}" (id INTEGER PRIMARY KEY, product VARCHAR(6), '
                "quantity INTEGER, placed TIMESTAMP)"
            )
        )
    engine.dispose()
    connect.produce(
        topic,
        [
            (key(1), order(1, "tea", 1)),
            (key(2), order(2, "a product name too long", 1)),
            (key(3), order(3, "cocoa", 3)),
        ],
    )
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
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": dlq,
            "errors.deadletterqueue.topic.replication.factor": "1",
            "errors.deadletterqueue.context.headers.enable": "true",
        },
    )
    connect.wait_for(lambda: committed(connect, name) == 3, 60, "all three records committed")
    assert rows(f"sqlite:///{db}", f'SELECT id, product FROM "{topic}" ORDER BY id') == [
        (1, "tea"),
        (3, "cocoa"),
    ]
    [dead] = connect.consume(dlq, 1)
    assert dead.key() == key(2)
    headers: dict[str, Any] = dict(dead.headers() or [])
    message = bytes(headers["__connect.errors.exception.message"]).decode()
    assert f"{topic}-0@1" in message and "column product" in message and "too long" in message
    assert headers["__connect.errors.offset"] == b"1"
    assert connect.status(name)["tasks"][0]["state"] == "RUNNING"
    connect.request("DELETE", f"/connectors/{name}")


def test_validate_refuses_bad_configs_naming_the_key(connect: EmbeddedConnect) -> None:
    def errors(plugin: str, config: dict[str, str]) -> dict[str, list[str]]:
        r = connect.request(
            "PUT", f"/connector-plugins/{plugin}/config/validate", {"connector.class": plugin, **config}
        )
        assert r.status_code == 200, r.text
        return {c["value"]["name"]: c["value"]["errors"] for c in r.json()["configs"] if c["value"]["errors"]}

    base = {"name": "v", "topics": "t", "connection.url": "jdbc:sqlite::memory:"}
    assert errors(CONFLUENT, base) == {}
    found = errors(CONFLUENT, {**base, "delete.enabled": "true", "pk.mode": "record_value"})
    assert "record_key" in found["delete.enabled"][0]
    found = errors(CONFLUENT, {**base, "insert.mode": "upsert", "connection.url": "jdbc:oracle:thin:@x"})
    assert set(found) == {"pk.mode", "connection.url"}
    found = errors(DEBEZIUM, {**base, "schema.evolution": "sometimes", "primary.key.mode": "record_key"})
    assert set(found) == {"schema.evolution"}


def test_a_database_that_is_down_fails_the_task_after_the_retries_with_the_password_masked(
    connect: EmbeddedConnect,
) -> None:
    topic, name = unique("orders"), unique("jdbc-down")
    connect.produce(topic, [(key(1), order(1, "tea", 1))])
    connect.create_connector(
        name,
        {
            "connector.class": CONFLUENT,
            "topics": topic,
            "connection.url": f"jdbc:postgresql://127.0.0.1:{free_port()}/shop?user=app&password=s3cret",
            "auto.create": "true",
            "max.retries": "2",
            "retry.backoff.ms": "50",
            "key.converter": JSON,
            "value.converter": JSON,
        },
    )
    status = connect.wait_for_state(name, "RUNNING", 1, task_state="FAILED", timeout=60)
    trace = status["tasks"][0]["trace"]
    assert "after 2 retries" in trace and "postgresql+psycopg://app:***@127.0.0.1" in trace
    assert "s3cret" not in trace
    connect.request("DELETE", f"/connectors/{name}")


def test_a_database_restart_is_ridden_out_by_the_retries(
    connect: EmbeddedConnect, caplog: pytest.LogCaptureFixture
) -> None:
    topic, name = unique("orders"), unique("jdbc-restart")
    with PostgresServer() as pg:  # its own server: stopping the session's would disturb other tests
        pg.execute("CREATE DATABASE shop")
        connect.create_connector(
            name,
            {
                "connector.class": CONFLUENT,
                "topics": topic,
                "connection.url": f"jdbc:postgresql://127.0.0.1:{pg.port}/shop?user=postgres",
                "insert.mode": "upsert",
                "pk.mode": "record_key",
                "auto.create": "true",
                "max.retries": "100",
                "retry.backoff.ms": "100",
                "exactly.once.enabled": "true",
                "key.converter": JSON,
                "value.converter": JSON,
            },
        )
        connect.produce(topic, [(key(1), order(1, "tea", 1))])
        connect.wait_for(lambda: committed(connect, name) == 1, 60, "the first record committed")
        pg.stop()
        with caplog.at_level("WARNING", logger="connectors.jdbc.sink.task"):
            connect.produce(topic, [(key(2), order(2, "coffee", 2)), (key(1), order(1, "tea", 3))])
            connect.wait_for(lambda: "retries left" in caplog.text, 60, "a failed write retried")
            pg.start()
            connect.wait_for(lambda: committed(connect, name) == 3, 60, "all three records committed")
        got = rows(pg.url("shop"), f'SELECT id, product, quantity FROM "{topic}" ORDER BY id')
        assert got == [(1, "tea", 3), (2, "coffee", 2)]
        assert connect.status(name)["tasks"][0]["state"] == "RUNNING"
        connect.request("DELETE", f"/connectors/{name}")
