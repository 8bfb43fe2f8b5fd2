"""parse_literal against Kafka's Values.parseString rules (ValuesTest cases where they
apply): scalars, numbers by size, temporals by length, arrays and maps with a common
schema, and the fallbacks to STRING."""

from __future__ import annotations

import datetime
import decimal

import pytest

from connect.api import Date, Decimal, Schema, SchemaAndValue, SchemaBuilder, Time, Timestamp
from transforms.literals import parse_literal

UTC = datetime.UTC


def parsed(text: str) -> SchemaAndValue:
    result = parse_literal(text)
    assert result is not None
    return result


def string(text: str) -> SchemaAndValue:
    return SchemaAndValue(Schema.STRING_SCHEMA, text)


# -- scalars ---------------------------------------------------------------------------


def test_null_is_no_value_at_all() -> None:
    assert parse_literal("null") is None


def test_booleans_are_case_sensitive_and_must_stand_alone() -> None:
    assert parsed("true") == SchemaAndValue(Schema.BOOLEAN_SCHEMA, True)
    assert parsed("false") == SchemaAndValue(Schema.BOOLEAN_SCHEMA, False)
    assert parsed("True") == string("True")
    assert parsed("true}") == string("true}")
    assert parsed("null]") == string("null]")


def test_empty_and_blank_text_are_strings() -> None:
    assert parsed("") == string("")
    assert parsed("   ") == string("   ")


@pytest.mark.parametrize(
    ("text", "schema", "value"),
    [
        ("0", Schema.INT8_SCHEMA, 0),
        ("-0", Schema.INT8_SCHEMA, 0),
        ("+5", Schema.INT8_SCHEMA, 5),
        ("127", Schema.INT8_SCHEMA, 127),
        ("-128", Schema.INT8_SCHEMA, -128),
        ("128", Schema.INT16_SCHEMA, 128),
        ("-129", Schema.INT16_SCHEMA, -129),
        ("32767", Schema.INT16_SCHEMA, 32767),
        ("32768", Schema.INT32_SCHEMA, 32768),
        ("2147483647", Schema.INT32_SCHEMA, 2**31 - 1),
        ("2147483648", Schema.INT64_SCHEMA, 2**31),
        ("9223372036854775807", Schema.INT64_SCHEMA, 2**63 - 1),
        ("-9223372036854775808", Schema.INT64_SCHEMA, -(2**63)),
        ("1.0", Schema.INT8_SCHEMA, 1),  # whole numbers are integers whatever their scale
        ("0.00", Schema.INT8_SCHEMA, 0),
        ("1e3", Schema.INT16_SCHEMA, 1000),
        ("1.5e3", Schema.INT16_SCHEMA, 1500),
    ],
)
def test_whole_numbers_take_the_smallest_integer_type(text: str, schema: Schema, value: int) -> None:
    result = parsed(text)
    assert result == SchemaAndValue(schema, value)
    assert type(result.value) is int


def test_whole_numbers_beyond_int64_are_decimals_of_scale_zero() -> None:
    assert parsed("9223372036854775808") == SchemaAndValue(Decimal.schema(0), decimal.Decimal(2**63))
    big = "12345678901234567890123"
    assert parsed(big) == SchemaAndValue(Decimal.schema(0), decimal.Decimal(big))


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("3.14", 3.14),
        ("0.5", 0.5),
        ("-2.5", -2.5),
        ("0.1", 0.1),
        ("1e20", 1e20),
        ("1e19", 1e19),
        ("1e-50", 0.0),
    ],
)
def test_fractions_are_float32_whenever_the_float_is_finite(text: str, value: float) -> None:
    # Kafka picks FLOAT32 for any finite float; the value carries the digits Java prints for it.
    assert parsed(text) == SchemaAndValue(Schema.FLOAT32_SCHEMA, value)


def test_float32_values_stay_inside_the_float32_range() -> None:
    result = parsed("3.4028235e38")  # rounds to the largest float
    assert result.schema == Schema.FLOAT32_SCHEMA
    Schema.validate_value(Schema.FLOAT32_SCHEMA, result.value)


