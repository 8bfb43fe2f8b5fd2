"""The Spark sink's settings.

``spark.master``, ``spark.app.name`` and ``spark.conf.<key>`` describe the worker's
SparkSession (one per worker process, see ``spark_sink.session``); the rest describe
the table and how batches reach it. Keys that only make sense together are checked in
``problems`` and reported against the key to fix.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import partial
from typing import Any, Literal

from connect.api import Boolean, CommaList, ConfigIssue, ConnectorConfig, Field, importance

SPARK = "Spark"
TABLE = "Table"
WRITES = "Writes"

#: Formats that keep their own transaction log: written through their own writer.
TABLE_FORMATS = frozenset({"delta", "iceberg", "hudi"})
_CONF_PREFIX = "spark.conf."
_COLUMN = re.compile(r"^[^,\s`]+$")


# Each key's Kafka metadata, by the group it is listed under.
_spark = partial(importance, group=SPARK)
_table = partial(importance, group=TABLE)
_writes = partial(importance, group=WRITES)


class SparkSinkConfig(ConnectorConfig):
    """Settings of ``SparkSinkConnector`` (its tasks get the same keys)."""

    topics: CommaList = Field(default_factory=list, alias="topics")

    # -- Spark --------------------------------------------------------------------------
    spark_master: str = Field(
        "local[*]",
        alias="spark.master",
        min_length=1,
        description="Where the worker's SparkSession runs: local[*] (this machine, every core), "
        "local[N], spark://host:7077, yarn, k8s://... One session per worker process, shared by "
        "its tasks; the first task to start decides its settings.",
        json_schema_extra=_spark("HIGH"),
    )
    spark_app_name: str = Field(
        "sluiceway-spark-sink",
        alias="spark.app.name",
        min_length=1,
        description="The Spark application name of the worker's session.",
        json_schema_extra=_spark("LOW"),
    )

    # -- the table ----------------------------------------------------------------------
    table_path: str | None = Field(
        None,
        alias="table.path",
        description="Where the table's files live: any Hadoop URI Spark can write (a local path, "
        "file:///..., hdfs://..., s3a://...). Read it back with spark.read.format(<format>).load(<path>).",
        json_schema_extra=_table("HIGH", width="LONG"),
    )
    table_name: str | None = Field(
        None,
        alias="table.name",
        description="A catalog table (db.table) instead of a path: created at the warehouse "
        "location on first write if it does not exist; its files are written like table.path's.",
        json_schema_extra=_table("HIGH"),
    )
    format: str = Field(
        "parquet",
        alias="format",
        min_length=1,
        description="The Spark writer format: parquet, orc, json, csv, avro (with spark-avro), or a "
        "table format whose jars the session has (delta, iceberg). File formats are written exactly "
        "once; table formats go through their own writer (at least once).",
        json_schema_extra=_table("HIGH"),
    )
    partition_by: CommaList = Field(
        default_factory=list,
        alias="partition.by",
        description="Columns to partition the table by (Hive-style directories col=value).",
        json_schema_extra=_table("MEDIUM", kafka_type="LIST"),
    )
    schema_evolution: Boolean = Field(
        True,
        alias="schema.evolution",
        description="Add new fields of incoming records to the table as nullable columns. When "
        "false, a record with a field the table lacks does not fit and goes to errors.tolerance / "
        "the dead letter queue. Readers of file formats see added columns with mergeSchema=true.",
        json_schema_extra=_table("MEDIUM", kafka_type="BOOLEAN"),
    )
    include_kafka_coordinates: Boolean = Field(
        False,
        alias="include.kafka.coordinates",
        description="Add the columns _topic, _partition, _offset, _timestamp and _key.",
        json_schema_extra=_table("MEDIUM", kafka_type="BOOLEAN"),
    )
    value_schema: str | None = Field(
        None,
        alias="value.schema",
        description="For schemaless (JSON without schemas) values: the table schema in Spark DDL, "
        "e.g. 'id BIGINT, name STRING, amount DECIMAL(10,2)'. Unset: inferred from each batch.",
        json_schema_extra=_table("MEDIUM", width="LONG"),
    )
    behavior_on_null_values: Literal["ignore", "fail"] = Field(
        "fail",
        alias="behavior.on.null.values",
        description="A record with a null value (a tombstone) has no row: ignore skips it, fail "
        "reports it to errors.tolerance / the dead letter queue.",
        json_schema_extra=_table("LOW"),
    )

    # -- writes -------------------------------------------------------------------------
    flush_size: int = Field(
        50_000,
        alias="flush.size",
        ge=1,
        description="Records buffered by a task before they are written to the table as one Spark job.",
        json_schema_extra=_writes("HIGH", kafka_type="INT"),
    )
    flush_interval_ms: int = Field(
        60_000,
        alias="flush.interval.ms",
        ge=1,
        description="Write what is buffered once the oldest buffered record has waited this long.",
        json_schema_extra=_writes("MEDIUM", kafka_type="LONG"),
    )
    max_retries: int = Field(
        3,
        alias="max.retries",
        ge=0,
        description="Retries of a failed write (Spark job or publish) before the task fails. Nothing "
        "is lost or duplicated either way: the table's commit log says what is in it.",
        json_schema_extra=_writes("LOW", kafka_type="INT"),
    )
    retry_backoff_ms: int = Field(
        1000,
        alias="retry.backoff.ms",
        ge=0,
        description="Wait before the first retry of a failed write; doubled for each further one.",
        json_schema_extra=_writes("LOW", kafka_type="LONG"),
    )

    @classmethod
    def problems(cls, props: Mapping[str, Any]) -> list[ConfigIssue]:
        found = []
        path, name = props.get("table.path"), props.get("table.name")
        if not path and not name:
            found.append(
                ConfigIssue("table.path", "Set table.path (a Hadoop URI) or table.name (a catalog table)")
            )
        elif path and name:
            found.append(ConfigIssue("table.name", "Set either table.path or table.name, not both"))
        fmt = str(props.get("format", "parquet")).strip().lower()
        if fmt == "text":
            found.append(ConfigIssue("format", "format text holds one string column only; use json or csv"))
        columns = props.get("partition.by") or []
        if isinstance(columns, str):
            columns = [c.strip() for c in columns.split(",") if c.strip()]
        for column in columns:
            if not _COLUMN.match(str(column)):
                found.append(ConfigIssue("partition.by", f"{column!r} is not a column name"))
        return found

    def spark_conf(self) -> dict[str, str]:
        """The ``spark.conf.<key>`` settings, as Spark keys."""
        return {k: str(v) for k, v in self.with_prefix(_CONF_PREFIX).items()}

    @property
    def normalized_format(self) -> str:
        return self.format.strip().lower()

    @property
    def is_file_format(self) -> bool:
        return self.normalized_format not in TABLE_FORMATS
