"""Connect schemas and values to Avro and back, the way Confluent's ``AvroData`` maps them
(the AvroConverter's mapping, and the S3 sink's AvroFormat's),
so that schemas registered from here equal those Kafka Connect registers and records
read as the same Connect data on either side.

Connect → Avro:

- INT8/INT16 → ``int`` with ``"connect.type": "int8"|"int16"``; INT32 int; INT64 long;
  FLOAT32 float; FLOAT64 double; BOOLEAN boolean; STRING string; BYTES bytes;
- Decimal → bytes, ``logicalType: decimal``, its scale, and the precision from the
  ``connect.decimal.precision`` parameter (64 without); Date → int ``date``; Time → int
  ``time-millis``; Timestamp → long ``timestamp-millis``;
- ARRAY → array; MAP with (required) string keys → map; any other MAP → an array of
  ``io.confluent.connect.avro.MapEntry`` records ``{key, value}``;
- STRUCT → record named after the schema (namespace up to the last dot), or
  ``io.confluent.connect.avro.ConnectDefault`` (then ``ConnectDefault2``…) without one;
- optional → a union with null: ``["null", T]`` with default null, or ``[T, "null"]``
  when the schema has a default;
- with ``connect.meta.data`` (default true) the schema's name, version, doc, parameters
  and default ride along as ``connect.name``, ``connect.version``, ``connect.doc``,
  ``connect.parameters`` and ``connect.default``.

Avro → Connect takes those back, and reads what Connect never writes: an enum is a string
(parameters ``io.confluent.connect.avro.Enum`` and ``…Enum.<symbol>``), fixed is bytes
(``connect.fixed.size``), and a union of several types is an
``io.confluent.connect.avro.Union`` struct with one optional field per branch.

Values: logical values are written as their Avro base values (``Decimal.from_logical``
and friends, Kafka's exact encodings), and read back through the same classes.
"""

from __future__ import annotations

import decimal
from collections.abc import Mapping
from typing import Any

from connect.api import DataException, Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp, Type

__all__ = ["AvroData"]

NAMESPACE = "io.confluent.connect.avro"
DEFAULT_NAME = f"{NAMESPACE}.ConnectDefault"
MAP_ENTRY = f"{NAMESPACE}.MapEntry"
UNION = f"{NAMESPACE}.Union"
ENUM = f"{NAMESPACE}.Enum"
FIXED_SIZE = "connect.fixed.size"
PRECISION = "connect.decimal.precision"

_PRIMITIVES: dict[Type, str] = {
    Type.INT8: "int",
    Type.INT16: "int",
    Type.INT32: "int",
    Type.INT64: "long",
    Type.FLOAT32: "float",
    Type.FLOAT64: "double",
    Type.BOOLEAN: "boolean",
    Type.STRING: "string",
    Type.BYTES: "bytes",
}
# Connect's logical types by name: their from_logical/to_logical give Avro's base values.
_LOGICAL_CLASSES: dict[str, Any] = {
    Decimal.LOGICAL_NAME: Decimal,
    Date.LOGICAL_NAME: Date,
    Time.LOGICAL_NAME: Time,
    Timestamp.LOGICAL_NAME: Timestamp,
}
_LOGICAL = {
    Date.LOGICAL_NAME: ("int", "date"),
    Time.LOGICAL_NAME: ("int", "time-millis"),
    Timestamp.LOGICAL_NAME: ("long", "timestamp-millis"),
}


def _is_map_entry_array(node: Mapping[str, Any]) -> bool:
    items = node.get("items")
    return (
        isinstance(items, Mapping)
        and items.get("type") == "record"
        and (_full_name(items) == MAP_ENTRY or items.get("connect.internal.type") == "MapEntry")
    )


def _full_name(node: Mapping[str, Any]) -> str:
    name = str(node.get("name", ""))
    namespace = node.get("namespace")
    return f"{namespace}.{name}" if namespace and "." not in name else name


