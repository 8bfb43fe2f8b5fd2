"""MySqlConnector and MariaDbConnector end to end: a real worker and broker (EmbeddedConnect),
a real MariaDB with a row-based binlog, events read back as the JsonConverter (schemas
enabled) wrote them; validation over REST; a task killed mid-stream resumes without loss."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

from sluiceway.embedded import EmbeddedConnect
from tests.connectors.jdbc.test_cdc_support import Connectors
from tests.connectors.jdbc.test_mysql_support import BinlogDatabase, binlog_db
from tests.support import unique

FIXTURES = (binlog_db,)
JSON = "org.apache.kafka.connect.json.JsonConverter"


@pytest.fixture(scope="module")
def connect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedConnect]:
    with EmbeddedConnect(tmp_path_factory.mktemp("mysql-worker"), {"offset.flush.interval.ms": "200"}) as c:
        yield c


class Cdc(Connectors):
    """The MySQL/MariaDB connectors of one test."""

    def start(self, db: BinlogDatabase, connector_class: str, **settings: str) -> tuple[str, str]:
        name = unique("mysql")
        prefix = name.replace("-", "_")
        config = {
            "connector.class": connector_class,
            "key.converter": JSON,
            "value.converter": JSON,
            **db.config(prefix, self.connect.bootstrap, **settings),
        }
        self.create(name, config)
        return name, prefix


@pytest.fixture
def cdc(connect: EmbeddedConnect, binlog_db: BinlogDatabase) -> Iterator[Cdc]:
    made = Cdc(connect)
    yield made
    made.close()


def history(bootstrap: str, topic: str, n: int) -> list[dict[str, Any]]:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": unique("h"), "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    out: list[dict[str, Any]] = []
    try:
        for _ in range(100):
            out += [json.loads(m.value() or b"null") for m in consumer.consume(100, 0.2) if m.error() is None]
            if len(out) >= n:
                break
    finally:
        consumer.close()
    return out


@pytest.mark.parametrize(
    ("connector_class", "flavour"),
    [
        ("io.debezium.connector.mysql.MySqlConnector", "mysql"),
        ("io.debezium.connector.mariadb.MariaDbConnector", "mariadb"),
    ],
)
def test_snapshot_stream_ddl_and_tombstones_through_a_worker(
    cdc: Cdc, binlog_db: BinlogDatabase, connector_class: str, flavour: str
) -> None:
    binlog_db.run(
        "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL, price DECIMAL(8,2))",
        "INSERT INTO items VALUES (1, 'pen', 1.50), (2, 'ink', NULL)",
    )
    name, prefix = cdc.start(binlog_db, connector_class)
    topic = cdc.reader(f"{prefix}.{binlog_db.name}.items")
    snapshot = topic.count(2)
    assert [e.brief() for e in snapshot] == [
        ("r", {"id": 1}, None, {"id": 1, "name": "pen", "price": "AJY="}, "first"),
        ("r", {"id": 2}, None, {"id": 2, "name": "ink", "price": None}, "last"),
    ]
    binlog_db.run(
        "INSERT INTO items VALUES (3, 'cap', NULL)",
        "UPDATE items SET price = 2 WHERE id = 1",
        "DELETE FROM items WHERE id = 2",
        "ALTER TABLE items ADD COLUMN stock INT NOT NULL DEFAULT 0",
        "INSERT INTO items VALUES (4, 'nib', NULL, 5)",
    )
    events = topic.until(lambda e: e.key == {"id": 4})[2:]
    assert [e.brief() for e in events] == [
        ("c", {"id": 3}, None, {"id": 3, "name": "cap", "price": None}, "false"),
        (
            "u",
            {"id": 1},
            {"id": 1, "name": "pen", "price": "AJY="},
            {"id": 1, "name": "pen", "price": "AMg="},
            "false",
        ),
        ("d", {"id": 2}, {"id": 2, "name": "ink", "price": None}, None, "false"),
        ("tombstone", {"id": 2}),
        ("c", {"id": 4}, None, {"id": 4, "name": "nib", "price": None, "stock": 5}, "false"),
    ]
    source = events[0].source
    assert {k: source[k] for k in ("connector", "name", "db", "table", "server_id", "row")} == {
        "connector": flavour,
        "name": prefix,
        "db": binlog_db.name,
        "table": "items",
        "server_id": 1,
        "row": 0,
    }
    assert source["file"].startswith("mysql-bin.") and source["pos"] > 0 and source["gtid"].startswith("0-1-")
    envelope = events[0].value_schema
    assert envelope["name"] == f"{prefix}.{binlog_db.name}.items.Envelope"
    assert envelope["fields"][2]["name"] == "io.debezium.connector.mysql.Source"
    assert [f["field"] for f in envelope["fields"][2]["fields"]] == [
        "version", "connector", "name", "ts_ms", "snapshot", "db", "sequence", "ts_us", "ts_ns",
        "table", "server_id", "gtid", "file", "pos", "row", "thread", "query",
    ]  # fmt: skip
    # DDL: in the schema history topic and as schema change events on <prefix>.
    changes = cdc.reader(prefix).until(lambda e: "ADD COLUMN" in (e.value or {}).get("ddl", ""))
    assert changes[-1].value["databaseName"] == binlog_db.name
    recorded = history(cdc.connect.bootstrap, f"history.{prefix}", 2)
    assert any("ADD COLUMN" in r["ddl"] for r in recorded)
    assert cdc.connect.status(name)["tasks"][0]["state"] == "RUNNING"


def test_config_validation_over_rest(connect: EmbeddedConnect) -> None:
    config = {
        "name": "validated",
        "connector.class": "io.debezium.connector.mysql.MySqlConnector",
        "database.hostname": "localhost",
        "database.user": "u",
        "database.password": "s3cret",
        "database.server.id": "0",
        "topic.prefix": "p",
        "snapshot.mode": "schema_only",
        "snapshot.locking.mode": "sometimes",
        "decimal.handling.mode": "exact",
        "table.include.list": "a\\.b",
        "table.exclude.list": "c",
        "schema.history.internal.kafka.topic": "h",
        "schema.history.internal.kafka.bootstrap.servers": "localhost:9092",
    }
    r = connect.request("PUT", "/connector-plugins/MySqlConnector/config/validate", config)
    assert r.status_code == 200, r.text
    body = r.json()
    errors = {c["value"]["name"]: c["value"]["errors"] for c in body["configs"] if c["value"]["errors"]}
    assert set(errors) == {
        "database.server.id",
        "snapshot.locking.mode",
        "decimal.handling.mode",
        "table.exclude.list",
    }
    assert "s3cret" not in r.text
    config["connector.class"] = "io.debezium.connector.mariadb.MariaDbConnector"
    r = connect.request("PUT", "/connector-plugins/MariaDbConnector/config/validate", config)
    assert r.status_code == 200 and r.json()["error_count"] == 4
