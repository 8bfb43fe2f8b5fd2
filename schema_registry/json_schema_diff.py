"""Confluent's JSON Schema compatibility rules: the differences between an original
schema and its update, each of a named type at a JSON path, and which of those types
are compatible changes (Confluent's ``json-schema-provider`` ``diff`` package:
``SchemaDiff``, ``Difference.Type``, ``COMPATIBLE_CHANGES_STRICT``).

The rules work on a typed model of a schema (``json_schema_model.Node``), the shape Confluent's rules see
after loading (one kind per node: string, number, object, array, enum, const, combined
(allOf/anyOf/oneOf), not, a ``$ref``, the empty schema, ``true``, ``false``...); building
it from JSON is ``json_schemas``' job. BACKWARD compatibility of an update is
``incompatible(original, update)`` being empty. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from schema_registry.json_schema_model import Node

__all__ = ["COMPATIBLE_CHANGES", "Node", "differences", "incompatible"]

# The changes Confluent's default (STRICT) policy accepts as backward compatible.
COMPATIBLE_CHANGES: frozenset[str] = frozenset(
    """ID_CHANGED DESCRIPTION_CHANGED TITLE_CHANGED DEFAULT_CHANGED SCHEMA_REMOVED TYPE_EXTENDED
    MAX_LENGTH_INCREASED MAX_LENGTH_REMOVED MIN_LENGTH_DECREASED MIN_LENGTH_REMOVED PATTERN_REMOVED
    MAXIMUM_INCREASED MAXIMUM_REMOVED MINIMUM_DECREASED MINIMUM_REMOVED EXCLUSIVE_MAXIMUM_INCREASED
    EXCLUSIVE_MAXIMUM_REMOVED EXCLUSIVE_MINIMUM_DECREASED EXCLUSIVE_MINIMUM_REMOVED
    MULTIPLE_OF_REDUCED MULTIPLE_OF_REMOVED REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED
    REQUIRED_ATTRIBUTE_REMOVED DEPENDENCY_ARRAY_NARROWED DEPENDENCY_ARRAY_REMOVED
    DEPENDENCY_SCHEMA_REMOVED MAX_PROPERTIES_INCREASED MAX_PROPERTIES_REMOVED
    MIN_PROPERTIES_DECREASED MIN_PROPERTIES_REMOVED ADDITIONAL_PROPERTIES_ADDED
    ADDITIONAL_PROPERTIES_EXTENDED UNEVALUATED_PROPERTIES_ADDED UNEVALUATED_PROPERTIES_EXTENDED
    PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL
    REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL
    OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL
    PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL
    PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
    PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL MAX_ITEMS_INCREASED
    MAX_ITEMS_REMOVED MIN_ITEMS_DECREASED MIN_ITEMS_REMOVED MAX_CONTAINS_INCREASED
    MAX_CONTAINS_REMOVED MIN_CONTAINS_DECREASED MIN_CONTAINS_REMOVED UNIQUE_ITEMS_REMOVED
    ADDITIONAL_ITEMS_ADDED ADDITIONAL_ITEMS_EXTENDED UNEVALUATED_ITEMS_ADDED
    UNEVALUATED_ITEMS_EXTENDED ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL
    ITEM_ADDED_TO_CLOSED_CONTENT_MODEL ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL
    ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
    ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL ENUM_ARRAY_EXTENDED
    COMBINED_TYPE_EXTENDED PRODUCT_TYPE_NARROWED SUM_TYPE_EXTENDED NOT_TYPE_NARROWED""".split()  # noqa: SIM905
)


Difference = tuple[str, str]  # (type, JSON path such as "#/properties/age")
_Pair = tuple[int, int]


class _Run:
    """State shared by one comparison: results per (original, update) pair (relative
    to the pair), the pairs being compared (a pair met again is a recursive cycle,
    assumed compatible), and the pairs a previous pass found incompatible."""

    def __init__(self, seed: dict[_Pair, list[Difference]]) -> None:
        self.memo: dict[_Pair, list[Difference]] = {}
        self.in_progress: set[_Pair] = set()
        self.seed = seed
        self.optimistic = False


class _Ctx:
    def __init__(self, run: _Run, path: list[str]) -> None:
        self.run = run
        self.path = path
        self.diffs: list[Difference] = []

    def sub(self) -> _Ctx:
        return _Ctx(self.run, list(self.path))

    def at(self, *segments: str) -> _Ctx:
        """A context at a deeper path whose differences land in this one."""
        child = _Ctx(self.run, [*self.path, *segments])
        child.diffs = self.diffs
        return child

    def add(self, kind: str, *segments: str) -> None:
        self.diffs.append((kind, "#/" + "/".join([*self.path, *segments])))

    def compatible(self) -> bool:
        return all(kind in COMPATIBLE_CHANGES for kind, _ in self.diffs)


def differences(original: Node, update: Node) -> list[Difference]:
    """Every difference from ``original`` to ``update``, compatible or not.

    Recursive schemas: a cycle is first assumed compatible; passes repeat, each
    knowing the pairs the last found incompatible, until that set stops growing."""
    seed: dict[_Pair, list[Difference]] = {}
    while True:
        run = _Run(seed)
        ctx = _Ctx(run, [])
        _compare(ctx, original, update)
        found = {
            pair: diffs
            for pair, diffs in run.memo.items()
            if any(kind not in COMPATIBLE_CHANGES for kind, _ in diffs)
        }
        if not run.optimistic or found.keys() == seed.keys():
            return ctx.diffs
        seed = found


def incompatible(original: Node, update: Node) -> list[Difference]:
    """The differences that make ``update`` unable to read data written with ``original``."""
    out: list[Difference] = []
    for diff in differences(original, update):
        if diff[0] not in COMPATIBLE_CHANGES and diff not in out:
            out.append(diff)
    return out


def _compare(ctx: _Ctx, original: Node | None, update: Node | None) -> None:
    if original is None and update is None:
        return
    if original is None:
        ctx.add("SCHEMA_ADDED")
        return
    if update is None:
        ctx.add("SCHEMA_REMOVED")
        return
    original, update = original.referred(), update.referred()
    run = ctx.run
    pair = (id(original), id(update))
    relative = run.memo.get(pair)
    if relative is None:
        if pair in run.in_progress:
            seeded = run.seed.get(pair)
            if seeded is None:
                run.optimistic = True
                seeded = []
            relative = seeded
        else:
            run.in_progress.add(pair)
            try:
                sub = _Ctx(run, [])
                _compare_types(sub, original, update)
                relative = list(sub.diffs)
                run.memo[pair] = relative
            finally:
                run.in_progress.discard(pair)
    prefix = "#/" + "/".join(ctx.path)
    for kind, path in relative:
        if not ctx.path:
            ctx.diffs.append((kind, path))
        else:
            ctx.diffs.append((kind, prefix if len(path) <= 2 else prefix + "/" + path[2:]))


def _same_kind(a: Node, b: Node) -> bool:
    return a.kind == b.kind


def _compare_types(ctx: _Ctx, original: Node, update: Node) -> None:
    # A non-combined schema against a combined one: a singleton union is its member; a
    # union (anyOf/oneOf) update extends the type if one branch reads the original; an
    # allOf original narrows to the update if one of its members does.
    if original.kind != "combined" and update.kind == "combined":
        if len(update.subschemas) == 1:
            sub = ctx.sub()
            _compare(sub, original, update.subschemas[0])
            if sub.compatible():
                ctx.diffs += sub.diffs
                return
        elif update.criterion in ("anyOf", "oneOf"):
            for branch in update.subschemas:
                sub = ctx.sub()
                _compare(sub, original, branch)
                if sub.compatible():
                    ctx.diffs += sub.diffs
                    ctx.add("SUM_TYPE_EXTENDED")
                    return
    elif original.kind == "combined" and update.kind != "combined":
        if len(original.subschemas) == 1:
            sub = ctx.sub()
            _compare(sub, original.subschemas[0], update)
            if sub.compatible():
                ctx.diffs += sub.diffs
                return
        elif original.criterion == "allOf":
            for member in original.subschemas:
                sub = ctx.sub()
                _compare(sub, member, update)
                if sub.compatible():
                    ctx.diffs += sub.diffs
                    ctx.add("PRODUCT_TYPE_NARROWED")
                    return
    if not _same_kind(original, update):
        if original.kind == "false" or update.is_empty:
            return
        if original.connect_type == "bytes" and update.connect_type == "bytes":
            return  # Confluent lets two Connect bytes encodings follow each other
        ctx.add("TYPE_CHANGED")
        return
    if original.id != update.id:
        ctx.add("ID_CHANGED")
    if original.title != update.title:
        ctx.add("TITLE_CHANGED")
    if original.description != update.description:
        ctx.add("DESCRIPTION_CHANGED")
    if original.default != update.default:
        ctx.add("DEFAULT_CHANGED")
    compare = _BY_KIND.get(original.kind)
    if compare is not None:
        compare(ctx, original, update)


def _bound(ctx: _Ctx, name: str, prefix: str, old: Any, new: Any) -> None:
    """A bound keyword: added, removed, increased or decreased (``prefix`` names the type)."""
    if old == new:
        return
    if old is None:
        ctx.add(f"{prefix}_ADDED", name)
    elif new is None:
        ctx.add(f"{prefix}_REMOVED", name)
    elif old < new:
        ctx.add(f"{prefix}_INCREASED", name)
    elif old > new:
        ctx.add(f"{prefix}_DECREASED", name)


def _strings(ctx: _Ctx, original: Node, update: Node) -> None:
    _bound(ctx, "maxLength", "MAX_LENGTH", original.max_length, update.max_length)
    _bound(ctx, "minLength", "MIN_LENGTH", original.min_length, update.min_length)
    if original.pattern is None and update.pattern is not None:
        ctx.add("PATTERN_ADDED", "pattern")
    elif original.pattern is not None and update.pattern is None:
        ctx.add("PATTERN_REMOVED", "pattern")
    elif original.pattern != update.pattern:
        ctx.add("PATTERN_CHANGED", "pattern")


def _numbers(ctx: _Ctx, original: Node, update: Node) -> None:
    _bound(ctx, "maximum", "MAXIMUM", original.maximum, update.maximum)
    _bound(ctx, "minimum", "MINIMUM", original.minimum, update.minimum)
    _bound(ctx, "exclusiveMaximum", "EXCLUSIVE_MAXIMUM", original.exclusive_maximum, update.exclusive_maximum)
    _bound(ctx, "exclusiveMinimum", "EXCLUSIVE_MINIMUM", original.exclusive_minimum, update.exclusive_minimum)
    old, new = original.multiple_of, update.multiple_of
    if old != new:
        if old is None:
            ctx.add("MULTIPLE_OF_ADDED", "multipleOf")
        elif new is None:
            ctx.add("MULTIPLE_OF_REMOVED", "multipleOf")
        elif old != 0 and new % old == 0:
            ctx.add("MULTIPLE_OF_EXPANDED", "multipleOf")
        elif new != 0 and old % new == 0:
            ctx.add("MULTIPLE_OF_REDUCED", "multipleOf")
        else:
            ctx.add("MULTIPLE_OF_CHANGED", "multipleOf")
    if original.integer != update.integer:
        ctx.add("TYPE_EXTENDED" if original.integer else "TYPE_NARROWED")


def _consts(ctx: _Ctx, original: Node, update: Node) -> None:
    if original.values != update.values:
        ctx.add("ENUM_ARRAY_CHANGED", "const")


def _enums(ctx: _Ctx, original: Node, update: Node) -> None:
    old, new = original.values, update.values
    if old != new:
        if new >= old:
            ctx.add("ENUM_ARRAY_EXTENDED", "enum")
        elif old >= new:
            ctx.add("ENUM_ARRAY_NARROWED", "enum")
        else:
            ctx.add("ENUM_ARRAY_CHANGED", "enum")


def _nots(ctx: _Ctx, original: Node, update: Node) -> None:
    # What must not match may grow, not shrink: compared the other way round.
    sub = ctx.at("not").sub()
    _compare(sub, update.negated, original.negated)
    ctx.add("NOT_TYPE_NARROWED" if sub.compatible() else "NOT_TYPE_EXTENDED", "not")


def _distinct(nodes: list[Node]) -> list[Node]:
    seen: dict[str, Node] = {}
    for node in nodes:
        seen.setdefault(node.key, node)
    return list(seen.values())


def _combined(ctx: _Ctx, original: Node, update: Node) -> None:
    old_crit, new_crit = original.criterion, update.criterion
    if old_crit != new_crit:
        single_old, single_new = len(original.subschemas) == 1, len(update.subschemas) == 1
        if (
            new_crit == "anyOf"
            or (single_old and single_new)
            or (single_old and new_crit == "oneOf")
            or (single_new and old_crit == "allOf")
        ):
            ctx.add("COMBINED_TYPE_EXTENDED")
        else:
            ctx.add("COMBINED_TYPE_CHANGED")
            return
    olds, news = _distinct(original.subschemas), _distinct(update.subschemas)
    if len(olds) < len(news):
        ctx.add("PRODUCT_TYPE_EXTENDED" if new_crit == "allOf" else "SUM_TYPE_EXTENDED")
    elif len(olds) > len(news):
        ctx.add("SUM_TYPE_NARROWED" if old_crit in ("anyOf", "oneOf") else "PRODUCT_TYPE_NARROWED")
    # Each original member is paired with an update member that reads it; a maximum
    # matching must cover the smaller side.
    edges: dict[tuple[int, int], list[Difference]] = {}
    for i, old in enumerate(olds):
        for j, new in enumerate(news):
            sub = ctx.at(f"{old_crit}/{i}").sub()
            _compare(sub, old, new)
            if sub.compatible():
                edges[(i, j)] = sub.diffs
    matching = _maximum_matching(len(olds), len(news), set(edges))
    for i, j in sorted(matching.items()):
        ctx.diffs += edges[(i, j)]
    if len(matching) < min(len(olds), len(news)):
        ctx.add("COMBINED_TYPE_SUBSCHEMAS_CHANGED")


def _maximum_matching(left: int, right: int, edges: set[tuple[int, int]]) -> dict[int, int]:
    """A maximum bipartite matching (augmenting paths), as left index -> right index."""
    match_right: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in range(right):
            if (i, j) in edges and j not in seen:
                seen.add(j)
                if j not in match_right or augment(match_right[j], seen):
                    match_right[j] = i
                    return True
        return False

    for i in range(left):
        augment(i, set())
    return {i: j for j, i in match_right.items()}


def _object_open(node: Node) -> bool:
    """Open content model: any extra property is allowed, with any value."""
    return (
        node.additional_properties
        and node.additional_properties_schema is None
        and not node.pattern_properties
        and (node.unevaluated_properties is None or node.unevaluated_properties.is_empty)
    )


def _object_partial(node: Node, name: str) -> Node | None:
    """The schema a partially open content model gives an extra property ``name``."""
    for pattern, schema in node.pattern_properties:
        if re.search(pattern, name):
            return schema
    if node.additional_properties_schema is not None:
        return node.additional_properties_schema
    if node.additional_properties and node.additional_properties_schema is None:
        uneval = node.unevaluated_properties
        if uneval is not None and uneval.kind != "false" and not uneval.is_empty:
            return uneval
    return None


def _objects(ctx: _Ctx, original: Node, update: Node) -> None:
    for name in original.properties:
        if name in update.properties:
            was, now = name in original.required, name in update.required
            if was and not now:
                ctx.add("REQUIRED_ATTRIBUTE_REMOVED", "required", name)
            elif now and not was:
                with_default = update.properties[name].default is not None
                kind = "REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED" if with_default else "REQUIRED_ATTRIBUTE_ADDED"
                ctx.add(kind, "required", name)
    for name in {**original.properties, **update.properties}:
        _property(ctx.at("properties", name), original, update, name)
    deps = ctx.at("dependencies")
    for name in {**original.property_dependencies, **update.property_dependencies}:
        old_deps = original.property_dependencies.get(name)
        new_deps = update.property_dependencies.get(name)
        if new_deps is None:
            deps.add("DEPENDENCY_ARRAY_REMOVED", name)
        elif old_deps is None:
            deps.add("DEPENDENCY_ARRAY_ADDED", name)
        elif old_deps != new_deps:
            if new_deps >= old_deps:
                deps.add("DEPENDENCY_ARRAY_EXTENDED", name)
            elif old_deps >= new_deps:
                deps.add("DEPENDENCY_ARRAY_NARROWED", name)
            else:
                deps.add("DEPENDENCY_ARRAY_CHANGED", name)
    for name in {**original.schema_dependencies, **update.schema_dependencies}:
        old_schema = original.schema_dependencies.get(name)
        new_schema = update.schema_dependencies.get(name)
        if new_schema is None:
            deps.add("DEPENDENCY_SCHEMA_REMOVED", name)
        elif old_schema is None:
            deps.add("DEPENDENCY_SCHEMA_ADDED", name)
        else:
            _compare(deps.at(name), old_schema, new_schema)
    extra = ctx.at("additionalProperties")
    if original.additional_properties != update.additional_properties:
        extra.add(
            "ADDITIONAL_PROPERTIES_ADDED" if update.additional_properties else "ADDITIONAL_PROPERTIES_REMOVED"
        )
    elif original.additional_properties_schema is None and update.additional_properties_schema is not None:
        extra.add("ADDITIONAL_PROPERTIES_NARROWED")
    elif update.additional_properties_schema is None and original.additional_properties_schema is not None:
        extra.add("ADDITIONAL_PROPERTIES_EXTENDED")
    else:
        _compare(extra, original.additional_properties_schema, update.additional_properties_schema)
    _unevaluated(
        ctx,
        "unevaluatedProperties",
        "UNEVALUATED_PROPERTIES",
        original.unevaluated_properties,
        update.unevaluated_properties,
    )
    _bound(ctx, "maxProperties", "MAX_PROPERTIES", original.max_properties, update.max_properties)
    _bound(ctx, "minProperties", "MIN_PROPERTIES", original.min_properties, update.min_properties)


def _property(ctx: _Ctx, original: Node, update: Node, name: str) -> None:
    old, new = original.properties.get(name), update.properties.get(name)
    if new is None:
        assert old is not None
        # Removing a property is safe only where the update still accepts it.
        if _object_open(update):
            ctx.add("PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL")
            return
        partial = _object_partial(update, name)
        if partial is not None:
            sub = ctx.sub()
            _compare(sub, old, partial)
            ctx.diffs += sub.diffs
            ctx.add(
                "PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
                if sub.compatible()
                else "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
            )
        elif old.kind == "false":
            ctx.add("PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL")
        else:
            ctx.add("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL")
    elif old is None:
        # Adding a property is safe only where the original did not accept any value for it.
        if _object_open(original):
            if new.is_empty:
                ctx.add("PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL")
            elif name in update.required:
                ctx.add(
                    "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL"
                    if new.default is not None
                    else "REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL"
                )
            else:
                ctx.add("OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL")
            return
        partial = _object_partial(original, name)
        if partial is not None:
            sub = ctx.sub()
            _compare(sub, partial, new)
            ctx.diffs += sub.diffs
            ctx.add(
                "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
                if sub.compatible()
                else "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
            )
        if name in update.required:
            ctx.add(
                "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL"
                if new.default is not None
                else "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL"
            )
        else:
            ctx.add("OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL")
    else:
        _compare(ctx, old, new)


def _unevaluated(ctx: _Ctx, name: str, prefix: str, old: Node | None, new: Node | None) -> None:
    """unevaluatedProperties/unevaluatedItems (2019-09 and later): ``false`` closes the
    model, an empty schema opens it, another schema opens it partially."""
    if old is None and new is None:
        return
    at = ctx.at(name)
    if old is None:
        assert new is not None
        at.add(f"{prefix}_REMOVED" if new.kind == "false" else f"{prefix}_NARROWED")
    elif new is None:
        at.add(f"{prefix}_ADDED" if old.kind == "false" else f"{prefix}_EXTENDED")
    elif old.kind == "false" and new.kind != "false":
        at.add(f"{prefix}_ADDED")
    elif old.kind != "false" and new.kind == "false":
        at.add(f"{prefix}_REMOVED")
    elif old.is_empty and not new.is_empty:
        at.add(f"{prefix}_NARROWED")
    elif not old.is_empty and new.is_empty:
        at.add(f"{prefix}_EXTENDED")
    else:
        _compare(at, old, new)


def _array_open(node: Node) -> bool:
    return (
        node.additional_items
        and node.additional_items_schema is None
        and (node.unevaluated_items is None or node.unevaluated_items.is_empty)
    )


def _array_partial(node: Node) -> Node | None:
    if node.additional_items_schema is not None:
        return node.additional_items_schema
    if node.additional_items:
        uneval = node.unevaluated_items
        if uneval is not None and uneval.kind != "false" and not uneval.is_empty:
            return uneval
    return None


def _arrays(ctx: _Ctx, original: Node, update: Node) -> None:
    _compare(ctx.at("items"), original.all_items, update.all_items)
    olds, news = original.item_schemas, update.item_schemas
    for index in range(max(len(olds), len(news))):
        at = ctx.at(f"items/{index}")
        if index < len(olds) and index < len(news):
            _compare(at, olds[index], news[index])
        elif index < len(olds):
            _item_removed(at, olds[index], update)
        else:
            _item_added(at, news[index], original)
    extra = ctx.at("additionalItems")
    if original.additional_items != update.additional_items:
        extra.add("ADDITIONAL_ITEMS_REMOVED" if original.additional_items else "ADDITIONAL_ITEMS_ADDED")
    elif original.additional_items_schema is None and update.additional_items_schema is not None:
        extra.add("ADDITIONAL_ITEMS_NARROWED")
    elif update.additional_items_schema is None and original.additional_items_schema is not None:
        extra.add("ADDITIONAL_ITEMS_EXTENDED")
    else:
        _compare(extra, original.additional_items_schema, update.additional_items_schema)
    _unevaluated(
        ctx, "unevaluatedItems", "UNEVALUATED_ITEMS", original.unevaluated_items, update.unevaluated_items
    )
    _bound(ctx, "maxItems", "MAX_ITEMS", original.max_items, update.max_items)
    _bound(ctx, "minItems", "MIN_ITEMS", original.min_items, update.min_items)
    if original.unique_items != update.unique_items:
        ctx.add("UNIQUE_ITEMS_REMOVED" if original.unique_items else "UNIQUE_ITEMS_ADDED", "uniqueItems")
    _bound(ctx, "maxContains", "MAX_CONTAINS", original.max_contains, update.max_contains)
    _bound(ctx, "minContains", "MIN_CONTAINS", original.min_contains, update.min_contains)


def _item_removed(ctx: _Ctx, old: Node, update: Node) -> None:
    if _array_open(update):
        ctx.add("ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL")
        return
    partial = _array_partial(update)
    if partial is not None:
        sub = ctx.sub()
        _compare(sub, old, partial)
        ctx.diffs += sub.diffs
        ctx.add(
            "ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
            if sub.compatible()
            else "ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
        )
    elif old.kind == "false":
        ctx.add("ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL")
    else:
        ctx.add("ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL")


def _item_added(ctx: _Ctx, new: Node, original: Node) -> None:
    if _array_open(original):
        ctx.add(
            "ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL"
            if new.is_empty
            else "ITEM_ADDED_TO_OPEN_CONTENT_MODEL"
        )
        return
    partial = _array_partial(original)
    if partial is not None:
        sub = ctx.sub()
        _compare(sub, partial, new)
        ctx.diffs += sub.diffs
        ctx.add(
            "ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
            if sub.compatible()
            else "ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
        )
    else:
        ctx.add("ITEM_ADDED_TO_CLOSED_CONTENT_MODEL")


_BY_KIND: dict[str, Callable[[_Ctx, Node, Node], None]] = {
    "string": _strings,
    "number": _numbers,
    "const": _consts,
    "enum": _enums,
    "combined": _combined,
    "not": _nots,
    "object": _objects,
    "array": _arrays,
}
