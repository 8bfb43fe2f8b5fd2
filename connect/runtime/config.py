"""Worker and connector configuration: Kafka Connect's keys, names and defaults.

``WorkerConfig`` holds the worker keys (``StandaloneConfig`` adds the offset file).
The keys every connector shares (``name``, ``connector.class``, ``tasks.max``,
converters, ``transforms``, ``predicates``, ``errors.*``, and for sinks ``topics`` /
``topics.regex`` and the dead letter queue, for sources ``topic.creation.*``) are
validated here once, for every connector; a connector's own model only declares its
own keys.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, field_validator

from connect.api.config import Boolean, CommaList, ConfigIssue, ConfigModel, importance

JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
SIMPLE_HEADER_CONVERTER = "org.apache.kafka.connect.storage.SimpleHeaderConverter"

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

BASIC_AUTH_REST_EXTENSION = (
    "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
)


class WorkerConfig(ConfigModel):
    bootstrap_servers: str = Field(
        "localhost:9092",
        alias="bootstrap.servers",
        description="Kafka brokers the worker and its tasks connect to.",
        json_schema_extra=importance("HIGH"),
    )
    key_converter: str = Field(
        alias="key.converter",
        description="Default converter of record keys.",
        json_schema_extra=importance("HIGH", kafka_type="CLASS"),
    )
    value_converter: str = Field(
        alias="value.converter",
        description="Default converter of record values.",
        json_schema_extra=importance("HIGH", kafka_type="CLASS"),
    )
    header_converter: str = Field(
        SIMPLE_HEADER_CONVERTER,
        alias="header.converter",
        json_schema_extra=importance("LOW", kafka_type="CLASS"),
    )
    offset_flush_interval_ms: int = Field(
        60000, alias="offset.flush.interval.ms", ge=0, description="How often source offsets are committed."
    )
    offset_flush_timeout_ms: int = Field(5000, alias="offset.flush.timeout.ms", ge=0)
    task_shutdown_graceful_timeout_ms: int = Field(5000, alias="task.shutdown.graceful.timeout.ms", ge=0)
    plugin_path: CommaList = Field(default_factory=list, alias="plugin.path")
    plugin_discovery: str = Field("hybrid_warn", alias="plugin.discovery")
    config_providers: CommaList = Field(default_factory=list, alias="config.providers")
    connector_client_config_override_policy: Literal["All", "None", "Principal"] = Field(
        "All", alias="connector.client.config.override.policy"
    )
    topic_creation_enable: Boolean = Field(True, alias="topic.creation.enable")
    topic_tracking_enable: Boolean = Field(True, alias="topic.tracking.enable")
    topic_tracking_allow_reset: Boolean = Field(True, alias="topic.tracking.allow.reset")
    listeners: CommaList = Field(default_factory=lambda: ["http://:8083"], alias="listeners")
    rest_advertised_host_name: str | None = Field(None, alias="rest.advertised.host.name")
    rest_advertised_port: int | None = Field(None, alias="rest.advertised.port")
    rest_advertised_listener: str | None = Field(None, alias="rest.advertised.listener")
    # Limits of the REST server (Sluiceway's own keys; docs/limits.md).
    rest_request_max_bytes: int = Field(4 << 20, alias="rest.request.max.bytes", ge=1)
    rest_request_read_timeout_ms: int = Field(30000, alias="rest.request.read.timeout.ms", ge=1)
    rest_max_connections: int = Field(1000, alias="rest.max.connections", ge=1)
    rest_max_connections_per_ip: int = Field(2**31 - 1, alias="rest.max.connections.per.ip", ge=1)
    rest_keep_alive_timeout_ms: int = Field(5000, alias="rest.keep.alive.timeout.ms", ge=1)
    access_control_allow_origin: str = Field(
        "",
        alias="access.control.allow.origin",
        description="Origins (comma-separated, or *) allowed to call the REST API from a browser (CORS); "
        "empty: only the API's own origin.",
    )
    access_control_allow_methods: str = Field(
        "",
        alias="access.control.allow.methods",
        description="Methods allowed in cross-origin requests; empty: GET, POST and HEAD.",
    )
    rest_extension_classes: CommaList = Field(
        default_factory=list,
        alias="rest.extension.classes",
        description=f"REST extensions; {BASIC_AUTH_REST_EXTENSION} turns on HTTP basic authentication "
        "with the JAAS file of java.security.auth.login.config.",
    )
    java_security_auth_login_config: str | None = Field(
        None,
        alias="java.security.auth.login.config",
        description="JAAS file of the basic-auth REST extension, when KAFKA_OPTS does not set it "
        "(-Djava.security.auth.login.config=...).",
    )
    rest_authentication_basic_credentials_file: str | None = Field(
        None,
        alias="rest.authentication.basic.credentials.file",
        description="Turns on HTTP basic authentication of the REST API with this credentials file "
        "(user: password[,role] lines; roles admin and viewer).",
    )
    rest_authentication_bearer_tokens_file: str | None = Field(
        None,
        alias="rest.authentication.bearer.tokens.file",
        description="Turns on bearer-token authentication of the REST API with this file "
        "(<token or its sha256>: role lines).",
    )
    client_id: str | None = Field(None, alias="client.id")
    exactly_once_source_support: Literal["disabled", "preparing", "enabled"] = Field(
        "disabled", alias="exactly.once.source.support"
    )
    embedded_broker_enable: Boolean = Field(
        False,
        alias="embedded.broker.enable",
        description="Start Sluiceway's broker in this process, listening on the "
        "first bootstrap.servers address.",
    )
    embedded_broker_log_dirs: str | None = Field(None, alias="embedded.broker.log.dirs")

    @field_validator("rest_extension_classes")
    @classmethod
    def _rest_extensions(cls, v: list[str]) -> list[str]:
        unknown = [c for c in v if c != BASIC_AUTH_REST_EXTENSION]
        if unknown:
            raise ValueError(
                f"REST extension {unknown[0]} is not available; the one Sluiceway has is "
                f"{BASIC_AUTH_REST_EXTENSION}"
            )
        return v

    @field_validator("rest_advertised_listener", mode="before")
    @classmethod
    def _advertised_listener(cls, v: Any) -> Any:
        if isinstance(v, str) and v.strip():
            if v.strip().lower() not in ("http", "https"):
                raise ValueError("must be http or https")
            return v.strip().lower()
        return None if isinstance(v, str) else v

    def client_settings(self, prefix: str) -> dict[str, str]:
        """Worker-level client settings (``producer.``/``consumer.``/``admin.`` prefix), over the
        worker's own ``security.protocol``/``ssl.*``/``sasl.*`` keys: a worker that reaches a secured
        Kafka needs them in every client, so they are not repeated three times."""
        security = {
            k: str(v)
            for k, v in (self.model_extra or {}).items()
            if k == "security.protocol" or k.startswith(("ssl.", "sasl."))
        }
        return {**security, **{k: str(v) for k, v in self.with_prefix(prefix).items()}}

    def provider_settings(self, alias: str) -> tuple[str | None, dict[str, str]]:
        """(class, params) of a config provider alias."""
        cls = (self.model_extra or {}).get(f"config.providers.{alias}.class")
        return cls, {k: str(v) for k, v in self.with_prefix(f"config.providers.{alias}.param.").items()}


class StandaloneConfig(WorkerConfig):
    offset_storage_file_filename: str = Field(
        alias="offset.storage.file.filename",
        description="File where source offsets are kept.",
        json_schema_extra=importance("HIGH"),
    )


def _topic_field(key: str, doc: str) -> Any:
    return Field(alias=key, min_length=1, description=doc, json_schema_extra=importance("HIGH"))


def _replication_field(key: str, what: str) -> Any:
    return Field(
        3,
        alias=key,
        description=f"Replication factor used when creating the {what} storage topic; -1 for the "
        "broker's default.",
        json_schema_extra=importance("LOW", kafka_type="SHORT"),
    )


class DistributedConfig(WorkerConfig):
    """A distributed worker: Kafka Connect's ``DistributedConfig`` keys and defaults."""

    group_id: str = Field(
        alias="group.id",
        min_length=1,
        description="A unique string that identifies the Connect cluster group this worker belongs to.",
        json_schema_extra=importance("HIGH"),
    )
    config_storage_topic: str = _topic_field(
        "config.storage.topic", "The name of the Kafka topic where connector configurations are stored."
    )
    offset_storage_topic: str = _topic_field(
        "offset.storage.topic", "The name of the Kafka topic where source connector offsets are stored."
    )
    status_storage_topic: str = _topic_field(
        "status.storage.topic", "The name of the Kafka topic where connector and task status are stored."
    )
    config_storage_replication_factor: int = _replication_field("config.storage.replication.factor", "config")
    offset_storage_replication_factor: int = _replication_field("offset.storage.replication.factor", "offset")
    status_storage_replication_factor: int = _replication_field("status.storage.replication.factor", "status")
    offset_storage_partitions: int = Field(
        25,
        alias="offset.storage.partitions",
        description="Partitions of the offsets topic; -1 for the default.",
    )
    status_storage_partitions: int = Field(
        5,
        alias="status.storage.partitions",
        description="Partitions of the status topic; -1 for the default.",
    )
    session_timeout_ms: int = Field(
        10000,
        alias="session.timeout.ms",
        gt=0,
        description="How long the group waits for a worker's heartbeat before it rebalances without it.",
    )
    heartbeat_interval_ms: int = Field(
        3000, alias="heartbeat.interval.ms", gt=0, description="How often a worker heartbeats to the group."
    )
    rebalance_timeout_ms: int = Field(
        60000,
        alias="rebalance.timeout.ms",
        gt=0,
        description="How long a worker may take to rejoin once a rebalance starts.",
    )
    worker_sync_timeout_ms: int = Field(
        3000,
        alias="worker.sync.timeout.ms",
        ge=0,
        description="How long a worker out of sync with the others waits to catch up on configs.",
    )
    worker_unsync_backoff_ms: int = Field(
        300000,
        alias="worker.unsync.backoff.ms",
        ge=0,
        description="How long a worker that could not catch up waits before it rejoins.",
    )
    connect_protocol: Literal["eager", "compatible", "sessioned"] = Field(
        "sessioned",
        alias="connect.protocol",
        description="The group protocol: eager (stop the world), or compatible/sessioned (incremental "
        "cooperative rebalancing; sessioned also signs internal requests).",
    )
    scheduled_rebalance_max_delay_ms: int = Field(
        300000,
        alias="scheduled.rebalance.max.delay.ms",
        ge=0,
        description="How long the work of a departed worker waits for it to come back before it is "
        "reassigned.",
    )
    inter_worker_key_generation_algorithm: str = Field(
        "HmacSHA256", alias="inter.worker.key.generation.algorithm"
    )
    inter_worker_signature_algorithm: str = Field("HmacSHA256", alias="inter.worker.signature.algorithm")
    inter_worker_verification_algorithms: CommaList = Field(
        default_factory=lambda: ["HmacSHA256"], alias="inter.worker.verification.algorithms"
    )
    inter_worker_key_ttl_ms: int = Field(
        3600000, alias="inter.worker.key.ttl.ms", ge=0, description="How long a session key is used."
    )
    inter_worker_key_size: int | None = Field(None, alias="inter.worker.key.size")

    @field_validator("connect_protocol", mode="before")
    @classmethod
    def _protocol(cls, v: Any) -> Any:
        return v.strip().lower() if isinstance(v, str) else v

    @field_validator(
        "inter_worker_key_generation_algorithm", "inter_worker_signature_algorithm", mode="after"
    )
    @classmethod
    def _hmac(cls, v: str) -> str:
        if v not in _HMAC_ALGORITHMS:
            raise ValueError(f"Unsupported algorithm; one of {', '.join(_HMAC_ALGORITHMS)}")
        return v

    @classmethod
    def problems(cls, props: Mapping[str, Any]) -> list[ConfigIssue]:
        issues = []
        for key in ("config.storage.replication.factor", "offset.storage.replication.factor",
                    "status.storage.replication.factor", "offset.storage.partitions",
                    "status.storage.partitions"):  # fmt: skip
            raw = props.get(key)
            try:
                value = int(str(raw).strip()) if raw is not None else None
            except ValueError:
                continue  # the field's own check reports it
            if value is not None and value != -1 and value < 1:
                issues.append(
                    ConfigIssue(key, f"Invalid value {raw} for configuration {key}: must be -1 or at least 1")
                )
        try:
            session = int(str(props.get("session.timeout.ms", 10000)).strip())
            heartbeat = int(str(props.get("heartbeat.interval.ms", 3000)).strip())
        except ValueError:
            return issues
        if heartbeat >= session:
            issues.append(
                ConfigIssue(
                    "heartbeat.interval.ms",
                    f"Invalid value {heartbeat} for configuration heartbeat.interval.ms: must be lower than "
                    f"session.timeout.ms ({session})",
                )
            )
        keys = ("config.storage.topic", "offset.storage.topic", "status.storage.topic")
        names = [str(props[k]).strip() for k in keys if props.get(k)]
        if len(names) == 3 and len(set(names)) < 3:
            issues.append(
                ConfigIssue(
                    "status.storage.topic",
                    "config.storage.topic, offset.storage.topic and status.storage.topic must be "
                    "different topics",
                )
            )
        return issues


