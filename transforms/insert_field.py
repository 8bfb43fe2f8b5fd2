"""InsertField: add the record's topic, partition, offset, timestamp or a static value as
fields of the key or value.

Each ``*.field`` names the field to add; a ``!`` suffix makes it a required field of
the output schema, ``?`` (the default) an optional one. With a schema the output
struct has the input's fields followed by the inserted ones in Kafka's order (topic,
partition, offset, timestamp, static): topic and static are STRING, partition INT32,
offset INT64 and the timestamp a ``Timestamp``. Without a schema the map gets the
raw values (the timestamp as epoch milliseconds). Null values (tombstones) pass
through untouched. ``offset.field`` only makes sense for sink records; on a source
record it is an error, as in Kafka. A required (``!``) partition or timestamp field of a
record that has none is an error here; Kafka leaves the field unset and the converter
refuses the struct later.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

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
    Timestamp,
    importance,
)
from transforms.parts import Key, PartTransformation, Value
from transforms.requirements import record_error, require_map, require_sink_record, require_struct
from transforms.schemas import LruCache, copy_basics, derived
from transforms.settings import replace_null_with_default

PURPOSE = "field insertion"
_SUFFIX_DOC = " Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it "
_SUFFIX_DOC += "optional (the default)."


def _spec_field(key: str, doc: str) -> Any:
    return Field(None, alias=key, description=doc + _SUFFIX_DOC, json_schema_extra=importance("MEDIUM"))


class InsertFieldConfig(ConfigModel):
    topic_field: str | None = _spec_field("topic.field", "Field name for Kafka topic.")
    partition_field: str | None = _spec_field("partition.field", "Field name for Kafka partition.")
    offset_field: str | None = _spec_field(
        "offset.field", "Field name for Kafka offset - only applicable to sink connectors."
    )
    timestamp_field: str | None = _spec_field("timestamp.field", "Field name for record timestamp.")
    static_field: str | None = _spec_field("static.field", "Field name for static data field.")
    static_value: str | None = Field(
        None,
        alias="static.value",
        description="Static field value, if field name configured.",
        json_schema_extra=importance("MEDIUM"),
    )
    replace_null_with_default: Boolean = replace_null_with_default()

    @classmethod
    def problems(cls, props: Mapping[str, Any]) -> list[ConfigIssue]:
        keys = ("topic.field", "partition.field", "offset.field", "timestamp.field", "static.field")
        if all(props.get(k) is None for k in keys):
            return [
                ConfigIssue(
                    "topic.field", "No field insertion configured: set at least one of " + ", ".join(keys)
                )
            ]
        if props.get("static.field") is not None and props.get("static.value") is None:
            return [
                ConfigIssue(
                    "static.value",
                    "Invalid value null for configuration static.value: "
                    f"No value specified for static field: {props['static.field']}",
                )
            ]
        # Names are checked here too: Kafka only fails on them at the first record with a
        # schema (an empty name, or two settings naming the same field).
        issues: list[ConfigIssue] = []
        seen: dict[str, str] = {}
        for key in keys:
            spec = InsertionSpec.parse(props[key].strip()) if isinstance(props.get(key), str) else None
            if spec is None:
                continue
            if not spec.name:
                issues.append(
                    ConfigIssue(key, f"Invalid value {props[key]} for configuration {key}: no field name")
                )
            elif spec.name in seen:
                issues.append(
                    ConfigIssue(
                        key,
                        f"Invalid value {props[key]} for configuration {key}: "
                        f"field {spec.name} is already inserted by {seen[spec.name]}",
                    )
                )
            else:
                seen[spec.name] = key
        return issues


@dataclass(frozen=True, slots=True)
class InsertionSpec:
    """A field to insert: its name, and whether the output schema makes it optional."""

    name: str
    optional: bool

    @staticmethod
    def parse(spec: str | None) -> InsertionSpec | None:
        if spec is None:
            return None
        if spec.endswith("?"):
            return InsertionSpec(spec[:-1], True)
        if spec.endswith("!"):
            return InsertionSpec(spec[:-1], False)
        return InsertionSpec(spec, True)


class InsertField(PartTransformation):
    Config = InsertFieldConfig

    def configure(self, configs: Mapping[str, Any]) -> None:
        config = self.config = InsertFieldConfig.parse(configs)
        self.topic = InsertionSpec.parse(config.topic_field)
        self.partition = InsertionSpec.parse(config.partition_field)
        self.offset = InsertionSpec.parse(config.offset_field)
        self.timestamp = InsertionSpec.parse(config.timestamp_field)
        self.static = InsertionSpec.parse(config.static_field)
        self.static_value = config.static_value
        self.replace_null = config.replace_null_with_default
        self._schemas: LruCache[Schema, Schema] = LruCache()

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        value = self.value_of(record)
        if value is None:
            return record  # tombstones pass through (KAFKA-8523)
        schema = self.schema_of(record)
        if schema is None:
            return self._schemaless(record, value)
        return self._with_schema(record, schema, value)

    def _schemaless(self, record: ConnectRecord, value: Any) -> ConnectRecord:
        out = dict(require_map(self, record, value, PURPOSE))
        if self.topic is not None:
            out[self.topic.name] = record.topic
        if self.partition is not None and record.kafka_partition is not None:
            out[self.partition.name] = record.kafka_partition
        if self.offset is not None:
            out[self.offset.name] = require_sink_record(self, record, PURPOSE).kafka_offset
        if self.timestamp is not None and record.timestamp is not None:
            out[self.timestamp.name] = record.timestamp
        if self.static is not None:
            out[self.static.name] = self.static_value
        return self.replace(record, None, out)

    def _with_schema(self, record: ConnectRecord, schema: Schema, value: Any) -> ConnectRecord:
        struct = require_struct(self, record, value, PURPOSE)
        schema = struct.schema  # Kafka keys its cache on the struct's own schema
        updated = derived(self, record, self._schemas, schema, self._updated_schema)
        offset = require_sink_record(self, record, PURPOSE).kafka_offset if self.offset is not None else None
        values = struct.values(self.replace_null)
        # The inserted fields follow the struct's own, in the order _updated_schema added them.
        if self.topic is not None:
            values.append(record.topic)
        if self.partition is not None:
            values.append(record.kafka_partition)
        if self.offset is not None:
            values.append(offset)
        try:
            if self.timestamp is not None:
                ts = record.timestamp
                values.append(None if ts is None else Timestamp.to_logical(Timestamp.SCHEMA, ts))
            if self.static is not None:
                values.append(self.static_value)
            out = Struct.from_values(updated, values)
        except DataException as exc:
            raise record_error(self, record, str(exc)) from None
        return self.replace(record, updated, out)

    def _updated_schema(self, schema: Schema) -> Schema:
        builder = copy_basics(schema, SchemaBuilder.struct())
        for f in schema.fields:
            builder.field(f.name, f.schema)
        for spec, field_builder in (
            (self.topic, SchemaBuilder.string),
            (self.partition, SchemaBuilder.int32),
            (self.offset, SchemaBuilder.int64),
            (self.timestamp, Timestamp.builder),
            (self.static, SchemaBuilder.string),
        ):
            if spec is not None:
                fb = field_builder()
                builder.field(spec.name, (fb.optional() if spec.optional else fb).build())
        return builder.build()


class InsertFieldKey(Key, InsertField):
    aliases = ("org.apache.kafka.connect.transforms.InsertField$Key",)


class InsertFieldValue(Value, InsertField):
    aliases = ("org.apache.kafka.connect.transforms.InsertField$Value",)
