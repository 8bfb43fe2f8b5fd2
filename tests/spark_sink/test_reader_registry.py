"""The "sluiceway" source decoding Schema Registry-framed Avro (``value.format=avro``): a real
broker, a real registry, records written by Confluent's own ``AvroSerializer`` (the judge of
the wire format), read into typed Spark columns through Avro schema resolution; and records
that do not decode, under FAILFAST and PERMISSIVE."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pytest
from confluent_kafka import Producer
from confluent_kafka.schema_registry import Schema as RegistrySchema
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from pyspark.sql import Row, SparkSession
from pyspark.sql.types import (
    ArrayType,
    DateType,
    DecimalType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
    TimeType,
)

from broker.server import EmbeddedBroker
from schema_registry.server import RegistryServer
from spark_sink.reader.kafka import read_range
from spark_sink.reader.options import OptionError, parse_options
from spark_sink.reader.registry_options import FieldFormat, RegistryOptions
from spark_sink.reader.registry_plan import DecodePlan, FieldPlan, plan_decoding, spark_schema
from spark_sink.reader.registry_values import MalformedRecordError, RecordDecoder
from tests.schema_registry.support import start_registry
from tests.spark_sink.test_reader import create_topic
from tests.support import free_port, unique

UTC = dt.UTC
ADDRESS = {
    "type": "record",
    "name": "Address",
    "fields": [
        {"name": "city", "type": "string"},
        {"name": "zip", "type": ["null", "string"], "default": None},
    ],
}
V1: dict[str, Any] = {
    "type": "record",
    "name": "Payment",
    "namespace": "bank",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "clock", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "limits", "type": {"type": "map", "values": "int"}},
        {"name": "address", "type": ADDRESS},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "DONE"]}},
        {"name": "choice", "type": ["null", "int", "string"], "default": None},
        {"name": "count", "type": "int"},
    ],
}
# BACKWARD-compatible: a field with a default added, an int widened to long.
V2: dict[str, Any] = {
    **V1,
    "fields": [
        *[f if f["name"] != "count" else {"name": "count", "type": "long"} for f in V1["fields"]],
        {"name": "currency", "type": "string", "default": "EUR"},
    ],
}
AT = dt.datetime(2026, 3, 4, 5, 6, 7, 123000, tzinfo=UTC)


def payment(i: int, **more: Any) -> dict[str, Any]:
    return {
        "id": i,
        "amount": decimal.Decimal(f"{i}12.34"),
        "day": dt.date(2026, 1, i + 1),
        "at": AT + dt.timedelta(seconds=i),
        "clock": dt.time(13, 14, 15, 16000),
        "tags": [f"t{i}", "x"],
        "limits": {"daily": i * 100},
        "address": {"city": f"c{i}", "zip": None if i % 2 else "75001"},
        "status": "NEW" if i % 2 else "DONE",
        "choice": [None, i, f"s{i}"][i % 3],
        "count": i * 7,
        **more,
    }


@pytest.fixture(scope="module")
def registry(shared_broker: EmbeddedBroker) -> Iterator[RegistryServer]:
    server = start_registry(shared_broker.bootstrap)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def payments(shared_broker: EmbeddedBroker, registry: RegistryServer) -> str:
    """A topic of one partition: keys are Avro strings; values 0-1 written with v1, 2-3 with
    v2, then a tombstone, by Confluent's AvroSerializer (which registers the two versions)."""
    topic = unique("payments")
    create_topic(shared_broker.bootstrap, topic, 1)
    client = SchemaRegistryClient({"url": registry.url})
    ctx = SerializationContext(topic, MessageField.VALUE)
    key_ctx = SerializationContext(topic, MessageField.KEY)
    keys = AvroSerializer(client, json.dumps("string"))
    v1, v2 = AvroSerializer(client, json.dumps(V1)), AvroSerializer(client, json.dumps(V2))
    records = [
        (
            keys(f"k{i}", key_ctx),
            (v1 if i < 2 else v2)(payment(i, **({"currency": "USD"} if i == 3 else {})), ctx),
        )
        for i in range(4)
    ]
    records.append((keys("k4", key_ctx), None))
    produce(shared_broker.bootstrap, topic, records)
    return topic


def produce(bootstrap: str, topic: str, records: list[tuple[bytes | None, bytes | None]]) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 2})
    for key, value in records:
        p.produce(topic, key=key, value=value, partition=0)
    assert p.flush(30) == 0


