"""``console-producer``/``console-consumer --value-format avro``, as Confluent's
``kafka-avro-console-*``: lines of Avro JSON in, Confluent's wire format on the topic (read
back by Confluent's AvroDeserializer), Avro JSON printed back out."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

from broker.server import EmbeddedBroker
from schema_registry.server import RegistryServer
from tests.schema_registry.support import running_registry
from tests.support import unique
from tests.tools.test_broker_tools import ok, tool

SCHEMA = {
    "type": "record",
    "name": "Payment",
    "fields": [{"name": "id", "type": "long"}, {"name": "note", "type": ["null", "string"], "default": None}],
}


@pytest.fixture
def registry(shared_broker: EmbeddedBroker) -> Iterator[RegistryServer]:
    with running_registry(shared_broker.bootstrap) as server:
        yield server


def test_avro_lines_in_and_out(shared_broker: EmbeddedBroker, registry: RegistryServer) -> None:
    topic = unique("payments")
    admin = AdminClient({"bootstrap.servers": shared_broker.bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    b = f"--bootstrap-server {shared_broker.bootstrap} --topic {topic}"
    avro = f"--value-format avro --schema-registry {registry.url}"
    lines = '{"id": 1, "note": null}\n{"id": 2, "note": {"string": "paid"}}\n'
    ok(f"console-producer {b} {avro} --value-schema '{json.dumps(SCHEMA)}'", stdin=lines)

    consumer = Consumer({"bootstrap.servers": shared_broker.bootstrap, "group.id": unique("g")})
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    records = consumer.consume(2, 10)
    consumer.close()
    deserializer = AvroDeserializer(SchemaRegistryClient({"url": registry.url}))
    ctx = SerializationContext(topic, MessageField.VALUE)
    assert [deserializer(m.value(), ctx) for m in records] == [
        {"id": 1, "note": None},
        {"id": 2, "note": "paid"},
    ]

    printed = ok(f"console-consumer {b} {avro} --from-beginning --max-messages 2").stdout.splitlines()
    assert [json.loads(line) for line in printed] == [
        {"id": 1, "note": None},
        {"id": 2, "note": {"string": "paid"}},
    ]


def test_a_line_that_does_not_match_the_schema_is_refused(
    shared_broker: EmbeddedBroker, registry: RegistryServer
) -> None:
    topic = unique("payments")
    admin = AdminClient({"bootstrap.servers": shared_broker.bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    b = f"--bootstrap-server {shared_broker.bootstrap} --topic {topic}"
    result = tool(
        f"console-producer {b} --value-format avro --schema-registry {registry.url} "
        f"--value-schema '{json.dumps(SCHEMA)}'",
        stdin='{"id": "not a number"}\n',
    )
    assert result.returncode != 0
    assert "line 1 does not match the Avro schema" in result.stderr
