"""Tests of connect.api.data: schemas, builders, structs, logical types."""

from __future__ import annotations

import dataclasses
import datetime
import decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connect.api.data import (
    Date,
    Decimal,
    Field,
    Parameters,
    Schema,
    SchemaAndValue,
    SchemaBuilder,
    SchemaBuilderException,
    Struct,
    Time,
    Timestamp,
    Type,
)
from connect.api.errors import DataException

UTC = datetime.UTC


def user_schema() -> Schema:
    return (
        SchemaBuilder.struct()
        .name("com.example.User")
        .field("id", Schema.INT32_SCHEMA)
        .field("name", Schema.OPTIONAL_STRING_SCHEMA)
        .build()
    )


# -- Type --------------------------------------------------------------------------------------------------


def test_type_names_are_kafkas() -> None:
    assert [t.name.lower() for t in Type] == [
        "int8", "int16", "int32", "int64", "float32", "float64",
        "boolean", "string", "bytes", "array", "map", "struct",
    ]  # fmt: skip
    assert all(t.value == t.name.lower() for t in Type)


def test_type_is_primitive() -> None:
    assert Type.INT8.is_primitive and Type.BYTES.is_primitive and Type.BOOLEAN.is_primitive
    assert not Type.ARRAY.is_primitive and not Type.MAP.is_primitive and not Type.STRUCT.is_primitive


# -- Schema ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, schema_type",
    [
        ("INT8", Type.INT8), ("INT16", Type.INT16), ("INT32", Type.INT32), ("INT64", Type.INT64),
        ("FLOAT32", Type.FLOAT32), ("FLOAT64", Type.FLOAT64), ("BOOLEAN", Type.BOOLEAN),
        ("STRING", Type.STRING), ("BYTES", Type.BYTES),
    ],
)  # fmt: skip
def test_schema_constants(name: str, schema_type: Type) -> None:
    required = getattr(Schema, f"{name}_SCHEMA")
    optional = getattr(Schema, f"OPTIONAL_{name}_SCHEMA")
    assert required == Schema(schema_type) and not required.optional
    assert optional == Schema(schema_type, optional=True) and optional.optional
    assert required.name is None and required.version is None and required.doc is None
    assert required.parameters is None and required.default_value is None and required.fields == ()


def test_schema_structural_equality_and_hash() -> None:
    a, b = user_schema(), user_schema()
    assert a is not b and a == b and hash(a) == hash(b)
    assert {a: 1}[b] == 1
    other = SchemaBuilder.struct().name("com.example.User").field("id", Schema.INT32_SCHEMA).build()
    assert a != other
    assert Schema(Type.INT32, doc="x") != Schema(Type.INT32)
    assert Schema(Type.INT32, version=1) != Schema(Type.INT32, version=2)
    assert Schema(Type.INT32, name="a") != Schema(Type.INT32, name="b")


def test_schema_with_unhashable_default_is_hashable() -> None:
    array = SchemaBuilder.array(Schema.INT32_SCHEMA).default_value([1, 2]).build()
    same = SchemaBuilder.array(Schema.INT32_SCHEMA).default_value([1, 2]).build()
    assert hash(array) == hash(same) and array == same
    assert array != SchemaBuilder.array(Schema.INT32_SCHEMA).default_value([1, 3]).build()
    mapping = SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT8_SCHEMA).default_value({"a": 1}).build()
    assert {mapping, array} == {mapping, array}


def test_parameters_order_insensitive_equality_hashable_readonly() -> None:
    a = Schema(Type.BYTES, parameters={"a": "1", "b": "2"})
    b = Schema(Type.BYTES, parameters={"b": "2", "a": "1"})
    assert isinstance(a.parameters, Parameters)
    assert a == b and hash(a) == hash(b)
    assert list(a.parameters or {}) == ["a", "b"]  # insertion order is kept for serialization
    assert a.parameters == {"a": "1", "b": "2"} and a.parameters != {"a": "1"}
    assert a.parameters is not None and a.parameters["a"] == "1" and len(a.parameters) == 2
    with pytest.raises(TypeError):
        a.parameters["c"] = "3"  # type: ignore[index]
    assert repr(Parameters({"a": "1"})) == "Parameters({'a': '1'})"
    with pytest.raises(DataException, match=r"must be strings"):
        Parameters({"a": 1})  # type: ignore[arg-type]


def test_schema_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Schema.INT32_SCHEMA.optional = True  # type: ignore[misc]


def test_schema_repr_like_kafka() -> None:
    assert repr(Schema.INT32_SCHEMA) == "Schema{INT32}"
    assert repr(Schema.OPTIONAL_STRING_SCHEMA) == "Schema{STRING,optional}"
    assert repr(user_schema()) == "Schema{com.example.User:STRUCT}"


