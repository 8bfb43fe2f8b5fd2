"""Java's numeric conversions, for the transformations that promise Kafka's results.

Kafka's Cast and MaskField are written in terms of Java's primitive types: ``(byte) 300``
is 44, ``(int) 1e20`` is ``Integer.MAX_VALUE``, ``Integer.parseInt(" 1")`` fails,
``Double.toString(1e7)`` is ``"1.0E7"`` and ``new BigDecimal("1e3").longValue()`` is
1000. Python's ints do not overflow and its ``int()``/``float()``/``repr()`` accept and
print other things, so the conversions those transformations need are spelled out
here once:

- narrowing: ``wrap`` (two's complement), ``float_to_int`` (truncate, saturate, NaN → 0),
  ``decimal_to_int`` (BigDecimal's ``longValue``/``intValue``: truncate, keep the low bits);
- float32: ``to_float32`` / ``int_to_float32`` / ``decimal_to_float32`` give the value a
  Java ``float`` would hold (rounded once, to nearest-even; too large → infinity);
- parsing: ``parse_int`` (``Byte/Short/Integer/Long.parseX``), ``parse_double`` /
  ``parse_float`` (``Double.parseDouble`` / ``Float.parseFloat``), ``parse_boolean``,
  ``parse_big_decimal`` (``new BigDecimal(String)``); failures raise
  ``NumberFormatError`` (Java's ``NumberFormatException``);
- printing: ``double_to_string`` / ``float_to_string`` (``Double.toString`` /
  ``Float.toString``, the shortest digits that identify the value, as Java 19+ prints
  them) and ``big_decimal_to_string`` (``BigDecimal.toString``).
"""

from __future__ import annotations

import decimal
import math
import re
import struct
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

__all__ = [
    "INT_BITS",
    "NumberFormatError",
    "big_decimal_to_string",
    "decimal_to_double",
    "decimal_to_float32",
    "decimal_to_int",
    "double_to_string",
    "float_to_int",
    "float_to_string",
    "int_to_float32",
    "java_trim",
    "parse_big_decimal",
    "parse_boolean",
    "parse_double",
    "parse_float",
    "parse_int",
    "to_float32",
    "wrap",
]

#: Width of Java's integer types, by Connect type name.
INT_BITS = {"INT8": 8, "INT16": 16, "INT32": 32, "INT64": 64}

_JAVA_WHITESPACE = "".join(map(chr, range(33)))  # String.trim() strips every char <= U+0020
_INF = math.inf


class NumberFormatError(ValueError):
    """Java's NumberFormatException: the text is not a number of the requested type."""


def java_trim(text: str) -> str:
    """``String.trim()``: strip the characters up to U+0020 (not Unicode spaces)."""
    return text.strip(_JAVA_WHITESPACE)


# -- narrowing ---------------------------------------------------------------------------------------------


def wrap(n: int, bits: int) -> int:
    """The low ``bits`` bits of ``n`` as a signed number: Java's narrowing of integers."""
    half = 1 << (bits - 1)
    return ((n + half) & ((half << 1) - 1)) - half


def float_to_int(x: float, bits: int) -> int:
    """Java's ``(byte)``/``(short)``/``(int)``/``(long)`` of a double: truncate toward zero,
    saturate at the int (or long) range, NaN → 0; byte and short go through int and wrap."""
    if x != x:
        return 0
    wide = 64 if bits == 64 else 32
    lo, hi = -(1 << (wide - 1)), (1 << (wide - 1)) - 1
    n = lo if x <= lo else hi if x >= hi else int(x)
    return n if bits >= 32 else wrap(n, bits)


def decimal_to_int(d: Decimal, bits: int) -> int:
    """BigDecimal's ``longValue``/``intValue`` (and ``byteValue``/``shortValue``, which narrow
    ``intValue``): drop the fraction, keep the low ``bits`` bits. Raises NumberFormatError
    for NaN and infinities, which a BigDecimal cannot hold."""
    if not d.is_finite():
        raise NumberFormatError(str(d))
    exponent = d.as_tuple().exponent
    assert isinstance(exponent, int)
    if exponent >= bits:
        return 0  # a multiple of 10**bits, so of 2**bits: no low bits left (and no huge int built)
    return wrap(int(d), bits)


def to_float32(x: float) -> float:
    """``(float) x``: ``x`` rounded to the nearest float32 (infinity beyond its range)."""
    try:
        return struct.unpack("f", struct.pack("f", x))[0]  # type: ignore[no-any-return]
    except OverflowError:
        return math.copysign(_INF, x)


