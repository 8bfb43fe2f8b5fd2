"""Java's spelling of numbers, as Jackson writes a ``double`` and a ``float``: what
``JsonConverter`` must write byte for byte (``1.0E10``, ``4.9E-324``, ``NaN``)."""

from __future__ import annotations

import decimal
import math
import struct
from collections.abc import Callable

_F32 = struct.Struct(">f")
_EXACT = decimal.Context(prec=2000)


def to_float32(x: float) -> float:
    """Round a float to the nearest 32-bit float (infinity when out of range), as Java's ``(float)`` cast."""
    try:
        result: float = _F32.unpack(_F32.pack(x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)
    return result


def _sci_digits(text: str) -> tuple[str, int]:
    """Significant digits of a decimal literal and the exponent of its first digit."""
    mantissa, _, exp = text.lower().partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    digits = int_part + frac_part
    stripped = digits.lstrip("0")
    exponent = len(int_part) + (int(exp) if exp else 0) - (len(digits) - len(stripped)) - 1
    return stripped.rstrip("0") or "0", exponent


def _java_digits(x: float, shortest: str, round_trips: Callable[[str], bool]) -> tuple[str, int]:
    digits, exponent = _sci_digits(shortest)
    if len(digits) == 1:
        # Java (JDK 19+) prefers a 2-digit decimal over the shortest 1-digit one when it is closer
        # to the exact binary value (so Double.MIN_VALUE prints as 4.9E-324, not 5E-324).
        two = f"{x:.1e}"
        d2, e2 = _sci_digits(two)
        if len(d2) == 2 and round_trips(two):
            exact = decimal.Decimal(x)
            one = decimal.Decimal(f"{digits}e{exponent}")
            if _EXACT.abs(_EXACT.subtract(decimal.Decimal(two), exact)) < _EXACT.abs(
                _EXACT.subtract(one, exact)
            ):
                return d2, e2
    return digits, exponent


def _java_layout(negative: bool, digits: str, exponent: int) -> str:
    if -3 <= exponent < 7:
        if exponent >= 0:
            text = f"{digits[: exponent + 1].ljust(exponent + 1, '0')}.{digits[exponent + 1 :] or '0'}"
        else:
            text = "0." + "0" * (-exponent - 1) + digits
    else:
        text = f"{digits[0]}.{digits[1:] or '0'}E{exponent}"
    return "-" + text if negative else text


def _special(x: float) -> str | None:
    if x != x:
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    return None


def format_double(x: float) -> str:
    """Java's ``Double.toString(x)`` (shortest round-trip digits, as JDK 19+)."""
    if 1e-3 <= x < 1e7 or -1e7 < x <= -1e-3:
        # Where Java writes plain decimals, Python's repr has the same shortest digits in
        # the same layout (the 2-digit preference of _java_digits only concerns subnormals).
        return repr(x)
    special = _special(x)
    if special is not None:
        return special
    ax = abs(x)
    digits, exponent = _java_digits(ax, repr(ax), lambda s: float(s) == ax)
    return _java_layout(x < 0, digits, exponent)


def format_float(x: float) -> str:
    """Java's ``Float.toString((float) x)``: shortest digits that identify the 32-bit float."""
    x = to_float32(x)
    special = _special(x)
    if special is not None:
        return special
    ax = abs(x)
    shortest = ""
    for precision in range(9):
        shortest = f"{ax:.{precision}e}"
        if to_float32(float(shortest)) == ax:
            break
    digits, exponent = _java_digits(ax, shortest, lambda s: to_float32(float(s)) == ax)
    return _java_layout(x < 0, digits, exponent)


# -- errors with paths -------------------------------------------------------------------------------------
