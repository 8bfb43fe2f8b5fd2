"""Sink records as Arrow tables, for sinks that write columns (Spark, Parquet files). Pure:
no I/O. Needs pyarrow, which ``connect.api`` itself does not import.

Records become columns, not rows: a batch of records sharing a value schema is turned
around (one list per field) and each list becomes one Arrow array, so a Parquet writer or
Spark (through Arrow) receives the batch with no per-row work on the other side.

Type mapping (Connect → Arrow → Spark):

==========================  ========================  ======================
Connect                     Arrow                     Spark
==========================  ========================  ======================
INT8/16/32/64               int8/16/32/64             TINYINT/SMALLINT/INT/BIGINT
FLOAT32/64                  float32/64                FLOAT/DOUBLE
BOOLEAN, STRING, BYTES      bool, string, binary      BOOLEAN, STRING, BINARY
Decimal (scale, precision)  decimal128(p, s)          DECIMAL(p, s) (p = 38 if unknown)
Date                        date32                    DATE
Time                        time64[us]                TIME(6)
Timestamp                   timestamp[ms, UTC]        TIMESTAMP
ARRAY, MAP, STRUCT          list, map, struct         ARRAY, MAP, STRUCT
==========================  ========================  ======================

Every column is nullable: Connect already guarantees required fields are set, and a
column a later schema adds must read as null in older rows.

The table's schema is the contract: a batch is *conformed* to it (``merge_schemas``
then ``conform``). New columns are added when schema evolution allows; a value that
cannot be represented losslessly in its column's type (a string in an INT column,
2.5 in a BIGINT column) refuses its record, which then goes to error handling — the
rest of the batch is written.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from connect.api import DataException, Date, Decimal, Schema, SinkRecord, Struct, Time, Timestamp, Type
from connect.api.records import TopicPartition

VALUE_COLUMN = "value"  # the column of a value that is not a struct (a string, a number, a list)
MAX_PRECISION = 38  # Spark's DecimalType limit
PRECISION_PARAMETER = "connect.decimal.precision"

_PRIMITIVES: dict[Type, pa.DataType] = {
    Type.INT8: pa.int8(),
    Type.INT16: pa.int16(),
    Type.INT32: pa.int32(),
    Type.INT64: pa.int64(),
    Type.FLOAT32: pa.float32(),
    Type.FLOAT64: pa.float64(),
    Type.BOOLEAN: pa.bool_(),
    Type.STRING: pa.string(),
    Type.BYTES: pa.binary(),
}
_ARROW_ERRORS = (
    pa.ArrowInvalid,
    pa.ArrowTypeError,
    pa.ArrowNotImplementedError,
    OverflowError,
    TypeError,
    ValueError,
)

Converter = Callable[[Any], Any]


# -- Connect schema → Arrow type ---------------------------------------------------------


def arrow_type(schema: Schema) -> pa.DataType:
    """The Arrow type of values of ``schema``; DataException for what Spark cannot hold."""
    name = schema.name
    if name == Decimal.LOGICAL_NAME:
        scale = Decimal.scale(schema)
        raw = (schema.parameters or {}).get(PRECISION_PARAMETER)
        try:
            precision = int(raw) if raw is not None else MAX_PRECISION
        except ValueError:
            raise DataException(f"Decimal precision {raw!r} is not an integer") from None
        if not 0 <= scale <= precision <= MAX_PRECISION or precision < 1:
            raise DataException(
                f"Decimal with precision {precision} and scale {scale} does not fit Spark's DECIMAL "
                f"(1 <= precision <= {MAX_PRECISION}, 0 <= scale <= precision)"
            )
        return pa.decimal128(precision, scale)
    if name == Date.LOGICAL_NAME:
        return pa.date32()
    if name == Time.LOGICAL_NAME:
        return pa.time64("us")
    if name == Timestamp.LOGICAL_NAME:
        return pa.timestamp("ms", tz="UTC")
    t = schema.type
    if t in _PRIMITIVES:
        return _PRIMITIVES[t]
    if t is Type.ARRAY:
        assert schema.value_schema is not None
        return pa.list_(arrow_type(schema.value_schema))
    if t is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        return pa.map_(arrow_type(schema.key_schema), arrow_type(schema.value_schema))
    if t is Type.STRUCT:
        return pa.struct([pa.field(f.name, arrow_type(f.schema)) for f in schema.fields])
    raise DataException(f"No Spark type for Connect type {t.name}")


def python_converter(schema: Schema) -> Converter | None:
    """A function turning Connect values of ``schema`` into what pyarrow takes for its
    Arrow type, or None when they need no change (primitives, logical types)."""
    t = schema.type
    if t is Type.STRUCT:
        names = [f.name for f in schema.fields]
        children = [python_converter(f.schema) for f in schema.fields]

        def struct_to_dict(value: Any) -> Any:
            if value is None:
                return None
            if not isinstance(value, Struct):
                raise DataException(f"expected a Struct for {schema!r}, got {type(value).__name__}")
            values = value.values()
            return {
                n: (v if c is None or v is None else c(v))
                for n, v, c in zip(names, values, children, strict=True)
            }

        return struct_to_dict
    if t is Type.ARRAY:
        assert schema.value_schema is not None
        item = python_converter(schema.value_schema)
        if item is None:
            return None
        return lambda value: None if value is None else [None if v is None else item(v) for v in value]
    if t is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        k, v = python_converter(schema.key_schema), python_converter(schema.value_schema)
        if k is None and v is None:
            return None
        kc: Converter = k or (lambda x: x)
        vc: Converter = v or (lambda x: x)
        return lambda value: (
            None if value is None else [(kc(a), None if b is None else vc(b)) for a, b in value.items()]
        )
    if schema.name == Time.LOGICAL_NAME:
        return _utc_time
    return None


def _utc_time(value: Any) -> Any:
    """Connect's Time is UTC: an aware time is moved to UTC (pyarrow would drop its zone)."""
    offset = value.utcoffset() if isinstance(value, datetime.time) else None
    if offset is None:
        return value
    return (datetime.datetime.combine(_EPOCH_DAY, value.replace(tzinfo=None)) - offset).time()


