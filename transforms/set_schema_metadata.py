"""SetSchemaMetadata: set the name and/or version of the key or value schema.

``schema.name=com.example.Order`` and ``schema.version=3`` replace the schema's name and
version (whichever is configured; the other is kept). Everything else about the schema
stays: type, fields, optionality, default, doc and parameters. A Struct value is
rebuilt on the renamed schema (a Struct belongs to its schema), copying each field
(``replace.null.with.default`` decides whether a null field with a default is copied
as the default or as null); other values are kept as they are.

The record must have a schema: a schemaless key or value is an error ("Schema required
for [updating schema metadata]"), except a null one without a schema, which passes
through. A null with a schema gets the new schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BeforeValidator

from connect.api import (
    Boolean,
    ConfigIssue,
    ConfigModel,
    ConnectRecord,
    DataException,
    Field,
    Schema,
    Struct,
    importance,
)
from transforms.java_numbers import NumberFormatError, java_trim, parse_int
from transforms.parts import Key, PartTransformation, Value
from transforms.requirements import record_error
from transforms.schemas import LruCache
from transforms.settings import replace_null_with_default

PURPOSE = "updating schema metadata"


def _java_int(value: Any) -> Any:
    """Kafka's INT config type: a 32-bit int, or text ``Integer.parseInt`` accepts."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            return parse_int(java_trim(value), 32)
        except NumberFormatError:
            pass
    elif isinstance(value, int) and not isinstance(value, bool) and -(2**31) <= value < 2**31:
        return value
    raise ValueError("Not a number of type INT")


class SetSchemaMetadataConfig(ConfigModel):
    name: str | None = Field(
        None, alias="schema.name", description="Schema name to set.", json_schema_extra=importance("HIGH")
    )
    version: Annotated[int | None, BeforeValidator(_java_int)] = Field(
        None,
        alias="schema.version",
        description="Schema version to set.",
        json_schema_extra=importance("HIGH"),
    )
    replace_null_with_default: Boolean = replace_null_with_default()

    @classmethod
    def problems(cls, props: Mapping[str, Any]) -> list[ConfigIssue]:
        if props.get("schema.name") is None and props.get("schema.version") is None:
            return [ConfigIssue("schema.name", "Neither schema name nor version configured")]
        return []


class SetSchemaMetadata(PartTransformation):
    Config = SetSchemaMetadataConfig

    def configure(self, configs: Mapping[str, Any]) -> None:
        config = self.config = SetSchemaMetadataConfig.parse(configs)
        self.name = config.name
        self.version = config.version
        self.replace_null = config.replace_null_with_default
        # Kafka builds the schema per record; one per input schema gives the same result.
        self._schemas: LruCache[Schema, Schema] = LruCache()

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        value = self.value_of(record)
        schema = self.schema_of(record)
        if schema is None:
            if value is None:
                return record
            raise record_error(self, record, f"Schema required for [{PURPOSE}]")
        updated = self._schemas.get(schema)
        try:
            if updated is None:
                updated = self._updated(schema)
                self._schemas.put(schema, updated)
            if isinstance(value, Struct):
                value = self._rebuilt(value, updated)
            elif updated is schema:
                return record  # name and version are already the configured ones
        except DataException as exc:
            raise record_error(self, record, str(exc)) from None
        return self.replace(record, updated, value)

    def _updated(self, schema: Schema) -> Schema:
        name = schema.name if self.name is None else self.name
        version = schema.version if self.version is None else self.version
        if name == schema.name and version == schema.version:
            return schema
        default = schema.default_value
        if isinstance(default, Struct):
            # A struct default is a Struct of the schema (minus its default): rebuild it too.
            default = self._rebuilt(default, self._with(schema, name, version, None))
        return self._with(schema, name, version, default)

    @staticmethod
    def _with(schema: Schema, name: str | None, version: int | None, default: Any) -> Schema:
        return Schema(
            schema.type,
            optional=schema.optional,
            default_value=default,
            name=name,
            version=version,
            doc=schema.doc,
            parameters=schema.parameters,
            key_schema=schema.key_schema,
            value_schema=schema.value_schema,
            fields=schema.fields,
        )

    def _rebuilt(self, struct: Struct, schema: Schema) -> Struct:
        """``struct``'s fields copied into a Struct of ``schema`` (Kafka's ``updateSchemaIn``)."""
        if struct.schema.fields == schema.fields:  # the usual case: same fields, new name/version
            return Struct.from_values(schema, struct.values(self.replace_null))
        out = Struct(schema)
        get = struct.get if self.replace_null else struct.get_without_default
        for f in schema.fields:
            out.put(f.name, get(f.name))
        return out


class SetSchemaMetadataKey(Key, SetSchemaMetadata):
    aliases = ("org.apache.kafka.connect.transforms.SetSchemaMetadata$Key",)


class SetSchemaMetadataValue(Value, SetSchemaMetadata):
    aliases = ("org.apache.kafka.connect.transforms.SetSchemaMetadata$Value",)
