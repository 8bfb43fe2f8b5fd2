"""Compatibility levels on Avro evolutions whose answers Avro's resolution rules fix
(the Avro specification's "Schema Resolution"), and what a refusal says."""

from __future__ import annotations

import json
from typing import Any

import pytest

from schema_registry.compatibility import LEVELS, incompatibilities
from schema_registry.schemas import ParsedSchema, SchemaProblem, parse


def record(*fields: dict[str, Any]) -> ParsedSchema:
    return parse("AVRO", json.dumps({"type": "record", "name": "r", "fields": list(fields)}))


A = {"name": "a", "type": "int"}
B = {"name": "b", "type": "string"}
B_DEFAULT = {"name": "b", "type": "string", "default": ""}
A_LONG = {"name": "a", "type": "long"}

# (old, new) -> (backward, forward): can new read old's data / can old read new's data.
CASES = {
    "add a field with a default": ((A,), (A, B_DEFAULT), (True, True)),
    "add a field without a default": ((A,), (A, B), (False, True)),
    "remove a field with a default": ((A, B_DEFAULT), (A,), (True, True)),
    "remove a field without a default": ((A, B), (A,), (True, False)),
    "promote int to long": ((A,), (A_LONG,), (True, False)),
    "narrow long to int": ((A_LONG,), (A,), (False, True)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_level_applies_its_direction(case: str) -> None:
    old_fields, new_fields, (backward, forward) = CASES[case]
    old, new = record(*old_fields), record(*new_fields)
    expected = {
        "NONE": True,
        "BACKWARD": backward,
        "BACKWARD_TRANSITIVE": backward,
        "FORWARD": forward,
        "FORWARD_TRANSITIVE": forward,
        "FULL": backward and forward,
        "FULL_TRANSITIVE": backward and forward,
    }
    for level in LEVELS:
        assert (not incompatibilities(level, new, [(1, old)])) is expected[level], level


def test_transitive_levels_look_at_every_version_the_others_at_the_latest() -> None:
    v1, v2, v3 = record(A, B), record(A), record(A, {"name": "b", "type": "int", "default": 0})
    # v3 reads v2's data (b from its default), not v1's (b was a string).
    assert incompatibilities("BACKWARD", v3, [(1, v1), (2, v2)]) == []
    problems = incompatibilities("BACKWARD_TRANSITIVE", v3, [(1, v1), (2, v2)])
    assert problems and "version 1" in problems[0] and "TYPE_MISMATCH" in problems[0]
    assert "{compatibility: 'BACKWARD_TRANSITIVE'}" in problems


def test_a_refusal_names_the_rule_the_place_and_the_version() -> None:
    problems = incompatibilities("BACKWARD", record(A, B), [(4, record(A))])
    assert problems[0] == (
        "the new schema cannot read data written with version 4: READER_FIELD_MISSING_DEFAULT_VALUE at "
        "/fields/1: b"
    )
    assert "{oldSchemaVersion: 4}" in problems


def test_canonical_text_ignores_whitespace_and_with_normalize_key_order() -> None:
    compact = parse("AVRO", '{"type":"record","name":"r","fields":[{"name":"a","type":"int"}]}')
    spaced = parse("AVRO", '{ "type": "record", "name": "r",\n "fields": [ {"name": "a", "type": "int"} ] }')
    reordered = parse(
        "AVRO", '{"fields":[{"type":"int","name":"a"}],"name":"r","type":"record"}', normalize=True
    )
    assert compact.canonical == spaced.canonical
    assert parse("AVRO", compact.canonical, normalize=True).canonical == reordered.canonical


def test_unparsable_schemas_say_why() -> None:
    with pytest.raises(SchemaProblem, match="not JSON"):
        parse("AVRO", "{nope")
    with pytest.raises(SchemaProblem, match="not a valid Avro schema"):
        parse("AVRO", '{"type": "record", "name": "r", "fields": [{"name": "a", "type": "nope"}]}')
    with pytest.raises(SchemaProblem, match="registers AVRO, JSON, PROTOBUF"):
        parse("XML", "<schema/>")
