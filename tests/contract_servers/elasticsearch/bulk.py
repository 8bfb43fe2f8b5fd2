"""The Elasticsearch contract server: bulk requests."""

from __future__ import annotations

from typing import Any, Final

import orjson

from tests.contract_servers.elasticsearch.constants import _MAX_ID_BYTES, _MISSING
from tests.contract_servers.elasticsearch.errors import EsError, _bool_param, _illegal, _java_str, _token_name


class _BadSource:
    __slots__ = ("col", "message")

    def __init__(self, message: str, col: int) -> None:
        self.message = message
        self.col = col


class _Op:
    __slots__ = (
        "action",
        "id",
        "if_primary_term",
        "if_seq_no",
        "index",
        "pipeline",
        "raw",
        "require_alias",
        "source",
        "version",
        "version_type",
    )

    def __init__(self, action: str) -> None:
        self.action = action
        self.index: str | None = None
        self.id: str | None = None
        self.version: int | None = None
        self.version_type = "internal"
        self.if_seq_no: int | None = None
        self.if_primary_term: int | None = None
        self.pipeline: str | None = None
        self.require_alias = False
        self.source: Any = _MISSING
        self.raw: bytes | None = None


_BULK_META: Final = frozenset(
    {
        "_index",
        "_id",
        "routing",
        "version",
        "version_type",
        "if_seq_no",
        "if_primary_term",
        "pipeline",
        "retry_on_conflict",
        "require_alias",
        "require_data_stream",
        "dynamic_templates",
        "_source",
        "list_executed_pipelines",
    }
)
_VERSION_TYPES: Final = {
    "internal": "internal",
    "external": "external",
    "external_gt": "external",
    "external_gte": "external_gte",
}
_UPDATE_KEYS: Final = frozenset(
    {"doc", "upsert", "doc_as_upsert", "script", "scripted_upsert", "detect_noop", "_source", "lang"}
)


def _id_text(value: Any) -> str | None:
    if value is None:
        return None
    return _java_str(value)


def _parse_meta(op: _Op, meta: dict[str, Any], line: int, default_index: str | None) -> None:
    op.index = default_index
    for key, value in meta.items():
        if key not in _BULK_META:
            raise _illegal(f"Action/metadata line [{line}] contains an unknown parameter [{key}]")
        if isinstance(value, dict | list) and key not in ("dynamic_templates", "_source"):
            raise _illegal(
                f"Malformed action/metadata line [{line}], expected a simple value for field [{key}] but "
                f"found [{_token_name(value)}]"
            )
        try:
            if key == "_index":
                op.index = _id_text(value)
            elif key == "_id":
                op.id = _id_text(value)
            elif key == "version":
                op.version = int(value)
            elif key == "version_type":
                version_type = _VERSION_TYPES.get(str(value))
                if version_type is None:
                    raise _illegal(f"No version type match [{value}]")
                op.version_type = version_type
            elif key == "if_seq_no":
                op.if_seq_no = int(value)
            elif key == "if_primary_term":
                op.if_primary_term = int(value)
            elif key == "pipeline":
                op.pipeline = _id_text(value)
            elif key == "require_alias":
                op.require_alias = _bool_param(value, key)
        except (TypeError, ValueError):
            raise EsError(
                400, "x_content_parse_exception", f"[1:1] failed to parse field [{key}] with value [{value}]"
            ) from None


