"""The Elasticsearch sink's settings: Confluent's ``ElasticsearchSinkConnector`` keys and defaults.

Enumerated keys accept any case (``IGNORE`` or ``ignore``), as Confluent's do. Keys
that only make sense together (data streams and write methods, deletes and ignored
keys) are checked in ``problems`` and reported against the key to fix.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import partial
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import BeforeValidator, field_validator

from connect.api import Boolean, CommaList, ConfigIssue, ConnectorConfig, Field, SecretStr, importance
from connect.api.config import lower_case, upper_case

CONNECTOR = "Connector"
CONVERSION = "Data Conversion"
SECURITY = "Security"
DATA_STREAM = "Data Stream"

_connector = partial(importance, group=CONNECTOR)
_conversion = partial(importance, group=CONVERSION)
_security = partial(importance, group=SECURITY)
_stream = partial(importance, group=DATA_STREAM)

#: What a data stream's dataset and namespace must not contain (Elasticsearch's naming rules).
_DATA_STREAM_PART = re.compile(r'^[^\\/*?"<>| ,#:\-A-Z]{1,100}$')
_TOPIC_PLACEHOLDER = "${topic}"


WriteMethod = Annotated[Literal["insert", "upsert"], BeforeValidator(lower_case)]
NullValues = Annotated[Literal["ignore", "delete", "fail"], BeforeValidator(lower_case)]
MalformedDocuments = Annotated[Literal["ignore", "warn", "fail"], BeforeValidator(lower_case)]
DataStreamType = Annotated[Literal["logs", "metrics", "none"], BeforeValidator(lower_case)]
SecurityProtocol = Annotated[Literal["PLAINTEXT", "SSL"], BeforeValidator(upper_case)]
StoreType = Annotated[Literal["PEM", "PKCS12", "JKS"], BeforeValidator(upper_case)]


class ElasticsearchSinkConfig(ConnectorConfig):
    """Settings of ``ElasticsearchSinkConnector`` (its tasks get the same keys)."""

    topics: CommaList = Field(default_factory=list, alias="topics")

    # -- connection --------------------------------------------------------------------
    connection_url: CommaList = Field(
        alias="connection.url",
        min_length=1,
        description="Elasticsearch URLs, comma-separated (http://es1:9200,http://es2:9200). HTTPS is "
        "used for every node if any URL starts with https:. A URL without a scheme means http.",
        json_schema_extra=_connector("HIGH", display_name="Connection URLs", width="LONG", kafka_type="LIST"),
    )
    connection_username: str | None = Field(
        None,
        alias="connection.username",
        description="User for HTTP basic authentication; used only when the password is set too.",
        json_schema_extra=_connector("MEDIUM", display_name="Connection Username"),
    )
    connection_password: SecretStr | None = Field(
        None,
        alias="connection.password",
        description="Password for HTTP basic authentication. Never logged or shown.",
        json_schema_extra=_connector("MEDIUM", display_name="Connection Password", kafka_type="PASSWORD"),
    )
    connection_timeout_ms: int = Field(
        1000,
        alias="connection.timeout.ms",
        ge=1,
        description="How long to wait for a TCP connection to a node.",
        json_schema_extra=_connector("LOW", kafka_type="INT"),
    )
    read_timeout_ms: int = Field(
        3000,
        alias="read.timeout.ms",
        ge=1,
        description="How long to wait for Elasticsearch to answer a request; a timeout is retried "
        "like any other transient failure.",
        json_schema_extra=_connector("LOW", kafka_type="INT"),
    )
    connection_compression: Boolean = Field(
        False,
        alias="connection.compression",
        description="Gzip request bodies (the nodes or the load balancer must accept it).",
        json_schema_extra=_connector("LOW", kafka_type="BOOLEAN"),
    )
    batch_size: int = Field(
        2000,
        alias="batch.size",
        ge=1,
        le=1_000_000,
        description="Records per bulk request.",
        json_schema_extra=_connector("MEDIUM", kafka_type="INT"),
    )
    bulk_size_bytes: int = Field(
        5 * 1024 * 1024,
        alias="bulk.size.bytes",
        ge=-1,
        description="Bytes per bulk request at most (whichever of this and batch.size comes first); "
        "-1 for no byte limit.",
        json_schema_extra=_connector("LOW", kafka_type="LONG"),
    )
    max_in_flight_requests: int = Field(
        5,
        alias="max.in.flight.requests",
        ge=1,
        description="Bulk requests a task has outstanding at once.",
        json_schema_extra=_connector("MEDIUM", kafka_type="INT"),
    )
    max_buffered_records: int = Field(
        20_000,
        alias="max.buffered.records",
        ge=1,
        description="Records a task holds that Elasticsearch has not acknowledged yet. Beyond this the "
        "task pauses its partitions (the consumer stays in the group) until requests complete.",
        json_schema_extra=_connector("LOW", kafka_type="INT"),
    )
    linger_ms: int = Field(
        1,
        alias="linger.ms",
        ge=0,
        description="How long a batch that is not full waits for more records before it is sent.",
        json_schema_extra=_connector("LOW", kafka_type="LONG"),
    )
    flush_timeout_ms: int = Field(
        180_000,
        alias="flush.timeout.ms",
        ge=1,
        description="How long a flush waits for outstanding requests; the task fails beyond it.",
        json_schema_extra=_connector("LOW", kafka_type="LONG"),
    )
    max_retries: int = Field(
        5,
        alias="max.retries",
        ge=0,
        description="Retries of a request that failed transiently (connection errors, timeouts, 429 and "
        "5xx answers, rejected items) before the task fails.",
        json_schema_extra=_connector("LOW", kafka_type="INT"),
    )
    retry_backoff_ms: int = Field(
        100,
        alias="retry.backoff.ms",
        ge=0,
        description="Base of the jittered exponential backoff between retries: the n-th retry waits a "
        "random time up to retry.backoff.ms * 2^n.",
        json_schema_extra=_connector("LOW", kafka_type="LONG"),
    )

    # -- data conversion ---------------------------------------------------------------
    key_ignore: Boolean = Field(
        False,
        alias="key.ignore",
        description="Use topic+partition+offset as the document id instead of the record key (always "
        "so for data streams, whose documents are events that are never updated).",
        json_schema_extra=_conversion("HIGH", kafka_type="BOOLEAN"),
    )
    topic_key_ignore: CommaList = Field(
        default_factory=list,
        alias="topic.key.ignore",
        description="Topics for which key.ignore is true.",
        json_schema_extra=_conversion("LOW", kafka_type="LIST"),
    )
    schema_ignore: Boolean = Field(
        False,
        alias="schema.ignore",
        description="Do not create index mappings from record schemas; Elasticsearch maps fields "
        "dynamically.",
        json_schema_extra=_conversion("LOW", kafka_type="BOOLEAN"),
    )
    topic_schema_ignore: CommaList = Field(
        default_factory=list,
        alias="topic.schema.ignore",
        description="Topics for which schema.ignore is true.",
        json_schema_extra=_conversion("LOW", kafka_type="LIST"),
    )
    compact_map_entries: Boolean = Field(
        True,
        alias="compact.map.entries",
        description='Write maps with string keys as objects {"k": v}; when false, and always for '
        'other keys, as arrays of {"key": k, "value": v}.',
        json_schema_extra=_conversion("LOW", kafka_type="BOOLEAN"),
    )
    drop_invalid_message: Boolean = Field(
        False,
        alias="drop.invalid.message",
        description="Drop (and log) a record that cannot become a document, instead of handing it to "
        "errors.tolerance.",
        json_schema_extra=_conversion("LOW", kafka_type="BOOLEAN"),
    )
    behavior_on_null_values: NullValues = Field(
        "fail",
        alias="behavior.on.null.values",
        description="A record with a null value (a tombstone): ignore skips it, delete deletes the "
        "document with the record key's id, fail hands it to errors.tolerance.",
        json_schema_extra=_conversion("LOW"),
    )
    behavior_on_malformed_documents: MalformedDocuments = Field(
        "fail",
        alias="behavior.on.malformed.documents",
        description="A document Elasticsearch refuses (a mapping conflict, an illegal field): ignore "
        "or warn (logged) skip it, fail fails the task. With errors.tolerance=all it goes to the "
        "dead letter queue with the reason in every case.",
        json_schema_extra=_conversion("LOW"),
    )
    write_method: WriteMethod = Field(
        "insert",
        alias="write.method",
        description="insert replaces the whole document; upsert creates it or updates the fields "
        "present in the record.",
        json_schema_extra=_conversion("LOW"),
    )
    external_version_header: str | None = Field(
        None,
        alias="external.version.header",
        description="Header holding the document's external version (a number) instead of the "
        "record's offset. Used with keys as ids and write.method=insert.",
        json_schema_extra=_conversion("LOW"),
    )

    # -- security ----------------------------------------------------------------------
    elastic_security_protocol: SecurityProtocol = Field(
        "PLAINTEXT",
        alias="elastic.security.protocol",
        description="PLAINTEXT or SSL. With SSL the elastic.https.ssl.* keys apply; https:// URLs use "
        "TLS in either case.",
        json_schema_extra=_security("MEDIUM"),
    )
    ssl_truststore_location: str | None = Field(
        None,
        alias="elastic.https.ssl.truststore.location",
        description="CA certificates to trust: a PEM file, or a PKCS12 store.",
        json_schema_extra=_security("MEDIUM"),
    )
    ssl_truststore_password: SecretStr | None = Field(
        None,
        alias="elastic.https.ssl.truststore.password",
        description="Password of a PKCS12 trust store.",
        json_schema_extra=_security("MEDIUM", kafka_type="PASSWORD"),
    )
    ssl_truststore_type: StoreType = Field(
        "PEM",
        alias="elastic.https.ssl.truststore.type",
        description="PEM or PKCS12 (JKS stores: convert with keytool -importkeystore -deststoretype PKCS12).",
        json_schema_extra=_security("LOW"),
    )
    ssl_keystore_location: str | None = Field(
        None,
        alias="elastic.https.ssl.keystore.location",
        description="The client certificate and key for mutual TLS: a PEM file holding both, or PKCS12.",
        json_schema_extra=_security("MEDIUM"),
    )
    ssl_keystore_password: SecretStr | None = Field(
        None,
        alias="elastic.https.ssl.keystore.password",
        description="Password of the key store.",
        json_schema_extra=_security("MEDIUM", kafka_type="PASSWORD"),
    )
    ssl_key_password: SecretStr | None = Field(
        None,
        alias="elastic.https.ssl.key.password",
        description="Password of the private key in a PEM key store.",
        json_schema_extra=_security("LOW", kafka_type="PASSWORD"),
    )
    ssl_keystore_type: StoreType = Field(
        "PEM",
        alias="elastic.https.ssl.keystore.type",
        description="PEM or PKCS12.",
        json_schema_extra=_security("LOW"),
    )
    ssl_endpoint_identification_algorithm: str = Field(
        "https",
        alias="elastic.https.ssl.endpoint.identification.algorithm",
        description="https checks that the certificate names the host; empty turns the check off.",
        json_schema_extra=_security("LOW"),
    )

    # -- data streams ------------------------------------------------------------------
    data_stream_type: DataStreamType = Field(
        "none",
        alias="data.stream.type",
        description="logs or metrics to write to the data stream <type>-<dataset>-<namespace> instead "
        "of an index per topic; none writes to indices.",
        json_schema_extra=_stream("LOW"),
    )
    data_stream_dataset: str | None = Field(
        None,
        alias="data.stream.dataset",
        description="The dataset part of the data stream name: lowercase, at most 100 characters, no "
        'spaces or \\/*?"<>|,#:-.',
        json_schema_extra=_stream("LOW"),
    )
    data_stream_namespace: str = Field(
        _TOPIC_PLACEHOLDER,
        alias="data.stream.namespace",
        description="The namespace part of the data stream name; ${topic} stands for the record's topic.",
        json_schema_extra=_stream("LOW"),
    )
    data_stream_timestamp_field: CommaList = Field(
        default_factory=list,
        alias="data.stream.timestamp.field",
        description="Value fields to use as the document's @timestamp, the first present one winning; "
        "empty uses the record's timestamp.",
        json_schema_extra=_stream("LOW", kafka_type="LIST"),
    )

    @field_validator("connection_url")
    @classmethod
    def _urls(cls, urls: list[str]) -> list[str]:
        out = []
        for url in urls:
            full = url if "://" in url else f"http://{url}"
            parts = urlsplit(full)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError(f"{url!r} is not an http(s) URL")
            if parts.username or parts.password:
                raise ValueError(
                    "put credentials in connection.username and connection.password, not in the URL"
                )
            out.append(full.rstrip("/"))
        return out

    @classmethod
    def problems(cls, props: Mapping[str, Any]) -> list[ConfigIssue]:
        found = []
        stream = str(props.get("data.stream.type", "none")).strip().lower()
        dataset = str(props.get("data.stream.dataset") or "").strip()
        if stream != "none":
            if not dataset:
                found.append(ConfigIssue("data.stream.dataset", "data.stream.type needs a dataset"))
            if str(props.get("write.method", "insert")).strip().lower() == "upsert":
                found.append(
                    ConfigIssue("write.method", "Data streams are append-only: use write.method=insert")
                )
            if str(props.get("behavior.on.null.values", "fail")).strip().lower() == "delete":
                found.append(
                    ConfigIssue(
                        "behavior.on.null.values",
                        "Data streams are append-only: deletes are not possible; use ignore or fail",
                    )
                )
        elif dataset or props.get("data.stream.timestamp.field"):
            key = "data.stream.dataset" if dataset else "data.stream.timestamp.field"
            found.append(ConfigIssue(key, "Set data.stream.type (logs or metrics) to write to data streams"))
        if dataset and not _DATA_STREAM_PART.match(dataset):
            found.append(
                ConfigIssue(
                    "data.stream.dataset",
                    'must be lowercase, at most 100 characters, without spaces or \\/*?"<>|,#:-',
                )
            )
        namespace = str(props.get("data.stream.namespace") or _TOPIC_PLACEHOLDER).strip()
        if (
            stream != "none"
            and namespace != _TOPIC_PLACEHOLDER
            and not _DATA_STREAM_PART.match(namespace.replace(_TOPIC_PLACEHOLDER, "topic"))
        ):
            found.append(
                ConfigIssue(
                    "data.stream.namespace",
                    'must be lowercase, at most 100 characters, without spaces or \\/*?"<>|,#:-',
                )
            )
        key_ignore = str(props.get("key.ignore", "false")).strip().lower() == "true"
        if key_ignore and str(props.get("behavior.on.null.values", "fail")).strip().lower() == "delete":
            found.append(
                ConfigIssue(
                    "behavior.on.null.values",
                    "delete needs the record key as the document id: set key.ignore=false",
                )
            )
        return found

    # -- per topic -----------------------------------------------------------------------

    def ignores_key(self, topic: str) -> bool:
        return self.key_ignore or topic in self.topic_key_ignore

    def ignores_schema(self, topic: str) -> bool:
        return self.schema_ignore or topic in self.topic_schema_ignore

    @property
    def is_data_stream(self) -> bool:
        return self.data_stream_type != "none"

    def password(self) -> str | None:
        return self.connection_password.get_secret_value() if self.connection_password else None
