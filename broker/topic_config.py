"""Per-topic configuration: Kafka's topic-level keys, their broker-level defaults and types.

A topic stores only its overrides; everything else comes from the broker config
(``log.retention.ms`` → ``retention.ms`` and so on). DescribeConfigs reports each
value with where it came from, as Kafka does.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from broker.config import LONG_MAX, BrokerConfig


class ConfigType(enum.IntEnum):  # DescribeConfigs v3+ config_type
    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


class ConfigSource(enum.IntEnum):  # DescribeConfigs v1+ config_source
    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5


# (name, value, source, type, documentation) as DescribeConfigs reports a config.
ConfigRow = tuple[str, str | None, ConfigSource, ConfigType, str]


class InvalidConfig(Exception):
    pass


def _long(lo: int = -(2**63)) -> Callable[[str], int]:
    def parse(v: str) -> int:
        n = int(v.strip())
        if n < lo or n > LONG_MAX:
            raise ValueError(f"must be at least {lo}")
        return n

    return parse


def _ratio(v: str) -> float:
    f = float(v.strip())
    if not 0.0 <= f <= 1.0:
        raise ValueError("must be between 0 and 1")
    return f


def _bool(v: str) -> bool:
    s = v.strip().lower()
    if s not in ("true", "false"):
        raise ValueError("must be true or false")
    return s == "true"


def _choice(*allowed: str) -> Callable[[str], str]:
    def parse(v: str) -> str:
        if v.strip() not in allowed:
            raise ValueError(f"must be one of {', '.join(allowed)}")
        return v.strip()

    return parse


def _policy(v: str) -> str:
    parts = {p.strip() for p in v.split(",") if p.strip()}
    if not parts or parts - {"delete", "compact"}:
        raise ValueError("must be delete, compact or compact,delete")
    return ",".join(sorted(parts))


@dataclass(frozen=True, slots=True)
class TopicConfigKey:
    name: str
    type: ConfigType
    parse: Callable[[str], Any]
    broker_keys: tuple[str, ...]
    default: Callable[[BrokerConfig], Any]
    doc: str


def _k(
    name: str,
    type_: ConfigType,
    parse: Callable[[str], Any],
    broker_key: str | tuple[str, ...],
    default: Callable[[BrokerConfig], Any],
    doc: str,
) -> TopicConfigKey:
    keys = (broker_key,) if isinstance(broker_key, str) else broker_key
    return TopicConfigKey(name, type_, parse, keys, default, doc)


KEYS: dict[str, TopicConfigKey] = {
    k.name: k
    for k in [
        _k(
            "cleanup.policy",
            ConfigType.LIST,
            _policy,
            "log.cleanup.policy",
            lambda b: b.log_cleanup_policy,
            "delete, compact, or both",
        ),
        _k(
            "compression.type",
            ConfigType.STRING,
            _choice("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"),
            "compression.type",
            lambda b: b.compression_type,
            "codec of stored batches; producer keeps what the producer sent",
        ),
        _k(
            "delete.retention.ms",
            ConfigType.LONG,
            _long(0),
            "log.cleaner.delete.retention.ms",
            lambda b: b.log_cleaner_delete_retention_ms,
            "how long tombstones survive compaction",
        ),
        _k(
            "file.delete.delay.ms",
            ConfigType.LONG,
            _long(0),
            "log.segment.delete.delay.ms",
            lambda b: b.log_segment_delete_delay_ms,
            "delay before a deleted segment's files go",
        ),
        _k(
            "flush.messages",
            ConfigType.LONG,
            _long(1),
            "log.flush.interval.messages",
            lambda b: b.log_flush_interval_messages,
            "fsync after this many messages",
        ),
        _k(
            "flush.ms",
            ConfigType.LONG,
            _long(0),
            "log.flush.interval.ms",
            lambda b: b.flush_ms,
            "fsync at least this often",
        ),
        _k(
            "index.interval.bytes",
            ConfigType.INT,
            _long(0),
            "log.index.interval.bytes",
            lambda b: b.log_index_interval_bytes,
            "bytes between offset index entries",
        ),
        _k(
            "max.compaction.lag.ms",
            ConfigType.LONG,
            _long(1),
            "log.cleaner.max.compaction.lag.ms",
            lambda b: b.log_cleaner_max_compaction_lag_ms,
            "longest a record stays uncompacted",
        ),
        _k(
            "max.message.bytes",
            ConfigType.INT,
            _long(0),
            "message.max.bytes",
            lambda b: b.message_max_bytes,
            "largest record batch accepted",
        ),
        _k(
            "message.timestamp.type",
            ConfigType.STRING,
            _choice("CreateTime", "LogAppendTime"),
            "log.message.timestamp.type",
            lambda b: b.log_message_timestamp_type,
            "CreateTime or LogAppendTime",
        ),
        _k(
            "min.cleanable.dirty.ratio",
            ConfigType.DOUBLE,
            _ratio,
            "log.cleaner.min.cleanable.ratio",
            lambda b: b.log_cleaner_min_cleanable_ratio,
            "dirty share of the log that triggers cleaning",
        ),
        _k(
            "min.compaction.lag.ms",
            ConfigType.LONG,
            _long(0),
            "log.cleaner.min.compaction.lag.ms",
            lambda b: b.log_cleaner_min_compaction_lag_ms,
            "youngest a record can be compacted",
        ),
        _k(
            "min.insync.replicas",
            ConfigType.INT,
            _long(1),
            "min.insync.replicas",
            lambda b: b.min_insync_replicas,
            "replicas that must acknowledge acks=all",
        ),
        _k(
            "preallocate",
            ConfigType.BOOLEAN,
            _bool,
            "log.preallocate",
            lambda b: b.log_preallocate,
            "preallocate segment files",
        ),
        _k(
            "retention.bytes",
            ConfigType.LONG,
            _long(-1),
            "log.retention.bytes",
            lambda b: b.log_retention_bytes,
            "largest a partition grows before old segments go (-1: no limit)",
        ),
        _k(
            "retention.ms",
            ConfigType.LONG,
            _long(-1),
            ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
            lambda b: b.retention_ms,
            "oldest a segment gets before it goes (-1: forever)",
        ),
        _k(
            "segment.bytes",
            ConfigType.INT,
            _long(14),
            "log.segment.bytes",
            lambda b: b.log_segment_bytes,
            "segment size before rolling",
        ),
        _k(
            "segment.index.bytes",
            ConfigType.INT,
            _long(4),
            "log.index.size.max.bytes",
            lambda b: b.log_index_size_max_bytes,
            "largest offset index",
        ),
        _k(
            "segment.jitter.ms",
            ConfigType.LONG,
            _long(0),
            "log.roll.jitter.ms",
            lambda b: b.log_roll_jitter_ms,
            "random jitter subtracted from segment.ms",
        ),
        _k(
            "segment.ms",
            ConfigType.LONG,
            _long(1),
            ("log.roll.ms", "log.roll.hours"),
            lambda b: b.roll_ms,
            "segment age before rolling",
        ),
        _k(
            "unclean.leader.election.enable",
            ConfigType.BOOLEAN,
            _bool,
            "unclean.leader.election.enable",
            lambda b: b.unclean_leader_election_enable,
            "has no effect on a single node",
        ),
    ]
}


def validate_overrides(overrides: Mapping[str, str | None]) -> dict[str, str]:
    """Check topic config overrides; returns them normalised. Raises InvalidConfig naming the key."""
    out: dict[str, str] = {}
    for name, value in overrides.items():
        key = KEYS.get(name)
        if key is None:
            raise InvalidConfig(f"Unknown topic config name: {name}")
        if value is None:
            raise InvalidConfig(f"Null value not supported for topic config {name}")
        try:
            parsed = key.parse(value)
        except (ValueError, TypeError) as exc:
            raise InvalidConfig(f"Invalid value {value} for configuration {name}: {exc}") from None
        out[name] = str(parsed).lower() if isinstance(parsed, bool) else str(parsed)
    return out


@dataclass(frozen=True, slots=True)
class TopicConfig:
    """The effective configuration of one topic (overrides over broker defaults)."""

    cleanup_policy: str
    compression_type: str
    delete_retention_ms: int
    flush_messages: int
    flush_ms: int
    index_interval_bytes: int
    max_compaction_lag_ms: int
    max_message_bytes: int
    timestamp_type: str
    min_cleanable_dirty_ratio: float
    min_compaction_lag_ms: int
    min_insync_replicas: int
    retention_bytes: int
    retention_ms: int
    segment_bytes: int
    segment_ms: int

    @property
    def compact(self) -> bool:
        return "compact" in self.cleanup_policy

    @property
    def delete(self) -> bool:
        return "delete" in self.cleanup_policy

    @property
    def log_append_time(self) -> bool:
        return self.timestamp_type == "LogAppendTime"


def effective(broker: BrokerConfig, overrides: Mapping[str, str]) -> TopicConfig:
    def get(name: str) -> Any:
        key = KEYS[name]
        if name in overrides:
            return key.parse(overrides[name])
        return key.default(broker)

    return TopicConfig(
        cleanup_policy=get("cleanup.policy"),
        compression_type=get("compression.type"),
        delete_retention_ms=get("delete.retention.ms"),
        flush_messages=get("flush.messages"),
        flush_ms=get("flush.ms"),
        index_interval_bytes=get("index.interval.bytes"),
        max_compaction_lag_ms=get("max.compaction.lag.ms"),
        max_message_bytes=get("max.message.bytes"),
        timestamp_type=get("message.timestamp.type"),
        min_cleanable_dirty_ratio=get("min.cleanable.dirty.ratio"),
        min_compaction_lag_ms=get("min.compaction.lag.ms"),
        min_insync_replicas=get("min.insync.replicas"),
        retention_bytes=get("retention.bytes"),
        retention_ms=get("retention.ms"),
        segment_bytes=get("segment.bytes"),
        segment_ms=get("segment.ms"),
    )


def describe(broker: BrokerConfig, overrides: Mapping[str, str]) -> list[ConfigRow]:
    """(name, value, source, type, doc) for every topic key, as DescribeConfigs reports them."""
    given = broker.given
    out: list[ConfigRow] = []
    for name, key in KEYS.items():
        if name in overrides:
            value, source = overrides[name], ConfigSource.DYNAMIC_TOPIC_CONFIG
        else:
            default = key.default(broker)
            value = str(default).lower() if isinstance(default, bool) else str(default)
            source = (
                ConfigSource.STATIC_BROKER_CONFIG
                if given.intersection(key.broker_keys)
                else ConfigSource.DEFAULT_CONFIG
            )
        out.append((name, value, source, key.type, key.doc))
    return out
