"""Connect schemas and values to Protobuf and back, the way Confluent's ``ProtobufData``
maps them (the ProtobufConverter's mapping), working on descriptors only: a Connect
schema becomes a ``FileDescriptorProto`` (never .proto text) and values become dynamic
messages of a ``DescriptorPool``.

Connect → Protobuf (proto3):

- STRUCT → a message named after the schema (package up to the last dot), or
  ``ConnectDefault1`` (then ``ConnectDefault2``… for unnamed nested structs); fields are
  numbered by order unless a field's schema has the ``io.confluent.connect.protobuf.Tag``
  parameter; a nested struct is a nested message (``…Message`` appended when its name
  equals the field's);
- INT8/INT16 → int32 with ``connect.type`` = int8/int16 in the field's
  ``confluent.field_meta`` option (as Confluent's ``Meta.params``); INT32 int32; INT64
  int64; FLOAT32 float; FLOAT64 double; BOOLEAN bool; STRING string; BYTES bytes;
- a STRING with the ``io.confluent.connect.protobuf.Enum`` parameter → that enum (symbols
  from ``…Enum.<SYMBOL>`` = number);
- ARRAY → repeated; MAP → a repeated ``<Field>Entry`` message {key = 1, value = 2},
  marked ``map_entry`` when the key is an integer, bool or string (a protobuf map);
- a STRUCT named ``io.confluent.connect.protobuf.Union.<name>`` → ``oneof <name>``;
- Decimal → ``confluent.type.Decimal`` (``precision``/``scale`` in the field's meta);
  Date → ``google.type.Date``; Time → ``google.type.TimeOfDay``; Timestamp →
  ``google.protobuf.Timestamp``;
- optional fields: plain proto3 fields by default (null is not written, and reads back as
  the type's default), proto3 ``optional`` with ``optional.for.nullables``, the
  ``google.protobuf.*Value`` wrappers with ``wrapper.for.nullables`` (both
  ProtobufDataConfig's settings, default false); a null array or map is written empty
  (repeated fields have no presence).

Protobuf → Connect takes any message descriptor (Confluent's serializers' too): every
field is optional (proto3 has no required fields), message-typed and ``optional`` fields
read null when absent, wrappers read as optional primitives, oneofs as Union structs,
unsigned and fixed types as the Connect integer that holds them, and recursive messages
are refused (a Connect schema is a tree).
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.descriptor_pool import DescriptorPool
from google.protobuf.message import DecodeError, Message
from google.protobuf.message_factory import GetMessageClass

from connect.api.data import Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp, Type
from connect.api.errors import DataException
from connect.api.protobuf_files import BUILTIN_FILES, is_builtin, new_pool
from connect.api.protobuf_framing import (
    decode_indexes,
    encode_indexes,
    indexes_of,
    message_at,
    read_uvarint,
    uvarint,
)

__all__ = [
    "BUILTIN_FILES",
    "ProtobufData",
    "ProtobufSchemaInfo",
    "decode_indexes",
    "encode_indexes",
    "indexes_of",
    "is_builtin",
    "message_at",
    "new_pool",
]

NAMESPACE = "io.confluent.connect.protobuf"
DEFAULT_NAME = "ConnectDefault"
ENUM = f"{NAMESPACE}.Enum"
UNION = f"{NAMESPACE}.Union"
TAG = f"{NAMESPACE}.Tag"
CONNECT_TYPE = "connect.type"
PRECISION = "connect.decimal.precision"
DECIMAL_TYPE = "confluent.type.Decimal"
DATE_TYPE = "google.type.Date"
TIME_TYPE = "google.type.TimeOfDay"
TIMESTAMP_TYPE = "google.protobuf.Timestamp"
META_FIELD = 1088  # confluent.field_meta, the FieldOptions extension Confluent's Meta rides in

_F = descriptor_pb2.FieldDescriptorProto


_LOGICAL_FILES = {
    Decimal.LOGICAL_NAME: ("confluent/type/decimal.proto", DECIMAL_TYPE),
    Date.LOGICAL_NAME: ("google/type/date.proto", DATE_TYPE),
    Time.LOGICAL_NAME: ("google/type/timeofday.proto", TIME_TYPE),
    Timestamp.LOGICAL_NAME: ("google/protobuf/timestamp.proto", TIMESTAMP_TYPE),
}
_WRAPPERS: dict[Type, str] = {
    Type.INT8: "Int32Value",
    Type.INT16: "Int32Value",
    Type.INT32: "Int32Value",
    Type.INT64: "Int64Value",
    Type.FLOAT32: "FloatValue",
    Type.FLOAT64: "DoubleValue",
    Type.BOOLEAN: "BoolValue",
    Type.STRING: "StringValue",
    Type.BYTES: "BytesValue",
}
_WRAPPER_TYPES: dict[str, Type] = {
    "google.protobuf.Int32Value": Type.INT32,
    "google.protobuf.UInt32Value": Type.INT64,
    "google.protobuf.Int64Value": Type.INT64,
    "google.protobuf.UInt64Value": Type.INT64,
    "google.protobuf.FloatValue": Type.FLOAT32,
    "google.protobuf.DoubleValue": Type.FLOAT64,
    "google.protobuf.BoolValue": Type.BOOLEAN,
    "google.protobuf.StringValue": Type.STRING,
    "google.protobuf.BytesValue": Type.BYTES,
}
_SCALARS: dict[Type, int] = {
    Type.INT8: _F.TYPE_INT32,
    Type.INT16: _F.TYPE_INT32,
    Type.INT32: _F.TYPE_INT32,
    Type.INT64: _F.TYPE_INT64,
    Type.FLOAT32: _F.TYPE_FLOAT,
    Type.FLOAT64: _F.TYPE_DOUBLE,
    Type.BOOLEAN: _F.TYPE_BOOL,
    Type.STRING: _F.TYPE_STRING,
    Type.BYTES: _F.TYPE_BYTES,
}
_FD = FieldDescriptor
_CONNECT_OF_PROTO: dict[int, Type] = {
    _FD.TYPE_INT32: Type.INT32,
    _FD.TYPE_SINT32: Type.INT32,
    _FD.TYPE_SFIXED32: Type.INT32,
    _FD.TYPE_UINT32: Type.INT64,
    _FD.TYPE_FIXED32: Type.INT64,
    _FD.TYPE_INT64: Type.INT64,
    _FD.TYPE_SINT64: Type.INT64,
    _FD.TYPE_SFIXED64: Type.INT64,
    _FD.TYPE_UINT64: Type.INT64,
    _FD.TYPE_FIXED64: Type.INT64,
    _FD.TYPE_FLOAT: Type.FLOAT32,
    _FD.TYPE_DOUBLE: Type.FLOAT64,
    _FD.TYPE_BOOL: Type.BOOLEAN,
    _FD.TYPE_STRING: Type.STRING,
    _FD.TYPE_BYTES: Type.BYTES,
}
_MAP_KEY_TYPES = frozenset({Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.BOOLEAN, Type.STRING})
_NANOS_PER_MILLI = 1_000_000


# -- Confluent's field meta, carried as the raw bytes of the FieldOptions extension -----------


def _meta_bytes(params: Mapping[str, str]) -> bytes:
    out = bytearray()
    for key, value in params.items():
        entry = _len_field(1, key.encode()) + _len_field(2, value.encode())
        out += _len_field(2, entry)
    return bytes(out)


def _len_field(number: int, payload: bytes) -> bytes:
    return uvarint(number << 3 | 2) + uvarint(len(payload)) + payload


def _fields(data: bytes) -> Iterator[tuple[int, int, Any]]:
    """(number, wire type, value) of a serialized message, length-delimited values as bytes."""
    pos = 0
    while pos < len(data):
        key, pos = read_uvarint(data, pos)
        number, wire = key >> 3, key & 7
        value: Any
        if wire == 0:
            value, pos = read_uvarint(data, pos)
        elif wire == 2:
            length, pos = read_uvarint(data, pos)
            value, pos = data[pos : pos + length], pos + length
        elif wire == 1:
            value, pos = data[pos : pos + 8], pos + 8
        elif wire == 5:
            value, pos = data[pos : pos + 4], pos + 4
        else:
            return
        yield number, wire, value


def _meta_params(field_descriptor: FieldDescriptor) -> dict[str, str]:
    """The ``confluent.field_meta`` params of a field, if it has them."""
    if not field_descriptor.has_options:
        return {}
    raw = field_descriptor.GetOptions().SerializeToString()
    params: dict[str, str] = {}
    try:
        for number, wire, value in _fields(raw):
            if number == META_FIELD and wire == 2:
                for sub, sub_wire, entry in _fields(value):
                    if sub == 2 and sub_wire == 2:
                        parts = {n: v for n, w, v in _fields(entry) if w == 2}
                        params[bytes(parts.get(1, b"")).decode()] = bytes(parts.get(2, b"")).decode()
    except (ValueError, UnicodeDecodeError):
        return {}
    return params


# -- Connect → Protobuf schema ----------------------------------------------------------------


@dataclass
class ProtobufSchemaInfo:
    """A Connect schema's protobuf file, and the full name of its root message."""

    file: descriptor_pb2.FileDescriptorProto
    message_name: str
    pool: DescriptorPool = field(repr=False)

    @property
    def descriptor(self) -> Descriptor:
        found: Descriptor = self.pool.FindMessageTypeByName(self.message_name)  # type: ignore[no-untyped-call]
        return found

    def message_class(self) -> type[Message]:
        return GetMessageClass(self.descriptor)


