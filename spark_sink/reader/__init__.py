"""The "sluiceway" PySpark data source: Kafka topics as batch and streaming DataFrames, read
with confluent-kafka in Spark's Python workers, so no JVM Kafka connector jar is needed.

    spark_sink.session.register_data_source(spark)   # or spark.dataSource.register(SluicewayDataSource)
    df = (spark.readStream.format("sluiceway")
          .option("kafka.bootstrap.servers", "localhost:9092")
          .option("subscribe", "orders")
          .load())

Options and columns are those of Spark's Kafka source (``key``, ``value``, ``topic``,
``partition``, ``offset``, ``timestamp``, ``timestampType`` and, with includeHeaders=true,
``headers``).

- ``options``: the options, parsed and checked (pure functions), and offset arithmetic.
- ``kafka``: partition discovery, offset lookups and range reads with confluent-kafka.
- ``source``: the pyspark DataSource, DataSourceReader and DataSourceStreamReader.
- ``registry_options``, ``registry_plan``, ``registry_values``: ``value.format`` /
  ``key.format`` (``avro``, ``json-schema``, ``protobuf``): Schema Registry-framed records
  decoded into typed columns (their options; the reader schemas and columns, where Spark
  plans; the decoding, in executors). ``registry_formats`` turns JSON Schema and Protobuf
  reader schemas into Connect schemas; ``registry_decoders`` decodes their records.
"""

from spark_sink.reader.source import SluicewayDataSource

__all__ = ["SluicewayDataSource"]
