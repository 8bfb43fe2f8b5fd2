"""Cast: change the type of fields of the key or value, or of the whole key or value.

``spec=id:int64,price:float64,flag:boolean`` casts those fields of a Struct (with a
schema) or of a map (without one); ``spec=string`` casts the whole key or value. The
types are int8, int16, int32, int64, float32, float64, boolean and string, from any
of those types, and bytes can be cast to string (base64). Null values (tombstones)
pass through.

Values convert as Kafka's Java code converts them:

- integers narrow with two's-complement wrap-around (300 to int8 is 44); floats to
  integers truncate toward zero and saturate (1e20 to int32 is 2147483647, NaN is 0);
  decimals drop their fraction and keep the low bits (2**31 to int32 is -2147483648);
- booleans become 1/0 (1.0/0.0) and numbers become ``value != 0`` after the integer
  conversion, so 0.5 is false;
- text parses as Java parses it: integers are an optional sign and digits only (" 1"
  and "1.0" are errors), floats may be NaN, Infinity, use exponents or hex and end in
  f or d, and a boolean is true only for "true" in any case (anything else is false);
- float32 results hold exactly what a Java ``float`` would;
- to string: floats print like Java (``42.0``, ``1.0E10``, a float32 ``0.1`` as
  ``0.1``), decimals like ``BigDecimal.toString`` (``1E+3``), booleans ``true``/
  ``false``, bytes as base64, and Date, Time and Timestamp values in ISO form chosen
  by the instant, as Kafka's ``Values.dateFormatFor`` does: ``HH:mm:ss.SSSZ`` before
  1970-01-02 (so the date 1970-01-01 prints as ``00:00:00.000Z``), ``yyyy-MM-dd`` at
  midnight, else ``yyyy-MM-ddTHH:mm:ss.SSSZ``. Always in UTC (Kafka uses the JVM's
  time zone);
- Date, Time and Timestamp fields cast to a number use their encoded form first
  (days, milliseconds of the day, epoch milliseconds).

A text that does not parse is an error ("Value (abc) was out of range for requested
data type", Kafka's wording for every parse failure), as are bytes to anything but
string and a value of a type Cast cannot read (arrays, maps, structs; without a
schema also Decimal and datetime values). Without a schema, ints are read as int64
and floats as float64; an int outside the int64 range is refused.

A field cast gets a plain schema of the new type (optional and default kept, the
default cast too); other fields keep theirs. A map missing a spec'd field gets it
with a null value, as in Kafka.

Differences from Kafka, on purpose: a spec entry with more than one colon is reported
against ``spec`` (Kafka names ``renames``, a copy-paste slip), with Kafka's message
otherwise; a whole-value cast of a Decimal, Date, Time or Timestamp gives a plain
schema (Kafka keeps the logical name, producing e.g. a string schema called
``org.apache.kafka.connect.data.Timestamp`` whose values no longer validate); and a
struct schema with a default value has that default cast field by field (Kafka fails
every record, since it tries to cast the default struct as a whole).
"""

from __future__ import annotations

import base64
import datetime
import decimal
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from connect.api import (
    Boolean,
    ConfigIssue,
    ConfigModel,
    ConnectRecord,
    DataException,
    Date,
    Decimal,
    Field,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    Type,
    importance,
)
from transforms.java_numbers import (
    NumberFormatError,
    big_decimal_to_string,
    decimal_to_double,
    decimal_to_float32,
    decimal_to_int,
    double_to_string,
    float_to_int,
    float_to_string,
    int_to_float32,
    java_trim,
    parse_boolean,
    parse_double,
    parse_float,
    parse_int,
    to_float32,
    wrap,
)
from transforms.parts import Key, PartTransformation, Value
from transforms.requirements import record_error, require_map, require_struct
from transforms.schemas import LruCache, copy_basics
from transforms.settings import NameList, replace_null_with_default, split_list

PURPOSE = "cast types"

OUTPUT_TYPES = (
    Type.INT8,
    Type.INT16,
    Type.INT32,
    Type.INT64,
    Type.FLOAT32,
    Type.FLOAT64,
    Type.BOOLEAN,
    Type.STRING,
)
INPUT_TYPES = (*OUTPUT_TYPES, Type.BYTES)
_INPUT_SET = frozenset(INPUT_TYPES)
_OUTPUT_NAMES = "[" + ", ".join(t.name for t in OUTPUT_TYPES) + "]"
_INPUT_NAMES = "[" + ", ".join(t.name for t in INPUT_TYPES) + "]"
_LOGICAL_NAMES = frozenset(
    {Decimal.LOGICAL_NAME, Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME}
)
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