def test_schema_field_lookup() -> None:
    s = user_schema()
    assert s.field("id") == Field("id", 0, Schema.INT32_SCHEMA)
    assert s.field("name") == Field("name", 1, Schema.OPTIONAL_STRING_SCHEMA)
    assert s.field("nope") is None
    assert [f.name for f in s.fields] == ["id", "name"]
    with pytest.raises(DataException, match=r"non-struct"):
        Schema.INT32_SCHEMA.field("x")


def test_schema_constructor_checks_consistency() -> None:
    with pytest.raises(DataException, match=r"key schema and a value schema"):
        Schema(Type.MAP, value_schema=Schema.INT8_SCHEMA)
    with pytest.raises(DataException, match=r"value \(item\) schema"):
        Schema(Type.ARRAY)
    with pytest.raises(DataException, match=r"Only MAP schemas have a key schema"):
        Schema(Type.ARRAY, key_schema=Schema.INT8_SCHEMA, value_schema=Schema.INT8_SCHEMA)
    with pytest.raises(DataException, match=r"Only ARRAY and MAP"):
        Schema(Type.INT8, value_schema=Schema.INT8_SCHEMA)
    with pytest.raises(DataException, match=r"Only STRUCT schemas have fields"):
        Schema(Type.INT8, fields=(Field("a", 0, Schema.INT8_SCHEMA),))
    with pytest.raises(DataException, match=r"has index 1, expected 0"):
        Schema(Type.STRUCT, fields=(Field("a", 1, Schema.INT8_SCHEMA),))
    with pytest.raises(DataException, match=r"Duplicate field name 'a'"):
        Schema(Type.STRUCT, fields=(Field("a", 0, Schema.INT8_SCHEMA), Field("a", 1, Schema.INT8_SCHEMA)))
    with pytest.raises(DataException, match=r"version must be an int"):
        Schema(Type.INT8, version=True)
    with pytest.raises(DataException, match=r"must be a Type"):
        Schema("int8")  # type: ignore[arg-type]
    with pytest.raises(SchemaBuilderException, match=r"Invalid default value"):
        Schema(Type.INT8, default_value=1000)


def test_schema_fields_list_is_coerced_to_tuple() -> None:
    s = Schema(Type.STRUCT, fields=[Field("a", 0, Schema.INT8_SCHEMA)])  # type: ignore[arg-type]
    assert s.fields == (Field("a", 0, Schema.INT8_SCHEMA),) and hash(s) == hash(s)


# -- validate_value ----------------------------------------------------------------------------------------

INT_BOUNDS = [
    (Schema.INT8_SCHEMA, -128, 127),
    (Schema.INT16_SCHEMA, -32768, 32767),
    (Schema.INT32_SCHEMA, -(2**31), 2**31 - 1),
    (Schema.INT64_SCHEMA, -(2**63), 2**63 - 1),
]


@pytest.mark.parametrize("schema, lo, hi", INT_BOUNDS)
def test_validate_int_ranges(schema: Schema, lo: int, hi: int) -> None:
    Schema.validate_value(schema, lo)
    Schema.validate_value(schema, hi)
    for bad in (lo - 1, hi + 1):
        with pytest.raises(DataException, match=rf"{bad} is out of range for {schema.type.name}"):
            Schema.validate_value(schema, bad)
    with pytest.raises(DataException, match=rf"expected int for {schema.type.name}, got bool"):
        Schema.validate_value(schema, True)
    with pytest.raises(DataException, match=r"expected int .* got float"):
        Schema.validate_value(schema, 1.0)
    with pytest.raises(DataException, match=r"expected int .* got str"):
        Schema.validate_value(schema, "1")


def test_validate_floats() -> None:
    for schema in (Schema.FLOAT32_SCHEMA, Schema.FLOAT64_SCHEMA):
        Schema.validate_value(schema, 1.5)
        Schema.validate_value(schema, 3)  # ints are accepted
        Schema.validate_value(schema, float("inf"))
        Schema.validate_value(schema, float("nan"))
        with pytest.raises(DataException, match=r"expected float .* got bool"):
            Schema.validate_value(schema, False)
        with pytest.raises(DataException, match=r"expected float .* got str"):
            Schema.validate_value(schema, "1.5")
    Schema.validate_value(Schema.FLOAT32_SCHEMA, 3.4028234663852886e38)
    with pytest.raises(DataException, match=r"out of range for FLOAT32"):
        Schema.validate_value(Schema.FLOAT32_SCHEMA, 1e39)
    Schema.validate_value(Schema.FLOAT64_SCHEMA, 1e308)


