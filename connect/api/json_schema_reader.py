"""JSON Schemas to Connect schemas, the way Confluent's ``JsonSchemaData.toConnectSchema``
reads them (``connect.api.json_schema`` holds the rest of the mapping and says what each
JSON Schema becomes), and the annotation names both directions share. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from connect.api.data import Field, Schema, Type
from connect.api.errors import DataException

__all__ = [
    "CONNECT_INDEX",
    "CONNECT_PARAMETERS",
    "CONNECT_TYPE",
    "CONNECT_VERSION",
    "ENUM",
    "NAMESPACE",
    "NULL_SYMBOL",
    "ONE_OF",
    "JsonSchemaReader",
]

NAMESPACE = "io.confluent.connect.json"
ENUM = f"{NAMESPACE}.Enum"
ONE_OF = f"{NAMESPACE}.OneOf"
CONNECT_TYPE = "connect.type"
CONNECT_INDEX = "connect.index"
CONNECT_VERSION = "connect.version"
CONNECT_PARAMETERS = "connect.parameters"
NULL_SYMBOL = "<NULL>"  # Confluent's parameter name for a null enum symbol

BY_CONNECT_TYPE = {
    "int8": Type.INT8,
    "int16": Type.INT16,
    "int32": Type.INT32,
    "int64": Type.INT64,
    "float32": Type.FLOAT32,
    "float64": Type.FLOAT64,
    "bytes": Type.BYTES,  # a Decimal
}
OBJECT_KEYWORDS = ("properties", "additionalProperties", "patternProperties", "required")


class JsonSchemaReader:
    """One JSON Schema to Connect, ``$ref``s resolved within the documents at hand.
    ``read_default`` turns a ``default`` (a JSON value) into a Connect value of a schema;
    ``optional_unless_required``: Confluent's ``use.optional.for.nonrequired``."""

    def __init__(
        self,
        referenced: Mapping[str, Any],
        *,
        optional_unless_required: bool,
        read_default: Callable[[Schema, Any], Any],
    ) -> None:
        self.optional_unless_required = optional_unless_required
        self.read_default = read_default
        self.referenced = dict(referenced)
        for doc in referenced.values():  # a referenced schema is also known by its $id
            if isinstance(doc, Mapping) and isinstance(doc.get("$id"), str):
                self.referenced.setdefault(doc["$id"], doc)
        self.expanding: list[tuple[int, str]] = []

    def read(self, node: Any, root: Any, version: int | None, optional: bool) -> Schema:
        if not isinstance(node, Mapping):
            raise DataException(f"{node!r} as a schema accepts anything or nothing: it has no Connect schema")
        ref = node.get("$ref")
        if isinstance(ref, str):
            return self._ref(ref, root, version, optional)
        if "oneOf" in node or "anyOf" in node:
            return self._one_of(node, node.get("oneOf", node.get("anyOf")), root, version, optional)
        if "allOf" in node:
            return self._all_of(node, root, version, optional)
        json_type = node.get("type")
        if isinstance(json_type, list):
            if len(json_type) == 1:
                return self.read({**node, "type": json_type[0]}, root, version, optional)
            branches = [{**node, "type": t} for t in json_type]
            return self._one_of({}, branches, root, version, optional)
        return self._typed(node, json_type, root, version, optional)

    def _ref(self, ref: str, root: Any, version: int | None, optional: bool) -> Schema:
        name, _, pointer = ref.partition("#")
        doc = root
        if name:
            doc = self.referenced.get(name)
            if doc is None:
                doc = next((d for n, d in self.referenced.items() if n.rsplit("/", 1)[-1] == name), None)
            if doc is None:
                raise DataException(f"$ref {ref}: no referenced schema is called {name}")
        target: Any = doc
        for part in [p for p in pointer.split("/") if p]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(target, list) and part.isdigit() and int(part) < len(target):
                target = target[int(part)]
            elif isinstance(target, Mapping) and part in target:
                target = target[part]
            else:
                raise DataException(f"$ref {ref}: nothing at {pointer} in the schema")
        key = (id(doc), pointer)
        if key in self.expanding:
            raise DataException(f"$ref {ref} refers to itself: a recursive schema has no Connect schema")
        self.expanding.append(key)
        try:
            return self.read(target, doc, version, optional)
        finally:
            self.expanding.pop()

    def _one_of(
        self, node: Mapping[str, Any], branches: Any, root: Any, version: int | None, optional: bool
    ) -> Schema:
        if not isinstance(branches, list) or not branches:
            raise DataException("oneOf/anyOf must list schemas")
        nulls = [b for b in branches if isinstance(b, Mapping) and b.get("type") == "null" and len(b) == 1]
        rest = [b for b in branches if not any(b is n for n in nulls)]
        if nulls and len(rest) == 1:
            return self.read(rest[0], root, version, True)
        fields = tuple(
            Field(f"{ONE_OF}.field.{i}", i, self.read(b, root, None, True)) for i, b in enumerate(rest)
        )
        return Schema(Type.STRUCT, optional=optional or bool(nulls), name=ONE_OF, fields=fields)

    def _all_of(self, node: Mapping[str, Any], root: Any, version: int | None, optional: bool) -> Schema:
        parts = node["allOf"]
        if not isinstance(parts, list) or not parts:
            raise DataException("allOf must list schemas")
        properties: dict[str, Any] = {}
        required: set[str] = set()
        for part in parts:
            self._collect(part, root, properties, required)
        if properties:
            merged = {"type": "object", "properties": properties, "required": sorted(required)}
            return self.read(merged, root, version, optional)
        # Confluent keeps the one subschema that has a type (an enum or a format beside it).
        typed = [p for p in parts if isinstance(p, Mapping) and ("type" in p or "enum" in p or "$ref" in p)]
        enums = [p for p in typed if "enum" in p]
        if enums or typed:
            return self.read((enums or typed)[0], root, version, optional)
        raise DataException("an allOf of schemas without types has no Connect schema")

    def _collect(self, part: Any, root: Any, properties: dict[str, Any], required: set[str]) -> None:
        if not isinstance(part, Mapping):
            return
        if isinstance(part.get("$ref"), str) and part["$ref"].startswith("#"):
            target = root
            for p in [p for p in part["$ref"][1:].split("/") if p]:
                target = target.get(p) if isinstance(target, Mapping) else None
            self._collect(target, root, properties, required)
        for sub in part.get("allOf", []) if isinstance(part.get("allOf"), list) else []:
            self._collect(sub, root, properties, required)
        if isinstance(part.get("properties"), Mapping):
            properties.update(part["properties"])
            required.update(r for r in part.get("required", []) if isinstance(r, str))

    def _typed(
        self, node: Mapping[str, Any], json_type: Any, root: Any, version: int | None, optional: bool
    ) -> Schema:
        connect_type = node.get(CONNECT_TYPE)
        key_schema = value_schema = None
        fields: tuple[Field, ...] = ()
        parameters: dict[str, str] = {}
        if "enum" in node and json_type in (None, "string"):
            t = Type.STRING
            parameters[ENUM] = ""  # JSON enums have no name
            for symbol in node["enum"] if isinstance(node["enum"], list) else []:
                text = NULL_SYMBOL if symbol is None else str(symbol)
                parameters[f"{ENUM}.{text}"] = text
        elif json_type in ("integer", "number"):
            if connect_type is None:
                t = Type.INT64 if json_type == "integer" else Type.FLOAT64
            elif connect_type in BY_CONNECT_TYPE:
                t = BY_CONNECT_TYPE[connect_type]
            else:
                raise DataException(f"unknown connect.type {connect_type!r} on a {json_type}")
        elif json_type == "string" or (json_type is None and isinstance(node.get("const"), str)):
            t = Type.BYTES if connect_type == "bytes" else Type.STRING
        elif json_type == "boolean":
            t = Type.BOOLEAN
        elif json_type == "array" or (json_type is None and "items" in node):
            items = node.get("items")
            if not isinstance(items, Mapping):
                raise DataException("an array schema without one items schema has no Connect schema")
            props = items.get("properties")
            if connect_type == "map" and isinstance(props, Mapping) and "key" in props:
                t = Type.MAP
                key_schema = self.read(props["key"], root, None, False)
                value_schema = self.read(props.get("value", {}), root, None, False)
            else:
                t = Type.ARRAY
                value_schema = self.read(items, root, None, False)
        elif json_type == "object" or (json_type is None and any(k in node for k in OBJECT_KEYWORDS)):
            if connect_type == "map":
                t = Type.MAP
                key_schema = Schema.STRING_SCHEMA
                value_schema = self.read(node.get("additionalProperties", {}), root, None, False)
            else:
                t = Type.STRUCT
                fields = self._fields(node, root)
        elif json_type == "null":
            raise DataException("a null schema outside a oneOf has no Connect schema")
        else:
            raise DataException(f"a schema of type {json_type!r} has no Connect schema: {dict(node)}")
        title = node.get("title")
        connect_version = node.get(CONNECT_VERSION)
        if not isinstance(connect_version, int) or isinstance(connect_version, bool):
            connect_version = version
        params = node.get(CONNECT_PARAMETERS)
        if isinstance(params, Mapping):
            parameters.update({str(k): str(v) for k, v in params.items()})
        description = node.get("description")
        schema = Schema(
            t,
            optional=optional,
            name=title if isinstance(title, str) else None,
            version=connect_version,
            doc=description if isinstance(description, str) else None,
            parameters=parameters or None,
            key_schema=key_schema,
            value_schema=value_schema,
            fields=fields,
        )
        if "default" in node and node["default"] is not None:
            try:
                default = self.read_default(schema, node["default"])
                schema = Schema(
                    t,
                    optional=optional,
                    default_value=default,
                    name=schema.name,
                    version=schema.version,
                    doc=schema.doc,
                    parameters=schema.parameters,
                    key_schema=key_schema,
                    value_schema=value_schema,
                    fields=fields,
                )
            except DataException as exc:
                raise DataException(
                    f"the default {node['default']!r} does not fit the schema: {exc}"
                ) from None
        return schema

    def _fields(self, node: Mapping[str, Any], root: Any) -> tuple[Field, ...]:
        properties = node.get("properties") or {}
        if not isinstance(properties, Mapping):
            raise DataException("properties must be an object")
        listed = node.get("required")
        required = {r for r in listed if isinstance(r, str)} if isinstance(listed, list) else set()

        def order(item: tuple[int, str]) -> int:
            position, name = item
            sub = properties[name]
            index = sub.get(CONNECT_INDEX) if isinstance(sub, Mapping) else None
            return index if isinstance(index, int) and not isinstance(index, bool) else position

        names = [name for _, name in sorted(enumerate(properties), key=order)]
        optional_unless_required = self.optional_unless_required
        return tuple(
            Field(
                name,
                i,
                self.read(properties[name], root, None, optional_unless_required and name not in required),
            )
            for i, name in enumerate(names)
        )
