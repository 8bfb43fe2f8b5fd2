"""HeaderFrom: copy or move fields of the key or value into the record's headers.

``fields=id,region`` with ``headers=x-id,x-region`` adds a header ``x-id`` with the
value of field ``id`` and ``x-region`` with ``region``; the two lists pair up by
position and must have the same length. The same field may feed several headers and
several fields may feed headers of the same name. Headers are appended: headers the
record already has stay, even with the same name.

``operation=copy`` leaves the key/value untouched; ``operation=move`` removes the
fields (with a schema, the struct's schema without them is derived once per input
schema). With a schema each header gets the field's schema; without one, no schema.
A field missing from a schemaless map gives a null header. A field the schema does not
have is a data error naming the field (Kafka fails with a NullPointerException there).

A null key/value (tombstone) is an error, as in Kafka.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import field_validator

from connect.api import (
    Boolean,
    ConfigIssue,
    ConfigModel,
    ConnectRecord,
    DataException,
    Field,
    Schema,
    SchemaBuilder,
    Struct,
    importance,
)
from transforms.parts import Key, PartTransformation, Value
from transforms.requirements import record_error, require_map, require_struct
from transforms.schemas import LruCache, copy_basics, derived
from transforms.settings import NameList, replace_null_with_default, split_list

_LENGTHS = "'fields' config must have the same number of elements as 'headers' config."

# Per input schema: the output schema (the input one for copy), and per configured pair
# the header name, the field name and the field's schema.
Plan = tuple[Schema, tuple[tuple[str, int, Schema], ...], tuple[int, ...]]


def _non_empty(v: list[str]) -> list[str]:
    if not v:
        raise ValueError("Empty list")
    return v


class HeaderFromConfig(ConfigModel):
    fields: NameList = Field(
        alias="fields",
        description="Field names in the record whose values are to be copied or moved to headers.",
        json_schema_extra=importance("HIGH"),
    )
    headers: NameList = Field(
        alias="headers",
        description="Header names, in the same order as the field names listed in the fields configuration "
        "property.",
        json_schema_extra=importance("HIGH"),
    )
    operation: Literal["move", "copy"] = Field(
        alias="operation",
        description="Either <code>move</code> if the fields are to be moved to the headers (removed from the "
        "key/value), or <code>copy</code> if the fields are to be copied to the headers (retained in the "
        "key/value).",
        json_schema_extra=importance("HIGH"),
    )
    replace_null_with_default: Boolean = replace_null_with_default()

    @field_validator("fields", "headers")
    @classmethod
    def _lists(cls, v: list[str]) -> list[str]:
        return _non_empty(v)

    @field_validator("operation", mode="before")
    @classmethod
    def _operation(cls, v: Any) -> Any:
        op = v.strip() if isinstance(v, str) else v
        if op not in ("move", "copy"):
            raise ValueError("String must be one of: move, copy")
        return op

    @classmethod
    def problems(cls, props: Mapping[str, Any]) -> list[ConfigIssue]:
        fields, headers = split_list(props.get("fields")), split_list(props.get("headers"))
        if isinstance(fields, list) and isinstance(headers, list) and len(fields) != len(headers):
            return [ConfigIssue("headers", _LENGTHS)]
        return []


class HeaderFrom(PartTransformation):
    Config = HeaderFromConfig

    def configure(self, configs: Mapping[str, Any]) -> None:
        config = self.config = HeaderFromConfig.parse(configs)
        self.pairs = tuple(zip(config.headers, config.fields, strict=True))
        self.moved = frozenset(config.fields)
        self.move = config.operation == "move"
        self.purpose = f"header {config.operation}"
        self.replace_null = config.replace_null_with_default
        self._plans: LruCache[Schema, Plan] = LruCache()

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        schema = self.schema_of(record)
        value = self.value_of(record)
        if schema is None:
            return self._schemaless(record, value)
        return self._with_schema(record, schema, value)

    def _schemaless(self, record: ConnectRecord, value: Any) -> ConnectRecord:
        data = require_map(self, record, value, self.purpose)
        if self.move:
            kept = {k: v for k, v in data.items() if k not in self.moved}
            out = self.replace(record, None, kept)
        else:
            out = record.new_record()
        headers = out.headers  # new_record copied them: append to the copy
        for header, field in self.pairs:
            headers.add(header, data.get(field), None)
        return out

    def _with_schema(self, record: ConnectRecord, schema: Schema, value: Any) -> ConnectRecord:
        struct = require_struct(self, record, value, self.purpose)
        updated, entries, kept = derived(self, record, self._plans, schema, self._plan)
        if struct.schema is schema or struct.schema == schema:
            values = struct.values(self.replace_null)  # positions line up with the plan's
        else:
            # A struct that does not have the record's schema: read the planned fields by name.
            get = struct.get if self.replace_null else struct.get_without_default
            try:
                values = [get(f.name) for f in schema.fields]
            except DataException as exc:
                raise record_error(self, record, str(exc)) from None
        try:
            if self.move:
                moved = Struct.from_values(updated, [values[i] for i in kept])
                out = self.replace(record, updated, moved)
            else:
                out = record.new_record()  # copy: the key/value stay as they are
            headers = out.headers
            for header, index, field_schema in entries:
                header_value = values[index]
                if header_value is None and not field_schema.optional:
                    # Kafka's ConnectHeaders.add refuses this; our Headers do not check.
                    raise DataException(f"A null value requires an optional schema but was {field_schema!r}")
                headers.add(header, header_value, field_schema)
        except DataException as exc:
            raise record_error(self, record, str(exc)) from None
        return out

    def _plan(self, schema: Schema) -> Plan:
        """(schema after a move, (header, field index, field schema) per pair, indexes kept)."""
        entries = []
        for header, name in self.pairs:
            field = schema.field(name)  # DataException on a schema that is not a struct
            if field is None:
                raise DataException(f"Field does not exist: {name}")
            entries.append((header, field.index, field.schema))
        if not self.move:
            return schema, tuple(entries), ()
        builder = copy_basics(schema, SchemaBuilder.struct())
        kept = []
        for f in schema.fields:
            if f.name not in self.moved:
                builder.field(f.name, f.schema)
                kept.append(f.index)
        return builder.build(), tuple(entries), tuple(kept)


class HeaderFromKey(Key, HeaderFrom):
    aliases = ("org.apache.kafka.connect.transforms.HeaderFrom$Key",)


class HeaderFromValue(Value, HeaderFrom):
    aliases = ("org.apache.kafka.connect.transforms.HeaderFrom$Value",)