def test_validate_boolean_string_bytes() -> None:
    Schema.validate_value(Schema.BOOLEAN_SCHEMA, True)
    with pytest.raises(DataException, match=r"expected bool for BOOLEAN, got int"):
        Schema.validate_value(Schema.BOOLEAN_SCHEMA, 1)
    Schema.validate_value(Schema.STRING_SCHEMA, "x")
    with pytest.raises(DataException, match=r"expected str for STRING, got bytes"):
        Schema.validate_value(Schema.STRING_SCHEMA, b"x")
    for ok in (b"x", bytearray(b"x"), memoryview(b"x")):
        Schema.validate_value(Schema.BYTES_SCHEMA, ok)
    with pytest.raises(DataException, match=r"expected bytes for BYTES, got str"):
        Schema.validate_value(Schema.BYTES_SCHEMA, "x")


def test_validate_null() -> None:
    Schema.validate_value(Schema.OPTIONAL_INT8_SCHEMA, None)
    Schema.validate_value(SchemaBuilder.int8().default_value(3).build(), None)
    with pytest.raises(DataException, match=r"^Invalid value: null used for required INT8 schema$"):
        Schema.validate_value(Schema.INT8_SCHEMA, None)
    with pytest.raises(DataException, match=r'^Invalid value for field "qty": null used for required INT8'):
        Schema.validate_value(Schema.INT8_SCHEMA, None, path="qty")


def test_validate_array_with_path() -> None:
    schema = SchemaBuilder.array(Schema.INT8_SCHEMA).build()
    Schema.validate_value(schema, [1, 2, 3])
    Schema.validate_value(schema, [])
    with pytest.raises(DataException, match=r"expected list for ARRAY, got tuple"):
        Schema.validate_value(schema, (1, 2))
    with pytest.raises(
        DataException, match=r'^Invalid value for field "\[2\]": 300 is out of range for INT8$'
    ):
        Schema.validate_value(schema, [1, 2, 300])


def test_validate_map_with_path() -> None:
    schema = SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT8_SCHEMA).build()
    Schema.validate_value(schema, {"a": 1})
    with pytest.raises(DataException, match=r"expected dict for MAP, got list"):
        Schema.validate_value(schema, [("a", 1)])
    with pytest.raises(DataException, match=r"""field "<key 5>": expected str for STRING, got int"""):
        Schema.validate_value(schema, {5: 1})
    with pytest.raises(DataException, match=r"""field "\['b'\]": expected int for INT8, got str"""):
        Schema.validate_value(schema, {"a": 1, "b": "x"})


def test_validate_struct_with_nested_path() -> None:
    item = SchemaBuilder.struct().name("Item").field("qty", Schema.INT8_SCHEMA).build()
    order = SchemaBuilder.struct().field("items", SchemaBuilder.array(item).build()).build()
    good = Struct(order).put("items", [Struct(item).put("qty", 1)])
    Schema.validate_value(order, good)
    missing = Struct(order)
    missing._values[0] = [Struct(item).put("qty", 1), Struct(item)]  # bypass put's validation
    with pytest.raises(DataException, match=r'field "items\[1\].qty": null used for required INT8'):
        Schema.validate_value(order, missing)
    with pytest.raises(DataException, match=r"expected Struct for STRUCT, got dict"):
        Schema.validate_value(order, {"items": []})
    with pytest.raises(DataException, match=r"Struct schemas do not match"):
        Schema.validate_value(order, Struct(item).put("qty", 1))


def test_validate_logical_types_by_python_class() -> None:
    Schema.validate_value(Decimal.schema(2), decimal.Decimal("1.23"))
    with pytest.raises(DataException, match=r"expected decimal.Decimal for logical type Decimal, got float"):
        Schema.validate_value(Decimal.schema(2), 1.23)
    with pytest.raises(DataException, match=r"got bytes"):
        Schema.validate_value(Decimal.schema(2), b"\x01")
    Schema.validate_value(Date.SCHEMA, datetime.date(2024, 5, 1))
    with pytest.raises(DataException, match=r"expected datetime.date for logical type Date, got datetime"):
        Schema.validate_value(Date.SCHEMA, datetime.datetime(2024, 5, 1))
    with pytest.raises(DataException, match=r"got int"):
        Schema.validate_value(Date.SCHEMA, 19844)
    Schema.validate_value(Time.SCHEMA, datetime.time(1, 2, 3))
    with pytest.raises(DataException, match=r"expected datetime.time for logical type Time"):
        Schema.validate_value(Time.SCHEMA, 3723000)
    Schema.validate_value(Timestamp.SCHEMA, datetime.datetime(2024, 5, 1, tzinfo=UTC))
    with pytest.raises(
        DataException, match=r"expected datetime.datetime for logical type Timestamp, got date"
    ):
        Schema.validate_value(Timestamp.SCHEMA, datetime.date(2024, 5, 1))


# -- SchemaBuilder -----------------------------------------------------------------------------------------


