"""Filter drops every record it is applied to (predicates decide which, in the runtime)."""

from __future__ import annotations

from connect.api import Schema
from tests.transforms.support import configured, sink, source
from transforms.filter import Filter


def test_drops_sink_and_source_records_tombstones_included() -> None:
    xform = configured(Filter)
    assert xform.apply(sink("v", Schema.STRING_SCHEMA)) is None
    assert xform.apply(sink(None)) is None
    assert xform.apply(source({"a": 1})) is None


def test_has_no_settings_and_ignores_unknown_keys() -> None:
    assert Filter.Config.issues({}) == []
    assert Filter.Config.issues({"unknown": "x", "predicate": "p", "negate": "true"}) == []
    assert configured(Filter, {"unknown": "x"}).apply(sink("v")) is None


def test_is_known_by_kafkas_class_name() -> None:
    assert Filter.aliases == ("org.apache.kafka.connect.transforms.Filter",)
