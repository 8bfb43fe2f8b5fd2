"""A bounds check of a request's layout before kio decodes it.

kio's native reader reserves memory for an array from the count the peer sent,
before reading a single element; a count like 2**34 makes the allocation fail and
Rust aborts the whole process, which no ``except`` can stop. So every frame is first
walked along its kio schema (the same dataclasses kio decodes into), checking that
each declared length or count fits in the bytes that remain. Nothing is built: a
frame that passes is decoded by kio as usual; one that fails is malformed.

Remove this walk once kio bounds its reservations by the remaining input.
"""

from __future__ import annotations

import dataclasses
import struct
import typing
from functools import cache
from typing import Final

from broker.protocol.build import _unwrap

_FIXED: Final = {
    "bool": 1,
    "int8": 1,
    "int16": 2,
    "uint16": 2,
    "int32": 4,
    "int64": 8,
    "float64": 8,
    "uuid": 16,
    "error_code": 2,
    "timedelta_i32": 4,
    "timedelta_i64": 8,
    "datetime_i64": 8,
}
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


class Malformed(Exception):
    pass


@dataclasses.dataclass(frozen=True, slots=True)
class _Field:
    kafka_type: str | None
    nested: type | None
    is_array: bool
    tagged: bool
    nullable: bool
    name: str


@cache
def _fields(cls: type) -> tuple[_Field, ...]:
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        inner, is_array, optional = _unwrap(hints[f.name])
        nested: type | None = inner if isinstance(inner, type) and dataclasses.is_dataclass(inner) else None
        out.append(
            _Field(f.metadata.get("kafka_type"), nested, is_array, "tag" in f.metadata, optional, f.name)
        )
    return tuple(f for f in out if not f.tagged)


class _Cursor:
    __slots__ = ("buf", "end", "pos")

    def __init__(self, buf: bytes | memoryview, pos: int) -> None:
        self.buf = buf
        self.pos = pos
        self.end = len(buf)

    def need(self, n: int) -> None:
        if n < 0 or self.pos + n > self.end:
            raise Malformed(
                f"a field of {n} bytes at byte {self.pos} runs past the end of the {self.end}-byte frame"
            )

    def skip(self, n: int) -> None:
        self.need(n)
        self.pos += n

    def uvarint(self) -> int:
        shift = value = 0
        while True:
            self.need(1)
            b = self.buf[self.pos]
            self.pos += 1
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7
            if shift > 35:
                raise Malformed(f"varint too long at byte {self.pos}")

    def i16(self) -> int:
        self.need(2)
        (v,) = _I16.unpack_from(self.buf, self.pos)
        self.pos += 2
        return int(v)

    def i32(self) -> int:
        self.need(4)
        (v,) = _I32.unpack_from(self.buf, self.pos)
        self.pos += 4
        return int(v)

    def count(self, flexible: bool) -> int:
        """An array's element count (-1 for null); each element takes at least one byte."""
        n = self.uvarint() - 1 if flexible else self.i32()
        if n > self.end - self.pos:
            raise Malformed(
                f"array of {n} elements at byte {self.pos} cannot fit in the {self.end - self.pos} bytes left"
            )
        return n


def _value(c: _Cursor, f: _Field, flexible: bool, legacy_string: bool = False, element: bool = False) -> None:
    kafka_type = f.kafka_type or ""
    size = _FIXED.get(kafka_type)
    if size is not None:
        c.skip(size)
        return
    if kafka_type == "string":
        n = c.i16() if (legacy_string or not flexible) else c.uvarint() - 1
    elif kafka_type in ("bytes", "records"):
        n = c.uvarint() - 1 if flexible else c.i32()
    else:
        raise Malformed(f"unknown field type {kafka_type}")
    if n < 0 and not (f.nullable or element):  # an element's nullability is not in the annotation
        _null(c, f)
    c.skip(max(n, 0))


def _null(c: _Cursor, f: _Field) -> None:
    # Kafka refuses these too; handlers rely on the schema's non-null fields being present.
    raise Malformed(f"non-nullable field {f.name} was serialized as null (before byte {c.pos})")


def _entity(c: _Cursor, cls: type, header: bool = False) -> None:
    flexible = bool(cls.__flexible__)  # type: ignore[attr-defined]
    for f in _fields(cls):
        if f.is_array:
            n = c.count(flexible)
            if n < 0 and not f.nullable:
                _null(c, f)
            for _ in range(max(n, 0)):
                if f.nested is not None:
                    _entity(c, f.nested)
                else:
                    _value(c, f, flexible, element=True)
        elif f.nested is not None:
            _entity(c, f.nested)
        else:
            # RequestHeader.client_id is a legacy string even in flexible headers.
            _value(c, f, flexible, legacy_string=header)
    if flexible:
        for _ in range(c.uvarint()):
            c.uvarint()  # tag
            c.skip(c.uvarint())


def check_layout(frame: bytes | memoryview, cls: type) -> None:
    """Raise ``Malformed`` unless every length in ``frame`` (header and body) fits."""
    c = _Cursor(frame, 0)
    _entity(c, cls.__header_schema__, header=True)  # type: ignore[attr-defined]
    _entity(c, cls)