def test_builder_constructors() -> None:
    pairs = [
        (SchemaBuilder.int8(), Type.INT8), (SchemaBuilder.int16(), Type.INT16),
        (SchemaBuilder.int32(), Type.INT32), (SchemaBuilder.int64(), Type.INT64),
        (SchemaBuilder.float32(), Type.FLOAT32), (SchemaBuilder.float64(), Type.FLOAT64),
        (SchemaBuilder.boolean(), Type.BOOLEAN), (SchemaBuilder.bool(), Type.BOOLEAN),
        (SchemaBuilder.string(), Type.STRING), (SchemaBuilder.bytes(), Type.BYTES),
        (SchemaBuilder.struct(), Type.STRUCT), (SchemaBuilder.type(Type.INT64), Type.INT64),
    ]  # fmt: skip
    for builder, schema_type in pairs:
        assert builder.build() == Schema(schema_type)
    assert SchemaBuilder.array(Schema.INT8_SCHEMA).build() == Schema(
        Type.ARRAY, value_schema=Schema.INT8_SCHEMA
    )
    assert SchemaBuilder.map(SchemaBuilder.string(), SchemaBuilder.int8()).build() == Schema(
        Type.MAP, key_schema=Schema.STRING_SCHEMA, value_schema=Schema.INT8_SCHEMA
    )


def test_builder_sets_everything_fluently() -> None:
    s = (
        SchemaBuilder.int32()
        .name("n")
        .version(3)
        .doc("d")
        .parameter("a", "b")
        .parameters({"c": "d"})
        .optional()
        .default_value(5)
        .build()
    )
    assert s == Schema(
        Type.INT32,
        optional=True,
        default_value=5,
        name="n",
        version=3,
        doc="d",
        parameters={"a": "b", "c": "d"},
    )
    assert SchemaBuilder.int8().parameters({}).build().parameters == Parameters()
    assert SchemaBuilder.int8().required().build().optional is False


def test_builder_setting_twice() -> None:
    # Setting the same value again is fine.
    SchemaBuilder.int8().name("a").name("a").optional().optional().version(1).version(1)
    with pytest.raises(SchemaBuilderException, match=r"name has already been set"):
        SchemaBuilder.int8().name("a").name("b")
    with pytest.raises(SchemaBuilderException, match=r"optional has already been set"):
        SchemaBuilder.int8().optional().required()
    with pytest.raises(SchemaBuilderException, match=r"version has already been set"):
        SchemaBuilder.int8().version(1).version(2)
    with pytest.raises(SchemaBuilderException, match=r"doc has already been set"):
        SchemaBuilder.int8().doc("a").doc("b")
    with pytest.raises(SchemaBuilderException, match=r"default has already been set"):
        SchemaBuilder.int8().default_value(1).default_value(2)
    assert issubclass(SchemaBuilderException, DataException)


def test_builder_default_is_validated() -> None:
    with pytest.raises(SchemaBuilderException, match=r"Invalid default value: 300 is out of range for INT8"):
        SchemaBuilder.int8().default_value(300)
    with pytest.raises(SchemaBuilderException, match=r"expected str for STRING"):
        SchemaBuilder.string().default_value(1)
    with pytest.raises(SchemaBuilderException, match=r"null used for required"):
        SchemaBuilder.string().default_value(None)
    day = datetime.date(2024, 1, 1)
    assert Date.builder().default_value(day).build().default_value == day
    with pytest.raises(SchemaBuilderException, match=r'expected int for INT8, got str \(at "\[0\]"\)'):
        SchemaBuilder.array(Schema.INT8_SCHEMA).default_value(["x"])


def test_builder_fields() -> None:
    s = (
        SchemaBuilder.struct()
        .field("a", SchemaBuilder.int8().optional())
        .field("b", Schema.STRING_SCHEMA)
        .build()
    )
    assert s.fields == (Field("a", 0, Schema.OPTIONAL_INT8_SCHEMA), Field("b", 1, Schema.STRING_SCHEMA))
    with pytest.raises(SchemaBuilderException, match=r"Cannot create fields on type INT8"):
        SchemaBuilder.int8().field("a", Schema.INT8_SCHEMA)
    with pytest.raises(SchemaBuilderException, match=r"field name duplication a"):
        SchemaBuilder.struct().field("a", Schema.INT8_SCHEMA).field("a", Schema.INT16_SCHEMA)
    with pytest.raises(SchemaBuilderException, match=r"non-empty string"):
        SchemaBuilder.struct().field("", Schema.INT8_SCHEMA)
    with pytest.raises(SchemaBuilderException, match=r"must be a Schema, got int"):
        SchemaBuilder.struct().field("a", 5)  # type: ignore[arg-type]
    with pytest.raises(SchemaBuilderException, match=r"array value schema must be a Schema"):
        SchemaBuilder.array(None)  # type: ignore[arg-type]
    with pytest.raises(SchemaBuilderException, match=r"Schema parameters must be strings"):
        SchemaBuilder.bytes().parameter("scale", 2)  # type: ignore[arg-type]
    with pytest.raises(SchemaBuilderException, match=r"version must be an int"):
        SchemaBuilder.bytes().version("1")  # type: ignore[arg-type]


