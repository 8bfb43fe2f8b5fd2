"""The S3 sink writing Avro container files (``AvroFormat``) from records that Confluent's
``AvroSerializer`` wrote and the AvroConverter reads through our Schema Registry: a schema
change starts a new object, and the files read back with fastavro hold every record."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import fastavro
import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from schema_registry.server import RegistryServer
from sluiceway.embedded import EmbeddedConnect
from tests.connectors.s3.test_sink import committed, objects, sink_config
from tests.contract_servers.s3 import MotoS3Server
from tests.schema_registry.support import running_registry
from tests.support import unique

V1 = {"type": "record", "name": "Order", "namespace": "shop", "fields": [{"name": "id", "type": "long"}]}
V2 = {**V1, "fields": [*V1["fields"], {"name": "note", "type": "string", "default": ""}]}


@pytest.fixture(scope="module")
def registry(connect: EmbeddedConnect) -> Iterator[RegistryServer]:
    with running_registry(connect.bootstrap) as server:
        yield server


def test_avro_objects_rotate_on_a_schema_change(
    connect: EmbeddedConnect, registry: RegistryServer, s3_server: MotoS3Server, bucket: str, s3: Any
) -> None:
    topic, name = unique("orders"), unique("s3")
    admin = AdminClient({"bootstrap.servers": connect.bootstrap})  # kept: the future needs its client
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    client = SchemaRegistryClient({"url": registry.url})
    ctx = SerializationContext(topic, MessageField.VALUE)
    first, second = AvroSerializer(client, json.dumps(V1)), AvroSerializer(client, json.dumps(V2))
    p = Producer({"bootstrap.servers": connect.bootstrap, "linger.ms": 5})
    for i in range(25):
        value = first({"id": i}, ctx) if i < 12 else second({"id": i, "note": f"n{i}"}, ctx)
        p.produce(topic, value=value)
    assert p.flush(30) == 0
    connect.create_connector(
        name,
        sink_config(
            s3_server.url,
            bucket,
            topic,
            **{
                "format.class": "io.confluent.connect.s3.format.avro.AvroFormat",
                "avro.codec": "deflate",
                "value.converter": "io.confluent.connect.avro.AvroConverter",
                "value.converter.schema.registry.url": registry.url,
            },
        ),
    )
    # flush.size 10: [0, 9]; [10, 11] ends where the schema changes; [12, 21]; 22-24 wait.
    connect.wait_for(lambda: committed(connect, name) == {0: 22}, 30, "three rotations")
    found = objects(s3, bucket)
    assert sorted(found) == [f"topics/{topic}/partition=0/{topic}+0+{s:010d}.avro" for s in (0, 10, 12)]
    rows: list[dict[str, Any]] = []
    for key in sorted(found):
        reader = fastavro.reader(io.BytesIO(found[key]))
        assert reader.codec == "deflate"
        fields = [f["name"] for f in reader.writer_schema["fields"]]  # type: ignore[index]
        assert fields == (["id"] if key.endswith(("0000000000.avro", "0000000010.avro")) else ["id", "note"])
        rows += list(reader)
    assert rows == [{"id": i} for i in range(12)] + [{"id": i, "note": f"n{i}"} for i in range(12, 22)]


def test_backward_compatibility_projects_older_records_into_the_newer_schemas_file(
    connect: EmbeddedConnect, registry: RegistryServer, s3_server: MotoS3Server, bucket: str, s3: Any
) -> None:
    """schema.compatibility=BACKWARD (Confluent's storage sinks): version 2 starts a file;
    records of version 1 after it join that file, projected (``note`` from its default)."""
    topic, name = unique("orders"), unique("s3")
    admin = AdminClient({"bootstrap.servers": connect.bootstrap})  # kept: the future needs its client
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    client = SchemaRegistryClient({"url": registry.url})
    ctx = SerializationContext(topic, MessageField.VALUE)
    first, second = AvroSerializer(client, json.dumps(V1)), AvroSerializer(client, json.dumps(V2))
    p = Producer({"bootstrap.servers": connect.bootstrap, "linger.ms": 5})
    newer = set(range(6, 12)) | set(range(18, 25))
    for i in range(25):
        p.produce(
            topic, value=second({"id": i, "note": f"n{i}"}, ctx) if i in newer else first({"id": i}, ctx)
        )
    assert p.flush(30) == 0
    connect.create_connector(
        name,
        sink_config(
            s3_server.url,
            bucket,
            topic,
            **{
                "format.class": "io.confluent.connect.s3.format.avro.AvroFormat",
                "schema.compatibility": "BACKWARD",
                "value.converter": "io.confluent.connect.avro.AvroConverter",
                "value.converter.schema.registry.url": registry.url,
            },
        ),
    )
    # [0, 5] ends where version 2 arrives; [6, 15] is flush.size, version 1's 12-15 projected; 16-24 wait.
    connect.wait_for(lambda: committed(connect, name) == {0: 16}, 30, "two rotations")
    found = objects(s3, bucket)
    assert sorted(found) == [f"topics/{topic}/partition=0/{topic}+0+{s:010d}.avro" for s in (0, 6)]
    rows: list[dict[str, Any]] = []
    for key in sorted(found):
        rows += list(fastavro.reader(io.BytesIO(found[key])))
    assert rows == (
        [{"id": i} for i in range(6)]
        + [{"id": i, "note": f"n{i}"} for i in range(6, 12)]
        + [{"id": i, "note": ""} for i in range(12, 16)]
    )
