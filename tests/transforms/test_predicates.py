"""The predicates' configs and behaviour (Kafka's TopicNameMatches, HasHeaderKey, RecordIsTombstone)."""

from __future__ import annotations

import pytest

from connect.api import Headers
from tests.transforms.support import configured, sink, source
from transforms.predicates import HasHeaderKey, RecordIsTombstone, TopicNameMatches


def test_topic_name_matches_the_whole_name() -> None:
    p = configured(TopicNameMatches, pattern="orders-.*")
    assert p.test(sink(topic="orders-eu"))
    assert not p.test(sink(topic="eu-orders-eu"))  # matches(), not find()
    assert not configured(TopicNameMatches, pattern="orders").test(sink(topic="orders-eu"))


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({}, 'Missing required configuration "predicates.p.pattern" which has no default value.'),
        (
            {"pattern": "  "},
            "Invalid value  for configuration predicates.p.pattern: String must be non-empty",
        ),
    ],
)
def test_topic_name_matches_config_errors(props: dict[str, str], message: str) -> None:
    issues = TopicNameMatches.Config.issues(props, prefix="predicates.p.")
    assert [(i.key, i.message) for i in issues] == [("predicates.p.pattern", message)]


def test_topic_name_matches_refuses_an_invalid_regex() -> None:
    [issue] = TopicNameMatches.Config.issues({"pattern": "(("}, prefix="predicates.p.")
    assert issue.key == "predicates.p.pattern"
    assert issue.message.startswith(
        "Invalid value (( for configuration predicates.p.pattern: Invalid regex: "
    )


def test_has_header_key() -> None:
    p = configured(HasHeaderKey, name="trace")
    assert p.test(sink("v", headers=Headers().add("a", 1).add("trace", None)))
    assert not p.test(sink("v", headers=Headers().add("Trace", 1)))  # exact, case-sensitive
    assert not p.test(sink("v"))
    [issue] = HasHeaderKey.Config.issues({"name": ""}, prefix="predicates.h.")
    assert (issue.key, issue.message) == (
        "predicates.h.name",
        "Invalid value  for configuration predicates.h.name: String must be non-empty",
    )


def test_record_is_tombstone_looks_at_the_value_only() -> None:
    p = configured(RecordIsTombstone)
    assert p.test(sink(None, key="k"))
    assert p.test(source(None))
    assert not p.test(sink("", key=None))
    assert not p.test(sink(0))
