"""A worker with ``embedded.broker.enable`` and ``embedded.schema.registry.listeners`` runs an
Avro pipeline in one process: a file's lines become Avro records whose schema the worker's
own registry holds, and Confluent's AvroDeserializer reads them back through it."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

from sluiceway.embedded import EmbeddedConnect
from tests.support import free_port


def test_an_avro_pipeline_in_one_process(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    source = tmp_path / "in.txt"
    source.write_text("".join(f"line {i}\n" for i in range(20)))
    settings = {
        "embedded.schema.registry.listeners": url,
        "embedded.schema.registry.kafkastore.topic": "_schemas",
    }
    with EmbeddedConnect(tmp_path / "w", settings) as connect:
        assert httpx.get(f"{url}/subjects").json() == []
        connect.create_connector(
            "lines",
            {
                "connector.class": "FileStreamSource",
                "file": str(source),
                "topic": "lines",
                "transforms": "hoist",
                "transforms.hoist.type": "org.apache.kafka.connect.transforms.HoistField$Value",
                "transforms.hoist.field": "line",
                "value.converter": "io.confluent.connect.avro.AvroConverter",
                "value.converter.schema.registry.url": url,
            },
        )
        consumer = Consumer({"bootstrap.servers": connect.bootstrap, "group.id": "check"})
        consumer.assign([TopicPartition("lines", 0, OFFSET_BEGINNING)])
        deserializer = AvroDeserializer(SchemaRegistryClient({"url": url}))
        ctx = SerializationContext("lines", MessageField.VALUE)
        got: list[str] = []
        deadline = time.monotonic() + 30
        while len(got) < 20 and time.monotonic() < deadline:
            for m in consumer.consume(20, 0.5):
                if m.error() is None:
                    got.append(deserializer(m.value(), ctx)["line"])
        consumer.close()
        assert got == [f"line {i}" for i in range(20)]
        assert httpx.get(f"{url}/subjects").json() == ["lines-value"]
    # The registry stopped with the worker.
    try:
        httpx.get(f"{url}/subjects", timeout=2)
        raise AssertionError("the embedded registry still answers after the worker stopped")
    except httpx.HTTPError:
        pass