_EPOCH_DAY = datetime.date(1970, 1, 1)


# -- records → Arrow ---------------------------------------------------------------------


@dataclass
class Batch:
    """What a list of sink records became.

    ``table`` holds one row per accepted record, ``row_tps[i]`` is the index in ``tps``
    of row i's topic partition. ``ranges`` covers every record given (accepted,
    refused or skipped): all of them are handled once the batch is committed.
    """

    table: pa.Table
    tps: list[TopicPartition]
    row_tps: list[int]
    ranges: dict[TopicPartition, tuple[int, int]]
    rejected: list[tuple[SinkRecord, str]] = field(default_factory=list)
    skipped: int = 0
    accepted: list[SinkRecord] = field(default_factory=list)


class BatchBuilder:
    """Turns sink records into a ``Batch`` (an Arrow table and what it covers)."""

    def __init__(
        self,
        include_coordinates: bool = False,
        null_values: str = "fail",
        declared: pa.Schema | None = None,
    ) -> None:
        self.include_coordinates = include_coordinates
        self.null_values = null_values
        self.declared = declared
        self._schema_cache: dict[Schema, tuple[pa.DataType, Converter | None]] = {}

    def build(self, records: Sequence[SinkRecord]) -> Batch:
        # Keyed by plain (topic, partition) tuples: equal to TopicPartition, cheaper to make
        # once per record.
        ranges: dict[tuple[str, int], tuple[int, int]] = {}
        rejected: list[tuple[SinkRecord, str]] = []
        skipped = 0
        groups: list[tuple[Any, list[SinkRecord]]] = []
        last_key: Any = _NOTHING
        for r in records:
            tp = (r.topic, r.kafka_partition or 0)
            off = r.kafka_offset
            seen = ranges.get(tp)
            if seen is None:
                ranges[tp] = (off, off)
            elif not seen[0] <= off <= seen[1]:
                ranges[tp] = (min(seen[0], off), max(seen[1], off))
            if r.value is None:
                if self.null_values == "ignore":
                    skipped += 1
                else:
                    rejected.append(
                        (r, "the record's value is null (a tombstone) and behavior.on.null.values=fail")
                    )
                continue
            # Consecutive records with the same value schema become one group (one
            # conversion); schemaless dicts and schemaless scalars are groups of their own.
            schema = r.value_schema
            key = schema if schema is not None else (dict if isinstance(r.value, dict) else object)
            if key is last_key or key == last_key:
                groups[-1][1].append(r)
            else:
                groups.append((key, [r]))
                last_key = key
        tables: list[pa.Table] = []
        accepted: list[SinkRecord] = []
        for key, group in groups:
            table, good, bad = self._convert_group(key, group)
            rejected.extend(bad)
            if table is not None and table.num_rows:
                tables.append(table)
                accepted.extend(good)
        table = _concat(tables, rejected, accepted) if tables else pa.table({})
        if self.include_coordinates and accepted:
            # Once for the whole batch, so that one key column type holds all its keys: per
            # group, keys of different types would refuse records whose values fit.
            for array, f in zip(*self._coordinates(accepted), strict=True):
                table = table.append_column(f, array)
        tps = [TopicPartition(*tp) for tp in ranges]
        if len(tps) == 1:
            row_tps = [0] * len(accepted)
        else:
            index = {tp: i for i, tp in enumerate(ranges)}
            row_tps = [index[(r.topic, r.kafka_partition or 0)] for r in accepted]
        by_tp = {TopicPartition(*tp): bounds for tp, bounds in ranges.items()}
        return Batch(table, tps, row_tps, by_tp, rejected, skipped, accepted)

    # -- groups --------------------------------------------------------------------------

    def _convert_group(
        self, key: Any, group: list[SinkRecord]
    ) -> tuple[pa.Table | None, list[SinkRecord], list[tuple[SinkRecord, str]]]:
        try:
            return self._columns(key, group), group, []
        except (*_ARROW_ERRORS, DataException):
            pass
        # Something in the group does not convert: find the records that do not, one by one.
        good: list[SinkRecord] = []
        bad: list[tuple[SinkRecord, str]] = []
        singles: list[pa.Table] = []
        for r in group:
            try:
                singles.append(self._columns(key, [r]))
                good.append(r)
            except (*_ARROW_ERRORS, DataException) as exc:
                bad.append((r, _reason(exc)))
        if not singles:
            return None, [], bad
        table = _concat(singles, bad, good)
        return table, good, bad

    def _columns(self, key: Any, group: list[SinkRecord]) -> pa.Table:
        if isinstance(key, Schema):
            columns, fields = self._schema_columns(key, group)
        elif key is dict:
            columns, fields = self._dict_columns(group)
        else:
            arr = pa.array([r.value for r in group])
            columns, fields = [arr], [pa.field(VALUE_COLUMN, arr.type)]
        if not columns:  # values with no (typed) field still are rows: all null in the table
            return _no_columns(len(group))
        return pa.Table.from_arrays(columns, schema=pa.schema(fields))

    def _schema_columns(
        self, schema: Schema, group: list[SinkRecord]
    ) -> tuple[list[pa.Array], list[pa.Field]]:
        if schema.type is not Type.STRUCT:
            typ, conv = self._mapped(schema)
            values = [r.value for r in group] if conv is None else [conv(r.value) for r in group]
            return [pa.array(values, type=typ)], [pa.field(VALUE_COLUMN, typ)]
        fields = schema.fields
        rows = []
        for r in group:
            v = r.value
            if type(v) is not Struct:
                raise DataException(f"the value schema is a struct but the value is a {type(v).__name__}")
            rows.append(v.values())
        columns: Iterable[Sequence[Any]] = zip(*rows, strict=True) if rows else [()] * len(fields)
        arrays, out_fields = [], []
        for f, column in zip(fields, columns, strict=True):
            typ, conv = self._mapped(f.schema)
            arrays.append(
                pa.array(
                    column if conv is None else [None if v is None else conv(v) for v in column], type=typ
                )
            )
            out_fields.append(pa.field(f.name, typ))
        return arrays, out_fields

    def _dict_columns(self, group: list[SinkRecord]) -> tuple[list[pa.Array], list[pa.Field]]:
        values = [r.value for r in group]
        declared = self.declared
        if declared is not None:
            try:
                if _truncated_by_pyarrow(values, declared):
                    raise TypeError("pyarrow would truncate a float or take a bool as a number")
                table = pa.Table.from_pylist(values, schema=declared)
            except _ARROW_ERRORS:
                # JSON carries timestamps, dates and decimals as strings: infer, then cast.
                # Keys the schema does not declare are left out, as from_pylist leaves them.
                inferred = _from_dicts(values)
                inferred = inferred.select([n for n in inferred.column_names if n in declared.names])
                table = conform(inferred, declared)
        else:
            table = _from_dicts(values)
            # An all-null column has no type yet: leave it out until a value gives it one.
            keep = [i for i, f in enumerate(table.schema) if not pa.types.is_null(f.type)]
            if len(keep) != table.num_columns:
                table = table.select(keep)
        return list(table.columns), list(table.schema)

    def _coordinates(self, group: list[SinkRecord]) -> tuple[list[pa.Array], list[pa.Field]]:
        keys = [r.key for r in group]
        key_schema = group[0].key_schema
        key_array: pa.Array | None = None
        if key_schema is not None and all(r.key_schema == key_schema for r in group):
            try:
                typ, conv = self._mapped(key_schema)
                key_array = pa.array(
                    keys if conv is None else [None if k is None else conv(k) for k in keys], type=typ
                )
            except (*_ARROW_ERRORS, DataException):
                key_array = None  # a key its schema's type cannot hold: keys as text, like mixed keys
        if key_array is None:
            try:
                key_array = pa.array(keys)
            except _ARROW_ERRORS:
                key_array = pa.array([None if k is None else _json_text(k) for k in keys], type=pa.string())
            if pa.types.is_null(key_array.type):
                key_array = key_array.cast(pa.string())
        arrays = [
            pa.array([r.topic for r in group], type=pa.string()),
            pa.array([r.kafka_partition for r in group], type=pa.int32()),
            pa.array([r.kafka_offset for r in group], type=pa.int64()),
            pa.array([r.timestamp for r in group], type=pa.int64()).cast(pa.timestamp("ms", tz="UTC")),
            key_array,
        ]
        fields = [
            pa.field("_topic", pa.string()),
            pa.field("_partition", pa.int32()),
            pa.field("_offset", pa.int64()),
            pa.field("_timestamp", pa.timestamp("ms", tz="UTC")),
            pa.field("_key", key_array.type),
        ]
        return arrays, fields

    def _mapped(self, schema: Schema) -> tuple[pa.DataType, Converter | None]:
        found = self._schema_cache.get(schema)
        if found is None:
            found = self._schema_cache[schema] = (arrow_type(schema), python_converter(schema))
        return found


