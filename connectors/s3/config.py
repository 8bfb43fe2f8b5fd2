"""The S3 sink's settings: Confluent's ``S3SinkConnector`` keys and defaults.

Class-valued keys (``format.class``, ``partitioner.class``, ``timestamp.extractor``)
take Confluent's Java class names or their short names. Keys that only make sense
together are checked in ``problems`` and reported against the key to fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator

from connect.api import CommaList, ConfigIssue, ConnectorConfig, Field, SecretStr, importance
from connect.api.config import lower_case, upper_case
from connectors.s3.schema_compatibility import SchemaCompatibility

S3 = "S3"
STORAGE = "Storage"
PARTITIONER = "Partitioner"

_s3 = partial(importance, group=S3)
_storage = partial(importance, group=STORAGE)
_partitioner = partial(importance, group=PARTITIONER)

MIN_PART_SIZE = 5 * 1024 * 1024  # S3's smallest part (all but the last)

FORMATS = {
    "io.confluent.connect.s3.format.json.JsonFormat": "json",
    "io.confluent.connect.s3.format.parquet.ParquetFormat": "parquet",
    "io.confluent.connect.s3.format.bytearray.ByteArrayFormat": "bytearray",
    "io.confluent.connect.s3.format.avro.AvroFormat": "avro",
    "JsonFormat": "json",
    "AvroFormat": "avro",
    "ParquetFormat": "parquet",
    "ByteArrayFormat": "bytearray",
}


AvroCodec = Annotated[
    Literal["null", "deflate", "snappy", "bzip2", "xz", "zstandard"], BeforeValidator(lower_case)
]
SchemaCompatibilityLevel = Annotated[SchemaCompatibility, BeforeValidator(upper_case)]
NullValues = Annotated[Literal["ignore", "fail"], BeforeValidator(lower_case)]
Compression = Annotated[Literal["none", "gzip"], BeforeValidator(lower_case)]
DecimalFormat = Annotated[Literal["BASE64", "NUMERIC"], BeforeValidator(upper_case)]
ParquetCodec = Annotated[
    Literal["none", "snappy", "gzip", "zstd", "lz4", "brotli"], BeforeValidator(lower_case)
]


class S3SinkConfig(ConnectorConfig):
    """Settings of ``S3SinkConnector`` (its tasks get the same keys)."""

    topics: CommaList = Field(default_factory=list, alias="topics")

    # -- S3 ------------------------------------------------------------------------------
    s3_bucket_name: str = Field(
        alias="s3.bucket.name",
        min_length=3,
        description="The bucket objects are written to; it must exist.",
        json_schema_extra=_s3("HIGH"),
    )
    s3_region: str = Field(
        "us-west-2",
        alias="s3.region",
        description="The bucket's AWS region.",
        json_schema_extra=_s3("MEDIUM"),
    )
    store_url: str | None = Field(
        None,
        alias="store.url",
        description="A custom S3 endpoint (MinIO, LocalStack, a VPC endpoint, ...); path-style addressing.",
        json_schema_extra=_s3("MEDIUM", width="LONG"),
    )
    aws_access_key_id: str | None = Field(
        None,
        alias="aws.access.key.id",
        description="Access key; unset uses the standard AWS credential chain (environment, profile, role).",
        json_schema_extra=_s3("HIGH"),
    )
    aws_secret_access_key: SecretStr | None = Field(
        None,
        alias="aws.secret.access.key",
        description="Secret key of aws.access.key.id. Never logged or shown.",
        json_schema_extra=_s3("HIGH", kafka_type="PASSWORD"),
    )
    s3_part_size: int = Field(
        25 * 1024 * 1024,
        alias="s3.part.size",
        ge=MIN_PART_SIZE,
        le=2**31 - 1,
        description="Objects larger than this are uploaded in parts of this size (multipart upload).",
        json_schema_extra=_s3("HIGH", kafka_type="INT"),
    )
    s3_compression_type: Compression = Field(
        "none",
        alias="s3.compression.type",
        description="gzip compresses JSON and byte array objects (extension .gz added); none leaves them.",
        json_schema_extra=_s3("LOW"),
    )
    s3_retry_backoff_ms: int = Field(
        200,
        alias="s3.retry.backoff.ms",
        ge=0,
        description="Base of the jittered exponential backoff between retries of a failed request "
        "(throttling, 5xx, lost connections).",
        json_schema_extra=_s3("LOW", kafka_type="LONG"),
    )
    s3_part_retries: int = Field(
        3,
        alias="s3.part.retries",
        ge=0,
        description="Retries of a failed request before put() asks to be retried later (the task keeps "
        "running; nothing is committed until the object is in S3).",
        json_schema_extra=_s3("LOW", kafka_type="INT"),
    )

    # -- storage -------------------------------------------------------------------------
    topics_dir: str = Field(
        "topics",
        alias="topics.dir",
        description="The top-level directory of the objects: <topics.dir>/<topic>/<partition path>/...",
        json_schema_extra=_storage("HIGH"),
    )
    directory_delim: str = Field(
        "/",
        alias="directory.delim",
        min_length=1,
        description="Directory delimiter.",
        json_schema_extra=_storage("LOW"),
    )
    file_delim: str = Field(
        "+",
        alias="file.delim",
        min_length=1,
        description="Delimiter of topic, partition and offset in object names.",
        json_schema_extra=_storage("LOW"),
    )
    filename_offset_zero_pad_width: int = Field(
        10,
        alias="filename.offset.zero.pad.width",
        ge=1,
        description="Digits of the start offset in object names (zero-padded, so names sort by offset).",
        json_schema_extra=_storage("LOW", kafka_type="INT"),
    )
    format_class: str = Field(
        alias="format.class",
        description="io.confluent.connect.s3.format.json.JsonFormat (JSON lines), "
        "...avro.AvroFormat (Avro container files), ...parquet.ParquetFormat or "
        "...bytearray.ByteArrayFormat (raw values).",
        json_schema_extra=_storage("HIGH"),
    )
    flush_size: int = Field(
        alias="flush.size",
        ge=1,
        description="Records of a topic partition per commit: the open objects are written when this many "
        "have arrived.",
        json_schema_extra=_storage("HIGH", kafka_type="INT"),
    )
    rotate_interval_ms: int = Field(
        -1,
        alias="rotate.interval.ms",
        ge=-1,
        description="Commit when a record's timestamp (timestamp.extractor) is this far past the first "
        "record's of the open objects; -1 disables. Deterministic with Record or RecordField timestamps.",
        json_schema_extra=_storage("HIGH", kafka_type="LONG"),
    )
    rotate_schedule_interval_ms: int = Field(
        -1,
        alias="rotate.schedule.interval.ms",
        ge=-1,
        description="Commit on the wall clock, at every multiple of this interval (in timezone); -1 "
        "disables. Not deterministic: a restart may cut objects differently, so records can repeat.",
        json_schema_extra=_storage("MEDIUM", kafka_type="LONG"),
    )
    behavior_on_null_values: NullValues = Field(
        "fail",
        alias="behavior.on.null.values",
        description="A record with a null value: ignore skips it, fail hands it to errors.tolerance.",
        json_schema_extra=_storage("LOW"),
    )
    json_decimal_format: DecimalFormat = Field(
        "BASE64",
        alias="json.decimal.format",
        description="Decimals in JSON objects: BASE64 (Kafka's JsonConverter default) or NUMERIC.",
        json_schema_extra=_storage("LOW"),
    )
    parquet_codec: ParquetCodec = Field(
        "snappy",
        alias="parquet.codec",
        description="Parquet compression codec; it names the extension too (.snappy.parquet).",
        json_schema_extra=_storage("LOW"),
    )
    schema_compatibility: SchemaCompatibilityLevel = Field(
        "NONE",
        alias="schema.compatibility",
        description="What a record whose value schema is not the current one does: NONE commits the open "
        "files and starts new ones; BACKWARD and FULL start new files for a newer schema version and "
        "project an older one to the current schema; FORWARD the other way round.",
        json_schema_extra=_storage("HIGH"),
    )
    avro_codec: AvroCodec = Field(
        "null",
        alias="avro.codec",
        description="Avro container files' block codec: null, deflate, snappy, bzip2, xz or zstandard.",
        json_schema_extra=_storage("LOW"),
    )
    format_bytearray_extension: str = Field(
        ".bin",
        alias="format.bytearray.extension",
        description="Extension of ByteArrayFormat objects.",
        json_schema_extra=_storage("LOW"),
    )
    format_bytearray_separator: str = Field(
        "\n",
        alias="format.bytearray.separator",
        description="Written after each value in ByteArrayFormat objects.",
        json_schema_extra=_storage("LOW"),
    )

    # -- partitioner ---------------------------------------------------------------------
    partitioner_class: str = Field(
        "io.confluent.connect.storage.partitioner.DefaultPartitioner",
        alias="partitioner.class",
        description="DefaultPartitioner (partition=<n>), FieldPartitioner (partition.field.name), "
        "TimeBasedPartitioner (path.format, partition.duration.ms), HourlyPartitioner, DailyPartitioner.",
        json_schema_extra=_partitioner("HIGH"),
    )
    partition_field_name: CommaList = Field(
        default_factory=list,
        alias="partition.field.name",
        description="Value fields FieldPartitioner names directories after (field=value/...).",
        json_schema_extra=_partitioner("MEDIUM", kafka_type="LIST"),
    )
    path_format: str | None = Field(
        None,
        alias="path.format",
        description="TimeBasedPartitioner's directory pattern (Joda-Time), e.g. "
        "'year'=YYYY/'month'=MM/'day'=dd.",
        json_schema_extra=_partitioner("MEDIUM"),
    )
    partition_duration_ms: int = Field(
        -1,
        alias="partition.duration.ms",
        ge=-1,
        description="TimeBasedPartitioner's directory duration: timestamps are floored to it.",
        json_schema_extra=_partitioner("MEDIUM", kafka_type="LONG"),
    )
    locale: str = Field(
        "en",
        alias="locale",
        description="Locale of path.format's text fields.",
        json_schema_extra=_partitioner("LOW"),
    )
    timezone: str | None = Field(
        None,
        alias="timezone",
        description="Time zone (IANA name) of time-based directories and scheduled rotation.",
        json_schema_extra=_partitioner("MEDIUM"),
    )
    timestamp_extractor: str = Field(
        "Wallclock",
        alias="timestamp.extractor",
        description="Where record times come from: Wallclock, Record (the Kafka timestamp) or RecordField "
        "(timestamp.field).",
        json_schema_extra=_partitioner("MEDIUM"),
    )
    timestamp_field: str = Field(
        "timestamp",
        alias="timestamp.field",
        description="RecordField's value field (dotted for nested): epoch ms, a Timestamp or ISO-8601 text.",
        json_schema_extra=_partitioner("MEDIUM"),
    )

    @classmethod
    def problems(cls, props: Mapping[str, Any]) -> list[ConfigIssue]:
        found = []
        fmt = str(props.get("format.class", "")).strip()
        if fmt and fmt not in FORMATS:
            found.append(
                ConfigIssue(
                    "format.class",
                    f"{fmt} is not a format this sink writes: use "
                    "io.confluent.connect.s3.format.json.JsonFormat, ...avro.AvroFormat, "
                    "...parquet.ParquetFormat or ...bytearray.ByteArrayFormat",
                )
            )
        key, secret = props.get("aws.access.key.id"), props.get("aws.secret.access.key")
        if bool(key) != bool(secret):
            missing = "aws.secret.access.key" if key else "aws.access.key.id"
            found.append(
                ConfigIssue(missing, "Set both aws.access.key.id and aws.secret.access.key, or neither")
            )
        schedule = _int(props.get("rotate.schedule.interval.ms", -1))
        if schedule > 0 and not props.get("timezone"):
            found.append(ConfigIssue("timezone", "rotate.schedule.interval.ms needs a timezone"))
        if (
            FORMATS.get(fmt) == "parquet"
            and str(props.get("s3.compression.type", "none")).strip().lower() == "gzip"
        ):
            found.append(
                ConfigIssue("s3.compression.type", "Parquet compresses itself: set parquet.codec instead")
            )
        if (
            FORMATS.get(fmt) == "avro"
            and str(props.get("s3.compression.type", "none")).strip().lower() == "gzip"
        ):
            found.append(
                ConfigIssue("s3.compression.type", "Avro files compress their blocks: set avro.codec instead")
            )
        try:
            from connectors.s3.partitioners import make_partitioner, make_timestamp_extractor

            make_partitioner(
                str(props.get("partitioner.class", "DefaultPartitioner")).strip(),
                field_names=[
                    f.strip() for f in str(props.get("partition.field.name") or "").split(",") if f.strip()
                ],
                path_format=props.get("path.format") or None,
                partition_duration_ms=_int(props.get("partition.duration.ms", -1)),
                locale=str(props.get("locale") or "en"),
                timezone=props.get("timezone") or None,
                directory_delim=str(props.get("directory.delim") or "/"),
            )
        except ValueError as exc:
            # Reported against the key the message names (a missing timezone, a bad path.format).
            message = str(exc)
            named = [k for k in _PARTITIONER_KEYS if k in message]
            found.append(ConfigIssue(named[0] if named else "partitioner.class", message))
        try:
            make_timestamp_extractor(
                str(props.get("timestamp.extractor") or "Wallclock"),
                str(props.get("timestamp.field") or "timestamp"),
            )
        except ValueError as exc:
            found.append(ConfigIssue("timestamp.extractor", str(exc)))
        return found

    @property
    def format(self) -> str:
        return FORMATS[self.format_class.strip()]

    def secret(self) -> str | None:
        return self.aws_secret_access_key.get_secret_value() if self.aws_secret_access_key else None


_PARTITIONER_KEYS = ("partition.field.name", "path.format", "partition.duration.ms", "timezone", "locale")


def _int(value: Any) -> int:
    try:
        return int(str(value).strip())
    except ValueError:
        return -1
