"""What to do with each item of a bulk response. Pure. (Backoff between retries lives in
``connect.api.retry``.)

Elasticsearch answers a bulk request item by item; the request as a whole succeeds even
when items fail, so each item is told apart:

- success, a ``not_found`` delete, and a version conflict where the conflict means the
  document is already there (``create`` of an existing id, an external version not newer
  than the stored one: a redelivered record) → ``DONE``;
- 429 (the node's write queue is full, or a flood-stage disk block) and 5xx → ``RETRY``;
- the document itself is refused (mapping conflicts, unparsable fields, illegal names)
  → ``MALFORMED``, which ``behavior.on.malformed.documents`` decides;
- anything else (security, a closed or missing index, ...) → ``FAILED``: retrying cannot help.
"""

from __future__ import annotations

import enum
from typing import Any


class Outcome(enum.Enum):
    DONE = "done"
    RETRY = "retry"
    MALFORMED = "malformed"
    FAILED = "failed"


#: Error types that say the document, not the cluster, is at fault.
MALFORMED_TYPES = frozenset(
    {
        "mapper_parsing_exception",
        "document_parsing_exception",
        "strict_dynamic_mapping_exception",
        "illegal_argument_exception",
        "action_request_validation_exception",
        "x_content_parse_exception",
        "json_parse_exception",
        "mapper_exception",
    }
)
_CONFLICT = "version_conflict_engine_exception"


def classify(op: str, versioned: bool, item: dict[str, Any]) -> tuple[Outcome, str]:
    """The outcome of one response item (``{"index": {...}}``'s inner object) and, unless
    done, the reason in Elasticsearch's words."""
    error = item.get("error")
    if error is None:
        return Outcome.DONE, ""
    status = int(item.get("status", 0))
    kind = error.get("type", "") if isinstance(error, dict) else ""
    if kind == _CONFLICT and (versioned or op == "create"):
        return Outcome.DONE, ""
    reason = describe_error(error)
    if status == 429 or status >= 500:
        return Outcome.RETRY, reason
    if kind in MALFORMED_TYPES:
        return Outcome.MALFORMED, reason
    return Outcome.FAILED, reason


def describe_error(error: Any) -> str:
    """``type: reason`` with the innermost cause, e.g. ``document_parsing_exception: failed
    to parse field [amount] of type [long] ... (caused by number_format_exception: ...)``."""
    if not isinstance(error, dict):
        return str(error)
    text = f"{error.get('type', 'error')}: {error.get('reason', '')}".strip()
    cause = error.get("caused_by")
    while isinstance(cause, dict) and isinstance(cause.get("caused_by"), dict):
        cause = cause["caused_by"]
    if isinstance(cause, dict):
        text += f" (caused by {cause.get('type', 'error')}: {cause.get('reason', '')})"
    return text
