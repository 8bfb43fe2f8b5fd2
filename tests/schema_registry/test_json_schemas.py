"""The JSON schema type: parsing (metaschema per draft, references by name, canonical and
normalized text) and Confluent's JSON Schema compatibility rules (``SchemaDiff``), rule by
rule, with the differences Confluent names at the paths it names. The expected answers
follow Confluent's ``json-schema-provider`` diff rules and its ``diff-schema-examples``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schema_registry.json_schema_diff import COMPATIBLE_CHANGES, differences
from schema_registry.json_schemas import JsonSchemaParsed, json_reads, parse_json
from schema_registry.schema_kind import SchemaProblem
from schema_registry.schemas import parse, supported_types

D2020 = "https://json-schema.org/draft/2020-12/schema"


def load(schema: Any, references: list[tuple[str, Any]] | None = None) -> JsonSchemaParsed:
    refs = [(name, json.dumps(text)) for name, text in references or []]
    return parse_json(json.dumps(schema), refs, False)[1]


def diff(original: Any, update: Any) -> list[str]:
    return sorted(f"{kind} {path}" for kind, path in differences(load(original).root, load(update).root))


def obj(props: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, **more}


S, N, I = {"type": "string"}, {"type": "number"}, {"type": "integer"}  # noqa: E741

# (what, original, update, every difference Confluent reports); compatible = all of them
# are in Confluent's STRICT compatible set.
CASES: list[tuple[str, Any, Any, list[str]]] = [
    ("anything to the empty schema", S, {}, []),
    ("anything to true", obj({"a": S}), True, []),
    ("false to anything", False, S, []),
    (
        "annotations",
        {**S, "title": "a", "description": "b", "$id": "x"},
        {**S, "title": "c", "description": "d", "$id": "y"},
        ["DESCRIPTION_CHANGED #/", "ID_CHANGED #/", "TITLE_CHANGED #/"],
    ),
    ("default", {**S, "default": "a"}, {**S, "default": "b"}, ["DEFAULT_CHANGED #/"]),
    ("type changed", S, N, ["TYPE_CHANGED #/"]),
    ("integer widened to number", I, N, ["TYPE_EXTENDED #/"]),
    ("number narrowed to integer", N, I, ["TYPE_NARROWED #/"]),
    ("connect bytes stay bytes", {**S, "connect.type": "bytes"}, {**N, "connect.type": "bytes"}, []),
    ("minLength up", {**S, "minLength": 1}, {**S, "minLength": 2}, ["MIN_LENGTH_INCREASED #/minLength"]),
    ("minLength down", {**S, "minLength": 2}, {**S, "minLength": 1}, ["MIN_LENGTH_DECREASED #/minLength"]),
    ("minLength added", S, {**S, "minLength": 1}, ["MIN_LENGTH_ADDED #/minLength"]),
    ("maxLength down", {**S, "maxLength": 5}, {**S, "maxLength": 4}, ["MAX_LENGTH_DECREASED #/maxLength"]),
    ("maxLength removed", {**S, "maxLength": 5}, S, ["MAX_LENGTH_REMOVED #/maxLength"]),
    ("pattern added", S, {**S, "pattern": "^a"}, ["PATTERN_ADDED #/pattern"]),
    ("pattern changed", {**S, "pattern": "^a"}, {**S, "pattern": "^b"}, ["PATTERN_CHANGED #/pattern"]),
    ("pattern removed", {**S, "pattern": "^a"}, S, ["PATTERN_REMOVED #/pattern"]),
    ("maximum down", {**N, "maximum": 9}, {**N, "maximum": 8}, ["MAXIMUM_DECREASED #/maximum"]),
    ("maximum up", {**N, "maximum": 9}, {**N, "maximum": 10}, ["MAXIMUM_INCREASED #/maximum"]),
    ("minimum added", N, {**N, "minimum": 0}, ["MINIMUM_ADDED #/minimum"]),
    ("minimum down", {**N, "minimum": 1}, {**N, "minimum": 0}, ["MINIMUM_DECREASED #/minimum"]),
    (
        "exclusiveMaximum up",
        {**N, "exclusiveMaximum": 1},
        {**N, "exclusiveMaximum": 2},
        ["EXCLUSIVE_MAXIMUM_INCREASED #/exclusiveMaximum"],
    ),
    (
        "exclusiveMinimum up",
        {**N, "exclusiveMinimum": 1},
        {**N, "exclusiveMinimum": 2},
        ["EXCLUSIVE_MINIMUM_INCREASED #/exclusiveMinimum"],
    ),
    (
        "exclusiveMinimum removed",
        {**N, "exclusiveMinimum": 1},
        N,
        ["EXCLUSIVE_MINIMUM_REMOVED #/exclusiveMinimum"],
    ),
    (
        "multipleOf expanded",
        {**N, "multipleOf": 2},
        {**N, "multipleOf": 4},
        ["MULTIPLE_OF_EXPANDED #/multipleOf"],
    ),
    (
        "multipleOf reduced",
        {**N, "multipleOf": 0.5},
        {**N, "multipleOf": 0.25},
        ["MULTIPLE_OF_REDUCED #/multipleOf"],
    ),
    (
        "multipleOf changed",
        {**N, "multipleOf": 2},
        {**N, "multipleOf": 3},
        ["MULTIPLE_OF_CHANGED #/multipleOf"],
    ),
    ("multipleOf equal in value", {**N, "multipleOf": 0.5}, {**N, "multipleOf": 0.50}, []),
    ("enum extended", {"enum": ["a"]}, {"enum": ["a", "b"]}, ["ENUM_ARRAY_EXTENDED #/enum"]),
    ("enum narrowed", {"enum": ["a", "b"]}, {"enum": ["a"]}, ["ENUM_ARRAY_NARROWED #/enum"]),
    ("enum changed", {"enum": ["a"]}, {"enum": ["b"]}, ["ENUM_ARRAY_CHANGED #/enum"]),
    ("enum dropped from a typed enum", {**S, "enum": ["a"]}, S, ["PRODUCT_TYPE_NARROWED #/"]),
    ("const changed", {"const": 1}, {"const": 2}, ["ENUM_ARRAY_CHANGED #/const"]),
    ("not narrowed", {"not": S}, {"not": {**S, "maxLength": 3}}, ["NOT_TYPE_NARROWED #/not"]),
    ("not extended", {"not": {**S, "maxLength": 3}}, {"not": S}, ["NOT_TYPE_EXTENDED #/not"]),
    ("type list extended", {"type": ["string"]}, {"type": ["string", "null"]}, ["SUM_TYPE_EXTENDED #/"]),
    ("type list narrowed", {"type": ["string", "null"]}, {"type": ["string"]}, ["SUM_TYPE_NARROWED #/"]),
    ("a type into a union", S, {"oneOf": [N, S]}, ["SUM_TYPE_EXTENDED #/"]),
    ("a union into a type", {"oneOf": [N, S]}, S, ["TYPE_CHANGED #/"]),
    ("allOf member dropped", {"allOf": [S, {"maxLength": 3}]}, S, ["PRODUCT_TYPE_NARROWED #/"]),
    ("allOf member added", {"allOf": [S]}, {"allOf": [S, {"maxLength": 3}]}, ["PRODUCT_TYPE_EXTENDED #/"]),
    (
        "union members changed",
        {"anyOf": [S, N]},
        {"anyOf": [S, {"type": "boolean"}]},
        ["COMBINED_TYPE_SUBSCHEMAS_CHANGED #/"],
    ),
    ("union members reordered", {"anyOf": [S, N]}, {"anyOf": [N, S]}, []),
    (
        "member compared at its original index",
        {"anyOf": [N, {**S, "maxLength": 3}]},
        {"anyOf": [S, N]},
        ["MAX_LENGTH_REMOVED #/anyOf/1/maxLength"],
    ),
    ("criterion to anyOf", {"oneOf": [S, N]}, {"anyOf": [S, N]}, ["COMBINED_TYPE_EXTENDED #/"]),
    ("criterion anyOf to oneOf", {"anyOf": [S, N]}, {"oneOf": [S, N]}, ["COMBINED_TYPE_CHANGED #/"]),
    ("singleton criteria", {"oneOf": [S]}, {"allOf": [S]}, ["COMBINED_TYPE_EXTENDED #/"]),
    (
        "required added",
        obj({"a": S}),
        obj({"a": S}, required=["a"]),
        ["REQUIRED_ATTRIBUTE_ADDED #/required/a"],
    ),
    (
        "required with default added",
        obj({"a": S}),
        obj({"a": {**S, "default": ""}}, required=["a"]),
        ["DEFAULT_CHANGED #/properties/a", "REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED #/required/a"],
    ),
    (
        "required removed",
        obj({"a": S}, required=["a"]),
        obj({"a": S}),
        ["REQUIRED_ATTRIBUTE_REMOVED #/required/a"],
    ),
    ("property type changed", obj({"a": S}), obj({"a": N}), ["TYPE_CHANGED #/properties/a"]),
    (
        "optional property added to an open model",
        obj({}),
        obj({"b": S}),
        ["OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL #/properties/b"],
    ),
    (
        "required property added to an open model",
        obj({}),
        obj({"b": S}, required=["b"]),
        ["REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL #/properties/b"],
    ),
    (
        "empty-schema property added to an open model",
        obj({}),
        obj({"b": {}}),
        ["PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL #/properties/b"],
    ),
    (
        "property removed from an open model",
        obj({"a": S}),
        obj({}),
        ["PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL #/properties/a"],
    ),
    (
        "property removed from a closed model",
        obj({"a": S}, additionalProperties=False),
        obj({}, additionalProperties=False),
        ["PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL #/properties/a"],
    ),
    (
        "false property removed from a closed model",
        obj({"a": False}, additionalProperties=False),
        obj({}, additionalProperties=False),
        ["PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL #/properties/a"],
    ),
    (
        "optional property added to a closed model",
        obj({}, additionalProperties=False),
        obj({"b": S}, additionalProperties=False),
        ["OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/b"],
    ),
    (
        "required property added to a closed model",
        obj({}, additionalProperties=False),
        obj({"b": S}, required=["b"], additionalProperties=False),
        ["REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/b"],
    ),
    (
        "required property with default added to a closed model",
        obj({}, additionalProperties=False),
        obj({"b": {**S, "default": "x"}}, required=["b"], additionalProperties=False),
        ["REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/b"],
    ),
    (
        "property added, covered by additionalProperties",
        obj({}, additionalProperties=S),
        obj({"b": S}, additionalProperties=S),
        [
            "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/b",
            "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/b",
        ],
    ),
    (
        "property added, not covered by additionalProperties",
        obj({}, additionalProperties=S),
        obj({"b": N}, additionalProperties=S),
        [
            "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/b",
            "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/b",
            "TYPE_CHANGED #/properties/b",
        ],
    ),
    (
        "property added, covered by patternProperties",
        obj({}, patternProperties={"^i_": I}),
        obj({"i_1": N}, patternProperties={"^i_": I}),
        [
            "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/i_1",
            "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/i_1",
            "TYPE_EXTENDED #/properties/i_1",
        ],
    ),
    (
        "property removed, covered by patternProperties",
        obj({"i_1": I}, patternProperties={"^i_": N}),
        obj({}, patternProperties={"^i_": N}),
        [
            "PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/i_1",
            "TYPE_EXTENDED #/properties/i_1",
        ],
    ),
    (
        "property removed, not covered",
        obj({"a": N}, additionalProperties=False),
        obj({}, additionalProperties=S),
        [
            "ADDITIONAL_PROPERTIES_ADDED #/additionalProperties",
            "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/a",
            "TYPE_CHANGED #/properties/a",
        ],
    ),
    (
        "additionalProperties opened",
        obj({}, additionalProperties=False),
        obj({}),
        ["ADDITIONAL_PROPERTIES_ADDED #/additionalProperties"],
    ),
    (
        "additionalProperties closed",
        obj({}),
        obj({}, additionalProperties=False),
        ["ADDITIONAL_PROPERTIES_REMOVED #/additionalProperties"],
    ),
    (
        "additionalProperties narrowed",
        obj({}),
        obj({}, additionalProperties=S),
        ["ADDITIONAL_PROPERTIES_NARROWED #/additionalProperties"],
    ),
    (
        "additionalProperties extended",
        obj({}, additionalProperties=S),
        obj({}),
        ["ADDITIONAL_PROPERTIES_EXTENDED #/additionalProperties"],
    ),
    (
        "additionalProperties schema changed",
        obj({}, additionalProperties=S),
        obj({}, additionalProperties=N),
        ["TYPE_CHANGED #/additionalProperties"],
    ),
    (
        "dependency array added and removed",
        obj({}, dependencies={"a": ["b"]}),
        obj({}, dependencies={"c": ["b"]}),
        ["DEPENDENCY_ARRAY_ADDED #/dependencies/c", "DEPENDENCY_ARRAY_REMOVED #/dependencies/a"],
    ),
    (
        "dependency array narrowed",
        obj({}, dependencies={"a": ["b", "c"]}),
        obj({}, dependencies={"a": ["b"]}),
        ["DEPENDENCY_ARRAY_NARROWED #/dependencies/a"],
    ),
    (
        "dependency array extended",
        obj({}, dependencies={"a": ["b"]}),
        obj({}, dependencies={"a": ["b", "c"]}),
        ["DEPENDENCY_ARRAY_EXTENDED #/dependencies/a"],
    ),
    (
        "dependency schema removed",
        obj({}, dependencies={"a": obj({"b": S})}),
        obj({}),
        ["DEPENDENCY_SCHEMA_REMOVED #/dependencies/a"],
    ),
    (
        "dependency schema added",
        obj({}),
        obj({}, dependencies={"a": obj({"b": S})}),
        ["DEPENDENCY_SCHEMA_ADDED #/dependencies/a"],
    ),
    (
        "dependency schema changed",
        obj({}, dependencies={"a": S}),
        obj({}, dependencies={"a": N}),
        ["TYPE_CHANGED #/dependencies/a"],
    ),
    (
        "maxProperties down",
        obj({}, maxProperties=3),
        obj({}, maxProperties=2),
        ["MAX_PROPERTIES_DECREASED #/maxProperties"],
    ),
    (
        "minProperties up",
        obj({}, minProperties=1),
        obj({}, minProperties=2),
        ["MIN_PROPERTIES_INCREASED #/minProperties"],
    ),
    ("minProperties removed", obj({}, minProperties=1), obj({}), ["MIN_PROPERTIES_REMOVED #/minProperties"]),
    ("items added", {"type": "array"}, {"type": "array", "items": S}, ["SCHEMA_ADDED #/items"]),
    ("items removed", {"type": "array", "items": S}, {"type": "array"}, ["SCHEMA_REMOVED #/items"]),
    ("items changed", {"type": "array", "items": S}, {"type": "array", "items": N}, ["TYPE_CHANGED #/items"]),
    (
        "tuple item removed from an open model",
        {"type": "array", "items": [S, N]},
        {"type": "array", "items": [S]},
        ["ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL #/items/1"],
    ),
    (
        "tuple item added to an open model",
        {"type": "array", "items": [S]},
        {"type": "array", "items": [S, N]},
        ["ITEM_ADDED_TO_OPEN_CONTENT_MODEL #/items/1"],
    ),
    (
        "empty tuple item added to an open model",
        {"type": "array", "items": [S]},
        {"type": "array", "items": [S, {}]},
        ["ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL #/items/1"],
    ),
    (
        "tuple item added to a closed model",
        {"type": "array", "items": [S], "additionalItems": False},
        {"type": "array", "items": [S, N], "additionalItems": False},
        ["ITEM_ADDED_TO_CLOSED_CONTENT_MODEL #/items/1"],
    ),
    (
        "tuple item removed from a closed model",
        {"type": "array", "items": [S, N], "additionalItems": False},
        {"type": "array", "items": [S], "additionalItems": False},
        ["ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL #/items/1"],
    ),
    (
        "tuple item added, covered",
        {"type": "array", "items": [S], "additionalItems": N},
        {"type": "array", "items": [S, N], "additionalItems": N},
        ["ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/items/1"],
    ),
    (
        "tuple item removed, not covered",
        {"type": "array", "items": [S, S], "additionalItems": N},
        {"type": "array", "items": [S], "additionalItems": N},
        ["ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/items/1", "TYPE_CHANGED #/items/1"],
    ),
    (
        "tuple item changed",
        {"type": "array", "items": [S]},
        {"type": "array", "items": [N]},
        ["TYPE_CHANGED #/items/0"],
    ),
    (
        "additionalItems closed",
        {"type": "array", "items": [S]},
        {"type": "array", "items": [S], "additionalItems": False},
        ["ADDITIONAL_ITEMS_REMOVED #/additionalItems"],
    ),
    (
        "additionalItems narrowed",
        {"type": "array", "items": [S]},
        {"type": "array", "items": [S], "additionalItems": N},
        ["ADDITIONAL_ITEMS_NARROWED #/additionalItems"],
    ),
    (
        "maxItems down",
        {"type": "array", "maxItems": 2},
        {"type": "array", "maxItems": 1},
        ["MAX_ITEMS_DECREASED #/maxItems"],
    ),
    ("minItems added", {"type": "array"}, {"type": "array", "minItems": 1}, ["MIN_ITEMS_ADDED #/minItems"]),
    (
        "uniqueItems added",
        {"type": "array"},
        {"type": "array", "uniqueItems": True},
        ["UNIQUE_ITEMS_ADDED #/uniqueItems"],
    ),
    (
        "uniqueItems removed",
        {"type": "array", "uniqueItems": True},
        {"type": "array"},
        ["UNIQUE_ITEMS_REMOVED #/uniqueItems"],
    ),
    (
        "$ref followed",
        {"type": "array", "items": {"$ref": "#/definitions/x"}, "definitions": {"x": S}},
        {"type": "array", "items": {"$ref": "#/definitions/x"}, "definitions": {"x": N}},
        ["TYPE_CHANGED #/items"],
    ),
    ("into a $ref", obj({"a": S}), obj({"a": {"$ref": "#/definitions/s"}}, definitions={"s": S}), []),
    ("recursive $ref, same", obj({"next": {"$ref": "#"}, "v": S}), obj({"next": {"$ref": "#"}, "v": S}), []),
    (
        "recursive $ref, changed",
        obj({"next": {"$ref": "#"}, "v": S}),
        obj({"next": {"$ref": "#"}, "v": N}),
        ["TYPE_CHANGED #/properties/next/properties/v", "TYPE_CHANGED #/properties/v"],
    ),
    (
        "2020-12 prefixItems added, closed",
        {"$schema": D2020, "type": "array", "prefixItems": [S], "items": False},
        {"$schema": D2020, "type": "array", "prefixItems": [S, N], "items": False},
        ["ITEM_ADDED_TO_CLOSED_CONTENT_MODEL #/items/1"],
    ),
    (
        "2020-12 unevaluatedProperties closes",
        {"$schema": D2020, **obj({})},
        {"$schema": D2020, **obj({}), "unevaluatedProperties": False},
        ["UNEVALUATED_PROPERTIES_REMOVED #/unevaluatedProperties"],
    ),
    (
        "2020-12 unevaluatedProperties covers an added property",
        {"$schema": D2020, **obj({}), "unevaluatedProperties": S},
        {"$schema": D2020, **obj({"b": S}), "unevaluatedProperties": S},
        [
            "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/b",
            "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/b",
        ],
    ),
    (
        "2020-12 dependentRequired narrowed",
        {"$schema": D2020, **obj({}), "dependentRequired": {"a": ["b", "c"]}},
        {"$schema": D2020, **obj({}), "dependentRequired": {"a": ["b"]}},
        ["DEPENDENCY_ARRAY_NARROWED #/dependencies/a"],
    ),
    (
        "2020-12 minContains up",
        {"$schema": D2020, "type": "array", "contains": S, "minContains": 1},
        {"$schema": D2020, "type": "array", "contains": S, "minContains": 2},
        ["MIN_CONTAINS_INCREASED #/minContains"],
    ),
]


@pytest.mark.parametrize(("what", "original", "update", "expected"), CASES, ids=[c[0] for c in CASES])
def test_confluent_differences(what: str, original: Any, update: Any, expected: list[str]) -> None:
    assert diff(original, update) == sorted(expected)
    # BACKWARD: the update reads the original's data iff every difference is compatible
    broken = [e for e in expected if e.split()[0] not in COMPATIBLE_CHANGES]
    problems = json_reads(load(update), load(original))
    assert sorted(problems) == sorted(" at ".join(e.split(" ", 1)) for e in broken)


def test_problems_name_the_rule_and_the_path() -> None:
    old = load(obj({"age": N}))
    new = load(obj({"age": I}))
    assert json_reads(new, old) == ["TYPE_NARROWED at #/properties/age"]
    assert json_reads(old, new) == []  # FORWARD: the old schema reads integers


def test_parse_canonical_and_normalized() -> None:
    spaced = '{ "type": "object",\n  "properties": {"b": {"type": "string"}, "a": {"type": "number"}} }'
    canonical, _ = parse_json(spaced, [], False)
    assert canonical == '{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"number"}}}'
    normalized, _ = parse_json(spaced, [], True)
    assert normalized == '{"properties":{"a":{"type":"number"},"b":{"type":"string"}},"type":"object"}'
    assert parse_json('{"title": "caf\\u00e9"}', [], False)[0] == '{"title":"café"}'
    assert "JSON" in supported_types()
    assert parse("JSON", spaced).canonical == canonical


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("{nope", "not JSON"),
        ("[1]", "a schema is a JSON object or a boolean"),
        ('{"properties": {"age": {"type": "nope"}}}', "at #/properties/age/type"),
        ('{"type": "string", "minLength": -1}', "at #/minLength"),
        # draft-04 has no boolean schemas; 2020-12 checks its own vocabulary
        (
            '{"$schema": "http://json-schema.org/draft-04/schema#", "properties": {"a": true}}',
            "at #/properties/a",
        ),
        (json.dumps({"$schema": D2020, "prefixItems": {"type": "string"}}), "at #/prefixItems"),
        ('{"properties": {"c": {"$ref": "customer.schema.json"}}}', "'customer.schema.json'"),
        ('{"$ref": "#/definitions/missing"}', "'#/definitions/missing'"),
    ],
)
def test_invalid_schemas_say_what_and_where(text: str, reason: str) -> None:
    with pytest.raises(SchemaProblem) as exc:
        parse_json(text, [], False)
    assert reason in str(exc.value)


def test_drafts_accepted() -> None:
    for dialect in (
        "http://json-schema.org/draft-04/schema#",
        "http://json-schema.org/draft-06/schema#",
        "http://json-schema.org/draft-07/schema#",
        "https://json-schema.org/draft/2019-09/schema",
        D2020,
    ):
        parse_json(json.dumps({"$schema": dialect, **obj({"a": S}, required=["a"])}), [], False)


def test_references_by_name_and_relative_to_the_id() -> None:
    customer = obj({"name": S}, required=["name"])
    order = obj({"customer": {"$ref": "customer.schema.json"}})
    parsed = load(order, [("customer.schema.json", customer)])
    changed = load(order, [("customer.schema.json", obj({"name": N}, required=["name"]))])
    assert json_reads(changed, parsed) == ["TYPE_CHANGED at #/properties/customer/properties/name"]
    # with an $id, a reference name is also taken relative to it (as a $ref would be)
    with_id = {"$id": "https://example.com/schemas/order.json", **order}
    load(with_id, [("customer.schema.json", customer)])
    # a fragment into a referenced schema, and a referenced schema referring to another
    address = obj({"city": S})
    customer2 = obj({"address": {"$ref": "address.json"}}, definitions={"id": S})
    deep = obj({"c": {"$ref": "customer.json"}, "i": {"$ref": "customer.json#/definitions/id"}})
    load(deep, [("address.json", address), ("customer.json", customer2)])


# --- properties -------------------------------------------------------------------

_leaf = st.sampled_from(
    [
        S,
        N,
        I,
        {"type": "boolean"},
        {"type": "null"},
        {**S, "maxLength": 5},
        {**N, "minimum": 0},
        {"enum": ["a", 1]},
    ]
)


def _grow(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    names = st.sampled_from(["a", "b", "c"])
    return st.one_of(
        st.builds(
            lambda props, closed, req: obj(
                props, required=sorted(set(req) & set(props)), additionalProperties=not closed
            ),
            st.dictionaries(names, children, max_size=3),
            st.booleans(),
            st.lists(names, max_size=2),
        ),
        st.builds(lambda items: {"type": "array", "items": items}, children),
        st.builds(lambda subs: {"anyOf": subs}, st.lists(children, min_size=1, max_size=3)),
        st.builds(lambda sub: {"not": sub}, children),
    )


schemas: st.SearchStrategy[Any] = st.recursive(_leaf, _grow, max_leaves=8)


@settings(max_examples=150, deadline=None)
@given(schemas)
def test_a_schema_is_compatible_with_itself(schema: Any) -> None:
    # (Confluent reports an unchanged "not" as NOT_TYPE_NARROWED, a compatible change)
    assert json_reads(load(schema), load(schema)) == []
    assert all(kind in COMPATIBLE_CHANGES for kind, _ in differences(load(schema).root, load(schema).root))


def _not_a_union(schema: Any) -> bool:
    return "anyOf" not in schema


@settings(max_examples=150, deadline=None)
@given(schemas.filter(_not_a_union), schemas)
def test_widening_to_a_union_is_backward_compatible(schema: Any, other: Any) -> None:
    # (a union that is widened must keep each member matched one to one, so Confluent
    # refuses nesting an old union inside a new one: only non-unions are widened here)
    old, new = load(schema), load({"anyOf": [schema, other]})
    assert json_reads(new, old) == []


@settings(max_examples=100, deadline=None)
@given(schemas, st.sampled_from(["a", "b", "c"]))
def test_an_optional_property_added_to_a_closed_object_is_backward_compatible(schema: Any, name: str) -> None:
    old = obj({}, additionalProperties=False)
    new = obj({name: schema}, additionalProperties=False)
    assert json_reads(load(new), load(old)) == []
