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
from collections.abc import Callable
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


# A walker reads one entity (or field) starting at ``pos`` and returns where it ends; it
# raises ``Malformed`` when something does not fit before ``end``.
Walk = Callable[[bytes | memoryview, int, int], int]
# Reads a length or count (-1 for null) at ``pos``: (it, the position after it).
Length = Callable[[bytes | memoryview, int, int], tuple[int, int]]


def check_layout(frame: bytes | memoryview, cls: type) -> None:
    """Raise ``Malformed`` unless every length in ``frame`` (header and body) fits."""
    end = len(frame)
    pos = _walker(cls.__header_schema__, True)(frame, 0, end)  # type: ignore[attr-defined]
    _walker(cls, False)(frame, pos, end)


@cache
def _walker(cls: type, header: bool) -> Walk:
    """The walk of one entity class, built once from its schema: consecutive fixed-size
    fields merged into one bounds check, every other field a closure chosen for its type.
    Interpreting the schema field by field on every frame cost 5-24 us a request, four to
    eight times kio's own decoding (timed in process on recorded frames: docs/benchmarks.md,
    "Broker throughput"); every request pays it, in ``benchmarks/eos_source.py`` and in
    ``tests/fuzz/test_broker_frames_million.py`` alike."""
    flexible = bool(cls.__flexible__)  # type: ignore[attr-defined]
    steps: list[Walk] = []
    fixed = 0
    for f in _fields(cls):
        size = None if f.is_array or f.nested is not None else _FIXED.get(f.kafka_type or "")
        if size is not None:
            fixed += size
            continue
        if fixed:
            steps.append(_skip(fixed))
            fixed = 0
        if f.is_array:
            steps.append(_array(f, flexible))
        elif f.nested is not None:
            steps.append(_walker(f.nested, False))
        else:
            # RequestHeader.client_id is a legacy string even in flexible headers.
            steps.append(_variable(f, flexible, legacy_string=header, nullable=f.nullable))
    if fixed:
        steps.append(_skip(fixed))
    if flexible:
        steps.append(_tagged_fields)
    return _chain(tuple(steps))


def _chain(steps: tuple[Walk, ...]) -> Walk:
    if len(steps) == 1:
        return steps[0]

    def walk(buf: bytes | memoryview, pos: int, end: int) -> int:
        for step in steps:
            pos = step(buf, pos, end)
        return pos

    return walk


def _past_end(n: int, pos: int, end: int) -> Malformed:
    return Malformed(f"a field of {n} bytes at byte {pos} runs past the end of the {end}-byte frame")


def _skip(size: int) -> Walk:
    def skip(buf: bytes | memoryview, pos: int, end: int) -> int:
        if pos + size > end:
            raise _past_end(size, pos, end)
        return pos + size

    return skip


def _uvarint(buf: bytes | memoryview, pos: int, end: int) -> tuple[int, int]:
    """(value, position after it) of the unsigned varint at ``pos``."""
    shift = value = 0
    while True:
        if pos >= end:
            raise _past_end(1, pos, end)
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
        if shift > 35:
            raise Malformed(f"varint too long at byte {pos}")


def _length(flexible: bool, legacy: bool, wide: bool) -> Length:
    """How a length (or -1 for null) is written: a compact uvarint (plus one) in flexible
    versions, else an int16 (strings) or int32 (bytes, records, array counts)."""
    if flexible and not legacy:

        def compact(buf: bytes | memoryview, pos: int, end: int) -> tuple[int, int]:
            n, pos = _uvarint(buf, pos, end)
            return n - 1, pos

        return compact
    fmt = _I32 if wide else _I16

    def fixed(buf: bytes | memoryview, pos: int, end: int) -> tuple[int, int]:
        if pos + fmt.size > end:
            raise _past_end(fmt.size, pos, end)
        return int(fmt.unpack_from(buf, pos)[0]), pos + fmt.size

    return fixed


def _variable(f: _Field, flexible: bool, legacy_string: bool, nullable: bool) -> Walk:
    """A string, bytes or records field (or array element)."""
    kafka_type = f.kafka_type or ""
    if kafka_type == "string":
        length = _length(flexible, legacy_string, wide=False)
    elif kafka_type in ("bytes", "records"):
        length = _length(flexible, False, wide=True)
    else:

        def unknown(buf: bytes | memoryview, pos: int, end: int) -> int:
            raise Malformed(f"unknown field type {kafka_type}")

        return unknown

    def variable(buf: bytes | memoryview, pos: int, end: int) -> int:
        n, pos = length(buf, pos, end)
        if n < 0:
            if not nullable:
                raise _null(f, pos)
            return pos
        if pos + n > end:
            raise _past_end(n, pos, end)
        return pos + n

    return variable


def _array(f: _Field, flexible: bool) -> Walk:
    count = _length(flexible, False, wide=True)
    size = None if f.nested is not None else _FIXED.get(f.kafka_type or "")
    # An element's nullability is not in the annotation: null elements pass.
    element = (
        _walker(f.nested, False) if f.nested is not None else _variable(f, flexible, False, nullable=True)
    )

    def array(buf: bytes | memoryview, pos: int, end: int) -> int:
        n, pos = count(buf, pos, end)
        # Each element takes at least one byte; kio reserves the count before reading.
        if n > end - pos:
            raise Malformed(f"array of {n} elements at byte {pos} cannot fit in the {end - pos} bytes left")
        if n < 0:
            if not f.nullable:
                raise _null(f, pos)
            return pos
        if size is not None:
            if pos + n * size > end:
                raise _past_end(n * size, pos, end)
            return pos + n * size
        for _ in range(n):
            pos = element(buf, pos, end)
        return pos

    return array


def _tagged_fields(buf: bytes | memoryview, pos: int, end: int) -> int:
    n, pos = _uvarint(buf, pos, end)
    for _ in range(n):
        _, pos = _uvarint(buf, pos, end)  # tag
        size, pos = _uvarint(buf, pos, end)
        if pos + size > end:
            raise _past_end(size, pos, end)
        pos += size
    return pos


def _null(f: _Field, pos: int) -> Malformed:
    # Kafka refuses these too; handlers rely on the schema's non-null fields being present.
    return Malformed(f"non-nullable field {f.name} was serialized as null (before byte {pos})")
