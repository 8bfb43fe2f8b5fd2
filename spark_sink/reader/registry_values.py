"""Schema Registry-framed Avro keys and values decoded into Arrow, in Spark's executors
(JSON Schema and Protobuf: ``registry_decoders``); and the batches of decoded records.

Confluent's wire format is a magic byte 0, a 4-byte big-endian schema id, then Avro binary.
Each key or value is read with the *writer schema* its id names, through Avro schema
resolution into the reader schema the plan fixed (``registry_plan``): fields the reader
lacks are dropped, fields the writer lacks take the reader's defaults, ints widen; as
Confluent's deserializer does given a reader schema. Writer schemas are fetched with
confluent-kafka's SchemaRegistryClient once per id and Python worker, never per record.
Records are decoded one by one with fastavro, logical types left as their base values, and
turned into Arrow a column at a time: dates, times and timestamps by casts of the int
columns, decimals from their unscaled bytes by the reader schema's scale.

A record that does not decode (no magic byte, an id the registry does not know, bytes that
are not Avro of that schema, a writer schema that does not resolve into the reader's, a
value that does not fit its column) fails the read naming its topic, partition and offset
(``mode=FAILFAST``, the default, as ``from_avro``'s), or reads as nulls with its raw key
and value bytes and the reason in the corrupt record column (``mode=PERMISSIVE``): nothing
is lost. A registry that fails (other than "no such id") fails the read in either mode:
that is not the record's fault.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Union

import fastavro
import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
import pyarrow.compute as pc  # type: ignore[import-untyped, unused-ignore]
from confluent_kafka.schema_registry import SchemaRegistryClient
from pyspark.sql.pandas.types import from_arrow_type, to_arrow_schema, to_arrow_type

from connect.api import DataException, Date, Decimal, Schema, Time, Timestamp, Type
from connect.api.arrow import arrow_type
from connect.api.avro import UNION
from spark_sink.reader.registry_decoders import JsonSchemaDecoder, ProtobufDecoder
from spark_sink.reader.registry_formats import HEADER_SIZE, MAGIC_BYTE, framing_problem
from spark_sink.reader.registry_plan import (
    DecodePlan,
    FieldPlan,
    connect_schema,
    fetch_writer,
    referenced_schemas,
    registry_client,
    spark_schema,
)

Converter = Callable[[Any], Any]

#: fastavro reads every logical type as its base value (building a Decimal or a datetime
#: per value costs as much as decoding the rest of a record): dates, times and timestamps
#: become Arrow types by casts of whole columns, decimals from their unscaled bytes a column
#: at a time, by the reader schema's scale (as Java's Avro applies the reader's logical
#: types); logical types AvroData does not map stay their base values.
#: Parsed writer schemas by (registry url, id), shared by the tasks a Python worker runs.
_WRITERS: dict[tuple[str, int], Any] = {}
_MAX_CACHED = 1000


#: What decodes one side (key or value) of records, by format.
FieldDecoder = Union["_FieldDecoder", JsonSchemaDecoder, ProtobufDecoder]


class MalformedRecordError(RuntimeError):
    """A record's key or value did not decode (mode FAILFAST)."""


# ---------------------------------------------------------------------------------------
# Decoding (executors).


