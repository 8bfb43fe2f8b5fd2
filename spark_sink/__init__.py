"""Spark for Sluiceway, importing only ``connect.api``, PySpark and pyarrow:

- ``SparkSinkConnector``: topics into Spark tables (Parquet by default), exactly once
  for file formats (``spark_sink.table_log`` says how);
- the ``sluiceway`` Python Data Source (``spark_sink.reader``): Spark jobs read topics
  with ``spark.read.format("sluiceway")`` / ``spark.readStream``, no JVM Kafka jar.
  ``register(spark)`` adds it to a session the sink did not create.
"""

from spark_sink.connector import SparkSinkConnector, SparkSinkTask
from spark_sink.session import register_data_source as register

__all__ = ["SparkSinkConnector", "SparkSinkTask", "register"]
