"""The "sluiceway" source decoding Schema Registry-framed JSON Schema and Protobuf
(``value.format=json-schema`` / ``protobuf``): a real broker, a real registry, records
written by Confluent's own ``JSONSerializer`` and ``ProtobufSerializer`` (the judges of the
wire format, the message class compiled at test time), read into typed Spark columns; a
bad record of each under PERMISSIVE; writers whose id is not the reader's."""

from __future__ import annotations

import base64
import datetime as dt
import functools
import json
import struct
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka.schema_registry import Schema as RegistrySchema
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.json_schema import JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, timestamp_pb2
from google.protobuf.descriptor_pool import DescriptorPool
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass
from pyspark.sql import Row, SparkSession
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from broker.server import EmbeddedBroker
from schema_registry.server import RegistryServer
from spark_sink.reader.options import OptionError, parse_options
from spark_sink.reader.registry_options import FieldFormat, RegistryOptions
from spark_sink.reader.registry_plan import DecodePlan, FieldPlan, plan_decoding
from spark_sink.reader.registry_values import MalformedRecordError, RecordDecoder
from tests.schema_registry.support import start_registry
from tests.spark_sink.test_reader import create_topic
from tests.spark_sink.test_reader_registry import decode_in_process, produce
from tests.support import unique

