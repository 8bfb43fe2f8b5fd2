"""Cast against Kafka's CastTest cases, Java's conversion rules, the config checks, and
round-trip properties."""

from __future__ import annotations

import datetime
import math
from decimal import Decimal as BigDecimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connect.api import (
    ConfigValidationError,
    DataException,
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    Type,
)
from tests.transforms.support import configured, sink, source
from transforms.cast import CastKey, CastValue, cast_value

UTC = datetime.UTC
PLUS_2 = datetime.timezone(datetime.timedelta(hours=2))


def cast(spec: str, value: Any, schema: Schema | None = None, **configs: Any) -> Any:
    return configured(CastValue, {"spec": spec}, **configs).apply(sink(value, schema))


# -- config ----------------------------------------------------------------------------------------------


def issues(spec: Any) -> list[tuple[str, str]]:
    return [(i.key, i.message) for i in CastValue.Config.issues({"spec": spec}, prefix="transforms.c.")]


SUPPORTED_OUT = "[INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "Must specify at least one field to cast."),
        ([], "Must specify at least one field to cast."),
        ("foo:faketype", "Invalid type found in casting spec: faketype"),
        ("faketype", "Invalid type found in casting spec: faketype"),
        ("foo:", "Invalid type found in casting spec: foo"),  # Java's split drops the empty type
        ("a,,b", "Invalid type found in casting spec: a"),
        (
            "foo:array",
            f"Cast transformation does not support casting to ARRAY; supported types are {SUPPORTED_OUT}",
        ),
        (
            "array",
            f"Cast transformation does not support casting to ARRAY; supported types are {SUPPORTED_OUT}",
        ),
        (
            "foo:bytes",
            f"Cast transformation does not support casting to BYTES; supported types are {SUPPORTED_OUT}",
        ),
        (
            "struct",
            f"Cast transformation does not support casting to STRUCT; supported types are {SUPPORTED_OUT}",
        ),
        (
            "foo:int8:extra,bar:int8",
            "Invalid value [foo:int8:extra, bar:int8] for configuration transforms.c.spec: "
            "Invalid rename mapping: foo:int8:extra",
        ),
        (
            "foo:int8,:",
            "Invalid value [foo:int8, :] for configuration transforms.c.spec: Invalid rename mapping: :",
        ),
        (
            "foo:int8,int32",
            "Cast transformations that specify a type to cast the entire value to may only specify a single "
            "cast in their spec",
        ),
        (
            "int32,int64",
            "Cast transformations that specify a type to cast the entire value to may only specify a single "
            "cast in their spec",
        ),
    ],
)
def test_config_errors_are_reported_against_spec(spec: Any, message: str) -> None:
    assert issues(spec) == [("transforms.c.spec", message)]
    with pytest.raises(ConfigValidationError):
        configured(CastValue, {"spec": spec})


def test_spec_is_required() -> None:
    found = CastValue.Config.issues({}, prefix="transforms.c.")
    assert [(i.key, i.message) for i in found] == [
        (
            "transforms.c.spec",
            'Missing required configuration "transforms.c.spec" which has no default value.',
        )
    ]


def test_spec_entries_are_trimmed_case_insensitive_and_the_last_duplicate_wins() -> None:
    out = cast(" a : InT8 , b:string, a:int16", {"a": 70000, "b": 1})
    assert out.value == {"a": 4464, "b": "1"}
    assert issues(" a : InT8 ") == []


def test_replace_null_with_default_must_be_a_boolean() -> None:
    found = CastValue.Config.issues({"spec": "int8", "replace.null.with.default": "maybe"})
    assert [i.key for i in found] == ["replace.null.with.default"]


# -- tombstones ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("schema", [None, Schema.STRING_SCHEMA])
def test_null_values_pass_through_unchanged(schema: Schema | None) -> None:
    record = sink(None, schema, key="key", key_schema=Schema.STRING_SCHEMA)
    assert configured(CastValue, {"spec": "foo:int64"}).apply(record) is record
    key_record = sink("value", Schema.STRING_SCHEMA, key=None, key_schema=schema)
    assert configured(CastKey, {"spec": "foo:int64"}).apply(key_record) is key_record


