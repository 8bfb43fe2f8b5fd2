"""Java's numeric conversions: every expected value below was printed by a Java 25 JVM."""

from __future__ import annotations

import math
import struct
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

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
    parse_big_decimal,
    parse_boolean,
    parse_double,
    parse_float,
    parse_int,
    to_float32,
    wrap,
)


def f32(bits: int) -> float:
    return float(struct.unpack("<f", struct.pack("<I", bits))[0])


@pytest.mark.parametrize(
    ("x", "text"),
    [
        (42.0, "42.0"),
        (0.1, "0.1"),
        (1e7, "1.0E7"),
        (9999999.0, "9999999.0"),
        (1e-3, "0.001"),
        (9.99e-4, "9.99E-4"),
        (1e10, "1.0E10"),
        (1e23, "1.0E23"),
        (5e-324, "4.9E-324"),  # Java allows two digits when one would do, and takes the closer
        (1.7976931348623157e308, "1.7976931348623157E308"),
        (2.2250738585072014e-308, "2.2250738585072014E-308"),
        (123456.789, "123456.789"),
        (-0.0, "-0.0"),
        (0.0, "0.0"),
        (1 / 3, "0.3333333333333333"),
        (2e-3, "0.002"),
        (100.0, "100.0"),
        (1.5e-7, "1.5E-7"),
        (-1.5e-7, "-1.5E-7"),
        (9.223372036854776e18, "9.223372036854776E18"),
        (12345678.9, "1.23456789E7"),
        (math.nan, "NaN"),
        (math.inf, "Infinity"),
        (-math.inf, "-Infinity"),
    ],
)
def test_double_to_string(x: float, text: str) -> None:
    assert double_to_string(x) == text


@pytest.mark.parametrize(
    ("x", "text"),
    [
        (0.1, "0.1"),  # the float nearest 0.1, whose double form is 0.10000000149011612
        (0.10000000149011612, "0.1"),
        (42.125, "42.125"),
        (1e7, "1.0E7"),
        (1e10, "1.0E10"),
        (3.4028234663852886e38, "3.4028235E38"),
        (f32(1), "1.4E-45"),
        (16777217.0, "1.6777216E7"),
        (0.3, "0.3"),
        (1 / 3, "0.33333334"),
        (123456.7890625, "123456.79"),
        (1e-3, "0.001"),
        (9.999999310821295e-4, "9.999999E-4"),
        (2e-3, "0.002"),
        (-0.0, "-0.0"),
        (1e39, "Infinity"),  # beyond float32
    ],
)
def test_float_to_string(x: float, text: str) -> None:
    assert float_to_string(x) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1E+3", "1E+3"),
        ("1e3", "1E+3"),
        ("-0.00", "0.00"),  # no negative zero in a BigDecimal
        ("0.0000001", "1E-7"),
        ("123.4500", "123.4500"),
        ("12345678901234567890.5", "12345678901234567890.5"),
        ("+1.5", "1.5"),
        (".5", "0.5"),
        ("5.", "5"),
    ],
)
def test_big_decimal_parsing_and_printing(text: str, expected: str) -> None:
    assert big_decimal_to_string(parse_big_decimal(text)) == expected


@pytest.mark.parametrize(
    "text", ["abc", "1 ", " 1", "NaN", "Infinity", "1_0", "", ".", "1e", "0x10", "1e2147483649"]
)
def test_big_decimal_refuses_what_java_refuses(text: str) -> None:
    with pytest.raises(NumberFormatError):
        parse_big_decimal(text)


def test_integer_narrowing_wraps_and_float_narrowing_saturates() -> None:
    assert wrap(300, 8) == 44
    assert wrap(70000, 16) == 4464
    assert wrap(2**31, 32) == -(2**31)
    assert wrap(-129, 8) == 127
    assert float_to_int(1e20, 32) == 2**31 - 1
    assert float_to_int(-1e30, 64) == -(2**63)
    assert float_to_int(math.nan, 32) == 0
    assert float_to_int(1e10, 8) == -1  # (byte)(int) 1e10: saturate to int, then wrap
    assert float_to_int(-129.9, 8) == 127
    assert float_to_int(-2.9, 64) == -2
    assert float_to_int(math.inf, 16) == -1


def test_big_decimal_narrowing_keeps_the_low_bits() -> None:
    assert decimal_to_int(Decimal(2**31), 32) == -(2**31)
    assert decimal_to_int(Decimal("1e20"), 64) == 7766279631452241920
    assert decimal_to_int(Decimal("-300.9"), 8) == -44
    assert decimal_to_int(Decimal("1e2000000000"), 64) == 0  # no giant int is built
    assert decimal_to_int(Decimal("123.9"), 64) == 123
    with pytest.raises(NumberFormatError):
        decimal_to_int(Decimal("NaN"), 32)