_HMAC_ALGORITHMS = ("HmacSHA256", "HmacSHA384", "HmacSHA512", "HmacSHA1")


class ConnectorRuntimeConfig(ConfigModel):
    """The keys every connector has, validated by the runtime."""

    name: str = Field(
        alias="name",
        min_length=1,
        description="Globally unique name of the connector.",
        json_schema_extra=importance("HIGH", group="Common", display_name="Connector name"),
    )
    connector_class: str = Field(
        alias="connector.class",
        description="Class name or alias of the connector.",
        json_schema_extra=importance("HIGH", group="Common", kafka_type="STRING"),
    )
    tasks_max: int = Field(
        1,
        alias="tasks.max",
        ge=1,
        description="Maximum number of tasks.",
        json_schema_extra=importance("HIGH", group="Common", kafka_type="INT"),
    )
    tasks_max_enforce: Boolean = Field(
        True, alias="tasks.max.enforce", json_schema_extra=importance("LOW", group="Common")
    )
    key_converter: str | None = Field(
        None, alias="key.converter", json_schema_extra=importance("LOW", group="Common", kafka_type="CLASS")
    )
    value_converter: str | None = Field(
        None, alias="value.converter", json_schema_extra=importance("LOW", group="Common", kafka_type="CLASS")
    )
    header_converter: str | None = Field(
        None,
        alias="header.converter",
        json_schema_extra=importance("LOW", group="Common", kafka_type="CLASS"),
    )
    transforms: CommaList = Field(
        default_factory=list,
        alias="transforms",
        description="Aliases of the transformations applied to records, in order.",
        json_schema_extra=importance("LOW", group="Transforms"),
    )
    predicates: CommaList = Field(
        default_factory=list,
        alias="predicates",
        description="Aliases of the predicates used by transformations.",
        json_schema_extra=importance("LOW", group="Predicates"),
    )
    config_action_reload: Literal["restart", "none"] = Field(
        "restart", alias="config.action.reload", json_schema_extra=importance("LOW", group="Common")
    )
    errors_retry_timeout: int = Field(
        0,
        alias="errors.retry.timeout",
        ge=-1,
        description="How long (ms) to retry a failed operation; -1: forever.",
        json_schema_extra=importance("MEDIUM", group="Error Handling", kafka_type="LONG"),
    )
    errors_retry_delay_max_ms: int = Field(
        60000,
        alias="errors.retry.delay.max.ms",
        ge=1,
        json_schema_extra=importance("MEDIUM", group="Error Handling", kafka_type="LONG"),
    )
    errors_tolerance: Literal["none", "all"] = Field(
        "none", alias="errors.tolerance", json_schema_extra=importance("MEDIUM", group="Error Handling")
    )
    errors_log_enable: Boolean = Field(
        False, alias="errors.log.enable", json_schema_extra=importance("MEDIUM", group="Error Handling")
    )
    errors_log_include_messages: Boolean = Field(
        False,
        alias="errors.log.include.messages",
        json_schema_extra=importance("MEDIUM", group="Error Handling"),
    )

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if _CONTROL.search(v):
            raise ValueError("connector name may not contain control characters")
        return v

    def transform_settings(self, alias: str) -> dict[str, Any]:
        return self.with_prefix(f"transforms.{alias}.")

    def predicate_settings(self, alias: str) -> dict[str, Any]:
        return self.with_prefix(f"predicates.{alias}.")

    def converter_settings(self, kind: str) -> dict[str, Any]:
        """``key.converter.*`` style settings of a connector (prefix removed)."""
        return self.with_prefix(f"{kind}.converter.")

    def client_overrides(self, client: str) -> dict[str, str]:
        return {k: str(v) for k, v in self.with_prefix(f"{client}.override.").items()}