def test_struct_default_value() -> None:
    point = SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA).build()
    origin = Struct(point).put("x", 0)
    with_default = SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA).default_value(origin).build()
    assert with_default.default_value == origin
    holder = SchemaBuilder.struct().field("p", with_default).build()
    assert Struct(holder).get("p") == origin
    Struct(holder).put("p", Struct(with_default).put("x", 1))  # a struct of the schema with the default
    Struct(holder).put("p", Struct(point).put("x", 1))  # or of the schema without it


# -- Struct ------------------------------------------------------------------------------------------------


def test_struct_put_get_validate() -> None:
    s = user_schema()
    st = Struct(s)
    assert st.put("id", 1) is st
    assert st.get("id") == 1 and st.get("name") is None and st.schema is s
    st.validate()
    with pytest.raises(
        DataException, match=r'^Invalid value for field "id": expected int for INT32, got str$'
    ):
        st.put("id", "1")
    with pytest.raises(DataException, match=r"nope is not a valid field name"):
        st.put("nope", 1)
    with pytest.raises(DataException, match=r"nope is not a valid field name"):
        st.get("nope")
    with pytest.raises(DataException, match=r'Invalid value for field "id": null used for required INT32'):
        Struct(s).validate()
    with pytest.raises(DataException, match=r"Not a struct schema"):
        Struct(Schema.INT32_SCHEMA)


def test_struct_defaults() -> None:
    s = SchemaBuilder.struct().field("status", SchemaBuilder.string().default_value("NEW").build()).build()
    st = Struct(s)
    st.validate()  # a missing required field with a default is fine
    assert st.get("status") == "NEW"
    assert st.get_without_default("status") is None
    st.put("status", None)
    assert st.get("status") == "NEW"
    st.put("status", "DONE")
    assert st.get("status") == "DONE" and st.get_without_default("status") == "DONE"


def test_struct_nested_must_be_complete() -> None:
    inner = SchemaBuilder.struct().field("a", Schema.INT8_SCHEMA).build()
    outer = SchemaBuilder.struct().field("inner", inner).build()
    with pytest.raises(DataException, match=r'field "inner.a": null used for required INT8'):
        Struct(outer).put("inner", Struct(inner))
    Struct(outer).put("inner", Struct(inner).put("a", 1)).validate()


def test_struct_equality_repr_hash() -> None:
    s = user_schema()
    a = Struct(s).put("id", 1).put("name", "x")
    b = Struct(user_schema()).put("id", 1).put("name", "x")
    assert a == b
    assert a != Struct(s).put("id", 2).put("name", "x")
    assert a != Struct(s).put("id", 1)
    assert a != "Struct{id=1,name=x}"
    assert repr(a) == "Struct{id=1,name=x}"
    assert repr(Struct(s).put("id", 1)) == "Struct{id=1}"
    with pytest.raises(TypeError):
        hash(a)


def test_schema_and_value() -> None:
    assert SchemaAndValue(None, None) == SchemaAndValue.NULL
    schema, value = SchemaAndValue(Schema.INT8_SCHEMA, 1)
    assert schema == Schema.INT8_SCHEMA and value == 1
    assert SchemaAndValue(Schema.INT8_SCHEMA, 1).value == 1


# -- Decimal -----------------------------------------------------------------------------------------------

# Reference values computed once with Java 17 (`new BigInteger(s).toByteArray()`, and for decimals
# `new BigDecimal(s).unscaledValue().toByteArray()` then Base64), see the test module history.
JAVA_BIG_INTEGER_BYTES = [
    (0, "00"), (1, "01"), (-1, "ff"), (127, "7f"), (128, "0080"), (-128, "80"), (-129, "ff7f"),
    (255, "00ff"), (256, "0100"), (-256, "ff00"), (12345, "3039"), (-12345, "cfc7"), (32767, "7fff"),
    (32768, "008000"), (-32769, "ff7fff"), (2**63 - 1, "7fffffffffffffff"), (-(2**63), "8000000000000000"),
    (2**63, "008000000000000000"), (10**30, "0c9f2c9cd04674edea40000000"),
    (-(10**30), "f360d3632fb98b1215c0000000"),
]  # fmt: skip


