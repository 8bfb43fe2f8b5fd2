"""The standard CDC stack on Sluiceway: PostgreSQL CDC → AvroConverter (our Schema Registry)
→ the S3 sink's AvroFormat, or → Elasticsearch, in one worker. Debezium's envelopes go through Avro intact:
Confluent's AvroDeserializer reads them off the topic, and the S3 objects read back with
fastavro hold every change in order."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import time
from collections.abc import Iterator
from typing import Any

import fastavro
import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

from schema_registry.server import RegistryServer
from sluiceway.embedded import EmbeddedConnect
from tests.connectors.jdbc.test_cdc_support import CdcDatabase, cdc_db
from tests.contract_servers.elasticsearch import ElasticsearchContractServer
from tests.contract_servers.s3 import MotoS3Server
from tests.schema_registry.support import running_registry
from tests.support import unique

FIXTURES = (cdc_db,)
AVRO = "io.confluent.connect.avro.AvroConverter"


@pytest.fixture(scope="module")
def connect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedConnect]:
    with EmbeddedConnect(tmp_path_factory.mktemp("cdc-avro"), {"offset.flush.interval.ms": "200"}) as c:
        yield c


@pytest.fixture(scope="module")
def registry(connect: EmbeddedConnect) -> Iterator[RegistryServer]:
    with running_registry(connect.bootstrap) as server:
        yield server


def consume(bootstrap: str, topic: str, url: str, count: int) -> list[Any]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("check")})
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    deserializer = AvroDeserializer(SchemaRegistryClient({"url": url}))
    ctx = SerializationContext(topic, MessageField.VALUE)
    out: list[Any] = []
    deadline = time.monotonic() + 60
    while len(out) < count and time.monotonic() < deadline:
        for m in consumer.consume(50, 0.5):
            if m.error() is None:
                out.append(None if m.value() is None else deserializer(m.value(), ctx))
    consumer.close()
    return out


def test_cdc_to_avro_to_s3(connect: EmbeddedConnect, registry: RegistryServer, cdc_db: CdcDatabase) -> None:
    cdc_db.run(
        "CREATE TABLE accounts (id int PRIMARY KEY, owner text NOT NULL, balance numeric(10,2), opened date)",
        "INSERT INTO accounts VALUES (1, 'ada', 10.50, '2026-01-02'), (2, 'bob', NULL, NULL)",
    )
    name = unique("cdc")
    prefix = name.replace("-", "_")
    connect.create_connector(
        name,
        {
            "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
            "key.converter": AVRO,
            "key.converter.schema.registry.url": registry.url,
            "value.converter": AVRO,
            "value.converter.schema.registry.url": registry.url,
            **cdc_db.config(prefix),
        },
    )
    topic = f"{prefix}.public.accounts"
    try:
        snapshot = consume(connect.bootstrap, topic, registry.url, 2)
        assert [e["op"] for e in snapshot] == ["r", "r"]
        cdc_db.run(
            "INSERT INTO accounts VALUES (3, 'cy', 7.25, '2026-11-28')",
            "UPDATE accounts SET balance = 99.99 WHERE id = 1",
            "DELETE FROM accounts WHERE id = 2",
        )
        events = consume(connect.bootstrap, topic, registry.url, 6)  # ... d and its tombstone
        assert [None if e is None else e["op"] for e in events] == ["r", "r", "c", "u", "d", None]
        created = events[2]
        # Debezium's adaptive time mode: a date is io.debezium.time.Date, days since the epoch
        # (an Avro int carrying that connect.name, as with Debezium and Confluent's converter).
        days = (dt.date(2026, 11, 28) - dt.date(1970, 1, 1)).days
        assert created["after"] == {
            "id": 3,
            "owner": "cy",
            "balance": decimal.Decimal("7.25"),
            "opened": days,
        }
        assert created["source"]["table"] == "accounts" and created["source"]["snapshot"] == "false"
        assert events[3]["after"]["balance"] == decimal.Decimal("99.99")
        assert events[4]["before"]["id"] == 2 and events[4]["after"] is None
        subjects = SchemaRegistryClient({"url": registry.url}).get_subjects()
        assert {f"{topic}-key", f"{topic}-value"} <= set(subjects)

        with MotoS3Server() as s3_server:
            s3 = s3_server.client()
            bucket = unique("lake").lower()
            s3.create_bucket(Bucket=bucket)
            sink = unique("s3")
            connect.create_connector(
                sink,
                {
                    "connector.class": "io.confluent.connect.s3.S3SinkConnector",
                    "topics": topic,
                    "s3.bucket.name": bucket,
                    "s3.region": "us-east-1",
                    "store.url": s3_server.url,
                    "aws.access.key.id": "testing",
                    "aws.secret.access.key": "testing",
                    "format.class": "io.confluent.connect.s3.format.avro.AvroFormat",
                    "flush.size": "5",
                    "behavior.on.null.values": "ignore",
                    "value.converter": AVRO,
                    "value.converter.schema.registry.url": registry.url,
                },
            )

            def keys() -> list[str]:
                return [o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])]

            connect.wait_for(lambda: len(keys()) == 1, 60, "the S3 object of the first five records")
            connect.request("DELETE", f"/connectors/{sink}")
            body = s3.get_object(Bucket=bucket, Key=keys()[0])["Body"].read()
            rows: list[Any] = list(fastavro.reader(io.BytesIO(body)))
            assert [r["op"] for r in rows] == ["r", "r", "c", "u", "d"]
            assert rows[2]["after"]["balance"] == decimal.Decimal("7.25")
            assert rows[4]["before"]["id"] == 2
    finally:
        connect.request("DELETE", f"/connectors/{name}")


def test_cdc_to_avro_to_elasticsearch(
    connect: EmbeddedConnect, registry: RegistryServer, cdc_db: CdcDatabase
) -> None:
    """Debezium's usual pipeline into a search index: the envelope unwrapped to the row
    (ExtractNewRecordState), the key's id as the document id, deletes as tombstones."""
    cdc_db.run(
        "CREATE TABLE people (id int PRIMARY KEY, name text NOT NULL, city text)",
        "INSERT INTO people VALUES (1, 'ada', 'London'), (2, 'bob', NULL)",
    )
    name = unique("cdc")
    prefix = name.replace("-", "_")
    avro = {"schema.registry.url": registry.url}
    connect.create_connector(
        name,
        {
            "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
            "key.converter": AVRO,
            "value.converter": AVRO,
            **{f"key.converter.{k}": v for k, v in avro.items()},
            **{f"value.converter.{k}": v for k, v in avro.items()},
            **cdc_db.config(prefix),
        },
    )
    topic = f"{prefix}.public.people"
    sink = unique("es")
    try:
        with ElasticsearchContractServer() as es:
            connect.create_connector(
                sink,
                {
                    "connector.class": "io.confluent.connect.elasticsearch.ElasticsearchSinkConnector",
                    "topics": topic,
                    "connection.url": es.url,
                    "key.ignore": "false",
                    "schema.ignore": "true",
                    "behavior.on.null.values": "delete",
                    "key.converter": AVRO,
                    "value.converter": AVRO,
                    **{f"key.converter.{k}": v for k, v in avro.items()},
                    **{f"value.converter.{k}": v for k, v in avro.items()},
                    "transforms": "unwrap,id",
                    "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
                    "transforms.unwrap.drop.tombstones": "false",
                    "transforms.id.type": "org.apache.kafka.connect.transforms.ExtractField$Key",
                    "transforms.id.field": "id",
                    "linger.ms": "5",
                },
            )
            connect.wait_for(lambda: len(es.documents(topic)) == 2, 60, "the snapshot's two rows indexed")
            cdc_db.run(
                "INSERT INTO people VALUES (3, 'cy', 'Oslo')",
                "UPDATE people SET city = 'Paris' WHERE id = 1",
                "DELETE FROM people WHERE id = 2",
            )
            expected = {
                "1": {"id": 1, "name": "ada", "city": "Paris"},
                "3": {"id": 3, "name": "cy", "city": "Oslo"},
            }
            connect.wait_for(lambda: es.documents(topic) == expected, 60, "the changes in the index")
            connect.request("DELETE", f"/connectors/{sink}")
    finally:
        connect.request("DELETE", f"/connectors/{name}")
