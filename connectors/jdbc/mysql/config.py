"""The connector's settings: Debezium's MySQL (and MariaDB) connector keys, names and defaults.

Enumerated settings are strings checked case-insensitively, as in Debezium. ``snapshot.mode``
takes Debezium 2.x's names, old and new: ``schema_only`` is ``no_data`` and
``schema_only_recovery`` is ``recovery``. ``database.password`` is a secret: never logged,
hidden in validation errors.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from typing import Any

from connect.api import Boolean, CommaList, ConfigIssue, Field, SecretStr, importance
from connectors.jdbc.cdc.filters import Filters, compile_patterns
from connectors.jdbc.debezium import config_keys as ck
from connectors.jdbc.mysql.values import (
    BigintUnsignedMode,
    BinaryMode,
    DecimalMode,
    TimePrecisionMode,
    ValueSettings,
)

__all__ = ["LockingMode", "MySqlCdcConfig", "SnapshotMode"]


class SnapshotMode(enum.StrEnum):
    INITIAL = "initial"
    INITIAL_ONLY = "initial_only"
    WHEN_NEEDED = "when_needed"
    NEVER = "never"
    NO_DATA = "no_data"
    SCHEMA_ONLY = "schema_only"  # Debezium <= 2.5's name of no_data
    RECOVERY = "recovery"
    SCHEMA_ONLY_RECOVERY = "schema_only_recovery"  # Debezium <= 2.5's name of recovery


class LockingMode(enum.StrEnum):
    MINIMAL = "minimal"
    EXTENDED = "extended"
    NONE = "none"


_GROUP_DB = "MySQL"
_GROUP_HISTORY = "History Storage"

_CHOICES: dict[str, tuple[str, ...]] = {
    "snapshot.mode": tuple(SnapshotMode),
    "snapshot.locking.mode": tuple(LockingMode),
    "decimal.handling.mode": tuple(DecimalMode),
    "time.precision.mode": tuple(TimePrecisionMode),
    "bigint.unsigned.handling.mode": tuple(BigintUnsignedMode),
    "binary.handling.mode": tuple(BinaryMode),
}


class MySqlCdcConfig(ck.DebeziumConfig):
    hostname: str = ck.hostname("IP address or hostname of the MySQL or MariaDB server.", _GROUP_DB)
    port: int = Field(
        3306,
        alias="database.port",
        ge=1,
        le=65535,
        description="Port of the MySQL or MariaDB server.",
        json_schema_extra=importance("HIGH", group=_GROUP_DB, kafka_type="INT"),
    )
    user: str = ck.user(
        "User to connect as; it needs SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE and "
        "REPLICATION CLIENT (MariaDB: BINLOG MONITOR) on *.*.",
        _GROUP_DB,
    )
    password: SecretStr | None = ck.password("Password of the user.", _GROUP_DB)
    server_id: int = Field(
        alias="database.server.id",
        ge=1,
        le=2**32 - 1,
        description="The replica id this connector uses on the server: unique among all replicas and "
        "connectors reading the server's binlog.",
        json_schema_extra=importance("LOW", group=_GROUP_DB, kafka_type="LONG"),
    )
    topic_prefix: str = ck.topic_prefix(
        "Names this server: change events go to <topic.prefix>.<database>.<table>, schema "
        "changes to <topic.prefix>. Only letters, digits, '.', '_' and '-'. Do not change it once events "
        "were produced.",
        _GROUP_DB,
    )
    database_include_list: CommaList = Field(
        [], alias="database.include.list", description="Regular expressions of the databases to capture."
    )
    database_exclude_list: CommaList = Field(
        [], alias="database.exclude.list", description="Regular expressions of the databases not to capture."
    )
    table_include_list: CommaList = Field(
        [], alias="table.include.list", description="Regular expressions of the tables (db.table) to capture."
    )
    table_exclude_list: CommaList = ck.table_exclude_list()
    column_include_list: CommaList = Field(
        [],
        alias="column.include.list",
        description="Regular expressions of the columns (db.table.column) to include in event values.",
    )
    column_exclude_list: CommaList = ck.column_exclude_list()
    snapshot_mode: str = Field(
        SnapshotMode.INITIAL.value,
        alias="snapshot.mode",
        description="initial: snapshot schemas and data when no offsets exist, then stream; initial_only: "
        "snapshot, then stop; when_needed: as initial, and snapshot again when the stored binlog position is "
        "gone; no_data (schema_only): snapshot schemas only, then stream from the current position; never: "
        "stream from the oldest binlog without a snapshot; recovery (schema_only_recovery): rebuild a lost "
        "schema history topic, then go on from the offsets.",
        json_schema_extra=importance("LOW", group=ck.GROUP_EVENTS),
    )
    snapshot_locking_mode: str = Field(
        LockingMode.MINIMAL.value,
        alias="snapshot.locking.mode",
        description="minimal: hold the global read lock only while reading the binlog position and schemas; "
        "extended: hold it for the whole snapshot; none: take no lock (only safe when no DDL runs during "
        "the snapshot). Where the global read lock is not allowed, table locks are used instead.",
        json_schema_extra=importance("LOW", group=ck.GROUP_EVENTS),
    )
    snapshot_fetch_size: int = ck.snapshot_fetch_size()
    include_schema_changes: Boolean = Field(
        True,
        alias="include.schema.changes",
        description="Write schema change events (DDL) to the topic named <topic.prefix>.",
        json_schema_extra=importance("MEDIUM", group=ck.GROUP_EVENTS, kafka_type="BOOLEAN"),
    )
    history_topic: str = Field(
        alias="schema.history.internal.kafka.topic",
        min_length=1,
        description="The topic where the connector records every DDL statement (the schema history). Its own "
        "to each connector; never delete it.",
        json_schema_extra=importance("HIGH", group=_GROUP_HISTORY),
    )
    history_bootstrap_servers: str = Field(
        alias="schema.history.internal.kafka.bootstrap.servers",
        min_length=1,
        description="The Kafka cluster holding the schema history topic (host:port,...).",
        json_schema_extra=importance("HIGH", group=_GROUP_HISTORY),
    )
    history_recovery_attempts: int = Field(
        100,
        alias="schema.history.internal.kafka.recovery.attempts",
        ge=1,
        description="How many empty polls end the recovery of the schema history.",
        json_schema_extra=importance("LOW", group=_GROUP_HISTORY, kafka_type="INT"),
    )
    history_store_only_captured: Boolean = Field(
        False,
        alias="schema.history.internal.store.only.captured.tables.ddl",
        description="Record only the DDL of captured tables in the schema history.",
        json_schema_extra=importance("LOW", group=_GROUP_HISTORY, kafka_type="BOOLEAN"),
    )
    history_skip_unparseable: Boolean = Field(
        False,
        alias="schema.history.internal.skip.unparseable.ddl",
        description="Skip (with a warning) DDL statements that cannot be parsed instead of failing.",
        json_schema_extra=importance("LOW", group=_GROUP_HISTORY, kafka_type="BOOLEAN"),
    )
    gtid_source_includes: CommaList = Field(
        [],
        alias="gtid.source.includes",
        description="Regular expressions of the GTID sources (server UUIDs; MariaDB: domain-server) whose "
        "transactions are captured.",
    )
    gtid_source_excludes: CommaList = Field(
        [],
        alias="gtid.source.excludes",
        description="Regular expressions of the GTID sources whose transactions are skipped.",
    )
    decimal_handling_mode: str = ck.decimal_handling_mode(
        DecimalMode.PRECISE.value, "DECIMAL values as precise (Kafka Decimal), double or string."
    )
    time_precision_mode: str = Field(
        TimePrecisionMode.ADAPTIVE_TIME_MICROSECONDS.value,
        alias="time.precision.mode",
        description="adaptive_time_microseconds: Debezium's types at the column's precision, TIME in "
        "microseconds; connect: Kafka Connect's Date, Time and Timestamp (milliseconds).",
        json_schema_extra=importance("MEDIUM", group=ck.GROUP_EVENTS),
    )
    bigint_unsigned_handling_mode: str = Field(
        BigintUnsignedMode.LONG.value,
        alias="bigint.unsigned.handling.mode",
        description="BIGINT UNSIGNED values as long (INT64; values above 2^63-1 wrap) or precise "
        "(Decimal(20,0)).",
        json_schema_extra=importance("MEDIUM", group=ck.GROUP_EVENTS),
    )
    binary_handling_mode: str = ck.binary_handling_mode(
        BinaryMode.BYTES.value,
        "BINARY, VARBINARY and BLOB values as bytes, base64, base64-url-safe or hex strings.",
    )
    tombstones_on_delete: Boolean = ck.tombstones_on_delete()
    heartbeat_interval_ms: int = ck.heartbeat_interval_ms(
        "Milliseconds between heartbeat records on __debezium-heartbeat.<topic.prefix> (0: "
        "none). Heartbeats move the stored offset on while the captured tables are idle."
    )
    heartbeat_topics_prefix: str = ck.heartbeat_topics_prefix()
    max_batch_size: int = ck.max_batch_size()
    poll_interval_ms: int = ck.poll_interval_ms()
    connect_timeout_ms: int = Field(
        30000,
        alias="connect.timeout.ms",
        ge=1,
        description="How long to wait for a connection to the server.",
        json_schema_extra=importance("LOW", group=_GROUP_DB, kafka_type="LONG"),
    )
    retriable_restart_wait_ms: int = ck.retriable_restart_wait_ms(
        "The longest wait before reconnecting after the server went away (the wait starts "
        "at half a second and doubles).",
        _GROUP_DB,
    )

    @classmethod
    def problems(cls, props: Mapping[str, Any]) -> list[ConfigIssue]:
        issues = ck.choice_issues(props, _CHOICES)
        issues += ck.filter_issues(
            props,
            [
                *(
                    (f"{kind}.include.list", f"{kind}.exclude.list")
                    for kind in ("database", "table", "column")
                ),
                ("gtid.source.includes", "gtid.source.excludes"),
            ],
        )
        return issues

    # -- derived settings ----------------------------------------------------------------------------

    @property
    def effective_snapshot_mode(self) -> SnapshotMode:
        mode = SnapshotMode(self.snapshot_mode.strip().lower())
        if mode is SnapshotMode.SCHEMA_ONLY:
            return SnapshotMode.NO_DATA
        if mode is SnapshotMode.SCHEMA_ONLY_RECOVERY:
            return SnapshotMode.RECOVERY
        return mode

    @property
    def locking_mode(self) -> LockingMode:
        return LockingMode(self.snapshot_locking_mode.strip().lower())

    def filters(self) -> Filters:
        return Filters.of(
            self.database_include_list,
            self.database_exclude_list,
            self.table_include_list,
            self.table_exclude_list,
            self.column_include_list,
            self.column_exclude_list,
        )

    def gtid_filter(self) -> GtidFilter:
        return GtidFilter(
            compile_patterns(self.gtid_source_includes), compile_patterns(self.gtid_source_excludes)
        )

    def value_settings(self) -> ValueSettings:
        return ValueSettings(
            decimal_mode=DecimalMode(self.decimal_handling_mode.strip().lower()),
            time_precision_mode=TimePrecisionMode(self.time_precision_mode.strip().lower()),
            bigint_unsigned_mode=BigintUnsignedMode(self.bigint_unsigned_handling_mode.strip().lower()),
            binary_mode=BinaryMode(self.binary_handling_mode.strip().lower()),
        )

    def history_client_config(self) -> dict[str, str]:
        """``bootstrap.servers`` and the ``schema.history.internal.{producer,consumer}.*`` passthrough."""
        config = {"bootstrap.servers": self.history_bootstrap_servers}
        extra = self.model_extra or {}
        for key, value in extra.items():
            for prefix in ("schema.history.internal.producer.", "schema.history.internal.consumer."):
                if key.startswith(prefix):
                    config[key[len(prefix) :]] = str(value)
        return config


class GtidFilter:
    """Which GTID sources to capture: MySQL GTIDs ``uuid:n`` by server UUID, MariaDB GTIDs
    ``domain-server-seq`` by ``domain-server`` (Debezium's gtid.source.includes/excludes)."""

    def __init__(self, include: tuple[re.Pattern[str], ...], exclude: tuple[re.Pattern[str], ...]) -> None:
        self.include = include
        self.exclude = exclude

    def accepts(self, gtid: str | None) -> bool:
        if gtid is None or not (self.include or self.exclude):
            return True
        source = gtid.rsplit(":", 1)[0] if ":" in gtid else gtid.rsplit("-", 1)[0]
        if self.include:
            return any(p.fullmatch(source) for p in self.include)
        return not any(p.fullmatch(source) for p in self.exclude)
