"""SparkSinkConnector in a real worker, against the real broker and real local Spark:
records in, rows out, read back with Spark's plain readers."""

from __future__ import annotations

import datetime
import decimal
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from pyspark.sql import SparkSession

from connect.api import Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp
from connect.converters.json import JsonConverter
from sluiceway.embedded import EmbeddedConnect
from spark_sink.table_log import COMMITS, STAGING
from tests.support import unique

JSON = "org.apache.kafka.connect.json.JsonConverter"
SINK = "spark_sink.SparkSinkConnector"


@pytest.fixture(scope="module")
def connect(tmp_path_factory: pytest.TempPathFactory, spark: SparkSession) -> Iterator[EmbeddedConnect]:
    # The worker runs in this process, so its tasks share the test session (one JVM).
    with EmbeddedConnect(tmp_path_factory.mktemp("spark-worker")) as c:
        yield c


def sink_config(topic: str, table: Path, **extra: str) -> dict[str, str]:
    return {
        "connector.class": SINK,
        "topics": topic,
        "table.path": str(table),
        "value.converter": JSON,
        "value.converter.schemas.enable": "true",
        "flush.size": "100",
        "flush.interval.ms": "300",
        "spark.master": "local[2]",
        **extra,
    }


def encoder(schemas: bool = True) -> JsonConverter:
    c = JsonConverter()
    c.configure({"schemas.enable": "true" if schemas else "false"}, False)
    return c


def produce_values(
    connect: EmbeddedConnect,
    topic: str,
    schema: Schema | None,
    values: list[Any],
    keys: list[str] | None = None,
) -> None:
    conv = encoder(schema is not None)
    payloads = [conv.from_connect_data(topic, schema, v) for v in values]
    connect.produce(topic, list(zip(keys or [None] * len(values), payloads, strict=True)))


def wait_rows(
    connect: EmbeddedConnect,
    spark: SparkSession,
    table: Path,
    n: int,
    fmt: str = "parquet",
    timeout: float = 60,
) -> Any:
    def count() -> int:
        if not table.exists():
            return 0
        try:
            return spark.read.format(fmt).option("mergeSchema", "true").load(str(table)).count()
        except Exception:
            return 0

    connect.wait_for(lambda: count() >= n, timeout=timeout, what=f"{n} rows in {table}")
    return spark.read.format(fmt).option("mergeSchema", "true").load(str(table))


ALL_TYPES = (
    SchemaBuilder.struct()
    .name("every.Type")
    .field("i8", Schema.INT8_SCHEMA)
    .field("i16", Schema.INT16_SCHEMA)
    .field("i32", Schema.INT32_SCHEMA)
    .field("i64", Schema.INT64_SCHEMA)
    .field("f32", Schema.FLOAT32_SCHEMA)
    .field("f64", Schema.FLOAT64_SCHEMA)
    .field("flag", Schema.BOOLEAN_SCHEMA)
    .field("text", Schema.OPTIONAL_STRING_SCHEMA)
    .field("raw", Schema.BYTES_SCHEMA)
    .field("amount", Decimal.builder(2).parameter("connect.decimal.precision", "12").build())
    .field("day", Date.SCHEMA)
    .field("at", Time.SCHEMA)
    .field("ts", Timestamp.SCHEMA)
    .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
    .field("attrs", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).build())
    .field(
        "owner",
        SchemaBuilder.struct()
        .field("name", Schema.STRING_SCHEMA)
        .field("since", Date.SCHEMA)
        .field("scores", SchemaBuilder.array(Decimal.schema(1)).build())
        .optional()
        .build(),
    )
    .build()
)


# The Spark type each field of ALL_TYPES lands as.
ALL_TYPES_IN_SPARK = {
    "i8": "tinyint",
    "i16": "smallint",
    "i32": "int",
    "i64": "bigint",
    "f32": "float",
    "f64": "double",
    "flag": "boolean",
    "text": "string",
    "raw": "binary",
    "amount": "decimal(12,2)",
    "day": "date",
    "at": "time(6)",
    "ts": "timestamp",
    "tags": "array<string>",
    "attrs": "map<string,bigint>",
    "owner": "struct<name:string,since:date,scores:array<decimal(38,1)>>",
}