@pytest.mark.parametrize("unscaled, java_hex", JAVA_BIG_INTEGER_BYTES)
def test_decimal_bytes_match_java_big_integer(unscaled: int, java_hex: str) -> None:
    schema = Decimal.schema(0)
    assert Decimal.from_logical(schema, decimal.Decimal(unscaled)) == bytes.fromhex(java_hex)
    assert Decimal.to_logical(schema, bytes.fromhex(java_hex)) == unscaled


@pytest.mark.parametrize(
    "text, scale, java_hex",
    [("123.45", 2, "3039"), ("-123.45", 2, "cfc7"), ("0.00", 2, "00"), ("1.5", 1, "0f"), ("-0.01", 2, "ff"),
     ("99999999999999999999.99", 2, "021e19e0c9bab23fffff")],
)  # fmt: skip
def test_decimal_scaled_values_match_java(text: str, scale: int, java_hex: str) -> None:
    schema = Decimal.schema(scale)
    assert Decimal.from_logical(schema, decimal.Decimal(text)) == bytes.fromhex(java_hex)
    back = Decimal.to_logical(schema, bytes.fromhex(java_hex))
    assert back == decimal.Decimal(text) and str(back) == text


def test_decimal_schema_and_builder() -> None:
    s = Decimal.schema(2)
    assert s.type is Type.BYTES and s.name == "org.apache.kafka.connect.data.Decimal" and s.version == 1
    assert s.parameters == {"scale": "2"} and Decimal.scale(s) == 2
    assert Decimal.builder(2).optional().build() == dataclasses.replace(s, optional=True)
    assert Decimal.LOGICAL_NAME == "org.apache.kafka.connect.data.Decimal"


def test_decimal_rescaling() -> None:
    s = Decimal.schema(2)
    assert Decimal.from_logical(s, decimal.Decimal("1.5")) == bytes.fromhex("0096")  # unscaled 150
    assert Decimal.from_logical(s, decimal.Decimal("1.500")) == bytes.fromhex("0096")
    assert Decimal.from_logical(s, decimal.Decimal("1E+2")) == bytes.fromhex("2710")  # unscaled 10000
    assert Decimal.from_logical(s, 7) == bytes.fromhex("02bc")  # unscaled 700
    with pytest.raises(DataException, match=r"does not fit scale 2 without losing digits"):
        Decimal.from_logical(s, decimal.Decimal("1.234"))
    negative_scale = Decimal.schema(-2)
    assert Decimal.from_logical(negative_scale, decimal.Decimal("1200")) == b"\x0c"
    assert Decimal.to_logical(negative_scale, b"\x0c") == decimal.Decimal("1.2E+3")


def test_decimal_errors() -> None:
    s = Decimal.schema(2)
    with pytest.raises(DataException, match=r"expected decimal.Decimal, got float"):
        Decimal.from_logical(s, 1.5)  # type: ignore[arg-type]
    with pytest.raises(DataException, match=r"must be finite"):
        Decimal.from_logical(s, decimal.Decimal("NaN"))
    with pytest.raises(DataException, match=r"zero length"):
        Decimal.to_logical(s, b"")
    with pytest.raises(DataException, match=r"scale parameter not found"):
        Decimal.from_logical(Schema.BYTES_SCHEMA, decimal.Decimal(1))
    with pytest.raises(DataException, match=r"is not an integer"):
        Decimal.scale(Schema(Type.BYTES, parameters={"scale": "x"}))


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=-(10**40), max_value=10**40), st.integers(min_value=-5, max_value=20))
def test_decimal_round_trip_and_minimal_length(unscaled: int, scale: int) -> None:
    schema = Decimal.schema(scale)
    value = decimal.Decimal(unscaled).scaleb(-scale, decimal.Context(prec=100))
    encoded = Decimal.from_logical(schema, value)
    assert Decimal.to_logical(schema, encoded) == value
    assert int.from_bytes(encoded, "big", signed=True) == unscaled
    if len(encoded) > 1:  # no redundant sign byte, like BigInteger.toByteArray
        assert not (encoded[0] == 0 and encoded[1] < 0x80) and not (encoded[0] == 0xFF and encoded[1] >= 0x80)


# -- Date, Time, Timestamp ---------------------------------------------------------------------------------


def test_date() -> None:
    s = Date.SCHEMA
    assert s == SchemaBuilder.int32().name("org.apache.kafka.connect.data.Date").version(1).build()
    # Reference values from Java 17 LocalDate.toEpochDay.
    assert Date.from_logical(s, datetime.date(2024, 5, 1)) == 19844
    assert Date.from_logical(s, datetime.date(1969, 12, 31)) == -1
    assert Date.from_logical(s, datetime.date(1970, 1, 1)) == 0
    assert Date.to_logical(s, 19844) == datetime.date(2024, 5, 1)
    assert Date.to_logical(s, -1) == datetime.date(1969, 12, 31)
    with pytest.raises(DataException, match=r"expected datetime.date but was datetime"):
        Date.from_logical(s, datetime.datetime(2024, 5, 1))
    with pytest.raises(DataException, match=r"schema does not match"):
        Date.from_logical(Schema.INT32_SCHEMA, datetime.date(2024, 5, 1))
    with pytest.raises(DataException, match=r"schema does not match"):
        Date.to_logical(Schema.INT32_SCHEMA, 1)
    with pytest.raises(DataException, match=r"outside the range"):
        Date.to_logical(s, 2**31 - 1)


