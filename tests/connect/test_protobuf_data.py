"""Connect ↔ Protobuf (``connect.api.protobuf``): Connect values through message bytes and
back for every Connect type (hypothesis), what a descriptor written elsewhere reads as, and
Confluent's message-index framing, judged by Confluent's own ``SchemaId``."""

from __future__ import annotations

import datetime
import decimal
import io
import struct
from typing import Any

import pytest
from confluent_kafka.schema_registry.common.serde import SchemaId
from google.protobuf import descriptor_pb2
from hypothesis import given, settings
from hypothesis import strategies as st

from connect.api import DataException, Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp, Type
from connect.api.protobuf import ProtobufData, decode_indexes, encode_indexes, new_pool

F = descriptor_pb2.FieldDescriptorProto

# -- strategies: Connect schemas of every type, and values for them ---------------------------

_INT_RANGES = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}


def _leaf_value(schema: Schema) -> st.SearchStrategy[Any]:
    if schema.name == Decimal.LOGICAL_NAME:
        scale = Decimal.scale(schema)
        return st.integers(-(10**20), 10**20).map(lambda n: decimal.Decimal(n).scaleb(-scale))
    if schema.name == Date.LOGICAL_NAME:
        return st.dates(datetime.date(1, 1, 1), datetime.date(9999, 12, 31))
    if schema.name == Time.LOGICAL_NAME:
        return st.integers(0, 86_399_999).map(lambda ms: Time.to_logical(schema, ms))
    if schema.name == Timestamp.LOGICAL_NAME:
        return st.integers(-(2**41), 2**41).map(lambda ms: Timestamp.to_logical(schema, ms))
    if schema.type in _INT_RANGES:
        bits = _INT_RANGES[schema.type]
        return st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    if schema.type is Type.FLOAT32:
        return st.floats(width=32, allow_nan=False)
    if schema.type is Type.FLOAT64:
        return st.floats(allow_nan=False)
    if schema.type is Type.BOOLEAN:
        return st.booleans()
    if schema.type is Type.STRING:
        if schema.parameters and "io.confluent.connect.protobuf.Enum" in schema.parameters:
            return st.sampled_from(["RED", "GREEN", "BLUE"])
        return st.text(max_size=8)
    return st.binary(max_size=8)


_ENUM = (
    SchemaBuilder.string()
    .name("ns.Colour")
    .parameter("io.confluent.connect.protobuf.Enum", "ns.Colour")
    .parameter("io.confluent.connect.protobuf.Enum.RED", "0")
    .parameter("io.confluent.connect.protobuf.Enum.GREEN", "1")
    .parameter("io.confluent.connect.protobuf.Enum.BLUE", "2")
)
_LEAVES = [
    *(SchemaBuilder.type(t) for t in (Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.FLOAT32)),
    *(SchemaBuilder.type(t) for t in (Type.FLOAT64, Type.BOOLEAN, Type.STRING, Type.BYTES)),
    Decimal.builder(3),
    Date.builder(),
    Time.builder(),
    Timestamp.builder(),
]


def _leaf(index: int) -> Schema:
    if index == len(_LEAVES):
        return _ENUM.optional().build()
    return _LEAVES[index].optional().build()


_leaf_schemas = st.integers(0, len(_LEAVES)).map(_leaf)
_map_keys = st.sampled_from([Type.STRING, Type.INT32, Type.INT64, Type.BOOLEAN, Type.FLOAT64])


@st.composite
def _field_schema(draw: st.DrawFn, depth: int) -> Schema:
    kind = draw(
        st.sampled_from(["leaf", "leaf", "array", "map", "struct"] if depth < 2 else ["leaf", "array"])
    )
    if kind == "leaf":
        return draw(_leaf_schemas)
    if kind == "array":
        element = draw(_leaf_schemas)
        return SchemaBuilder.array(element).optional().build()
    if kind == "map":
        key = SchemaBuilder.type(draw(_map_keys)).optional().build()
        value = draw(_leaf_schemas) if draw(st.booleans()) else draw(_struct_schema(depth + 1, optional=True))
        return SchemaBuilder.map(key, value).optional().build()
    return draw(_struct_schema(depth + 1, optional=True))


_names = iter(range(10**9))


