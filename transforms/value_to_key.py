"""ValueToKey: replace the record key with some fields of the value.

``fields=id,region`` turns a value ``{"id": 7, "region": "eu", "name": "ann"}`` into the
key ``{"id": 7, "region": "eu"}``; the value is left as it is. With a schema the key is
a Struct whose schema (unnamed, required) has the listed fields in the order of
``fields``, each with its schema from the value; that key schema is derived once per
value schema. A field the value schema does not have is an error; without a schema a
missing field gives null in the key.

A null value (tombstone) is an error, as in Kafka: there is nothing to build the key from.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import field_validator

from connect.api import (
    Boolean,
    ConfigModel,
    ConnectRecord,
    DataException,
    Field,
    Schema,
    SchemaBuilder,
    Struct,
    Transformation,
    importance,
)
from transforms.requirements import record_error, require_map, require_struct
from transforms.schemas import LruCache
from transforms.settings import NameList, check_names, replace_null_with_default

PURPOSE = "copying fields from value to key"


class ValueToKeyConfig(ConfigModel):
    fields: NameList = Field(
        alias="fields",
        description="Field names on the record value to extract as the record key.",
        json_schema_extra=importance("HIGH"),
    )
    replace_null_with_default: Boolean = replace_null_with_default()

    @field_validator("fields")
    @classmethod
    def _names(cls, v: list[str]) -> list[str]:
        return check_names("fields", v)


class ValueToKey(Transformation[ConnectRecord]):
    Config = ValueToKeyConfig
    aliases = ("org.apache.kafka.connect.transforms.ValueToKey",)

    def configure(self, configs: Mapping[str, Any]) -> None:
        config = self.config = ValueToKeyConfig.parse(configs)
        self.fields = tuple(config.fields)
        self.replace_null = config.replace_null_with_default
        self._schemas: LruCache[Schema, Schema] = LruCache()

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        value = record.value
        if record.value_schema is None:
            data = require_map(self, record, value, PURPOSE)
            return record.new_record(key_schema=None, key={f: data.get(f) for f in self.fields})
        struct = require_struct(self, record, value, PURPOSE)
        schema = struct.schema
        key_schema = self._schemas.get(schema)
        if key_schema is None:
            key_schema = self._key_schema(record, schema)
            self._schemas.put(schema, key_schema)
        get = struct.get if self.replace_null else struct.get_without_default
        try:
            key = Struct.from_values(key_schema, [get(f) for f in self.fields])
        except DataException as exc:
            raise record_error(self, record, str(exc)) from None
        return record.with_key(key_schema, key)

    def _key_schema(self, record: ConnectRecord, schema: Schema) -> Schema:
        builder = SchemaBuilder.struct()
        for name in self.fields:
            field = schema.field(name)
            if field is None:
                raise record_error(self, record, f"Field does not exist: {name}")
            builder.field(name, field.schema)
        return builder.build()
