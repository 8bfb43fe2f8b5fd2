"""Connect schemas and values to JSON Schema and JSON documents and back, the way
Confluent's ``JsonSchemaData`` maps them (the JsonSchemaConverter's mapping), so that a
schema registered from here reads as the same Connect schema in Kafka Connect and the
documents are the same JSON.

Connect → JSON Schema (draft-07, no ``$schema``):

- INT8..INT64 → ``integer``, FLOAT32/FLOAT64 → ``number``, each with ``connect.type``
  (``int8``…``float64``); BOOLEAN → ``boolean``; STRING → ``string`` (or ``enum`` for a
  string carrying ``io.confluent.connect.json.Enum`` parameters); BYTES → ``string`` with
  ``connect.type: bytes`` (the value base64);
- Decimal → ``number`` with ``connect.type: bytes``; Date/Time → ``integer`` (int32),
  Timestamp → ``integer`` (int64); a logical type is named by ``title`` and carries
  ``connect.version`` and ``connect.parameters`` (Decimal's ``scale``) as any schema does;
- ARRAY → ``array`` + ``items``; MAP with required string keys → ``object`` +
  ``additionalProperties`` and ``connect.type: map``; any other MAP → an ``array`` of
  ``{key, value}`` objects with ``connect.type: map``;
- STRUCT → ``object`` with ``properties`` in field order, each with ``connect.index``;
  ``additionalProperties: false`` only when ``object.additional.properties`` is false;
- an optional schema → ``{"oneOf": [{"type": "null"}, T]}`` (``connect.index`` then on the
  ``oneOf``); name → ``title``, doc → ``description``, version → ``connect.version``,
  parameters (not Confluent's own ``io.confluent.connect.json.*``) → ``connect.parameters``,
  default → ``default`` (as its JSON value). Nothing is ever ``required``.

JSON Schema → Connect reads those back and also schemas written without annotations (what
Confluent's Python ``JSONSerializer`` users register): ``integer`` → INT64, ``number`` →
FLOAT64, ``object`` with ``properties`` → STRUCT (order by ``connect.index``, else property
order; a property is optional only if nullable, or with ``use.optional.for.nonrequired`` if
not ``required``), ``oneOf``/``anyOf``/a ``type`` list with ``null`` and one other type →
that type, optional; with several others → an ``io.confluent.connect.json.OneOf`` struct
with one optional field per branch; ``enum`` → STRING with the ``…Enum`` parameters;
``allOf`` of objects → one struct of all their properties; ``$ref`` into the document
(``#/definitions/…``, ``#/$defs/…``) or to a referenced schema by name. A schema that
refers to itself has no Connect schema (Connect schemas are finite trees). That reading is
``connect.api.json_schema_reader``'s.

Values are plain JSON values (dicts, lists, str, int, float, bool, None); a Decimal is a
base64 string of its unscaled bytes (``decimal.format=BASE64``, Confluent's default) or a
``decimal.Decimal`` to be written as an exact JSON number (``NUMERIC``). Pure: no I/O.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import decimal
import math
from collections.abc import Mapping
from typing import Any, Literal

from connect.api.data import Date, Decimal, Field, Schema, Struct, Time, Timestamp, Type
from connect.api.errors import DataException
from connect.api.json_schema_reader import (
    CONNECT_INDEX,
    CONNECT_PARAMETERS,
    CONNECT_TYPE,
    CONNECT_VERSION,
    ENUM,
    NAMESPACE,
    NULL_SYMBOL,
    ONE_OF,
    JsonSchemaReader,
)

__all__ = ["NAMESPACE", "ONE_OF", "JsonSchemaData"]


DecimalFormat = Literal["BASE64", "NUMERIC"]

_NUMBERS: dict[Type, tuple[str, str]] = {
    Type.INT8: ("integer", "int8"),
    Type.INT16: ("integer", "int16"),
    Type.INT32: ("integer", "int32"),
    Type.INT64: ("integer", "int64"),
    Type.FLOAT32: ("number", "float32"),
    Type.FLOAT64: ("number", "float64"),
}
_INTS = (Type.INT8, Type.INT16, Type.INT32, Type.INT64)
_INT_RANGES = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}


def _string_keyed(schema: Schema) -> bool:
    key = schema.key_schema
    return key is not None and key.type is Type.STRING and not key.optional


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float | decimal.Decimal):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


class JsonSchemaData:
    """The mapping, with Confluent's ``JsonSchemaDataConfig`` settings as arguments."""

    def __init__(
        self,
        *,
        allow_additional_properties: bool = True,
        use_optional_for_nonrequired: bool = False,
        decimal_format: DecimalFormat = "BASE64",
        ignore_default_for_nullables: bool = False,
    ) -> None:
        self.allow_additional_properties = allow_additional_properties
        self.use_optional_for_nonrequired = use_optional_for_nonrequired
        self.decimal_format = decimal_format
        self.ignore_default_for_nullables = ignore_default_for_nullables

    # -- Connect -> JSON Schema -------------------------------------------------------------------

    def from_connect_schema(self, schema: Schema) -> dict[str, Any]:
        """The JSON Schema (as its JSON structure) of a Connect schema."""
        return self._node(schema, None, ignore_optional=False)

    def _node(self, schema: Schema, index: int | None, ignore_optional: bool) -> dict[str, Any]:
        t = schema.type
        if t is Type.STRUCT and schema.name == ONE_OF:
            branches = [self._node(_required(f.schema), f.index, True) for f in schema.fields]
            node: dict[str, Any] = {"oneOf": ([{"type": "null"}] if schema.optional else []) + branches}
            if index is not None:
                node[CONNECT_INDEX] = index
            return node
        if t is Type.STRUCT and schema.optional and not ignore_optional:
            node = {"oneOf": [{"type": "null"}, self._node(_required(schema), None, False)]}
            if index is not None:
                node[CONNECT_INDEX] = index
            return node
        node = self._base(schema)
        if schema.name is not None:
            node["title"] = schema.name
        if schema.doc is not None:
            node["description"] = schema.doc
        if schema.version is not None:
            node[CONNECT_VERSION] = schema.version
        params = {k: v for k, v in (schema.parameters or {}).items() if not k.startswith(NAMESPACE)}
        if params:
            node[CONNECT_PARAMETERS] = params
        if schema.default_value is not None:
            node["default"] = self.from_connect_value(schema, schema.default_value)
        if schema.optional and not ignore_optional:
            node = {"oneOf": [{"type": "null"}, node]}
        if index is not None:
            node[CONNECT_INDEX] = index
        return node

    def _base(self, schema: Schema) -> dict[str, Any]:
        t = schema.type
        if t in _NUMBERS:
            json_type, connect_type = _NUMBERS[t]
            return {"type": json_type, CONNECT_TYPE: connect_type}
        if t is Type.BOOLEAN:
            return {"type": "boolean"}
        if t is Type.STRING:
            params = schema.parameters or {}
            if ENUM in params:
                prefix = ENUM + "."
                symbols = [k[len(prefix) :] for k in params if k.startswith(prefix)]
                return {"enum": [None if s == NULL_SYMBOL else s for s in symbols]}
            return {"type": "string"}
        if t is Type.BYTES:
            json_type = "number" if schema.name == Decimal.LOGICAL_NAME else "string"
            return {"type": json_type, CONNECT_TYPE: "bytes"}
        if t is Type.ARRAY:
            assert schema.value_schema is not None
            return {"type": "array", "items": self._node(schema.value_schema, None, False)}
        if t is Type.MAP:
            assert schema.key_schema is not None and schema.value_schema is not None
            if _string_keyed(schema):
                values = self._node(schema.value_schema, None, False)
                return {"type": "object", "additionalProperties": values, CONNECT_TYPE: "map"}
            entry = {
                "type": "object",
                "properties": {
                    "key": self._node(schema.key_schema, 0, False),
                    "value": self._node(schema.value_schema, 1, False),
                },
            }
            return {"type": "array", "items": entry, CONNECT_TYPE: "map"}
        node: dict[str, Any] = {
            "type": "object",
            "properties": {f.name: self._node(f.schema, f.index, False) for f in schema.fields},
        }
        if not self.allow_additional_properties:
            node["additionalProperties"] = False
        return node

    # -- Connect -> JSON: values ------------------------------------------------------------------

    def from_connect_value(self, schema: Schema, value: Any) -> Any:
        """The JSON value of a Connect value (a ``decimal.Decimal`` stands for an exact
        JSON number, written so by the caller)."""
        if value is None:
            if schema.default_value is not None:
                value = schema.default_value
            elif schema.optional:
                return None
            else:
                raise DataException(f"a null value for a required {schema.type.value} schema")
        name = schema.name
        try:
            if name == Decimal.LOGICAL_NAME:
                if self.decimal_format == "NUMERIC":
                    return decimal.Decimal(value)
                return base64.b64encode(Decimal.from_logical(schema, value)).decode("ascii")
            if name == Date.LOGICAL_NAME:
                return Date.from_logical(schema, value)
            if name == Time.LOGICAL_NAME:
                return Time.from_logical(schema, value)
            if name == Timestamp.LOGICAL_NAME:
                return Timestamp.from_logical(schema, value)
        except (TypeError, AttributeError, ValueError, decimal.InvalidOperation) as exc:
            raise DataException(f"a {type(value).__name__} for the logical type {name}: {exc}") from None
        t = schema.type
        if t is Type.STRUCT:
            return self._struct_value(schema, value)
        if t is Type.ARRAY:
            assert schema.value_schema is not None
            items = schema.value_schema
            return [self.from_connect_value(items, v) for v in _checked(value, list | tuple, schema)]
        if t is Type.MAP:
            assert schema.key_schema is not None and schema.value_schema is not None
            k, v = schema.key_schema, schema.value_schema
            entries = _checked(value, Mapping, schema).items()
            if _string_keyed(schema):
                return {str(key): self.from_connect_value(v, val) for key, val in entries}
            return [
                {"key": self.from_connect_value(k, key), "value": self.from_connect_value(v, val)}
                for key, val in entries
            ]
        if t is Type.BYTES:
            return base64.b64encode(bytes(_checked(value, bytes | bytearray | memoryview, schema))).decode()
        if t in (Type.FLOAT32, Type.FLOAT64):
            number = float(_checked(value, int | float, schema))
            if not math.isfinite(number):
                raise DataException(f"{number} has no JSON number (JSON Schema documents are JSON)")
            return number
        if t in _INTS:
            return _checked(value, int, schema)
        if t is Type.BOOLEAN:
            return _checked(value, bool, schema)
        return _checked(value, str, schema)

    def _struct_value(self, schema: Schema, value: Any) -> Any:
        if not isinstance(value, Struct):
            raise DataException(f"a {type(value).__name__} for the struct schema {schema.name or ''}")
        if value.schema != schema:
            raise DataException(
                f"a struct of {value.schema!r} where {schema!r} was expected (mismatching schema)"
            )
        values = value.values(defaults=not self.ignore_default_for_nullables)
        if schema.name == ONE_OF:
            for f, v in zip(schema.fields, values, strict=True):
                if v is not None:
                    return self.from_connect_value(f.schema, v)
            return None
        return {
            f.name: self.from_connect_value(f.schema, v) for f, v in zip(schema.fields, values, strict=True)
        }

    # -- JSON Schema -> Connect -------------------------------------------------------------------

    def to_connect_schema(
        self, node: Any, referenced: Mapping[str, Any] | None = None, version: int | None = None
    ) -> Schema:
        """The Connect schema of a JSON Schema (its JSON structure); ``referenced`` holds
        the schemas it refers to by name (registry references). ``version`` (the registry's)
        becomes the schema's version unless it carries ``connect.version``."""
        reader = JsonSchemaReader(
            referenced or {},
            optional_unless_required=self.use_optional_for_nonrequired,
            read_default=lambda schema, value: self.to_connect_value(schema, value, "default"),
        )
        return reader.read(node, node, version, False)

    # -- JSON -> Connect: values ------------------------------------------------------------------

    def to_connect_value(self, schema: Schema, doc: Any, path: str = "") -> Any:
        """The Connect value of a JSON value (numbers may be ``decimal.Decimal``) read with
        ``schema``; a value that does not fit raises a DataException naming where."""
        if doc is None:
            if schema.default_value is not None:
                return schema.default_value
            if schema.optional:
                return None
            raise DataException(f"{path or 'the document'}: null for a required {schema.type.value} schema")
        name = schema.name
        t = schema.type
        if name == Decimal.LOGICAL_NAME:
            if isinstance(doc, int | float | decimal.Decimal) and not isinstance(doc, bool):
                return decimal.Decimal(str(doc)) if isinstance(doc, float) else decimal.Decimal(doc)
            return Decimal.to_logical(schema, _base64(doc, path))
        if name in (Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME):
            number = _expect(doc, int, "an integer", path)
            logical = Date if name == Date.LOGICAL_NAME else Time if name == Time.LOGICAL_NAME else Timestamp
            try:
                return logical.to_logical(schema, number)
            except (ValueError, OverflowError) as exc:
                raise DataException(f"{path or 'the document'}: {number} is no {name}: {exc}") from None
        if t in _INTS:
            number = _expect(doc, int, "an integer", path)
            bits = _INT_RANGES[t]
            if not -(2 ** (bits - 1)) <= number < 2 ** (bits - 1):
                raise DataException(f"{path or 'the document'}: {number} does not fit {t.value}")
            return number
        if t in (Type.FLOAT32, Type.FLOAT64):
            return float(_expect(doc, int | float | decimal.Decimal, "a number", path))
        if t is Type.BOOLEAN:
            return _expect(doc, bool, "a boolean", path)
        if t is Type.STRING:
            return _expect(doc, str, "a string", path)
        if t is Type.BYTES:
            return _base64(doc, path)
        if t is Type.ARRAY:
            assert schema.value_schema is not None
            items = schema.value_schema
            return [
                self.to_connect_value(items, v, f"{path}/{i}")
                for i, v in enumerate(_expect(doc, list, "an array", path))
            ]
        if t is Type.MAP:
            return self._map_value(schema, doc, path)
        if name == ONE_OF:
            return self._one_of_value(schema, doc, path)
        fields = _expect(doc, dict, "an object", path)
        out = Struct(schema)
        for f in schema.fields:
            if f.name in fields:
                value = self.to_connect_value(f.schema, fields[f.name], f"{path}/{f.name}")
                if value is not None:
                    out.put(f.name, value)
        return out

    def _map_value(self, schema: Schema, doc: Any, path: str) -> dict[Any, Any]:
        assert schema.key_schema is not None and schema.value_schema is not None
        k, v = schema.key_schema, schema.value_schema
        if _string_keyed(schema):
            entries = _expect(doc, dict, "an object (a map with string keys)", path)
            return {key: self.to_connect_value(v, val, f"{path}/{key}") for key, val in entries.items()}
        out: dict[Any, Any] = {}
        for i, entry in enumerate(_expect(doc, list, "an array of {key, value} objects (a map)", path)):
            where = f"{path}/{i}"
            if not isinstance(entry, dict) or set(entry) - {"key", "value"}:
                raise DataException(f"{where}: a map entry must be an object of key and value")
            key = self.to_connect_value(k, entry.get("key"), f"{where}/key")
            out[key] = self.to_connect_value(v, entry.get("value"), f"{where}/value")
        return out

    def _one_of_value(self, schema: Schema, doc: Any, path: str) -> Struct:
        best: tuple[int, Field] | None = None
        for f in schema.fields:
            if _holds(f.schema, doc):
                return Struct(schema).put(f.name, self.to_connect_value(f.schema, doc, path))
            if f.schema.type is Type.STRUCT and isinstance(doc, dict):
                matching = len({g.name for g in f.schema.fields} & set(doc))
                if best is None or matching > best[0]:
                    best = (matching, f)
        if best is None:
            raise DataException(f"{path or 'the document'}: no branch of the oneOf holds a {_kind(doc)}")
        f = best[1]
        return Struct(schema).put(f.name, self.to_connect_value(f.schema, doc, path))


