"""The configuration keys every Debezium connector declares, as field factories, and their checks.

Each connector's config class still lists its own keys in its own order (the order the REST
API and the reference pages show), so the shared keys are functions returning the field
rather than fields of a base class (pydantic puts a base class's fields first). Where a
connector describes a key in its own database's words, the description is a parameter.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from connect.api import ConfigIssue, ConnectorConfig, Field, importance
from connectors.jdbc.cdc.filters import compile_patterns

__all__ = [
    "GROUP_EVENTS",
    "DebeziumConfig",
    "binary_handling_mode",
    "choice_issues",
    "column_exclude_list",
    "decimal_handling_mode",
    "filter_issues",
    "heartbeat_interval_ms",
    "heartbeat_topics_prefix",
    "hostname",
    "list_pairs",
    "max_batch_size",
    "password",
    "poll_interval_ms",
    "retriable_restart_wait_ms",
    "snapshot_fetch_size",
    "table_exclude_list",
    "tombstones_on_delete",
    "topic_prefix",
    "user",
]

GROUP_EVENTS = "Events"


class DebeziumConfig(ConnectorConfig):
    """What Debezium's configs derive alike from their keys. It declares no fields (a base class's
    fields would come first in the key order); subclasses declare ``topic.prefix`` and
    ``topic.heartbeat.prefix`` with the factories below."""

    if TYPE_CHECKING:
        topic_prefix: str
        heartbeat_topics_prefix: str

    @property
    def heartbeat_topic(self) -> str:
        return f"{self.heartbeat_topics_prefix}.{self.topic_prefix}"


# pydantic's Field() is typed as returning Any (it stands for the field's value in the
# class body), so the factories are too.


def hostname(description: str, group: str) -> Any:
    return Field(
        alias="database.hostname",
        min_length=1,
        description=description,
        json_schema_extra=importance("HIGH", group=group),
    )


def user(description: str, group: str) -> Any:
    return Field(
        alias="database.user",
        min_length=1,
        description=description,
        json_schema_extra=importance("HIGH", group=group),
    )


def password(description: str, group: str) -> Any:
    return Field(
        None,
        alias="database.password",
        description=description,
        json_schema_extra=importance("HIGH", group=group, kafka_type="PASSWORD"),
    )


def topic_prefix(description: str, group: str) -> Any:
    return Field(
        alias="topic.prefix",
        pattern=r"^[A-Za-z0-9._-]+$",
        description=description,
        json_schema_extra=importance("HIGH", group=group),
    )


def table_exclude_list() -> Any:
    return Field(
        [], alias="table.exclude.list", description="Regular expressions of the tables not to capture."
    )


def column_exclude_list() -> Any:
    return Field(
        [], alias="column.exclude.list", description="Regular expressions of the columns to leave out."
    )


def snapshot_fetch_size() -> Any:
    return Field(
        10240,
        alias="snapshot.fetch.size",
        ge=1,
        description="Rows fetched from the server at a time while snapshotting a table.",
        json_schema_extra=importance("LOW", group=GROUP_EVENTS, kafka_type="INT"),
    )


def max_batch_size() -> Any:
    return Field(
        2048,
        alias="max.batch.size",
        ge=1,
        description="The most records one poll returns.",
        json_schema_extra=importance("LOW", group=GROUP_EVENTS, kafka_type="INT"),
    )


def poll_interval_ms() -> Any:
    return Field(
        500,
        alias="poll.interval.ms",
        ge=1,
        description="How long a poll waits for changes when there are none.",
        json_schema_extra=importance("LOW", group=GROUP_EVENTS, kafka_type="LONG"),
    )


def tombstones_on_delete() -> Any:
    return Field(
        True,
        alias="tombstones.on.delete",
        description="Follow each delete event with a tombstone (the key with a null value).",
        json_schema_extra=importance("MEDIUM", group=GROUP_EVENTS, kafka_type="BOOLEAN"),
    )


def heartbeat_interval_ms(description: str) -> Any:
    return Field(
        0,
        alias="heartbeat.interval.ms",
        ge=0,
        description=description,
        json_schema_extra=importance("MEDIUM", group=GROUP_EVENTS, kafka_type="INT"),
    )


def heartbeat_topics_prefix() -> Any:
    return Field(
        "__debezium-heartbeat",
        alias="topic.heartbeat.prefix",
        min_length=1,
        description="Heartbeats go to <topic.heartbeat.prefix>.<topic.prefix>.",
        json_schema_extra=importance("LOW", group=GROUP_EVENTS),
    )


def decimal_handling_mode(default: str, description: str) -> Any:
    return Field(
        default,
        alias="decimal.handling.mode",
        description=description,
        json_schema_extra=importance("MEDIUM", group=GROUP_EVENTS),
    )


def binary_handling_mode(default: str, description: str) -> Any:
    return Field(
        default,
        alias="binary.handling.mode",
        description=description,
        json_schema_extra=importance("LOW", group=GROUP_EVENTS),
    )


def retriable_restart_wait_ms(description: str, group: str) -> Any:
    return Field(
        10000,
        alias="retriable.restart.connector.wait.ms",
        ge=0,
        description=description,
        json_schema_extra=importance("LOW", group=group, kafka_type="LONG"),
    )


# -- checks -----------------------------------------------------------------------------------------


def choice_issues(props: Mapping[str, Any], choices: Mapping[str, tuple[str, ...]]) -> list[ConfigIssue]:
    """Enumerated settings, checked case-insensitively as Debezium checks them."""
    issues: list[ConfigIssue] = []
    for key, allowed in choices.items():
        raw = props.get(key)
        if isinstance(raw, str) and raw.strip().lower() not in allowed:
            issues.append(
                ConfigIssue(
                    key,
                    f"Invalid value {raw.strip()} for configuration {key}: String must be one of (case "
                    f"insensitive): {', '.join(allowed)}",
                )
            )
    return issues


def list_pairs(*kinds: str) -> list[tuple[str, str]]:
    """``<kind>.include.list`` and ``<kind>.exclude.list`` of each kind."""
    return [(f"{kind}.include.list", f"{kind}.exclude.list") for kind in kinds]


def filter_issues(props: Mapping[str, Any], pairs: Iterable[tuple[str, str]]) -> list[ConfigIssue]:
    """Include/exclude list pairs: at most one of each pair set, every entry a valid regular expression."""
    issues: list[ConfigIssue] = []
    for include, exclude in pairs:
        if str(props.get(include) or "").strip() and str(props.get(exclude) or "").strip():
            issues.append(ConfigIssue(exclude, f"{include} and {exclude} cannot both be set"))
        for key in (include, exclude):
            raw = props.get(key)
            if isinstance(raw, str) and raw.strip():
                try:
                    compile_patterns([p.strip() for p in raw.split(",") if p.strip()])
                except ValueError as exc:
                    issues.append(
                        ConfigIssue(key, f"Invalid value {raw.strip()} for configuration {key}: {exc}")
                    )
    return issues
