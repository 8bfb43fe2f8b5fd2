"""The typed model of a JSON schema that Confluent's JSON Schema compatibility rules
(``json_schema_diff``) compare: one kind per node, as Confluent's loader types a schema
(string, number, boolean, null, object, array, enum, const, combined (allOf/anyOf/oneOf),
not, a ``$ref``, the empty schema, ``true``, ``false``) with the keywords of that kind.
``json_schemas`` builds it from JSON. Pure data."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal

__all__ = ["Node"]


@dataclass(eq=False)
class Node:
    """One schema as the rules see it; identity matters (a ``$ref`` cycle is the same
    node met again), so nodes compare by identity."""

    kind: str  # empty true false string number boolean null object array enum const combined not ref
    key: str = ""  # the node's JSON (sorted keys) with its kind: equal keys = the same subschema
    id: str | None = None
    title: str | None = None
    description: str | None = None
    default: str | None = None  # the default value as JSON; None when there is none
    connect_type: str | None = None
    # string
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    # number
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: float | None = None
    exclusive_maximum: float | None = None
    multiple_of: Decimal | None = None
    integer: bool = False
    # enum (values as JSON) and const
    values: frozenset[str] = frozenset()
    # combined: "allOf" | "anyOf" | "oneOf"
    criterion: str = ""
    subschemas: list[Node] = field(default_factory=list)
    # not
    negated: Node | None = None
    # object
    properties: dict[str, Node] = field(default_factory=dict)
    required: frozenset[str] = frozenset()
    pattern_properties: list[tuple[str, Node]] = field(default_factory=list)
    additional_properties: bool = True
    additional_properties_schema: Node | None = None
    unevaluated_properties: Node | None = None
    property_dependencies: dict[str, frozenset[str]] = field(default_factory=dict)
    schema_dependencies: dict[str, Node] = field(default_factory=dict)
    min_properties: int | None = None
    max_properties: int | None = None
    # array
    all_items: Node | None = None
    item_schemas: list[Node] = field(default_factory=list)
    additional_items: bool = True
    additional_items_schema: Node | None = None
    unevaluated_items: Node | None = None
    min_items: int | None = None
    max_items: int | None = None
    unique_items: bool = False
    min_contains: int | None = None
    max_contains: int | None = None
    # ref: what it refers to, looked up when first needed (a cycle refers to itself)
    target: Callable[[], Node] | None = None

    @property
    def is_empty(self) -> bool:  # ``true`` is an empty schema too
        return self.kind in ("empty", "true")

    def referred(self) -> Node:
        node = self
        seen: set[int] = set()
        while node.kind == "ref" and node.target is not None and id(node) not in seen:
            seen.add(id(node))
            node = node.target()
        return node