def _strip_logical(node: Any) -> Any:
    """The schema without its logical types (fastavro then reads the base values)."""
    if isinstance(node, list):
        return [_strip_logical(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _strip_logical(v) if k in ("type", "items", "values", "fields") else v for k, v in node.items()}
    out.pop("logicalType", None)
    return out


#: Connect's date/time types: the Arrow type of their Avro ints, and the Arrow type those
#: ints are a zero-copy view of (days, milliseconds of the day, milliseconds since the epoch).
_INT_VIEWS: dict[str, tuple[pa.DataType, pa.DataType]] = {
    Date.LOGICAL_NAME: (pa.int32(), pa.date32()),
    Time.LOGICAL_NAME: (pa.int32(), pa.time32("ms")),
    Timestamp.LOGICAL_NAME: (pa.int64(), pa.timestamp("ms", tz="UTC")),
}


def arrow_stages(schema: Schema, target: pa.DataType) -> tuple[pa.DataType, pa.DataType]:
    """(the Arrow type fastavro's datums are built into, the view it is cast to) on the way
    to ``target``, the column's type: dates, times and timestamps are ints at first,
    decimals their unscaled bytes (``decimal_columns`` makes them decimals before the cast)."""
    view = _INT_VIEWS.get(schema.name or "")
    if view is not None:
        return view
    if schema.name == Decimal.LOGICAL_NAME:
        return pa.binary(), target
    t = schema.type
    if t is Type.STRUCT and pa.types.is_struct(target):
        parts = [arrow_stages(f.schema, target.field(f.name).type) for f in schema.fields]
        names = [f.name for f in schema.fields]
        return (
            pa.struct([pa.field(n, b) for n, (b, _) in zip(names, parts, strict=True)]),
            pa.struct([pa.field(n, v) for n, (_, v) in zip(names, parts, strict=True)]),
        )
    if t is Type.ARRAY and pa.types.is_list(target):
        assert schema.value_schema is not None
        item = target.value_field
        base, view = arrow_stages(schema.value_schema, item.type)
        return pa.list_(item.with_type(base)), pa.list_(item.with_type(view))
    if t is Type.MAP and pa.types.is_map(target):
        assert schema.key_schema is not None and schema.value_schema is not None
        kb, kv = arrow_stages(schema.key_schema, target.key_type)
        vb, vv = arrow_stages(schema.value_schema, target.item_type)
        return pa.map_(kb, vb), pa.map_(kv, vv)
    return target, target


def parse_avro(schema: str, referenced: Sequence[str]) -> Any:
    """fastavro's parsed schema, its references resolved."""
    named: dict[str, Any] = {}
    for text in referenced:
        fastavro.parse_schema(_strip_logical(json.loads(text)), named_schemas=named)
    return fastavro.parse_schema(_strip_logical(json.loads(schema)), named_schemas=named)


def input_converter(schema: Schema) -> Converter | None:
    """What turns fastavro's datums into pyarrow's input for the column's type, or None when
    they go as they are: Connect's multi-type unions (a struct, one field per branch) and maps
    written as arrays of MapEntry records need reshaping."""
    t = schema.type
    if t is Type.STRUCT and schema.name == UNION:
        return _union_converter(schema)
    if t is Type.STRUCT:
        children = [(f.name, input_converter(f.schema)) for f in schema.fields]
        changed = [(n, c) for n, c in children if c is not None]
        if not changed:
            return None

        def record(datum: Any) -> Any:
            if datum is None:
                return None
            out = dict(datum)
            for n, c in changed:
                v = out.get(n)
                out[n] = None if v is None else c(v)
            return out

        return record
    if t is Type.ARRAY:
        assert schema.value_schema is not None
        item = input_converter(schema.value_schema)
        if item is None:
            return None
        return lambda datum: [None if v is None else item(v) for v in datum]
    if t is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        key, values = input_converter(schema.key_schema), input_converter(schema.value_schema)
        if key is None and values is None and _string_keyed(schema.key_schema):
            return None  # an Avro map: fastavro's dict is what pyarrow takes
        kc, vc = key or _same, values or _same

        def entries(datum: Any) -> Any:
            # A map of non-string keys is an array of MapEntry records {key, value}.
            pairs = [(e["key"], e["value"]) for e in datum] if isinstance(datum, list) else datum.items()
            return [(kc(k), None if v is None else vc(v)) for k, v in pairs]

        return entries
    return None


def _string_keyed(key: Schema) -> bool:
    # AvroData writes only maps with required, plain string keys as Avro maps; the others are
    # arrays of MapEntry records.
    return key.type is Type.STRING and not key.optional and key.name is None


def _same(value: Any) -> Any:
    return value


def _union_converter(schema: Schema) -> Converter:
    branches = [(f.name, f.schema, input_converter(f.schema)) for f in schema.fields]

    def union(datum: Any) -> Any:
        if isinstance(datum, tuple):
            # fastavro names the record of a union with several (return_record_name).
            name, datum = datum
            short = str(name).rsplit(".", 1)[-1]
            for n, _, c in branches:
                if n == short:
                    return {n: datum if c is None else c(datum)}
        for n, s, c in branches:
            if _holds(s, datum):
                return {n: datum if c is None else c(datum)}
        raise DataException(f"no branch of the union {[b[0] for b in branches]} holds {datum!r}")

    return union


def _holds(schema: Schema, datum: Any) -> bool:
    if schema.name == Decimal.LOGICAL_NAME:
        return isinstance(datum, bytes)  # its unscaled value (_strip_logical)
    t = schema.type
    if t is Type.STRUCT or t is Type.MAP:
        return isinstance(datum, dict) or (t is Type.MAP and isinstance(datum, list))
    if t is Type.STRING:
        return isinstance(datum, str)
    if t is Type.BOOLEAN:
        return isinstance(datum, bool)
    if t in (Type.INT8, Type.INT16, Type.INT32, Type.INT64):
        # Dates, times and timestamps too: fastavro reads them as ints (_strip_logical).
        return isinstance(datum, int) and not isinstance(datum, bool)
    if t in (Type.FLOAT32, Type.FLOAT64):
        return isinstance(datum, float)
    if t is Type.BYTES:
        return isinstance(datum, bytes)
    return isinstance(datum, list)


class _FieldDecoder:
    """Decodes one side (key or value) of records into one Arrow array."""

    def __init__(self, plan: FieldPlan, url: str, client: Callable[[], SchemaRegistryClient]) -> None:
        self.plan = plan
        self.url = url
        self._client = client
        self.reader = parse_avro(plan.schema, plan.referenced)
        schema = connect_schema(plan)
        self.convert = input_converter(schema)
        self.type = to_arrow_type(
            from_arrow_type(arrow_type(schema), prefer_timestamp_ntz=False), timezone="UTC"
        )
        self.base, self.view = arrow_stages(schema, self.type)
        self.decimals = _has_decimal(self.type)
        self._unknown: dict[int, str] = {}  # ids that did not give a usable writer schema: why

    def writer(self, schema_id: int) -> Any:
        """The parsed writer schema of an id, or a str saying why there is none."""
        if schema_id == self.plan.schema_id:
            return None  # the reader schema itself: no resolution needed
        cached = _WRITERS.get((self.url, schema_id))
        if cached is not None:
            return cached
        if schema_id in self._unknown:
            return self._unknown[schema_id]
        fetched = fetch_writer(
            self._client(),
            self.url,
            schema_id,
            lambda c, found: referenced_schemas(c, found.references or []),
        )
        if isinstance(fetched, str):
            self._unknown[schema_id] = fetched
            return fetched
        schema, references = fetched
        try:
            kind = schema.schema_type or "AVRO"
            if kind != "AVRO":
                raise DataException(f"schema id {schema_id} is a {kind} schema, not Avro")
            parsed = parse_avro(str(schema.schema_str), references)
        except (DataException, ValueError, KeyError, TypeError, fastavro.schema.SchemaParseException) as exc:
            self._unknown[schema_id] = f"writer schema id {schema_id} is not a usable Avro schema: {exc}"
            return self._unknown[schema_id]
        if len(_WRITERS) >= _MAX_CACHED:
            _WRITERS.clear()
        _WRITERS[(self.url, schema_id)] = parsed
        return parsed

    def decode(self, raw: Sequence[bytes | None]) -> tuple[pa.Array, dict[int, str]]:
        """The column of ``raw``'s decoded values (null where raw is null or bad) and, by row,
        why a value did not decode."""
        datums: list[Any] = []
        errors: dict[int, str] = {}
        # The loop runs once per record: everything it uses is a local.
        append, read, buffer = datums.append, fastavro.schemaless_reader, io.BytesIO
        reader, convert, own_id = self.reader, self.convert, self.plan.schema_id
        for i, data in enumerate(raw):
            if data is None:
                append(None)
                continue
            if len(data) < HEADER_SIZE or data[0] != MAGIC_BYTE:
                errors[i] = framing_problem(data)
                append(None)
                continue
            schema_id = int.from_bytes(data[1:HEADER_SIZE], "big")
            if schema_id == own_id:
                writer, resolve_into = reader, None  # no resolution needed
            else:
                found = self.writer(schema_id)
                if isinstance(found, str):
                    errors[i] = found
                    append(None)
                    continue
                writer, resolve_into = found, reader
            buf = buffer(data)
            buf.seek(HEADER_SIZE)
            try:
                # return_record_name(_override): a union of several records names the branch.
                datum = read(buf, writer, resolve_into, True, True)
                append(datum if convert is None or datum is None else convert(datum))
            except Exception as exc:  # fastavro raises anything on bad bytes
                errors[i] = (
                    f"cannot read the bytes as Avro of schema id {schema_id} into the reader's "
                    f"{self.plan.describe()}: {type(exc).__name__}: {exc}"
                )
                append(None)
        try:
            return self._column(datums), errors
        except _ARROW_ERRORS:
            pass
        # Some value does not fit its column (e.g. a decimal out of its precision): find it.
        for i, datum in enumerate(datums):
            try:
                self._column([datum])
            except _ARROW_ERRORS as exc:
                errors[i] = f"the decoded {self.plan.side} does not fit its Spark column: {exc}"
                datums[i] = None
        return self._column(datums), errors

    def _column(self, datums: list[Any]) -> pa.Array:
        column = pa.array(datums, type=self.base)
        if self.base == self.type:
            return column
        if self.decimals:
            column = decimal_columns(column, self.type)
        # Ints to dates/times/timestamps: a view, then Spark's units (microseconds, nanoseconds).
        return column.cast(self.view).cast(self.type)


def _has_decimal(typ: pa.DataType) -> bool:
    if pa.types.is_decimal(typ):
        return True
    if pa.types.is_struct(typ):
        return any(_has_decimal(typ.field(i).type) for i in range(typ.num_fields))
    if pa.types.is_list(typ):
        return _has_decimal(typ.value_type)
    if pa.types.is_map(typ):
        return _has_decimal(typ.key_type) or _has_decimal(typ.item_type)
    return False


def decimal_columns(column: pa.Array, target: pa.DataType) -> pa.Array:
    """``column`` with the unscaled big-endian bytes of decimals (where ``target`` has a
    decimal) turned into Arrow decimals; ValueError for a value beyond its precision."""
    if pa.types.is_decimal(target):
        return _decimal_array(column, target) if pa.types.is_binary(column.type) else column
    mask = column.is_null() if column.null_count else None
    if pa.types.is_struct(target):
        fields = [column.type.field(i) for i in range(column.type.num_fields)]
        children = [decimal_columns(column.field(i), target.field(f.name).type) for i, f in enumerate(fields)]
        return pa.StructArray.from_arrays(
            children, fields=[f.with_type(c.type) for f, c in zip(fields, children, strict=True)], mask=mask
        )
    if pa.types.is_list(target):
        values = decimal_columns(column.values, target.value_type)
        kind = pa.list_(column.type.value_field.with_type(values.type))
        return pa.ListArray.from_arrays(column.offsets, values, type=kind, mask=mask)
    if pa.types.is_map(target):
        keys = decimal_columns(column.keys, target.key_type)
        items = decimal_columns(column.items, target.item_type)
        return pa.MapArray.from_arrays(column.offsets, keys, items, mask=mask)
    return column


_NULL_DECIMAL = bytes(16)


def _decimal_array(column: pa.Array, target: pa.Decimal128Type) -> pa.Array:
    limit = 10**target.precision
    out = bytearray()
    for raw in column.to_pylist():
        if raw is None:
            out += _NULL_DECIMAL
            continue
        unscaled = int.from_bytes(raw, "big", signed=True)
        if not -limit < unscaled < limit:
            raise ValueError(
                f"{unscaled}E-{target.scale} has more digits than DECIMAL({target.precision}, {target.scale})"
            )
        out += unscaled.to_bytes(16, "little", signed=True)
    validity = pc.is_valid(column).buffers()[1] if column.null_count else None
    return pa.Array.from_buffers(
        target, len(column), [validity, pa.py_buffer(bytes(out))], null_count=column.null_count
    )


_ARROW_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError)