# -- whole value -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "value", "expected"),
    [
        ("int8", 42, 42),
        ("int16", 42, 42),
        ("int32", 42, 42),
        ("int64", 42, 42),
        ("float32", 42, 42.0),
        ("float64", 42, 42.0),
        ("boolean", 42, True),
        ("boolean", 0, False),
        ("string", 42, "42"),
    ],
)
def test_whole_value_with_schema(target: str, value: int, expected: Any) -> None:
    out = cast(target, value, Schema.INT32_SCHEMA)
    assert out.value_schema.type is Type[target.upper()]
    assert out.value == expected
    assert type(out.value) is type(expected)
    schemaless = cast(target, value)
    assert schemaless.value_schema is None
    assert schemaless.value == expected
    assert type(schemaless.value) is type(expected)


def test_whole_key_with_and_without_schema() -> None:
    xform = configured(CastKey, {"spec": "int8"})
    out = xform.apply(sink("bogus", Schema.STRING_SCHEMA, key=42, key_schema=Schema.INT32_SCHEMA))
    assert (out.key_schema.type, out.key) == (Type.INT8, 42)
    assert (out.value_schema, out.value) == (Schema.STRING_SCHEMA, "bogus")
    out = xform.apply(sink("bogus", Schema.STRING_SCHEMA, key=300))
    assert (out.key_schema, out.key) == (None, 44)


def test_whole_value_schema_keeps_identity_optionality_and_casts_the_default() -> None:
    schema = (
        SchemaBuilder.float32()
        .name("com.example.Price")
        .version(2)
        .doc("a price")
        .parameter("p", "v")
        .optional()
        .default_value(-42.125)
        .build()
    )
    out = cast("int32", 42.125, schema)
    s = out.value_schema
    assert out.value == 42
    assert (s.type, s.name, s.version, s.doc, dict(s.parameters)) == (
        Type.INT32,
        "com.example.Price",
        2,
        "a price",
        {"p": "v"},
    )
    assert s.optional
    assert s.default_value == -42


def test_whole_decimal_to_string() -> None:
    out = cast("string", BigDecimal(42), Decimal.schema(0))
    assert out.value == "42"
    assert out.value_schema == Schema.STRING_SCHEMA  # deviation: no Decimal name on a string


def test_whole_timestamp_to_string_drops_the_logical_name() -> None:
    schema = Timestamp.builder().doc("when").build()
    ts = datetime.datetime(1970, 1, 2, 0, 0, 0, 1000, tzinfo=UTC)  # a day and a millisecond
    out = cast("string", ts, schema)
    assert out.value == "1970-01-02T00:00:00.001Z"
    assert out.value_schema == SchemaBuilder.string().doc("when").build()


def test_whole_logical_to_its_encoding() -> None:
    out = cast("int32", datetime.date(1970, 1, 11), Date.SCHEMA)
    assert (out.value_schema, out.value) == (Schema.INT32_SCHEMA, 10)


def test_whole_value_schemaless_unsupported_types() -> None:
    with pytest.raises(DataException) as err:
        cast("int8", ["foo"])
    assert str(err.value) == (
        "Cast$Value: Cast transformation does not support casting from ARRAY; supported types are "
        "[INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING, BYTES] "
        "(topic 'test', partition 0, offset 42)"
    )
    with pytest.raises(DataException, match=r"was passed a value of type Decimal which is not supported"):
        cast("string", BigDecimal(1))
    with pytest.raises(DataException, match=r"value of type datetime which is not supported"):
        cast("string", datetime.datetime.now(UTC))
    with pytest.raises(DataException, match=r"value of type int \(outside the INT64 range\)"):
        cast("string", 2**63)


def test_whole_struct_value_cannot_be_cast() -> None:
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataException, match="does not support casting from STRUCT"):
        cast("string", Struct(schema).put("a", 1), schema)


# -- fields ----------------------------------------------------------------------------------------------


