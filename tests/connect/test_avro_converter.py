"""``io.confluent.connect.avro.AvroConverter`` against our Schema Registry on a real broker,
with Confluent's own ``AvroSerializer``/``AvroDeserializer`` as judges: what the converter
writes, Confluent's deserializer reads as the same data, and what Confluent's serializer
writes, the converter reads back into the same Connect data."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import struct
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka.schema_registry import Schema as RegistrySchema
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from broker.server import EmbeddedBroker
from connect.api import (
    ConnectException,
    DataException,
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
)
from connect.converters.avro import AvroConverter
from connect.runtime.plugins import Plugins
from schema_registry.server import RegistryServer
from tests.schema_registry.support import running_registry, start_registry
from tests.support import free_port

UTC = dt.UTC

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


def converter(registry: RegistryServer, is_key: bool = False, **configs: str) -> AvroConverter:
    c = Plugins().new_converter(
        "io.confluent.connect.avro.AvroConverter", {"schema.registry.url": registry.url, **configs}, is_key
    )
    assert isinstance(c, AvroConverter)
    return c


def test_round_trip_of_every_type(registry: RegistryServer) -> None:
    c = converter(registry)
    value = payment()
    data = c.from_connect_data("payments", PAYMENT, value)
    assert data is not None and data[0] == 0
    (schema_id,) = struct.unpack(">I", data[1:5])
    client = SchemaRegistryClient({"url": registry.url})
    assert client.get_latest_version("payments-value").schema_id == schema_id
    back = converter(registry).to_connect_data("payments", data)  # a fresh converter: from the registry
    assert back.value == value
    assert back.schema is not None
    assert [f.name for f in back.schema.fields] == [f.name for f in PAYMENT.fields]
    assert (back.schema.name, back.schema.version, back.schema.doc) == ("bank.Payment", 2, "a payment")
    assert back.schema.field("tiny").schema.type == Schema.INT8_SCHEMA.type  # type: ignore[union-attr]
    assert back.schema.field("amount").schema == Decimal.schema(2)  # type: ignore[union-attr]
    assert back.schema.field("currency").schema.default_value == "EUR"  # type: ignore[union-attr]


def test_the_registered_schema_is_confluents_mapping(registry: RegistryServer) -> None:
    converter(registry).from_connect_data("mapping", PAYMENT, payment())
    avro = json.loads(
        SchemaRegistryClient({"url": registry.url}).get_latest_version("mapping-value").schema.schema_str
    )
    assert (avro["type"], avro["name"], avro["namespace"]) == ("record", "Payment", "bank")
    assert (avro["connect.name"], avro["connect.version"], avro["connect.doc"]) == (
        "bank.Payment",
        2,
        "a payment",
    )
    fields = {f["name"]: f for f in avro["fields"]}
    assert fields["tiny"]["type"] == {"type": "int", "connect.type": "int8"}
    assert fields["memo"]["type"] == ["null", "string"] and fields["memo"]["default"] is None
    assert fields["amount"]["type"]["logicalType"] == "decimal" and fields["amount"]["type"]["scale"] == 2
    assert fields["amount"]["type"]["precision"] == 64
    assert fields["day"]["type"]["logicalType"] == "date"
    assert fields["when"]["type"]["logicalType"] == "timestamp-millis"
    assert fields["labels"]["type"]["type"] == "map"
    assert fields["by_id"]["type"]["items"]["name"] == "MapEntry"
    assert fields["work"]["type"] == ["null", "bank.Address"]  # defined once, then named
    assert fields["currency"]["default"] == "EUR"


def test_confluents_deserializer_reads_what_the_converter_writes(registry: RegistryServer) -> None:
    data = converter(registry).from_connect_data("judge", PAYMENT, payment(memo="hi"))
    read = AvroDeserializer(SchemaRegistryClient({"url": registry.url}))(
        data, SerializationContext("judge", MessageField.VALUE)
    )
    assert read["id"] == 2**40 and read["tiny"] == -3 and read["memo"] == "hi"
    assert read["amount"] == decimal.Decimal("-12.34")
    assert read["day"] == dt.date(2026, 11, 28)
    assert read["at"] == dt.time(12, 30, 1, 250000)
    assert read["when"] == dt.datetime(2026, 11, 28, 20, 15, 0, 123000, tzinfo=UTC)
    assert read["by_id"] == [{"key": 7, "value": "seven"}]
    assert read["home"] == {"city": "Lyon"} and read["work"] is None


def test_the_converter_reads_what_confluents_serializer_writes(registry: RegistryServer) -> None:
    schema = {
        "type": "record",
        "name": "Tweet",
        "namespace": "social",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "text", "type": "string"},
            {"name": "lang", "type": ["null", "string"], "default": None},
            {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["POST", "REPLY"]}},
            {
                "name": "price",
                "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 3},
            },
            {"name": "either", "type": ["null", "int", "string"], "default": None},
        ],
    }
    serializer = AvroSerializer(SchemaRegistryClient({"url": registry.url}), json.dumps(schema))
    datum = {
        "id": 5,
        "text": "hello",
        "lang": "fr",
        "kind": "REPLY",
        "price": decimal.Decimal("1.500"),
        "either": "x",
    }
    data = serializer(datum, SerializationContext("tweets", MessageField.VALUE))
    got = converter(registry).to_connect_data("tweets", data)
    assert got.schema is not None and got.schema.name == "social.Tweet"
    value = got.value
    assert (value.get("id"), value.get("text"), value.get("lang"), value.get("kind")) == (
        5,
        "hello",
        "fr",
        "REPLY",
    )
    assert got.schema.field("kind").schema.parameters == {  # type: ignore[union-attr]
        "io.confluent.connect.avro.Enum": "social.Kind",
        "io.confluent.connect.avro.Enum.POST": "POST",
        "io.confluent.connect.avro.Enum.REPLY": "REPLY",
    }
    assert value.get("price") == decimal.Decimal("1.500")
    assert got.schema.field("price").schema.parameters["connect.decimal.precision"] == "10"  # type: ignore[union-attr,index]
    either = value.get("either")
    assert either.schema.name == "io.confluent.connect.avro.Union" and either.get("string") == "x"


def test_keys_tombstones_and_subject_strategies(registry: RegistryServer) -> None:
    keys = converter(registry, is_key=True)
    assert (
        keys.to_connect_data("k", keys.from_connect_data("k", Schema.STRING_SCHEMA, "id-1")).value == "id-1"
    )
    client = SchemaRegistryClient({"url": registry.url})
    assert "k-key" in client.get_subjects()
    assert converter(registry).from_connect_data("k", PAYMENT, None) is None
    assert converter(registry).to_connect_data("k", None).value is None
    record = converter(
        registry,
        **{"value.subject.name.strategy": "io.confluent.kafka.serializers.subject.RecordNameStrategy"},
    )
    record.from_connect_data("anything", ADDRESS, Struct(ADDRESS).put("city", "Oslo"))
    topic_record = converter(registry, **{"value.subject.name.strategy": "TopicRecordNameStrategy"})
    topic_record.from_connect_data("t", ADDRESS, Struct(ADDRESS).put("city", "Oslo"))
    assert {"bank.Address", "t-bank.Address"} <= set(client.get_subjects())


def test_without_auto_registration_an_unknown_schema_is_a_data_error(registry: RegistryServer) -> None:
    c = converter(registry, **{"auto.register.schemas": "false"})
    with pytest.raises(DataException, match="40401"):
        c.from_connect_data("never-registered", ADDRESS, Struct(ADDRESS).put("city", "Oslo"))


def test_bad_bytes_are_data_errors_that_say_why(registry: RegistryServer) -> None:
    c = converter(registry)
    with pytest.raises(DataException, match="Unknown magic byte"):
        c.to_connect_data("t", b'{"json": true}')
    with pytest.raises(DataException, match="40403"):
        c.to_connect_data("t", b"\x00\x00\x0f\x42\x40payload")
    good = c.from_connect_data("t2", ADDRESS, Struct(ADDRESS).put("city", "Oslo"))
    assert good is not None
    with pytest.raises(DataException, match="does not match schema"):
        c.to_connect_data("t2", good[:5] + b"\x7f")


def test_an_unreachable_registry_is_retried_then_named_without_credentials() -> None:
    c = AvroConverter()
    c.configure(
        {
            "schema.registry.url": f"http://user:secret@127.0.0.1:{free_port()}",
            "retry.backoff.ms": "20",
            "max.retry.time.ms": "500",
        },
        False,
    )
    with pytest.raises(ConnectException, match=r"unreachable at http://\*\*\*:\*\*\*@127\.0\.0\.1") as exc:
        c.from_connect_data("t", ADDRESS, Struct(ADDRESS).put("city", "Oslo"))
    assert "secret" not in str(exc.value)
    attempts = int(str(exc.value).split(" after ")[1].split(" attempts")[0])
    assert attempts > 2


def test_a_registry_that_comes_back_within_the_retry_time_is_used(shared_broker: EmbeddedBroker) -> None:
    port = free_port()
    c = AvroConverter()
    c.configure({"schema.registry.url": f"http://127.0.0.1:{port}", "retry.backoff.ms": "50"}, False)
    started: list[RegistryServer] = []

    def later() -> None:
        time.sleep(1.0)
        started.append(start_registry(shared_broker.bootstrap, port=port))

    thread = threading.Thread(target=later)
    thread.start()
    try:
        data = c.from_connect_data("late", ADDRESS, Struct(ADDRESS).put("city", "Oslo"))
        assert data is not None and data[:1] == b"\x00"
    finally:
        thread.join()
        for server in started:
            server.stop()


_values = {
    "i8": (Schema.OPTIONAL_INT8_SCHEMA, st.none() | st.integers(-128, 127)),
    "i64": (Schema.INT64_SCHEMA, st.integers(-(2**63), 2**63 - 1)),
    "f64": (Schema.FLOAT64_SCHEMA, st.floats(allow_nan=False)),
    "s": (Schema.OPTIONAL_STRING_SCHEMA, st.none() | st.text(max_size=5)),
    "b": (Schema.BYTES_SCHEMA, st.binary(max_size=5)),
    "d": (Decimal.schema(3), st.decimals(min_value=-(10**9), max_value=10**9, places=3)),
    "ts": (
        Timestamp.SCHEMA,
        st.datetimes(
            min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2200, 1, 1), timezones=st.just(UTC)
        ).map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000)),
    ),
    "arr": (
        SchemaBuilder.array(Schema.INT32_SCHEMA).build(),
        st.lists(st.integers(-(2**31), 2**31 - 1), max_size=3),
    ),
    "m": (
        SchemaBuilder.map(Schema.INT64_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA).build(),
        st.dictionaries(st.integers(0, 99), st.none() | st.text(max_size=3), max_size=3),
    ),
}
ROUND = SchemaBuilder.struct().name("prop.Round")
for _name, (_schema, _) in _values.items():
    ROUND.field(_name, _schema)
ROUND_SCHEMA = ROUND.build()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.fixed_dictionaries({k: s for k, (_, s) in _values.items()}))
def test_any_value_round_trips(registry: RegistryServer, values: dict[str, Any]) -> None:
    c = converter(registry)
    s = Struct(ROUND_SCHEMA)
    for k, v in values.items():
        s.put(k, v)
    back = c.to_connect_data("prop", c.from_connect_data("prop", ROUND_SCHEMA, s))
    assert back.schema is not None and back.schema.version == 1  # the version prop-value gave the id
    assert back.value == Struct.from_values(back.schema, [s.get(f.name) for f in ROUND_SCHEMA.fields])


def test_use_latest_version_writes_with_the_subjects_latest_schema(registry: RegistryServer) -> None:
    """The record's bytes are written with the schema its id names: the subject's latest,
    here one with a field more (with a default) than the Connect schema has."""
    client = SchemaRegistryClient({"url": registry.url})
    latest = {
        "type": "record",
        "name": "Address",
        "namespace": "bank",
        "fields": [{"name": "city", "type": "string"}, {"name": "zip", "type": "string", "default": "00000"}],
    }
    latest_id = client.register_schema("latest-value", RegistrySchema(json.dumps(latest), "AVRO"))
    c = converter(registry, **{"use.latest.version": "true", "auto.register.schemas": "false"})
    data = c.from_connect_data("latest", ADDRESS, Struct(ADDRESS).put("city", "Oslo"))
    assert data is not None and struct.unpack(">I", data[1:5])[0] == latest_id
    read = AvroDeserializer(client)(data, SerializationContext("latest", MessageField.VALUE))
    assert read == {"city": "Oslo", "zip": "00000"}


def test_latest_compatibility_strict_refuses_a_latest_schema_that_cannot_read_the_record(
    registry: RegistryServer,
) -> None:
    """Confluent's latest.compatibility.strict (default true): the latest schema must read
    data of the record's own schema; here it narrows a long to an int."""
    client = SchemaRegistryClient({"url": registry.url})
    narrowed = {"type": "record", "name": "Amount", "fields": [{"name": "cents", "type": "int"}]}
    latest_id = client.register_schema("narrow-value", RegistrySchema(json.dumps(narrowed), "AVRO"))
    schema = SchemaBuilder.struct().name("Amount").field("cents", Schema.INT64_SCHEMA).build()
    value = Struct(schema).put("cents", 5)
    strict = converter(registry, **{"use.latest.version": "true", "auto.register.schemas": "false"})
    with pytest.raises(DataException, match=r"latest schema of narrow-value .*cannot read.*strict=false"):
        strict.from_connect_data("narrow", schema, value)
    lenient = converter(
        registry,
        **{
            "use.latest.version": "true",
            "auto.register.schemas": "false",
            "latest.compatibility.strict": "false",
        },
    )
    data = lenient.from_connect_data("narrow", schema, value)
    assert data is not None and struct.unpack(">I", data[1:5])[0] == latest_id
    assert AvroDeserializer(client)(data, SerializationContext("narrow", MessageField.VALUE)) == {"cents": 5}


def test_a_read_schema_carries_the_version_its_subject_gave_the_id(registry: RegistryServer) -> None:
    """As Confluent's converter: the registry version, unless the schema has connect.version."""
    client = SchemaRegistryClient({"url": registry.url})
    v1 = {"type": "record", "name": "Event", "fields": [{"name": "id", "type": "long"}]}
    v2 = {**v1, "fields": [*v1["fields"], {"name": "kind", "type": "string", "default": "x"}]}
    ctx = SerializationContext("events", MessageField.VALUE)
    records = [
        AvroSerializer(client, json.dumps(v1))({"id": 1}, ctx),
        AvroSerializer(client, json.dumps(v2))({"id": 2, "kind": "y"}, ctx),
    ]
    c = converter(registry)
    read = [c.to_connect_data("events", r) for r in records]
    assert [r.schema.version for r in read if r.schema is not None] == [1, 2]
    assert [r.value.get("id") for r in read] == [1, 2]