def options(bootstrap: str, registry: RegistryServer, topic: str, **more: str) -> dict[str, str]:
    return {
        "kafka.bootstrap.servers": bootstrap,
        "subscribe": topic,
        "value.format": "avro",
        "schema.registry.url": registry.url,
        **more,
    }


def decode_in_process(opts: dict[str, str], topic: str, end: int) -> list[dict[str, Any]]:
    """What the source's executor side makes of offsets [0, end), without Spark."""
    parsed = parse_options(opts, "batch")
    plan = plan_decoding(parsed)
    assert plan is not None
    decoder = RecordDecoder(plan)
    batches = [decoder.decode(b) for b in read_range(parsed, topic, 0, 0, end)]
    rows: list[dict[str, Any]] = pa.Table.from_batches(batches, decoder.schema).to_pylist()
    return rows


# -- Spark -------------------------------------------------------------------------------


def test_spark_reads_both_schema_versions_into_typed_columns_of_the_latest(
    spark: SparkSession, shared_broker: EmbeddedBroker, registry: RegistryServer, payments: str
) -> None:
    reader = spark.read.format("sluiceway")
    for k, v in options(shared_broker.bootstrap, registry, payments, **{"key.format": "avro"}).items():
        reader = reader.option(k, v)
    df = reader.load()
    address = StructType([StructField("city", StringType()), StructField("zip", StringType())])
    choice = StructType([StructField("int", IntegerType()), StructField("string", StringType())])
    assert df.schema == StructType(
        [
            StructField("key", StringType()),
            StructField("id", LongType()),
            StructField("amount", DecimalType(10, 2)),
            StructField("day", DateType()),
            StructField("at", TimestampType()),
            StructField("clock", TimeType(6)),
            StructField("tags", ArrayType(StringType())),
            StructField("limits", MapType(StringType(), IntegerType())),
            StructField("address", address),
            StructField("status", StringType()),
            StructField("choice", choice),
            StructField("count", LongType()),
            StructField("currency", StringType()),
            StructField("topic", StringType()),
            StructField("partition", IntegerType()),
            StructField("offset", LongType()),
            StructField("timestamp", TimestampType()),
            StructField("timestampType", IntegerType()),
        ]
    )
    rows = df.drop("timestamp", "timestampType").orderBy("offset").collect()

    def expected(i: int, currency: str) -> Row:
        p = payment(i)
        return Row(
            key=f"k{i}",
            id=i,
            amount=p["amount"],
            day=p["day"],
            # Spark hands out timestamps in the session's time zone (UTC here), naive.
            at=p["at"].replace(tzinfo=None),
            clock=p["clock"],
            tags=p["tags"],
            limits=p["limits"],
            address=Row(city=f"c{i}", zip=p["address"]["zip"]),
            status=p["status"],
            # A multi-type union is a struct with a field per branch (AvroData's Union); null stays null.
            choice=None
            if p["choice"] is None
            else Row(
                int=p["choice"] if isinstance(p["choice"], int) else None,
                string=p["choice"] if isinstance(p["choice"], str) else None,
            ),
            count=i * 7,
            currency=currency,
            topic=payments,
            partition=0,
            offset=i,
        )

    tombstone = Row(key="k4", **dict.fromkeys(list(V2_FIELDS), None), topic=payments, partition=0, offset=4)
    # v1 records lack currency: resolution fills the reader's default.
    assert rows == [expected(0, "EUR"), expected(1, "EUR"), expected(2, "EUR"), expected(3, "USD"), tombstone]


V2_FIELDS = [f["name"] for f in V2["fields"]]


def test_spark_failfast_names_the_record_and_permissive_keeps_its_bytes(
    spark: SparkSession, shared_broker: EmbeddedBroker, registry: RegistryServer
) -> None:
    topic = unique("bad")
    create_topic(shared_broker.bootstrap, topic, 1)
    good = AvroSerializer(SchemaRegistryClient({"url": registry.url}), json.dumps(V1))(
        payment(1), SerializationContext(topic, MessageField.VALUE)
    )
    unknown_id = b"\x00" + struct.pack(">I", 987654) + b"\x02"
    produce(shared_broker.bootstrap, topic, [(b"a", good), (b"b", b'{"id": 2}'), (b"c", unknown_id)])

    def load(**more: str) -> Any:
        reader = spark.read.format("sluiceway")
        for k, v in options(shared_broker.bootstrap, registry, topic, **more).items():
            reader = reader.option(k, v)
        return reader.load()

    with pytest.raises(
        Exception, match=rf"topic {topic} partition 0 offset 1: value: not Schema Registry framing"
    ):
        load().collect()

    rows = (
        load(mode="PERMISSIVE").select("key", "id", "address", "_corrupt_record").orderBy("offset").collect()
    )
    assert [(r.key, r.id, r.address) for r in rows] == [
        (b"a", 1, Row(city="c1", zip=None)),
        (b"b", None, None),
        (b"c", None, None),
    ]
    assert rows[0]._corrupt_record is None
    assert (rows[1]._corrupt_record.key, rows[1]._corrupt_record.value) == (b"b", b'{"id": 2}')
    assert "unknown magic byte 0x7b" in rows[1]._corrupt_record.error
    assert (rows[2]._corrupt_record.key, rows[2]._corrupt_record.value) == (b"c", unknown_id)
    assert (
        f"schema id 987654 is unknown to the Schema Registry at {registry.url}"
        in rows[2]._corrupt_record.error
    )