def test_cast_fields_with_schema() -> None:
    """Kafka's castFieldsWithSchema."""
    day = datetime.date(1970, 1, 2)
    raw = bytes([0xFE, 0xDC, 0xBA, 0x98, 0x76, 0x54, 0x32, 0x10])
    spec = (
        "int8:int16,int16:int32,int32:int64,int64:boolean,float32:float64,float64:boolean,boolean:int8,"
        "string:int32,bigdecimal:string,date:string,optional:int32,bytes:string,byteArray:string"
    )
    schema = (
        SchemaBuilder.struct()
        .field("int8", Schema.INT8_SCHEMA)
        .field("int16", Schema.OPTIONAL_INT16_SCHEMA)
        .field("int32", SchemaBuilder.int32().default_value(2).build())
        .field("int64", Schema.INT64_SCHEMA)
        .field("float32", Schema.FLOAT32_SCHEMA)
        .field("float64", SchemaBuilder.float64().default_value(-1.125).build())
        .field("boolean", Schema.BOOLEAN_SCHEMA)
        .field("string", Schema.STRING_SCHEMA)
        .field("bigdecimal", Decimal.schema(0))
        .field("date", Date.SCHEMA)
        .field("optional", Schema.OPTIONAL_FLOAT32_SCHEMA)
        .field("timestamp", Timestamp.SCHEMA)
        .field("bytes", Schema.BYTES_SCHEMA)
        .field("byteArray", Schema.BYTES_SCHEMA)
        .build()
    )
    value = (
        Struct(schema)
        .put("int8", 8)
        .put("int16", 16)
        .put("int32", 32)
        .put("int64", 64)
        .put("float32", 32.0)
        .put("float64", -64.0)
        .put("boolean", True)
        .put("bigdecimal", BigDecimal(42))
        .put("date", day)
        .put("string", "42")
        .put("timestamp", datetime.datetime(1970, 1, 1, tzinfo=UTC))
        .put("bytes", bytearray(raw))
        .put("byteArray", raw)
    )
    out = cast(spec, value, schema)
    v, s = out.value, out.value_schema
    assert v.schema is s
    expected = {
        "int8": 8, "int16": 16, "int32": 32, "int64": True, "float32": 32.0, "float64": True, "boolean": 1,
        "string": 42, "bigdecimal": "42", "date": "1970-01-02", "optional": None,
        "timestamp": datetime.datetime(1970, 1, 1, tzinfo=UTC),
        "bytes": "/ty6mHZUMhA=", "byteArray": "/ty6mHZUMhA=",
    }  # fmt: skip
    assert {f.name: v.get(f.name) for f in s.fields} == expected
    types = {f.name: f.schema.type for f in s.fields}
    assert types == {
        "int8": Type.INT16, "int16": Type.INT32, "int32": Type.INT64, "int64": Type.BOOLEAN,
        "float32": Type.FLOAT64,
        "float64": Type.BOOLEAN, "boolean": Type.INT8, "string": Type.INT32, "bigdecimal": Type.STRING,
        "date": Type.STRING, "optional": Type.INT32, "timestamp": Type.INT64, "bytes": Type.STRING,
        "byteArray": Type.STRING,
    }  # fmt: skip
    assert s.field("int16").schema.optional
    assert s.field("optional").schema.optional
    assert s.field("int32").schema.default_value == 2
    assert s.field("float64").schema.default_value is True
    assert s.field("timestamp").schema is Timestamp.SCHEMA  # not in the spec: untouched
    assert s.field("date").schema == Schema.STRING_SCHEMA  # a cast field gets a plain schema
    v.validate()


def test_cast_fields_schemaless() -> None:
    """Kafka's castFieldsSchemaless."""
    spec = (
        "int8:int16,int16:int32,int32:int64,int64:boolean,float32:float64,float64:boolean,boolean:int8,"
        "string:int32"
    )
    value = {
        "int8": 8, "int16": 16, "int32": 32, "int64": 64, "float32": 32.0, "float64": -64.0, "boolean": True,
        "string": "42", "other": "kept",
    }  # fmt: skip
    out = cast(spec, value)
    assert out.value_schema is None
    assert out.value == {
        "int8": 8, "int16": 16, "int32": 32, "int64": True, "float32": 32.0, "float64": True, "boolean": 1,
        "string": 42, "other": "kept",
    }  # fmt: skip
    assert value["int64"] == 64  # the input map is not changed


