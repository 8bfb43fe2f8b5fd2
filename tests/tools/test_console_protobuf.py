"""``console-producer``/``console-consumer --value-format protobuf``, as Confluent's
``kafka-protobuf-console-*``: lines in Protobuf's JSON mapping, a .proto schema compiled by
the registry, Confluent's wire format with message indexes on the topic (read back by
Confluent's ProtobufDeserializer), the messages printed back in the JSON mapping."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf.message_factory import GetMessageClass

from broker.server import EmbeddedBroker
from connect.converters.protobuf import load_descriptors
from connect.converters.registry_client import RegistryClient
from schema_registry.server import RegistryServer
from tests.schema_registry.support import running_registry
from tests.support import unique
from tests.tools.test_broker_tools import ok, tool

PROTO = 'syntax = "proto3"; package shop; message Payment { int64 id = 1; string note = 2; }'


@pytest.fixture
def registry(shared_broker: EmbeddedBroker) -> Iterator[RegistryServer]:
    with running_registry(shared_broker.bootstrap) as server:
        yield server


def test_protobuf_lines_in_and_out(shared_broker: EmbeddedBroker, registry: RegistryServer) -> None:
    topic = unique("payments")
    admin = AdminClient({"bootstrap.servers": shared_broker.bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    b = f"--bootstrap-server {shared_broker.bootstrap} --topic {topic}"
    fmt = f"--value-format protobuf --schema-registry {registry.url}"
    ok(
        f"console-producer {b} {fmt} --value-schema '{PROTO}'",
        stdin='{"id": 1}\n{"id": "2", "note": "paid"}\n',
    )

    consumer = Consumer({"bootstrap.servers": shared_broker.bootstrap, "group.id": unique("g")})
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    records = consumer.consume(2, 10)
    consumer.close()
    latest = SchemaRegistryClient({"url": registry.url}).get_latest_version(f"{topic}-value")
    assert latest.schema.schema_type == "PROTOBUF"
    client = RegistryClient({"schema.registry.url": registry.url})
    _, pool = load_descriptors(client, client.schema(latest.schema_id, "serialized"))
    payment = GetMessageClass(pool.FindMessageTypeByName("shop.Payment"))  # type: ignore[no-untyped-call]
    deserializer = ProtobufDeserializer(payment, {"use.deprecated.format": False})
    ctx = SerializationContext(topic, MessageField.VALUE)
    read = [deserializer(m.value(), ctx) for m in records]
    assert [(m.id, m.note) for m in read] == [(1, ""), (2, "paid")]

    printed = ok(f"console-consumer {b} {fmt} --from-beginning --max-messages 2").stdout.splitlines()
    assert [json.loads(line) for line in printed] == [{"id": "1"}, {"id": "2", "note": "paid"}]


def test_a_line_that_is_not_a_message_stops_the_producer(
    shared_broker: EmbeddedBroker, registry: RegistryServer
) -> None:
    topic = unique("payments")
    admin = AdminClient({"bootstrap.servers": shared_broker.bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    b = f"--bootstrap-server {shared_broker.bootstrap} --topic {topic}"
    result = tool(
        f"console-producer {b} --value-format protobuf --schema-registry {registry.url} "
        f"--value-schema '{PROTO}'",
        stdin='{"id": 1, "nope": true}\n',
    )
    assert result.returncode != 0
    assert "line 1 does not match the Protobuf schema" in result.stderr
