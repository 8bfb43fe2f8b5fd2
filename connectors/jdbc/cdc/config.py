"""The connector's settings: Debezium's PostgreSQL connector keys, names and defaults.

Enumerated settings are strings checked case-insensitively, as in Debezium. ``snapshot.mode=never`` is the
pre-2.x name of ``no_data`` and means the same. ``plugin.name`` accepts only ``pgoutput``
(PostgreSQL's built-in plugin; Debezium's ``decoderbufs`` must be installed in the
server). ``database.password`` is a secret: never logged, hidden in validation errors.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any, Literal

from connect.api import Boolean, CommaList, ConfigIssue, Field, SecretStr, importance
from connectors.jdbc.cdc.filters import Filters
from connectors.jdbc.cdc.values import (
    BinaryMode,
    DecimalMode,
    IntervalMode,
    TimePrecisionMode,
    ValueSettings,
)
from connectors.jdbc.debezium import config_keys as ck

__all__ = ["PostgresCdcConfig", "PublicationMode", "SnapshotMode"]


class SnapshotMode(enum.StrEnum):
    INITIAL = "initial"
    ALWAYS = "always"
    INITIAL_ONLY = "initial_only"
    NO_DATA = "no_data"
    NEVER = "never"  # Debezium 1.x's name of no_data
    WHEN_NEEDED = "when_needed"


class PublicationMode(enum.StrEnum):
    ALL_TABLES = "all_tables"
    DISABLED = "disabled"
    FILTERED = "filtered"


_OPERATIONS = ("c", "u", "d", "t", "none")
_GROUP_DB = "Postgres"

# Debezium's enumerated settings, checked case-insensitively in ``problems``.
_CHOICES: dict[str, tuple[str, ...]] = {
    "snapshot.mode": tuple(SnapshotMode),
    "publication.autocreate.mode": tuple(PublicationMode),
    "decimal.handling.mode": tuple(DecimalMode),
    "time.precision.mode": tuple(TimePrecisionMode),
    "binary.handling.mode": tuple(BinaryMode),
    "interval.handling.mode": tuple(IntervalMode),
}


class PostgresCdcConfig(ck.DebeziumConfig):
    hostname: str = ck.hostname("IP address or hostname of the PostgreSQL database server.", _GROUP_DB)
    port: int = Field(
        5432,
        alias="database.port",
        ge=1,
        le=65535,
        description="Integer port number of the PostgreSQL database server.",
        json_schema_extra=importance("MEDIUM", group=_GROUP_DB, kafka_type="INT"),
    )
    user: str = ck.user(
        "Name of the PostgreSQL user (it needs the REPLICATION attribute and SELECT on the "
        "captured tables; creating the publication needs ownership of the tables or superuser).",
        _GROUP_DB,
    )
    password: SecretStr | None = ck.password("Password of the PostgreSQL user.", _GROUP_DB)
    dbname: str = Field(
        alias="database.dbname",
        min_length=1,
        description="The name of the PostgreSQL database from which to stream the changes.",
        json_schema_extra=importance("HIGH", group=_GROUP_DB),
    )
    sslmode: Literal["disable", "allow", "prefer", "require", "verify-ca", "verify-full"] = Field(
        "prefer",
        alias="database.sslmode",
        description="Whether to use an encrypted connection (libpq's sslmode).",
        json_schema_extra=importance("MEDIUM", group=_GROUP_DB),
    )
    topic_prefix: str = ck.topic_prefix(
        "Topic prefix naming this database server: topics are <topic.prefix>.<schema>.<table>. "
        "Only letters, digits, '.', '_' and '-'. Do not change it once events were produced.",
        _GROUP_DB,
    )
    plugin_name: str = Field(
        "pgoutput",
        alias="plugin.name",
        description="The logical decoding plug-in; only PostgreSQL's built-in pgoutput is supported.",
        json_schema_extra=importance("MEDIUM", group=_GROUP_DB),
    )
    slot_name: str = Field(
        "debezium",
        alias="slot.name",
        pattern=r"^[a-z0-9_]{1,63}$",
        description="The logical replication slot the connector streams from (lower-case letters, digits "
        "and underscores). Each connector needs its own.",
        json_schema_extra=importance("MEDIUM", group=_GROUP_DB),
    )
    slot_drop_on_stop: Boolean = Field(
        False,
        alias="slot.drop.on.stop",
        description="Drop the replication slot when the connector stops gracefully (testing only: the next "
        "start snapshots again).",
        json_schema_extra=importance("LOW", group=_GROUP_DB, kafka_type="BOOLEAN"),
    )
    slot_max_retries: int = Field(
        6,
        alias="slot.max.retries",
        ge=0,
        description="How many times to retry when the slot is in use by another connection.",
        json_schema_extra=importance("LOW", group=_GROUP_DB, kafka_type="INT"),
    )
    slot_retry_delay_ms: int = Field(
        10000,
        alias="slot.retry.delay.ms",
        ge=0,
        description="Milliseconds between attempts to acquire a slot that is in use.",
        json_schema_extra=importance("LOW", group=_GROUP_DB, kafka_type="LONG"),
    )
    publication_name: str = Field(
        "dbz_publication",
        alias="publication.name",
        pattern=r"^[A-Za-z0-9_]{1,63}$",
        description="The publication pgoutput streams (created at start-up per publication.autocreate.mode).",
        json_schema_extra=importance("MEDIUM", group=_GROUP_DB),
    )
    publication_autocreate_mode: str = Field(
        PublicationMode.ALL_TABLES.value,
        alias="publication.autocreate.mode",
        description="all_tables: create the publication FOR ALL TABLES if it is missing; disabled: it must "
        "exist; filtered: create or update it FOR TABLE with the tables the filters select.",
        json_schema_extra=importance("MEDIUM", group=_GROUP_DB),
    )
    schema_include_list: CommaList = Field(
        [], alias="schema.include.list", description="Regular expressions of the schemas to capture."
    )
    schema_exclude_list: CommaList = Field(
        [], alias="schema.exclude.list", description="Regular expressions of the schemas not to capture."
    )
    table_include_list: CommaList = Field(
        [],
        alias="table.include.list",
        description="Regular expressions of the tables (schema.table) to capture.",
    )
    table_exclude_list: CommaList = ck.table_exclude_list()
    column_include_list: CommaList = Field(
        [],
        alias="column.include.list",
        description="Regular expressions of the columns (schema.table.column) to include in event values.",
    )
    column_exclude_list: CommaList = ck.column_exclude_list()
    snapshot_mode: str = Field(
        SnapshotMode.INITIAL.value,
        alias="snapshot.mode",
        description="initial: snapshot when no offsets exist, then stream; always: snapshot at every start; "
        "initial_only: snapshot, then stop; no_data (or never): stream only; when_needed: as initial, and "
        "snapshot again when the slot was lost.",
        json_schema_extra=importance("MEDIUM", group=ck.GROUP_EVENTS),
    )
    snapshot_fetch_size: int = ck.snapshot_fetch_size()
    max_batch_size: int = ck.max_batch_size()
    poll_interval_ms: int = ck.poll_interval_ms()
    status_update_interval_ms: int = Field(
        10000,
        alias="status.update.interval.ms",
        ge=1,
        description="How often the replication connection reports its position to the server.",
        json_schema_extra=importance("LOW", group=_GROUP_DB, kafka_type="INT"),
    )
    tombstones_on_delete: Boolean = ck.tombstones_on_delete()
    skipped_operations: CommaList = Field(
        ["t"],
        alias="skipped.operations",
        description="Operations not to emit while streaming: c (inserts), u (updates), d (deletes), "
        "t (truncates), or none.",
        json_schema_extra=importance("LOW", group=ck.GROUP_EVENTS, kafka_type="LIST"),
    )
    heartbeat_interval_ms: int = ck.heartbeat_interval_ms(
        "Milliseconds between heartbeat records on __debezium-heartbeat.<topic.prefix> "
        "(0: none). Heartbeats let the slot advance while the captured tables are idle."
    )
    heartbeat_topics_prefix: str = ck.heartbeat_topics_prefix()
    decimal_handling_mode: str = ck.decimal_handling_mode(
        DecimalMode.PRECISE.value, "numeric and money values as precise (Kafka Decimal), double or string."
    )
    time_precision_mode: str = Field(
        TimePrecisionMode.ADAPTIVE.value,
        alias="time.precision.mode",
        description="adaptive (Debezium's types at the column's precision), adaptive_time_microseconds, or "
        "connect (Kafka Connect's Date, Time and Timestamp, milliseconds).",
        json_schema_extra=importance("MEDIUM", group=ck.GROUP_EVENTS),
    )
    binary_handling_mode: str = ck.binary_handling_mode(
        BinaryMode.BYTES.value, "bytea values as bytes, base64, base64-url-safe or hex strings."
    )
    interval_handling_mode: str = Field(
        IntervalMode.NUMERIC.value,
        alias="interval.handling.mode",
        description="interval values as numeric (microseconds) or string (ISO-8601 P..Y..M..DT..H..M..S).",
        json_schema_extra=importance("LOW", group=ck.GROUP_EVENTS),
    )
    money_fraction_digits: int = Field(
        2,
        alias="money.fraction.digits",
        ge=0,
        description="The scale of money values in precise mode.",
        json_schema_extra=importance("LOW", group=ck.GROUP_EVENTS, kafka_type="SHORT"),
    )
    include_unknown_datatypes: Boolean = Field(
        False,
        alias="include.unknown.datatypes",
        description="Pass columns of types without a mapping on as their text (a string). When false, such a "
        "column fails the task, naming it, unless column.exclude.list leaves it out.",
        json_schema_extra=importance("LOW", group=ck.GROUP_EVENTS, kafka_type="BOOLEAN"),
    )
    unavailable_value_placeholder: str = Field(
        "__debezium_unavailable_value",
        alias="unavailable.value.placeholder",
        description="Stands in for an unchanged TOASTed value the server did not send.",
        json_schema_extra=importance("LOW", group=ck.GROUP_EVENTS),
    )
    retriable_restart_wait_ms: int = ck.retriable_restart_wait_ms(
        "The longest wait before reconnecting after the database went away (the wait starts at "
        "half a second and doubles).",
        _GROUP_DB,
    )

    @classmethod
    def problems(cls, props: Mapping[str, Any]) -> list[ConfigIssue]:
        issues = ck.choice_issues(props, _CHOICES)
        plugin = str(props.get("plugin.name", "pgoutput")).strip()
        if plugin != "pgoutput":
            issues.append(
                ConfigIssue(
                    "plugin.name",
                    f"Invalid value {plugin} for configuration plugin.name: only pgoutput "
                    "(PostgreSQL's built-in logical decoding plug-in) is supported",
                )
            )
        issues += ck.filter_issues(
            props,
            ((f"{kind}.include.list", f"{kind}.exclude.list") for kind in ("schema", "table", "column")),
        )
        raw_ops = props.get("skipped.operations")
        if isinstance(raw_ops, str):
            bad = [
                op for op in (o.strip().lower() for o in raw_ops.split(",")) if op and op not in _OPERATIONS
            ]
            if bad:
                issues.append(
                    ConfigIssue(
                        "skipped.operations",
                        f"Invalid value {raw_ops.strip()} for configuration skipped.operations: "
                        f"unknown operation {', '.join(bad)}; use c, u, d, t or none",
                    )
                )
        return issues

    # -- derived settings ----------------------------------------------------------------------------

    @property
    def effective_snapshot_mode(self) -> SnapshotMode:
        mode = SnapshotMode(self.snapshot_mode.lower())
        return SnapshotMode.NO_DATA if mode is SnapshotMode.NEVER else mode

    @property
    def publication_mode(self) -> PublicationMode:
        return PublicationMode(self.publication_autocreate_mode.lower())

    @property
    def skipped(self) -> frozenset[str]:
        ops = {op.strip().lower() for op in self.skipped_operations}
        return frozenset() if "none" in ops else frozenset(ops)

    def filters(self) -> Filters:
        return Filters.of(
            self.schema_include_list,
            self.schema_exclude_list,
            self.table_include_list,
            self.table_exclude_list,
            self.column_include_list,
            self.column_exclude_list,
        )

    def value_settings(self) -> ValueSettings:
        return ValueSettings(
            decimal_mode=DecimalMode(self.decimal_handling_mode.lower()),
            time_precision_mode=TimePrecisionMode(self.time_precision_mode.lower()),
            binary_mode=BinaryMode(self.binary_handling_mode.lower()),
            interval_mode=IntervalMode(self.interval_handling_mode.lower()),
            money_fraction_digits=self.money_fraction_digits,
            include_unknown=self.include_unknown_datatypes,
            unavailable_placeholder=self.unavailable_value_placeholder,
        )