class RecordDecoder:
    """Turns the source's raw batches (Spark's Kafka columns) into decoded ones. One per task."""

    def __init__(self, plan: DecodePlan) -> None:
        self.plan = plan
        self._registry: SchemaRegistryClient | None = None
        self.key = self._decoder(plan.key)
        self.value = self._decoder(plan.value)
        self.schema = to_arrow_schema(spark_schema(plan), timezone="UTC")

    def _decoder(self, field: FieldPlan | None) -> FieldDecoder | None:
        if field is None:
            return None
        if field.format == "json-schema":
            return JsonSchemaDecoder(field, self.plan.url, self._client)
        if field.format == "protobuf":
            return ProtobufDecoder(field, self.plan.url, self._client)
        return _FieldDecoder(field, self.plan.url, self._client)

    def _client(self) -> SchemaRegistryClient:
        if self._registry is None:
            self._registry = registry_client(self.plan.options)
        return self._registry

    def decode(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        raw_key, raw_value = batch.column("key"), batch.column("value")
        errors: dict[int, str] = {}
        key = self._side(self.key, raw_key, errors)
        value = self._side(self.value, raw_value, errors)
        if errors and self.plan.options.mode == "FAILFAST":
            row = min(errors)
            topic, partition = batch.column("topic")[row].as_py(), batch.column("partition")[row].as_py()
            raise MalformedRecordError(
                f"Malformed records are detected in record parsing (mode FAILFAST): topic {topic} "
                f"partition {partition} offset {batch.column('offset')[row].as_py()}: {errors[row]}. To "
                f"read malformed records as nulls (their bytes kept in column "
                f"'{self.plan.options.corrupt_column}'), set the option 'mode' to 'PERMISSIVE'."
            )
        if errors:
            # A record is read whole or not at all: its key and value both become null.
            bad = pa.array([i in errors for i in range(batch.num_rows)], pa.bool_())
            if self.key is not None:
                key = pc.if_else(bad, pa.nulls(batch.num_rows, key.type), key)
            if self.value is not None:
                value = pc.if_else(bad, pa.nulls(batch.num_rows, value.type), value)
        columns: list[pa.Array] = []
        for name in batch.schema.names:
            if name == "key":
                columns.append(key)
            elif name == "value":
                if self.plan.options.value_columns == "fields" and pa.types.is_struct(value.type):
                    # flatten() gives the fields with the struct's nulls applied.
                    columns.extend(value.flatten())
                else:
                    columns.append(value)
            else:
                columns.append(batch.column(name))
        if self.plan.options.mode == "PERMISSIVE":
            columns.append(_corrupt_column(raw_key, raw_value, errors, batch))
        return pa.RecordBatch.from_arrays(columns, schema=self.schema)

    def _side(self, decoder: FieldDecoder | None, raw: pa.Array, errors: dict[int, str]) -> pa.Array:
        if decoder is None:
            return raw
        column, bad = decoder.decode(raw.to_pylist())
        for row, why in bad.items():
            errors.setdefault(row, f"{decoder.plan.side}: {why}")
        return column


def _corrupt_column(
    raw_key: pa.Array, raw_value: pa.Array, errors: Mapping[int, str], batch: pa.RecordBatch
) -> pa.Array:
    n = batch.num_rows
    reasons = pa.array([errors.get(i) for i in range(n)], pa.string())
    valid = pa.array([i in errors for i in range(n)], pa.bool_())
    return pa.StructArray.from_arrays(
        [raw_key, raw_value, reasons], names=["key", "value", "error"], mask=pc.invert(valid)
    )