# -- in process --------------------------------------------------------------------------


def test_a_given_schema_id_is_the_reader_schema_and_writers_that_do_not_resolve_into_it_are_corrupt(
    shared_broker: EmbeddedBroker, registry: RegistryServer, payments: str
) -> None:
    v1_id = SchemaRegistryClient({"url": registry.url}).get_version(f"{payments}-value", 1).schema_id
    opts = options(
        shared_broker.bootstrap, registry, payments, mode="PERMISSIVE", **{"value.schema.id": str(v1_id)}
    )
    rows = decode_in_process(opts, payments, 4)
    assert list(rows[0]) == [
        "key",
        *V1_FIELDS,
        "topic",
        "partition",
        "offset",
        "timestamp",
        "timestampType",
        "_corrupt_record",
    ]
    assert [(r["id"], r["count"], r["amount"], r["_corrupt_record"]) for r in rows[:2]] == [
        (i, i * 7, decimal.Decimal(f"{i}12.34"), None) for i in range(2)
    ]
    # v2 widened count to long: a v1 reader cannot read it (v2 is BACKWARD-, not FORWARD-compatible).
    for r in rows[2:]:
        assert r["id"] is None and r["count"] is None
        assert "into the reader's schema id" in r["_corrupt_record"]["error"]
        assert "long is not int" in r["_corrupt_record"]["error"]


V1_FIELDS = [f["name"] for f in V1["fields"]]


def test_value_columns_struct_gives_one_value_column_and_field_clashes_are_refused(
    shared_broker: EmbeddedBroker, registry: RegistryServer
) -> None:
    topic = unique("clash")
    schema = {"type": "record", "name": "Ev", "fields": [{"name": "timestamp", "type": "long"}]}
    SchemaRegistryClient({"url": registry.url}).register_schema(
        f"{topic}-value", RegistrySchema(json.dumps(schema), "AVRO")
    )
    opts = options(shared_broker.bootstrap, registry, topic)
    with pytest.raises(OptionError, match=r"field 'timestamp'.*'value\.columns' to 'struct'"):
        plan_decoding(parse_options(opts, None))
    plan = plan_decoding(parse_options({**opts, "value.columns": "struct"}, None))
    assert plan is not None
    assert spark_schema(plan)["value"].dataType == StructType([StructField("timestamp", LongType())])


def test_registry_problems_fail_load_naming_the_option(
    shared_broker: EmbeddedBroker, registry: RegistryServer
) -> None:
    opts = options(shared_broker.bootstrap, registry, "nothing-here")
    with pytest.raises(OptionError, match=r"no subject for the value.*option 'value.subject' \(default"):
        plan_decoding(parse_options(opts, None))
    with pytest.raises(OptionError, match=r"no schema id 424242.*option 'value.schema.id'"):
        plan_decoding(parse_options({**opts, "value.schema.id": "424242"}, None))


@pytest.mark.parametrize(
    ("more", "message"),
    [
        ({"value.format": "csv"}, "must be 'avro', 'json-schema' or 'protobuf'"),
        ({"schema.registry.url": ""}, "'schema.registry.url' must be specified"),
        ({"mode": "DROPMALFORMED"}, "DROPMALFORMED is not supported"),
        ({"subscribe": "a,b"}, "'value.subject' or 'value.schema.id' must be given"),
        ({"value.subject": "s", "value.schema.id": "1"}, "give only one"),
        ({"basic.auth.user.info": "nocolon"}, "<username>:<password>"),
    ],
)
def test_bad_decoding_options_are_refused_naming_the_option(more: dict[str, str], message: str) -> None:
    opts = {
        "kafka.bootstrap.servers": "127.0.0.1:1",
        "subscribe": "t",
        "value.format": "avro",
        "schema.registry.url": "http://127.0.0.1:1",
        **more,
    }
    with pytest.raises(OptionError, match=message):
        plan_decoding(parse_options(opts, None))