def _split(name: str) -> tuple[str, str]:
    package, _, short = name.rpartition(".")
    return package, short


def _scrub(name: str) -> str:
    """A valid protobuf identifier for ``name`` (Confluent's ``scrub.invalid.names``)."""
    out = "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in name)
    return out if out[:1].isalpha() else "x" + out


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_")) or "Field"


class _Builder:
    def __init__(self, data: ProtobufData, package: str) -> None:
        self.data = data
        self.package = package
        self.default_index = 1
        self.dependencies: set[str] = set()

    def message(self, proto: descriptor_pb2.DescriptorProto, schema: Schema, scope: str) -> None:
        if schema.type is not Type.STRUCT:
            raise DataException(f"Protobuf needs a struct at the top, not {schema.type.name}")
        number = 1
        for connect_field in schema.fields:
            fs = connect_field.schema
            if fs.type is Type.STRUCT and fs.name and fs.name.startswith(UNION + "."):
                oneof_index = len(proto.oneof_decl)
                proto.oneof_decl.add(name=_scrub(fs.name[len(UNION) + 1 :].rsplit(".", 1)[-1]))
                for branch in fs.fields:
                    tag = (branch.schema.parameters or {}).get(TAG)
                    f = self.field(proto, branch.name, branch.schema, int(tag) if tag else number, scope)
                    f.oneof_index = oneof_index
                    f.ClearField("proto3_optional")
                    number = max(number, f.number) + 1
                continue
            tag = (fs.parameters or {}).get(TAG)
            f = self.field(proto, connect_field.name, fs, int(tag) if tag else number, scope)
            if tag is None:
                number += 1
        self._synthetic_oneofs(proto)

    @staticmethod
    def _synthetic_oneofs(proto: descriptor_pb2.DescriptorProto) -> None:
        """proto3 ``optional`` fields each need their own synthetic oneof, after the real ones."""
        for f in proto.field:
            if f.proto3_optional:
                f.oneof_index = len(proto.oneof_decl)
                proto.oneof_decl.add(name="_" + f.name)

    def field(
        self, proto: descriptor_pb2.DescriptorProto, name: str, schema: Schema, number: int, scope: str
    ) -> descriptor_pb2.FieldDescriptorProto:
        f = proto.field.add(name=_scrub(name), number=number, label=_F.LABEL_OPTIONAL)
        if schema.type is Type.ARRAY:
            assert schema.value_schema is not None
            f.label = _F.LABEL_REPEATED
            self.element(proto, f, schema.value_schema, scope, nullable=False)
        elif schema.type is Type.MAP:
            assert schema.key_schema is not None and schema.value_schema is not None
            f.label = _F.LABEL_REPEATED
            entry_name = _camel(f.name) + "Entry"
            entry = proto.nested_type.add(name=entry_name)
            inner = f"{scope}.{entry_name}"
            # Types the key and value need are defined beside the entry: an entry holds none.
            key = entry.field.add(name="key", number=1, label=_F.LABEL_OPTIONAL)
            self.element(proto, key, schema.key_schema, scope, nullable=False)
            value = entry.field.add(name="value", number=2, label=_F.LABEL_OPTIONAL)
            self.element(proto, value, schema.value_schema, scope, nullable=False)
            key_schema = schema.key_schema
            if (
                key_schema.type in _MAP_KEY_TYPES
                and key_schema.name is None
                and ENUM not in (key_schema.parameters or {})
            ):
                entry.options.map_entry = True
            f.type = _F.TYPE_MESSAGE
            f.type_name = "." + inner
        else:
            self.element(proto, f, schema, scope, nullable=schema.optional)
        return f

    def element(
        self,
        proto: descriptor_pb2.DescriptorProto,
        f: descriptor_pb2.FieldDescriptorProto,
        schema: Schema,
        scope: str,
        nullable: bool,
    ) -> None:
        params: dict[str, str] = {}
        logical = _LOGICAL_FILES.get(schema.name or "")
        if logical is not None:
            file_name, type_name = logical
            self.dependencies.add(file_name)
            f.type = _F.TYPE_MESSAGE
            f.type_name = "." + type_name
            if schema.name == Decimal.LOGICAL_NAME:
                parameters = schema.parameters or {}
                if PRECISION in parameters:
                    params["precision"] = parameters[PRECISION]
                params["scale"] = str(Decimal.scale(schema))
        elif schema.type is Type.STRUCT:
            short = _split(schema.name)[1] if schema.name else self.next_default()
            short = _scrub(short)
            if short == f.name:
                short += "Message"
            existing = [m for m in proto.nested_type if m.name == short]
            if not existing:
                nested = proto.nested_type.add(name=short)
                self.message(nested, schema, f"{scope}.{short}")
            f.type = _F.TYPE_MESSAGE
            f.type_name = f".{scope}.{short}"
        elif schema.type is Type.STRING and (schema.parameters or {}).get(ENUM):
            parameters = schema.parameters or {}
            enum_name = _scrub(_split(parameters[ENUM])[1])
            if not any(e.name == enum_name for e in proto.enum_type):
                enum = proto.enum_type.add(name=enum_name)
                symbols = sorted(
                    ((int(v), k[len(ENUM) + 1 :]) for k, v in parameters.items() if k.startswith(ENUM + ".")),
                )
                for value, symbol in symbols:
                    enum.value.add(name=symbol, number=value)
            f.type = _F.TYPE_ENUM
            f.type_name = f".{scope}.{enum_name}"
            if nullable and (self.data.optional_for_nullables or self.data.wrapper_for_nullables):
                f.proto3_optional = True  # an enum has no wrapper: presence keeps its null
        elif schema.type in _SCALARS:
            if schema.type in (Type.INT8, Type.INT16):
                params[CONNECT_TYPE] = schema.type.name.lower()
            if nullable and self.data.wrapper_for_nullables:
                self.dependencies.add("google/protobuf/wrappers.proto")
                f.type = _F.TYPE_MESSAGE
                f.type_name = ".google.protobuf." + _WRAPPERS[schema.type]
            else:
                f.type = _SCALARS[schema.type]  # type: ignore[assignment]
                if nullable and self.data.optional_for_nullables:
                    f.proto3_optional = True
        else:
            raise DataException(f"Protobuf cannot hold a {schema.type.name} inside another container")
        if params:
            f.options.ParseFromString(_len_field(META_FIELD, _meta_bytes(params)))
            self.dependencies.add("confluent/meta.proto")

    def next_default(self) -> str:
        self.default_index += 1
        return f"{DEFAULT_NAME}{self.default_index}"