_NOTHING = object()


def _no_columns(rows: int) -> pa.Table:
    """A table of ``rows`` rows and no column (pyarrow makes these only by dropping columns)."""
    return pa.table({"_": pa.nulls(rows)}).drop_columns(["_"])


def _from_dicts(values: list[dict[str, Any]]) -> pa.Table:
    """Schemaless dicts as a table with the keys of all of them (``from_pylist`` takes
    only the first dict's keys and drops the others)."""
    first = values[0].keys() if values else None
    if first and all(v.keys() == first for v in values):
        return pa.Table.from_pylist(values)  # the common case: every dict has the same keys
    names = list(dict.fromkeys(k for v in values for k in v))
    if not names:
        return _no_columns(len(values))
    return pa.Table.from_arrays([pa.array([v.get(n) for v in values]) for n in names], names=names)


def _truncated_by_pyarrow(values: list[dict[str, Any]], declared: pa.Schema) -> bool:
    """Whether pyarrow's conversion to ``declared`` would change a value without a word: it
    truncates floats put in integer columns (2.5 becomes 2) and takes bools as 1.0 and 0.0
    in floating columns. Such batches go through the checked cast of ``conform`` instead."""
    numeric = [
        (f.name, pa.types.is_integer(f.type))
        for f in declared
        if pa.types.is_integer(f.type) or pa.types.is_floating(f.type)
    ]
    for name, integer in numeric:
        for v in values:
            x = v.get(name)
            if type(x) is bool or (integer and isinstance(x, float)):
                return True
    return False