class SinkRuntimeConfig(ConnectorRuntimeConfig):
    topics: CommaList = Field(
        default_factory=list,
        alias="topics",
        description="Topics to consume; exactly one of topics and topics.regex.",
        json_schema_extra=importance("HIGH", group="Common"),
    )
    topics_regex: str = Field("", alias="topics.regex", json_schema_extra=importance("HIGH", group="Common"))
    errors_deadletterqueue_topic_name: str = Field(
        "",
        alias="errors.deadletterqueue.topic.name",
        description="Topic that receives records the connector cannot process (errors.tolerance=all).",
        json_schema_extra=importance("MEDIUM", group="Error Handling"),
    )
    errors_deadletterqueue_topic_replication_factor: int = Field(
        3,
        alias="errors.deadletterqueue.topic.replication.factor",
        json_schema_extra=importance("MEDIUM", group="Error Handling", kafka_type="SHORT"),
    )
    errors_deadletterqueue_context_headers_enable: Boolean = Field(
        False,
        alias="errors.deadletterqueue.context.headers.enable",
        json_schema_extra=importance("MEDIUM", group="Error Handling"),
    )

    @classmethod
    def problems(cls, props: Mapping[str, Any]) -> list[ConfigIssue]:
        """Kafka's SinkConnectorConfig checks, against the keys they concern."""
        topics = [t.strip() for t in str(props.get("topics") or "").split(",") if t.strip()]
        regex = str(props.get("topics.regex") or "").strip()
        out = []
        if topics and regex:
            message = "topics and topics.regex are mutually exclusive options, but both are set."
            out += [ConfigIssue("topics", message), ConfigIssue("topics.regex", message)]
        elif not topics and not regex:
            message = "Must configure one of topics or topics.regex"
            out += [ConfigIssue("topics", message), ConfigIssue("topics.regex", message)]
        pattern = None
        if regex:
            try:
                pattern = re.compile(regex)
            except re.error as exc:
                out.append(
                    ConfigIssue(
                        "topics.regex",
                        f"Invalid value {regex} for configuration topics.regex: "
                        f"not a valid regular expression: {exc}",
                    )
                )
        dlq = str(props.get("errors.deadletterqueue.topic.name") or "").strip()
        if dlq and (dlq in topics or (pattern is not None and pattern.fullmatch(dlq))):
            where = f"topics={','.join(topics)}" if dlq in topics else f"topics.regex={regex}"
            out.append(
                ConfigIssue(
                    "errors.deadletterqueue.topic.name",
                    f"The DLQ topic '{dlq}' may not be included in the list of topics ('{where}') to "
                    "prevent an infinite loop",
                )
            )
        return out

    @property
    def topic_pattern(self) -> re.Pattern[str] | None:
        return re.compile(self.topics_regex) if self.topics_regex else None


