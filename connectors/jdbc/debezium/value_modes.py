"""The value handling modes whose names and choices are the same in every Debezium connector:
``decimal.handling.mode`` and ``binary.handling.mode``. (``time.precision.mode`` takes
different choices per connector, so each connector declares its own.)"""

from __future__ import annotations

import enum

__all__ = ["BinaryMode", "DecimalMode"]


class DecimalMode(enum.StrEnum):
    PRECISE = "precise"
    DOUBLE = "double"
    STRING = "string"


class BinaryMode(enum.StrEnum):
    BYTES = "bytes"
    BASE64 = "base64"
    BASE64_URL_SAFE = "base64-url-safe"
    HEX = "hex"