def every_type(i: int) -> Struct:
    owner_schema = ALL_TYPES.field("owner").schema  # type: ignore[union-attr]
    owner = (
        None
        if i % 5 == 0
        else Struct(owner_schema)
        .put("name", f"owner-{i}")
        .put("since", datetime.date(2020, 1, 1) + datetime.timedelta(days=i))
        .put("scores", [decimal.Decimal(f"{i}.5"), decimal.Decimal("-1.0")])
    )
    return (
        Struct(ALL_TYPES)
        .put("i8", i % 100 - 50)
        .put("i16", i * 3 - 1000)
        .put("i32", i * 1000)
        .put("i64", i * 10**12)
        .put("f32", i / 4)
        .put("f64", i / 3)
        .put("flag", i % 2 == 0)
        .put("text", None if i % 7 == 0 else f"text {i} ü")
        .put("raw", bytes([i % 256, 0, 255]))
        .put("amount", decimal.Decimal(i) / 100 + decimal.Decimal("1000000.00"))
        .put("day", datetime.date(1999, 12, 31) + datetime.timedelta(days=i))
        .put("at", datetime.time(i % 24, i % 60, i % 60, (i % 1000) * 1000))
        .put(
            "ts",
            datetime.datetime(2024, 2, 29, tzinfo=datetime.UTC)
            + datetime.timedelta(milliseconds=i * 1234567),
        )
        .put("tags", [f"t{j}" for j in range(i % 4)])
        .put("attrs", {f"k{j}": j * i for j in range(i % 3)})
        .put("owner", owner)
    )


