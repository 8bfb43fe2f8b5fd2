"""``console-producer``/``console-consumer --value-format json-schema``, as Confluent's
``kafka-json-schema-console-*``: JSON lines checked against the schema, Confluent's wire
format on the topic (read back by Confluent's JSONDeserializer), the documents printed
back out."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.json_schema import JSONDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

from broker.server import EmbeddedBroker
from schema_registry.server import RegistryServer
from tests.schema_registry.support import running_registry
from tests.support import unique
from tests.tools.test_broker_tools import ok, tool

SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Payment",
    "type": "object",
    "properties": {"id": {"type": "integer"}, "note": {"type": ["string", "null"]}},
    "required": ["id"],
}


@pytest.fixture
def registry(shared_broker: EmbeddedBroker) -> Iterator[RegistryServer]:
    with running_registry(shared_broker.bootstrap) as server:
        yield server


def _topic(bootstrap: str) -> str:
    topic = unique("payments")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    return topic


def test_json_lines_in_and_out(shared_broker: EmbeddedBroker, registry: RegistryServer) -> None:
    topic = _topic(shared_broker.bootstrap)
    b = f"--bootstrap-server {shared_broker.bootstrap} --topic {topic}"
    fmt = f"--value-format json-schema --schema-registry {registry.url}"
    lines = '{"id": 1, "note": null}\n{"id": 2, "note": "paid"}\n'
    ok(f"console-producer {b} {fmt} --value-schema '{json.dumps(SCHEMA)}'", stdin=lines)

    consumer = Consumer({"bootstrap.servers": shared_broker.bootstrap, "group.id": unique("g")})
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    records = consumer.consume(2, 10)
    consumer.close()
    client = SchemaRegistryClient({"url": registry.url})
    assert client.get_latest_version(f"{topic}-value").schema.schema_type == "JSON"
    deserializer = JSONDeserializer(None, schema_registry_client=client)
    ctx = SerializationContext(topic, MessageField.VALUE)
    assert [deserializer(m.value(), ctx) for m in records] == [
        {"id": 1, "note": None},
        {"id": 2, "note": "paid"},
    ]

    printed = ok(f"console-consumer {b} {fmt} --from-beginning --max-messages 2").stdout.splitlines()
    assert [json.loads(line) for line in printed] == [{"id": 1, "note": None}, {"id": 2, "note": "paid"}]


def test_a_line_the_schema_refuses_stops_the_producer_with_the_reason(
    shared_broker: EmbeddedBroker, registry: RegistryServer
) -> None:
    topic = _topic(shared_broker.bootstrap)
    b = f"--bootstrap-server {shared_broker.bootstrap} --topic {topic}"
    result = tool(
        f"console-producer {b} --value-format json-schema --schema-registry {registry.url} "
        f"--value-schema '{json.dumps(SCHEMA)}'",
        stdin='{"id": 1}\n{"id": "seven"}\n',
    )
    assert result.returncode != 0
    assert "line 2 does not match the JSON schema at id" in result.stderr