def _float32_of_ratio(num: int, den: int) -> float:
    """The float32 nearest to ``num / den`` (both > 0), ties to even: one rounding, as Java
    rounds a long, a BigDecimal or decimal text to a float (going through a double
    first could round twice)."""
    e = num.bit_length() - den.bit_length() - 24
    a, b = (num << -e, den) if e < 0 else (num, den << e)
    while a >= b << 24:
        e += 1
        a, b = (num << -e, den) if e < 0 else (num, den << e)
    while a < b << 23:
        e -= 1
        a, b = (num << -e, den) if e < 0 else (num, den << e)
    if e < -149:  # subnormal: the unit in the last place is 2**-149
        e = -149
        a, b = (num << -e, den) if e < 0 else (num, den << e)
    q, r = divmod(a, b)
    if 2 * r > b or (2 * r == b and q & 1):
        q += 1
    if e > 104 or (e == 104 and q >= 1 << 24):
        return _INF
    return math.ldexp(q, e)


def int_to_float32(n: int) -> float:
    """``(float) n`` for a Java long (or int)."""
    if -(1 << 24) <= n <= 1 << 24:
        return float(n)
    value = _float32_of_ratio(abs(n), 1)
    return -value if n < 0 else value


def decimal_to_float32(d: Decimal) -> float:
    """``BigDecimal.floatValue()``: the nearest float32, rounded once."""
    if not d.is_finite():
        return float(d)
    if d.is_zero():
        return 0.0  # a BigDecimal has no negative zero
    adjusted = d.adjusted()
    if adjusted > 39:
        value = _INF
    elif adjusted < -47:
        value = 0.0
    else:
        _, digits, exponent = d.as_tuple()
        assert isinstance(exponent, int)
        coefficient = int("".join(map(str, digits)))
        if exponent >= 0:
            value = _float32_of_ratio(coefficient * 10**exponent, 1)
        else:
            value = _float32_of_ratio(coefficient, 10**-exponent)
    return -value if d.is_signed() else value


# -- parsing -----------------------------------------------------------------------------------------------


def decimal_to_double(d: Decimal) -> float:
    """``BigDecimal.doubleValue()``: the nearest double (Python's conversion rounds once too)."""
    return 0.0 if d.is_zero() else float(d)