def test_every_mapped_type_lands_once_with_its_spark_type(
    connect: EmbeddedConnect, spark: SparkSession, tmp_path: Path
) -> None:
    topic, table, n = unique("types"), tmp_path / "types", 250
    connect.create_connector(unique("spark"), sink_config(topic, table))
    values = [every_type(i) for i in range(n)]
    produce_values(connect, topic, ALL_TYPES, values)
    df = wait_rows(connect, spark, table, n)
    assert df.count() == n
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    assert types == ALL_TYPES_IN_SPARK
    rows = {r["i32"] // 1000: r for r in df.collect()}
    assert sorted(rows) == list(range(n))
    for i in (0, 1, 7, 123, n - 1):
        r, v = rows[i], values[i]
        assert r["i8"] == v.get("i8") and r["i16"] == v.get("i16") and r["i64"] == v.get("i64")
        assert r["f32"] == pytest.approx(v.get("f32")) and r["f64"] == pytest.approx(v.get("f64"))
        assert r["flag"] is v.get("flag") and r["text"] == v.get("text") and bytes(r["raw"]) == v.get("raw")
        assert r["amount"] == v.get("amount") and r["day"] == v.get("day")
        assert r["at"] == v.get("at").replace(microsecond=(v.get("at").microsecond // 1000) * 1000)
        # The session time zone is UTC: Spark hands back naive UTC datetimes.
        assert r["ts"].replace(tzinfo=datetime.UTC) == v.get("ts")
        assert r["tags"] == v.get("tags") and dict(r["attrs"] or {}) == v.get("attrs")
        owner = v.get("owner")
        if owner is None:
            assert r["owner"] is None
        else:
            assert r["owner"]["name"] == owner.get("name") and r["owner"]["since"] == owner.get("since")
            assert r["owner"]["scores"] == owner.get("scores")


def test_partitioning_and_schema_evolution(
    connect: EmbeddedConnect, spark: SparkSession, tmp_path: Path
) -> None:
    topic, table = unique("evolve"), tmp_path / "evolve"
    v1 = (
        SchemaBuilder.struct().field("id", Schema.INT64_SCHEMA).field("account", Schema.STRING_SCHEMA).build()
    )
    v2 = (
        SchemaBuilder.struct()
        .field("id", Schema.INT64_SCHEMA)
        .field("account", Schema.STRING_SCHEMA)
        .field("note", Schema.OPTIONAL_STRING_SCHEMA)
        .build()
    )
    connect.create_connector(unique("spark"), sink_config(topic, table, **{"partition.by": "account"}))
    produce_values(
        connect, topic, v1, [Struct(v1).put("id", i).put("account", f"a{i % 3}") for i in range(150)]
    )
    wait_rows(connect, spark, table, 150)
    produce_values(
        connect,
        topic,
        v2,
        [Struct(v2).put("id", i).put("account", f"a{i % 3}").put("note", f"n{i}") for i in range(150, 300)],
    )
    df = wait_rows(connect, spark, table, 300)
    assert df.count() == 300
    assert sorted(os.listdir(table)) == ["_sluiceway", "account=a0", "account=a1", "account=a2"]
    assert set(df.columns) == {"id", "account", "note"}
    rows = {r["id"]: r for r in df.collect()}
    assert sorted(rows) == list(range(300))
    assert all(rows[i]["note"] is None for i in range(150))
    assert all(rows[i]["note"] == f"n{i}" and rows[i]["account"] == f"a{i % 3}" for i in range(150, 300))
    # Every data file carries its partition's offset range in its name.
    names = [
        f
        for d in ("account=a0", "account=a1", "account=a2")
        for f in os.listdir(table / d)
        if f.startswith("part-")
    ]
    assert names and all(f.startswith(f"part-{topic}+0+") and f.endswith(".parquet") for f in names)


def test_schemaless_json_with_declared_schema_and_with_inference(
    connect: EmbeddedConnect, spark: SparkSession, tmp_path: Path
) -> None:
    declared_topic, inferred_topic = unique("declared"), unique("inferred")
    declared, inferred = tmp_path / "declared", tmp_path / "inferred"
    for topic, table, extra in (
        (
            declared_topic,
            declared,
            {"value.schema": "id BIGINT, amount DECIMAL(10,2), at TIMESTAMP, who STRING"},
        ),
        (inferred_topic, inferred, {}),
    ):
        connect.create_connector(
            unique("spark"), sink_config(topic, table, **{"value.converter.schemas.enable": "false", **extra})
        )
        connect.produce(
            topic,
            [
                (
                    None,
                    orjson.dumps(
                        {"id": i, "amount": f"{i}.25", "at": "2024-05-01T10:00:00Z", "who": f"u{i}"}
                    ),
                )
                for i in range(120)
            ],
        )
    d = wait_rows(connect, spark, declared, 120)
    assert {f.name: f.dataType.simpleString() for f in d.schema.fields} == {
        "id": "bigint",
        "amount": "decimal(10,2)",
        "at": "timestamp",
        "who": "string",
    }
    assert sorted(r["amount"] for r in d.collect())[:2] == [decimal.Decimal("0.25"), decimal.Decimal("1.25")]
    i = wait_rows(connect, spark, inferred, 120)
    assert {f.name: f.dataType.simpleString() for f in i.schema.fields} == {
        "id": "bigint",
        "amount": "string",
        "at": "string",
        "who": "string",
    }
    assert sorted(r["id"] for r in i.collect()) == list(range(120))


def test_kafka_coordinates_columns(connect: EmbeddedConnect, spark: SparkSession, tmp_path: Path) -> None:
    topic, table = unique("coords"), tmp_path / "coords"
    connect.request("POST", "/connectors", None)  # the REST API answers errors; the worker keeps serving
    connect.create_connector(
        unique("spark"), sink_config(topic, table, **{"include.kafka.coordinates": "true"})
    )
    produce_values(
        connect, topic, Schema.STRING_SCHEMA, [f"v{i}" for i in range(20)], keys=[f"k{i}" for i in range(20)]
    )
    df = wait_rows(connect, spark, table, 20)
    assert df.columns == ["value", "_topic", "_partition", "_offset", "_timestamp", "_key"]
    rows = sorted(df.collect(), key=lambda r: r["_offset"])
    assert [(r["value"], r["_key"], r["_offset"]) for r in rows] == [(f"v{i}", f"k{i}", i) for i in range(20)]
    assert {r["_topic"] for r in rows} == {topic} and {r["_partition"] for r in rows} == {0}
    assert all(r["_timestamp"] is not None for r in rows)


def test_records_that_do_not_fit_go_to_the_dead_letter_queue(
    connect: EmbeddedConnect, spark: SparkSession, tmp_path: Path
) -> None:
    topic, table, dlq = unique("fit"), tmp_path / "fit", unique("dlq")
    connect.create_connector(
        unique("spark"),
        sink_config(
            topic,
            table,
            **{
                "value.converter.schemas.enable": "false",
                "value.schema": "id BIGINT, n INT",
                "errors.tolerance": "all",
                "errors.deadletterqueue.topic.name": dlq,
                "errors.deadletterqueue.topic.replication.factor": "1",
                "errors.deadletterqueue.context.headers.enable": "true",
            },
        ),
    )
    good = [{"id": i, "n": i} for i in range(30)]
    bad = [{"id": 100, "n": "not a number"}, {"id": 101, "n": 2**40}]
    connect.produce(topic, [(None, orjson.dumps(v)) for v in good[:15] + bad + good[15:]])
    df = wait_rows(connect, spark, table, 30)
    dead = connect.consume(dlq, 2)
    assert sorted(orjson.loads(m.value())["id"] for m in dead) == [100, 101]
    headers = dict(dead[0].headers() or [])
    assert b"does not fit" in headers["__connect.errors.exception.message"]
    assert sorted(r["id"] for r in df.collect()) == list(range(30))


def test_a_new_connector_on_the_same_table_resumes_from_the_table_not_the_group(
    connect: EmbeddedConnect, spark: SparkSession, tmp_path: Path
) -> None:
    topic, table = unique("resume"), tmp_path / "resume"
    first = unique("spark")
    connect.create_connector(first, sink_config(topic, table))
    produce_values(connect, topic, Schema.INT64_SCHEMA, list(range(200)))
    wait_rows(connect, spark, table, 200)
    connect.request("DELETE", f"/connectors/{first}")
    produce_values(connect, topic, Schema.INT64_SCHEMA, list(range(200, 350)))
    # Another name is another consumer group, which starts from the beginning of the topic;
    # the table's commit log says 200 records are in already.
    connect.create_connector(unique("spark"), sink_config(topic, table))
    df = wait_rows(connect, spark, table, 350)
    connect.wait_for(lambda: not any((table / STAGING).glob("*/*")), what="staging to be empty")
    assert sorted(r["value"] for r in df.collect()) == list(range(350))
    assert len(list((table / COMMITS / f"{topic}+0").glob("*.json"))) == 1


def test_catalog_table(connect: EmbeddedConnect, spark: SparkSession, tmp_path: Path) -> None:
    topic, name = unique("catalog"), "spark_sink_" + unique("t").replace("-", "_")
    v1 = SchemaBuilder.struct().field("id", Schema.INT64_SCHEMA).field("region", Schema.STRING_SCHEMA).build()
    config = sink_config(topic, tmp_path, **{"table.name": name, "partition.by": "region"})
    del config["table.path"]
    connect.create_connector(unique("spark"), config)
    produce_values(
        connect,
        topic,
        v1,
        [Struct(v1).put("id", i).put("region", "eu" if i % 2 else "us") for i in range(50)],
    )
    connect.wait_for(
        lambda: spark.catalog.tableExists(name) and spark.table(name).count() == 50,
        what="50 rows in the table",
    )
    assert spark.sql(
        f"SELECT region, count(*) AS n FROM {name} GROUP BY region ORDER BY region"
    ).collect() == [
        ("eu", 25),
        ("us", 25),
    ]