class AvroData:
    def __init__(self, connect_meta_data: bool = True, enhanced: bool = False) -> None:
        self.connect_meta_data = connect_meta_data
        self.enhanced = enhanced

    # -- Connect -> Avro: schemas -----------------------------------------------------------------

    def from_connect_schema(self, schema: Schema) -> Any:
        """The Avro schema (as its JSON structure) of a Connect schema."""
        return _SchemaWriter(self.connect_meta_data).top(schema)

    # -- Connect -> Avro: values ------------------------------------------------------------------

    def from_connect_value(self, schema: Schema, value: Any) -> Any:
        """The datum fastavro writes with the schema ``from_connect_schema`` gave."""
        if value is None:
            if schema.default_value is not None:
                value = schema.default_value
            elif not schema.optional:
                raise DataException(f"a null value for a required {schema.type.value} schema")
            else:
                return None
        logical = _LOGICAL_CLASSES.get(schema.name)  # type: ignore[arg-type]
        if logical is not None:
            return logical.from_logical(schema, value)
        t = schema.type
        if t is Type.STRUCT:
            if not isinstance(value, Struct):
                raise DataException(f"a {type(value).__name__} for the struct schema {schema.name or ''}")
            return {f.name: self.from_connect_value(f.schema, value.get(f.name)) for f in schema.fields}
        if t is Type.ARRAY:
            assert schema.value_schema is not None
            item = schema.value_schema
            return [self.from_connect_value(item, v) for v in value]
        if t is Type.MAP:
            assert schema.key_schema is not None and schema.value_schema is not None
            k, v = schema.key_schema, schema.value_schema
            if _string_keyed(schema):
                return {key: self.from_connect_value(v, val) for key, val in value.items()}
            return [
                {"key": self.from_connect_value(k, key), "value": self.from_connect_value(v, val)}
                for key, val in value.items()
            ]
        if t is Type.BYTES:
            return bytes(value)
        if t in (Type.FLOAT32, Type.FLOAT64):
            return float(value)
        return value

    # -- Avro -> Connect --------------------------------------------------------------------------

    def to_connect_schema(
        self, node: Any, referenced: Mapping[str, Any] | None = None, version: int | None = None
    ) -> Schema:
        """The Connect schema of an Avro schema (its JSON structure); ``referenced`` holds
        the named types it refers to (schema references), by full name. ``version`` (the
        registry's) becomes the schema's version unless it carries ``connect.version``."""
        reader = _SchemaReader(self.enhanced)
        reader.named.update(referenced or {})
        builder = reader.read(node, optional=False)
        if version is not None and builder.build().version is None:
            builder.version(version)
        return builder.build()

    def to_connect_value(self, schema: Schema, datum: Any) -> Any:
        """A datum fastavro read with logical types left as their base values."""
        if datum is None:
            return None
        name = schema.name
        logical = _LOGICAL_CLASSES.get(name)  # type: ignore[arg-type]
        if logical is not None:
            return logical.to_logical(schema, datum)
        t = schema.type
        if t is Type.STRUCT:
            if name == UNION:
                return self._union_value(schema, datum)
            out = Struct(schema)
            for f in schema.fields:
                out.put(f.name, self.to_connect_value(f.schema, datum.get(f.name)))
            return out
        if t is Type.ARRAY:
            assert schema.value_schema is not None
            return [self.to_connect_value(schema.value_schema, v) for v in datum]
        if t is Type.MAP:
            assert schema.key_schema is not None and schema.value_schema is not None
            if isinstance(datum, list):
                return {
                    self.to_connect_value(schema.key_schema, e["key"]): self.to_connect_value(
                        schema.value_schema, e["value"]
                    )
                    for e in datum
                }
            return {k: self.to_connect_value(schema.value_schema, v) for k, v in datum.items()}
        if t is Type.FLOAT32 or t is Type.FLOAT64:
            return float(datum)
        return datum

    def _union_value(self, schema: Schema, datum: Any) -> Struct:
        out = Struct(schema)
        for f in schema.fields:
            if _branch_matches(f.schema, datum):
                out.put(f.name, self.to_connect_value(f.schema, datum))
                return out
        raise DataException(f"no branch of the union {[f.name for f in schema.fields]} holds {datum!r}")


def _string_keyed(schema: Schema) -> bool:
    key = schema.key_schema
    return key is not None and key.type is Type.STRING and not key.optional and key.name is None


def _branch_matches(schema: Schema, datum: Any) -> bool:
    t = schema.type
    if t is Type.STRUCT:
        return isinstance(datum, dict)
    if t is Type.STRING:
        return isinstance(datum, str)
    if t is Type.BOOLEAN:
        return isinstance(datum, bool)
    if t in (Type.INT32, Type.INT64, Type.INT8, Type.INT16):
        return isinstance(datum, int) and not isinstance(datum, bool)
    if t in (Type.FLOAT32, Type.FLOAT64):
        return isinstance(datum, float)
    if t is Type.BYTES:
        return isinstance(datum, bytes | decimal.Decimal)
    if t is Type.ARRAY:
        return isinstance(datum, list)
    return isinstance(datum, dict)


