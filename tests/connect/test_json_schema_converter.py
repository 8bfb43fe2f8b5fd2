"""``io.confluent.connect.json.JsonSchemaConverter`` against our Schema Registry on a real
broker, with Confluent's own ``JSONSerializer``/``JSONDeserializer`` as judges: what the
converter writes, Confluent's deserializer reads (and validates) as the same data, and
what Confluent's serializer writes with a plain JSON Schema, the converter reads into the
Connect data Confluent's converter makes of it."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import struct
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka.schema_registry import Schema as RegistrySchema
from confluent_kafka.schema_registry import SchemaReference, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from broker.server import EmbeddedBroker
from connect.api import DataException, Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp, Type
from connect.converters.json_schema import JsonSchemaConverter
from connect.runtime.plugins import Plugins
from schema_registry.server import RegistryServer
from tests.schema_registry.support import running_registry

UTC = dt.UTC
ONE_OF = "io.confluent.connect.json.OneOf"

ADDRESS = SchemaBuilder.struct().name("bank.Address").field("city", Schema.STRING_SCHEMA).build()
PAYMENT = (
    SchemaBuilder.struct()
    .name("bank.Payment")
    .version(2)
    .doc("a payment")
    .field("id", Schema.INT64_SCHEMA)
    .field("tiny", Schema.INT8_SCHEMA)
    .field("small", Schema.INT16_SCHEMA)
    .field("count", Schema.INT32_SCHEMA)
    .field("ratio", Schema.FLOAT32_SCHEMA)
    .field("score", Schema.FLOAT64_SCHEMA)
    .field("ok", Schema.BOOLEAN_SCHEMA)
    .field("memo", Schema.OPTIONAL_STRING_SCHEMA)
    .field("raw", Schema.BYTES_SCHEMA)
    .field("amount", Decimal.schema(2))
    .field("day", Date.SCHEMA)
    .field("at", Time.SCHEMA)
    .field("when", Timestamp.SCHEMA)
    .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
    .field("labels", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build())
    .field("by_id", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build())
    .field("home", ADDRESS)
    .field(
        "work",
        SchemaBuilder.struct().name("bank.Address").field("city", Schema.STRING_SCHEMA).optional().build(),
    )
    .field("currency", SchemaBuilder.string().default_value("EUR").build())
    .build()
)


def payment(**changes: Any) -> Struct:
    s = Struct(PAYMENT)
    values: dict[str, Any] = {
        "id": 2**40,
        "tiny": -3,
        "small": 300,
        "count": 70000,
        "ratio": 0.5,
        "score": 1.25,
        "ok": True,
        "memo": None,
        "raw": b"\x00\xff",
        "amount": decimal.Decimal("-12.34"),
        "day": dt.date(2026, 11, 28),
        "at": dt.time(12, 30, 1, 250000),
        "when": dt.datetime(2026, 11, 28, 20, 15, 0, 123000, tzinfo=UTC),
        "tags": ["a", "b"],
        "labels": {"x": 1},
        "by_id": {7: "seven"},
        "home": Struct(ADDRESS).put("city", "Lyon"),
        "work": None,
        "currency": "CHF",
        **changes,
    }
    for k, v in values.items():
        s.put(k, v)
    return s


@pytest.fixture(scope="module")
def registry(shared_broker: EmbeddedBroker) -> Iterator[RegistryServer]:
    with running_registry(shared_broker.bootstrap) as server:
        yield server


def converter(
    registry: RegistryServer, configs: dict[str, str] | None = None, is_key: bool = False
) -> JsonSchemaConverter:
    c = Plugins().new_converter(
        "io.confluent.connect.json.JsonSchemaConverter",
        {"schema.registry.url": registry.url, **(configs or {})},
        is_key,
    )
    assert isinstance(c, JsonSchemaConverter)
    return c


def test_round_trip_of_every_type(registry: RegistryServer) -> None:
    value = payment(memo="hi", work=Struct(PAYMENT.field("work").schema).put("city", "Oslo"))  # type: ignore[union-attr]
    data = converter(registry).from_connect_data("payments", PAYMENT, value)
    assert data is not None and data[0] == 0
    (schema_id,) = struct.unpack(">I", data[1:5])
    latest = SchemaRegistryClient({"url": registry.url}).get_latest_version("payments-value")
    assert (latest.schema_id, latest.schema.schema_type) == (schema_id, "JSON")
    back = converter(registry).to_connect_data("payments", data)  # a fresh converter: from the registry
    assert back.schema == PAYMENT
    assert back.value == value


def test_confluents_deserializer_reads_what_the_converter_writes(registry: RegistryServer) -> None:
    # NUMERIC decimals are JSON numbers, so the document matches its schema, which
    # Confluent's deserializer checks (BASE64 ones are strings where the schema says number).
    data = converter(registry, {"decimal.format": "NUMERIC"}).from_connect_data("judge", PAYMENT, payment())
    client = SchemaRegistryClient({"url": registry.url})
    ctx = SerializationContext("judge", MessageField.VALUE)
    read = JSONDeserializer(None, schema_registry_client=client)(data, ctx)
    assert read == {
        "id": 2**40,
        "tiny": -3,
        "small": 300,
        "count": 70000,
        "ratio": 0.5,
        "score": 1.25,
        "ok": True,
        "memo": None,
        "raw": base64.b64encode(b"\x00\xff").decode(),
        "amount": -12.34,
        "day": (dt.date(2026, 11, 28) - dt.date(1970, 1, 1)).days,
        "at": ((12 * 60 + 30) * 60 + 1) * 1000 + 250,
        "when": int(dt.datetime(2026, 11, 28, 20, 15, 0, 123000, tzinfo=UTC).timestamp() * 1000),
        "tags": ["a", "b"],
        "labels": {"x": 1},
        "by_id": [{"key": 7, "value": "seven"}],
        "home": {"city": "Lyon"},
        "work": None,
        "currency": "CHF",
    }
    # Confluent's default BASE64: the unscaled bytes, read unvalidated.
    data = converter(registry).from_connect_data("judge-b64", PAYMENT, payment())
    read = JSONDeserializer(None, schema_registry_client=client, conf={"validate": False})(
        data, SerializationContext("judge-b64", MessageField.VALUE)
    )
    assert base64.b64decode(read["amount"]) == (-1234).to_bytes(2, "big", signed=True)


USER = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "User",
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer", "minimum": 0},
        "score": {"type": "number"},
        "active": {"type": "boolean"},
        "email": {"oneOf": [{"type": "null"}, {"type": "string"}]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "color": {"type": "string", "enum": ["RED", "GREEN"]},
        "address": {"$ref": "#/definitions/Address"},
        "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
    },
    "required": ["name", "age"],
    "definitions": {"Address": {"type": "object", "properties": {"city": {"type": "string"}}}},
}


def test_the_converter_reads_what_confluents_serializer_writes(registry: RegistryServer) -> None:
    client = SchemaRegistryClient({"url": registry.url})
    serializer = JSONSerializer(json.dumps(USER), client)
    record = {
        "name": "Ada",
        "age": 36,
        "score": 9.5,
        "active": True,
        "email": None,
        "tags": ["x", "y"],
        "color": "GREEN",
        "address": {"city": "London"},
        "either": "text",
    }
    data = serializer(record, SerializationContext("users", MessageField.VALUE))
    got = converter(registry).to_connect_data("users", data)
    schema = got.schema
    assert schema is not None and (schema.name, schema.version, schema.type) == ("User", 1, Type.STRUCT)
    types = {f.name: f.schema for f in schema.fields}
    assert [f.name for f in schema.fields] == list(USER["properties"])
    assert (types["age"], types["score"], types["email"]) == (
        Schema.INT64_SCHEMA,
        Schema.FLOAT64_SCHEMA,
        Schema.OPTIONAL_STRING_SCHEMA,
    )
    assert types["either"].name == ONE_OF
    value = got.value
    assert (value.get("name"), value.get("age"), value.get("score"), value.get("email")) == (
        "Ada",
        36,
        9.5,
        None,
    )
    assert (value.get("tags"), value.get("color"), value.get("address").get("city")) == (
        ["x", "y"],
        "GREEN",
        "London",
    )
    assert value.get("either").get(f"{ONE_OF}.field.1") == "text"
    # the subject's next version reads as version 2 (a property added to an open content
    # model is incompatible under Confluent's JSON rules: the subject takes anything)
    client.set_compatibility("users-value", "NONE")
    second = {**USER, "properties": {**USER["properties"], "nick": {"type": "string"}}}  # type: ignore[dict-item]
    data = JSONSerializer(json.dumps(second), client)(
        {**record, "nick": "a"}, SerializationContext("users", MessageField.VALUE)
    )
    got = converter(registry).to_connect_data("users", data)
    assert got.schema is not None and got.schema.version == 2 and got.value.get("nick") == "a"


def test_references_to_other_subjects_resolve(registry: RegistryServer) -> None:
    client = SchemaRegistryClient({"url": registry.url})
    city = {"type": "object", "properties": {"city": {"type": "string"}}}
    client.register_schema("city-ref", RegistrySchema(json.dumps(city), "JSON"))
    order = {"type": "object", "properties": {"to": {"$ref": "city.json"}, "n": {"type": "integer"}}}
    order_schema = RegistrySchema(json.dumps(order), "JSON", [SchemaReference("city.json", "city-ref", 1)])
    serializer = JSONSerializer(order_schema, client)
    data = serializer({"to": {"city": "Rome"}, "n": 1}, SerializationContext("orders", MessageField.VALUE))
    got = converter(registry, {"json.fail.invalid.schema": "true"}).to_connect_data("orders", data)
    assert got.value.get("to").get("city") == "Rome" and got.value.get("n") == 1


def test_keys_tombstones_and_optional_values(registry: RegistryServer) -> None:
    keys = converter(registry, is_key=True)
    assert (
        keys.to_connect_data("k", keys.from_connect_data("k", Schema.STRING_SCHEMA, "id-1")).value == "id-1"
    )
    assert "k-key" in SchemaRegistryClient({"url": registry.url}).get_subjects()
    values = converter(registry)
    assert values.from_connect_data("k", PAYMENT, None) is None
    assert values.to_connect_data("k", None).value is None
    optional = SchemaBuilder.struct().field("n", Schema.OPTIONAL_INT32_SCHEMA).optional().build()
    data = values.from_connect_data("opt", optional, Struct(optional))
    got = converter(registry).to_connect_data("opt", data)
    assert got.schema is not None and got.schema.optional and got.value.get("n") is None


def test_bad_bytes_are_data_errors_that_name_the_topic_and_why(registry: RegistryServer) -> None:
    c = converter(registry)
    with pytest.raises(DataException, match="topic t: Unknown magic byte"):
        c.to_connect_data("t", b'{"json": true}')
    with pytest.raises(DataException, match=r"topic t: schema 1000000: .*40403"):
        c.to_connect_data("t", b"\x00\x00\x0f\x42\x40{}")
    good = c.from_connect_data("t2", ADDRESS, Struct(ADDRESS).put("city", "Oslo"))
    assert good is not None
    with pytest.raises(DataException, match=r"topic t2: the payload of schema .* is not JSON"):
        c.to_connect_data("t2", good[:5] + b'{"city": ')
    with pytest.raises(DataException, match="topic t2: /city: expected a string, found integer"):
        c.to_connect_data("t2", good[:5] + b'{"city": 5}')
    avro = AvroSerializer(SchemaRegistryClient({"url": registry.url}), '"string"')
    avro_data = avro("x", SerializationContext("avro-topic", MessageField.VALUE))
    with pytest.raises(DataException, match=r"topic avro-topic: schema .* is AVRO, not JSON"):
        c.to_connect_data("avro-topic", avro_data)


def test_json_fail_invalid_schema_validates_both_ways(registry: RegistryServer) -> None:
    strict = converter(registry, {"json.fail.invalid.schema": "true"})
    # a BASE64 Decimal is a string where the schema says number (as with Confluent's converter)
    with pytest.raises(DataException, match=r"topic strict: .*#/amount: '[^']+' is not of type 'number'"):
        strict.from_connect_data("strict", PAYMENT, payment())
    numeric = converter(registry, {"json.fail.invalid.schema": "true", "decimal.format": "NUMERIC"})
    assert numeric.from_connect_data("strict", PAYMENT, payment()) is not None
    client = SchemaRegistryClient({"url": registry.url})
    unchecked = JSONSerializer(json.dumps(USER), client, conf={"validate": False})
    data = unchecked({"name": "Bo", "age": -1}, SerializationContext("users-bad", MessageField.VALUE))
    assert converter(registry).to_connect_data("users-bad", data).value.get("age") == -1
    with pytest.raises(DataException, match=r"topic users-bad: .*#/age: -1 is less than the minimum of 0"):
        strict.to_connect_data("users-bad", data)


def test_use_latest_version_writes_with_the_subjects_schema(registry: RegistryServer) -> None:
    client = SchemaRegistryClient({"url": registry.url})
    latest_id = client.register_schema("latest-value", RegistrySchema(json.dumps(USER), "JSON"))
    person = (
        SchemaBuilder.struct().field("name", Schema.STRING_SCHEMA).field("age", Schema.INT64_SCHEMA).build()
    )
    c = converter(
        registry,
        {"use.latest.version": "true", "auto.register.schemas": "false", "json.fail.invalid.schema": "true"},
    )
    data = c.from_connect_data("latest", person, Struct(person).put("name", "Al").put("age", 5))
    assert data is not None and struct.unpack(">I", data[1:5])[0] == latest_id
    assert JSONDeserializer(None, schema_registry_client=client)(
        data, SerializationContext("latest", MessageField.VALUE)
    ) == {"name": "Al", "age": 5}
    with pytest.raises(DataException, match=r"topic latest: .*#/age: -1 is less than the minimum of 0"):
        c.from_connect_data("latest", person, Struct(person).put("name", "Al").put("age", -1))
