"""The JDBC sinks' settings: Confluent's ``JdbcSinkConnector`` keys and Debezium's
``JdbcSinkConnector`` keys, both read into one ``SinkSettings`` that the writer uses.

Both models check keys that only make sense together in ``problems`` (deletes need a
key to delete by, upserts need key columns), each issue naming the key to fix, so
``PUT /connector-plugins/.../config/validate`` and a task start say what is wrong.

Exactly once into the table is this project's addition to both: with
``exactly.once.enabled=true`` each batch's rows and the next Kafka offset of every
partition it covers are committed in one database transaction, into the table
``exactly.once.offsets.table`` (``__connect_sink_offsets``) of the target database.
Neither Confluent nor Debezium has such a key; the name follows their ``*.enabled``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator

from connect.api import Boolean, CommaList, ConfigIssue, ConnectorConfig, Field, SecretStr, importance
from connectors.jdbc.query.config import _url_problems, _zone
from connectors.jdbc.query.urls import TranslatedUrl, to_sqlalchemy_url

InsertMode = Literal["insert", "upsert", "update"]
PkMode = Literal["none", "kafka", "record_key", "record_value"]

#: The ``pk.mode=kafka`` columns (Confluent's and Debezium's defaults).
KAFKA_PK_FIELDS = ("__connect_topic", "__connect_partition", "__connect_offset")
OFFSETS_TABLE = "__connect_sink_offsets"


def _lower(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


LowerInsertMode = Annotated[InsertMode, BeforeValidator(_lower)]
LowerPkMode = Annotated[PkMode, BeforeValidator(_lower)]


@dataclass(frozen=True, slots=True)
class SinkSettings:
    """What the writer needs, whichever connector's keys it came from."""

    url: TranslatedUrl
    insert_mode: InsertMode
    pk_mode: PkMode
    pk_fields: tuple[str, ...]
    include_fields: frozenset[str]
    exclude_fields: frozenset[str]
    table_format: str
    auto_create: bool
    auto_evolve: bool
    delete_enabled: bool
    batch_size: int
    max_retries: int
    retry_backoff_ms: int
    zone: dt.tzinfo
    quote: bool
    exactly_once: bool
    offsets_table: str
    debezium: bool
    connector: str
    table_types: frozenset[str] = frozenset({"TABLE"})
    truncate_enabled: bool = False

    @property
    def shown_url(self) -> str:
        return self.url.url.render_as_string(hide_password=True)

    def table_for(self, topic: str) -> str:
        """The table of ``topic``: Debezium's sink replaces the topic's dots by underscores
        (``shop.inventory.orders`` → ``shop_inventory_orders``), Confluent's does not."""
        return self.table_format.replace("${topic}", topic.replace(".", "_") if self.debezium else topic)

    @property
    def source_placeholders(self) -> bool:
        """Whether table names take fields of Debezium's ``source`` (``${source.table}``)."""
        return self.debezium and "${source." in self.table_format


def _db(level: Literal["HIGH", "MEDIUM", "LOW"], **kw: Any) -> dict[str, Any]:
    return importance(level, group="Connection", **kw)


def _writes(level: Literal["HIGH", "MEDIUM", "LOW"], **kw: Any) -> dict[str, Any]:
    return importance(level, group="Writes", **kw)