def _required(schema: Schema) -> Schema:
    """The schema as required (Confluent's ``nonOptional``)."""
    return dataclasses.replace(schema, optional=False)


def _checked(value: Any, kind: Any, schema: Schema) -> Any:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise DataException(f"a {type(value).__name__} for a {schema.type.value} schema")
    return value


def _expect(doc: Any, kind: Any, what: str, path: str) -> Any:
    if not isinstance(doc, kind) or (isinstance(doc, bool) and kind is not bool):
        raise DataException(f"{path or 'the document'}: expected {what}, found {_kind(doc)}")
    return doc


def _base64(doc: Any, path: str) -> bytes:
    text = _expect(doc, str, "a base64 string", path)
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise DataException(f"{path or 'the document'}: {text[:40]!r} is not base64") from None


def _holds(schema: Schema, doc: Any) -> bool:
    """Whether a oneOf branch of a simple type takes ``doc`` (Confluent's
    ``isInstanceOfSchemaTypeForSimpleSchema``; structs are matched by their properties)."""
    t = schema.type
    if t in _INTS:
        return isinstance(doc, int) and not isinstance(doc, bool)
    if t in (Type.FLOAT32, Type.FLOAT64):
        return isinstance(doc, int | float | decimal.Decimal) and not isinstance(doc, bool)
    if t is Type.BOOLEAN:
        return isinstance(doc, bool)
    if t is Type.STRING:
        return isinstance(doc, str)
    if t is Type.BYTES:
        return isinstance(doc, decimal.Decimal)
    if t is Type.ARRAY:
        return isinstance(doc, list)
    if t is Type.MAP:
        return isinstance(doc, dict | list)
    return False