def test_beyond_float32_comes_float64_then_decimal() -> None:
    assert parsed("1e39") == SchemaAndValue(Schema.FLOAT64_SCHEMA, 1e39)
    assert parsed("-3.5e38") == SchemaAndValue(Schema.FLOAT64_SCHEMA, -3.5e38)
    assert parsed("1e400") == SchemaAndValue(Decimal.schema(-400), decimal.Decimal("1e400"))


@pytest.mark.parametrize(
    "text", [".5", "-", "+", "1.5.5", "1e", "0x10", "1_000", "NaN", "Infinity", "10 apples"]
)
def test_text_that_is_no_java_bigdecimal_is_a_string(text: str) -> None:
    assert parsed(text) == string(text)


# -- temporals -------------------------------------------------------------------------


def test_iso_temporals_by_length_in_utc() -> None:
    assert parsed("12:30:45.123Z") == SchemaAndValue(Time.SCHEMA, datetime.time(12, 30, 45, 123000))
    assert parsed("2024-01-01T12:30:45.123Z") == SchemaAndValue(
        Timestamp.SCHEMA, datetime.datetime(2024, 1, 1, 12, 30, 45, 123000, tzinfo=UTC)
    )
    assert parsed("2024-05-01") == SchemaAndValue(Date.SCHEMA, datetime.date(2024, 5, 1))


def test_temporals_are_read_leniently() -> None:
    assert parsed("2024-02-30") == SchemaAndValue(Date.SCHEMA, datetime.date(2024, 3, 1))
    assert parsed("25:00:00.000Z") == SchemaAndValue(Time.SCHEMA, datetime.time(1, 0))


def test_escaped_colons_are_unescaped() -> None:
    assert parsed("12\\:30\\:45.123Z") == SchemaAndValue(Time.SCHEMA, datetime.time(12, 30, 45, 123000))


def test_text_of_a_temporal_length_that_does_not_parse_is_not_temporal() -> None:
    assert parsed("1234567890") == SchemaAndValue(Schema.INT32_SCHEMA, 1234567890)
    assert parsed("2024-01-01x") == string("2024-01-01x")  # 11 characters: no temporal length


def test_only_the_first_token_of_a_top_level_number_is_read() -> None:
    # Kafka's quirk: the rest after a delimiter is ignored.
    assert parsed("12:30") == SchemaAndValue(Schema.INT8_SCHEMA, 12)
    assert parsed("1,2") == SchemaAndValue(Schema.INT8_SCHEMA, 1)


# -- arrays ------------------------------------------------------------------------------


def array_of(schema: Schema) -> Schema:
    return SchemaBuilder.array(schema).build()


def test_array_of_one_type() -> None:
    assert parsed("[1,2,3]") == SchemaAndValue(array_of(Schema.INT8_SCHEMA), [1, 2, 3])
    assert parsed('["a", "b c", "d,e"]') == SchemaAndValue(
        array_of(Schema.STRING_SCHEMA), ["a", "b c", "d,e"]
    )
    assert parsed("[true, false]") == SchemaAndValue(array_of(Schema.BOOLEAN_SCHEMA), [True, False])
    assert parsed(" [ 1 , 2 ] ") == SchemaAndValue(array_of(Schema.INT8_SCHEMA), [1, 2])


def test_array_elements_widen_to_a_common_numeric_type() -> None:
    assert parsed("[1, 300]") == SchemaAndValue(array_of(Schema.INT16_SCHEMA), [1, 300])
    assert parsed("[300, 1]") == SchemaAndValue(array_of(Schema.INT16_SCHEMA), [300, 1])
    result = parsed("[1, 2.5]")
    assert result == SchemaAndValue(array_of(Schema.FLOAT32_SCHEMA), [1.0, 2.5])
    assert all(type(v) is float for v in result.value)
    assert parsed("[1, 1e39]") == SchemaAndValue(array_of(Schema.FLOAT64_SCHEMA), [1.0, 1e39])
    # Java's (float): an INT32 next to a FLOAT32 loses its last bits
    assert parsed("[16777217, 0.5]").value == [16777216.0, 0.5]