def _shared_problems(
    props: Mapping[str, Any], *, pk_key: str, fields_key: str, delete_modes: tuple[str, ...]
) -> list[ConfigIssue]:
    def raw(key: str) -> str:
        value = props.get(key)
        return "" if value is None else str(value).strip()

    issues: list[ConfigIssue] = []
    if raw("connection.url"):
        issues += _url_problems(raw("connection.url"))
    pk_mode = raw(pk_key).lower() or "none"
    insert_mode = raw("insert.mode").lower() or "insert"
    fields = [f.strip() for f in raw(fields_key).split(",") if f.strip()]
    if raw("delete.enabled").lower() == "true" and pk_mode not in delete_modes:
        issues.append(
            ConfigIssue(
                "delete.enabled",
                f"delete.enabled=true needs {pk_key}={' or '.join(delete_modes)} (the key to delete by), "
                f"not {pk_key}={pk_mode}",
            )
        )
    if insert_mode in ("upsert", "update") and pk_mode == "none":
        issues.append(
            ConfigIssue(
                pk_key,
                f"insert.mode={insert_mode} needs primary key columns: set {pk_key} to "
                "kafka, record_key or record_value",
            )
        )
    if pk_mode == "kafka" and fields and len(fields) != 3:
        issues.append(
            ConfigIssue(
                fields_key,
                f"{pk_key}=kafka needs {fields_key} empty or exactly three names (topic, partition, "
                f"offset columns), not {len(fields)}",
            )
        )
    for key in ("db.timezone", "use.time.zone", "database.time_zone"):
        if raw(key):
            try:
                _zone(raw(key))
            except ValueError as exc:
                issues.append(ConfigIssue(key, f"Invalid value {raw(key)} for configuration {key}: {exc}"))
    return issues


class _Common(ConnectorConfig):
    connection_url: str = Field(
        alias="connection.url",
        min_length=1,
        description="JDBC URL (jdbc:postgresql://host:5432/db, jdbc:mysql://..., jdbc:mariadb://..., "
        "jdbc:sqlite:/path.db) or SQLAlchemy URL (postgresql+psycopg://...).",
        json_schema_extra=_db("HIGH", display_name="JDBC URL", width="LONG"),
    )
    connection_password: SecretStr | None = Field(
        None,
        alias="connection.password",
        description="Database password; overrides one in the URL. Never logged.",
        json_schema_extra=_db("HIGH", kafka_type="PASSWORD"),
    )
    insert_mode: LowerInsertMode = Field(
        "insert",
        alias="insert.mode",
        description="insert: INSERT only; upsert: insert or update by the primary key "
        "(ON CONFLICT / ON DUPLICATE KEY); update: UPDATE by the primary key.",
        json_schema_extra=_writes("HIGH"),
    )
    delete_enabled: Boolean = Field(
        False,
        alias="delete.enabled",
        description="Null values (tombstones) delete the row of their key.",
        json_schema_extra=_writes("MEDIUM", kafka_type="BOOLEAN"),
    )
    exactly_once_enabled: Boolean = Field(
        False,
        alias="exactly.once.enabled",
        description="Commit each batch and its Kafka offsets in one database transaction "
        "(offsets in exactly.once.offsets.table); a restarted task resumes from them.",
        json_schema_extra=_writes("MEDIUM", kafka_type="BOOLEAN"),
    )
    exactly_once_offsets_table: str = Field(
        OFFSETS_TABLE,
        alias="exactly.once.offsets.table",
        min_length=1,
        description="The table of the target database holding the offsets with exactly.once.enabled.",
        json_schema_extra=_writes("LOW"),
    )
    max_retries: int = Field(
        10,
        alias="max.retries",
        ge=0,
        description="Retries of a batch after a database error before the task fails.",
        json_schema_extra=_db("MEDIUM", kafka_type="INT"),
    )
    retry_backoff_ms: int = Field(
        3000,
        alias="retry.backoff.ms",
        ge=0,
        description="Wait between retries, in ms.",
        json_schema_extra=_db("MEDIUM", kafka_type="INT"),
    )

    def _url(self, user: str | None) -> TranslatedUrl:
        password = self.connection_password.get_secret_value() if self.connection_password else None
        return to_sqlalchemy_url(self.connection_url, user, password)

    def _name(self) -> str:
        return str((self.model_extra or {}).get("name", ""))