def test_time() -> None:
    s = Time.SCHEMA
    assert s.type is Type.INT32 and s.name == "org.apache.kafka.connect.data.Time" and s.version == 1
    # 12:34:56.789 = 45296789 ms (Java 17 LocalTime.toNanoOfDay() / 1e6).
    assert Time.from_logical(s, datetime.time(12, 34, 56, 789000)) == 45296789
    assert Time.from_logical(s, datetime.time(12, 34, 56, 789999)) == 45296789  # sub-ms truncated
    assert Time.to_logical(s, 45296789) == datetime.time(12, 34, 56, 789000)
    assert Time.to_logical(s, 0) == datetime.time(0)
    plus_two = datetime.timezone(datetime.timedelta(hours=2))
    assert Time.from_logical(s, datetime.time(1, 0, tzinfo=plus_two)) == 23 * 3600 * 1000
    with pytest.raises(DataException, match=r"milliseconds >= 0 and < 86400000"):
        Time.to_logical(s, 86400000)
    with pytest.raises(DataException, match=r"milliseconds >= 0"):
        Time.to_logical(s, -1)
    with pytest.raises(DataException, match=r"expected datetime.time but was int"):
        Time.from_logical(s, 5)  # type: ignore[arg-type]
    with pytest.raises(DataException, match=r"schema does not match"):
        Time.to_logical(Date.SCHEMA, 5)


def test_timestamp() -> None:
    s = Timestamp.SCHEMA
    assert s.type is Type.INT64 and s.name == "org.apache.kafka.connect.data.Timestamp" and s.version == 1
    # 2024-05-01T12:30:00.123Z = 1714566600123 ms (Java 17 Instant.toEpochMilli).
    aware = datetime.datetime(2024, 5, 1, 12, 30, 0, 123000, tzinfo=UTC)
    assert Timestamp.from_logical(s, aware) == 1714566600123
    assert Timestamp.from_logical(s, aware.replace(tzinfo=None)) == 1714566600123  # naive means UTC
    assert Timestamp.from_logical(s, aware.astimezone(datetime.timezone(datetime.timedelta(hours=-5)))) == (
        1714566600123
    )
    before_epoch = datetime.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC)
    assert Timestamp.from_logical(s, before_epoch) == -1
    assert Timestamp.from_logical(s, before_epoch.replace(microsecond=999999)) == -1  # floor, not toward zero
    back = Timestamp.to_logical(s, 1714566600123)
    assert back == aware and back.tzinfo is UTC
    with pytest.raises(DataException, match=r"expected datetime.datetime but was date"):
        Timestamp.from_logical(s, datetime.date(2024, 1, 1))  # type: ignore[arg-type]
    with pytest.raises(DataException, match=r"outside the range"):
        Timestamp.to_logical(s, 2**63 - 1)
    with pytest.raises(DataException, match=r"schema does not match"):
        Timestamp.from_logical(Schema.INT64_SCHEMA, aware)


MS_DATETIMES = st.datetimes(timezones=st.just(UTC)).map(
    lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000)
)


@settings(max_examples=100, deadline=None)
@given(MS_DATETIMES)
def test_timestamp_round_trip(value: datetime.datetime) -> None:
    assert Timestamp.to_logical(Timestamp.SCHEMA, Timestamp.from_logical(Timestamp.SCHEMA, value)) == value


@settings(max_examples=100, deadline=None)
@given(st.dates())
def test_date_round_trip(value: datetime.date) -> None:
    assert Date.to_logical(Date.SCHEMA, Date.from_logical(Date.SCHEMA, value)) == value


def test_module_docstring_example_runs() -> None:
    import connect.api.data as data_module

    doc = data_module.__doc__ or ""
    block = doc.split("Example, a source task producing a typed record value::", 1)[1]
    code_lines = []
    for line in block.splitlines()[1:]:
        if line and not line.startswith("    "):
            break
        code_lines.append(line[4:])
    namespace: dict[str, object] = {}
    exec("\n".join(code_lines), namespace)
    order = namespace["order"]
    assert isinstance(order, Struct)
    assert order.get("status") == "NEW" and order.get("amount") == decimal.Decimal("19.99")


# -- bulk construction and the fast validation path -----------------------------------------------------