def _parse_bulk(body: bytes, default_index: str | None) -> list[_Op]:
    if not body:
        raise EsError(400, "parse_exception", "request body is required")
    if body[-1:] != b"\n":
        raise _illegal("The bulk request must be terminated by a newline [\\n]")
    lines = body.split(b"\n")
    last = len(lines) - 1
    loads = orjson.loads
    ops: list[_Op] = []
    i = 0
    while i < last:
        line = lines[i]
        i += 1
        if not line.strip():
            continue
        try:
            action_line = loads(line)
        except orjson.JSONDecodeError as exc:
            raise EsError(400, "x_content_parse_exception", f"[1:{exc.colno}] {exc.msg}") from None
        if type(action_line) is not dict:
            raise _illegal(
                f"Malformed action/metadata line [{i}], expected START_OBJECT but found "
                f"[{_token_name(action_line)}]"
            )
        if len(action_line) != 1:
            found = "END_OBJECT" if not action_line else "FIELD_NAME"
            expected = "FIELD_NAME" if not action_line else "END_OBJECT"
            raise _illegal(f"Malformed action/metadata line [{i}], expected {expected} but found [{found}]")
        ((action, meta),) = action_line.items()
        if action not in ("index", "create", "update", "delete"):
            raise _illegal(
                f"Malformed action/metadata line [{i}], expected field [create], [delete], [index] or "
                f"[update] but found [{action}]"
            )
        if type(meta) is not dict:
            raise _illegal(
                f"Malformed action/metadata line [{i}], expected START_OBJECT but found [{_token_name(meta)}]"
            )
        op = _Op(action)
        size = len(meta)
        index_name = meta.get("_index", default_index)
        doc_id = meta.get("_id")
        # Most action lines carry only _index and/or _id, as strings: no per-key loop for them.
        if (
            size == ("_index" in meta) + ("_id" in meta)
            and (index_name is None or type(index_name) is str)
            and (doc_id is None or type(doc_id) is str)
        ):
            op.index = index_name
            op.id = doc_id
        else:
            _parse_meta(op, meta, i, default_index)
        if action != "delete" and i < last:
            raw = lines[i]
            i += 1
            if action == "update":
                op.source = _parse_update_body(raw)
            else:
                op.raw = raw
                try:
                    op.source = loads(raw)
                except orjson.JSONDecodeError as exc:
                    op.source = _BadSource(exc.msg, exc.colno)
        ops.append(op)
    return ops


def _parse_update_body(raw: bytes) -> dict[str, Any]:
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise EsError(400, "x_content_parse_exception", f"[1:{exc.colno}] {exc.msg}") from None
    if type(body) is not dict:
        raise EsError(
            400,
            "x_content_parse_exception",
            "[1:1] [UpdateRequest] Expected START_OBJECT but was: " + _token_name(body),
        )
    for key, value in body.items():
        if key not in _UPDATE_KEYS:
            raise EsError(400, "x_content_parse_exception", f"[1:2] [UpdateRequest] unknown field [{key}]")
        if key in ("doc", "upsert") and type(value) is not dict:
            raise EsError(
                400, "x_content_parse_exception", f"[1:2] [UpdateRequest] failed to parse field [{key}]"
            )
    return body


def _validate_ops(ops: list[_Op]) -> None:
    errors: list[str] = []
    if not ops:
        errors.append("no requests added")
    for op in ops:
        if op.index is None:
            errors.append("index is missing")
        if op.id is None and op.action in ("update", "delete"):
            errors.append("id is missing")
        if op.id is not None:
            if not op.id:
                errors.append("if _id is specified it must not be empty")
            elif len(op.id.encode()) > _MAX_ID_BYTES:
                size = len(op.id.encode())
                errors.append(f"id [{op.id}] is too long, must be no longer than 512 bytes but was: {size}")
        if op.source is _MISSING and op.action != "delete":
            errors.append("script or doc is missing" if op.action == "update" else "source is missing")
        if op.action == "update":
            if op.version_type != "internal":
                errors.append(f"version type [{op.version_type.upper()}] is not supported by the update API")
            elif op.version is not None:
                errors.append("can't provide version in update request")
            elif isinstance(op.source, dict) and "doc" not in op.source and "script" not in op.source:
                errors.append("script or doc is missing")
        else:
            if op.version_type != "internal":
                if op.action == "create":
                    errors.append("create operations only support internal versioning. use index instead")
                if op.version is None or op.version < 0:
                    version = -3 if op.version is None else op.version
                    errors.append(
                        f"illegal version value [{version}] for version type [{op.version_type.upper()}]"
                    )
            elif op.version is not None:
                errors.append(
                    "internal versioning can not be used for optimistic concurrency control. Please use "
                    "`if_seq_no` and `if_primary_term` instead"
                )
        if op.if_seq_no is not None and (op.version_type != "internal" or op.version is not None):
            errors.append("compare and write operations can not use versioning")
        if op.if_seq_no is not None and op.if_primary_term is None:
            errors.append("ifSeqNo is set, but primary term is [0]")
        if op.if_primary_term is not None and op.if_seq_no is None:
            errors.append(f"ifSeqNo is unassigned, but primary term is [{op.if_primary_term}]")
    if errors:
        listed = "".join(f"{n}: {message};" for n, message in enumerate(errors, 1))
        raise EsError(400, "action_request_validation_exception", f"Validation Failed: {listed}")