_SPEC_DOC = (
    "List of fields and the type to cast them to of the form field1:type,field2:type to cast fields of "
    "Maps or Structs. A single type to cast the entire value. Valid types are int8, int16, int32, "
    "int64, float32, float64, boolean, and string. Note that binary fields can only be cast to string."
)


# -- the spec --------------------------------------------------------------------------------------------


class SpecError(ValueError):
    """A ``spec`` Kafka refuses, with Kafka's message."""


@dataclass(frozen=True, slots=True)
class CastSpec:
    """A parsed ``spec``: the whole-value type, or the type of each field to cast."""

    whole: Type | None
    fields: Mapping[str, Type]


def _java_split(entry: str) -> list[str]:
    """Java's ``String.split(":")``: trailing empty parts dropped (``"a:"`` is ``["a"]``,
    ``":"`` is ``[]``), except that a text without any colon is itself the only part."""
    parts = entry.split(":")
    if len(parts) == 1:
        return parts
    while parts and not parts[-1]:
        parts.pop()
    return parts


def _target_type(text: str) -> Type:
    name = java_trim(text)
    try:
        t = Type[name.upper()]
    except KeyError:
        raise SpecError(f"Invalid type found in casting spec: {name}") from None
    if t not in OUTPUT_TYPES:
        raise SpecError(
            f"Cast transformation does not support casting to {t.name}; supported types are {_OUTPUT_NAMES}"
        )
    return t


def parse_spec(entries: list[str]) -> CastSpec:
    """Read ``spec`` as Kafka does, failing on the first bad entry."""
    if not entries:
        raise SpecError("Must specify at least one field to cast.")
    whole: Type | None = None
    fields: dict[str, Type] = {}
    for entry in entries:
        parts = _java_split(entry)
        if len(parts) == 1:
            whole = _target_type(parts[0])
        elif len(parts) == 2:
            fields[java_trim(parts[0])] = _target_type(parts[1])  # a repeated field: the last one wins
        else:
            # Kafka reports this against "renames" (it reuses ReplaceField's message); we name spec.
            listed = "[" + ", ".join(entries) + "]"
            raise SpecError(f"Invalid value {listed} for configuration spec: Invalid rename mapping: {entry}")
    if whole is not None and len(entries) > 1:
        raise SpecError(
            "Cast transformations that specify a type to cast the entire value to may only specify a "
            "single cast in their spec"
        )
    return CastSpec(whole, fields)


class CastConfig(ConfigModel):
    spec: NameList = Field(alias="spec", description=_SPEC_DOC, json_schema_extra=importance("HIGH"))
    replace_null_with_default: Boolean = replace_null_with_default()

    @classmethod
    def problems(cls, props: Mapping[str, Any]) -> list[ConfigIssue]:
        entries = split_list(props.get("spec"))
        if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
            return []  # missing or not a list: the model reports it
        try:
            parse_spec(entries)
        except SpecError as exc:
            return [ConfigIssue("spec", str(exc))]
        return []


# -- casting one value -----------------------------------------------------------------------------------


def _unexpected(value: Any) -> DataException:
    return DataException(f"Unexpected type in Cast transformation: {type(value).__name__}")


def _to_integer(value: Any, bits: int) -> int:
    if isinstance(value, bool):
        return 1 if value else 0
    if isinstance(value, int):
        return wrap(value, bits)
    if isinstance(value, float):
        return float_to_int(value, bits)
    if isinstance(value, str):
        return parse_int(value, bits)
    if isinstance(value, decimal.Decimal):
        return decimal_to_int(value, bits)
    raise _unexpected(value)


def _to_float32(value: Any, single: bool) -> float:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int):
        return int_to_float32(value)
    if isinstance(value, float):
        return value if single else to_float32(value)
    if isinstance(value, str):
        return parse_float(value)
    if isinstance(value, decimal.Decimal):
        return decimal_to_float32(value)
    raise _unexpected(value)


def _to_float64(value: Any, single: bool) -> float:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        return parse_double(value)
    if isinstance(value, decimal.Decimal):
        return decimal_to_double(value)
    raise _unexpected(value)


def _to_boolean(value: Any, single: bool) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return wrap(value, 64) != 0
    if isinstance(value, float):
        return float_to_int(value, 64) != 0  # Java's longValue() != 0: 0.5 is false
    if isinstance(value, str):
        return parse_boolean(value)
    if isinstance(value, decimal.Decimal):
        return decimal_to_int(value, 64) != 0
    raise _unexpected(value)


_MS_PER_DAY = 86_400_000
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def date_string(epoch_ms: int) -> str:
    """Kafka's ``Values.dateFormatFor(d).format(d)``, in UTC: the pattern depends on the
    instant, not on the logical type."""
    t = _EPOCH + datetime.timedelta(milliseconds=epoch_ms)
    time = f"{t.hour:02d}:{t.minute:02d}:{t.second:02d}.{t.microsecond // 1000:03d}Z"
    if epoch_ms < _MS_PER_DAY:  # negative instants too, as in Kafka
        return time
    day = f"{t.year:04d}-{t.month:02d}-{t.day:02d}"
    return day if epoch_ms % _MS_PER_DAY == 0 else f"{day}T{time}"