def parse_int(text: str, bits: int) -> int:
    """``Byte.parseByte`` … ``Long.parseLong``: an optional sign and decimal digits only (no
    spaces, no fraction), in range."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body or not body.isdecimal():
        raise NumberFormatError(f'For input string: "{text}"')
    try:
        n = int(text)
    except ValueError:  # longer than Python's int/str conversion limit: out of range anyway
        raise NumberFormatError(f'For input string: "{text}"') from None
    half = 1 << (bits - 1)
    if not -half <= n < half:
        raise NumberFormatError(f'Value out of range. Value:"{text}"')
    return n


# Double.valueOf's grammar: NaN, Infinity, decimal or hexadecimal (with a binary
# exponent) numbers, each with an optional sign and an optional f/F/d/D suffix.
_FLOAT_TEXT = re.compile(
    r"[+-]?(?:(?P<special>NaN|Infinity)"
    r"|(?P<dec>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)[fFdD]?"
    r"|0[xX](?P<hex>(?:[0-9a-fA-F]+\.?|[0-9a-fA-F]*\.[0-9a-fA-F]+)[pP][+-]?[0-9]+)[fFdD]?)"
)


def _float_text(text: str) -> tuple[re.Match[str], bool]:
    trimmed = java_trim(text)
    m = _FLOAT_TEXT.fullmatch(trimmed)
    if m is None:
        raise NumberFormatError("empty String" if not trimmed else f'For input string: "{text}"')
    return m, trimmed.startswith("-")


def parse_double(text: str) -> float:
    """``Double.parseDouble``: surrounding spaces ignored; NaN, Infinity, exponents, hex
    floats (``0x1.8p1``) and a trailing f/F/d/D accepted."""
    m, negative = _float_text(text)
    if m["special"] == "NaN":
        return math.nan
    if m["special"] is not None:
        value = _INF
    elif m["dec"] is not None:
        value = float(m["dec"])
    else:
        try:
            value = float.fromhex("0x" + m["hex"])
        except OverflowError:
            value = _INF
    return -value if negative else value


def parse_float(text: str) -> float:
    """``Float.parseFloat``: as ``parse_double``, rounded once to the nearest float32."""
    m, negative = _float_text(text)
    if m["special"] == "NaN":
        return math.nan
    if m["special"] is not None:
        value = _INF
    elif m["dec"] is not None:
        value = abs(decimal_to_float32(Decimal(m["dec"])))
    else:
        value = _hex_to_float32(m["hex"])
    return -value if negative else value


def _hex_to_float32(hex_text: str) -> float:
    significand, _, exponent_text = hex_text.lower().partition("p")
    whole, _, fraction = significand.partition(".")
    num = int((whole + fraction) or "0", 16)
    exponent = int(exponent_text) - 4 * len(fraction)
    if num == 0:
        return 0.0
    magnitude = num.bit_length() + exponent  # 2**(magnitude-1) <= value < 2**magnitude
    if magnitude > 129:
        return _INF
    if magnitude < -151:
        return 0.0
    return _float32_of_ratio(num << exponent, 1) if exponent >= 0 else _float32_of_ratio(num, 1 << -exponent)


def parse_boolean(text: str) -> bool:
    """``Boolean.parseBoolean``: "true" in any case; anything else is false, never an error."""
    return len(text) == 4 and text.lower() == "true"


_BIG_DECIMAL_TEXT = re.compile(r"[+-]?(?:\d+(?:\.(?P<f1>\d*))?|\.(?P<f2>\d+))(?:[eE](?P<exp>[+-]?\d+))?")


def parse_big_decimal(text: str) -> Decimal:
    """``new BigDecimal(String)``: sign, digits with an optional point, optional exponent;
    no spaces, NaN or infinities (which Python's ``Decimal`` would take)."""
    m = _BIG_DECIMAL_TEXT.fullmatch(text)
    if m is not None:
        # A BigDecimal's scale (digits after the point, less the exponent) is a Java int.
        scale = len(m["f1"] or m["f2"] or "") - (int(m["exp"]) if m["exp"] is not None else 0)
        if -(2**31) <= scale < 2**31:
            return Decimal(text)
    raise NumberFormatError(f"Character array is not a valid decimal number: {text}")


# -- printing ----------------------------------------------------------------------------------------------

# Exact arithmetic on binary floats: a double's exact decimal value has up to 767
# significant digits.
_EXACT = decimal.Context(prec=1100, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)
_TWO = Decimal(2)


def _shortest(x: float, below: float, above: float, even: bool, max_digits: int) -> tuple[str, int]:
    """Java's ``Double.toString``/``Float.toString`` digit choice for ``x`` > 0: among the
    decimals that round to ``x`` (those strictly between the midpoints to its neighbours
    ``below`` and ``above``; on them too when ``x``'s significand is even), the shortest
    (with 2 digits also allowed when 1 would do), closest to ``x``, ties to an even last
    digit. Returns the significant digits and the power of ten of the first one."""
    ctx = _EXACT
    exact = Decimal(x)
    low = ctx.divide(ctx.add(exact, Decimal(below)), _TWO)
    high = ctx.divide(ctx.add(exact, Decimal(above)), _TWO)

    def rounds_to_x(c: Decimal) -> bool:
        return low < c < high or (even and c in (low, high))

    top = exact.adjusted()
    found: list[Decimal] = []
    for length in range(1, max_digits + 2):
        quantum = Decimal((0, (1,), top - length + 1))
        for rounding in (ROUND_FLOOR, ROUND_CEILING):
            c = exact.quantize(quantum, rounding=rounding, context=ctx)
            if rounds_to_x(c):
                found.append(c)
        if found and length >= 2:
            break
    best = min(found, key=lambda c: (abs(ctx.subtract(c, exact)), _last_digit(c) & 1))
    _, digits, exponent = best.normalize(ctx).as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits))
    return text, exponent + len(text) - 1


def _last_digit(c: Decimal) -> int:
    digits = c.normalize(_EXACT).as_tuple().digits
    return digits[-1] if digits else 0


def _repr_digits(x: float) -> tuple[str, int]:
    """Python's shortest round-trip digits of ``x`` > 0 and the power of ten of the first."""
    text = repr(x)
    mantissa, _, exp_text = text.partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    power = (int(exp_text) if exp_text else 0) - len(fraction)  # value = int(digits) * 10**power
    stripped = digits.rstrip("0")
    power += len(digits) - len(stripped)
    return stripped, power + len(stripped) - 1