def test_a_spec_field_missing_from_the_map_is_added_as_null() -> None:
    assert cast("a:int8", {"b": 1}).value == {"b": 1, "a": None}


def test_cast_logical_to_primitive() -> None:
    """Kafka's castLogicalToPrimitive (apart from its year-292-million timestamp)."""
    spec = (
        "date_to_int32:int32,timestamp_to_int64:int64,time_to_int64:int64,decimal_to_int32:int32,"
        "timestamp_to_float64:float64,null_timestamp_to_int32:int32"
    )
    schema = (
        SchemaBuilder.struct()
        .field("date_to_int32", Date.SCHEMA)
        .field("timestamp_to_int64", Timestamp.SCHEMA)
        .field("time_to_int64", Time.SCHEMA)
        .field("decimal_to_int32", Decimal.schema(0))
        .field("timestamp_to_float64", Timestamp.SCHEMA)
        .field("null_timestamp_to_int32", Timestamp.builder().optional().build())
        .build()
    )
    value = (
        Struct(schema)
        .put("date_to_int32", datetime.date(1970, 1, 2))
        .put("timestamp_to_int64", datetime.datetime(1970, 1, 1, tzinfo=UTC))
        .put("time_to_int64", datetime.time(0, 0, 0, 1000))
        .put("decimal_to_int32", BigDecimal(2**31))
        .put("timestamp_to_float64", datetime.datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC))
    )
    out = cast(spec, value, schema).value
    assert out.get("date_to_int32") == 1
    assert out.get("timestamp_to_int64") == 0
    assert out.get("time_to_int64") == 1
    assert out.get("decimal_to_int32") == -(2**31)
    assert out.get("timestamp_to_float64") == 253402300799999.0
    assert out.get("null_timestamp_to_int32") is None
    assert [f.schema.type for f in out.schema.fields] == [
        Type.INT32,
        Type.INT64,
        Type.INT64,
        Type.INT32,
        Type.FLOAT64,
        Type.INT32,
    ]
    assert out.schema.field("null_timestamp_to_int32").schema.optional


@pytest.mark.parametrize(
    ("schema", "value", "text"),
    [
        (Date.SCHEMA, datetime.date(1970, 1, 2), "1970-01-02"),
        # Kafka picks the pattern from the instant, not the type: the epoch day prints as a time.
        (Date.SCHEMA, datetime.date(1970, 1, 1), "00:00:00.000Z"),
        (Date.SCHEMA, datetime.date(1969, 12, 31), "00:00:00.000Z"),
        (Time.SCHEMA, datetime.time(1, 0), "01:00:00.000Z"),
        (Time.SCHEMA, datetime.time(23, 59, 59, 999999), "23:59:59.999Z"),
        (
            Timestamp.SCHEMA,
            datetime.datetime(2024, 5, 1, 12, 30, 15, 123456, tzinfo=UTC),
            "2024-05-01T12:30:15.123Z",
        ),
        (Timestamp.SCHEMA, datetime.datetime(2024, 5, 1, tzinfo=UTC), "2024-05-01"),
        (Timestamp.SCHEMA, datetime.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC), "23:59:59.999Z"),
        (Timestamp.SCHEMA, datetime.datetime(2024, 5, 1, 14, 0, tzinfo=PLUS_2), "2024-05-01T12:00:00.000Z"),
        (Timestamp.SCHEMA, datetime.datetime(2024, 5, 2, 2, 0, tzinfo=PLUS_2), "2024-05-02"),  # midnight UTC
        (Decimal.schema(0), BigDecimal(1982), "1982"),
        (Decimal.schema(2), BigDecimal("0.00"), "0.00"),
    ],
)
def test_cast_logical_to_string(schema: Schema, value: Any, text: str) -> None:
    record_schema = SchemaBuilder.struct().field("f", schema).build()
    out = cast("f:string", Struct(record_schema).put("f", value), record_schema)
    assert out.value.get("f") == text
    assert out.value_schema.field("f").schema == Schema.STRING_SCHEMA


