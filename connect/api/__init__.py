"""Sluiceway's plugin API: everything a connector, transform or converter author needs.

This package imports nothing from the runtime; plugins import only from here.

- Connectors and tasks: ``SourceConnector``, ``SinkConnector``, ``SourceTask``,
  ``SinkTask`` and their contexts (``connect.api.connector``, ``connect.api.task``).
- Records: ``SourceRecord``, ``SinkRecord``, ``Headers``, ``TopicPartition``; and
  ``SinkRecordBatch``, what ``SinkTask.put`` receives: records made when first read, and
  their values as consumed through ``value_runs`` (``connect.api.sink_batch``); and
  ``SourceRecordBatch``, what ``SourceTask.poll`` may return for records of one topic
  and source partition: columns, records made only if read (``connect.api.source_batch``).
- Data: ``Schema``, ``SchemaBuilder``, ``Struct``, ``Type`` and the logical types
  ``Decimal``, ``Date``, ``Time``, ``Timestamp`` (``connect.api.data``).
- Settings: ``ConnectorConfig`` and pydantic's ``Field`` (``connect.api.config``).
- Transforms: ``Transformation``, ``Predicate`` and ``RecordColumns``, the batch their
  optional batch forms work on, with ``StructColumn`` for structs held column-wise
  (``connect.api.record_columns``).
- Converters: ``Converter``, ``HeaderConverter``.
- Errors: ``ConnectException``, ``RetriableException``, ``DataException``.
- ``compile_java_regex``: the Java regexes Kafka configs carry, compiled for Python.

Modules imported on their own, for sinks that need them: ``connect.api.arrow`` (records as
Arrow tables; needs pyarrow), ``connect.api.avro`` (Connect schemas and values as Avro, the
way Confluent's AvroData maps them), ``connect.api.json_values`` (Connect values as JSON values),
``connect.api.retry`` (jittered exponential backoff), ``connect.api.java_dates`` (Java date
patterns: SimpleDateFormat's, which Kafka's transformations take, and Joda-Time's, which
Confluent's storage partitioners take).
"""

from pydantic import Field, SecretStr

from connect.api.config import (
    Boolean,
    CommaList,
    ConfigIssue,
    ConfigModel,
    ConfigValidationError,
    ConnectorConfig,
    importance,
)
from connect.api.connector import (
    Connector,
    ConnectorContext,
    ConnectorTransactionBoundaries,
    ExactlyOnceSupport,
    SinkConnector,
    SinkConnectorContext,
    SourceConnector,
    SourceConnectorContext,
)
from connect.api.converter import ConvertedBatch, Converter, HeaderConverter
from connect.api.data import (
    Date,
    Decimal,
    Schema,
    SchemaAndValue,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    Type,
)
from connect.api.data import (
    Field as SchemaField,
)
from connect.api.errors import (
    AlreadyExistsException,
    ConnectException,
    DataException,
    NotFoundException,
    RetriableException,
    SchemaProjectorException,
)
from connect.api.headers import Header, Headers
from connect.api.java_regex import compile_java_regex
from connect.api.plugin_metrics import PluginMetrics
from connect.api.record_columns import RecordColumns, StructColumn
from connect.api.records import ConnectRecord, SinkRecord, SourceRecord, TimestampType, TopicPartition
from connect.api.schema_projector import SchemaProjector
from connect.api.sink_batch import RawForm, SinkRecordBatch, ValueRun
from connect.api.source_batch import RecordMetadataBatch, SourceRecordBatch
from connect.api.task import (
    ErrantRecordReporter,
    OffsetStorageReader,
    RecordMetadata,
    SinkTask,
    SinkTaskContext,
    SourceTask,
    SourceTaskContext,
    Task,
    TransactionContext,
    partition_key,
)
from connect.api.transforms import FunctionTransformation, Predicate, Transformation

__all__ = [
    "AlreadyExistsException",
    "Boolean",
    "CommaList",
    "ConfigIssue",
    "ConfigModel",
    "ConfigValidationError",
    "ConnectException",
    "ConnectRecord",
    "Connector",
    "ConnectorConfig",
    "ConnectorContext",
    "ConnectorTransactionBoundaries",
    "ConvertedBatch",
    "Converter",
    "DataException",
    "Date",
    "Decimal",
    "ErrantRecordReporter",
    "ExactlyOnceSupport",
    "Field",
    "FunctionTransformation",
    "Header",
    "HeaderConverter",
    "Headers",
    "NotFoundException",
    "OffsetStorageReader",
    "PluginMetrics",
    "Predicate",
    "RawForm",
    "RecordColumns",
    "RecordMetadata",
    "RecordMetadataBatch",
    "RetriableException",
    "Schema",
    "SchemaAndValue",
    "SchemaBuilder",
    "SchemaField",
    "SchemaProjector",
    "SchemaProjectorException",
    "SecretStr",
    "SinkConnector",
    "SinkConnectorContext",
    "SinkRecord",
    "SinkRecordBatch",
    "SinkTask",
    "SinkTaskContext",
    "SourceConnector",
    "SourceConnectorContext",
    "SourceRecord",
    "SourceRecordBatch",
    "SourceTask",
    "SourceTaskContext",
    "Struct",
    "StructColumn",
    "Task",
    "Time",
    "Timestamp",
    "TimestampType",
    "TopicPartition",
    "TransactionContext",
    "Transformation",
    "Type",
    "ValueRun",
    "compile_java_regex",
    "importance",
    "partition_key",
]