class _SchemaWriter:
    """One Connect schema to Avro: names each record once (a second use refers by name)."""

    def __init__(self, meta: bool) -> None:
        self.meta = meta
        self.defined: set[str] = set()
        self.defaults = 0

    def top(self, schema: Schema) -> Any:
        node = self.node(schema)
        return self.optional(node, schema) if schema.optional else node

    def optional(self, node: Any, schema: Schema) -> Any:
        if schema.default_value is not None:
            return [node, "null"]
        return ["null", node]

    def _props(self, schema: Schema, node: dict[str, Any]) -> dict[str, Any]:
        if not self.meta:
            return node
        if schema.doc is not None:
            node["connect.doc"] = schema.doc
        if schema.version is not None:
            node["connect.version"] = schema.version
        if schema.parameters:
            node["connect.parameters"] = dict(schema.parameters)
        if schema.default_value is not None and schema.type is not Type.STRUCT:
            node["connect.default"] = _default_json(schema, schema.default_value)
        if schema.name is not None:
            node["connect.name"] = schema.name
        return node

    def node(self, schema: Schema) -> Any:
        name = schema.name
        if name == Decimal.LOGICAL_NAME:
            params = schema.parameters or {}
            precision = int(params.get(PRECISION, "64"))
            node: dict[str, Any] = {"type": "bytes", "scale": Decimal.scale(schema), "precision": precision}
            self._props(schema, node)
            node["logicalType"] = "decimal"
            return node
        if name in _LOGICAL:
            base, logical = _LOGICAL[name]
            node = self._props(schema, {"type": base})
            node["logicalType"] = logical
            return node
        t = schema.type
        if t in _PRIMITIVES:
            node = {"type": _PRIMITIVES[t]}
            if t in (Type.INT8, Type.INT16):
                node["connect.type"] = t.value
            self._props(schema, node)
            return node if len(node) > 1 else node["type"]
        if t is Type.ARRAY:
            assert schema.value_schema is not None
            return self._props(schema, {"type": "array", "items": self.top(schema.value_schema)})
        if t is Type.MAP:
            assert schema.key_schema is not None and schema.value_schema is not None
            if _string_keyed(schema):
                return self._props(schema, {"type": "map", "values": self.top(schema.value_schema)})
            entry = {
                "type": "record",
                "name": "MapEntry",
                "namespace": NAMESPACE,
                "fields": [
                    {"name": "key", "type": self.top(schema.key_schema)},
                    {"name": "value", "type": self.top(schema.value_schema)},
                ],
            }
            if MAP_ENTRY in self.defined:
                return self._props(schema, {"type": "array", "items": MAP_ENTRY})
            self.defined.add(MAP_ENTRY)
            return self._props(schema, {"type": "array", "items": entry})
        if t is Type.STRUCT:
            return self.record(schema)
        raise DataException(f"no Avro type for the Connect schema {schema!r}")

    def record(self, schema: Schema) -> Any:
        if schema.name:
            full = schema.name
        else:
            self.defaults += 1
            full = DEFAULT_NAME if self.defaults == 1 else f"{DEFAULT_NAME}{self.defaults}"
        if full in self.defined:
            return full
        self.defined.add(full)
        namespace, _, short = full.rpartition(".")
        node: dict[str, Any] = {"type": "record", "name": short}
        if namespace:
            node["namespace"] = namespace
        fields = []
        for f in schema.fields:
            field: dict[str, Any] = {"name": f.name, "type": self.top(f.schema)}
            if f.schema.default_value is not None:
                field["default"] = _default_json(f.schema, f.schema.default_value)
            elif f.schema.optional:
                field["default"] = None
            fields.append(field)
        node["fields"] = fields
        return self._props(schema, node)


def _default_json(schema: Schema, value: Any) -> Any:
    """A default value as Avro's JSON writes it (bytes as latin-1 code points)."""
    logical = _LOGICAL_CLASSES.get(schema.name)  # type: ignore[arg-type]
    if logical is not None:
        base = logical.from_logical(schema, value)
        return base.decode("latin-1") if isinstance(base, bytes) else base
    t = schema.type
    if t is Type.BYTES:
        return bytes(value).decode("latin-1")
    if t is Type.STRUCT:
        return {f.name: _default_json(f.schema, value.get(f.name)) for f in schema.fields}
    if t is Type.ARRAY:
        assert schema.value_schema is not None
        return [_default_json(schema.value_schema, v) for v in value]
    if t is Type.MAP:
        assert schema.value_schema is not None
        return {str(k): _default_json(schema.value_schema, v) for k, v in value.items()}
    return value