@pytest.mark.parametrize(("replace_null", "expected"), [(False, None), (True, "10")])
def test_field_with_default_value_and_replace_null_with_default(replace_null: bool, expected: Any) -> None:
    """Kafka's castFieldWithDefaultValueRecordWithSchema."""
    schema = (
        SchemaBuilder.struct()
        .field("magic", SchemaBuilder.int32().optional().default_value(10).build())
        .build()
    )
    out = cast("magic:string", Struct(schema), schema, replace_null_with_default=replace_null)
    assert out.value_schema.field("magic").schema.type is Type.STRING
    assert out.value_schema.field("magic").schema.default_value == "10"
    assert out.value.get_without_default("magic") == expected


def test_nested_struct_fields_outside_the_spec_are_kept() -> None:
    inner = SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA).build()
    schema = SchemaBuilder.struct().field("inner", inner).field("n", Schema.INT64_SCHEMA).build()
    value = Struct(schema).put("inner", Struct(inner).put("x", 1)).put("n", 5)
    out = cast("n:string", value, schema)
    assert out.value_schema.field("inner").schema is inner
    assert out.value.get("inner") is value.get("inner")
    assert out.value.get("n") == "5"
    with pytest.raises(DataException, match="does not support casting from STRUCT"):
        cast("inner:string", value, schema)


def test_struct_schema_identity_is_kept() -> None:
    schema = (
        SchemaBuilder.struct()
        .name("com.example.R")
        .version(3)
        .doc("d")
        .optional()
        .field("a", Schema.INT8_SCHEMA)
        .build()
    )
    out = cast("a:string", Struct(schema).put("a", 1), schema)
    s = out.value_schema
    assert (s.name, s.version, s.doc, s.optional) == ("com.example.R", 3, "d", True)


def test_struct_default_is_cast_field_by_field() -> None:
    """Deviation: Kafka fails every record of a struct schema with a default."""
    plain = (
        SchemaBuilder.struct()
        .optional()
        .field("a", Schema.INT32_SCHEMA)
        .field("b", Schema.STRING_SCHEMA)
        .build()
    )
    default = Struct(plain).put("a", 300).put("b", "x")
    schema = (
        SchemaBuilder.struct()
        .optional()
        .field("a", Schema.INT32_SCHEMA)
        .field("b", Schema.STRING_SCHEMA)
        .default_value(default)
        .build()
    )
    out = cast("a:int8", Struct(schema).put("a", 1).put("b", "y"), schema)
    assert out.value.get("a") == 1
    d = out.value_schema.default_value
    assert (d.get("a"), d.get("b")) == (44, "x")


def test_the_output_schema_is_cached_per_input_schema() -> None:
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    xform = configured(CastValue, {"spec": "a:int64"})
    first = xform.apply(sink(Struct(schema).put("a", 1), schema)).value_schema
    second = xform.apply(sink(Struct(schema).put("a", 2), schema)).value_schema
    assert first is second
    whole = configured(CastValue, {"spec": "string"})
    assert (
        whole.apply(sink(1, Schema.INT32_SCHEMA)).value_schema
        is whole.apply(sink(2, Schema.INT32_SCHEMA)).value_schema
    )


def test_field_spec_on_a_non_struct_schema_is_an_error() -> None:
    with pytest.raises(DataException) as err:
        cast("a:int8", 5, Schema.INT32_SCHEMA)
    assert (
        str(err.value)
        == "Cast$Value: Cannot list fields on non-struct type (topic 'test', partition 0, offset 42)"
    )


def test_field_spec_needs_a_struct_or_a_map() -> None:
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    with pytest.raises(
        DataException, match=r"^Cast\$Value: Only Struct objects supported for \[cast types\], found: str"
    ):
        cast("a:int8", "text", schema)
    with pytest.raises(
        DataException,
        match=r"^Cast\$Value: Only Map objects supported in absence of schema for \[cast types\], found: str",
    ):
        cast("a:int8", "text")