def _person() -> Schema:
    return (
        SchemaBuilder.struct()
        .field("name", Schema.STRING_SCHEMA)
        .field("age", Schema.OPTIONAL_INT8_SCHEMA)
        .field("score", SchemaBuilder.float64().default_value(1.5).build())
        .build()
    )


def test_struct_from_values_validates_each_value_in_field_order() -> None:
    schema = _person()
    s = Struct.from_values(schema, ["ann", 42, None])
    assert s == Struct(schema).put("name", "ann").put("age", 42)
    assert s.values() == ["ann", 42, 1.5]
    assert s.values(defaults=False) == ["ann", 42, None]
    with pytest.raises(DataException, match='field "age": 300 is out of range for INT8'):
        Struct.from_values(schema, ["ann", 300, None])
    with pytest.raises(DataException, match='field "age": expected int for INT8, got bool'):
        Struct.from_values(schema, ["ann", True, None])
    with pytest.raises(DataException, match='field "name": null used for required STRING'):
        Struct.from_values(schema, [None, 1, None])
    with pytest.raises(DataException, match="2 values given for the 3 fields"):
        Struct.from_values(schema, ["ann", 1])
    with pytest.raises(DataException, match="Not a struct schema"):
        Struct.from_values(Schema.STRING_SCHEMA, ["x"])


def test_an_unchecked_struct_holds_the_values_as_given_and_validate_finds_bad_ones() -> None:
    schema = _person()
    s = Struct.unchecked(schema, ["ann", 42, None])
    assert s == Struct.from_values(schema, ["ann", 42, None])
    assert s.values() == ["ann", 42, 1.5]
    bad = Struct.unchecked(schema, ["ann", 300, None])  # not checked here...
    with pytest.raises(DataException, match="out of range"):
        bad.validate()  # ...but still found by a validation


def test_the_fast_path_never_accepts_what_the_full_check_refuses() -> None:
    # Plain types are accepted by exact type only; logical types keep their full check.
    strict = SchemaBuilder.struct().field("s", Schema.STRING_SCHEMA).field("f", Schema.FLOAT64_SCHEMA).build()
    with pytest.raises(DataException):
        Struct(strict).put("s", b"bytes")
    assert Struct(strict).put("f", 3).get("f") == 3  # an int is a valid FLOAT64, via the full check
    with pytest.raises(DataException):
        Struct(strict).put("f", True)
    logical = SchemaBuilder.struct().field("d", Decimal.schema(2)).field("t", Timestamp.SCHEMA).build()
    with pytest.raises(DataException):
        Struct(logical).put("d", b"\x01")  # Decimal is BYTES underneath, but takes decimal.Decimal
    with pytest.raises(DataException):
        Struct(logical).put("t", 1700000000000)  # Timestamp is INT64 underneath, but takes datetime


def test_the_logical_names_the_fast_path_skips_are_the_logical_types() -> None:
    from connect.api import data

    logical = {Decimal.LOGICAL_NAME, Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME}
    assert logical == data._LOGICAL_NAMES


_FITS_SCHEMAS = [
    Schema.INT8_SCHEMA,
    Schema.OPTIONAL_INT32_SCHEMA,
    SchemaBuilder.int64().optional().default_value(7).build(),
    Schema.FLOAT64_SCHEMA,
    Schema.OPTIONAL_STRING_SCHEMA,
    SchemaBuilder.string().name("io.debezium.data.Json").build(),
    Schema.OPTIONAL_BOOLEAN_SCHEMA,
    Decimal.schema(2),
    Decimal.builder(2).optional().build(),
    Date.SCHEMA,
    Time.builder().optional().build(),
    Timestamp.SCHEMA,
    Timestamp.builder().optional().build(),
]
_FITS_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.integers(-200, 200),
    st.floats(allow_nan=False),
    st.text(max_size=3),
    st.decimals(allow_nan=False, allow_infinity=False, places=2),
    st.dates(),
    st.times(),
    st.datetimes(timezones=st.just(UTC)),
)


@settings(max_examples=500, deadline=None)
@given(st.sampled_from(_FITS_SCHEMAS), st.data())
def test_fits_all_says_what_validate_value_says_of_each(schema: Schema, data: st.DataObject) -> None:
    # Columns of one kind (all one type, with or without nulls) take the fast pass; mixed
    # ones the full check. Either way: the same answer as validating each value.
    one_kind = data.draw(st.sampled_from([_FITS_VALUES, st.none(), st.integers(-200, 200), st.dates()]))
    values = data.draw(st.lists(one_kind | st.none(), max_size=6) | st.lists(_FITS_VALUES, max_size=6))

    def valid(v: object) -> bool:
        try:
            Schema.validate_value(schema, v)
        except DataException:
            return False
        return True

    assert schema.fits_all(values) == all(map(valid, values))
