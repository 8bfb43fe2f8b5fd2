"""``io.confluent.connect.protobuf.ProtobufConverter`` against our Schema Registry on a real
broker, with confluent-kafka's ``ProtobufSerializer``/``ProtobufDeserializer`` as judges:
what the converter writes Confluent's deserializer reads as the same message, and what
Confluent's serializer writes (a message class compiled at test time, importing
google/protobuf/timestamp.proto) the converter reads into Connect data."""

from __future__ import annotations

import datetime as dt
import decimal
import struct
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, timestamp_pb2
from google.protobuf.descriptor_pool import DescriptorPool
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass

from broker.server import EmbeddedBroker
from connect.api import DataException, Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp
from connect.converters.protobuf import ProtobufConverter
from connect.runtime.plugins import Plugins
from schema_registry.server import RegistryServer
from tests.schema_registry.support import running_registry

UTC = dt.UTC
ADDRESS = SchemaBuilder.struct().name("bank.Address").field("city", Schema.STRING_SCHEMA).build()
PAYMENT = (
    SchemaBuilder.struct()
    .name("bank.Payment")
    .field("id", Schema.INT64_SCHEMA)
    .field("tiny", Schema.INT8_SCHEMA)
    .field("small", Schema.INT16_SCHEMA)
    .field("count", Schema.INT32_SCHEMA)
    .field("ratio", Schema.FLOAT32_SCHEMA)
    .field("score", Schema.FLOAT64_SCHEMA)
    .field("ok", Schema.BOOLEAN_SCHEMA)
    .field("memo", Schema.STRING_SCHEMA)
    .field("raw", Schema.BYTES_SCHEMA)
    .field("amount", Decimal.schema(2))
    .field("day", Date.SCHEMA)
    .field("at", Time.SCHEMA)
    .field("when", Timestamp.SCHEMA)
    .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
    .field("labels", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build())
    .field("home", ADDRESS)
    .build()
)


def payment() -> Struct:
    values: dict[str, Any] = {
        "id": 2**40,
        "tiny": -7,
        "small": 300,
        "count": 70_000,
        "ratio": 0.5,
        "score": 12.25,
        "ok": True,
        "memo": "Zoë",
        "raw": b"\x00\xff",
        "amount": decimal.Decimal("1234.50"),
        "day": dt.date(2026, 11, 29),
        "at": dt.time(13, 45, 6, 789000),
        "when": dt.datetime(2026, 11, 29, 1, 2, 3, 456000, tzinfo=UTC),
        "tags": ["a", "b"],
        "labels": {"x": 1, "y": 2},
        "home": Struct(ADDRESS).put("city", "Oslo"),
    }
    s = Struct(PAYMENT)
    for k, v in values.items():
        s.put(k, v)
    return s