@st.composite
def _struct_schema(draw: st.DrawFn, depth: int, optional: bool) -> Schema:
    count = draw(st.integers(1, 5))
    builder = SchemaBuilder.struct().name(f"ns.Message{next(_names)}")
    for i in range(count):
        builder.field(f"f{i}", draw(_field_schema(depth)))
    if optional:
        builder.optional()
    return builder.build()


def _value(draw: st.DrawFn, schema: Schema, nullable: bool = True) -> Any:
    # A null array or map reads back empty (repeated fields have no presence): not drawn.
    if nullable and schema.type not in (Type.ARRAY, Type.MAP) and draw(st.integers(0, 4)) == 0:
        return None
    if schema.type is Type.STRUCT:
        struct_value = Struct(schema)
        for f in schema.fields:
            struct_value.put(f.name, _value(draw, f.schema))
        return struct_value
    if schema.type is Type.ARRAY:
        assert schema.value_schema is not None
        return [_value(draw, schema.value_schema, False) for _ in range(draw(st.integers(0, 3)))]
    if schema.type is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        keys = draw(st.lists(_leaf_value(schema.key_schema), max_size=3, unique=True))
        return {k: _value(draw, schema.value_schema, False) for k in keys}
    return draw(_leaf_value(schema))


class _Case(tuple[Schema, Struct]):
    """A schema and a value, shown by the value (hypothesis' pretty printer takes forever over Schemas)."""

    def __repr__(self) -> str:
        return f"Case({self[1]!r})"


@st.composite
def _schema_and_value(draw: st.DrawFn) -> tuple[Schema, Struct]:
    schema = draw(_struct_schema(0, optional=False))
    value = _value(draw, schema, nullable=False)
    assert isinstance(value, Struct)
    return _Case((schema, value))


def _plain(value: Any) -> Any:
    """A value with Structs as dicts, for comparing across schemas of equal shape."""
    if isinstance(value, Struct):
        return {f.name: _plain(value.get(f.name)) for f in value.schema.fields}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _shape(schema: Schema) -> Any:
    """A schema's types, logical names and parameters, leaving out optionality (proto3 fields are
    all optional) and the names of structs and enums (nested types take their message's scope)."""
    if schema.type is Type.STRUCT:
        return ("struct", [(f.name, _shape(f.schema)) for f in schema.fields])
    if schema.type is Type.ARRAY:
        assert schema.value_schema is not None
        return ("array", _shape(schema.value_schema))
    if schema.type is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        return ("map", _shape(schema.key_schema), _shape(schema.value_schema))
    enum = "io.confluent.connect.protobuf.Enum"
    params = {k: v for k, v in (schema.parameters or {}).items() if k != enum}
    return (schema.type, None if enum in (schema.parameters or {}) else schema.name, params)


def _round_trip(data: ProtobufData, schema: Schema, value: Struct) -> tuple[Schema, Struct]:
    info = data.from_connect_schema(schema)
    payload = data.from_connect_value(info, schema, value).SerializeToString()
    read_schema = data.to_connect_schema(info.descriptor)
    return read_schema, data.to_connect_value(read_schema, data.parse(info.message_class(), payload))


@settings(max_examples=150, deadline=None)
@given(_schema_and_value())
def test_every_connect_type_survives_message_bytes_with_optional_for_nullables(
    case: tuple[Schema, Struct],
) -> None:
    schema, value = case
    read_schema, read = _round_trip(ProtobufData(optional_for_nullables=True), schema, value)
    assert _shape(read_schema) == _shape(schema)
    assert _plain(read) == _plain(value)


@settings(max_examples=60, deadline=None)
@given(_schema_and_value())
def test_wrappers_keep_nulls_too(case: tuple[Schema, Struct]) -> None:
    schema, value = case
    read_schema, read = _round_trip(ProtobufData(wrapper_for_nullables=True), schema, value)
    assert _plain(read) == _plain(value)
    assert _shape(read_schema) == _shape(schema)


