"""The JDBC source connector's settings: Confluent's ``JdbcSourceConnector`` keys and defaults.

Keys that only make sense together (a mode and its columns, a query and table filters)
are checked in ``problems``, each reported against the key to fix, so that both
``PUT /connector-plugins/JdbcSourceConnector/config/validate`` and a connector start
say precisely what is wrong.
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo
from collections.abc import Mapping
from typing import Any, Literal

from connect.api import Boolean, CommaList, ConfigIssue, ConnectorConfig, Field, SecretStr, importance
from connectors.jdbc.query.criteria import Mode
from connectors.jdbc.query.tables import TableId
from connectors.jdbc.query.types import NumericMapping
from connectors.jdbc.query.urls import TranslatedUrl, to_sqlalchemy_url

DATABASE = "Database"
MODE = "Mode"
CONNECTOR = "Connector"

#: Table types (JDBC's names); the last three exist in PostgreSQL only.
TABLE_TYPES = ("TABLE", "VIEW", "PARTITIONED TABLE", "MATERIALIZED VIEW", "FOREIGN TABLE")
_TOPIC_PREFIX_CHARS = re.compile(r"[^a-zA-Z0-9._-]")
_MAX_TOPIC_LENGTH = 249
_QUOTE_METHODS = ("always", "never")
_NUMERIC_MAPPINGS = tuple(m.value for m in NumericMapping)
_INCLUDE_KEYS = ("table.whitelist", "table.include.list")
_EXCLUDE_KEYS = ("table.blacklist", "table.exclude.list")


def _db(level: Literal["HIGH", "MEDIUM", "LOW"], **kw: Any) -> dict[str, Any]:
    return importance(level, group=DATABASE, **kw)


def _mode(level: Literal["HIGH", "MEDIUM", "LOW"], **kw: Any) -> dict[str, Any]:
    return importance(level, group=MODE, **kw)


def _connector(level: Literal["HIGH", "MEDIUM", "LOW"], **kw: Any) -> dict[str, Any]:
    return importance(level, group=CONNECTOR, **kw)


class JdbcSourceConfig(ConnectorConfig):
    """Settings of ``JdbcSourceConnector`` (and of its tasks, which get the same keys)."""

    # -- database ---------------------------------------------------------------------
    connection_url: str = Field(
        alias="connection.url",
        min_length=1,
        description="JDBC URL (jdbc:postgresql://host:5432/db, jdbc:mysql://host:3306/db, "
        "jdbc:mariadb://..., jdbc:sqlite:/path/to.db) or SQLAlchemy URL "
        "(postgresql+psycopg://user@host/db, mysql+pymysql://..., sqlite:///path/to.db).",
        json_schema_extra=_db("HIGH", display_name="JDBC URL", width="LONG"),
    )
    connection_user: str | None = Field(
        None,
        alias="connection.user",
        description="Database user; overrides a user in the URL.",
        json_schema_extra=_db("HIGH", display_name="JDBC User"),
    )
    connection_password: SecretStr | None = Field(
        None,
        alias="connection.password",
        description="Database password; overrides a password in the URL. Never logged.",
        json_schema_extra=_db("HIGH", display_name="JDBC Password", kafka_type="PASSWORD"),
    )
    connection_attempts: int = Field(
        3,
        alias="connection.attempts",
        ge=1,
        description="Maximum number of attempts to get a database connection before failing.",
        json_schema_extra=_db("LOW", kafka_type="INT"),
    )
    connection_backoff_ms: int = Field(
        10000,
        alias="connection.backoff.ms",
        ge=0,
        description="Backoff time in milliseconds between connection attempts.",
        json_schema_extra=_db("LOW", kafka_type="LONG"),
    )
    table_whitelist: CommaList = Field(
        default_factory=list,
        alias="table.whitelist",
        description="Tables to copy (bare or qualified names: orders, public.orders). "
        "Same as table.include.list; excludes table.blacklist.",
        json_schema_extra=_db("MEDIUM", kafka_type="LIST"),
    )
    table_blacklist: CommaList = Field(
        default_factory=list,
        alias="table.blacklist",
        description="Tables not to copy. Same as table.exclude.list; excludes table.whitelist.",
        json_schema_extra=_db("MEDIUM", kafka_type="LIST"),
    )
    table_include_list: CommaList = Field(
        default_factory=list,
        alias="table.include.list",
        description="Tables to copy (the newer name of table.whitelist).",
        json_schema_extra=_db("MEDIUM", kafka_type="LIST"),
    )
    table_exclude_list: CommaList = Field(
        default_factory=list,
        alias="table.exclude.list",
        description="Tables not to copy (the newer name of table.blacklist).",
        json_schema_extra=_db("MEDIUM", kafka_type="LIST"),
    )
    catalog_pattern: str | None = Field(
        None,
        alias="catalog.pattern",
        description="LIKE pattern of the catalogs (MySQL/MariaDB: databases) to find tables in; "
        "unset: the connection's database.",
        json_schema_extra=_db("MEDIUM"),
    )
    schema_pattern: str | None = Field(
        None,
        alias="schema.pattern",
        description="LIKE pattern of the schemas (PostgreSQL) to find tables in; unset: every "
        "schema but the system ones. Set it on large databases.",
        json_schema_extra=_db("HIGH"),
    )
    numeric_precision_mapping: Boolean = Field(
        False,
        alias="numeric.precision.mapping",
        description="Deprecated: numeric.mapping=precision_only.",
        json_schema_extra=_db("LOW", kafka_type="BOOLEAN"),
    )
    numeric_mapping: str | None = Field(
        None,
        alias="numeric.mapping",
        description="How NUMERIC/DECIMAL columns map: none (Decimal), precision_only, best_fit, "
        "best_fit_eager_double.",
        json_schema_extra=_db("LOW"),
    )
    dialect_name: str = Field(
        "",
        alias="dialect.name",
        description="Accepted for compatibility; the dialect follows from connection.url.",
        json_schema_extra=_db("LOW"),
    )

    # -- mode -------------------------------------------------------------------------
    mode: Literal["bulk", "incrementing", "timestamp", "timestamp+incrementing"] = Field(
        alias="mode",
        description="bulk: the whole table each time; incrementing: new rows by a strictly "
        "increasing column; timestamp: new and changed rows by a timestamp column; "
        "timestamp+incrementing: both, for a unique, totally ordered offset.",
        json_schema_extra=_mode("HIGH", display_name="Table Loading Mode"),
    )
    incrementing_column_name: str = Field(
        "",
        alias="incrementing.column.name",
        description="The strictly incrementing, non-null column; empty: the table's auto-increment column.",
        json_schema_extra=_mode("MEDIUM"),
    )
    timestamp_column_name: CommaList = Field(
        default_factory=list,
        alias="timestamp.column.name",
        description="Timestamp column(s) detecting new and changed rows, compared as "
        "COALESCE(c1, c2, ...) in this order; at least one should be NOT NULL.",
        json_schema_extra=_mode("MEDIUM", kafka_type="LIST"),
    )
    timestamp_initial: int | None = Field(
        None,
        alias="timestamp.initial",
        description="Epoch milliseconds to start the timestamp modes from when there is no "
        "offset yet; -1: the database's current time; unset: all rows.",
        json_schema_extra=_mode("LOW", kafka_type="LONG"),
    )
    validate_non_null: Boolean = Field(
        True,
        alias="validate.non.null",
        description="Refuse to start on tables whose incrementing or timestamp columns are nullable.",
        json_schema_extra=_mode("LOW", kafka_type="BOOLEAN"),
    )
    query: str = Field(
        "",
        alias="query",
        description="A query to copy instead of tables; the connector filters and orders its "
        "rows by the mode's columns. Its topic is topic.prefix.",
        json_schema_extra=_mode("MEDIUM"),
    )
    query_suffix: str = Field(
        "",
        alias="query.suffix",
        description="Text appended to every generated query (then no LIMIT is added).",
        json_schema_extra=_mode("LOW"),
    )
    quote_sql_identifiers: str = Field(
        "always",
        alias="quote.sql.identifiers",
        description="When to quote table and column names in SQL: always or never.",
        json_schema_extra=_mode("MEDIUM"),
    )

    # -- connector --------------------------------------------------------------------
    table_types: CommaList = Field(
        default_factory=lambda: ["TABLE"],
        alias="table.types",
        description="Kinds of tables to copy: TABLE, VIEW; in PostgreSQL also PARTITIONED TABLE "
        "(a partitioned table as a whole; its partitions are TABLEs), MATERIALIZED VIEW, FOREIGN TABLE.",
        json_schema_extra=_connector("LOW", kafka_type="LIST"),
    )
    poll_interval_ms: int = Field(
        5000,
        alias="poll.interval.ms",
        ge=1,
        description="How often each table is queried for new data, in ms.",
        json_schema_extra=_connector("HIGH", kafka_type="INT"),
    )
    batch_max_rows: int = Field(
        100,
        alias="batch.max.rows",
        ge=1,
        description="Maximum rows per query (in timestamp mode rows sharing the last "
        "timestamp of a batch are added to it).",
        json_schema_extra=_connector("LOW", kafka_type="INT"),
    )
    table_poll_interval_ms: int = Field(
        60000,
        alias="table.poll.interval.ms",
        ge=1,
        description="How often to look for new or dropped tables, in ms.",
        json_schema_extra=_connector("LOW", kafka_type="LONG"),
    )
    topic_prefix: str = Field(
        "",
        alias="topic.prefix",
        description="Prefix of the table names making the topic names; with a query, the topic.",
        json_schema_extra=_connector("HIGH"),
    )
    timestamp_delay_interval_ms: int = Field(
        0,
        alias="timestamp.delay.interval.ms",
        ge=0,
        description="How long after its timestamp a row becomes visible to the timestamp modes, "
        "so that transactions committing late with earlier timestamps are not missed.",
        json_schema_extra=_connector("HIGH", kafka_type="LONG"),
    )
    db_timezone: str = Field(
        "UTC",
        alias="db.timezone",
        description="Time zone of timestamps without a time zone in the database.",
        json_schema_extra=_connector("MEDIUM"),
    )

    # -- derived values ------------------------------------------------------------------

    @property
    def query_mode(self) -> Mode:
        return Mode(self.mode)

    @property
    def include_tables(self) -> list[str]:
        return self.table_include_list or self.table_whitelist

    @property
    def exclude_tables(self) -> list[str]:
        return self.table_exclude_list or self.table_blacklist

    @property
    def quote(self) -> bool:
        return self.quote_sql_identifiers.lower() == "always"

    @property
    def numeric(self) -> NumericMapping:
        if self.numeric_mapping:
            return NumericMapping(self.numeric_mapping.lower())
        return NumericMapping.PRECISION_ONLY if self.numeric_precision_mapping else NumericMapping.NONE

    @property
    def zone(self) -> dt.tzinfo:
        return _zone(self.db_timezone)

    @property
    def types(self) -> frozenset[str]:
        """``table.types``, upper case."""
        return frozenset(t.upper() for t in self.table_types)

    def url(self) -> TranslatedUrl:
        password = self.connection_password.get_secret_value() if self.connection_password else None
        return to_sqlalchemy_url(self.connection_url, self.connection_user, password)

    def topic_for(self, table: TableId | None) -> str:
        """Where rows go: prefix + table name, or the prefix alone for the query."""
        return self.topic_prefix if table is None else self.topic_prefix + table.name

    # -- checks across keys ----------------------------------------------------------------

    @classmethod
    def problems(cls, props: Mapping[str, Any]) -> list[ConfigIssue]:
        issues: list[ConfigIssue] = []

        def raw(key: str) -> str:
            value = props.get(key)
            return "" if value is None else str(value).strip()

        def listed(key: str) -> list[str]:
            return [v.strip() for v in raw(key).split(",") if v.strip()]

        url = raw("connection.url")
        if url:
            issues += _url_problems(url)
        mode = raw("mode")
        query = raw("query")
        if (
            mode in ("incrementing", "timestamp+incrementing")
            and query
            and not raw("incrementing.column.name")
        ):
            issues.append(
                ConfigIssue(
                    "incrementing.column.name",
                    f"mode {mode} with a query needs incrementing.column.name: the auto-increment "
                    "column of a query cannot be found",
                )
            )
        if mode in ("timestamp", "timestamp+incrementing") and not listed("timestamp.column.name"):
            issues.append(
                ConfigIssue(
                    "timestamp.column.name",
                    f"timestamp.column.name is required with mode {mode}: name at least one timestamp column",
                )
            )
        includes = [k for k in _INCLUDE_KEYS if listed(k)]
        excludes = [k for k in _EXCLUDE_KEYS if listed(k)]
        if len(includes) == 2 and listed(includes[0]) != listed(includes[1]):
            issues.append(
                ConfigIssue("table.include.list", "table.include.list replaces table.whitelist: set only one")
            )
        if len(excludes) == 2 and listed(excludes[0]) != listed(excludes[1]):
            issues.append(
                ConfigIssue("table.exclude.list", "table.exclude.list replaces table.blacklist: set only one")
            )
        if includes and excludes:
            issues.append(ConfigIssue(excludes[0], f"{includes[0]} and {excludes[0]} are exclusive: set one"))
        if query and (includes or excludes):
            issues.append(
                ConfigIssue(
                    "query",
                    "query may not be combined with whole-table copying settings "
                    f"({', '.join(includes + excludes)})",
                )
            )
        prefix = raw("topic.prefix")
        if query and not prefix:
            issues.append(
                ConfigIssue("topic.prefix", "with a query, topic.prefix is the topic and must be set")
            )
        if len(prefix) > _MAX_TOPIC_LENGTH:
            issues.append(
                ConfigIssue(
                    "topic.prefix", f"topic.prefix must not be longer than {_MAX_TOPIC_LENGTH} characters"
                )
            )
        if _TOPIC_PREFIX_CHARS.search(prefix):
            issues.append(
                ConfigIssue(
                    "topic.prefix",
                    f"Invalid value {prefix} for configuration topic.prefix: Topic prefix must not contain "
                    "any character other than ASCII alphanumerics, '.', '_' and '-'.",
                )
            )
        for kind in listed("table.types"):
            if kind.upper() not in TABLE_TYPES:
                issues.append(
                    ConfigIssue(
                        "table.types", f"table.types: {kind!r} is not supported (supported: TABLE, VIEW)"
                    )
                )
        quoting = raw("quote.sql.identifiers")
        if quoting and quoting.lower() not in _QUOTE_METHODS:
            issues.append(
                ConfigIssue(
                    "quote.sql.identifiers",
                    f"Invalid value {quoting} for configuration quote.sql.identifiers: "
                    "must be always or never",
                )
            )
        mapping = raw("numeric.mapping")
        if mapping and mapping.lower() not in _NUMERIC_MAPPINGS:
            issues.append(
                ConfigIssue(
                    "numeric.mapping",
                    f"Invalid value {mapping} for configuration numeric.mapping: must be one of "
                    f"{', '.join(_NUMERIC_MAPPINGS)}",
                )
            )
        zone = raw("db.timezone")
        if zone:
            try:
                _zone(zone)
            except ValueError as exc:
                issues.append(
                    ConfigIssue("db.timezone", f"Invalid value {zone} for configuration db.timezone: {exc}")
                )
        return issues


def _zone(name: str) -> dt.tzinfo:
    if name.upper() in ("UTC", "Z", "GMT"):
        return dt.UTC
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {name!r} (expected an IANA name such as Europe/Paris)") from None


def _url_problems(url: str) -> list[ConfigIssue]:
    try:
        translated = to_sqlalchemy_url(url)
    except ValueError as exc:
        return [ConfigIssue("connection.url", f"Invalid connection.url: {exc}")]
    try:
        dialect = translated.url.get_dialect()
        dialect.import_dbapi()
    except Exception as exc:
        shown = translated.url.render_as_string(hide_password=True)
        return [
            ConfigIssue(
                "connection.url",
                f"connection.url: no database driver for {shown}: {exc} "
                "(installed: postgresql+psycopg, mysql+pymysql, sqlite)",
            )
        ]
    return []