def test_a_default_that_cannot_be_cast_fails_with_the_record() -> None:
    schema = SchemaBuilder.struct().field("a", SchemaBuilder.string().default_value("abc").build()).build()
    with pytest.raises(DataException) as err:
        cast("a:int32", Struct(schema).put("a", "1"), schema)
    assert str(err.value) == (
        "Cast$Value: Value (abc) was out of range for requested data type "
        "(topic 'test', partition 0, offset 42)"
    )


def test_data_errors_name_the_transform_and_the_record() -> None:
    with pytest.raises(DataException) as err:
        cast("a:int32", {"a": "abc"})
    assert str(err.value) == (
        "Cast$Value: Value (abc) was out of range for requested data type "
        "(topic 'test', partition 0, offset 42)"
    )
    with pytest.raises(DataException) as err:
        configured(CastKey, {"spec": "int8"}).apply(source("v", key=b"\x01"))
    assert str(err.value) == (
        "Cast$Key: Unexpected type in Cast transformation: bytes "
        "(topic 'test', source partition {'source': 's'}, source offset {'position': 7})"
    )


# -- Java's conversions ----------------------------------------------------------------------------------

I8, I16, I32, I64 = Schema.INT8_SCHEMA, Schema.INT16_SCHEMA, Schema.INT32_SCHEMA, Schema.INT64_SCHEMA
F32, F64, BOOL, STR = (
    Schema.FLOAT32_SCHEMA,
    Schema.FLOAT64_SCHEMA,
    Schema.BOOLEAN_SCHEMA,
    Schema.STRING_SCHEMA,
)


@pytest.mark.parametrize(
    ("schema", "value", "target", "expected"),
    [
        (I32, 300, Type.INT8, 44),
        (I64, 2**40 + 5, Type.INT32, 5),
        (I32, -129, Type.INT8, 127),
        (F64, 1e20, Type.INT32, 2**31 - 1),
        (F64, -1e20, Type.INT64, -(2**63)),
        (F64, math.nan, Type.INT64, 0),
        (F64, 1e10, Type.INT8, -1),
        (F64, -2.9, Type.INT16, -2),
        (F32, 16777217.0, Type.INT32, 16777216),  # what a Java float holds
        (F64, 0.5, Type.BOOLEAN, False),
        (F64, -0.0, Type.BOOLEAN, False),
        (F64, math.nan, Type.BOOLEAN, False),
        (F64, math.inf, Type.BOOLEAN, True),
        (BOOL, True, Type.FLOAT32, 1.0),
        (BOOL, False, Type.INT64, 0),
        (BOOL, True, Type.BOOLEAN, True),
        (STR, "-128", Type.INT8, -128),
        (STR, "+7", Type.INT16, 7),
        (STR, "9223372036854775807", Type.INT64, 2**63 - 1),
        (STR, " 1.5e3 ", Type.FLOAT64, 1500.0),
        (STR, "0x1.8p1", Type.FLOAT64, 3.0),
        (STR, "2.5f", Type.FLOAT32, 2.5),
        (STR, "Infinity", Type.FLOAT64, math.inf),
        (STR, "0.1", Type.FLOAT32, 0.10000000149011612),
        (STR, "TRUE", Type.BOOLEAN, True),
        (STR, "yes", Type.BOOLEAN, False),
        (STR, "", Type.BOOLEAN, False),
        (I64, 2**62 + 2**38 + 1, Type.FLOAT32, float(2**62 + 2**39)),  # one rounding, like (float) long
        (F64, 0.1, Type.FLOAT32, 0.10000000149011612),
        (F64, 1e39, Type.FLOAT32, math.inf),
        (F32, 0.1, Type.FLOAT64, 0.10000000149011612),
        (F32, 5, Type.FLOAT64, 5.0),
        (F64, 1e7, Type.STRING, "1.0E7"),
        (F64, 42.0, Type.STRING, "42.0"),
        (F64, 1e-4, Type.STRING, "1.0E-4"),
        (F64, 0.001, Type.STRING, "0.001"),
        (F32, 0.1, Type.STRING, "0.1"),
        (F32, 1 / 3, Type.STRING, "0.33333334"),
        (F64, 1 / 3, Type.STRING, "0.3333333333333333"),
        (F64, 3, Type.STRING, "3.0"),
        (F64, math.nan, Type.STRING, "NaN"),
        (F64, -math.inf, Type.STRING, "-Infinity"),
        (BOOL, False, Type.STRING, "false"),
        (I8, -5, Type.STRING, "-5"),
        (Decimal.schema(0), BigDecimal("1E+3"), Type.STRING, "1E+3"),
        (Decimal.schema(0), BigDecimal(2**64 + 7), Type.INT64, 7),
        (Decimal.schema(0), BigDecimal(2**64), Type.BOOLEAN, False),  # longValue() wraps to 0
        (Decimal.schema(1), BigDecimal("-300.9"), Type.INT8, -44),
        (Decimal.schema(1), BigDecimal("0.1"), Type.FLOAT64, 0.1),
        (Decimal.schema(1), BigDecimal("0.1"), Type.FLOAT32, 0.10000000149011612),
        (Schema.BYTES_SCHEMA, b"", Type.STRING, ""),
        (Schema.BYTES_SCHEMA, memoryview(b"hi"), Type.STRING, "aGk="),
    ],
)
def test_java_conversions(schema: Schema, value: Any, target: Type, expected: Any) -> None:
    result = cast_value(schema, value, target)
    if isinstance(expected, float) and math.isnan(expected):
        assert math.isnan(result)
    else:
        assert result == expected
        assert type(result) is type(expected)