def test_registry_options_without_a_format_are_refused() -> None:
    with pytest.raises(OptionError, match=r"set 'value\.format' or 'key\.format'"):
        parse_options(
            {"kafka.bootstrap.servers": "b:1", "subscribe": "t", "schema.registry.url": "http://r"}, None
        )


def test_failfast_is_the_default_in_process(shared_broker: EmbeddedBroker, registry: RegistryServer) -> None:
    topic = unique("short")
    create_topic(shared_broker.bootstrap, topic, 1)
    good = AvroSerializer(SchemaRegistryClient({"url": registry.url}), json.dumps("string"))(
        "ok", SerializationContext(topic, MessageField.VALUE)
    )
    produce(shared_broker.bootstrap, topic, [(None, good), (None, b"\x00\x00")])
    opts = options(shared_broker.bootstrap, registry, topic)
    with pytest.raises(
        MalformedRecordError,
        match=f"topic {topic} partition 0 offset 1: value: not Schema Registry framing: 2 bytes, fewer than "
        "the 5",
    ):
        decode_in_process(opts, topic, 2)
    rows = decode_in_process({**opts, "mode": "permissive"}, topic, 2)
    assert [r["value"] for r in rows] == ["ok", None]
    assert rows[1]["_corrupt_record"]["value"] == b"\x00\x00"


def test_nested_dates_times_timestamps_and_decimals_read_as_fastavro_reads_them() -> None:
    # Pure: the record's id is the reader schema's, so no registry is asked. fastavro with its
    # logical types is the judge of the values the column casts make of the Avro ints.
    ts = {"type": "long", "logicalType": "timestamp-millis"}
    money = {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 3}
    schema = {
        "type": "record",
        "name": "N",
        "fields": [
            {"name": "days", "type": {"type": "array", "items": {"type": "int", "logicalType": "date"}}},
            {"name": "stamps", "type": {"type": "map", "values": ["null", ts]}},
            {"name": "prices", "type": {"type": "array", "items": ["null", money]}},
            {
                "name": "inner",
                "type": {
                    "type": "record",
                    "name": "I",
                    "fields": [
                        {"name": "clock", "type": {"type": "int", "logicalType": "time-millis"}},
                        {"name": "price", "type": money},
                        {"name": "micros", "type": {"type": "long", "logicalType": "timestamp-micros"}},
                    ],
                },
            },
        ],
    }
    datums = [
        {
            "days": [dt.date(1969, 12, 31), dt.date(2026, 11, 29)],
            "stamps": {"a": AT, "b": None, "c": dt.datetime(1960, 1, 1, 0, 0, 0, 1000, tzinfo=UTC)},
            "prices": [decimal.Decimal("99.999"), None, decimal.Decimal("-0.001")],
            "inner": {
                "clock": dt.time(23, 59, 59, 999000),
                "price": decimal.Decimal("-12.345"),
                "micros": AT + dt.timedelta(microseconds=7),
            },
        },
        {
            "days": [],
            "stamps": {},
            "prices": [],
            "inner": {"clock": dt.time(0), "price": decimal.Decimal(0), "micros": AT},
        },
        # 123.456 has six digits, one more than DECIMAL(5, 3) holds (written with precision 6).
        {
            "days": [],
            "stamps": {},
            "prices": [],
            "inner": {"clock": dt.time(0), "price": decimal.Decimal("123.456"), "micros": AT},
        },
    ]
    parsed = fastavro.parse_schema(schema)
    wider = fastavro.parse_schema(json.loads(json.dumps(schema).replace('"precision": 5', '"precision": 6')))
    framed = []
    for i, d in enumerate(datums):
        buf = io.BytesIO()
        buf.write(b"\x00" + struct.pack(">I", 7))
        fastavro.schemaless_writer(buf, wider if i == 2 else parsed, d)
        framed.append(buf.getvalue())
    plan = DecodePlan(
        None,
        FieldPlan("value", 7, json.dumps(schema), subject="s"),
        RegistryOptions(None, FieldFormat("avro"), {"url": "http://127.0.0.1:1"}),
        include_headers=False,
    )
    column, errors = RecordDecoder(plan).value.decode(framed)  # type: ignore[union-attr]
    assert list(errors) == [2]
    assert "123456E-3 has more digits than DECIMAL(5, 3)" in errors[2]
    judged: list[Any] = [fastavro.schemaless_reader(io.BytesIO(f[5:]), parsed, None) for f in framed[:2]]
    # timestamp-micros has no Connect type (AvroData): it stays the long it is written as.
    for j in judged:
        j["stamps"] = sorted(j["stamps"].items())
        j["inner"]["micros"] = (j["inner"]["micros"] - dt.datetime(1970, 1, 1, tzinfo=UTC)) // dt.timedelta(
            microseconds=1
        )
    assert column.to_pylist() == [*judged, None]


