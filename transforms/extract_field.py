"""ExtractField: replace the key or value with one of its fields.

``field=id`` turns the value ``{"id": 7, "name": "ann"}`` into ``7``. With a schema
the output schema is the field's schema (optional flag and default included);
without one the value is read from the map and a missing key gives null.

``field.syntax.version=V2`` (KIP-821) reads nested fields with a dotted path:
``field=customer.address.city``; backticks quote a name that contains dots
(```customer.id`.value``). With ``V1`` (the default) the whole setting is one
top-level field name, dots included. See ``transforms.field_path`` for the exact rules.

Nulls: a null key/value stays null. Without a schema the output schema is null; with
one the path is still resolved against the schema, so the output carries the field's
schema. A null intermediate struct or map also gives null.

Errors: a path that the record's schema does not have is a data error ("Unknown
field: customer.zip"). Kafka throws an ``IllegalArgumentException`` there; ours is a
``DataException`` so that ``errors.tolerance`` and the dead letter queue handle it like
any other bad record. A V2 path with an unclosed backtick is refused when the
connector is configured, on the ``field`` key; so is an empty V2 path, which Kafka
accepts and then fails on every record.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import field_validator

from connect.api import Boolean, ConfigIssue, ConfigModel, ConnectRecord, DataException, Field, importance
from transforms.field_path import FieldPathError, field_schema, map_value, parse_path, struct_value
from transforms.parts import Key, PartTransformation, Value
from transforms.requirements import record_error, require_map, require_struct
from transforms.settings import replace_null_with_default

PURPOSE = "field extraction"
FIELD_SYNTAX_VERSION = "field.syntax.version"

_SYNTAX_DOC = (
    "Defines the version of the syntax to access fields. If set to <code>V1</code>, then the field paths are "
    "limited to access the elements at the root level of the struct or map. If set to <code>V2</code>, the "
    "syntax will support accessing nested elements. To access nested elements, dotted notation is used. If "
    "dots are already included in the field name, then backtick pairs can be used to wrap field names "
    'containing dots. E.g. to access the subfield <code>baz</code> from a field named "foo.bar" in a '
    'struct/map the following format can be used to access its elements: "<code>foo.bar</code>.baz".'
)


def _syntax_version(value: Any) -> Literal["V1", "V2"] | None:
    """The version a raw setting names (Kafka compares case-insensitively), or None."""
    if not isinstance(value, str):
        return None
    upper = value.strip().upper()
    if upper == "V1":
        return "V1"
    return "V2" if upper == "V2" else None


class ExtractFieldConfig(ConfigModel):
    field: str = Field(
        alias="field", description="Field name to extract.", json_schema_extra=importance("MEDIUM")
    )
    replace_null_with_default: Boolean = replace_null_with_default()
    field_syntax_version: Literal["V1", "V2"] = Field(
        "V1", alias="field.syntax.version", description=_SYNTAX_DOC, json_schema_extra=importance("HIGH")
    )

    @field_validator("field_syntax_version", mode="before")
    @classmethod
    def _known_version(cls, v: Any) -> Any:
        version = _syntax_version(v)
        if version is None:
            raise ValueError("String must be one of (case insensitive): V1, V2")
        return version

    @classmethod
    def problems(cls, props: Mapping[str, Any]) -> list[ConfigIssue]:
        # The path's validity depends on the syntax version: a check across two keys,
        # reported on ``field`` as Kafka's SingleFieldPath does at configure.
        path = props.get("field")
        if not isinstance(path, str) or _syntax_version(props.get(FIELD_SYNTAX_VERSION, "V1")) != "V2":
            return []
        path = path.strip()
        if not path:
            return [
                ConfigIssue("field", "Invalid value  for configuration field: Field path must not be empty")
            ]
        try:
            parse_path(path, "V2")
        except FieldPathError as exc:
            return [ConfigIssue("field", str(exc))]
        return []


class ExtractField(PartTransformation):
    Config = ExtractFieldConfig

    def configure(self, configs: Mapping[str, Any]) -> None:
        config = self.config = ExtractFieldConfig.parse(configs)
        self.field = config.field
        self.steps = parse_path(config.field, config.field_syntax_version)
        self.replace_null = config.replace_null_with_default
        # Most paths are one top-level field: read it directly, without the path walk.
        self._single = self.steps[0] if len(self.steps) == 1 else None

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        schema = self.schema_of(record)
        value = self.value_of(record)
        if schema is None:
            if value is None:
                return record  # already (null schema, null value)
            data = require_map(self, record, value, PURPOSE)
            if self._single is not None:
                return self.replace(record, None, data.get(self._single))
            try:
                return self.replace(record, None, map_value(data, self.steps))
            except DataException as exc:
                raise record_error(self, record, str(exc)) from None
        struct = None if value is None else require_struct(self, record, value, PURPOSE)
        try:
            extracted_schema = field_schema(schema, self.steps)
            if extracted_schema is None:
                raise DataException(f"Unknown field: {self.field}")
            if struct is None:
                return self.replace(record, extracted_schema, None)
            single = self._single
            if single is not None:
                extracted = struct.get(single) if self.replace_null else struct.get_without_default(single)
            else:
                extracted = struct_value(struct, self.steps, self.replace_null)
        except DataException as exc:
            raise record_error(self, record, str(exc)) from None
        return self.replace(record, extracted_schema, extracted)


class ExtractFieldKey(Key, ExtractField):
    aliases = ("org.apache.kafka.connect.transforms.ExtractField$Key",)


class ExtractFieldValue(Value, ExtractField):
    aliases = ("org.apache.kafka.connect.transforms.ExtractField$Value",)