def test_by_default_a_null_scalar_is_not_written_and_reads_as_the_proto3_default() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("n", SchemaBuilder.int32().optional().build())
        .field("s", SchemaBuilder.string().optional().build())
        .field("ts", Timestamp.builder().optional().build())
        .build()
    )
    data = ProtobufData()
    info = data.from_connect_schema(schema)
    assert info.message_name == "ConnectDefault1"
    assert [f.proto3_optional for f in info.file.message_type[0].field] == [False, False, False]
    read_schema, read = _round_trip(data, schema, Struct(schema))
    assert _plain(read) == {"n": 0, "s": "", "ts": None}  # a message-typed field keeps its absence
    assert all(f.schema.optional for f in read_schema.fields)


def test_layout_follows_confluent_names_numbers_and_dependencies() -> None:
    inner = (
        SchemaBuilder.struct()
        .name("other.inner")
        .field("x", SchemaBuilder.int16().build())
        .optional()
        .build()
    )
    schema = (
        SchemaBuilder.struct()
        .name("com.acme.Order")
        .field("id", SchemaBuilder.int64().build())
        .field("inner", inner)
        .field("tagged", SchemaBuilder.string().parameter("io.confluent.connect.protobuf.Tag", "7").build())
        .field("amount", Decimal.builder(2).parameter("connect.decimal.precision", "10").build())
        .field("at", Timestamp.builder().build())
        .field(
            "tags", SchemaBuilder.map(SchemaBuilder.string().build(), SchemaBuilder.int32().build()).build()
        )
        .build()
    )
    info = ProtobufData().from_connect_schema(schema)
    file = info.file
    assert (file.package, file.syntax, info.message_name) == ("com.acme", "proto3", "com.acme.Order")
    message = file.message_type[0]
    assert [(f.name, f.number) for f in message.field] == [
        ("id", 1),
        ("inner", 2),
        ("tagged", 7),
        ("amount", 3),
        ("at", 4),
        ("tags", 5),
    ]
    assert message.field[1].type_name == ".com.acme.Order.innerMessage"  # not the field's own name
    assert message.field[3].type_name == ".confluent.type.Decimal"
    assert message.field[4].type_name == ".google.protobuf.Timestamp"
    assert [n.name for n in message.nested_type] == ["innerMessage", "TagsEntry"]
    assert message.nested_type[1].options.map_entry
    assert set(file.dependency) == {
        "confluent/meta.proto",
        "confluent/type/decimal.proto",
        "google/protobuf/timestamp.proto",
    }
    read = ProtobufData().to_connect_schema(info.descriptor)
    amount = read.field("amount")
    assert amount is not None and dict(amount.schema.parameters or {}) == {
        "scale": "2",
        "connect.decimal.precision": "10",
    }
    inner_read = read.field("inner")
    assert inner_read is not None and inner_read.schema.fields[0].schema.type is Type.INT16


def _foreign_file() -> descriptor_pb2.FileDescriptorProto:
    """A schema as someone else's protoc writes it: an enum, a oneof, unsigned ints, a map,
    wrappers and a Timestamp."""
    file = descriptor_pb2.FileDescriptorProto(name="shop.proto", package="shop", syntax="proto3")
    file.dependency.extend(["google/protobuf/timestamp.proto", "google/protobuf/wrappers.proto"])
    enum = file.enum_type.add(name="Kind")
    enum.value.add(name="KIND_UNKNOWN", number=0)
    enum.value.add(name="KIND_BOOK", number=3)
    item = file.message_type.add(name="Item")
    item.field.add(name="sku", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    item.field.add(name="count", number=2, type=F.TYPE_UINT32, label=F.LABEL_OPTIONAL)
    item.field.add(name="kind", number=3, type=F.TYPE_ENUM, type_name=".shop.Kind", label=F.LABEL_OPTIONAL)
    item.field.add(name="email", number=4, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL, oneof_index=0)
    item.field.add(name="phone", number=5, type=F.TYPE_SINT64, label=F.LABEL_OPTIONAL, oneof_index=0)
    item.oneof_decl.add(name="contact")
    item.field.add(
        name="at",
        number=6,
        type=F.TYPE_MESSAGE,
        type_name=".google.protobuf.Timestamp",
        label=F.LABEL_OPTIONAL,
    )
    item.field.add(
        name="note",
        number=7,
        type=F.TYPE_MESSAGE,
        type_name=".google.protobuf.StringValue",
        label=F.LABEL_OPTIONAL,
    )
    item.field.add(
        name="prices",
        number=8,
        type=F.TYPE_MESSAGE,
        type_name=".shop.Item.PricesEntry",
        label=F.LABEL_REPEATED,
    )
    entry = item.nested_type.add(name="PricesEntry")
    entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=F.TYPE_DOUBLE, label=F.LABEL_OPTIONAL)
    entry.options.map_entry = True
    return file