class ConfluentSinkConfig(_Common):
    """Settings of ``JdbcSinkConnector`` under Confluent's keys and defaults."""

    connection_user: str | None = Field(
        None,
        alias="connection.user",
        description="Database user; overrides one in the URL.",
        json_schema_extra=_db("HIGH"),
    )
    pk_mode: LowerPkMode = Field(
        "none",
        alias="pk.mode",
        description="Primary key columns: none; kafka (topic, partition, offset); record_key "
        "(the key, or its listed fields); record_value (listed value fields, or all).",
        json_schema_extra=_writes("HIGH"),
    )
    pk_fields: CommaList = Field(
        default_factory=list,
        alias="pk.fields",
        description="Primary key field names, as pk.mode reads them.",
        json_schema_extra=_writes("MEDIUM", kafka_type="LIST"),
    )
    fields_whitelist: CommaList = Field(
        default_factory=list,
        alias="fields.whitelist",
        description="Value fields to write; empty: all.",
        json_schema_extra=_writes("MEDIUM", kafka_type="LIST"),
    )
    table_name_format: str = Field(
        "${topic}",
        alias="table.name.format",
        description="The table of each topic; ${topic} is replaced by the topic's name.",
        json_schema_extra=_writes("MEDIUM"),
    )
    auto_create: Boolean = Field(
        False,
        alias="auto.create",
        description="CREATE missing tables from the record schemas.",
        json_schema_extra=_writes("MEDIUM", kafka_type="BOOLEAN"),
    )
    auto_evolve: Boolean = Field(
        False,
        alias="auto.evolve",
        description="ALTER TABLE ADD missing columns (optional fields only; nothing is dropped or retyped).",
        json_schema_extra=_writes("MEDIUM", kafka_type="BOOLEAN"),
    )
    batch_size: int = Field(
        3000, alias="batch.size", ge=1, description="Rows per statement.", json_schema_extra=_writes("MEDIUM")
    )
    db_timezone: str = Field(
        "UTC",
        alias="db.timezone",
        description="Time zone timestamps are written in (columns without a time zone).",
        json_schema_extra=_writes("MEDIUM"),
    )
    quote_sql_identifiers: Annotated[Literal["always", "never"], BeforeValidator(_lower)] = Field(
        "always",
        alias="quote.sql.identifiers",
        description="Quote table and column names: always or never.",
        json_schema_extra=_writes("MEDIUM"),
    )
    table_types: CommaList = Field(
        default_factory=lambda: ["TABLE"],
        alias="table.types",
        description="Kinds of tables written to: TABLE, VIEW.",
        json_schema_extra=_writes("LOW", kafka_type="LIST"),
    )
    dialect_name: str = Field(
        "",
        alias="dialect.name",
        description="Accepted for compatibility; the dialect follows from connection.url.",
        json_schema_extra=_db("LOW"),
    )

    @classmethod
    def problems(cls, props: Mapping[str, Any]) -> list[ConfigIssue]:
        return _shared_problems(props, pk_key="pk.mode", fields_key="pk.fields", delete_modes=("record_key",))

    def settings(self) -> SinkSettings:
        return SinkSettings(
            url=self._url(self.connection_user),
            insert_mode=self.insert_mode,
            pk_mode=self.pk_mode,
            pk_fields=tuple(self.pk_fields),
            include_fields=frozenset(self.fields_whitelist),
            exclude_fields=frozenset(),
            table_format=self.table_name_format,
            auto_create=self.auto_create,
            auto_evolve=self.auto_evolve,
            delete_enabled=self.delete_enabled,
            batch_size=self.batch_size,
            max_retries=self.max_retries,
            retry_backoff_ms=self.retry_backoff_ms,
            zone=_zone(self.db_timezone),
            quote=self.quote_sql_identifiers == "always",
            exactly_once=self.exactly_once_enabled,
            offsets_table=self.exactly_once_offsets_table,
            debezium=False,
            connector=self._name(),
            table_types=frozenset(t.upper() for t in self.table_types),
        )


