"""Kafka Connect's REST answers as pydantic models, for the tables and waits.

Only what ``ctl`` reads is declared; extra fields are ignored, so newer workers (with
``version`` in statuses, say) and Apache Kafka Connect parse too. ``-o json``/``-o yaml``
print the raw answers, not these models.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from sluiceway.ctl.errors import UnexpectedAnswer

M = TypeVar("M")


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


class ErrorBody(_Answer):
    error_code: int
    message: str


class ConnectorState(_Answer):
    state: str
    worker_id: str = ""
    trace: str | None = None


class TaskState(_Answer):
    id: int
    state: str
    worker_id: str = ""
    trace: str | None = None


class ConnectorStatus(_Answer):
    name: str
    connector: ConnectorState
    tasks: list[TaskState] = []
    type: str = "unknown"


class TaskId(_Answer):
    connector: str
    task: int


class ConnectorInfo(_Answer):
    name: str
    config: dict[str, str]
    tasks: list[TaskId] = []
    type: str = "unknown"


class ExpandedConnector(_Answer):
    """One value of ``GET /connectors?expand=status&expand=info``."""

    status: ConnectorStatus | None = None
    info: ConnectorInfo | None = None


class PluginInfo(_Answer):
    class_name: str = Field(alias="class")
    type: str
    version: str | None = None


class PartitionOffset(_Answer):
    partition: dict[str, Any]
    offset: dict[str, Any] | None


class ConnectorOffsets(_Answer):
    offsets: list[PartitionOffset]


class LoggerLevel(_Answer):
    level: str
    last_modified: int | None = None


class ConfigValue(_Answer):
    name: str
    value: str | None = None
    errors: list[str] = []


class ConfigInfo(_Answer):
    value: ConfigValue


class ValidationResult(_Answer):
    name: str
    error_count: int
    configs: list[ConfigInfo] = []


def parse_answer(kind: type[M], raw: Any, what: str) -> M:
    """``raw`` (decoded JSON) as ``kind``; ``what`` names the request for the error message."""
    try:
        return TypeAdapter(kind).validate_python(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the body"
        raise UnexpectedAnswer(
            f"unexpected answer to {what}: {where}: {first['msg']} (is this Kafka Connect's REST API?)"
        ) from None
