"""REST answers turned into table rows (plain strings; ``render`` lays them out).

Column names follow kcctl's tables (``NAME TYPE STATE TASKS`` ...).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sluiceway.ctl.rest_models import (
    ConnectorInfo,
    ConnectorOffsets,
    ConnectorStatus,
    ExpandedConnector,
    LoggerLevel,
    PluginInfo,
    TaskState,
    ValidationResult,
)

Row = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Table:
    headers: Row
    rows: list[Row]


def tasks_cell(status: ConnectorStatus) -> str:
    """``running/total``, kcctl's TASKS column."""
    running = sum(1 for t in status.tasks if t.state == "RUNNING")
    return f"{running}/{len(status.tasks)}"


def connectors_table(expanded: dict[str, ExpandedConnector], names: list[str] | None = None) -> Table:
    """``GET /connectors?expand=status&expand=info``, sorted by name (only ``names`` if given)."""
    rows: list[Row] = []
    for name in sorted(expanded):
        if names and name not in names:
            continue
        entry = expanded[name]
        kind = entry.info.type if entry.info else entry.status.type if entry.status else "unknown"
        if entry.status is not None:
            state, tasks = entry.status.connector.state, tasks_cell(entry.status)
        else:
            state, tasks = "UNKNOWN", f"?/{len(entry.info.tasks) if entry.info else 0}"
        rows.append((name, kind, state, tasks))
    return Table(("NAME", "TYPE", "STATE", "TASKS"), rows)


def plugins_table(plugins: list[PluginInfo]) -> Table:
    return Table(("CLASS", "TYPE", "VERSION"), [(p.class_name, p.type, p.version or "") for p in plugins])


def _compact(value: dict[str, Any] | None) -> str:
    return "null" if value is None else json.dumps(value, sort_keys=True)


def _is_sink_offset(partition: dict[str, Any], offset: dict[str, Any] | None) -> bool:
    # Kafka's shape for sink connectors (the consumer group's committed offsets).
    return set(partition) == {"kafka_topic", "kafka_partition"} and (
        offset is None or set(offset) == {"kafka_offset"}
    )


def offsets_table(offsets: ConnectorOffsets) -> Table:
    """Sinks get ``TOPIC PARTITION OFFSET``; sources their partition and offset maps as JSON."""
    entries = offsets.offsets
    if entries and all(_is_sink_offset(e.partition, e.offset) for e in entries):
        rows: list[Row] = [
            (
                str(e.partition["kafka_topic"]),
                str(e.partition["kafka_partition"]),
                str(e.offset["kafka_offset"]) if e.offset is not None else "null",
            )
            for e in entries
        ]
        return Table(("TOPIC", "PARTITION", "OFFSET"), sorted(rows))
    return Table(("PARTITION", "OFFSET"), [(_compact(e.partition), _compact(e.offset)) for e in entries])


def timestamp(ms: int | None) -> str:
    """Epoch milliseconds as UTC ISO 8601 (``last_modified`` of loggers); empty for null."""
    if ms is None:
        return ""
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def loggers_table(loggers: dict[str, LoggerLevel]) -> Table:
    # root first, as Kafka Connect lists it; then by name
    names = sorted(loggers, key=lambda n: (n != "root", n))
    return Table(
        ("LOGGER", "LEVEL", "LAST MODIFIED"),
        [(n, loggers[n].level, timestamp(loggers[n].last_modified)) for n in names],
    )


def validation_errors(result: ValidationResult) -> list[tuple[str, str]]:
    """(key, message) of every error the validation reported, in the worker's order."""
    return [(c.value.name, e) for c in result.configs for e in c.value.errors]


@dataclass(frozen=True, slots=True)
class ConnectorDescription:
    """What ``describe connector`` shows, in kcctl's order."""

    name: str
    type: str
    state: str
    worker_id: str
    trace: str | None
    config: list[tuple[str, str]]
    tasks: list[TaskState]
    topics: list[str] | None  # None: the worker does not track topics


def describe(info: ConnectorInfo, status: ConnectorStatus, topics: list[str] | None) -> ConnectorDescription:
    return ConnectorDescription(
        name=info.name,
        type=info.type,
        state=status.connector.state,
        worker_id=status.connector.worker_id,
        trace=status.connector.trace,
        config=sorted(info.config.items()),
        tasks=sorted(status.tasks, key=lambda t: t.id),
        topics=sorted(topics) if topics is not None else None,
    )
