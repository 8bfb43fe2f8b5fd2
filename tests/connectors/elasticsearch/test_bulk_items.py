"""How each bulk answer item is judged, and the retry backoff."""

from __future__ import annotations

import random

import pytest

from connect.api.retry import backoff_seconds
from connectors.elasticsearch.bulk_items import Outcome, classify, describe_error


def _error(kind: str, reason: str = "why", **extra: object) -> dict[str, object]:
    return {"type": kind, "reason": reason, **extra}


@pytest.mark.parametrize(
    ("op", "versioned", "item", "outcome"),
    [
        ("index", False, {"status": 201, "result": "created"}, Outcome.DONE),
        ("delete", True, {"status": 404, "result": "not_found"}, Outcome.DONE),
        # A redelivered record: its version is not newer, or the document already exists.
        ("index", True, {"status": 409, "error": _error("version_conflict_engine_exception")}, Outcome.DONE),
        (
            "create",
            False,
            {"status": 409, "error": _error("version_conflict_engine_exception")},
            Outcome.DONE,
        ),
        # An unversioned conflict (an upsert racing another writer) is not a duplicate.
        (
            "update",
            False,
            {"status": 409, "error": _error("version_conflict_engine_exception")},
            Outcome.FAILED,
        ),
        ("index", False, {"status": 429, "error": _error("es_rejected_execution_exception")}, Outcome.RETRY),
        ("index", False, {"status": 429, "error": _error("cluster_block_exception")}, Outcome.RETRY),
        ("index", False, {"status": 503, "error": _error("unavailable_shards_exception")}, Outcome.RETRY),
        ("index", False, {"status": 400, "error": _error("document_parsing_exception")}, Outcome.MALFORMED),
        ("index", False, {"status": 400, "error": _error("mapper_parsing_exception")}, Outcome.MALFORMED),
        (
            "index",
            False,
            {"status": 400, "error": _error("strict_dynamic_mapping_exception")},
            Outcome.MALFORMED,
        ),
        ("create", False, {"status": 400, "error": _error("illegal_argument_exception")}, Outcome.MALFORMED),
        ("index", False, {"status": 403, "error": _error("security_exception")}, Outcome.FAILED),
        ("index", False, {"status": 404, "error": _error("index_not_found_exception")}, Outcome.FAILED),
    ],
)
def test_classify(op: str, versioned: bool, item: dict[str, object], outcome: Outcome) -> None:
    assert classify(op, versioned, item)[0] is outcome


def test_the_reason_names_the_innermost_cause() -> None:
    error = _error(
        "document_parsing_exception",
        "[1:12] failed to parse field [amount] of type [long]",
        caused_by={
            "type": "illegal_argument_exception",
            "reason": "For input",
            "caused_by": {"type": "number_format_exception", "reason": 'For input string: "abc"'},
        },
    )
    assert describe_error(error) == (
        "document_parsing_exception: [1:12] failed to parse field [amount] of type [long] "
        '(caused by number_format_exception: For input string: "abc")'
    )
    assert classify("index", False, {"status": 400, "error": error})[1] == describe_error(error)


def test_backoff_is_jittered_and_grows_exponentially() -> None:
    rng = random.Random(7)
    for attempt in range(8):
        ceiling = 0.1 * 2**attempt
        waits = [backoff_seconds(attempt, 100, rng) for _ in range(200)]
        assert all(ceiling / 2 <= w <= ceiling for w in waits)
        assert len(set(waits)) > 150  # jittered, not one fixed value
    assert backoff_seconds(3, 0) == 0.0
    assert backoff_seconds(1000, 100) <= 0.1 * 2**24  # the exponent is capped: no overflow
