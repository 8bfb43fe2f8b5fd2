"""Flatten: turn a nested struct (or map) into a flat one, joining the field names of each
level with a delimiter.

``{"id": 1, "customer": {"name": "ann", "address": {"city": "Oslo"}}}`` becomes
``{"id": 1, "customer.name": "ann", "customer.address.city": "Oslo"}``; ``delimiter``
(default ``.``; surrounding blanks are trimmed, as Kafka trims it) goes between the names.
Arrays are kept as they are, elements included.

Without a schema the value must be a map; nested maps are flattened in their
iteration order, an empty nested map disappears, and when two names collide the later
entry wins. Struct values and values Connect has no type for (dates, decimals...)
inside a schemaless map are errors.

With a schema, the output schema is derived once per input schema. A flattened field
is optional when it or any struct above it is optional, and takes its own default, or
else the value its parent struct's default gives it. Map fields are not supported, and
two paths that flatten to the same name are an error. A null nested struct adds no
values: its fields read back as their defaults (or null). A struct that is already flat
passes through as is (Kafka copies it and writes defaults into null fields; the values
read the same).

Null keys/values (tombstones) pass through unchanged, schema included.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect.api import (
    ConfigModel,
    ConnectRecord,
    DataException,
    Field,
    Schema,
    SchemaBuilder,
    Struct,
    Type,
    importance,
)
from transforms.parts import Key, PartTransformation, Value
from transforms.requirements import record_error, require_map, require_struct, type_name
from transforms.schemas import LruCache, copy_basics, derived

PURPOSE = "flattening"

# Python types of schemaless values that Connect copies as they are (bool is an int).
_LEAVES = (str, int, float, bytes, bytearray, memoryview, list)

# How to fill the flat struct from a nested one: per input field, its name and either the
# output field's name (a leaf) or the plan of the nested struct.
Plan = tuple[tuple[str, str | None, Any], ...]


class FlattenConfig(ConfigModel):
    delimiter: str = Field(
        ".",
        alias="delimiter",
        description="Delimiter to insert between field names from the input record when generating field "
        "names for the output record",
        json_schema_extra=importance("MEDIUM"),
    )


def _builder_like(schema: Schema) -> SchemaBuilder:
    """A builder of the same type and identity (Kafka's ``copySchemaBasics(schema)``)."""
    if schema.type is Type.ARRAY:
        assert schema.value_schema is not None
        builder = SchemaBuilder.array(schema.value_schema)
    else:
        builder = SchemaBuilder(schema.type)
    return copy_basics(schema, builder)


class Flatten(PartTransformation):
    Config = FlattenConfig

    def configure(self, configs: Mapping[str, Any]) -> None:
        self.config = FlattenConfig.parse(configs)
        self.delimiter = self.config.delimiter
        self._schemas: LruCache[Schema, tuple[Schema, Plan]] = LruCache()

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        value = self.value_of(record)
        if value is None:
            return record
        schema = self.schema_of(record)
        if schema is None:
            return self._schemaless(record, value)
        return self._with_schema(record, schema, value)

    def _name(self, prefix: str, name: Any) -> Any:
        return name if not prefix else f"{prefix}{self.delimiter}{name}"

    # -- schemaless -------------------------------------------------------------------------------

    def _schemaless(self, record: ConnectRecord, value: Any) -> ConnectRecord:
        data = require_map(self, record, value, PURPOSE)
        for v in data.values():
            if isinstance(v, dict):
                break
        else:
            # Already flat: only check that every value is one Connect knows.
            for k, v in data.items():
                if v is not None and not isinstance(v, _LEAVES):
                    raise record_error(self, record, self._unsupported(v, k))
            return record
        out: dict[Any, Any] = {}
        self._flatten_map(record, data, "", out)
        return self.replace(record, None, out)

    def _flatten_map(
        self, record: ConnectRecord, data: dict[Any, Any], prefix: str, out: dict[Any, Any]
    ) -> None:
        for k, v in data.items():
            name = self._name(prefix, k)
            if v is None or isinstance(v, _LEAVES):
                out[name] = v
            elif isinstance(v, dict):
                self._flatten_map(record, v, str(name), out)
            else:
                raise record_error(self, record, self._unsupported(v, name))

    @staticmethod
    def _unsupported(value: Any, name: Any) -> str:
        if isinstance(value, Struct):
            return (
                f"Flatten transformation does not support {type_name(value)} for record without schemas "
                f"(for field {name})."
            )
        return (
            f"Flatten transformation was passed a value of type {type_name(value)} which is not supported "
            "by Connect's data API"
        )

    # -- with schema ------------------------------------------------------------------------------

    def _with_schema(self, record: ConnectRecord, schema: Schema, value: Any) -> ConnectRecord:
        struct = require_struct(self, record, value, PURPOSE)
        flat_schema, plan = derived(self, record, self._schemas, schema, self._derive)
        if flat_schema is schema:
            return record
        out = Struct(flat_schema)
        try:
            self._fill(struct, plan, out)
        except DataException as exc:
            raise record_error(self, record, str(exc)) from None
        return self.replace(record, flat_schema, out)

    def _derive(self, schema: Schema) -> tuple[Schema, Plan]:
        if schema.type is not Type.STRUCT:
            raise DataException(f"Cannot list fields on non-struct type {schema.type.name}")
        builder = copy_basics(schema, SchemaBuilder.struct())
        default = schema.default_value if isinstance(schema.default_value, Struct) else None
        plan = self._add_fields(schema, "", builder, schema.optional, default)
        flat = builder.build()
        # An already flat struct comes out equal: keep the input schema so records pass through.
        return (schema if flat == schema else flat), plan

    def _add_fields(
        self,
        schema: Schema,
        prefix: str,
        builder: SchemaBuilder,
        optional: bool,
        parent_default: Struct | None,
    ) -> Plan:
        plan: list[tuple[str, str | None, Any]] = []
        for f in schema.fields:
            name = self._name(prefix, f.name)
            field_schema = f.schema
            field_optional = optional or field_schema.optional
            default = field_schema.default_value
            if default is None and parent_default is not None:
                default = parent_default.get(f.name)
            t = field_schema.type
            if t is Type.STRUCT:
                nested_default = default if isinstance(default, Struct) else None
                plan.append(
                    (
                        f.name,
                        None,
                        self._add_fields(field_schema, name, builder, field_optional, nested_default),
                    )
                )
            elif t is Type.MAP:
                raise DataException(
                    f"Flatten transformation does not support MAP for record with schemas (for field {name})."
                )
            else:
                flat = _builder_like(field_schema)
                if field_optional:
                    flat.optional()
                if default is not None:
                    flat.default_value(default)
                builder.field(name, flat.build())
                plan.append((f.name, name, None))
        return tuple(plan)

    def _fill(self, struct: Struct, plan: Plan, out: Struct) -> None:
        for name, out_name, nested_plan in plan:
            if out_name is not None:
                out.put(out_name, struct.get(name))  # defaults apply, as in Kafka
            else:
                nested = struct.get_without_default(name)
                if nested is not None:
                    self._fill(nested, nested_plan, out)


class FlattenKey(Key, Flatten):
    aliases = ("org.apache.kafka.connect.transforms.Flatten$Key",)


class FlattenValue(Value, Flatten):
    aliases = ("org.apache.kafka.connect.transforms.Flatten$Value",)
