"""JSON schemas (schemaType ``JSON``): the text must be a JSON Schema valid for its
declared ``$schema`` draft (draft-07 when none is declared, as Confluent's default;
draft-04, -06, -07, 2019-09 and 2020-12 are checked against their metaschema by the
``jsonschema`` package). Referenced schemas are known by their reference name, which is
the URL a ``$ref`` uses (Confluent's convention, e.g. ``"customer.schema.json"``), also
taken relative to the schema's ``$id``; ``$ref``s resolve through the ``referencing``
package and one that names nothing given is an error naming it.

The canonical text is the schema's JSON with no whitespace and its keys as written
(Confluent's ``JsonSchema.canonicalString``); ``normalize`` sorts the keys (its
``normalize``). Compatibility is Confluent's ``SchemaDiff`` (``json_schema_diff``) over a
typed model of each schema built here the way Confluent's loader types it: a ``type``
list is an ``anyOf`` of one schema per type, a schema mixing ``enum``/``const``/``not``/
combinators/a type is an ``allOf`` of each, keywords without a ``type`` imply the types
they constrain.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

import jsonschema
import referencing.jsonschema
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for
from jsonschema_specifications import REGISTRY as METASCHEMAS  # type: ignore[import-untyped]
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable

from schema_registry.json_schema_diff import incompatible
from schema_registry.json_schema_model import Node
from schema_registry.schema_kind import SchemaKind, SchemaProblem

if TYPE_CHECKING:
    # Only for annotations: the package exports no name for its resolver type.
    from referencing._core import Resolver

__all__ = ["JSON", "JsonSchemaParsed", "json_reads", "parse_json"]

_MODERN = (referencing.jsonschema.DRAFT201909, referencing.jsonschema.DRAFT202012)

# Keywords that imply a type when a schema has no "type" (draft-07 and the later additions).
_IMPLIED: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "object",
        frozenset(
            [
                "properties",
                "required",
                "minProperties",
                "maxProperties",
                "dependencies",
                "patternProperties",
                "additionalProperties",
                "propertyNames",
                "dependentRequired",
                "dependentSchemas",
                "unevaluatedProperties",
            ]
        ),
    ),
    (
        "array",
        frozenset(
            [
                "items",
                "additionalItems",
                "minItems",
                "maxItems",
                "uniqueItems",
                "contains",
                "prefixItems",
                "unevaluatedItems",
                "minContains",
                "maxContains",
            ]
        ),
    ),
    ("number", frozenset(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"])),
    ("string", frozenset(["minLength", "maxLength", "pattern", "format"])),
)


@dataclass(frozen=True, slots=True)
class JsonSchemaParsed:
    """A parsed JSON schema: its JSON and its typed model (``json_schema_diff.Node``)."""

    schema: Any
    root: Node


def _dump(value: Any, sort: bool = True) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=sort)


def _pointer(path: Sequence[Any]) -> str:
    return "#/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _count(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


class _Loader:
    """Builds the typed model of one schema; a ``$ref`` is looked up when first
    followed, and a JSON object met again (a cycle through ``$ref``) is the same node."""

    def __init__(self, specification: referencing.Specification[Any]) -> None:
        self.specification = specification
        self.modern = specification in _MODERN
        self.id_keyword = "id" if specification is referencing.jsonschema.DRAFT4 else "$id"
        self.nodes: dict[int, Node] = {}
        self.kept: list[Any] = []  # keeps loaded JSON alive, so that object ids stay unique

    def load(self, raw: Any, resolver: Resolver[Any]) -> Node:
        if raw is True:
            return Node("true", key="true")
        if raw is False:
            return Node("false", key="false")
        if not isinstance(raw, dict):
            raise SchemaProblem(f"{_dump(raw)}: a schema is a JSON object or a boolean")
        known = self.nodes.get(id(raw))
        if known is not None:
            return known
        self.kept.append(raw)
        resolver = resolver.in_subresource(self.specification.create_resource(raw))
        node = self._build(raw, resolver)
        self.nodes[id(raw)] = node
        return node

    def _reference(self, ref: str, resolver: Resolver[Any]) -> Node:
        found: list[Node] = []

        def target() -> Node:
            if not found:
                try:
                    resolved = resolver.lookup(ref)
                except Unresolvable as exc:
                    raise SchemaProblem(
                        f"$ref {ref!r} names no schema given: not among the references "
                        f"and not within the schema ({exc})"
                    ) from None
                found.append(self.load(resolved.contents, resolved.resolver))
            return found[0]

        return Node("ref", key=f"ref:{ref}", target=target)

    def _build(self, raw: dict[str, Any], resolver: Resolver[Any]) -> Node:
        parts: list[Node] = []
        if isinstance(raw.get("$ref"), str):
            reference = self._reference(raw["$ref"], resolver)
            if not self.modern:
                return reference  # before 2019-09 a $ref's siblings are ignored
            parts.append(reference)
        if isinstance(raw.get("enum"), list):
            parts.append(
                Node("enum", key="enum:" + _dump(raw), values=frozenset(_dump(v) for v in raw["enum"]))
            )
        combined = [
            Node(
                "combined",
                key=f"{c}:{_dump(raw)}",
                criterion=c,
                subschemas=[self.load(s, resolver) for s in raw[c]],
            )
            for c in ("allOf", "anyOf", "oneOf")
            if isinstance(raw.get(c), list)
        ]
        if len(combined) == 1:
            parts += combined
        elif combined:
            parts.append(
                Node("combined", key="combined:" + _dump(raw), criterion="allOf", subschemas=combined)
            )
        if "not" in raw:
            parts.append(Node("not", key="not:" + _dump(raw), negated=self.load(raw["not"], resolver)))
        if "const" in raw:
            parts.append(Node("const", key="const:" + _dump(raw), values=frozenset([_dump(raw["const"])])))
        declared = raw.get("type")
        if isinstance(declared, str):
            parts.append(self._typed(declared, raw, resolver))
        elif isinstance(declared, list):
            branches = [self._typed(t, raw, resolver) for t in declared if isinstance(t, str)]
            parts.append(Node("combined", key="type:" + _dump(raw), criterion="anyOf", subschemas=branches))
        else:
            parts += [
                self._typed(kind, raw, resolver, implied=True)
                for kind, words in _IMPLIED
                if words & raw.keys()
            ]
        if not parts:
            node = Node("empty")
        elif len(parts) == 1:
            node = parts[0]
        else:
            node = Node("combined", criterion="allOf", subschemas=parts)
        node.key = _dump(raw)
        ident = raw.get(self.id_keyword)
        node.id = ident if isinstance(ident, str) else None
        node.title = raw.get("title") if isinstance(raw.get("title"), str) else None
        node.description = raw.get("description") if isinstance(raw.get("description"), str) else None
        node.default = _dump(raw["default"]) if "default" in raw else None
        connect_type = raw.get("connect.type")
        node.connect_type = connect_type if isinstance(connect_type, str) else None
        return node

    def _typed(self, kind: str, raw: dict[str, Any], resolver: Resolver[Any], implied: bool = False) -> Node:
        """The schema of one type, from the keywords of that type in ``raw``."""
        key = f"{kind}:{_dump(raw)}"
        if kind == "string":
            return Node(
                "string",
                key=key,
                min_length=_count(raw.get("minLength")),
                max_length=_count(raw.get("maxLength")),
                pattern=raw.get("pattern") if isinstance(raw.get("pattern"), str) else None,
            )
        if kind in ("number", "integer"):
            try:
                multiple = (
                    Decimal(str(raw["multipleOf"])) if _number(raw.get("multipleOf")) is not None else None
                )
            except InvalidOperation:
                multiple = None
            return Node(
                "number",
                key=key,
                integer=kind == "integer",
                minimum=_number(raw.get("minimum")),
                maximum=_number(raw.get("maximum")),
                # draft-04's boolean exclusiveMinimum/Maximum only qualify minimum/maximum
                exclusive_minimum=_number(raw.get("exclusiveMinimum")),
                exclusive_maximum=_number(raw.get("exclusiveMaximum")),
                multiple_of=multiple,
            )
        if kind == "object":
            return self._object(key, raw, resolver)
        if kind == "array":
            return self._array(key, raw, resolver)
        if kind in ("boolean", "null"):
            return Node(kind, key=key)
        return Node("empty", key=key)  # an unknown type name cannot pass the metaschema

    def _object(self, key: str, raw: dict[str, Any], resolver: Resolver[Any]) -> Node:
        node = Node("object", key=key)
        node.properties = {k: self.load(v, resolver) for k, v in (raw.get("properties") or {}).items()}
        required = raw.get("required")
        node.required = (
            frozenset(r for r in required if isinstance(r, str))
            if isinstance(required, list)
            else frozenset()
        )
        node.pattern_properties = [
            (p, self.load(s, resolver)) for p, s in (raw.get("patternProperties") or {}).items()
        ]
        extra = raw.get("additionalProperties")
        if isinstance(extra, bool):
            node.additional_properties = extra
        elif isinstance(extra, dict):
            node.additional_properties_schema = self.load(extra, resolver)
        dependencies = dict(raw.get("dependencies") or {})
        if self.modern:
            dependencies.update(raw.get("dependentRequired") or {})
            dependencies.update(raw.get("dependentSchemas") or {})
            if "unevaluatedProperties" in raw:
                node.unevaluated_properties = self.load(raw["unevaluatedProperties"], resolver)
        for name, dependency in dependencies.items():
            if isinstance(dependency, list):
                node.property_dependencies[name] = frozenset(str(d) for d in dependency)
            else:
                node.schema_dependencies[name] = self.load(dependency, resolver)
        node.min_properties = _count(raw.get("minProperties"))
        node.max_properties = _count(raw.get("maxProperties"))
        return node

    def _array(self, key: str, raw: dict[str, Any], resolver: Resolver[Any]) -> Node:
        node = Node("array", key=key)
        items = raw.get("items")
        extra = raw.get("additionalItems")
        if self.modern and isinstance(raw.get("prefixItems"), list):
            # 2020-12: prefixItems are the positions, items what follows them
            node.item_schemas = [self.load(s, resolver) for s in raw["prefixItems"]]
            extra = items
        elif self.modern and isinstance(items, bool):
            extra = items  # 2020-12 without prefixItems: items true/false opens/closes the array
        elif isinstance(items, list):
            node.item_schemas = [self.load(s, resolver) for s in items]
        elif items is not None:
            node.all_items = self.load(items, resolver)
        if isinstance(extra, bool):
            node.additional_items = extra
        elif isinstance(extra, dict):
            node.additional_items_schema = self.load(extra, resolver)
        if self.modern:
            if "unevaluatedItems" in raw:
                node.unevaluated_items = self.load(raw["unevaluatedItems"], resolver)
            node.min_contains = _count(raw.get("minContains"))
            node.max_contains = _count(raw.get("maxContains"))
        node.min_items = _count(raw.get("minItems"))
        node.max_items = _count(raw.get("maxItems"))
        node.unique_items = raw.get("uniqueItems") is True
        return node


def _walk(node: Node) -> None:
    """Follows every ``$ref`` once, so that one naming nothing fails now, not later."""
    seen: set[int] = set()
    todo = [node]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if current.kind == "ref" and current.target is not None:
            todo.append(current.target())
        todo += current.subschemas
        todo += current.properties.values()
        todo += (s for _, s in current.pattern_properties)
        todo += current.schema_dependencies.values()
        todo += current.item_schemas
        todo += (
            n
            for n in (
                current.negated,
                current.additional_properties_schema,
                current.unevaluated_properties,
                current.all_items,
                current.additional_items_schema,
                current.unevaluated_items,
            )
            if n is not None
        )


def _load_json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SchemaProblem(f"{what} is not JSON: {exc}") from None


def _check(schema: Any, where: str) -> None:
    """``schema`` against its draft's metaschema; the error says what and where."""
    if not isinstance(schema, dict | bool):
        raise SchemaProblem(f"{where} is not a JSON Schema: a schema is a JSON object or a boolean")
    cls = validator_for(schema, default=jsonschema.Draft7Validator)
    try:
        cls.check_schema(schema)  # type: ignore[arg-type]  # a boolean is a schema too
    except SchemaError as exc:
        raise SchemaProblem(
            f"{where} is not a valid JSON Schema: {exc.message} at {_pointer(exc.path)}"
        ) from None