def test_a_foreign_descriptor_reads_as_connect_data() -> None:
    pool = new_pool()
    pool.Add(_foreign_file())  # type: ignore[no-untyped-call]
    descriptor = pool.FindMessageTypeByName("shop.Item")  # type: ignore[no-untyped-call]
    from google.protobuf.message_factory import GetMessageClass

    message: Any = GetMessageClass(descriptor)(sku="b-1", count=4_000_000_000, kind=3, phone=-5)
    message.at.seconds = 1_700_000_000
    message.at.nanos = 123_000_000
    message.note.value = "gift"
    message.prices["eur"] = 9.5
    data = ProtobufData()
    schema = data.to_connect_schema(descriptor)
    assert schema.name == "shop.Item"
    assert [f.name for f in schema.fields] == ["sku", "count", "kind", "contact", "at", "note", "prices"]
    contact = schema.field("contact")
    assert contact is not None and contact.schema.name == "io.confluent.connect.protobuf.Union.contact"
    kind = schema.field("kind")
    assert kind is not None and dict(kind.schema.parameters or {}) == {
        "io.confluent.connect.protobuf.Enum": "shop.Kind",
        "io.confluent.connect.protobuf.Enum.KIND_UNKNOWN": "0",
        "io.confluent.connect.protobuf.Enum.KIND_BOOK": "3",
    }
    value = data.to_connect_value(schema, data.parse(type(message), message.SerializeToString()))
    assert _plain(value) == {
        "sku": "b-1",
        "count": 4_000_000_000,
        "kind": "KIND_BOOK",
        "contact": {"email": None, "phone": -5},
        "at": datetime.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=datetime.UTC),
        "note": "gift",
        "prices": {"eur": 9.5},
    }
    # And back: the Connect value writes the same message.
    again = data.from_connect_value_into(type(message), schema, value)
    assert again == message


def test_a_recursive_message_is_refused() -> None:
    file = descriptor_pb2.FileDescriptorProto(name="tree.proto", package="t", syntax="proto3")
    node = file.message_type.add(name="Node")
    node.field.add(name="child", number=1, type=F.TYPE_MESSAGE, type_name=".t.Node", label=F.LABEL_OPTIONAL)
    pool = new_pool()
    pool.Add(file)  # type: ignore[no-untyped-call]
    with pytest.raises(DataException, match=r"t\.Node is recursive"):
        ProtobufData().to_connect_schema(pool.FindMessageTypeByName("t.Node"))  # type: ignore[no-untyped-call]


# -- message indexes --------------------------------------------------------------------------


def _confluent_frame(indexes: list[int]) -> bytes:
    return SchemaId("PROTOBUF", 7, message_indexes=indexes).id_to_bytes()


@given(st.lists(st.integers(0, 2**20), min_size=1, max_size=6))
def test_message_indexes_are_written_as_confluent_writes_them(indexes: list[int]) -> None:
    assert struct.pack(">bI", 0, 7) + encode_indexes(indexes) == _confluent_frame(indexes)
    assert decode_indexes(encode_indexes(indexes) + b"payload", 0) == (indexes, len(encode_indexes(indexes)))
    read = SchemaId("PROTOBUF")
    read.from_bytes(io.BytesIO(_confluent_frame(indexes)))
    assert read.message_indexes == indexes


def test_the_first_message_is_the_single_byte_zero() -> None:
    assert encode_indexes([0]) == b"\x00"
    assert decode_indexes(b"\x00\x08\x01", 0) == ([0], 1)


@pytest.mark.parametrize("bad", [b"", b"\x80", b"\x04\x02", b"\x03\x02", b"\x02\x01"])
def test_bad_message_indexes_are_refused(bad: bytes) -> None:
    with pytest.raises(ValueError):
        decode_indexes(bad, 0)