def order_class() -> type[Message]:
    """shop.Order {int64 id = 1; string note = 2; google.protobuf.Timestamp when = 3;
    repeated string tags = 4}, as a user's protoc would make it."""
    F = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(
        name="shop/order.proto",
        package="shop",
        syntax="proto3",
        dependency=["google/protobuf/timestamp.proto"],
    )
    message = file.message_type.add(name="Order")
    message.field.add(name="id", number=1, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    message.field.add(name="note", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    message.field.add(
        name="when",
        number=3,
        type=F.TYPE_MESSAGE,
        type_name=".google.protobuf.Timestamp",
        label=F.LABEL_OPTIONAL,
    )
    message.field.add(name="tags", number=4, type=F.TYPE_STRING, label=F.LABEL_REPEATED)
    pool = DescriptorPool()
    pool.AddSerializedFile(timestamp_pb2.DESCRIPTOR.serialized_pb)  # type: ignore[no-untyped-call]
    pool.Add(file)  # type: ignore[no-untyped-call]
    return GetMessageClass(pool.FindMessageTypeByName("shop.Order"))  # type: ignore[no-untyped-call]


ORDER = (
    SchemaBuilder.struct()
    .name("shop.Order")
    .field("id", Schema.INT64_SCHEMA)
    .field("note", Schema.STRING_SCHEMA)
    .field("when", Timestamp.SCHEMA)
    .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
    .build()
)


@pytest.fixture(scope="module")
def registry(shared_broker: EmbeddedBroker) -> Iterator[RegistryServer]:
    with running_registry(shared_broker.bootstrap) as server:
        yield server


def converter(registry: RegistryServer, is_key: bool = False, **configs: str) -> ProtobufConverter:
    c = Plugins().new_converter(
        "io.confluent.connect.protobuf.ProtobufConverter",
        {"schema.registry.url": registry.url, **configs},
        is_key,
    )
    assert isinstance(c, ProtobufConverter)
    return c


def test_every_connect_type_round_trips_through_the_registry(registry: RegistryServer) -> None:
    data = converter(registry).from_connect_data("pb-payments", PAYMENT, payment())
    assert data is not None and data[0] == 0 and data[5] == 0  # magic, id, the first message
    (schema_id,) = struct.unpack(">I", data[1:5])
    client = SchemaRegistryClient({"url": registry.url})
    registered = client.get_latest_version("pb-payments-value")
    assert registered.schema_id == schema_id and registered.schema.schema_type == "PROTOBUF"
    assert "message Payment" in registered.schema.schema_str  # served as .proto text
    back = converter(registry).to_connect_data("pb-payments", data)  # a fresh converter: from the registry
    assert back.schema is not None and back.schema.version == 1
    original = payment()
    for f in PAYMENT.fields:
        got = back.value.get(f.name)
        if f.name == "home":
            got = got.get("city")
            assert got == "Oslo"
        else:
            assert got == original.get(f.name), f.name


def test_confluents_deserializer_reads_what_the_converter_writes(registry: RegistryServer) -> None:
    when = dt.datetime(2026, 1, 2, 3, 4, 5, 6000, tzinfo=UTC)
    value = Struct(ORDER).put("id", 7).put("note", "paid").put("when", when).put("tags", ["x"])
    data = converter(registry).from_connect_data("pb-orders", ORDER, value)
    read = ProtobufDeserializer(order_class(), {"use.deprecated.format": False})(
        data, SerializationContext("pb-orders", MessageField.VALUE)
    )
    assert (read.id, read.note, list(read.tags)) == (7, "paid", ["x"])
    assert read.when.ToDatetime(tzinfo=UTC) == when


def test_the_converter_reads_what_confluents_serializer_writes(registry: RegistryServer) -> None:
    cls = order_class()
    client = SchemaRegistryClient({"url": registry.url})
    serializer = ProtobufSerializer(cls, client, {"use.deprecated.format": False})
    message = cls(id=9, note="late", tags=["p", "q"])
    message.when.FromDatetime(dt.datetime(2026, 5, 6, 7, 8, 9, tzinfo=UTC))
    data = serializer(message, SerializationContext("pb-serialized", MessageField.VALUE))
    back = converter(registry).to_connect_data("pb-serialized", data)
    assert back.schema is not None and back.schema.name == "shop.Order"
    assert back.value.get("id") == 9 and back.value.get("note") == "late"
    assert back.value.get("tags") == ["p", "q"]
    assert back.value.get("when") == dt.datetime(2026, 5, 6, 7, 8, 9, tzinfo=UTC)


def test_bad_input_is_a_data_exception_naming_the_topic(registry: RegistryServer) -> None:
    c = converter(registry)
    good = c.from_connect_data("pb-bad", ORDER, Struct(ORDER).put("id", 1).put("note", "").put("tags", []))
    assert good is not None
    with pytest.raises(DataException, match=r"pb-bad.*Unknown magic byte"):
        c.to_connect_data("pb-bad", b"\x08\x01")
    with pytest.raises(DataException, match="40403"):
        c.to_connect_data("pb-bad", b"\x00" + struct.pack(">I", 987_654) + b"\x00\x08\x01")
    with pytest.raises(DataException, match=r"pb-bad.*message indexes"):
        c.to_connect_data("pb-bad", good[:5] + b"\x02\x0a")
    with pytest.raises(DataException, match="pb-bad"):
        c.to_connect_data("pb-bad", good[:6] + b"\x0a\xff\xff")
    assert c.to_connect_data("pb-bad", None).value is None
    assert c.from_connect_data("pb-bad", ORDER, None) is None


def test_use_latest_version_writes_with_the_subjects_latest_schema(registry: RegistryServer) -> None:
    cls = order_class()
    client = SchemaRegistryClient({"url": registry.url})
    first = ProtobufSerializer(cls, client, {"use.deprecated.format": False})(
        cls(id=1), SerializationContext("pb-latest", MessageField.VALUE)
    )
    latest_id = struct.unpack(">I", first[1:5])[0]
    c = converter(registry, **{"use.latest.version": "true", "auto.register.schemas": "false"})
    value = Struct(ORDER).put("id", 2).put("note", "n").put("tags", ["t"])
    data = c.from_connect_data("pb-latest", ORDER, value)
    assert data is not None and struct.unpack(">I", data[1:5])[0] == latest_id
    read = ProtobufDeserializer(cls, {"use.deprecated.format": False})(
        data, SerializationContext("pb-latest", MessageField.VALUE)
    )
    assert (read.id, read.note, list(read.tags)) == (2, "n", ["t"])