class DebeziumSinkConfig(_Common):
    """Settings of Debezium's ``JdbcSinkConnector`` under Debezium's keys and defaults."""

    connection_username: str | None = Field(
        None,
        alias="connection.username",
        description="Database user; overrides one in the URL.",
        json_schema_extra=_db("HIGH"),
    )
    primary_key_mode: LowerPkMode = Field(
        "none",
        alias="primary.key.mode",
        description="Primary key columns: none, kafka, record_key, record_value.",
        json_schema_extra=_writes("HIGH"),
    )
    primary_key_fields: CommaList = Field(
        default_factory=list,
        alias="primary.key.fields",
        description="Primary key field names, as primary.key.mode reads them.",
        json_schema_extra=_writes("MEDIUM", kafka_type="LIST"),
    )
    schema_evolution: Annotated[Literal["none", "basic"], BeforeValidator(_lower)] = Field(
        "none",
        alias="schema.evolution",
        description="none: tables must exist and fit; basic: create missing tables, add missing columns.",
        json_schema_extra=_writes("MEDIUM"),
    )
    collection_name_format: str | None = Field(
        None,
        alias="collection.name.format",
        description="The table of each topic; ${topic} is replaced by the topic's name.",
        json_schema_extra=_writes("MEDIUM"),
    )
    table_name_format: str | None = Field(
        None,
        alias="table.name.format",
        description="Deprecated name of collection.name.format.",
        json_schema_extra=_writes("LOW"),
    )
    batch_size: int = Field(
        500, alias="batch.size", ge=1, description="Rows per statement.", json_schema_extra=_writes("MEDIUM")
    )
    quote_identifiers: Boolean = Field(
        False,
        alias="quote.identifiers",
        description="Quote table and column names.",
        json_schema_extra=_writes("MEDIUM", kafka_type="BOOLEAN"),
    )
    field_include_list: CommaList = Field(
        default_factory=list,
        alias="field.include.list",
        description="Value fields to write (field or topic:field); excludes field.exclude.list.",
        json_schema_extra=_writes("MEDIUM", kafka_type="LIST"),
    )
    field_exclude_list: CommaList = Field(
        default_factory=list,
        alias="field.exclude.list",
        description="Value fields not to write (field or topic:field).",
        json_schema_extra=_writes("MEDIUM", kafka_type="LIST"),
    )
    use_time_zone: str = Field(
        "UTC",
        alias="use.time.zone",
        description="Time zone timestamps are written in (columns without a time zone).",
        json_schema_extra=_writes("MEDIUM"),
    )
    truncate_enabled: Boolean = Field(
        False,
        alias="truncate.enabled",
        description="Truncate events (op t) delete every row of their table.",
        json_schema_extra=_writes("MEDIUM", kafka_type="BOOLEAN"),
    )
    database_time_zone: str | None = Field(
        None,
        alias="database.time_zone",
        description="The name of use.time.zone before Debezium 2.5; use.time.zone wins when both are set.",
        json_schema_extra=_writes("LOW"),
    )

    @classmethod
    def problems(cls, props: Mapping[str, Any]) -> list[ConfigIssue]:
        issues = _shared_problems(
            props,
            pk_key="primary.key.mode",
            fields_key="primary.key.fields",
            delete_modes=("record_key", "record_value"),
        )
        if (
            str(props.get("field.include.list", "")).strip()
            and str(props.get("field.exclude.list", "")).strip()
        ):
            issues.append(
                ConfigIssue(
                    "field.exclude.list", "field.include.list and field.exclude.list exclude each other"
                )
            )
        return issues

    def settings(self) -> SinkSettings:
        evolve = self.schema_evolution == "basic"
        return SinkSettings(
            url=self._url(self.connection_username),
            insert_mode=self.insert_mode,
            pk_mode=self.primary_key_mode,
            pk_fields=tuple(self.primary_key_fields),
            include_fields=frozenset(self.field_include_list),
            exclude_fields=frozenset(self.field_exclude_list),
            table_format=self.collection_name_format or self.table_name_format or "${topic}",
            auto_create=evolve,
            auto_evolve=evolve,
            delete_enabled=self.delete_enabled,
            batch_size=self.batch_size,
            max_retries=self.max_retries,
            retry_backoff_ms=self.retry_backoff_ms,
            zone=_zone(
                self.database_time_zone
                if self.database_time_zone and "use_time_zone" not in self.model_fields_set
                else self.use_time_zone
            ),
            quote=self.quote_identifiers,
            exactly_once=self.exactly_once_enabled,
            offsets_table=self.exactly_once_offsets_table,
            debezium=True,
            connector=self._name(),
            truncate_enabled=self.truncate_enabled,
        )
