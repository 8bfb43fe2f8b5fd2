"""Tests of connect.converters against Kafka's documented bytes and behaviour.

Java reference values (number formatting, two's-complement bytes, float bits) were computed once
with Java 17 (`Double.toString`, `Float.toString`, `BigInteger.toByteArray`, `Float.floatToIntBits`)
and are hard-coded here.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
import decimal
import json
import math
import time
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connect.api.converter import Converter, HeaderConverter
from connect.api.data import (
    Date,
    Decimal,
    Schema,
    SchemaAndValue,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    Type,
)
from connect.api.errors import ConnectException, DataException
from connect.converters import (
    ByteArrayConverter,
    DoubleConverter,
    FloatConverter,
    IntegerConverter,
    JsonConverter,
    LongConverter,
    NumberConverter,
    ShortConverter,
    SimpleHeaderConverter,
    StringConverter,
)
from connect.converters.header import convert_to_string, parse_string
from connect.converters.json import ENVELOPE_ERROR, format_double, format_float

UTC = datetime.UTC


def json_converter(**configs: Any) -> JsonConverter:
    c = JsonConverter()
    c.configure(configs, False)
    return c


def user_schema() -> Schema:
    return (
        SchemaBuilder.struct()
        .name("com.example.User")
        .field("id", Schema.INT32_SCHEMA)
        .field("name", Schema.OPTIONAL_STRING_SCHEMA)
        .build()
    )


def encode(c: Converter, schema: Schema | None, value: Any) -> bytes:
    data = c.from_connect_data("t", schema, value)
    assert data is not None
    return data


def round_trip(c: JsonConverter, schema: Schema | None, value: Any) -> SchemaAndValue:
    return c.to_connect_data("t", c.from_connect_data("t", schema, value))


# -- JsonConverter: Kafka's exact bytes --------------------------------------------------------------------


def test_json_struct_bytes() -> None:
    c = json_converter()
    s = user_schema()
    data = c.from_connect_data("t", s, Struct(s).put("id", 1).put("name", "ann"))
    assert data == (
        b'{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},'
        b'{"type":"string","optional":true,"field":"name"}],"optional":false,"name":"com.example.User"},'
        b'"payload":{"id":1,"name":"ann"}}'
    )
    back = c.to_connect_data("t", data)
    assert back.schema == s and back.value == Struct(s).put("id", 1).put("name", "ann")


def test_json_int64_bytes() -> None:
    c = json_converter()
    data = c.from_connect_data("t", Schema.INT64_SCHEMA, 42)
    assert data == b'{"schema":{"type":"int64","optional":false},"payload":42}'
    assert c.to_connect_data("t", data) == SchemaAndValue(Schema.INT64_SCHEMA, 42)


DECIMAL_SCHEMA_JSON = (
    b'{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,'
    b'"parameters":{"scale":"2"}}'
)


def test_json_decimal_base64_bytes() -> None:
    # 123.45 at scale 2 is unscaled 12345 = 0x3039, and base64("\x30\x39") is "MDk=".
    assert base64.b64encode(bytes([0x30, 0x39])) == b"MDk="
    c = json_converter()
    data = c.from_connect_data("t", Decimal.schema(2), decimal.Decimal("123.45"))
    assert data == b'{"schema":' + DECIMAL_SCHEMA_JSON + b',"payload":"MDk="}'
    back = c.to_connect_data("t", data)
    assert back.schema == Decimal.schema(2) and back.value == decimal.Decimal("123.45")
    # -123.45: unscaled -12345 = 0xcfc7 = "z8c=" (Java BigInteger.toByteArray + Base64).
    negative = c.from_connect_data("t", Decimal.schema(2), decimal.Decimal("-123.45"))
    assert negative == b'{"schema":' + DECIMAL_SCHEMA_JSON + b',"payload":"z8c="}'


def test_json_decimal_numeric_bytes() -> None:
    c = json_converter(**{"decimal.format": "NUMERIC"})
    data = c.from_connect_data("t", Decimal.schema(2), decimal.Decimal("123.45"))
    assert data == b'{"schema":' + DECIMAL_SCHEMA_JSON + b',"payload":123.45}'
    assert c.to_connect_data("t", data).value == decimal.Decimal("123.45")
    # Values are written at the schema's scale (Kafka's BASE64 path requires that scale too).
    assert encode(c, Decimal.schema(2), decimal.Decimal("123.4")).endswith(b'"payload":123.40}')
    assert encode(c, Decimal.schema(2), decimal.Decimal("-0")).endswith(b'"payload":0.00}')
    # Small values use BigDecimal.toString's scientific notation, which str(Decimal) shares.
    assert encode(c, Decimal.schema(8), decimal.Decimal("0.00000001")).endswith(b'"payload":1E-8}')


def test_json_decimal_numeric_keeps_every_digit() -> None:
    schema = Decimal.schema(9)
    text = "12345678901234567890.123456789"  # more digits than a double holds
    payload = orjson.dumps({"schema": json_converter().as_json_schema(schema), "payload": 0}).replace(
        b'"payload":0', f'"payload":{text}'.encode()
    )
    for c in (json_converter(), json_converter(**{"decimal.format": "NUMERIC"})):  # either config reads both
        back = c.to_connect_data("t", payload)
        assert back.value == decimal.Decimal(text) and str(back.value) == text
    numeric = json_converter(**{"decimal.format": "NUMERIC"})
    assert encode(numeric, schema, decimal.Decimal(text)).endswith(f'"payload":{text}}}'.encode())


def test_json_decimal_read_errors() -> None:
    c = json_converter()
    prefix = b'{"schema":' + DECIMAL_SCHEMA_JSON + b',"payload":'
    with pytest.raises(DataException, match="Invalid bytes for Decimal field"):
        c.to_connect_data("t", prefix + b'"not base64!"}')
    with pytest.raises(DataException, match="numeric or bytes but was boolean"):
        c.to_connect_data("t", prefix + b"true}")
    with pytest.raises(DataException, match="does not fit scale 2"):
        c.from_connect_data("t", Decimal.schema(2), decimal.Decimal("1.234"))
    with pytest.raises(DataException, match=r"expected decimal\.Decimal, got float"):
        c.from_connect_data("t", Decimal.schema(2), 1.5)


def test_json_array_bytes() -> None:
    c = json_converter()
    schema = SchemaBuilder.array(Schema.INT32_SCHEMA).build()
    data = c.from_connect_data("t", schema, [1, 2, 3])
    assert data == (
        b'{"schema":{"type":"array","items":{"type":"int32","optional":false},"optional":false},"payload":[1,2,3]}'
    )
    assert c.to_connect_data("t", data) == SchemaAndValue(schema, [1, 2, 3])


def test_json_map_with_string_keys() -> None:
    c = json_converter()
    schema = SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.OPTIONAL_INT64_SCHEMA).build()
    data = c.from_connect_data("t", schema, {"a": 1, "b": None})
    assert data == (
        b'{"schema":{"type":"map","keys":{"type":"string","optional":false},'
        b'"values":{"type":"int64","optional":true},"optional":false},"payload":{"a":1,"b":null}}'
    )
    assert c.to_connect_data("t", data) == SchemaAndValue(schema, {"a": 1, "b": None})


def test_json_map_with_int_keys_is_pairs() -> None:
    c = json_converter()
    schema = SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build()
    data = c.from_connect_data("t", schema, {1: "a", 2: "b"})
    assert data == (
        b'{"schema":{"type":"map","keys":{"type":"int32","optional":false},'
        b'"values":{"type":"string","optional":false},"optional":false},"payload":[[1,"a"],[2,"b"]]}'
    )
    assert c.to_connect_data("t", data) == SchemaAndValue(schema, {1: "a", 2: "b"})


def test_json_temporal_bytes() -> None:
    c = json_converter()
    # Day, ms-of-day and epoch-ms numbers from Java 17 (LocalDate.toEpochDay, LocalTime, Instant).
    day = c.from_connect_data("t", Date.SCHEMA, datetime.date(2024, 5, 1))
    assert day == (
        b'{"schema":{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Date","version":1},'
        b'"payload":19844}'
    )
    tod = c.from_connect_data("t", Time.SCHEMA, datetime.time(12, 34, 56, 789000))
    assert tod == (
        b'{"schema":{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Time","version":1},'
        b'"payload":45296789}'
    )
    instant = datetime.datetime(2024, 5, 1, 12, 30, 0, 123000, tzinfo=UTC)
    ts = c.from_connect_data("t", Timestamp.SCHEMA, instant)
    assert ts == (
        b'{"schema":{"type":"int64","optional":false,"name":"org.apache.kafka.connect.data.Timestamp",'
        b'"version":1},"payload":1714566600123}'
    )
    assert c.to_connect_data("t", day).value == datetime.date(2024, 5, 1)
    assert c.to_connect_data("t", tod).value == datetime.time(12, 34, 56, 789000)
    back = c.to_connect_data("t", ts).value
    assert back == instant and back.tzinfo is UTC


def test_json_temporal_read_errors() -> None:
    c = json_converter()
    date_schema = orjson.dumps(c.as_json_schema(Date.SCHEMA))
    with pytest.raises(DataException, match="Date, underlying representation should be integer"):
        c.to_connect_data("t", b'{"schema":' + date_schema + b',"payload":"2024-05-01"}')
    with pytest.raises(DataException, match="Date, underlying representation should be integer"):
        c.to_connect_data("t", b'{"schema":' + date_schema + b',"payload":4294967296}')
    time_schema = orjson.dumps(c.as_json_schema(Time.SCHEMA))
    with pytest.raises(DataException, match="milliseconds >= 0 and < 86400000"):
        c.to_connect_data("t", b'{"schema":' + time_schema + b',"payload":86400000}')
    with pytest.raises(DataException, match=r"expected datetime\.date but was str"):
        c.from_connect_data("t", Date.SCHEMA, "2024-05-01")


def test_json_schema_metadata_order() -> None:
    c = json_converter()
    schema = (
        SchemaBuilder.int32()
        .name("n")
        .version(3)
        .doc("d")
        .parameter("b", "2")
        .parameter("a", "1")
        .optional()
        .default_value(5)
        .build()
    )
    data = c.from_connect_data("t", schema, 7)
    assert data == (
        b'{"schema":{"type":"int32","optional":true,"name":"n","version":3,"doc":"d",'
        b'"parameters":{"b":"2","a":"1"},"default":5},"payload":7}'
    )
    assert c.to_connect_data("t", data) == SchemaAndValue(schema, 7)
    empty_params = SchemaBuilder.int8().parameters({}).build()
    assert c.from_connect_data("t", empty_params, 1) == (
        b'{"schema":{"type":"int8","optional":false,"parameters":{}},"payload":1}'
    )


def test_json_struct_field_schema_gets_field_name_last() -> None:
    c = json_converter()
    field_schema = SchemaBuilder.string().optional().name("x").default_value("d").build()
    schema = SchemaBuilder.struct().field("f", field_schema).build()
    assert c.from_connect_data("t", schema, Struct(schema).put("f", "v")) == (
        b'{"schema":{"type":"struct","fields":[{"type":"string","optional":true,"name":"x","default":"d",'
        b'"field":"f"}],"optional":false},"payload":{"f":"v"}}'
    )


def test_json_doubles_and_floats_like_java() -> None:
    # Java 17: Double.toString / Float.toString of the same values.
    assert format_double(-0.0) == "-0.0"
    doubles = {
        0.0: "0.0", 1.0: "1.0", 0.1: "0.1", 1.5: "1.5", 100.0: "100.0", 1e7: "1.0E7",
        9999999.0: "9999999.0", 1e-3: "0.001", 1e-4: "1.0E-4", 1234567.0: "1234567.0", 1e20: "1.0E20",
        -2.5e-5: "-2.5E-5", 123.456: "123.456", 1.7976931348623157e308: "1.7976931348623157E308",
        5e-324: "4.9E-324", 2e-3: "0.002", 0.3: "0.3", 1 / 3: "0.3333333333333333",
        12345678.9: "1.23456789E7", -1e100: "-1.0E100",
    }  # fmt: skip
    for value, java in doubles.items():
        assert format_double(value) == java, value
    floats = {
        0.0: "0.0", 1.0: "1.0", 0.1: "0.1", 1.1: "1.1", 16777216.0: "1.6777216E7", 1e10: "1.0E10",
        3.4028235e38: "3.4028235E38", float.fromhex("0x1.0p-149"): "1.4E-45", -2.5e-5: "-2.5E-5",
        123.456: "123.456", 1e7: "1.0E7", 1e-3: "0.001", 0.3: "0.3", 1 / 3: "0.33333334",
    }  # fmt: skip
    for value, java in floats.items():
        assert format_float(value) == java, value
    c = json_converter()
    assert c.from_connect_data("t", Schema.FLOAT64_SCHEMA, 1e20) == (
        b'{"schema":{"type":"double","optional":false},"payload":1.0E20}'
    )
    assert c.from_connect_data("t", Schema.FLOAT32_SCHEMA, 0.1) == (
        b'{"schema":{"type":"float","optional":false},"payload":0.1}'
    )
    assert c.to_connect_data(
        "t", c.from_connect_data("t", Schema.FLOAT32_SCHEMA, 0.1)
    ).value == float.fromhex("0x1.99999ap-4")  # read back as the 32-bit float, like Jackson's floatValue()
    assert encode(c, Schema.FLOAT64_SCHEMA, 3).endswith(b'"payload":3.0}')


def test_json_non_finite_floats_are_strings_like_jackson() -> None:
    c = json_converter()
    for value, text in ((math.inf, b'"Infinity"'), (-math.inf, b'"-Infinity"'), (math.nan, b'"NaN"')):
        data = encode(c, Schema.FLOAT64_SCHEMA, value)
        assert data.endswith(b'"payload":' + text + b"}")
        back = c.to_connect_data("t", data).value
        assert (math.isnan(back) and math.isnan(value)) or back == value
    with pytest.raises(DataException, match="out of range for FLOAT32"):
        c.from_connect_data("t", Schema.FLOAT32_SCHEMA, 1e39)
    huge = b'{"schema":{"type":"double","optional":false},"payload":1e400}'
    assert c.to_connect_data("t", huge).value == math.inf  # orjson refuses it; the exact parser reads it


def test_json_string_escapes_like_jackson() -> None:
    c = json_converter(**{"schemas.enable": False})
    assert c.from_connect_data("t", Schema.STRING_SCHEMA, "a\x1fb") == b'"a\\u001Fb"'
    assert c.from_connect_data("t", Schema.STRING_SCHEMA, "\\u001f") == b'"\\\\u001f"'  # text, not an escape
    assert c.from_connect_data("t", Schema.STRING_SCHEMA, "\\\x01") == b'"\\\\\\u0001"'
    assert c.from_connect_data("t", Schema.STRING_SCHEMA, 'é/"\n\t') == '"é/\\"\\n\\t"'.encode()
    for text in ("a\x1fb", "\\u001f", "\\\x01", 'é/"\n\t'):
        assert round_trip(c, Schema.STRING_SCHEMA, text).value == text


def test_json_bytes_are_base64() -> None:
    c = json_converter()
    data = c.from_connect_data("t", Schema.BYTES_SCHEMA, b"\x00\xff")
    assert data == b'{"schema":{"type":"bytes","optional":false},"payload":"AP8="}'
    assert c.to_connect_data("t", data).value == b"\x00\xff"
    assert c.from_connect_data("t", Schema.BYTES_SCHEMA, bytearray(b"\x00\xff")) == data
    assert c.from_connect_data("t", Schema.BYTES_SCHEMA, memoryview(b"\x00\xff")) == data


# -- JsonConverter: nulls and defaults ---------------------------------------------------------------------


def test_json_null_handling() -> None:
    c = json_converter()
    assert c.from_connect_data("t", None, None) is None  # a tombstone
    assert c.to_connect_data("t", None) == SchemaAndValue.NULL
    assert c.to_connect_data("t", b"") == SchemaAndValue.NULL
    assert c.from_connect_data("t", Schema.OPTIONAL_INT32_SCHEMA, None) == (
        b'{"schema":{"type":"int32","optional":true},"payload":null}'
    )
    assert round_trip(c, Schema.OPTIONAL_INT32_SCHEMA, None) == SchemaAndValue(
        Schema.OPTIONAL_INT32_SCHEMA, None
    )
    with pytest.raises(
        DataException, match="null value for a field that is required and has no default value"
    ):
        c.from_connect_data("t", Schema.INT32_SCHEMA, None)
    plain = json_converter(**{"schemas.enable": "false"})
    assert plain.from_connect_data("t", Schema.OPTIONAL_INT32_SCHEMA, None) == b"null"
    assert plain.to_connect_data("t", b"null") == SchemaAndValue.NULL


def test_json_replace_null_with_default() -> None:
    field_schema = SchemaBuilder.string().optional().default_value("x").build()
    schema = SchemaBuilder.struct().field("f", field_schema).build()
    replacing, keeping = json_converter(), json_converter(**{"replace.null.with.default": "false"})
    assert encode(replacing, schema, Struct(schema)).endswith(b'"payload":{"f":"x"}}')
    assert encode(keeping, schema, Struct(schema)).endswith(b'"payload":{"f":null}}')
    data = encode(keeping, schema, Struct(schema))
    assert replacing.to_connect_data("t", data).value.get_without_default("f") == "x"
    assert keeping.to_connect_data("t", data).value.get_without_default("f") is None
    required_with_default = SchemaBuilder.int8().default_value(3).build()
    assert encode(replacing, required_with_default, None).endswith(b'"payload":3}')
    with pytest.raises(DataException, match="required and has no default"):
        keeping.from_connect_data("t", required_with_default, None)
    missing = b'{"schema":{"type":"int8","optional":false,"default":3},"payload":null}'
    assert replacing.to_connect_data("t", missing).value == 3
    with pytest.raises(DataException, match="Invalid null value for required INT8 field"):
        keeping.to_connect_data("t", missing)


def test_json_struct_default_round_trip() -> None:
    point = SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA).optional().build()
    with_default = (
        SchemaBuilder.struct()
        .field("x", Schema.INT32_SCHEMA)
        .optional()
        .default_value(Struct(point).put("x", 7))
    )
    holder = SchemaBuilder.struct().field("p", with_default.build()).build()
    c = json_converter()
    data = encode(c, holder, Struct(holder))
    assert data.endswith(b'"payload":{"p":{"x":7}}}')
    assert b'"default":{"x":7}' in data
    back = c.to_connect_data("t", data)
    assert back.schema == holder
    assert back.value.get("p") == Struct(with_default.build()).put(
        "x", 7
    )  # the payload has the field's schema


# -- JsonConverter: schemaless -----------------------------------------------------------------------------


def test_json_schemaless_envelope_and_inference() -> None:
    c = json_converter()
    data = c.from_connect_data("t", None, {"a": [1, 2.5, None, True, "s"], "b": {"c": 1}})
    assert data == b'{"schema":null,"payload":{"a":[1,2.5,null,true,"s"],"b":{"c":1}}}'
    back = c.to_connect_data("t", data)
    assert back.schema is None and back.value == {"a": [1, 2.5, None, True, "s"], "b": {"c": 1}}
    assert isinstance(back.value["a"][0], int) and isinstance(back.value["a"][1], float)
    assert encode(c, None, {1: "x"}).endswith(b'"payload":[[1,"x"]]}')
    assert encode(c, None, b"\x01").endswith(b'"payload":"AQ=="}')
    assert encode(c, None, (1, 2)).endswith(b'"payload":[1,2]}')
    s = user_schema()
    assert encode(c, None, Struct(s).put("id", 1)).endswith(b'"payload":{"id":1,"name":null}}')


def test_json_schemas_disabled() -> None:
    c = json_converter(**{"schemas.enable": "false"})
    s = user_schema()
    assert c.from_connect_data("t", s, Struct(s).put("id", 1).put("name", "ann")) == b'{"id":1,"name":"ann"}'
    assert c.from_connect_data("t", Schema.INT64_SCHEMA, 42) == b"42"
    assert c.to_connect_data("t", b'{"id":1,"name":"ann"}') == SchemaAndValue(None, {"id": 1, "name": "ann"})
    assert c.to_connect_data("t", b"42") == SchemaAndValue(None, 42)
    assert c.to_connect_data("t", b"4.5") == SchemaAndValue(None, 4.5)
    assert c.to_connect_data("t", b'"x"') == SchemaAndValue(None, "x")
    assert c.to_connect_data("t", b"[1,[true]]") == SchemaAndValue(None, [1, [True]])
    # An envelope-shaped document is just data here.
    assert c.to_connect_data("t", b'{"schema":null,"payload":1}').value == {"schema": None, "payload": 1}
    assert c.to_connect_data("t", b"1e400").value == math.inf


@settings(max_examples=60, deadline=None)
@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers(min_value=-(2**63), max_value=2**63 - 1)
        | st.floats(allow_nan=False, allow_infinity=False)  # non-finite ones become strings, as in Kafka
        | st.text(),
        lambda children: (
            st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
        ),
        max_leaves=12,
    )
)
def test_json_schemaless_round_trip(value: Any) -> None:
    for c in (json_converter(), json_converter(**{"schemas.enable": False})):
        data = c.from_connect_data("t", None, value)
        if value is None:
            assert data is None
            continue
        assert c.to_connect_data("t", data) == SchemaAndValue(None, value)


# -- JsonConverter: errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [b"{", b"nope", b'{"schema":', b"\xff\xfe", b"[1,]", b"NaN"],
)
def test_json_malformed(data: bytes) -> None:
    with pytest.raises(DataException, match="Converting byte\\[\\] to Kafka Connect data failed"):
        json_converter().to_connect_data("t", data)


@pytest.mark.parametrize(
    "data",
    [
        b'{"schema":null,"payload":1,"extra":2}',
        b'{"schema":null}',
        b'{"payload":1}',
        b'{"schema":null,"other":1}',
        b"[1,2]",
        b"42",
        b'"x"',
    ],
)
def test_json_envelope_required(data: bytes) -> None:
    with pytest.raises(DataException) as e:
        json_converter().to_connect_data("t", data)
    assert str(e.value) == ENVELOPE_ERROR
    assert str(e.value) == (
        'JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain '
        "additional fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in "
        "your converter configuration."
    )


def envelope(schema: Any, payload: Any) -> bytes:
    return bytes(b'{"schema":' + orjson.dumps(schema) + b',"payload":' + payload + b"}")


@pytest.mark.parametrize(
    "schema, payload, message",
    [
        ({"type": "int32"}, b'"1"', "expected an integer for INT32, got string"),
        ({"type": "int32"}, b"1.5", "expected an integer for INT32, got number 1.5"),
        ({"type": "int32"}, b"true", "expected an integer for INT32, got boolean"),
        ({"type": "int8"}, b"128", "128 is out of range for INT8"),
        ({"type": "int8"}, b"-129", "-129 is out of range for INT8"),
        ({"type": "int16"}, b"32768", "32768 is out of range for INT16"),
        ({"type": "int32"}, b"2147483648", "2147483648 is out of range for INT32"),
        ({"type": "int64"}, b"9223372036854775808", "9223372036854775808 is out of range for INT64"),
        ({"type": "string"}, b"1", "expected a string for STRING, got number"),
        ({"type": "boolean"}, b"1", "expected a boolean for BOOLEAN, got number"),
        ({"type": "double"}, b'"x"', "expected a number for FLOAT64, got string"),
        ({"type": "bytes"}, b"1", "expected a base64 string for BYTES, got number"),
        ({"type": "bytes"}, b'"***"', "Invalid bytes field: not valid base64"),
        ({"type": "array", "items": {"type": "int8"}}, b"{}", "expected a JSON array for ARRAY, got object"),
        ({"type": "array", "items": {"type": "int8"}}, b"[1,999]", '999 is out of range for INT8 (at "[1]")'),
        (
            {"type": "map", "keys": {"type": "string"}, "values": {"type": "int8"}},
            b"[]",
            "Maps with string fields should be encoded as JSON objects, but found array",
        ),
        (
            {"type": "map", "keys": {"type": "string"}, "values": {"type": "int8"}},
            b'{"k":"v"}',
            """expected an integer for INT8, got string 'v' (at "['k']")""",
        ),
        (
            {"type": "map", "keys": {"type": "int8"}, "values": {"type": "int8"}},
            b"{}",
            "Maps with non-string fields should be encoded as JSON array of tuples, but found object",
        ),
        (
            {"type": "map", "keys": {"type": "int8"}, "values": {"type": "int8"}},
            b"[1]",
            "Found invalid map entry instead of array tuple: number",
        ),
        (
            {"type": "map", "keys": {"type": "int8"}, "values": {"type": "int8"}},
            b"[[1,2,3]]",
            "Found invalid map entry, expected length 2 but found: 3",
        ),
        (
            {"type": "map", "keys": {"type": "int8"}, "values": {"type": "int8"}},
            b'[["a",2]]',
            "expected an integer for INT8, got string",
        ),
        (
            {"type": "map", "keys": {"type": "array", "items": {"type": "int8"}}, "values": {"type": "int8"}},
            b"[[[1],2]]",
            "Map keys of type ARRAY cannot be Python dict keys",
        ),
        (
            {"type": "struct", "fields": [{"type": "int32", "field": "a"}]},
            b"[]",
            "Structs should be encoded as JSON objects, but found array",
        ),
        (
            {"type": "struct", "fields": [{"type": "int32", "field": "a"}]},
            b"{}",
            'Invalid null value for required INT32 field (at "a")',
        ),
        (
            {
                "type": "struct",
                "fields": [
                    {
                        "type": "array",
                        "items": {"type": "struct", "fields": [{"type": "string", "field": "name"}]},
                        "field": "items",
                    }
                ],
            },
            b'{"items":[{"name":"x"},{"name":5}]}',
            'expected a string for STRING, got number (at "items[1].name")',
        ),
    ],
)
def test_json_payload_errors(schema: dict[str, Any], payload: bytes, message: str) -> None:
    with pytest.raises(DataException) as e:
        json_converter().to_connect_data("t", envelope(schema, payload))
    assert message in str(e.value)
    assert str(e.value).startswith("Converting JSON to Kafka Connect data failed: ")


@pytest.mark.parametrize(
    "schema, message",
    [
        ({"optional": True}, "Schema must contain 'type' field"),
        ({"type": 5}, "Schema must contain 'type' field"),
        ({"type": "varchar"}, "Unknown schema type: varchar"),
        ("int32", "Schema must be a JSON object, got string"),
        ({"type": "array"}, "Array schema did not specify the element type"),
        ({"type": "map", "values": {"type": "int8"}}, "Map schema did not specify the key type"),
        ({"type": "map", "keys": {"type": "int8"}}, "Map schema did not specify the value type"),
        ({"type": "struct"}, 'Struct schema\'s "fields" argument is not an array.'),
        (
            {"type": "struct", "fields": [{"type": "int8"}]},
            "Struct schema's field name not specified properly",
        ),
        (
            {"type": "struct", "fields": [{"type": "int8", "field": "a"}, {"type": "int8", "field": "a"}]},
            "duplicate field name 'a'",
        ),
        ({"type": "int8", "name": 5}, "Schema name must be a string"),
        ({"type": "int8", "version": "1"}, "Schema version must be an integer"),
        ({"type": "int8", "doc": []}, "Schema doc must be a string"),
        ({"type": "int8", "parameters": {"a": 1}}, "Schema parameters must have string values."),
        ({"type": "int8", "default": 300}, "Invalid default value in schema: 300 is out of range for INT8"),
        ({"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal"}, "scale parameter not found"),
    ],
)
def test_json_schema_errors(schema: Any, message: str) -> None:
    with pytest.raises(DataException) as e:
        json_converter().to_connect_data("t", envelope(schema, b"null"))
    assert message in str(e.value)


def test_json_write_errors() -> None:
    c = json_converter()
    s = user_schema()
    cases: list[tuple[Schema | None, Any, str]] = [
        (Schema.INT32_SCHEMA, "1", "expected int for INT32, got str"),
        (Schema.INT32_SCHEMA, True, "expected int for INT32, got bool"),
        (Schema.INT32_SCHEMA, 1.0, "expected int for INT32, got float"),
        (Schema.INT8_SCHEMA, 128, "128 is out of range for INT8"),
        (Schema.INT64_SCHEMA, 2**63, "9223372036854775808 is out of range for INT64"),
        (Schema.FLOAT64_SCHEMA, "1", "expected float for FLOAT64, got str"),
        (Schema.FLOAT64_SCHEMA, 10**400, "is out of range for FLOAT64"),
        (Schema.BOOLEAN_SCHEMA, 1, "expected bool for BOOLEAN, got int"),
        (Schema.STRING_SCHEMA, b"x", "expected str for STRING, got bytes"),
        (Schema.BYTES_SCHEMA, "x", "expected bytes for BYTES, got str"),
        (SchemaBuilder.array(Schema.INT8_SCHEMA).build(), {1}, "expected list for ARRAY, got set"),
        (
            SchemaBuilder.array(Schema.INT8_SCHEMA).build(),
            [1, None],
            'required and has no default value (at "[1]")',
        ),
        (
            SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT8_SCHEMA).build(),
            [],
            "expected dict for MAP, got list",
        ),
        (
            SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT8_SCHEMA).build(),
            {1: 1},
            "expected str for STRING",
        ),
        (
            SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT8_SCHEMA).build(),
            {"k": "v"},
            """expected int for INT8, got str (at "['k']")""",
        ),
        (s, {"id": 1}, "expected Struct for STRUCT, got dict"),
        (
            s,
            Struct(SchemaBuilder.struct().field("id", Schema.INT32_SCHEMA).build()).put("id", 1),
            "Mismatching",
        ),
        (s, Struct(s), 'required and has no default value (at "id")'),
        (None, object(), "Python type object does not have a corresponding schema type"),
        (None, decimal.Decimal(1), "Python type Decimal does not have a corresponding schema type"),
        (None, [1, {"a": 2**64}], """18446744073709551616 is out of range for INT64 (at "[1]['a']")"""),
        (Date.SCHEMA, datetime.datetime(2024, 1, 1), "expected datetime.date but was datetime"),
    ]
    for schema, value, message in cases:
        with pytest.raises(DataException) as e:
            c.from_connect_data("t", schema, value)
        assert message in str(e.value), (schema, value, str(e.value))
        assert str(e.value).startswith("Converting Kafka Connect data to JSON failed: ")


# -- JsonConverter: configuration and caching --------------------------------------------------------------


def test_json_configs_from_properties_strings() -> None:
    c = JsonConverter()
    c.configure(
        {
            "schemas.enable": " FALSE ",
            "schemas.cache.size": "5",
            "decimal.format": "numeric",
            "replace.null.with.default": "false",
        },
        True,
    )
    assert (c.schemas_enable, c.cache_size, c.decimal_numeric, c.replace_null_with_default) == (
        False,
        5,
        True,
        False,
    )
    assert c.converter_type == "key"
    header = JsonConverter()
    header.configure({"converter.type": "header"})
    assert header.converter_type == "header" and header.schemas_enable
    defaults = JsonConverter()
    defaults.configure({}, False)
    assert (defaults.schemas_enable, defaults.cache_size, defaults.decimal_numeric) == (True, 1000, False)
    assert defaults.replace_null_with_default and defaults.converter_type == "value"
    assert JsonConverter.aliases == ("org.apache.kafka.connect.json.JsonConverter",)
    assert isinstance(c, Converter) and isinstance(c, HeaderConverter)


@pytest.mark.parametrize(
    "configs, message",
    [
        ({"schemas.enable": "yes"}, "Invalid value yes for configuration schemas.enable"),
        ({"replace.null.with.default": 1}, "Expected value to be either true or false"),
        ({"schemas.cache.size": "many"}, "Not a number of type INT"),
        ({"schemas.cache.size": "-1"}, "Value must be at least 0"),
        ({"decimal.format": "HEX"}, "String must be one of (case insensitive): BASE64, NUMERIC"),
        ({"converter.type": "both"}, "converter.type"),
    ],
)
def test_json_bad_configs(configs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConnectException) as e:
        JsonConverter().configure(configs)
    assert message in str(e.value)


def test_json_schema_caches() -> None:
    c = json_converter(**{"schemas.cache.size": "1"})
    s = user_schema()
    data = c.from_connect_data("t", s, Struct(s).put("id", 1))
    first, second = c.to_connect_data("t", data), c.to_connect_data("t", data)
    assert first.schema is second.schema  # parsed once, then cached by its JSON text
    other = c.from_connect_data("t", Schema.INT8_SCHEMA, 1)
    assert c.to_connect_data("t", other).value == 1
    assert c.to_connect_data("t", data) == first  # evicted and parsed again, same result
    assert len(c._readers) == 1 and len(c._writers) == 1
    uncached = json_converter(**{"schemas.cache.size": 0})
    assert uncached.to_connect_data("t", data) == first and not uncached._readers
    assert uncached.from_connect_data("t", s, Struct(s).put("id", 1)) == data and not uncached._writers


def test_json_header_methods() -> None:
    c = json_converter()
    data = c.from_connect_header("t", "h", Schema.INT8_SCHEMA, 1)
    assert data == b'{"schema":{"type":"int8","optional":false},"payload":1}'
    assert c.to_connect_header("t", "h", data) == SchemaAndValue(Schema.INT8_SCHEMA, 1)


# -- JsonConverter: generated round trips ------------------------------------------------------------------

PRIMITIVE_SCHEMAS = [
    Schema.INT8_SCHEMA, Schema.INT16_SCHEMA, Schema.INT32_SCHEMA, Schema.INT64_SCHEMA,
    Schema.FLOAT32_SCHEMA, Schema.FLOAT64_SCHEMA, Schema.BOOLEAN_SCHEMA, Schema.STRING_SCHEMA,
    Schema.BYTES_SCHEMA, Decimal.schema(0), Decimal.schema(3), Decimal.schema(-2), Date.SCHEMA,
    Time.SCHEMA, Timestamp.SCHEMA,
]  # fmt: skip


def with_metadata(schema: Schema, optional: bool, doc: str | None) -> Schema:
    if not optional and doc is None:
        return schema
    return dataclasses.replace(schema, optional=optional or schema.optional, doc=doc)


def _array_of(item: Schema, optional: bool) -> Schema:
    builder = SchemaBuilder.array(item)
    return (builder.optional() if optional else builder).build()


def _struct_of(fields: list[tuple[str, Schema]]) -> Schema:
    b = SchemaBuilder.struct().name("gen.Struct")
    for name, schema in fields:
        b.field(name, schema)
    return b.build()


names = st.text(alphabet="abcdefghij_", min_size=1, max_size=6)
primitive_schemas = st.builds(
    with_metadata, st.sampled_from(PRIMITIVE_SCHEMAS), st.booleans(), st.none() | st.text(max_size=5)
)
schemas = st.recursive(
    primitive_schemas,
    lambda children: (
        st.builds(_array_of, children, st.booleans())
        | st.builds(lambda k, v: SchemaBuilder.map(k, v).build(), primitive_schemas, children)
        | st.lists(st.tuples(names, children), min_size=1, max_size=4, unique_by=lambda t: t[0]).map(
            lambda fields: _struct_of(fields)
        )
    ),
    max_leaves=6,
)  # fmt: skip


def values_for(schema: Schema) -> st.SearchStrategy[Any]:
    base = _values_for(schema)
    return st.none() | base if schema.optional else base


def _values_for(schema: Schema) -> st.SearchStrategy[Any]:
    if schema.name == Decimal.LOGICAL_NAME:
        scale = Decimal.scale(schema)
        return st.integers(-(10**30), 10**30).map(
            lambda n: decimal.Decimal((0 if n >= 0 else 1, tuple(int(c) for c in str(abs(n))), -scale))
        )
    if schema.name == Date.LOGICAL_NAME:
        return st.dates()
    if schema.name == Time.LOGICAL_NAME:
        return st.times().map(lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000))
    if schema.name == Timestamp.LOGICAL_NAME:
        return st.datetimes(timezones=st.just(UTC)).map(
            lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000)
        )
    t = schema.type
    if t is Type.INT8:
        return st.integers(-(2**7), 2**7 - 1)
    if t is Type.INT16:
        return st.integers(-(2**15), 2**15 - 1)
    if t is Type.INT32:
        return st.integers(-(2**31), 2**31 - 1)
    if t is Type.INT64:
        return st.integers(-(2**63), 2**63 - 1)
    if t is Type.FLOAT32:
        return st.floats(width=32, allow_nan=False)
    if t is Type.FLOAT64:
        return st.floats(allow_nan=False)
    if t is Type.BOOLEAN:
        return st.booleans()
    if t is Type.STRING:
        return st.text(max_size=8)
    if t is Type.BYTES:
        return st.binary(max_size=8)
    if t is Type.ARRAY:
        assert schema.value_schema is not None
        return st.lists(values_for(schema.value_schema), max_size=3)
    if t is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        return st.dictionaries(_values_for(schema.key_schema), values_for(schema.value_schema), max_size=3)
    field_values = [values_for(f.schema) for f in schema.fields]

    def build(values: list[Any]) -> Struct:
        struct = Struct(schema)
        for f, v in zip(schema.fields, values, strict=True):
            struct.put(f.name, v)
        return struct

    return st.tuples(*field_values).map(lambda vs: build(list(vs)))


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_json_round_trip_generated(data: st.DataObject) -> None:
    schema = data.draw(schemas)
    value = data.draw(values_for(schema))
    for c in (json_converter(), json_converter(**{"decimal.format": "NUMERIC"})):
        encoded = c.from_connect_data("t", schema, value)
        assert encoded is not None
        assert json.loads(encoded)["schema"] == json.loads(orjson.dumps(c.as_json_schema(schema)))
        back = c.to_connect_data("t", encoded)
        assert back.schema == schema
        assert back.value == value
        assert c.from_connect_data("t", back.schema, back.value) == encoded


# -- StringConverter ---------------------------------------------------------------------------------------


def test_string_converter() -> None:
    c = StringConverter()
    c.configure({}, False)
    assert c.from_connect_data("t", Schema.STRING_SCHEMA, "héllo") == "héllo".encode()
    assert c.from_connect_data("t", None, 42) == b"42"
    assert c.from_connect_data("t", None, True) == b"true"
    assert c.from_connect_data("t", None, None) is None
    assert c.to_connect_data("t", "héllo".encode()) == SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, "héllo")
    assert c.to_connect_data("t", None) == SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, None)
    with pytest.raises(DataException, match="Failed to deserialize string in UTF-8"):
        c.to_connect_data("t", b"\xff")
    assert c.from_connect_header("t", "h", None, "x") == b"x"
    assert c.to_connect_header("t", "h", b"x").value == "x"
    assert StringConverter.aliases == ("org.apache.kafka.connect.storage.StringConverter",)


def test_string_converter_encodings_from_properties() -> None:
    c = StringConverter()
    c.configure({"converter.encoding": "UTF-16"}, True)
    assert c.from_connect_data("t", None, "a") == "a".encode("utf-16")
    assert c.to_connect_data("t", "a".encode("utf-16")).value == "a"
    split = StringConverter()
    split.configure({"serializer.encoding": "ISO-8859-1", "deserializer.encoding": "UTF-8"}, False)
    assert split.from_connect_data("t", None, "é") == b"\xe9"
    assert split.to_connect_data("t", "é".encode()).value == "é"
    with pytest.raises(DataException, match="Failed to serialize to a string in ISO-8859-1"):
        split.from_connect_data("t", None, "€")
    with pytest.raises(ConnectException, match=r"Invalid value nope for configuration converter\.encoding"):
        StringConverter().configure({"converter.encoding": "nope"}, False)


# -- ByteArrayConverter ------------------------------------------------------------------------------------


def test_byte_array_converter() -> None:
    c = ByteArrayConverter()
    c.configure({}, False)
    assert c.from_connect_data("t", Schema.BYTES_SCHEMA, b"\x00\x01") == b"\x00\x01"
    assert c.from_connect_data("t", None, bytearray(b"ab")) == b"ab"
    assert c.from_connect_data("t", None, memoryview(b"ab")) == b"ab"
    assert c.from_connect_data("t", None, None) is None
    assert c.to_connect_data("t", b"\x00") == SchemaAndValue(Schema.OPTIONAL_BYTES_SCHEMA, b"\x00")
    assert c.to_connect_data("t", None) == SchemaAndValue(Schema.OPTIONAL_BYTES_SCHEMA, None)
    with pytest.raises(DataException, match="not compatible with objects of type str"):
        c.from_connect_data("t", None, "x")
    with pytest.raises(DataException, match="Invalid schema type for ByteArrayConverter: STRING"):
        c.from_connect_data("t", Schema.STRING_SCHEMA, b"x")
    assert (
        c.to_connect_header("t", "h", b"x").value == b"x"
        and c.from_connect_header("t", "h", None, b"y") == b"y"
    )
    assert ByteArrayConverter.aliases == ("org.apache.kafka.connect.converters.ByteArrayConverter",)


_BYTES_SCHEMAS = st.sampled_from(
    [None, Schema.BYTES_SCHEMA, Schema.OPTIONAL_BYTES_SCHEMA, Schema.STRING_SCHEMA]
)
_BYTES_VALUES = st.one_of(
    st.none(), st.binary(max_size=8), st.text(max_size=3), st.integers(), st.builds(bytearray)
)


@given(st.lists(st.tuples(_BYTES_SCHEMAS, _BYTES_VALUES), max_size=12))
def test_byte_array_converter_batch_is_the_per_value_conversion(rows: list[tuple[Any, Any]]) -> None:
    """The batch form (one check for a batch of bytes) answers as value-by-value conversion,
    and raises where one value would."""
    c = ByteArrayConverter()
    schemas, values = [s for s, _ in rows], [v for _, v in rows]
    try:
        expected: list[Any] | None = [c.from_connect_data("t", s, v) for s, v in rows]
    except DataException:
        expected = None
    if expected is None:
        with pytest.raises(DataException):
            c.from_connect_batch("t", schemas, values)
    else:
        assert c.from_connect_batch("t", schemas, values) == expected
    for schema, value in rows:
        try:
            want = c.from_connect_data("t", schema, value)
        except DataException:
            with pytest.raises(DataException):
                c.from_connect_header("t", "h", schema, value)
        else:
            assert c.from_connect_header("t", "h", schema, value) == want


# -- number converters -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cls, schema, value, encoded",
    [
        (ShortConverter, Schema.OPTIONAL_INT16_SCHEMA, 258, "0102"),
        (ShortConverter, Schema.OPTIONAL_INT16_SCHEMA, -1, "ffff"),
        (IntegerConverter, Schema.OPTIONAL_INT32_SCHEMA, 1, "00000001"),
        (IntegerConverter, Schema.OPTIONAL_INT32_SCHEMA, -2, "fffffffe"),
        (LongConverter, Schema.OPTIONAL_INT64_SCHEMA, 2**40, "0000010000000000"),
        (FloatConverter, Schema.OPTIONAL_FLOAT32_SCHEMA, 1.5, "3fc00000"),  # Float.floatToIntBits(1.5f)
        (
            FloatConverter,
            Schema.OPTIONAL_FLOAT32_SCHEMA,
            float.fromhex("-0x1.99999ap-4"),
            "bdcccccd",
        ),  # -0.1f
        (DoubleConverter, Schema.OPTIONAL_FLOAT64_SCHEMA, 1.5, "3ff8000000000000"),  # doubleToLongBits(1.5)
    ],
)
def test_number_converters(cls: type[NumberConverter], schema: Schema, value: Any, encoded: str) -> None:
    c = cls()
    c.configure({"converter.type": "value"}, False)
    assert c.from_connect_data("t", schema, value) == bytes.fromhex(encoded)
    assert c.to_connect_data("t", bytes.fromhex(encoded)) == SchemaAndValue(schema, value)
    assert c.from_connect_data("t", schema, None) is None
    assert c.to_connect_data("t", None) == SchemaAndValue(schema, None)
    assert c.to_connect_header("t", "h", bytes.fromhex(encoded)).value == value
    assert c.from_connect_header("t", "h", schema, value) == bytes.fromhex(encoded)
    with pytest.raises(DataException, match=f"size of data received is 3, not {len(encoded) // 2}"):
        c.to_connect_data("t", b"abc")
    with pytest.raises(DataException, match=r"Failed to serialize to .* \(was str\)"):
        c.from_connect_data("t", schema, "1")
    with pytest.raises(DataException, match=r"\(was bool\)"):
        c.from_connect_data("t", schema, True)
    assert cls.aliases == (f"org.apache.kafka.connect.converters.{cls.__name__}",)


def test_number_converter_ranges() -> None:
    with pytest.raises(DataException, match="32768 is out of range"):
        ShortConverter().from_connect_data("t", None, 32768)
    with pytest.raises(DataException, match="was float"):
        IntegerConverter().from_connect_data("t", None, 1.0)
    with pytest.raises(DataException, match="Failed to serialize to FLOAT32"):
        FloatConverter().from_connect_data("t", None, 1e39)
    assert DoubleConverter().from_connect_data("t", None, 2) == bytes.fromhex("4000000000000000")
    with pytest.raises(TypeError):
        NumberConverter()  # type: ignore[abstract]


# -- SimpleHeaderConverter ---------------------------------------------------------------------------------


def header_bytes(schema: Schema | None, value: Any) -> bytes | None:
    return SimpleHeaderConverter().from_connect_header("t", "h", schema, value)


def header_parse(text: str) -> SchemaAndValue:
    return SimpleHeaderConverter().to_connect_header("t", "h", text.encode())


def test_header_to_text_like_kafka_values() -> None:
    s = user_schema()
    cases: list[tuple[Schema | None, Any, str]] = [
        (Schema.STRING_SCHEMA, 'a "b"', 'a "b"'),
        (Schema.INT32_SCHEMA, -5, "-5"),
        (Schema.BOOLEAN_SCHEMA, True, "true"),
        (Schema.BOOLEAN_SCHEMA, False, "false"),
        (Schema.FLOAT64_SCHEMA, 1.5, "1.5"),
        (Schema.FLOAT64_SCHEMA, 1e20, "1.0E20"),
        (Schema.FLOAT32_SCHEMA, 0.1, "0.1"),
        (None, 0.1, "0.1"),
        (Schema.BYTES_SCHEMA, b"\x00\xff", "AP8="),
        (Decimal.schema(2), decimal.Decimal("12.30"), "12.30"),
        (None, decimal.Decimal("-0.00"), "0.00"),
        (None, [1, "a", None, True, [2]], '[1,"a",null,true,[2]]'),
        (None, ['q"u\\ote'], r'["q\"u\\ote"]'),
        (None, [b"\x01"], '["AQ=="]'),
        (None, {"a": 1, "b": [1, 2]}, '{"a":1,"b":[1,2]}'),
        (None, {1: "x"}, '{1:"x"}'),
        (s, Struct(s).put("id", 1).put("name", "ann"), '{"id":1,"name":"ann"}'),
        (s, Struct(s).put("id", 1), '{"id":1,"name":null}'),
        (Date.SCHEMA, datetime.date(2024, 5, 1), "2024-05-01"),
        (Time.SCHEMA, datetime.time(12, 34, 56, 789000), "12:34:56.789Z"),
        (
            Timestamp.SCHEMA,
            datetime.datetime(2024, 5, 1, 12, 30, 0, 123000, tzinfo=UTC),
            "2024-05-01T12:30:00.123Z",
        ),
        (None, datetime.datetime(1969, 12, 31, 23, 59, 59, 999000), "1969-12-31T23:59:59.999Z"),
    ]
    for schema, value, text in cases:
        assert header_bytes(schema, value) == text.encode(), (value, text)
    assert header_bytes(Schema.OPTIONAL_STRING_SCHEMA, None) is None
    with pytest.raises(DataException, match="Failed to serialize unexpected value type object"):
        header_bytes(None, object())


def test_header_parsing_infers_schemas() -> None:
    cases: list[tuple[str, Schema | None, Any]] = [
        ("true", Schema.BOOLEAN_SCHEMA, True),
        ("false", Schema.BOOLEAN_SCHEMA, False),
        (" true ", Schema.BOOLEAN_SCHEMA, True),
        ("True", Schema.STRING_SCHEMA, "True"),
        ("1", Schema.INT8_SCHEMA, 1),
        ("-128", Schema.INT8_SCHEMA, -128),
        ("300", Schema.INT16_SCHEMA, 300),
        ("70000", Schema.INT32_SCHEMA, 70000),
        (str(2**40), Schema.INT64_SCHEMA, 2**40),
        ("1e3", Schema.INT16_SCHEMA, 1000),
        ("1.0", Schema.INT8_SCHEMA, 1),
        ("1.5", Schema.FLOAT64_SCHEMA, 1.5),
        ("-0.25", Schema.FLOAT64_SCHEMA, -0.25),
        ("1.0E20", Schema.FLOAT64_SCHEMA, 1e20),
        (str(2**64), Decimal.schema(0), decimal.Decimal(2**64)),
        ("hello", Schema.STRING_SCHEMA, "hello"),
        ("12abc", Schema.STRING_SCHEMA, "12abc"),
        ("74320e6e26adc8f8", Schema.STRING_SCHEMA, "74320e6e26adc8f8"),  # a trace id, not a number
        ("2024-05-01", Date.SCHEMA, datetime.date(2024, 5, 1)),
        ("2024-13-01", Schema.STRING_SCHEMA, "2024-13-01"),
        ("12:34:56.789Z", Time.SCHEMA, datetime.time(12, 34, 56, 789000)),
        ("2024-05-01T12:30:00.123Z", Timestamp.SCHEMA, datetime.datetime(2024, 5, 1, 12, 30, 0, 123000, UTC)),
        ("[1,2,3]", SchemaBuilder.array(Schema.INT8_SCHEMA).build(), [1, 2, 3]),
        ("[1, 300]", SchemaBuilder.array(Schema.INT16_SCHEMA).build(), [1, 300]),
        ("[1,2.5]", SchemaBuilder.array(Schema.FLOAT64_SCHEMA).build(), [1.0, 2.5]),
        ('["a","b"]', SchemaBuilder.array(Schema.STRING_SCHEMA).build(), ["a", "b"]),
        ("[1,null]", SchemaBuilder.array(Schema.OPTIONAL_INT8_SCHEMA).build(), [1, None]),
        ("[[1],[2,3]]", SchemaBuilder.array(SchemaBuilder.array(Schema.INT8_SCHEMA)).build(), [[1], [2, 3]]),
        ('[1,"a"]', None, [1, "a"]),
        ("[]", None, []),
        ('{"a":1,"b":2}', Schema(Type.MAP, key_schema=Schema.STRING_SCHEMA, value_schema=Schema.INT8_SCHEMA),
         {"a": 1, "b": 2}),
        ("{1:true}", SchemaBuilder.map(Schema.INT8_SCHEMA, Schema.BOOLEAN_SCHEMA).build(), {1: True}),
        ('{"a":1,"b":"x"}', None, {"a": 1, "b": "x"}),
        ('{"when":12:34:56.789Z}', SchemaBuilder.map(Schema.STRING_SCHEMA, Time.SCHEMA).build(),
         {"when": datetime.time(12, 34, 56, 789000)}),
        ('["2024-05-01"]', SchemaBuilder.array(Date.SCHEMA).build(), [datetime.date(2024, 5, 1)]),
        (r'["q\"u\\ote"]', SchemaBuilder.array(Schema.STRING_SCHEMA).build(), ['q"u\\ote']),
        ("[1,2", Schema.STRING_SCHEMA, "[1,2"),
        ("[1,]", Schema.STRING_SCHEMA, "[1,]"),
        ("[a]", Schema.STRING_SCHEMA, "[a]"),
        ("[1] x", Schema.STRING_SCHEMA, "[1] x"),
        ("true}", Schema.STRING_SCHEMA, "true}"),
        ("12, 13", Schema.STRING_SCHEMA, "12, 13"),
        ('{"a":}', Schema.STRING_SCHEMA, '{"a":}'),
        ("{null:1}", Schema.STRING_SCHEMA, "{null:1}"),
        ("{[1]:1}", Schema.STRING_SCHEMA, "{[1]:1}"),
        ('"quoted"', Schema.STRING_SCHEMA, '"quoted"'),
        ("", Schema.STRING_SCHEMA, ""),
    ]  # fmt: skip
    for text, schema, value in cases:
        parsed = header_parse(text)
        assert parsed == SchemaAndValue(schema, value), text
        assert type(parsed.value) is type(value), text


def test_header_parsing_nulls_and_bad_utf8() -> None:
    c = SimpleHeaderConverter()
    c.configure({})
    assert c.to_connect_header("t", "h", None) == SchemaAndValue.NULL
    assert c.to_connect_header("t", "h", b"null") == SchemaAndValue.NULL
    assert c.to_connect_header("t", "h", b"\xffok") == SchemaAndValue(Schema.STRING_SCHEMA, "\ufffdok")
    assert SimpleHeaderConverter.aliases == ("org.apache.kafka.connect.storage.SimpleHeaderConverter",)


def test_header_huge_exponent_is_fast() -> None:
    # KAFKA-17792: a hex trace id that happens to look like a number with a huge exponent.
    start = time.perf_counter()
    parsed = parse_string("407127e212797209")
    assert time.perf_counter() - start < 0.5
    assert parsed.schema == Decimal.schema(-212797209) and parsed.value == decimal.Decimal("407127e212797209")


def test_header_round_trips() -> None:
    s = user_schema()
    for schema, value in [
        (Schema.INT64_SCHEMA, 2**40),
        (Schema.BOOLEAN_SCHEMA, True),
        (Schema.FLOAT64_SCHEMA, 2.5),
        (Schema.STRING_SCHEMA, "plain text"),
        (SchemaBuilder.array(Schema.STRING_SCHEMA).build(), ["a", 'b"', "c\\"]),
        (SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.FLOAT64_SCHEMA).build(), {"x": 1.5, "y": 2.5}),
        (Timestamp.SCHEMA, datetime.datetime(2024, 5, 1, 12, 30, tzinfo=UTC)),
    ]:
        text = convert_to_string(schema, value)
        assert parse_string(text) == SchemaAndValue(schema, value), text
    struct_text = convert_to_string(s, Struct(s).put("id", 1).put("name", "ann"))
    assert parse_string(struct_text) == SchemaAndValue(None, {"id": 1, "name": "ann"})


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30))
def test_header_parsing_never_raises(text: str) -> None:
    parsed = parse_string(text)
    if parsed.schema is not None:
        Schema.validate_value(parsed.schema, parsed.value)


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_header_integers_round_trip(n: int) -> None:
    parsed = header_parse(header_bytes(Schema.INT64_SCHEMA, n).decode())  # type: ignore[union-attr]
    assert (
        parsed.value == n
        and parsed.schema is not None
        and parsed.schema.type
        in (
            Type.INT8,
            Type.INT16,
            Type.INT32,
            Type.INT64,
        )
    )


# -- to_connect_batch: the same as to_connect_data on each value ------------------------------------------


def _per_record(c: Converter, data: list[bytes | None]) -> list[SchemaAndValue] | type[Exception]:
    try:
        return [c.to_connect_data("t", d) for d in data]
    except Exception as exc:
        return type(exc)


def _batch(c: Converter, data: list[bytes | None]) -> list[SchemaAndValue] | type[Exception]:
    # A converter may refuse at the call or, when it decodes later, when the values are read.
    try:
        batch = c.to_connect_batch("t", data)
        schemas, values = batch.schemas, batch.values
    except Exception as exc:
        return type(exc)
    assert len(schemas) == len(values) == len(data)
    return [SchemaAndValue(s, v) for s, v in zip(schemas, values, strict=True)]


def _string_converter(**configs: Any) -> StringConverter:
    c = StringConverter()
    c.configure(configs, False)
    return c


def _byte_array_converter() -> ByteArrayConverter:
    c = ByteArrayConverter()
    c.configure({}, False)
    return c


_BATCH_CONVERTERS = {
    "json-schemaless": lambda: json_converter(**{"schemas.enable": "false"}),
    "json-envelopes": json_converter,
    "string": _string_converter,
    "string-latin1": lambda: _string_converter(**{"converter.encoding": "ISO-8859-1"}),
    "bytes": _byte_array_converter,
    "integer": lambda: IntegerConverter(),
}

# Values every converter meets: JSON documents (schemaless and in envelopes), nulls, empty
# records, numbers orjson refuses but Jackson reads, text that is not JSON or not UTF-8.
_BATCH_VALUES = st.sampled_from(
    [
        b'{"id": 1, "name": "a"}',
        b"[1, 2.5, null]",
        b'"text"',
        b"123456789012345678901234567890",
        b'"\\ud800"',
        b'{"schema":{"type":"int32","optional":false},"payload":7}',
        b'{"schema":null,"payload":{"x":1}}',
        b"\x00\x00\x00\x05",
        b"not json",
        b"\xff\xfe",
        b"",
        None,
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(_BATCH_CONVERTERS)), st.lists(_BATCH_VALUES, max_size=8))
def test_to_connect_batch_equals_each_value_converted(name: str, data: list[bytes | None]) -> None:
    """A batch gives what converting each value gives, or raises where that would."""
    c = _BATCH_CONVERTERS[name]()
    expected = _per_record(c, data)
    got = _batch(c, data)
    if isinstance(expected, type):
        assert isinstance(got, type), f"{name}: the batch did not refuse what one value refuses"
    else:
        assert got == expected


def test_to_connect_batch_schemaless_json_is_one_column_of_documents() -> None:
    c = json_converter(**{"schemas.enable": "false"})
    batch = c.to_connect_batch("t", [b'{"a": 1}', b"2", b"[3]"])
    assert list(batch.schemas) == [None, None, None]
    assert list(batch.values) == [{"a": 1}, 2, [3]]
    # A null in the batch, and a lone surrogate (orjson refuses it, Jackson reads it), come
    # out as they do one by one.
    mixed = c.to_connect_batch("t", [None, b'"\\ud800"', b'{"a": 1}'])
    assert list(mixed.values) == [None, "\ud800", {"a": 1}]
    broken = c.to_connect_batch("t", [b"1", b"{broken"])  # decoded when read
    with pytest.raises(DataException, match="serialization error"):
        broken.values  # noqa: B018 - reading is what decodes


def test_to_connect_batch_default_for_plugin_converters() -> None:
    """A converter that implements only to_connect_data gets a batch method for free."""

    class Upper(Converter):
        def from_connect_data(
            self, topic: str, schema: Schema | None, value: Any, headers: Any = None
        ) -> bytes:
            return str(value).encode()

        def to_connect_data(self, topic: str, data: bytes | None, headers: Any = None) -> SchemaAndValue:
            return SchemaAndValue(None, None if data is None else data.decode().upper())

    batch = Upper().to_connect_batch("t", [b"a", None, b"b"])
    assert list(batch.schemas) == [None, None, None]
    assert list(batch.values) == ["A", None, "B"]