@pytest.mark.parametrize(
    ("value", "target"),
    [
        ("1.0", Type.INT32),
        (" 1", Type.INT64),
        ("128", Type.INT8),
        ("1e3", Type.INT16),
        ("abc", Type.FLOAT64),
        ("", Type.FLOAT32),
        ("nan", Type.FLOAT64),
        ("1_000", Type.INT64),
    ],
)
def test_text_that_java_does_not_parse(value: str, target: Type) -> None:
    with pytest.raises(DataException) as err:
        cast_value(STR, value, target)
    assert str(err.value) == f"Value ({value}) was out of range for requested data type"


@pytest.mark.parametrize("target", [Type.INT8, Type.FLOAT64, Type.BOOLEAN])
def test_bytes_only_cast_to_string(target: Type) -> None:
    with pytest.raises(DataException, match=r"^Unexpected type in Cast transformation: bytes$"):
        cast_value(Schema.BYTES_SCHEMA, b"\x01", target)


def test_array_and_map_schemas_cannot_be_cast() -> None:
    with pytest.raises(DataException, match="does not support casting from MAP"):
        cast_value(SchemaBuilder.map(STR, STR).build(), {"a": "b"}, Type.STRING)
    with pytest.raises(DataException, match="does not support casting from ARRAY"):
        cast_value(SchemaBuilder.array(STR).build(), [], Type.STRING)
    assert cast_value(SchemaBuilder.array(STR).build(), None, Type.STRING) is None  # null: no type check


def test_results_fit_the_output_schema() -> None:
    schema = SchemaBuilder.struct().field("a", I64).field("b", F64).build()
    out = cast("a:int8,b:float32", Struct(schema).put("a", 2**40 - 1).put("b", 1e300), schema).value
    assert (out.get("a"), out.get("b")) == (-1, math.inf)
    out.validate()


# -- properties ------------------------------------------------------------------------------------------

int64s = st.integers(min_value=-(2**63), max_value=2**63 - 1)


@given(int64s)
def test_int64_to_string_and_back_is_the_identity(n: int) -> None:
    assert cast_value(STR, cast_value(I64, n, Type.STRING), Type.INT64) == n
    assert cast_value(None, cast_value(None, n, Type.STRING), Type.INT64) == n


@given(st.integers(min_value=-(2**31), max_value=2**31 - 1))
def test_int32_to_int64_and_back_is_the_identity(n: int) -> None:
    assert cast_value(I64, cast_value(I32, n, Type.INT64), Type.INT32) == n


