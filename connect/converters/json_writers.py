"""Writers of Connect values as JSON values, built once per schema by ``JsonConverter``:
arrays, maps (as objects or as pairs) and structs, a struct of exactly its schema in one
generated dict display, and a StructColumn's rows in one generated call each."""

from __future__ import annotations

import datetime
import functools
from collections.abc import Callable, Sequence
from types import CodeType
from typing import Any

import orjson

from connect.api.data import (
    Date,
    Decimal,
    Schema,
    Struct,
    Time,
    Timestamp,
    Type,
    _struct_schema_matches,
)
from connect.converters.json_errors import JsonProblem, convert_items

Writer = Callable[[Any], Any]

DATETIME = datetime.datetime
LOGICAL_WRITER_NAMES = (Decimal.LOGICAL_NAME, Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME)
UTC = datetime.UTC
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def array_writer(item: Writer) -> Writer:
    def write_array(v: Any) -> Any:
        if not isinstance(v, (list, tuple)):
            raise JsonProblem(f"expected list for ARRAY, got {type(v).__name__}")
        return convert_items(item, v)

    return write_array


def map_writer(key: Writer, value: Writer, object_mode: bool) -> Writer:
    def write_map(v: Any) -> Any:
        if not isinstance(v, dict):
            raise JsonProblem(f"expected dict for MAP, got {type(v).__name__}")
        entries: Any = {} if object_mode else []
        for k, x in v.items():
            try:
                jk = key(k)
            except JsonProblem as e:
                e.segments.append(f"<key {k!r}>")
                raise
            try:
                jx = value(x)
            except JsonProblem as e:
                e.segments.append(f"[{k!r}]")
                raise
            if object_mode:
                entries["null" if jk is None else jk] = jx
            else:
                entries.append([jk, jx])
        return entries

    return write_map


def struct_writer(schema: Schema, fields: list[tuple[str, Writer]]) -> Writer:
    # Per field: the value types written as they are (a str or bool field holding a str or
    # bool; an int field holding an int in range), so most fields cost no writer call.
    plan = []
    for (name, write), f in zip(fields, schema.fields, strict=True):
        fs = f.schema
        passthrough = fs.plain_type if fs.plain_type in (str, bool) else None
        plan.append((name, write, passthrough, fs.int_range))

    def write_struct_checked(v: Any) -> Any:
        if not isinstance(v, Struct):
            raise JsonProblem(f"expected Struct for STRUCT, got {type(v).__name__}")
        if v.schema is not schema and not _struct_schema_matches(schema, v.schema):
            raise JsonProblem(f"Mismatching schema: expected {schema!r}, got {v.schema!r}")
        out = {}
        name = ""
        try:
            for (name, write, passthrough, bounds), x in zip(plan, v._values, strict=True):
                t = type(x)
                if t is passthrough or (bounds is not None and t is int and bounds[0] <= x <= bounds[1]):
                    out[name] = x
                else:
                    out[name] = write(x)
        except JsonProblem as e:
            e.segments.append("." + name)
            raise
        return out

    return fast_struct_writer(schema, plan, write_struct_checked)


@functools.lru_cache(maxsize=1024)
def _compiled(source: str) -> CodeType:
    """``source`` compiled once: generated writers differ in their namespaces far more often
    than in their code (a CDC poll's envelope has new constants and a nested struct's
    writer made again each time; compiling cost ~0.2 us a change in ``benchmarks/jdbc_source.py``)."""
    return compile(source, "<string>", "exec")