_EXACTLY_ONCE_SUPPORT_DOC = (
    'Permitted values are requested, required. If set to "required", forces a preflight check for the '
    "connector to ensure that it can provide exactly-once semantics with the given configuration. Some "
    "connectors may be capable of providing exactly-once semantics but not signal to Connect that they "
    "support this; in that case, documentation for the connector should be consulted carefully before "
    'creating it, and the value for this property should be set to "requested". Additionally, if the value '
    'is set to "required" but the worker that performs preflight validation does not have exactly-once '
    "support enabled for source connectors, requests to create or validate the connector will fail."
)


class SourceRuntimeConfig(ConnectorRuntimeConfig):
    topic_creation_groups: CommaList = Field(
        default_factory=list,
        alias="topic.creation.groups",
        json_schema_extra=importance("LOW", group="Topic Creation"),
    )
    exactly_once_support: Literal["requested", "required"] = Field(
        "requested",
        alias="exactly.once.support",
        description=_EXACTLY_ONCE_SUPPORT_DOC,
        json_schema_extra=importance(
            "MEDIUM", group="Exactly Once Support", display_name="Exactly once support", width="SHORT"
        ),
    )
    transaction_boundary: Literal["poll", "interval", "connector"] = Field(
        "poll",
        alias="transaction.boundary",
        description="Permitted values are: poll, interval, connector. If set to 'poll', a new producer "
        "transaction will be started and committed for every batch of records that each task from this "
        "connector provides to Connect. If set to 'connector', relies on connector-defined transaction "
        "boundaries; note that not all connectors are capable of defining their own transaction boundaries, "
        "and in that case, attempts to instantiate a connector with this value will fail. Finally, if set to "
        "'interval', commits transactions only after a user-defined time interval has passed.",
        json_schema_extra=importance(
            "MEDIUM", group="Exactly Once Support", display_name="Transaction Boundary", width="SHORT"
        ),
    )
    transaction_boundary_interval_ms: int | None = Field(
        None,
        alias="transaction.boundary.interval.ms",
        ge=0,
        description="If 'transaction.boundary' is set to 'interval', determines the interval for producer "
        "transaction commits by connector tasks. If unset, defaults to the value of the worker-level "
        "'offset.flush.interval.ms' property. It has no effect if a different transaction.boundary is "
        "specified.",
        json_schema_extra=importance(
            "LOW",
            group="Exactly Once Support",
            display_name="Transaction boundary interval",
            width="SHORT",
            kafka_type="LONG",
        ),
    )
    offsets_storage_topic: str | None = Field(
        None,
        alias="offsets.storage.topic",
        min_length=1,
        description="The name of a separate offsets topic to use for this connector. If empty or not "
        "specified, the worker's global offsets topic name will be used. If specified, the offsets topic "
        "will be created if it does not already exist on the Kafka cluster targeted by this connector. Only "
        "applicable in distributed mode; in standalone mode, setting this property will have no effect.",
        json_schema_extra=importance(
            "LOW", group="offsets.topic", display_name="Offsets topic", width="LONG"
        ),
    )

    @field_validator("exactly_once_support", "transaction_boundary", mode="before")
    @classmethod
    def _case_insensitive(cls, v: Any) -> Any:
        # Kafka's CaseInsensitiveValidString: "REQUIRED" and " Poll " are accepted.
        return v.strip().lower() if isinstance(v, str) else v


def is_sink(cls: type) -> bool:
    from connect.api.connector import SinkConnector

    return issubclass(cls, SinkConnector)


def runtime_config_model(connector_cls: type) -> type[ConnectorRuntimeConfig]:
    return SinkRuntimeConfig if is_sink(connector_cls) else SourceRuntimeConfig


def as_strings(config: Mapping[str, Any]) -> dict[str, str]:
    """Connector configs are string maps (REST and properties files); coerce what a caller passed."""
    out = {}
    for k, v in config.items():
        if v is None:
            continue
        out[str(k)] = ("true" if v else "false") if isinstance(v, bool) else str(v)
    return out