def _concat(
    tables: list[pa.Table], rejected: list[tuple[SinkRecord, str]], accepted: list[SinkRecord]
) -> pa.Table:
    """One table from groups whose schemas may differ (missing columns become nulls)."""
    if len(tables) == 1:
        return tables[0]
    if not any(t.num_columns for t in tables):  # concat_tables would lose their rows
        return _no_columns(sum(t.num_rows for t in tables))
    try:
        return pa.concat_tables(tables, promote_options="permissive")
    except _ARROW_ERRORS:
        pass
    # Groups disagree on a column's type: the first group's schema wins, later groups
    # that cannot be cast to the merged schema are refused record by record.
    merged = tables[0].schema
    for t in tables[1:]:
        merged, _ = merge_schemas(merged, t.schema, allow_new=True)
    out = []
    row = 0
    kept_records: list[SinkRecord] = []
    for t in tables:
        rows = accepted[row : row + t.num_rows]
        row += t.num_rows
        table, refused = conform_rows(t, merged)
        out.append(table)
        for i, reason in refused:
            rejected.append((rows[i], reason))
        refused_rows = {i for i, _ in refused}
        kept_records.extend(r for i, r in enumerate(rows) if i not in refused_rows)
    accepted[:] = kept_records
    return pa.concat_tables(out)