def test_float32_rounding_is_one_rounding_like_java() -> None:
    assert int_to_float32(16777217) == 16777216.0
    assert int_to_float32(9007199254740993) == 9007199254740992.0
    assert int_to_float32(-(2**62 + 2**38 + 1)) == -float(2**62 + 2**39)
    assert to_float32(0.1) == 0.10000000149011612
    assert to_float32(1e39) == math.inf
    assert to_float32(-1e39) == -math.inf
    # 1 + 2**-24 + a little: rounding through a double first would give 1.0.
    assert decimal_to_float32(Decimal("1.00000005960464477539062501")) == 1.0000001192092896
    assert decimal_to_float32(Decimal("-0")) == 0.0
    assert math.copysign(1.0, decimal_to_float32(Decimal("-0"))) == 1.0
    assert math.copysign(1.0, decimal_to_double(Decimal("-0.0"))) == 1.0


@pytest.mark.parametrize(
    ("text", "bits", "expected"),
    [
        ("1", 32, 1),
        ("+1", 32, 1),
        ("-128", 8, -128),
        ("127", 8, 127),
        ("9223372036854775807", 64, 2**63 - 1),
        ("-9223372036854775808", 64, -(2**63)),
        ("\u0661\u0662", 32, 12),  # Java's Character.digit takes any Unicode decimal digit
    ],
)
def test_parse_int(text: str, bits: int, expected: int) -> None:
    assert parse_int(text, bits) == expected


@pytest.mark.parametrize(
    ("text", "bits"),
    [
        ("128", 8),
        ("-129", 8),
        ("2147483648", 32),
        ("9223372036854775808", 64),
        (" 1", 32),
        ("1 ", 32),
        ("1.0", 32),
        ("1e3", 32),
        ("", 32),
        ("+", 32),
        ("-", 32),
        ("1_000", 32),
        ("0x10", 32),
    ],
)
def test_parse_int_refuses(text: str, bits: int) -> None:
    with pytest.raises(NumberFormatError):
        parse_int(text, bits)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1.5", 1.5),
        (" 1.5\t", 1.5),  # trimmed
        ("1e3", 1000.0),
        ("1f", 1.0),
        ("1.5D", 1.5),
        (".5", 0.5),
        ("5.", 5.0),
        ("0x1.8p1", 3.0),
        ("0x.8p1f", 1.0),
        ("Infinity", math.inf),
        ("-Infinity", -math.inf),
        ("1e400", math.inf),
        ("0x1.fffffffffffff8p1023", math.inf),
        ("4.9e-324", 5e-324),
    ],
)
def test_parse_double(text: str, expected: float) -> None:
    assert parse_double(text) == expected


@pytest.mark.parametrize(
    "text", ["", " ", "nan", "infinity", "1_000", "0x10", "1e", "1e+", ".", "abc", "1,5"]
)
def test_parse_double_refuses(text: str) -> None:
    with pytest.raises(NumberFormatError):
        parse_double(text)
    with pytest.raises(NumberFormatError):
        parse_float(text)


def test_parse_nan() -> None:
    assert math.isnan(parse_double("NaN"))
    assert math.isnan(parse_float("-NaN"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0.1", 0.10000000149011612),
        ("3.4028235e38", 3.4028234663852886e38),
        ("3.40282357e38", math.inf),
        ("1.4e-45", f32(1)),
        ("7e-46", 0.0),
        ("7.1e-46", f32(1)),
        ("16777217", 16777216.0),
        ("0x1.ffffffp127", math.inf),
        ("0x1p-150", 0.0),
        ("0x1.1p-150", f32(1)),
    ],
)
def test_parse_float_rounds_once_to_float32(text: str, expected: float) -> None:
    assert parse_float(text) == expected


def test_parse_boolean_never_fails() -> None:
    assert parse_boolean("true") is True
    assert parse_boolean("TrUe") is True
    assert parse_boolean(" true") is False
    assert parse_boolean("yes") is False
    assert parse_boolean("") is False


def test_java_trim_strips_control_characters_but_not_unicode_spaces() -> None:
    assert java_trim("\x00\t 1 \n") == "1"
    assert java_trim("\u00a01") == "\u00a01"


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_double_to_string_round_trips(x: float) -> None:
    assert parse_double(double_to_string(x)) == x


@given(st.floats(width=32, allow_nan=False, allow_infinity=False))
def test_float_to_string_round_trips_through_float32(x: float) -> None:
    assert parse_float(float_to_string(x)) == x


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_int_to_float32_matches_the_exact_rounding(n: int) -> None:
    assert int_to_float32(n) == decimal_to_float32(Decimal(n))
    assert int_to_float32(n) == parse_float(str(n))
