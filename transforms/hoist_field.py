"""HoistField: wrap the key or value in a struct (or map) with a single field.

``field=line`` turns the value ``"hello"`` into ``{"line": "hello"}``: a Struct with
schema ``struct{line: <the old schema>}`` when the record has a schema, a dict when
it has none. A null is wrapped too (``{"line": null}``), as Kafka does; with a schema
that is an error unless the old schema is optional. An empty ``field`` is refused as a
config error (Kafka accepts it and fails on the first record with a schema).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import field_validator

from connect.api import (
    ConfigModel,
    ConnectRecord,
    DataException,
    Field,
    RecordColumns,
    Schema,
    SchemaBuilder,
    Struct,
    StructColumn,
    importance,
)
from transforms.parts import Key, PartTransformation, Value
from transforms.requirements import record_error
from transforms.schemas import LruCache, derived


class HoistFieldConfig(ConfigModel):
    field: str = Field(
        alias="field",
        description="Field name for the single field that will be created in the resulting Struct or Map.",
        json_schema_extra=importance("MEDIUM"),
    )

    @field_validator("field")
    @classmethod
    def _named(cls, v: str) -> str:
        # Kafka takes an empty name and fails on the first record with a schema.
        if not v:
            raise ValueError("String must be non-empty")
        return v


class HoistField(PartTransformation):
    Config = HoistFieldConfig

    def configure(self, configs: Mapping[str, Any]) -> None:
        self.config = HoistFieldConfig.parse(configs)
        self.field = self.config.field
        self._schemas: LruCache[Schema, Schema] = LruCache()

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        schema = self.schema_of(record)
        value = self.value_of(record)
        if schema is None:
            return self.replace(record, None, {self.field: value})
        hoisted = derived(self, record, self._schemas, schema, self._hoisted)
        try:
            struct = Struct.from_values(hoisted, (value,))
        except DataException as exc:
            raise record_error(self, record, str(exc)) from None
        return self.replace(record, hoisted, struct)

    def apply_columns(self, batch: RecordColumns[ConnectRecord]) -> None:
        schemas, values = self.columns(batch)
        first = schemas[0] if schemas else None
        if first is not None and schemas.count(first) == len(schemas) and first.fits_all(values):
            # One schema for the whole batch (a topic's usual case), every value valid for it:
            # the values become the one field column of a StructColumn, nothing per row.
            hoisted = self._schemas.get_or_compute(first, self._hoisted)
            self.set_columns(batch, [hoisted] * len(schemas), StructColumn(hoisted, [values]))
            return
        field = self.field
        cache = self._schemas
        from_values = Struct.from_values
        out_schemas: list[Schema | None] = []
        out_values: list[Any] = []
        last: Schema | None = None
        hoisted_schema: Schema | None = None
        for schema, value in zip(schemas, values, strict=True):
            if schema is None:
                out_schemas.append(None)
                out_values.append({field: value})
                continue
            if schema is not last:
                hoisted_schema = cache.get_or_compute(schema, self._hoisted)
                last = schema
            assert hoisted_schema is not None
            # A value the schema refuses raises: the chain then goes record by record.
            out_values.append(from_values(hoisted_schema, (value,)))
            out_schemas.append(hoisted_schema)
        self.set_columns(batch, out_schemas, out_values)

    def _hoisted(self, schema: Schema) -> Schema:
        return SchemaBuilder.struct().field(self.field, schema).build()


class HoistFieldKey(Key, HoistField):
    aliases = ("org.apache.kafka.connect.transforms.HoistField$Key",)


class HoistFieldValue(Value, HoistField):
    aliases = ("org.apache.kafka.connect.transforms.HoistField$Value",)