def _java_layout(negative: bool, digits: str, exponent: int) -> str:
    """Digits d1 d2 … with value d1.d2… * 10**exponent, laid out as Java prints doubles:
    plain for 1e-3 <= |x| < 1e7 (at least one digit after the point), else ``d.dddE<n>``."""
    sign = "-" if negative else ""
    if -3 <= exponent < 7:
        if exponent >= 0:
            whole = digits[: exponent + 1].ljust(exponent + 1, "0")
            fraction = digits[exponent + 1 :] or "0"
            return f"{sign}{whole}.{fraction}"
        return f"{sign}0.{'0' * (-exponent - 1)}{digits}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exponent}"


def _special(x: float) -> str | None:
    if x != x:
        return "NaN"
    if x == _INF:
        return "Infinity"
    if x == -_INF:
        return "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    return None


def double_to_string(x: float) -> str:
    """``Double.toString(x)``: "42.0", "0.001", "1.0E7", "1.0E-4", "NaN", "-Infinity"."""
    special = _special(x)
    if special is not None:
        return special
    a = abs(x)
    digits, exponent = _repr_digits(a)
    if len(digits) == 1:
        # Java also considers two-digit decimals here and takes the closest (4.9E-324, not 5E-324).
        bits = struct.unpack("<Q", struct.pack("<d", a))[0]
        above = math.ldexp(1.0, 1024) if a == 1.7976931348623157e308 else math.nextafter(a, _INF)
        digits, exponent = _shortest(a, math.nextafter(a, 0.0), above, bits & 1 == 0, 17)
    return _java_layout(x < 0, digits, exponent)


def float_to_string(x: float) -> str:
    """``Float.toString((float) x)``: as ``double_to_string``, with the digits that identify
    the float32 value ("0.1" for the float nearest 0.1, whose double form is 0.10000000149…)."""
    x = to_float32(x)
    special = _special(x)
    if special is not None:
        return special
    a = abs(x)
    bits = struct.unpack("<I", struct.pack("<f", a))[0]
    below = struct.unpack("<f", struct.pack("<I", bits - 1))[0]
    above = (
        math.ldexp(1.0, 128) if bits == 0x7F7FFFFF else struct.unpack("<f", struct.pack("<I", bits + 1))[0]
    )
    found = _float32_digits(a, below, above)
    digits, exponent = found if found is not None else _shortest(a, below, above, bits & 1 == 0, 9)
    return _java_layout(x < 0, digits, exponent)


def _float32_digits(a: float, below: float, above: float) -> tuple[str, int] | None:
    """``_shortest``'s answer for float32 ``a`` > 0 without exact decimal arithmetic, or None
    when a candidate is too close to a rounding boundary to decide in doubles.

    The midpoints to the float32 neighbours are exact in doubles, and a decimal of at most
    nine digits converts to the nearest double, so comparing doubles decides, except within
    an ulp of a midpoint. Two digits are tried first: when one digit would do, Java also
    looks at two and keeps the closer (``_shortest``)."""
    lo, hi = (a + below) / 2, (a + above) / 2
    ulp_lo, ulp_hi = math.ulp(lo), math.ulp(hi)

    def inside(text: str) -> bool | None:
        v = float(text)
        if abs(v - lo) <= ulp_lo or abs(v - hi) <= ulp_hi:
            return None
        return lo < v < hi

    def candidate(p: int) -> tuple[int, int] | bool | None:
        """(m, e) of the p-digit decimal m * 10**e that rounds to ``a``; False if none does."""
        nearest = f"{a:.{p - 1}e}"
        mantissa, _, exp = nearest.partition("e")
        m, e = int(mantissa.replace(".", "")), int(exp) - (p - 1)
        verdict = inside(nearest)
        if verdict is None or verdict:
            return None if verdict is None else (m, e)
        # The other p-digit neighbour of ``a`` may still round to it (the gap below a power
        # of two is half the gap above).
        other = m + 1 if float(nearest) < a else m - 1
        if other <= 0:
            return False
        verdict = inside(f"{other}e{e}")
        return None if verdict is None else ((other, e) if verdict else False)

    # Whether p digits suffice only grows with p: binary search the fewest (nine always do).
    low, high = 2, 9
    best: tuple[int, int] | None = None
    while low <= high:
        mid = (low + high) // 2
        found = candidate(mid)
        if found is None:
            return None
        if found is False:
            low = mid + 1
        else:
            assert isinstance(found, tuple)
            best, high = found, mid - 1
    if best is None:
        return None
    m, e = best
    text = str(m).rstrip("0")
    return text, e + len(str(m)) - 1


def big_decimal_to_string(d: Decimal) -> str:
    """``BigDecimal.toString()``: Python's ``str`` follows the same specification, except
    that a BigDecimal has no negative zero."""
    return str(d.copy_abs() if d.is_zero() else d)