@given(int64s)
def test_narrowing_agrees_with_twos_complement(n: int) -> None:
    for target, bits in ((Type.INT8, 8), (Type.INT16, 16), (Type.INT32, 32)):
        result = cast_value(I64, n, target)
        assert -(2 ** (bits - 1)) <= result < 2 ** (bits - 1)
        assert (result - n) % 2**bits == 0


@given(int64s)
def test_int_to_float64_to_string_and_back_is_consistent(n: int) -> None:
    as_double = cast_value(I64, n, Type.FLOAT64)
    assert as_double == float(n)
    assert cast_value(STR, cast_value(F64, as_double, Type.STRING), Type.FLOAT64) == as_double


@given(st.floats(allow_nan=False))
def test_float64_to_string_and_back_is_the_identity(x: float) -> None:
    assert cast_value(STR, cast_value(F64, x, Type.STRING), Type.FLOAT64) == x


@given(st.floats(width=32, allow_nan=False))
def test_float32_to_string_and_back_is_the_identity(x: float) -> None:
    assert cast_value(STR, cast_value(F32, x, Type.STRING), Type.FLOAT32) == x


@given(st.booleans())
def test_boolean_to_int8_and_back_is_the_identity(b: bool) -> None:
    assert cast_value(I8, cast_value(BOOL, b, Type.INT8), Type.BOOLEAN) is b
    assert cast_value(STR, cast_value(BOOL, b, Type.STRING), Type.BOOLEAN) is b


field_names = st.text(alphabet="abcdefgh", min_size=1, max_size=4)
plain_values = st.one_of(int64s, st.floats(allow_nan=False), st.booleans(), st.text(max_size=5))


@given(
    st.dictionaries(field_names, plain_values, min_size=1, max_size=6),
    st.dictionaries(
        field_names, st.sampled_from(["int64", "string", "boolean", "float64"]), min_size=1, max_size=3
    ),
)
def test_field_casts_never_touch_fields_outside_the_spec(value: dict[str, Any], spec: dict[str, str]) -> None:
    xform = configured(CastValue, {"spec": ",".join(f"{k}:{t}" for k, t in spec.items())})
    try:
        out = xform.apply(sink(value)).value
    except DataException:
        return  # text that does not parse as the target type
    assert {k: v for k, v in out.items() if k not in spec} == {
        k: v for k, v in value.items() if k not in spec
    }
    assert set(out) == set(value) | set(spec)


@given(
    st.dictionaries(field_names, st.integers(min_value=-(2**31), max_value=2**31 - 1), min_size=1, max_size=6)
)
def test_struct_field_casts_never_touch_fields_outside_the_spec(values: dict[str, int]) -> None:
    builder = SchemaBuilder.struct()
    for name in values:
        builder.field(name, I32)
    schema = builder.build()
    struct = Struct(schema)
    for name, v in values.items():
        struct.put(name, v)
    cast_field = sorted(values)[0]
    out = cast(f"{cast_field}:string", struct, schema).value
    for f in schema.fields:
        if f.name == cast_field:
            assert out.get(f.name) == str(values[f.name])
        else:
            assert out.get(f.name) == values[f.name]
            assert out.schema.field(f.name).schema is f.schema


@pytest.mark.parametrize(
    "schema",
    [
        SchemaBuilder.string().default_value("abc").build(),
        SchemaBuilder.struct()
        .optional()
        .field("a", Schema.STRING_SCHEMA)
        .default_value(
            Struct(SchemaBuilder.struct().optional().field("a", Schema.STRING_SCHEMA).build()).put("a", "abc")
        )
        .build(),
    ],
)
def test_a_whole_or_struct_default_that_cannot_be_cast_fails_with_the_record(schema: Schema) -> None:
    spec = "int32" if schema.type is Type.STRING else "a:int32"
    value = "1" if schema.type is Type.STRING else Struct(schema).put("a", "1")
    with pytest.raises(DataException) as err:
        cast(spec, value, schema)
    assert str(err.value) == (
        "Cast$Value: Value (abc) was out of range for requested data type "
        "(topic 'test', partition 0, offset 42)"
    )
