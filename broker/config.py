"""Broker configuration: Kafka's ``server.properties`` keys, names and defaults.

Keys are pydantic field aliases, so a ``server.properties`` written for Apache
Kafka loads unchanged; keys this broker does not know are kept and logged once
(Kafka does the same) rather than refused, so shared files keep working.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

log = logging.getLogger(__name__)

LONG_MAX = 2**63 - 1


@dataclass(frozen=True, slots=True)
class Listener:
    name: str  # e.g. PLAINTEXT
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.name}://{self.host}:{self.port}"


def parse_listeners(value: str) -> list[Listener]:
    out = []
    for item in (v.strip() for v in value.split(",")):
        if not item:
            continue
        # Listener names may hold "_" (SASL_SSL), which URL schemes may not: split it off first.
        name, sep, address = item.partition("://")
        if not sep or not name.strip():
            raise ValueError(f"listener {item!r} is not of the form NAME://host:port")
        parts = urlsplit("//" + address)
        try:
            port = parts.port
        except ValueError:
            raise ValueError(f"listener {item!r} has an invalid port") from None
        if port is None:
            raise ValueError(f"listener {item!r} has no port")
        out.append(Listener(name.strip().upper(), parts.hostname or "", port))
    if not out:
        raise ValueError("no listener given")
    return out


class ConfigError(Exception):
    """A broker config that cannot be used; the message names each bad key."""


class BrokerConfig(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="allow", frozen=True)

    broker_id: int = Field(0, alias="broker.id", ge=0)
    node_id: int | None = Field(None, alias="node.id", ge=0)
    cluster_id: str | None = Field(None, alias="cluster.id")
    listeners: str = Field("PLAINTEXT://127.0.0.1:9092", alias="listeners")
    advertised_listeners: str | None = Field(None, alias="advertised.listeners")
    # Sluiceway's own: Prometheus metrics over HTTP (Kafka exposes JMX instead).
    metrics_listener: str | None = Field(None, alias="metrics.listener")
    log_dirs: str = Field("/tmp/sluiceway-logs", alias="log.dirs")
    log_dir: str | None = Field(None, alias="log.dir")
    num_partitions: int = Field(1, alias="num.partitions", ge=1)
    auto_create_topics_enable: bool = Field(True, alias="auto.create.topics.enable")
    default_replication_factor: int = Field(1, alias="default.replication.factor", ge=1)
    delete_topic_enable: bool = Field(True, alias="delete.topic.enable")
    message_max_bytes: int = Field(1048588, alias="message.max.bytes", ge=0)
    socket_request_max_bytes: int = Field(104857600, alias="socket.request.max.bytes", ge=1)
    log_segment_bytes: int = Field(1073741824, alias="log.segment.bytes", ge=14)
    log_roll_ms: int | None = Field(None, alias="log.roll.ms", ge=1)
    log_roll_hours: int = Field(168, alias="log.roll.hours", ge=1)
    log_roll_jitter_ms: int = Field(0, alias="log.roll.jitter.ms", ge=0)
    log_index_interval_bytes: int = Field(4096, alias="log.index.interval.bytes", ge=0)
    log_index_size_max_bytes: int = Field(10485760, alias="log.index.size.max.bytes", ge=4)
    log_retention_ms: int | None = Field(None, alias="log.retention.ms", ge=-1)
    log_retention_minutes: int | None = Field(None, alias="log.retention.minutes", ge=-1)
    log_retention_hours: int = Field(168, alias="log.retention.hours", ge=-1)
    log_retention_bytes: int = Field(-1, alias="log.retention.bytes", ge=-1)
    log_retention_check_interval_ms: int = Field(300000, alias="log.retention.check.interval.ms", ge=1)
    log_cleanup_policy: str = Field("delete", alias="log.cleanup.policy")
    log_cleaner_enable: bool = Field(True, alias="log.cleaner.enable")
    log_cleaner_backoff_ms: int = Field(15000, alias="log.cleaner.backoff.ms", ge=0)
    log_cleaner_min_cleanable_ratio: float = Field(0.5, alias="log.cleaner.min.cleanable.ratio", ge=0, le=1)
    log_cleaner_delete_retention_ms: int = Field(86400000, alias="log.cleaner.delete.retention.ms", ge=0)
    log_cleaner_min_compaction_lag_ms: int = Field(0, alias="log.cleaner.min.compaction.lag.ms", ge=0)
    log_cleaner_max_compaction_lag_ms: int = Field(LONG_MAX, alias="log.cleaner.max.compaction.lag.ms", ge=1)
    log_flush_interval_messages: int = Field(LONG_MAX, alias="log.flush.interval.messages", ge=1)
    log_flush_interval_ms: int | None = Field(None, alias="log.flush.interval.ms", ge=0)
    log_flush_scheduler_interval_ms: int = Field(LONG_MAX, alias="log.flush.scheduler.interval.ms", ge=0)
    log_message_timestamp_type: str = Field("CreateTime", alias="log.message.timestamp.type")
    log_segment_delete_delay_ms: int = Field(60000, alias="log.segment.delete.delay.ms", ge=0)
    log_preallocate: bool = Field(False, alias="log.preallocate")
    compression_type: str = Field("producer", alias="compression.type")
    min_insync_replicas: int = Field(1, alias="min.insync.replicas", ge=1)
    unclean_leader_election_enable: bool = Field(False, alias="unclean.leader.election.enable")
    group_initial_rebalance_delay_ms: int = Field(3000, alias="group.initial.rebalance.delay.ms", ge=0)
    group_min_session_timeout_ms: int = Field(6000, alias="group.min.session.timeout.ms", ge=0)
    group_max_session_timeout_ms: int = Field(1800000, alias="group.max.session.timeout.ms", ge=0)
    group_max_size: int = Field(2**31 - 1, alias="group.max.size", ge=1)
    offsets_topic_num_partitions: int = Field(50, alias="offsets.topic.num.partitions", ge=1)
    offsets_topic_replication_factor: int = Field(1, alias="offsets.topic.replication.factor", ge=1)
    offsets_topic_segment_bytes: int = Field(104857600, alias="offsets.topic.segment.bytes", ge=1)
    offsets_retention_minutes: int = Field(10080, alias="offsets.retention.minutes", ge=1)
    offsets_retention_check_interval_ms: int = Field(
        600000, alias="offsets.retention.check.interval.ms", ge=1
    )
    offset_metadata_max_bytes: int = Field(4096, alias="offset.metadata.max.bytes", ge=0)
    transactional_id_expiration_ms: int = Field(604800000, alias="transactional.id.expiration.ms", ge=1)
    transaction_state_log_num_partitions: int = Field(50, alias="transaction.state.log.num.partitions", ge=1)
    # Accepted so Kafka's server.properties loads unchanged; a single node keeps one copy
    # (like offsets.topic.replication.factor here).
    transaction_state_log_replication_factor: int = Field(
        1, alias="transaction.state.log.replication.factor", ge=1
    )
    transaction_state_log_min_isr: int = Field(1, alias="transaction.state.log.min.isr", ge=1)
    transaction_state_log_segment_bytes: int = Field(
        104857600, alias="transaction.state.log.segment.bytes", ge=1
    )
    transaction_max_timeout_ms: int = Field(900000, alias="transaction.max.timeout.ms", ge=1)
    transaction_abort_timed_out_transaction_cleanup_interval_ms: int = Field(
        10000, alias="transaction.abort.timed.out.transaction.cleanup.interval.ms", ge=1
    )
    transaction_remove_expired_transaction_cleanup_interval_ms: int = Field(
        3600000, alias="transaction.remove.expired.transaction.cleanup.interval.ms", ge=1
    )
    transaction_partition_verification_enable: bool = Field(
        True, alias="transaction.partition.verification.enable"
    )
    producer_id_expiration_ms: int = Field(86400000, alias="producer.id.expiration.ms", ge=1)
    num_io_threads: int = Field(8, alias="num.io.threads", ge=1)
    num_network_threads: int = Field(3, alias="num.network.threads", ge=1)
    connections_max_idle_ms: int = Field(600000, alias="connections.max.idle.ms", ge=0)
    max_connections: int = Field(2**31 - 1, alias="max.connections", ge=0)
    max_connections_per_ip: int = Field(2**31 - 1, alias="max.connections.per.ip", ge=0)
    max_connections_per_ip_overrides: str = Field("", alias="max.connections.per.ip.overrides")
    # Sluiceway's own (Kafka has no key for it): a started request must arrive in this time.
    socket_request_read_timeout_ms: int = Field(30000, alias="socket.request.read.timeout.ms", ge=1)
    fetch_max_bytes: int = Field(57671680, alias="fetch.max.bytes", ge=1024)
    # Authorization (broker.authorizer): empty class name = no authorizer, everything allowed.
    authorizer_class_name: str = Field("", alias="authorizer.class.name")
    super_users: str = Field("", alias="super.users")
    allow_everyone_if_no_acl_found: bool = Field(False, alias="allow.everyone.if.no.acl.found")

    @field_validator("log_cleanup_policy")
    @classmethod
    def _policy(cls, v: str) -> str:
        parts = {p.strip() for p in v.split(",") if p.strip()}
        if not parts or parts - {"delete", "compact"}:
            raise ValueError("must be delete, compact or compact,delete")
        return ",".join(sorted(parts))

    @field_validator("log_message_timestamp_type")
    @classmethod
    def _ts_type(cls, v: str) -> str:
        if v not in ("CreateTime", "LogAppendTime"):
            raise ValueError("must be CreateTime or LogAppendTime")
        return v

    @field_validator("metrics_listener")
    @classmethod
    def _metrics_listener(cls, v: str | None) -> str | None:
        if v:
            from broker.metrics_server import parse_metrics_listener

            parse_metrics_listener(v)
        return v or None

    @field_validator("max_connections_per_ip_overrides")
    @classmethod
    def _per_ip_overrides(cls, v: str) -> str:
        from broker.connection_limits import parse_overrides

        parse_overrides(v)
        return v

    @field_validator("authorizer_class_name")
    @classmethod
    def _authorizer(cls, v: str) -> str:
        from broker.authorizer.authorizer import check_authorizer_class

        return check_authorizer_class(v)

    @field_validator("super_users")
    @classmethod
    def _super_users(cls, v: str) -> str:
        from broker.authorizer.authorizer import parse_super_users

        parse_super_users(v)
        return v

    @field_validator("listeners", "advertised_listeners")
    @classmethod
    def _listeners(cls, v: str | None) -> str | None:
        if v is not None:
            parse_listeners(v)
        return v

    # -- derived values -------------------------------------------------------------

    @property
    def node(self) -> int:
        return self.node_id if self.node_id is not None else self.broker_id

    @property
    def data_dir(self) -> str:
        # Kafka takes log.dirs over log.dir; a single-node broker uses the first one.
        return (
            (self.log_dirs if "log.dirs" in self.given else (self.log_dir or self.log_dirs))
            .split(",")[0]
            .strip()
        )

    @property
    def given(self) -> set[str]:
        """Kafka keys that were set explicitly (for DescribeConfigs sources)."""
        fields = type(self).model_fields
        return {(fields[name].alias or name) if name in fields else name for name in self.model_fields_set}

    @property
    def retention_ms(self) -> int:
        if self.log_retention_ms is not None:
            return self.log_retention_ms
        if self.log_retention_minutes is not None:
            return self.log_retention_minutes * 60_000 if self.log_retention_minutes >= 0 else -1
        return self.log_retention_hours * 3_600_000 if self.log_retention_hours >= 0 else -1

    @property
    def roll_ms(self) -> int:
        return self.log_roll_ms if self.log_roll_ms is not None else self.log_roll_hours * 3_600_000

    @property
    def flush_ms(self) -> int:
        if self.log_flush_interval_ms is not None:
            return self.log_flush_interval_ms
        return LONG_MAX

    def listener_list(self) -> list[Listener]:
        return parse_listeners(self.listeners)

    def advertised_list(self) -> list[Listener]:
        return (
            parse_listeners(self.advertised_listeners) if self.advertised_listeners else self.listener_list()
        )

    def as_kafka_dict(self) -> dict[str, Any]:
        """Every known key with its effective value, keyed by Kafka name."""
        out: dict[str, Any] = {}
        for name, f in type(self).model_fields.items():
            out[f.alias or name] = getattr(self, name)
        return out


def load_config(values: dict[str, str]) -> BrokerConfig:
    try:
        cfg = BrokerConfig.model_validate(values)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            key = ".".join(str(p) for p in err["loc"])
            problems.append(f"{key}: {err['msg']} (got {err.get('input')!r})")
        raise ConfigError("invalid broker configuration:\n  " + "\n  ".join(problems)) from None
    from broker.security.listeners import is_security_key

    # Listener security keys (ssl.*, sasl.*, listener.name.*) are read by broker.security.
    unknown = sorted(k for k in (cfg.model_extra or {}) if not is_security_key(k))
    if unknown:
        log.warning("ignoring unknown broker config keys: %s", ", ".join(unknown))
    return cfg


def new_cluster_id() -> str:
    """A Kafka-style cluster id: a random UUID, base64url without padding (22 chars)."""
    import base64

    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