# -- Protobuf → Connect -----------------------------------------------------------------------


class ProtobufData:
    """Connect ↔ Protobuf schemas and values (``optional.for.nullables`` and
    ``wrapper.for.nullables`` choose how optional Connect fields are written)."""

    def __init__(self, optional_for_nullables: bool = False, wrapper_for_nullables: bool = False) -> None:
        self.optional_for_nullables = optional_for_nullables
        self.wrapper_for_nullables = wrapper_for_nullables

    # schemas

    def from_connect_schema(self, schema: Schema) -> ProtobufSchemaInfo:
        full = schema.name or f"{DEFAULT_NAME}1"
        package, short = _split(full)
        short = _scrub(short)
        package = ".".join(_scrub(p) for p in package.split(".")) if package else ""
        builder = _Builder(self, package)
        proto = descriptor_pb2.FileDescriptorProto(name="default", syntax="proto3", package=package)
        message = proto.message_type.add(name=short)
        full_name = f"{package}.{short}" if package else short
        builder.message(message, schema, full_name)
        proto.dependency.extend(sorted(builder.dependencies))
        pool = new_pool()
        try:
            pool.Add(proto)  # type: ignore[no-untyped-call]
        except (TypeError, ValueError) as exc:
            raise DataException(f"the Connect schema {full} makes no valid Protobuf schema: {exc}") from None
        return ProtobufSchemaInfo(proto, full_name, pool)

    def to_connect_schema(self, descriptor: Descriptor) -> Schema:
        return self._message_schema(descriptor, (), optional=False)

    def _message_schema(self, descriptor: Descriptor, seen: tuple[str, ...], optional: bool) -> Schema:
        if descriptor.full_name in seen:
            raise DataException(
                f"message {descriptor.full_name} is recursive: Connect schemas cannot hold it"
            )
        seen = (*seen, descriptor.full_name)
        builder = SchemaBuilder.struct().name(descriptor.full_name)
        done_oneofs: set[str] = set()
        for f in descriptor.fields:
            oneof = f.containing_oneof
            if oneof is not None and not _synthetic(oneof):
                if oneof.name in done_oneofs:
                    continue
                done_oneofs.add(oneof.name)
                union = SchemaBuilder.struct().name(f"{UNION}.{oneof.name}").optional()
                for branch in oneof.fields:
                    union.field(branch.name, self._field_schema(branch, seen, tagged=True))
                builder.field(oneof.name, union.build())
                continue
            builder.field(f.name, self._field_schema(f, seen, tagged=False))
        if optional:
            builder.optional()
        return builder.build()

    def _field_schema(self, f: FieldDescriptor, seen: tuple[str, ...], tagged: bool) -> Schema:
        if f.is_repeated:
            message = f.message_type
            if message is not None and _is_map(f):
                key = self._element_schema(message.fields_by_name["key"], seen, {})
                value = self._element_schema(message.fields_by_name["value"], seen, {})
                return SchemaBuilder.map(key, value).optional().build()
            return SchemaBuilder.array(self._element_schema(f, seen, {})).optional().build()
        extra = {TAG: str(f.number)} if tagged else {}
        return self._element_schema(f, seen, extra)

    def _element_schema(self, f: FieldDescriptor, seen: tuple[str, ...], extra: dict[str, str]) -> Schema:
        params = _meta_params(f)
        builder: SchemaBuilder
        if f.type == _FD.TYPE_MESSAGE:
            name = f.message_type.full_name
            if name == DECIMAL_TYPE:
                builder = Decimal.builder(int(params.get("scale", "0") or 0))
                if "precision" in params:
                    builder.parameter(PRECISION, params["precision"])
            elif name == DATE_TYPE:
                builder = Date.builder()
            elif name == TIME_TYPE:
                builder = Time.builder()
            elif name == TIMESTAMP_TYPE:
                builder = Timestamp.builder()
            elif name in _WRAPPER_TYPES:
                builder = SchemaBuilder.type(_narrowed(_WRAPPER_TYPES[name], params))
            else:
                schema = self._message_schema(f.message_type, seen, optional=True)
                if not extra:
                    return schema
                return _with_parameters(schema, extra)
        elif f.type == _FD.TYPE_ENUM:
            builder = (
                SchemaBuilder.string().name(f.enum_type.full_name).parameter(ENUM, f.enum_type.full_name)
            )
            for value in f.enum_type.values:
                builder.parameter(f"{ENUM}.{value.name}", str(value.number))
        else:
            builder = SchemaBuilder.type(_narrowed(_CONNECT_OF_PROTO[f.type], params))
        for key, value in extra.items():
            builder.parameter(key, value)
        return builder.optional().build()

    # values

    def from_connect_value(self, info: ProtobufSchemaInfo, schema: Schema, value: Struct) -> Message:
        """The message ``value`` makes, of the root message of ``info`` (made from ``schema``)."""
        return self.from_connect_value_into(info.message_class(), schema, value)

    def from_connect_value_into(self, message_class: type[Message], schema: Schema, value: Struct) -> Message:
        """A ``message_class`` message holding ``value``, fields matched by name (a message
        class not made from ``schema``, e.g. a subject's latest schema, must have them all)."""
        message = message_class()
        try:
            self._fill(message, schema, value)
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            raise DataException(
                f"{schema.name or 'the struct'} does not fit {message.DESCRIPTOR.full_name}: {exc}"
            ) from None
        return message

    def _fill(self, message: Message, schema: Schema, value: Any) -> None:
        if not isinstance(value, Struct):
            raise DataException(
                f"expected a Struct for {schema.name or 'a struct'}, got {type(value).__name__}"
            )
        descriptor = message.DESCRIPTOR
        for connect_field in schema.fields:
            fs = connect_field.schema
            item = value.get(connect_field.name)
            if item is None:
                continue
            if fs.type is Type.STRUCT and fs.name and fs.name.startswith(UNION + "."):
                for branch in fs.fields:
                    branch_value = item.get(branch.name)
                    if branch_value is not None:
                        self._set(
                            message,
                            descriptor.fields_by_name[_scrub(branch.name)],
                            branch.schema,
                            branch_value,
                        )
                        break
                continue
            self._set(message, descriptor.fields_by_name[_scrub(connect_field.name)], fs, item)

    def _set(self, message: Message, f: FieldDescriptor, schema: Schema, value: Any) -> None:
        if schema.type is Type.ARRAY:
            assert schema.value_schema is not None
            target = getattr(message, f.name)
            for item in value:
                if item is None:
                    raise DataException(f"field {f.name}: Protobuf repeated fields cannot hold null")
                if f.type == _FD.TYPE_MESSAGE:
                    self._to_message(target.add(), schema.value_schema, item)
                else:
                    target.append(self._scalar(f, schema.value_schema, item))
            return
        if schema.type is Type.MAP:
            assert schema.key_schema is not None and schema.value_schema is not None
            target = getattr(message, f.name)
            entry = f.message_type
            key_f, value_f = entry.fields_by_name["key"], entry.fields_by_name["value"]
            for k, v in value.items():
                if k is None or v is None:
                    raise DataException(f"field {f.name}: Protobuf map entries cannot hold null")
                if entry.GetOptions().map_entry:
                    key = self._scalar(key_f, schema.key_schema, k)
                    if value_f.type == _FD.TYPE_MESSAGE:
                        self._to_message(target[key], schema.value_schema, v)
                    else:
                        target[key] = self._scalar(value_f, schema.value_schema, v)
                else:
                    added = target.add()
                    self._set(added, key_f, schema.key_schema, k)
                    self._set(added, value_f, schema.value_schema, v)
            return
        if f.type == _FD.TYPE_MESSAGE:
            self._to_message(getattr(message, f.name), schema, value)
        else:
            setattr(message, f.name, self._scalar(f, schema, value))

    @staticmethod
    def _scalar(f: FieldDescriptor, schema: Schema, value: Any) -> Any:
        if f.type == _FD.TYPE_ENUM:
            found = f.enum_type.values_by_name.get(value)
            if found is None:
                raise DataException(
                    f"field {f.name}: {value!r} is not a symbol of enum {f.enum_type.full_name}"
                )
            return found.number
        if schema.type is Type.BYTES and not isinstance(value, bytes):
            return bytes(value)
        return value

    def _to_message(self, target: Message, schema: Schema, value: Any) -> None:
        target.SetInParent()  # present even when every field of it is null or default
        name = target.DESCRIPTOR.full_name
        if name == DECIMAL_TYPE:
            d = decimal.Decimal(value)
            scale = (
                Decimal.scale(schema) if schema.name == Decimal.LOGICAL_NAME else -int(d.as_tuple().exponent)
            )
            unscaled = Decimal.unscaled_at(scale, d)
            target.value = unscaled.to_bytes(max(1, (unscaled.bit_length() + 8) // 8), "big", signed=True)  # type: ignore[attr-defined]
            target.scale = scale  # type: ignore[attr-defined]
            precision = (schema.parameters or {}).get(PRECISION)
            target.precision = int(precision) if precision else len(str(abs(unscaled)))  # type: ignore[attr-defined]
        elif name == DATE_TYPE:
            target.year, target.month, target.day = value.year, value.month, value.day  # type: ignore[attr-defined]
        elif name == TIME_TYPE:
            millis = Time.from_logical(schema, value)
            target.hours, rest = divmod(millis, 3_600_000)  # type: ignore[attr-defined]
            target.minutes, rest = divmod(rest, 60_000)  # type: ignore[attr-defined]
            target.seconds, rest = divmod(rest, 1000)  # type: ignore[attr-defined]
            target.nanos = rest * _NANOS_PER_MILLI  # type: ignore[attr-defined]
        elif name == TIMESTAMP_TYPE:
            millis = Timestamp.from_logical(schema, value)
            target.seconds, rest = divmod(millis, 1000)  # type: ignore[attr-defined]
            target.nanos = rest * _NANOS_PER_MILLI  # type: ignore[attr-defined]
        elif name in _WRAPPER_TYPES:
            target.value = value  # type: ignore[attr-defined]
        else:
            self._fill(target, schema, value)

    def to_connect_value(self, schema: Schema, message: Message) -> Struct:
        values = []
        descriptor = message.DESCRIPTOR
        for connect_field in schema.fields:
            fs = connect_field.schema
            if fs.type is Type.STRUCT and fs.name and fs.name.startswith(UNION + "."):
                which = message.WhichOneof(connect_field.name)
                branches = [
                    self._read(message, descriptor.fields_by_name[b.name], b.schema)
                    if b.name == which
                    else None
                    for b in fs.fields
                ]
                values.append(Struct.from_values(fs, branches) if which else None)
                continue
            values.append(self._read(message, descriptor.fields_by_name[connect_field.name], fs))
        return Struct.from_values(schema, values)

    def _read(self, message: Message, f: FieldDescriptor, schema: Schema) -> Any:
        if schema.type is Type.ARRAY:
            assert schema.value_schema is not None
            return [self._element(f, schema.value_schema, item) for item in getattr(message, f.name)]
        if schema.type is Type.MAP:
            assert schema.key_schema is not None and schema.value_schema is not None
            entry = f.message_type
            key_f, value_f = entry.fields_by_name["key"], entry.fields_by_name["value"]
            if entry.GetOptions().map_entry:
                return {
                    self._element(key_f, schema.key_schema, k): self._element(value_f, schema.value_schema, v)
                    for k, v in getattr(message, f.name).items()
                }
            return {
                self._read(item, key_f, schema.key_schema): self._read(item, value_f, schema.value_schema)
                for item in getattr(message, f.name)
            }
        if f.has_presence and not message.HasField(f.name):
            return None
        return self._element(f, schema, getattr(message, f.name))

    def _element(self, f: FieldDescriptor, schema: Schema, value: Any) -> Any:
        if f.type == _FD.TYPE_ENUM:
            found = f.enum_type.values_by_number.get(value)
            return found.name if found is not None else str(value)
        if f.type != _FD.TYPE_MESSAGE:
            if schema.type in (Type.FLOAT32, Type.FLOAT64):
                return float(value)
            return value
        name = f.message_type.full_name
        if name == DECIMAL_TYPE:
            unscaled = int.from_bytes(value.value, "big", signed=True)
            d = decimal.Decimal(unscaled).scaleb(-value.scale)
            return d.quantize(decimal.Decimal(1).scaleb(-Decimal.scale(schema)))
        if name == DATE_TYPE:
            return datetime.date(value.year, value.month, value.day)
        if name == TIME_TYPE:
            millis = (
                (value.hours * 60 + value.minutes) * 60 + value.seconds
            ) * 1000 + value.nanos // _NANOS_PER_MILLI
            return Time.to_logical(schema, millis)
        if name == TIMESTAMP_TYPE:
            return Timestamp.to_logical(schema, value.seconds * 1000 + value.nanos // _NANOS_PER_MILLI)
        if name in _WRAPPER_TYPES:
            return float(value.value) if schema.type in (Type.FLOAT32, Type.FLOAT64) else value.value
        return self.to_connect_value(schema, value)

    # bytes

    @staticmethod
    def parse(message_class: type[Message], payload: bytes) -> Message:
        message = message_class()
        try:
            message.ParseFromString(payload)
        except (DecodeError, RuntimeError, ValueError) as exc:
            raise DataException(
                f"the payload is not a {message_class.DESCRIPTOR.full_name} message: {exc}"
            ) from None
        return message


def _narrowed(connect_type: Type, params: Mapping[str, str]) -> Type:
    """INT8/INT16 back from an int32 field's ``connect.type``."""
    if connect_type is Type.INT32 and params.get(CONNECT_TYPE) in ("int8", "int16"):
        return Type.INT8 if params[CONNECT_TYPE] == "int8" else Type.INT16
    return connect_type


def _is_map(f: FieldDescriptor) -> bool:
    """A repeated field of map entries: a protobuf map, or an entry message for a map whose keys
    a protobuf map cannot have (``<Field>Entry`` with just ``key`` = 1 and ``value`` = 2)."""
    message = f.message_type
    if message is None or not f.is_repeated:
        return False
    if message.GetOptions().map_entry:
        return True
    numbers = {x.name: x.number for x in message.fields}
    return message.name == _camel(f.name) + "Entry" and numbers == {"key": 1, "value": 2}


def _synthetic(oneof: Any) -> bool:
    """A proto3 ``optional`` field's oneof, which is no union."""
    fields = list(oneof.fields)
    return (
        len(fields) == 1
        and bool(getattr(fields[0], "has_presence", False))
        and oneof.name == "_" + fields[0].name
    )


def _with_parameters(schema: Schema, extra: Mapping[str, str]) -> Schema:
    builder = SchemaBuilder.struct().name(schema.name or "").optional()
    for f in schema.fields:
        builder.field(f.name, f.schema)
    builder.parameters({**(schema.parameters or {}), **extra})
    return builder.build()
