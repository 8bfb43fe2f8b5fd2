"""``/sluiceway/topics/{name}/records`` on a real worker with its embedded Schema Registry:
records written by Confluent's own ``AvroSerializer`` come back decoded (key and value, with
their schema id and subject), plain text as text, binary as base64, a framed record whose id
the registry does not know as its raw bytes with the reason; paging by partition and offset,
and Kafka Connect's 404 body for an unknown topic or partition; and, in process, the windows
read from each partition and how undecoded bytes are shown."""

from __future__ import annotations

import base64
import json
import struct
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from hypothesis import given
from hypothesis import strategies as st

from connect.rest.topic_records import Decoder, converter_factory, plain, windows
from connect.runtime.plugins import Plugins
from sluiceway.embedded import EmbeddedConnect
from tests.console.test_schemas_view import registry_of
from tests.console.test_topics_api import create_topic
from tests.support import unique

PAYMENT = """{"type": "record", "name": "Payment", "namespace": "bank", "fields": [
  {"name": "id", "type": "long"}, {"name": "payee", "type": "string"},
  {"name": "memo", "type": ["null", "string"], "default": null}, {"name": "amount", "type": "double"},
  {"name": "raw", "type": "bytes"}]}"""
ACCOUNT = """{"type": "record", "name": "Account", "namespace": "bank",
  "fields": [{"name": "iban", "type": "string"}]}"""
UNKNOWN_ID = 987_654
STAMP = 1_700_000_000_000


def produce_samples(worker: EmbeddedConnect, topic: str) -> SchemaRegistryClient:
    """Offsets 0-3 of ``topic``'s only partition: Avro key and value, text with headers,
    binary, framed with an id nobody registered."""
    create_topic(worker, topic, 1)
    registry = SchemaRegistryClient({"url": registry_of(worker)})
    values = AvroSerializer(registry, PAYMENT)
    keys = AvroSerializer(registry, ACCOUNT)
    payment = {"id": 2**40, "payee": "Zoë", "memo": None, "amount": 12.5, "raw": b"\x00\xff"}
    producer = Producer({"bootstrap.servers": worker.bootstrap})
    producer.produce(
        topic,
        key=keys({"iban": "DE02"}, SerializationContext(topic, MessageField.KEY)),
        value=values(payment, SerializationContext(topic, MessageField.VALUE)),
        timestamp=STAMP,
    )
    headers: list[tuple[str, str | bytes | None]] = [
        ("trace", b"abc-1"),
        ("blob", b"\xff\xfe"),
        ("empty", None),
    ]
    producer.produce(topic, key="plain-key", value="hello, wörld", headers=headers, timestamp=STAMP + 1)
    producer.produce(topic, value=b"\xff\xfe\x01\x80", timestamp=STAMP + 2)
    producer.produce(topic, value=b"\x00" + struct.pack(">I", UNKNOWN_ID) + b"\x02xyz", timestamp=STAMP + 3)
    assert producer.flush(30) == 0
    return registry


def get(worker: EmbeddedConnect, topic: str, query: str = "") -> dict[str, Any]:
    r = worker.request("GET", f"/sluiceway/topics/{topic}/records{query}")
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def test_records_are_decoded_shown_as_text_or_base64(worker: EmbeddedConnect) -> None:
    topic = unique("payments")
    registry = produce_samples(worker, topic)
    value_id = registry.get_latest_version(f"{topic}-value").schema_id
    key_id = registry.get_latest_version(f"{topic}-key").schema_id
    assert value_id is not None and key_id is not None

    body = get(worker, topic)

    assert body["partitions"] == [
        {
            "partition": 0,
            "earliest_offset": 0,
            "latest_offset": 4,
            "start_offset": 0,
            "end_offset": 4,
            "error": None,
        }
    ]
    avro, text, binary, unknown = body["records"]
    assert [r["offset"] for r in body["records"]] == [0, 1, 2, 3]
    assert avro["timestamp"] == STAMP and avro["timestamp_type"] == "CreateTime"
    assert avro["value"] == {
        "format": "AVRO",
        "schema_id": value_id,
        "subjects": sorted(registry.get_subjects_by_schema_id(value_id)),  # every test's -value
        # The JsonConverter's rendering: bytes in base64.
        "data": {"id": 2**40, "payee": "Zoë", "memo": None, "amount": 12.5, "raw": "AP8="},
        "error": None,
    }
    assert avro["key"] == {
        "format": "AVRO",
        "schema_id": key_id,
        "subjects": sorted(registry.get_subjects_by_schema_id(key_id)),
        "data": {"iban": "DE02"},
        "error": None,
    }
    assert avro["headers"] == []
    assert f"{topic}-value" in avro["value"]["subjects"] and f"{topic}-key" in avro["key"]["subjects"]

    assert text["key"]["format"] == "text" and text["key"]["data"] == "plain-key"
    assert text["value"] == {
        "format": "text",
        "data": "hello, wörld",
        "schema_id": None,
        "subjects": None,
        "error": None,
    }
    assert [
        (h["name"], h["value"] and (h["value"]["format"], h["value"]["data"])) for h in text["headers"]
    ] == [
        ("trace", ("text", "abc-1")),
        ("blob", ("base64", base64.b64encode(b"\xff\xfe").decode())),
        ("empty", None),
    ]

    assert binary["key"] is None
    assert binary["value"]["format"] == "base64"
    assert base64.b64decode(binary["value"]["data"]) == b"\xff\xfe\x01\x80"

    shown = unknown["value"]
    assert shown["format"] == "base64" and shown["schema_id"] == UNKNOWN_ID
    assert base64.b64decode(shown["data"]) == b"\x00" + struct.pack(">I", UNKNOWN_ID) + b"\x02xyz"
    assert str(UNKNOWN_ID) in shown["error"] and "40403" in shown["error"]  # the registry's "not found"