# -- table schema ------------------------------------------------------------------------


def merge_schemas(table: pa.Schema | None, batch: pa.Schema, allow_new: bool) -> tuple[pa.Schema, list[str]]:
    """The table schema after this batch: existing columns keep their types (structs, also
    inside lists and maps, gain new nullable fields when ``allow_new``), new columns are
    appended when ``allow_new``. Types that inference could not pin down (all-null
    values, empty lists) are left out until a batch brings a value. Returns the schema
    and the batch columns it could not take."""
    fields = list(table) if table is not None else []
    by_name = {f.name: i for i, f in enumerate(fields)}
    left_out = []
    for f in batch:
        known = _known(f.type)
        i = by_name.get(f.name)
        if i is None:
            if known is None:
                continue
            if allow_new or table is None:
                by_name[f.name] = len(fields)
                fields.append(pa.field(f.name, known))
            else:
                left_out.append(f.name)
        elif allow_new and known is not None:
            fields[i] = pa.field(f.name, _merge_type(fields[i].type, known))
    return pa.schema(fields), left_out


def _known(typ: pa.DataType) -> pa.DataType | None:
    """``typ`` without the parts inference typed as null (``[]`` is list<null>, ``{"x":
    None}`` is struct<x: null>); None when nothing is left. Spark would write such parts
    as VOID and could never put a value there."""
    t = pa.types
    if t.is_null(typ):
        return None
    if t.is_list(typ) or t.is_large_list(typ):
        item = _known(typ.value_type)
        return None if item is None else pa.list_(item)
    if t.is_map(typ):
        item = _known(typ.item_type)
        return None if item is None else pa.map_(typ.key_type, item)
    if t.is_struct(typ):
        children = [(f.name, _known(f.type)) for f in typ]
        kept = [pa.field(n, c) for n, c in children if c is not None]
        return pa.struct(kept) if kept else None
    return typ


def _merge_type(current: pa.DataType, incoming: pa.DataType) -> pa.DataType:
    t = pa.types
    if t.is_struct(current) and t.is_struct(incoming):
        merged, _ = merge_schemas(pa.schema(list(current)), pa.schema(list(incoming)), allow_new=True)
        return pa.struct(list(merged))
    if t.is_list(current) and (t.is_list(incoming) or t.is_large_list(incoming)):
        return pa.list_(_merge_type(current.value_type, incoming.value_type))
    if t.is_map(current) and t.is_map(incoming):
        return pa.map_(current.key_type, _merge_type(current.item_type, incoming.item_type))
    return current


def conform(table: pa.Table, target: pa.Schema) -> pa.Table:
    """``table`` with exactly ``target``'s columns and types; raises if a value cannot be
    represented (the caller then uses ``conform_rows`` to find which records)."""
    n = table.num_rows
    names = set(table.column_names)
    extra = [c for c in table.column_names if c not in {f.name for f in target}]
    for c in extra:
        col = table.column(c)
        if col.null_count != n and _known(col.type) is not None:
            raise DataException(f"field {c!r} is not in the table's schema (schema.evolution=false)")
    arrays = []
    for f in target:
        if f.name in names:
            arrays.append(_cast(table.column(f.name), f.type, f.name))
        else:
            arrays.append(pa.nulls(n, type=f.type))
    return pa.Table.from_arrays(arrays, schema=target)


def conform_rows(table: pa.Table, target: pa.Schema) -> tuple[pa.Table, list[tuple[int, str]]]:
    """Like ``conform``, but rows that cannot be represented are left out and returned
    as (row index, reason) rather than failing the whole table."""
    try:
        return conform(table, target), []
    except (*_ARROW_ERRORS, DataException):
        pass
    good: list[pa.Table] = []
    refused: list[tuple[int, str]] = []
    for i in range(table.num_rows):
        try:
            good.append(conform(table.slice(i, 1), target))
        except (*_ARROW_ERRORS, DataException) as exc:
            refused.append((i, _reason(exc)))
    if not good:
        return target.empty_table(), refused
    return pa.concat_tables(good), refused