def test_array_of_temporals_quoted_or_not() -> None:
    expected = SchemaAndValue(array_of(Date.SCHEMA), [datetime.date(2024, 1, 1), datetime.date(2024, 1, 2)])
    assert parsed('["2024-01-01", 2024-01-02]') == expected
    assert parsed("[12:30:45.123Z]") == SchemaAndValue(
        array_of(Time.SCHEMA), [datetime.time(12, 30, 45, 123000)]
    )


def test_nested_arrays() -> None:
    assert parsed("[[1,2],[3]]") == SchemaAndValue(array_of(array_of(Schema.INT8_SCHEMA)), [[1, 2], [3]])


def test_arrays_without_a_common_schema_have_no_schema() -> None:
    assert parsed("[]") == SchemaAndValue(None, [])
    assert parsed("[null, null]") == SchemaAndValue(None, [None, None])
    assert parsed('[1, "a"]') == SchemaAndValue(None, [1, "a"])
    assert parsed("[1, true]") == SchemaAndValue(None, [1, True])
    # Kafka would type this array<array<int8>> after its last element; 300 does not fit INT8.
    assert parsed("[[300],[1]]") == SchemaAndValue(None, [[300], [1]])


@pytest.mark.parametrize(
    "text",
    [
        "[1, null]",  # a null next to typed elements cannot be converted to them
        "[null, 1]",
        "[a, b]",  # bare words are not values inside arrays
        "[1, 2",
        "[1,",
        "[1,,2]",
        "[,1]",
        "[1 2]",
        '["a" "b"]',
        "[[1], x]",
    ],
)
def test_arrays_that_do_not_parse_are_strings(text: str) -> None:
    assert parsed(text) == string(text)


def test_text_after_the_closing_bracket_is_ignored() -> None:
    assert parsed("[1,2] trailing") == SchemaAndValue(array_of(Schema.INT8_SCHEMA), [1, 2])


# -- maps --------------------------------------------------------------------------------


def test_map_of_common_key_and_value_types() -> None:
    schema = SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT16_SCHEMA).build()
    assert parsed('{"a": 1, "b": 300}') == SchemaAndValue(schema, {"a": 1, "b": 300})
    schema = SchemaBuilder.map(Schema.INT8_SCHEMA, Schema.BOOLEAN_SCHEMA).build()
    assert parsed("{1:true, 2:false}") == SchemaAndValue(schema, {1: True, 2: False})
    nested = SchemaBuilder.map(Schema.STRING_SCHEMA, array_of(Schema.INT8_SCHEMA)).build()
    assert parsed('{"k": [1, 2]}') == SchemaAndValue(nested, {"k": [1, 2]})


def test_map_keys_widen_too() -> None:
    schema = SchemaBuilder.map(Schema.INT16_SCHEMA, Schema.STRING_SCHEMA).build()
    assert parsed('{1: "a", 1000: "b"}') == SchemaAndValue(schema, {1: "a", 1000: "b"})


def test_maps_without_a_common_schema_have_no_schema() -> None:
    assert parsed("{}") == SchemaAndValue(None, {})
    assert parsed('{"a": null}') == SchemaAndValue(None, {"a": None})
    assert parsed('{"a": 1, "b": "x"}') == SchemaAndValue(None, {"a": 1, "b": "x"})


@pytest.mark.parametrize(
    "text", ['{"a"}', "{null: 1}", '{"a": 1', '{"a": 1,', '{,"a": 1}', "{a: 1}", '{"a": x}', "{[1]: 2}"]
)
def test_maps_that_do_not_parse_are_strings(text: str) -> None:
    assert parsed(text) == string(text)


# -- strings -----------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["hello", "hello world", '"quoted"', "a:b", "x,y", "{not json", "2024-13"])
def test_anything_else_is_the_whole_text_as_a_string(text: str) -> None:
    assert parsed(text) == string(text)


def test_parsed_values_are_valid_for_their_schemas() -> None:
    for text in ["[1, 2.5]", '{"a": [1, 300]}', "3.4028235e38", "[2024-01-01, 1]", "1e400", "12:30:45.123Z"]:
        result = parsed(text)
        assert result.schema is not None
        Schema.validate_value(result.schema, result.value)