@functools.lru_cache(maxsize=256)
def row_writer(
    names: tuple[str, ...],
    constants: tuple[bytes | None, ...] | None = None,
    raw: tuple[bool, ...] | None = None,
) -> Callable[..., bytes]:
    """``(x0, x1, ...) -> orjson.dumps({names[0]: x0, ...})`` as one generated dict display,
    mapped over a StructColumn's field columns: half the cost of ``dict(zip(names, row))``
    per row (``benchmarks/transforms.py``). Names are values in the namespace, never code;
    ``tests/connect/test_struct_columns.py`` holds it to ``from_connect_data``.

    ``constants[i]``, when not None, is field i's JSON, the same in every row (InsertField's
    topic and static fields): the row is then the bytes around the other fields joined to
    their ``dumps``, and takes only those (half the cost of the dict display for one field
    of three, ``benchmarks/transforms.py``).

    ``raw[i]``, when true, says field i's values are JSON already (a nested struct's rows,
    written column-wise): they are joined as they are, with no ``dumps`` (a CDC envelope's
    ``after`` and ``source``, ``benchmarks/jdbc_source.py``)."""
    namespace: dict[str, Any] = {"_dumps": orjson.dumps}
    if constants is None:
        constants = (None,) * len(names)
    if all(c is None for c in constants) and not (raw and any(raw)):
        params = ", ".join(f"x{i}" for i in range(len(names)))
        items = ", ".join(f"k{i}: x{i}" for i in range(len(names)))
        namespace.update({f"k{i}": name for i, name in enumerate(names)})
        exec(_compiled(f"def row({params}):\n    return _dumps({{{items}}})\n"), namespace)
    else:
        # orjson writes a dict as {"k":v,...} with no spaces: the same bytes in pieces.
        pieces: list[str] = []  # code: names of byte segments and dumps calls
        segment, args = b"{", []
        for i, (name, constant) in enumerate(zip(names, constants, strict=True)):
            segment += (b"," if i else b"") + orjson.dumps(name) + b":"
            if constant is not None:
                segment += constant
                continue
            namespace[f"s{len(pieces)}"] = segment
            pieces += [f"s{len(pieces)}", f"x{i}" if raw and raw[i] else f"_dumps(x{i})"]
            args.append(f"x{i}")
            segment = b""
        namespace[f"s{len(pieces)}"] = segment + b"}"
        pieces.append(f"s{len(pieces)}")
        exec(_compiled(f"def row({', '.join(args)}):\n    return {' + '.join(pieces)}\n"), namespace)
    row: Callable[..., bytes] = namespace["row"]
    return row


def fast_struct_writer(
    schema: Schema,
    plan: Sequence[tuple[str, Writer, type | None, tuple[int, int] | None]],
    checked: Writer,
) -> Writer:
    """``checked`` for a Struct of exactly ``schema``, as one generated dict display (no loop
    or call per field whose value is written as it is). Whatever goes wrong runs ``checked``
    again, which says where (writers are pure). Paid for by ``benchmarks/jdbc_source.py``
    (a struct per row); ``tests/connect/test_struct_columns.py`` holds it to ``checked``."""
    namespace: dict[str, Any] = {
        "_Struct": Struct,
        "_schema": schema,
        "_checked": checked,
        "_Fragment": orjson.Fragment,
        "_repr": repr,
        "_datetime": DATETIME,
        "UTC": UTC,
        "EPOCH": EPOCH,
    }
    items = []
    for i, ((name, write, passthrough, bounds), f) in enumerate(zip(plan, schema.fields, strict=True)):
        namespace[f"n{i}"], namespace[f"w{i}"], x = name, write, f"x{i}"
        fs = f.schema
        if fs.name == Timestamp.LOGICAL_NAME:
            # write_timestamp's common case, inline
            items.append(
                f"n{i}: ((d := {x} - EPOCH).days * 86400 + d.seconds) * 1000 + d.microseconds // 1000 "
                f"if type({x}) is _datetime and {x}.tzinfo is UTC else w{i}({x})"
            )
            continue
        if fs.type is Type.FLOAT64 and fs.name not in LOGICAL_WRITER_NAMES:
            # write_float's common case (format_double's plain range), inline
            items.append(
                f"n{i}: _Fragment(_repr({x})) if type({x}) is float and "
                f"(1e-3 <= {x} < 1e7 or -1e7 < {x} <= -1e-3) else w{i}({x})"
            )
            continue
        kept = []
        if passthrough is not None:
            namespace[f"p{i}"] = passthrough
            kept.append(f"type({x}) is p{i}")
        if bounds is not None:
            kept.append(f"(type({x}) is int and {bounds[0]} <= {x} <= {bounds[1]})")
        expression = f"{x} if {' or '.join(kept)} else w{i}({x})" if kept else f"w{i}({x})"
        items.append(f"n{i}: {expression}")
    unpack = "".join(f"x{i}, " for i in range(len(plan)))
    source = (
        "def write_struct(v):\n"
        "    if type(v) is _Struct and v._schema is _schema:\n"
        "        try:\n"
        f"            ({unpack}) = v._values\n"
        f"            return {{{', '.join(items)}}}\n"
        "        except Exception:\n"
        "            pass\n"
        "    return _checked(v)\n"
    )
    exec(_compiled(source), namespace)  # generated from field positions only: names are values
    write_struct: Writer = namespace["write_struct"]
    return write_struct
