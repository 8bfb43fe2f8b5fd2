"""The Elasticsearch contract server: errors."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

    from tests.contract_servers.elasticsearch.indices import _Index


class EsError(Exception):
    """An Elasticsearch exception: answers a whole request, or one bulk item."""

    def __init__(
        self,
        status: int,
        type_: str,
        reason: str,
        *,
        caused_by: dict[str, Any] | None = None,
        extra: dict[str, Any] | None = None,
        root_cause: list[dict[str, Any]] | None = None,
        headers: Sequence[tuple[str, str]] = (),
    ) -> None:
        super().__init__(reason)
        self.status = status
        self.type = type_
        self.reason = reason
        self.caused_by = caused_by
        self.extra = extra or {}
        self.root_cause = root_cause
        self.headers = headers

    def error_object(self) -> dict[str, Any]:
        obj: dict[str, Any] = {"type": self.type, "reason": self.reason, **self.extra}
        if self.caused_by is not None:
            obj["caused_by"] = self.caused_by
        return obj

    def body(self) -> dict[str, Any]:
        root = self.root_cause
        if root is None:
            root = [{"type": self.type, "reason": self.reason, **self.extra}]
        return {"error": {"root_cause": root, **self.error_object()}, "status": self.status}


class _PlainError(Exception):
    """Errors Elasticsearch reports as ``{"error": "<text>", "status": N}`` (REST layer)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _illegal(reason: str, caused_by: dict[str, Any] | None = None) -> EsError:
    return EsError(400, "illegal_argument_exception", reason, caused_by=caused_by)


def _index_not_found(name: str) -> EsError:
    return EsError(
        404,
        "index_not_found_exception",
        f"no such index [{name}]",
        extra={"resource.type": "index_or_alias", "resource.id": name, "index_uuid": "_na_", "index": name},
    )


def _shard_extra(index: _Index) -> dict[str, Any]:
    return {"index_uuid": index.uuid, "shard": "0", "index": index.name}


def _conflict(index: _Index, reason: str) -> EsError:
    return EsError(409, "version_conflict_engine_exception", reason, extra=_shard_extra(index))


def _search_failure(index: str, cause: EsError) -> EsError:
    """Query-time errors come back wrapped the way a one-shard search reports them."""
    return EsError(
        cause.status,
        "search_phase_execution_exception",
        "all shards failed",
        root_cause=[cause.error_object()],
        extra={
            "phase": "query",
            "grouped": True,
            "failed_shards": [
                {"shard": 0, "index": index, "node": "contract", "reason": cause.error_object()}
            ],
        },
        caused_by=cause.error_object(),
    )


def _token_name(value: Any) -> str:
    if isinstance(value, dict):
        return "START_OBJECT"
    if isinstance(value, list):
        return "START_ARRAY"
    if isinstance(value, str):
        return "VALUE_STRING"
    if isinstance(value, bool):
        return "VALUE_BOOLEAN"
    if value is None:
        return "VALUE_NULL"
    return "VALUE_NUMBER"


def _java_str(value: Any) -> str:
    """How Elasticsearch prints a parsed value in messages (Java's ``toString``)."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={_java_str(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_java_str(v) for v in value) + "]"
    return str(value)


def _bool_param(value: Any, name: str) -> bool:
    if value is True or value in ("true", ""):
        return True
    if value is False or value == "false":
        return False
    raise _illegal(f"Failed to parse value [{value}] as only [true] or [false] are allowed.")


class _MappingError(Exception):
    """A mapping definition Elasticsearch would refuse (``mapper_parsing_exception``)."""


class _Drop(Exception):
    """Close the connection without answering (the server is going away)."""
