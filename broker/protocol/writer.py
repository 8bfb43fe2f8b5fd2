"""Encoders for kio's entities, built once per class, that write the bytes kio's writer does.

kio's generic writer calls a function per field, checks every length through a phantom
type, and opens a buffer for each flexible entity's tagged fields even when there are none:
a Fetch answer took 48 us to encode, a Produce answer 27 us, timed in process on answers
recorded from ``benchmarks/eos_source.py`` (docs/benchmarks.md, "Broker throughput"). This
packs each run of fixed-size fields with one ``struct`` call; writes compact strings, bytes
and records, arrays of entities and flexible arrays of fixed-size values directly; and an
entity's tagged-field section as its single zero byte whenever every tagged field holds its
default. Everything else (legacy strings and bytes, UUIDs, nullable structs and dates,
other primitive arrays, the request header, an entity with a tagged field set) goes through
kio's own writers, which stay the definition of the encoding: ``tests/broker/test_writer.py``
compares the bytes with kio's for every class.
"""

from __future__ import annotations

import datetime
import struct
from collections.abc import Callable, Sequence
from dataclasses import fields
from functools import cache
from operator import attrgetter
from typing import IO, Any, Final

from kio.serial import entity_writer as kio_entity_writer
from kio.serial._implicit_defaults import get_tagged_field_default
from kio.serial._introspect import (
    EntityField,
    EntityTupleField,
    PrimitiveField,
    PrimitiveTupleField,
    classify_field,
    get_field_tag,
    get_schema_field_type,
    is_optional,
)
from kio.serial._serialize import get_field_writer

# Writes one value (or, at the top, one entity) to the buffer.
Step = Callable[[IO[bytes], Any], None]


def _milliseconds(value: datetime.timedelta) -> int:
    return round(value.total_seconds() * 1000)


def _epoch_milliseconds(value: datetime.datetime) -> int:
    return round(value.timestamp() * 1000)


# kio's fixed-size types: their struct code, and how kio turns the value into it.
_FIXED: Final[dict[str, tuple[str, Callable[[Any], int] | None]]] = {
    "int8": ("b", None),
    "int16": ("h", None),
    "int32": ("i", None),
    "int64": ("q", None),
    "uint8": ("B", None),
    "uint16": ("H", None),
    "uint32": ("I", None),
    "uint64": ("Q", None),
    "float64": ("d", None),
    "bool": ("?", None),
    "error_code": ("h", None),  # an IntEnum
    "timedelta_i32": ("i", _milliseconds),
    "timedelta_i64": ("q", _milliseconds),
    "datetime_i64": ("q", _epoch_milliseconds),
}
_SMALL: Final = tuple(bytes((n,)) for n in range(128))
_LEGACY_LENGTH: Final = struct.Struct(">i")


def uvarint(n: int) -> bytes:
    if n < 128:
        return _SMALL[n]
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


@cache
def entity_writer(cls: type) -> Step:
    """The encoder of ``cls`` (a kio entity class)."""
    flexible = bool(cls.__flexible__)  # type: ignore[attr-defined]
    steps: list[Step] = []
    run: list[tuple[str, str, Callable[[Any], int] | None]] = []
    tagged: list[tuple[str, Any]] = []
    is_request_header = cls.__name__ == "RequestHeader"
    for field in fields(cls):
        if get_field_tag(field) is not None:
            tagged.append((field.name, get_tagged_field_default(field)))
            continue
        kind = classify_field(field)
        optional = is_optional(field)
        if isinstance(kind, PrimitiveField) and not optional and not is_request_header:
            fixed = _FIXED.get(get_schema_field_type(field))
            if fixed is not None:
                run.append((field.name, *fixed))
                continue
        if run:
            steps.append(_fixed_run(run))
            run = []
        steps.append(_field_step(field, kind, flexible, optional, is_request_header))
    if run:
        steps.append(_fixed_run(run))
    return _entity_step(cls, tuple(steps), flexible, tuple(tagged))