UTC = dt.UTC
ITEM: dict[str, Any] = {
    "type": "object",
    "title": "Item",
    "properties": {
        "id": {"type": "integer"},
        "name": {"type": "string"},
        "price": {"type": "number"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "address": {"type": "object", "properties": {"city": {"type": "string"}}},
        "note": {"oneOf": [{"type": "null"}, {"type": "string"}]},
    },
    "required": ["id", "name"],
}
# Milliseconds: Connect's Timestamp (ProtobufData's google.protobuf.Timestamp) holds no finer.
AT = dt.datetime(2026, 3, 4, 5, 6, 7, 123000, tzinfo=UTC)


def item(i: int) -> dict[str, Any]:
    return {
        "id": i,
        "name": f"n{i}",
        "price": i + 0.5,
        "tags": [f"t{i}", "x"],
        "address": {"city": f"c{i}"},
        "note": None if i % 2 else f"note{i}",
    }


@functools.cache
def item_class(extra: bool = False) -> type[Message]:
    """shop.Item {int64 id = 1; string name = 2; google.protobuf.Timestamp when = 3; repeated
    string tags = 4; Address address = 5 (message Address {string city = 1})}; ``extra``:
    shop.Item2, without tags and with int32 qty = 6."""
    F = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(
        name="shop/item2.proto" if extra else "shop/item.proto",
        package="shop",
        syntax="proto3",
        dependency=["google/protobuf/timestamp.proto"],
    )
    name = "Item2" if extra else "Item"
    message = file.message_type.add(name=name)
    message.field.add(name="id", number=1, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    message.field.add(name="name", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    message.field.add(
        name="when",
        number=3,
        type=F.TYPE_MESSAGE,
        type_name=".google.protobuf.Timestamp",
        label=F.LABEL_OPTIONAL,
    )
    if extra:
        message.field.add(name="qty", number=6, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    else:
        message.field.add(name="tags", number=4, type=F.TYPE_STRING, label=F.LABEL_REPEATED)
    address = message.nested_type.add(name="Address")
    address.field.add(name="city", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    message.field.add(
        name="address",
        number=5,
        type=F.TYPE_MESSAGE,
        type_name=f".shop.{name}.Address",
        label=F.LABEL_OPTIONAL,
    )
    pool = DescriptorPool()
    pool.AddSerializedFile(timestamp_pb2.DESCRIPTOR.serialized_pb)  # type: ignore[no-untyped-call]
    pool.Add(file)  # type: ignore[no-untyped-call]
    return GetMessageClass(pool.FindMessageTypeByName(f"shop.{name}"))  # type: ignore[no-untyped-call]


def message(cls: type[Message], i: int) -> Message:
    m = cls(id=i, name=f"n{i}", tags=[f"t{i}", "x"])
    m.address.city = f"c{i}"  # type: ignore[attr-defined]
    m.when.FromDatetime(AT + dt.timedelta(seconds=i))  # type: ignore[attr-defined]
    return m


@pytest.fixture(scope="module")
def registry(shared_broker: EmbeddedBroker) -> Iterator[RegistryServer]:
    server = start_registry(shared_broker.bootstrap)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def items_json(shared_broker: EmbeddedBroker, registry: RegistryServer) -> str:
    """Items 0-1 by Confluent's JSONSerializer, then a document that does not fit the schema
    (a string id, framed with the schema's id), then a tombstone."""
    topic = unique("items-json")
    create_topic(shared_broker.bootstrap, topic, 1)
    serialize = JSONSerializer(json.dumps(ITEM), SchemaRegistryClient({"url": registry.url}))
    ctx = SerializationContext(topic, MessageField.VALUE)
    good = [serialize(item(i), ctx) for i in range(2)]
    assert good[0] is not None
    bad = good[0][:5] + b'{"id": "seven", "name": "x"}'
    produce(shared_broker.bootstrap, topic, [(b"k0", good[0]), (b"k1", good[1]), (b"k2", bad), (b"k3", None)])
    return topic


@pytest.fixture(scope="module")
def items_protobuf(shared_broker: EmbeddedBroker, registry: RegistryServer) -> str:
    """Items 0-1 by Confluent's ProtobufSerializer, then bytes that are no Item after the
    schema's header and message index, then a tombstone."""
    topic = unique("items-pb")
    create_topic(shared_broker.bootstrap, topic, 1)
    cls = item_class()
    serialize = ProtobufSerializer(
        cls, SchemaRegistryClient({"url": registry.url}), {"use.deprecated.format": False}
    )
    ctx = SerializationContext(topic, MessageField.VALUE)
    good = [serialize(message(cls, i), ctx) for i in range(2)]
    assert good[0] is not None
    bad = good[0][:6] + b"\x0a\xff\xff"  # field 1 as a length of 32767 bytes that are not there
    produce(shared_broker.bootstrap, topic, [(b"k0", good[0]), (b"k1", good[1]), (b"k2", bad), (b"k3", None)])
    return topic


def options(bootstrap: str, registry: RegistryServer, topic: str, fmt: str, **more: str) -> dict[str, str]:
    return {
        "kafka.bootstrap.servers": bootstrap,
        "subscribe": topic,
        "value.format": fmt,
        "schema.registry.url": registry.url,
        **more,
    }


def load(spark: SparkSession, opts: dict[str, str]) -> Any:
    reader = spark.read.format("sluiceway")
    for k, v in opts.items():
        reader = reader.option(k, v)
    return reader.load()


# -- Spark -------------------------------------------------------------------------------


def test_spark_reads_json_schema_values_into_typed_columns(
    spark: SparkSession, shared_broker: EmbeddedBroker, registry: RegistryServer, items_json: str
) -> None:
    df = load(spark, options(shared_broker.bootstrap, registry, items_json, "json-schema", mode="PERMISSIVE"))
    columns = [(f.name, f.dataType) for f in df.schema.fields[:7]]
    assert columns == [
        ("key", BinaryType()),
        ("id", LongType()),
        ("name", StringType()),
        ("price", DoubleType()),
        ("tags", ArrayType(StringType())),
        ("address", StructType([StructField("city", StringType())])),
        ("note", StringType()),
    ]
    rows = (
        df.orderBy("offset")
        .select("key", "id", "name", "price", "tags", "address", "note", "_corrupt_record")
        .collect()
    )
    good = [
        Row(
            key=f"k{i}".encode(),
            id=i,
            name=f"n{i}",
            price=i + 0.5,
            tags=[f"t{i}", "x"],
            address=Row(city=f"c{i}"),
            note=item(i)["note"],
            _corrupt_record=None,
        )
        for i in range(2)
    ]
    assert rows[:2] == good
    assert rows[3] == Row(
        key=b"k3", **dict.fromkeys(["id", "name", "price", "tags", "address", "note"]), _corrupt_record=None
    )
    bad = rows[2]
    assert (bad.key, bad.id, bad.name) == (b"k2", None, None)
    assert bad._corrupt_record.value.endswith(b'{"id": "seven", "name": "x"}')
    assert "does not fit the reader's schema id" in bad._corrupt_record.error
    assert "/id" in bad._corrupt_record.error


def test_spark_reads_protobuf_values_into_typed_columns(
    spark: SparkSession, shared_broker: EmbeddedBroker, registry: RegistryServer, items_protobuf: str
) -> None:
    df = load(
        spark, options(shared_broker.bootstrap, registry, items_protobuf, "protobuf", mode="PERMISSIVE")
    )
    assert [(f.name, f.dataType) for f in df.schema.fields[1:6]] == [
        ("id", LongType()),
        ("name", StringType()),
        ("when", TimestampType()),
        ("tags", ArrayType(StringType())),
        ("address", StructType([StructField("city", StringType())])),
    ]
    rows = (
        df.orderBy("offset")
        .select("key", "id", "name", "when", "tags", "address", "_corrupt_record")
        .collect()
    )
    good = [
        Row(
            key=f"k{i}".encode(),
            id=i,
            name=f"n{i}",
            # Spark hands out timestamps in the session's time zone (UTC here), naive.
            when=(AT + dt.timedelta(seconds=i)).replace(tzinfo=None),
            tags=[f"t{i}", "x"],
            address=Row(city=f"c{i}"),
            _corrupt_record=None,
        )
        for i in range(2)
    ]
    assert rows[:2] == good
    assert rows[3] == Row(
        key=b"k3", **dict.fromkeys(["id", "name", "when", "tags", "address"]), _corrupt_record=None
    )
    bad = rows[2]
    assert (bad.key, bad.id, bad.name) == (b"k2", None, None)
    assert bad._corrupt_record.value.endswith(b"\x0a\xff\xff")
    assert "is not a shop.Item message" in bad._corrupt_record.error


# -- in process --------------------------------------------------------------------------


def test_json_documents_of_another_writer_id_read_with_the_reader_schema_and_failfast_names_the_record(
    shared_broker: EmbeddedBroker, registry: RegistryServer, items_json: str
) -> None:
    # A reader schema of its own subject: a field the documents lack, one they have dropped.
    other = {
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "city": {"type": "string"},
            "address": ITEM["properties"]["address"],
        },
    }
    reader_id = SchemaRegistryClient({"url": registry.url}).register_schema(
        unique("json-reader"), RegistrySchema(json.dumps(other), "JSON")
    )
    opts = options(
        shared_broker.bootstrap, registry, items_json, "json-schema", **{"value.schema.id": str(reader_id)}
    )
    rows = decode_in_process({**opts, "mode": "permissive"}, items_json, 2)
    assert [(r["id"], r["city"], r["address"], r["_corrupt_record"]) for r in rows] == [
        (i, None, {"city": f"c{i}"}, None) for i in range(2)
    ]
    with pytest.raises(
        MalformedRecordError, match=rf"topic {items_json} partition 0 offset 2: value: the JSON"
    ):
        decode_in_process(opts, items_json, 3)


def test_protobuf_messages_of_another_writer_id_fill_the_readers_columns_by_name(
    shared_broker: EmbeddedBroker, registry: RegistryServer, items_protobuf: str
) -> None:
    # Item2 (no tags, a qty) as the reader: Item's tags are dropped, qty is null.
    client = SchemaRegistryClient({"url": registry.url})
    subject = unique("pb-reader")
    ctx = SerializationContext(subject, MessageField.VALUE)
    cls2 = item_class(extra=True)
    ProtobufSerializer(cls2, client, {"use.deprecated.format": False})(message_without_tags(cls2), ctx)
    reader_id = client.get_latest_version(f"{subject}-value").schema_id
    topic = unique("pb-mixed")
    create_topic(shared_broker.bootstrap, topic, 1)
    unknown = b"\x00" + struct.pack(">I", 987655) + b"\x00\x08\x01"
    first = client.get_latest_version(f"{items_protobuf}-value").schema_id
    framed = ProtobufSerializer(item_class(), client, {"use.deprecated.format": False})(
        message(item_class(), 4), SerializationContext(items_protobuf, MessageField.VALUE)
    )
    assert framed is not None and int.from_bytes(framed[1:5], "big") == first
    produce(shared_broker.bootstrap, topic, [(None, framed), (None, unknown)])
    opts = options(
        shared_broker.bootstrap,
        registry,
        topic,
        "protobuf",
        mode="PERMISSIVE",
        **{"value.schema.id": str(reader_id)},
    )
    rows = decode_in_process(opts, topic, 2)
    assert [k for k in rows[0] if k in ("tags", "qty")] == ["qty"]
    assert (rows[0]["id"], rows[0]["name"], rows[0]["qty"], rows[0]["address"]) == (
        4,
        "n4",
        None,
        {"city": "c4"},
    )
    assert rows[0]["when"] == AT + dt.timedelta(seconds=4)
    assert rows[0]["_corrupt_record"] is None
    assert rows[1]["id"] is None
    assert (
        f"schema id 987655 is unknown to the Schema Registry at {registry.url}"
        in rows[1]["_corrupt_record"]["error"]
    )


def message_without_tags(cls: type[Message]) -> Message:
    m = cls(id=1, name="n", qty=3)
    m.address.city = "c"  # type: ignore[attr-defined]
    return m


def test_a_format_that_does_not_match_the_registered_schema_type_is_refused(
    shared_broker: EmbeddedBroker, registry: RegistryServer, items_json: str
) -> None:
    opts = options(shared_broker.bootstrap, registry, items_json, "protobuf")
    with pytest.raises(
        OptionError, match=rf"'value.format' is protobuf but subject '{items_json}-value' holds a JSON"
    ):
        plan_decoding(parse_options(opts, None))
    # Confluent's spellings of the format name the same format.
    for name in ("JSON_SR", "jsonschema"):
        plan = plan_decoding(parse_options({**opts, "value.format": name}, None))
        assert plan is not None and plan.value is not None and plan.value.format == "json-schema"


def test_protobuf_maps_and_oneofs_read_as_protobufdata_maps_them() -> None:
    # Pure: the record's id is the reader schema's, so no registry is asked.
    F = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(name="m.proto", package="m", syntax="proto3")
    msg = file.message_type.add(name="M")
    entry = msg.nested_type.add(name="LimitsEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    msg.field.add(
        name="limits", number=1, type=F.TYPE_MESSAGE, type_name=".m.M.LimitsEntry", label=F.LABEL_REPEATED
    )
    msg.oneof_decl.add(name="pay")
    msg.field.add(name="card", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL, oneof_index=0)
    msg.field.add(name="cash", number=3, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL, oneof_index=0)
    pool = DescriptorPool()
    pool.Add(file)  # type: ignore[no-untyped-call]
    cls = GetMessageClass(pool.FindMessageTypeByName("m.M"))  # type: ignore[no-untyped-call]
    messages = [cls(limits={"a": 1, "b": 2}, card="4242"), cls(cash=7), cls()]
    framed = [b"\x00" + struct.pack(">I", 7) + b"\x00" + m.SerializeToString() for m in messages]
    plan = DecodePlan(
        None,
        FieldPlan("value", 7, base64.b64encode(file.SerializeToString()).decode(), format="protobuf"),
        RegistryOptions(None, FieldFormat("protobuf"), {"url": "http://127.0.0.1:1"}),
        include_headers=False,
    )
    decoder = RecordDecoder(plan).value
    assert decoder is not None
    column, errors = decoder.decode(framed)
    assert errors == {}
    rows = column.to_pylist()
    for r in rows:
        r["limits"] = sorted(r["limits"])  # a protobuf map has no order
    assert rows == [
        {"limits": [("a", 1), ("b", 2)], "pay": {"card": "4242", "cash": None}},
        {"limits": [], "pay": {"card": None, "cash": 7}},
        {"limits": [], "pay": None},
    ]
