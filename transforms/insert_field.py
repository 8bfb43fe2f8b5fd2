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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from connect.api import (
    Boolean,
    ConfigIssue,
    ConfigModel,
    ConnectRecord,
    DataException,
    Field,
    RecordColumns,
    Schema,
    SchemaBuilder,
    SinkRecord,
    Struct,
    StructColumn,
    Timestamp,
    importance,
)
from transforms.parts import Key, PartTransformation, Value
from transforms.requirements import record_error, require_map, require_sink_record, require_struct
from transforms.schemas import LruCache, copy_basics, derived, field_columns
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

    def apply_columns(self, batch: RecordColumns[ConnectRecord]) -> None:
        """``apply`` over the columns: the same values, no record made. A row it cannot do
        here (not a map or struct, an offset of a source record) raises, and the chain then
        runs the stage record by record, where the error names the record."""
        schemas, values = self.columns(batch)
        if self.offset is not None and not all(isinstance(r, SinkRecord) for r in batch.records):
            raise DataException("offset.field needs sink records")
        if isinstance(values, StructColumn):
            self._insert_columns(batch, values)
            return
        topics, partitions, timestamps = batch.topic, batch.kafka_partition, batch.timestamp
        offsets = (
            [getattr(r, "kafka_offset", None) for r in batch.records] if self.offset is not None else None
        )
        topic, partition, offset, timestamp, static = (
            self.topic,
            self.partition,
            self.offset,
            self.timestamp,
            self.static,
        )
        static_value, replace_null = self.static_value, self.replace_null
        cache = self._schemas
        from_values, unchecked = Struct.from_values, Struct.unchecked
        specs = [spec for spec in (topic, partition, offset, timestamp, static) if spec is not None]
        inserted = len(specs)
        required_inserted = any(not spec.optional for spec in specs)
        out_schemas: list[Schema | None] = []
        out_values: list[Any] = []
        last: Schema | None = None
        updated: Schema | None = None
        for i, (schema, value) in enumerate(zip(schemas, values, strict=True)):
            if value is None:
                out_schemas.append(schema)
                out_values.append(None)
                continue
            if schema is None:
                if type(value) is not dict:
                    raise DataException("not a map")
                out = dict(value)
                if topic is not None:
                    out[topic.name] = topics[i]
                if partition is not None and partitions[i] is not None:
                    out[partition.name] = partitions[i]
                if offsets is not None and offset is not None:
                    out[offset.name] = offsets[i]
                if timestamp is not None and timestamps[i] is not None:
                    out[timestamp.name] = timestamps[i]
                if static is not None:
                    out[static.name] = static_value
                out_schemas.append(None)
                out_values.append(out)
                continue
            if type(value) is not Struct:
                raise DataException("not a struct")
            own = value.schema
            if own is not last:
                updated = cache.get_or_compute(own, self._updated_schema)
                last = own
            assert updated is not None
            row = value.values(replace_null)
            if topic is not None:
                row.append(topics[i])
            if partition is not None:
                row.append(partitions[i])
            if offsets is not None:
                row.append(offsets[i])
            if timestamp is not None:
                ts = timestamps[i]
                row.append(None if ts is None else Timestamp.to_logical(Timestamp.SCHEMA, ts))
            if static is not None:
                row.append(static_value)
            # The struct's own values were checked when it was made, and the inserted ones
            # have their fields' types by construction: only a null in a required inserted
            # field needs the full check (which then raises).
            if required_inserted and None in row[len(row) - inserted :]:
                out_values.append(from_values(updated, row))
            else:
                out_values.append(unchecked(updated, row))
            out_schemas.append(updated)
        self.set_columns(batch, out_schemas, out_values)

    def _insert_columns(self, batch: RecordColumns[ConnectRecord], structs: StructColumn) -> None:
        """Structs held column-wise get the inserted fields as whole columns."""
        updated = self._schemas.get_or_compute(structs.schema, self._updated_schema)
        fields = field_columns(structs, self.replace_null)
        n = len(structs)
        inserted: list[tuple[InsertionSpec | None, Sequence[Any]]] = [
            (self.topic, list(batch.topic)),
            (self.partition, list(batch.kafka_partition)),
            (self.offset, [getattr(r, "kafka_offset", None) for r in batch.records] if self.offset else ()),
            (
                self.timestamp,
                [None if ts is None else Timestamp.to_logical(Timestamp.SCHEMA, ts) for ts in batch.timestamp]
                if self.timestamp
                else (),
            ),
            (self.static, [self.static_value] * n),
        ]
        for spec, column in inserted:
            if spec is None:
                continue
            if not spec.optional and None in column:
                raise DataException(f"null for the required field {spec.name}")  # record by record says where
            fields.append(column)
        self.set_columns(batch, [updated] * n, StructColumn(updated, fields, n))

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