def _cast(column: pa.ChunkedArray, typ: pa.DataType, name: str) -> pa.ChunkedArray:
    if column.type == typ:
        return column
    if pa.types.is_struct(typ) and pa.types.is_struct(column.type):
        chunks = [_cast_struct(chunk, typ, name) for chunk in column.chunks]
        return pa.chunked_array(chunks, type=typ)
    if _nested_struct(typ) and type(column.type) is type(typ):
        # Arrow's own cast of list<struct> / map<_, struct> drops fields the target lacks
        # without a word: cast the items ourselves, so a value in such a field is refused.
        return pa.chunked_array([_cast_nested(chunk, typ, name) for chunk in column.chunks], type=typ)
    if column.null_count != len(column) and _reinterprets(column.type, typ):
        raise DataException(f"field {name!r}: {column.type} values do not fit the table's {typ}")
    try:
        return pc.cast(column, typ, safe=True)
    except _ARROW_ERRORS as exc:
        raise DataException(
            f"field {name!r}: {column.type} values do not fit the table's {typ}: {exc}"
        ) from None


def _reinterprets(source: pa.DataType, target: pa.DataType) -> bool:
    """Casts Arrow makes that change what a value means rather than how it is stored: text
    parsed as a number or a boolean, booleans as numbers, numbers as booleans. (Text into
    timestamps, dates and decimals stays: JSON carries those as strings.)"""
    t = pa.types
    lists = (t.is_list, t.is_large_list, t.is_fixed_size_list)
    if any(f(source) for f in lists):
        return any(f(target) for f in lists) and _reinterprets(source.value_type, target.value_type)
    if t.is_map(source) and t.is_map(target):
        return _reinterprets(source.key_type, target.key_type) or _reinterprets(
            source.item_type, target.item_type
        )
    number = bool(t.is_integer(target) or t.is_floating(target))
    if t.is_string(source) or t.is_large_string(source) or t.is_binary(source) or t.is_large_binary(source):
        return number or bool(t.is_boolean(target))
    if t.is_boolean(source):
        return number or bool(t.is_decimal(target))
    if t.is_integer(source) or t.is_floating(source) or t.is_decimal(source):
        return bool(t.is_boolean(target))
    return False


def _nested_struct(typ: pa.DataType) -> bool:
    t = pa.types
    if t.is_list(typ):
        return bool(t.is_struct(typ.value_type) or _nested_struct(typ.value_type))
    if t.is_map(typ):
        return bool(t.is_struct(typ.item_type) or _nested_struct(typ.item_type))
    return False


def _cast_nested(chunk: pa.Array, typ: pa.DataType, name: str) -> pa.Array:
    mask = chunk.is_null() if chunk.null_count else None
    offsets = chunk.offsets
    if pa.types.is_map(typ):
        keys = _cast(pa.chunked_array([chunk.keys]), typ.key_type, f"{name}.key").combine_chunks()
        items = _cast(pa.chunked_array([chunk.items]), typ.item_type, f"{name}.value").combine_chunks()
        # MapArray.from_arrays has no validity mask: null maps are rebuilt from the offsets.
        out = pa.MapArray.from_arrays(offsets, keys, items, type=typ)
        if mask is not None:
            out = pc.if_else(mask, pa.nulls(len(out), type=typ), out)
        return out
    values = _cast(pa.chunked_array([chunk.values]), typ.value_type, f"{name}[]").combine_chunks()
    return pa.ListArray.from_arrays(offsets, values, type=typ, mask=mask)


def _cast_struct(chunk: pa.Array, typ: pa.StructType, name: str) -> pa.Array:
    # Children as seen through the struct's validity: under a null struct they hold
    # placeholders ("" and 0 from pyarrow) that must neither count as values nor be cast.
    present = dict(zip((f.name for f in chunk.type), chunk.flatten(), strict=True))
    wanted = {typ.field(i).name for i in range(typ.num_fields)}
    for extra in present.keys() - wanted:
        if present[extra].null_count != len(chunk) and _known(present[extra].type) is not None:
            raise DataException(f"field {name}.{extra} is not in the table's schema")
    children = []
    for i in range(typ.num_fields):
        f = typ.field(i)
        if f.name in present:
            child = present[f.name]
            children.append(_cast(pa.chunked_array([child]), f.type, f"{name}.{f.name}").combine_chunks())
        else:
            children.append(pa.nulls(len(chunk), type=f.type))
    mask = chunk.is_null() if chunk.null_count else None
    return pa.StructArray.from_arrays(children, fields=list(typ), mask=mask)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return f"does not fit the table: {text}"


def _json_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, Struct):
        value = {f.name: value.get(f.name) for f in value.schema.fields}
    return json.dumps(value, default=_json_default, sort_keys=True)


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, Struct):
        return {f.name: value.get(f.name) for f in value.schema.fields}
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)