def _entity_step(
    cls: type, steps: tuple[Step, ...], flexible: bool, tagged: tuple[tuple[str, Any], ...]
) -> Step:
    if tagged:
        kio_writer: Step = kio_entity_writer(cls)
        getter = attrgetter(*(name for name, _ in tagged))
        defaults = tuple(default for _, default in tagged)
        if len(tagged) == 1:
            only = defaults[0]

            def differs(entity: Any) -> bool:
                return bool(getter(entity) != only)

        else:

            def differs(entity: Any) -> bool:
                return bool(getter(entity) != defaults)

        def write_tagged(buf: IO[bytes], entity: Any) -> None:
            if differs(entity):
                kio_writer(buf, entity)  # a tagged field is set: kio writes its section
                return
            for step in steps:
                step(buf, entity)
            buf.write(b"\x00")

        return write_tagged
    if flexible:

        def write_flexible(buf: IO[bytes], entity: Any) -> None:
            for step in steps:
                step(buf, entity)
            buf.write(b"\x00")  # no tagged fields

        return write_flexible

    def write(buf: IO[bytes], entity: Any) -> None:
        for step in steps:
            step(buf, entity)

    return write


def _fixed_run(run: Sequence[tuple[str, str, Callable[[Any], int] | None]]) -> Step:
    """Consecutive fixed-size fields in one ``struct`` call."""
    packer = struct.Struct(">" + "".join(code for _, code, _ in run))
    pack = packer.pack
    getter = attrgetter(*(name for name, _, _ in run))
    converters = tuple(convert for _, _, convert in run)
    if any(c is not None for c in converters):

        def converted(buf: IO[bytes], entity: Any) -> None:
            values = getter(entity) if len(converters) > 1 else (getter(entity),)
            buf.write(pack(*[v if c is None else c(v) for v, c in zip(values, converters, strict=True)]))

        return converted
    if len(run) == 1:

        def one(buf: IO[bytes], entity: Any) -> None:
            buf.write(pack(getter(entity)))

        return one

    def several(buf: IO[bytes], entity: Any) -> None:
        buf.write(pack(*getter(entity)))

    return several


def _field_step(field: Any, kind: Any, flexible: bool, optional: bool, is_request_header: bool) -> Step:
    name = field.name
    compact = ("string", "bytes", "records")
    if (
        isinstance(kind, PrimitiveField)
        and flexible
        and not is_request_header
        and get_schema_field_type(field) in compact
    ):
        return _compact(name, optional)
    if isinstance(kind, EntityField) and not optional:
        nested = entity_writer(kind.type_)

        def entity(buf: IO[bytes], parent: Any) -> None:
            nested(buf, getattr(parent, name))

        return entity
    if isinstance(kind, EntityTupleField):
        return _array(name, entity_writer(kind.type_), flexible)
    if isinstance(kind, PrimitiveTupleField) and flexible:
        kafka_type = get_schema_field_type(field)
        if kafka_type in _FIXED and _FIXED[kafka_type][1] is None:
            item = struct.Struct(">" + _FIXED[kafka_type][0]).pack

            def write_item(buf: IO[bytes], value: Any) -> None:
                buf.write(item(value))

            return _array(name, write_item, flexible)
    # kio's own writer for the field (legacy strings and bytes, UUIDs, nullable structs...).
    write_field = get_field_writer(
        field, flexible=flexible, is_request_header=is_request_header, is_tag=False
    )

    def by_kio(buf: IO[bytes], entity: Any) -> None:
        write_field(buf, getattr(entity, name))

    return by_kio


def _compact(name: str, nullable: bool) -> Step:
    """A compact string, bytes or records field: its length plus one as a varint (0: null)."""

    def compact(buf: IO[bytes], entity: Any) -> None:
        value = getattr(entity, name)
        if value is None:
            if not nullable:
                raise TypeError("Unexpectedly received None value")
            buf.write(b"\x00")
            return
        if isinstance(value, str):
            value = value.encode()
        buf.write(uvarint(len(value) + 1))
        buf.write(value)

    return compact


def _array(name: str, item: Step, flexible: bool) -> Step:
    """An array field: its count (compact: plus one as a varint; legacy: int32; -1 or 0 for
    null), then its items."""

    def array(buf: IO[bytes], entity: Any) -> None:
        items = getattr(entity, name)
        if items is None:
            buf.write(b"\x00" if flexible else _LEGACY_LENGTH.pack(-1))
            return
        buf.write(uvarint(len(items) + 1) if flexible else _LEGACY_LENGTH.pack(len(items)))
        for value in items:
            item(buf, value)

    return array
