"""Spark for Sluiceway, importing only ``connect.api``, PySpark and pyarrow:

- ``SparkSinkConnector``: topics into Spark tables (Parquet by default), exactly once
  for file formats (``spark_sink.table_log`` says how);
- the ``sluiceway`` Python Data Source (``spark_sink.reader``): Spark jobs read topics
  with ``spark.read.format("sluiceway")`` / ``spark.readStream``, no JVM Kafka jar.
  ``register(spark)`` adds it to a session the sink did not create.

The names are imported when first used: every Python process Spark starts to plan or read
a ``sluiceway`` query imports ``spark_sink.reader`` and so this package, and the sink's
modules would add ~150 ms to each (a streaming query's start-up, benchmarks/spark_reader.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spark_sink.connector import SparkSinkConnector, SparkSinkTask
    from spark_sink.session import register_data_source as register

__all__ = ["SparkSinkConnector", "SparkSinkTask", "register"]


def __getattr__(name: str) -> Any:
    if name in ("SparkSinkConnector", "SparkSinkTask"):
        from spark_sink import connector

        return getattr(connector, name)
    if name == "register":
        from spark_sink.session import register_data_source

        return register_data_source
    raise AttributeError(f"module 'spark_sink' has no attribute {name!r}")