def test_paging_by_partition_and_offset(worker: EmbeddedConnect) -> None:
    topic = unique("paged")
    create_topic(worker, topic, 2)
    producer = Producer({"bootstrap.servers": worker.bootstrap})
    for i in range(10):
        producer.produce(topic, value=f"p1-{i}", partition=1)
    producer.produce(topic, value="p0-0", partition=0)
    assert producer.flush(30) == 0

    newest = get(worker, topic, "?limit=3")  # each partition's last 3
    assert [(r["partition"], r["offset"], r["value"]["data"]) for r in newest["records"]] == [
        (0, 0, "p0-0"),
        (1, 7, "p1-7"),
        (1, 8, "p1-8"),
        (1, 9, "p1-9"),
    ]
    page = get(worker, topic, "?partition=1&offset=2&limit=3")
    assert [r["value"]["data"] for r in page["records"]] == ["p1-2", "p1-3", "p1-4"]
    assert [(p["partition"], p["start_offset"], p["end_offset"]) for p in page["partitions"]] == [(1, 2, 5)]
    past_the_end = get(worker, topic, "?partition=1&offset=50")
    assert past_the_end["records"] == [] and past_the_end["partitions"][0]["start_offset"] == 10


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/sluiceway/topics/no-such-topic/records", "Topic no-such-topic not found."),
        ("/sluiceway/topics/__consumer_offsets/records?partition=9999", "Partition 9999 of topic"),
    ],
)
def test_unknown_topic_or_partition_is_kafka_connects_404(
    worker: EmbeddedConnect, path: str, message: str
) -> None:
    r = worker.request("GET", path)
    assert r.status_code == 404
    assert r.json()["error_code"] == 404 and r.json()["message"].startswith(message)


def test_a_schema_type_without_a_converter_shows_the_raw_bytes_and_why(worker: EmbeddedConnect) -> None:
    # A worker whose plugins hold no converter at all: the registry knows the id, nothing reads it.
    topic = unique("unread")
    registry = SchemaRegistryClient({"url": registry_of(worker)})
    data = AvroSerializer(registry, ACCOUNT)(
        {"iban": "FR76"}, SerializationContext(topic, MessageField.VALUE)
    )
    assert data is not None
    decoder = Decoder(registry_of(worker), converter_factory(Plugins(discover=False)))
    try:
        shown = decoder.show(topic, data, is_key=False)
    finally:
        decoder.close()
    assert shown is not None and shown.format == "base64" and base64.b64decode(shown.data) == data
    assert shown.subjects is not None and f"{topic}-value" in shown.subjects  # one id, every subject
    assert shown.error == (
        "no converter for AVRO schemas is installed (io.confluent.connect.avro.AvroConverter)"
    )


@given(
    earliest=st.integers(0, 1000),
    size=st.integers(0, 1000),
    offset=st.none() | st.integers(0, 3000),
    limit=st.integers(1, 500),
)
def test_windows_stay_within_the_partition_and_the_limit(
    earliest: int, size: int, offset: int | None, limit: int
) -> None:
    latest = earliest + size
    ((start, end),) = windows({0: (earliest, latest)}, offset, limit).values()
    assert earliest <= start <= end <= latest
    if offset is None:  # the newest: as many as there are, up to the limit, ending at the end
        assert (start, end) == (max(latest - limit, earliest), latest)
    else:  # from the offset, moved into what the partition keeps
        assert start == min(max(offset, earliest), latest) and end == min(start + limit, latest)


@given(st.binary(max_size=64))
def test_plain_bytes_are_text_when_they_are_utf8_else_base64(data: bytes) -> None:
    shown = plain(data)
    back = shown.data.encode("utf-8") if shown.format == "text" else base64.b64decode(shown.data)
    assert back == data
    try:
        data.decode("utf-8")
        assert shown.format == "text"
    except UnicodeDecodeError:
        assert shown.format == "base64"


def test_json_schema_values_decode_through_the_json_schema_converter(worker: EmbeddedConnect) -> None:
    """The converter for a framed value is chosen by its schema's type in the registry."""
    topic = unique("people")
    registry = SchemaRegistryClient({"url": registry_of(worker)})
    person = {
        "type": "object",
        "title": "Person",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
        "required": ["name", "age"],
    }
    data = JSONSerializer(json.dumps(person), registry)(
        {"name": "Ada", "age": 36}, SerializationContext(topic, MessageField.VALUE)
    )
    decoder = Decoder(registry_of(worker), converter_factory(Plugins()))
    try:
        shown = decoder.show(topic, data, is_key=False)
    finally:
        decoder.close()
    assert shown is not None and shown.error is None
    assert (shown.format, shown.data) == ("JSON", {"name": "Ada", "age": 36})