def _to_string(value: Any, single: bool) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return float_to_string(value) if single else double_to_string(value)
    if isinstance(value, decimal.Decimal):
        return big_decimal_to_string(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, datetime.datetime):
        return date_string(Timestamp.from_logical(Timestamp.SCHEMA, value))
    if isinstance(value, datetime.date):
        return date_string(Date.from_logical(Date.SCHEMA, value) * _MS_PER_DAY)
    if isinstance(value, datetime.time):
        return date_string(Time.from_logical(Time.SCHEMA, value))
    return str(value)


_CONVERTERS: dict[Type, Callable[[Any, bool], Any]] = {
    Type.INT8: lambda v, _: _to_integer(v, 8),
    Type.INT16: lambda v, _: _to_integer(v, 16),
    Type.INT32: lambda v, _: _to_integer(v, 32),
    Type.INT64: lambda v, _: _to_integer(v, 64),
    Type.FLOAT32: _to_float32,
    Type.FLOAT64: _to_float64,
    Type.BOOLEAN: _to_boolean,
    Type.STRING: _to_string,
}


def schemaless_type(value: Any) -> Type | None:
    """The Connect type of a schemaless value (Kafka's ``ConnectSchema.schemaType``), or None
    for values Connect has no type for (Decimal, datetime values, ints beyond int64)."""
    if isinstance(value, bool):
        return Type.BOOLEAN
    if isinstance(value, int):
        return Type.INT64 if _INT64_MIN <= value <= _INT64_MAX else None
    if isinstance(value, float):
        return Type.FLOAT64
    if isinstance(value, str):
        return Type.STRING
    if isinstance(value, (bytes, bytearray, memoryview)):
        return Type.BYTES
    if isinstance(value, list):
        return Type.ARRAY
    if isinstance(value, dict):
        return Type.MAP
    if isinstance(value, Struct):
        return Type.STRUCT
    return None


def _encode_logical(schema: Schema, value: Any) -> Any:
    name = schema.name
    if name == Date.LOGICAL_NAME:
        return Date.from_logical(schema, value)
    if name == Time.LOGICAL_NAME:
        return Time.from_logical(schema, value)
    if name == Timestamp.LOGICAL_NAME:
        return Timestamp.from_logical(schema, value)
    return value  # Decimal stays a number


def cast_value(schema: Schema | None, value: Any, target: Type) -> Any:
    """``value`` (described by ``schema``, or schemaless) cast to ``target``, as Kafka's
    ``Cast.castValueToType``. Raises DataException with Kafka's messages."""
    if value is None:
        return None
    if schema is None:
        source = schemaless_type(value)
        if source is None:
            beyond = " (outside the INT64 range)" if isinstance(value, int) else ""
            raise DataException(
                f"Cast transformation was passed a value of type {type(value).__name__}{beyond} "
                "which is not supported by Connect's data API"
            )
    else:
        source = schema.type
    if source not in _INPUT_SET:
        raise DataException(
            f"Cast transformation does not support casting from {source.name}; "
            f"supported types are {_INPUT_NAMES}"
        )
    if schema is not None:
        if schema.name is not None and target is not Type.STRING:
            value = _encode_logical(schema, value)
        if source is Type.FLOAT32 and not isinstance(value, bool):
            # What the Java float holds (a FLOAT32 field may hold any Python float or an int).
            value = int_to_float32(value) if isinstance(value, int) else to_float32(value)
        elif source is Type.FLOAT64 and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
    try:
        return _CONVERTERS[target](value, source is Type.FLOAT32)
    except NumberFormatError:
        raise DataException(f"Value ({value}) was out of range for requested data type") from None


# -- the transformation ----------------------------------------------------------------------------------

_BUILDERS: dict[Type, Callable[[], SchemaBuilder]] = {
    Type.INT8: SchemaBuilder.int8,
    Type.INT16: SchemaBuilder.int16,
    Type.INT32: SchemaBuilder.int32,
    Type.INT64: SchemaBuilder.int64,
    Type.FLOAT32: SchemaBuilder.float32,
    Type.FLOAT64: SchemaBuilder.float64,
    Type.BOOLEAN: SchemaBuilder.boolean,
    Type.STRING: SchemaBuilder.string,
}


@dataclass(frozen=True, slots=True)
class _StructPlan:
    """The output schema for one input struct schema, and per field: its name, its input
    schema and the type to cast it to (None: copied as is)."""

    schema: Schema
    fields: tuple[tuple[str, Schema, Type | None], ...]
    source: Schema  # the input schema the plan was made for