class _SchemaReader:
    """One Avro schema to Connect, named types resolved as they are defined."""

    def __init__(self, enhanced: bool) -> None:
        self.enhanced = enhanced
        self.named: dict[str, Any] = {}

    def read(self, node: Any, optional: bool) -> SchemaBuilder:
        if isinstance(node, list):
            return self.union(node, optional)
        if isinstance(node, str):
            if node in self.named:
                return self.read(self.named[node], optional)
            node = {"type": node}
        if not isinstance(node, Mapping):
            raise DataException(f"not an Avro schema: {node!r}")
        t = node.get("type")
        if isinstance(t, list | Mapping):
            return self.read(t, optional)
        builder = self.base(node, str(t))
        if optional:
            builder.optional()
        self.meta(node, builder)
        return builder

    def base(self, node: Mapping[str, Any], t: str) -> SchemaBuilder:
        logical = node.get("logicalType")
        if t == "bytes" and logical == "decimal":
            builder = Decimal.builder(int(node.get("scale", 0)))
            precision = node.get("precision")
            if isinstance(precision, int) and precision != 64:
                builder.parameter(PRECISION, str(precision))
            return builder
        if t == "int" and logical == "date":
            return Date.builder()
        if t == "int" and logical == "time-millis":
            return Time.builder()
        if t == "long" and logical == "timestamp-millis":
            return Timestamp.builder()
        match t:
            case "int":
                kind = node.get("connect.type")
                return (
                    SchemaBuilder.int8()
                    if kind == "int8"
                    else SchemaBuilder.int16()
                    if kind == "int16"
                    else SchemaBuilder.int32()
                )
            case "long":
                return SchemaBuilder.int64()
            case "float":
                return SchemaBuilder.float32()
            case "double":
                return SchemaBuilder.float64()
            case "boolean":
                return SchemaBuilder.bool()
            case "string":
                return SchemaBuilder.string()
            case "bytes":
                return SchemaBuilder.bytes()
            case "fixed":
                self.named[_full_name(node)] = node
                return SchemaBuilder.bytes().parameter(FIXED_SIZE, str(node.get("size")))
            case "enum":
                self.named[_full_name(node)] = node
                builder = SchemaBuilder.string().parameter(ENUM, _full_name(node))
                for symbol in node.get("symbols", []):
                    builder.parameter(f"{ENUM}.{symbol}", symbol)
                return builder
            case "array":
                if _is_map_entry_array(node):
                    entry = node["items"]
                    self.named[_full_name(entry)] = entry
                    fields = {f["name"]: f["type"] for f in entry["fields"]}
                    return SchemaBuilder.map(
                        self.read(fields["key"], False).build(), self.read(fields["value"], False).build()
                    )
                return SchemaBuilder.array(self.read(node.get("items"), False).build())
            case "map":
                return SchemaBuilder.map(Schema.STRING_SCHEMA, self.read(node.get("values"), False).build())
            case "record":
                return self.record(node)
            case "null":
                raise DataException("a null Avro schema outside a union has no Connect schema")
        if t in self.named:
            return self.read(self.named[t], False)
        raise DataException(f"unknown Avro type {t!r}")

    def record(self, node: Mapping[str, Any]) -> SchemaBuilder:
        full = _full_name(node)
        self.named[full] = node
        builder = SchemaBuilder.struct()
        if full != DEFAULT_NAME and not full.startswith(DEFAULT_NAME):
            builder.name(full)
        for f in node.get("fields", []):
            field = self.read(f["type"], False)
            if "default" in f and f["default"] is not None and field.build().type is not Type.STRUCT:
                field.default_value(_default_value(field.build(), f["default"]))
            builder.field(f["name"], field)
        return builder

    def union(self, branches: list[Any], optional: bool) -> SchemaBuilder:
        rest = [b for b in branches if b != "null" and b != {"type": "null"}]
        nullable = len(rest) < len(branches)
        if len(rest) == 1:
            return self.read(rest[0], optional or nullable)
        builder = SchemaBuilder.struct().name(UNION)
        for b in rest:
            branch = self.read(b, True).build()
            label = b if isinstance(b, str) else b.get("name") or b.get("type")
            builder.field(str(label).rsplit(".", 1)[-1], branch)
        if optional or nullable:
            builder.optional()
        return builder

    def meta(self, node: Mapping[str, Any], builder: SchemaBuilder) -> None:
        name = node.get("connect.name")
        if isinstance(name, str) and builder.build().name is None:
            builder.name(name)
        version = node.get("connect.version")
        if isinstance(version, int) and builder.build().version is None:
            builder.version(version)
        doc = node.get("connect.doc")
        if isinstance(doc, str):
            builder.doc(doc)
        params = node.get("connect.parameters")
        if isinstance(params, Mapping):
            for k, v in params.items():
                builder.parameter(str(k), str(v))
        default = node.get("connect.default")
        if default is not None:
            builder.default_value(_default_value(builder.build(), default))


def _default_value(schema: Schema, value: Any) -> Any:
    """A default from Avro's JSON as a Connect value."""
    logical = _LOGICAL_CLASSES.get(schema.name)  # type: ignore[arg-type]
    if logical is not None:
        return logical.to_logical(schema, value.encode("latin-1") if isinstance(value, str) else value)
    if schema.type is Type.BYTES:
        return value.encode("latin-1")
    if schema.type in (Type.FLOAT32, Type.FLOAT64):
        return float(value)
    return value