def parse_json(
    text: str, references: Sequence[tuple[str, str]], normalize: bool
) -> tuple[str, JsonSchemaParsed]:
    """The canonical text and the parsed schema; ``references`` are (name, text), a
    name being the URL the schema's ``$ref``s use for that schema."""
    schema = _load_json(text, "the schema")
    _check(schema, "the schema")
    dialect = schema.get("$schema") if isinstance(schema, dict) else None
    specification: referencing.Specification[Any] = referencing.jsonschema.DRAFT7
    if isinstance(dialect, str):
        specification = referencing.jsonschema.specification_with(dialect, default=specification)
    loader = _Loader(specification)
    base = schema.get(loader.id_keyword) if isinstance(schema, dict) else None
    base = base if isinstance(base, str) else ""
    resources: list[tuple[str, Resource[Any]]] = []
    for name, referenced_text in references:
        referenced = _load_json(referenced_text, f"the referenced schema {name!r}")
        own = referenced.get("$schema") if isinstance(referenced, dict) else None
        resource = referencing.jsonschema.specification_with(
            own if isinstance(own, str) else "", default=specification
        ).create_resource(referenced)
        resources.append((name, resource))
        if base:
            resources.append((urljoin(base, name), resource))
    registry: Registry[Any] = METASCHEMAS.with_resources(resources).with_resource(
        base, specification.create_resource(schema)
    )
    try:
        registry = registry.crawl()
    except Exception as exc:  # a malformed $id in a referenced schema
        raise SchemaProblem(f"the schema's references: {exc}") from None
    root = loader.load(schema, registry.resolver(base_uri=base))
    _walk(root)
    return _dump(schema, sort=normalize), JsonSchemaParsed(schema, root)


def describe(kind: str, path: str) -> str:
    return f"{kind} at {path}"


def json_reads(reader: JsonSchemaParsed, writer: JsonSchemaParsed) -> list[str]:
    """Why ``reader`` cannot read data written with ``writer`` (empty: it can): the
    incompatible differences of Confluent's rules from ``writer`` (the original) to
    ``reader`` (the update), each as ``TYPE at #/path``."""
    return [describe(kind, path) for kind, path in incompatible(writer.root, reader.root)]


JSON = SchemaKind(parse_json, json_reads)