class Cast(PartTransformation):
    Config = CastConfig

    def configure(self, configs: Mapping[str, Any]) -> None:
        config = self.config = CastConfig.parse(configs)
        spec = parse_spec(config.spec)
        self.whole = spec.whole
        self.casts = dict(spec.fields)
        self.replace_null = config.replace_null_with_default
        self._whole_schemas: LruCache[Schema, Schema] = LruCache()
        self._plans: LruCache[Schema, _StructPlan] = LruCache()

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        value = self.value_of(record)
        if value is None:
            return record  # tombstones pass through
        schema = self.schema_of(record)
        whole = self.whole
        if schema is None:
            if whole is not None:
                return self.replace(record, None, self._cast(record, None, value, whole))
            out = dict(require_map(self, record, value, PURPOSE))
            for name, target in self.casts.items():
                out[name] = self._cast(record, None, value.get(name), target)
            return self.replace(record, None, out)
        if whole is not None:
            updated = self._whole_schemas.get(schema)
            if updated is None:
                updated = self._whole_schema(record, schema, whole)
                self._whole_schemas.put(schema, updated)
            return self.replace(record, updated, self._cast(record, schema, value, whole))
        plan = self._plans.get(schema)
        if plan is None:
            plan = self._struct_plan(record, schema)
            self._plans.put(schema, plan)
        struct = require_struct(self, record, value, PURPOSE)
        return self.replace(record, plan.schema, self._cast_struct(record, plan, struct))

    def _cast(self, record: ConnectRecord, schema: Schema | None, value: Any, target: Type) -> Any:
        try:
            return cast_value(schema, value, target)
        except DataException as exc:
            raise record_error(self, record, str(exc)) from None

    def _cast_struct(self, record: ConnectRecord, plan: _StructPlan, struct: Struct) -> Struct:
        try:
            return self._cast_fields(plan, struct)
        except DataException as exc:
            raise record_error(self, record, str(exc)) from None

    def _cast_fields(self, plan: _StructPlan, struct: Struct) -> Struct:
        if struct.schema is plan.source or struct.schema == plan.source:
            # The plan's fields are the struct's, in order: cast by position.
            values = struct.values(self.replace_null)
            for i, (_name, field_schema, target) in enumerate(plan.fields):
                if target is not None:
                    values[i] = cast_value(field_schema, values[i], target)
            return Struct.from_values(plan.schema, values)
        out = Struct(plan.schema)  # a struct whose schema is not the record's: go by name
        get = struct.get if self.replace_null else struct.get_without_default
        for name, field_schema, target in plan.fields:
            v = get(name)
            out.put(name, v if target is None else cast_value(field_schema, v, target))
        return out

    def _whole_schema(self, record: ConnectRecord, schema: Schema, target: Type) -> Schema:
        builder = _BUILDERS[target]()
        if schema.name in _LOGICAL_NAMES:
            # The logical name would describe a value the output no longer is (see module doc).
            if schema.doc is not None:
                builder.doc(schema.doc)
        else:
            copy_basics(schema, builder)
        if schema.optional:
            builder.optional()
        try:
            if schema.default_value is not None:
                builder.default_value(cast_value(schema, schema.default_value, target))
            return builder.build()
        except DataException as exc:
            raise record_error(self, record, str(exc)) from None

    def _struct_plan(self, record: ConnectRecord, schema: Schema) -> _StructPlan:
        if schema.type is not Type.STRUCT:
            raise record_error(self, record, "Cannot list fields on non-struct type")
        builder = copy_basics(schema, SchemaBuilder.struct())
        fields = []
        try:
            for f in schema.fields:
                target = self.casts.get(f.name)
                if target is None:
                    builder.field(f.name, f.schema)
                else:
                    field_builder = _BUILDERS[target]()
                    if f.schema.optional:
                        field_builder.optional()
                    if f.schema.default_value is not None:
                        field_builder.default_value(cast_value(f.schema, f.schema.default_value, target))
                    builder.field(f.name, field_builder.build())
                fields.append((f.name, f.schema, target))
            if schema.optional:
                builder.optional()
            plan = _StructPlan(builder.build(), tuple(fields), schema)
            if schema.default_value is not None:
                # Kafka tries to cast the default struct as one value and fails; cast its fields instead.
                default = self._cast_fields(plan, schema.default_value)
                plan = _StructPlan(builder.default_value(default).build(), plan.fields, schema)
            return plan
        except DataException as exc:
            raise record_error(self, record, str(exc)) from None


class CastKey(Key, Cast):
    aliases = ("org.apache.kafka.connect.transforms.Cast$Key",)


class CastValue(Value, Cast):
    aliases = ("org.apache.kafka.connect.transforms.Cast$Value",)