def test_a_streaming_query_decodes_too(
    spark: SparkSession,
    shared_broker: EmbeddedBroker,
    registry: RegistryServer,
    payments: str,
    tmp_path: Path,
) -> None:
    reader = spark.readStream.format("sluiceway")
    for k, v in options(shared_broker.bootstrap, registry, payments, startingOffsets="earliest").items():
        reader = reader.option(k, v)
    name = unique("decoded").replace("-", "_")
    query = (
        reader.load()
        .select("offset", "id", "currency", "address.city")
        .writeStream.format("memory")
        .queryName(name)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    try:
        query.awaitTermination(120)
    finally:
        query.stop()
    assert query.exception() is None
    rows = sorted(tuple(r) for r in spark.table(name).collect())
    assert rows == [
        (0, 0, "EUR", "c0"),
        (1, 1, "EUR", "c1"),
        (2, 2, "EUR", "c2"),
        (3, 3, "USD", "c3"),
        (4, None, None, None),
    ]


def test_an_unreachable_registry_fails_load_naming_its_url() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    opts = {"kafka.bootstrap.servers": "127.0.0.1:1", "subscribe": "t", "value.format": "avro"}
    with pytest.raises(RuntimeError, match=rf"Schema Registry at {url} \(option 'schema.registry.url'\)"):
        plan_decoding(parse_options({**opts, "schema.registry.url": url}, None))


def test_unions_of_several_types_and_maps_of_int_keys_read_as_avrodata_maps_them() -> None:
    # AvroData: a union of several types is a struct with one field per branch, named after
    # the branch's type or record; Connect's maps with non-string keys are arrays of MapEntry.
    rec = {
        "type": "record",
        "name": "Card",
        "namespace": "bank",
        "fields": [{"name": "pan", "type": "string"}],
    }
    iban = {
        "type": "record",
        "name": "Iban",
        "namespace": "bank",
        "fields": [{"name": "pan", "type": "string"}],
    }
    entry = {
        "type": "record",
        "name": "MapEntry",
        "namespace": "io.confluent.connect.avro",
        "fields": [{"name": "key", "type": "int"}, {"name": "value", "type": "string"}],
    }
    schema = {
        "type": "record",
        "name": "U",
        "fields": [
            {"name": "via", "type": ["null", rec, iban, {"type": "int", "logicalType": "date"}]},
            {"name": "codes", "type": {"type": "array", "items": entry}},
        ],
    }
    datums = [
        {
            "via": ("bank.Iban", {"pan": "FR76"}),
            "codes": [{"key": 1, "value": "a"}, {"key": -2, "value": "b"}],
        },
        {"via": dt.date(2026, 11, 29), "codes": []},
        {"via": None, "codes": []},
    ]
    parsed = fastavro.parse_schema(schema)
    framed = []
    for d in datums:
        buf = io.BytesIO()
        buf.write(b"\x00" + struct.pack(">I", 9))
        fastavro.schemaless_writer(buf, parsed, d)
        framed.append(buf.getvalue())
    plan = DecodePlan(
        None,
        FieldPlan("value", 9, json.dumps(schema), subject="s"),
        RegistryOptions(None, FieldFormat("avro"), {"url": "http://127.0.0.1:1"}),
        include_headers=False,
    )
    decoder = RecordDecoder(plan)
    assert decoder.value is not None
    column, errors = decoder.value.decode(framed)
    assert errors == {}
    assert column.to_pylist() == [
        {"via": {"Card": None, "Iban": {"pan": "FR76"}, "int": None}, "codes": [(1, "a"), (-2, "b")]},
        {"via": {"Card": None, "Iban": None, "int": dt.date(2026, 11, 29)}, "codes": []},
        {"via": None, "codes": []},
    ]
