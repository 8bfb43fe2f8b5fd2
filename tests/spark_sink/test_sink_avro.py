"""The Spark sink with the AvroConverter: records written as Avro through our Schema
Registry land as typed columns, the same types as from JSON with schemas."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from connect.converters.avro import AvroConverter
from connect.converters.protobuf import ProtobufConverter
from schema_registry.server import RegistryServer
from sluiceway.embedded import EmbeddedConnect
from tests.schema_registry.support import running_registry
from tests.spark_sink.test_sink import (
    ALL_TYPES,
    ALL_TYPES_IN_SPARK,
    connect,
    every_type,
    sink_config,
    wait_rows,
)
from tests.support import unique

FIXTURES = (connect,)
AVRO = "io.confluent.connect.avro.AvroConverter"


@pytest.fixture(scope="module")
def registry(connect: EmbeddedConnect) -> Iterator[RegistryServer]:
    with running_registry(connect.bootstrap) as server:
        yield server


def test_avro_values_land_as_typed_columns(
    connect: EmbeddedConnect, registry: RegistryServer, spark: SparkSession, tmp_path: Path
) -> None:
    topic, table, n = unique("avro-types"), tmp_path / "avro-types", 60
    converter = AvroConverter()
    converter.configure({"schema.registry.url": registry.url}, False)
    values = [every_type(i) for i in range(n)]
    connect.produce(topic, [(None, converter.from_connect_data(topic, ALL_TYPES, v)) for v in values])
    connect.create_connector(
        unique("spark"),
        sink_config(
            topic, table, **{"value.converter": AVRO, "value.converter.schema.registry.url": registry.url}
        ),
    )
    df = wait_rows(connect, spark, table, n)
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    assert types == ALL_TYPES_IN_SPARK
    rows = {r["i32"] // 1000: r for r in df.collect()}
    assert sorted(rows) == list(range(n))
    for i in (0, 1, 7, n - 1):
        r, v = rows[i], values[i]
        assert (r["i8"], r["text"], r["amount"], r["day"]) == (
            v.get("i8"),
            v.get("text"),
            v.get("amount"),
            v.get("day"),
        )
        assert r["tags"] == v.get("tags") and dict(r["attrs"] or {}) == v.get("attrs")


PROTOBUF = "io.confluent.connect.protobuf.ProtobufConverter"


def test_protobuf_values_land_as_typed_columns(
    connect: EmbeddedConnect, registry: RegistryServer, spark: SparkSession, tmp_path: Path
) -> None:
    """The same records written as Protobuf (nullable fields as wrappers, so nulls stay
    nulls) land as the same typed columns."""
    topic, table, n = unique("protobuf-types"), tmp_path / "protobuf-types", 30
    settings = {"schema.registry.url": registry.url, "wrapper.for.nullables": "true"}
    converter = ProtobufConverter()
    converter.configure(settings, False)
    values = [every_type(i) for i in range(n)]
    connect.produce(topic, [(None, converter.from_connect_data(topic, ALL_TYPES, v)) for v in values])
    connect.create_connector(
        unique("spark"),
        sink_config(
            topic,
            table,
            **{"value.converter": PROTOBUF, **{f"value.converter.{k}": v for k, v in settings.items()}},
        ),
    )
    df = wait_rows(connect, spark, table, n)
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    assert types == ALL_TYPES_IN_SPARK
    rows = {r["i32"] // 1000: r for r in df.collect()}
    assert sorted(rows) == list(range(n))
    for i in (0, 1, 7, n - 1):
        r, v = rows[i], values[i]
        assert (r["i8"], r["text"], r["amount"], r["day"]) == (
            v.get("i8"),
            v.get("text"),
            v.get("amount"),
            v.get("day"),
        )
        assert r["tags"] == v.get("tags") and dict(r["attrs"] or {}) == v.get("attrs")
