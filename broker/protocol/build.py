"""Build a kio entity of any version from plain data.

Handlers describe a response once, as dicts keyed by Kafka's field names, and
``build`` turns that into the dataclass of the version the client asked for:
fields the version lacks are ignored, fields the handler left out take the
schema default (or the type's zero value), and millisecond integers become the
``timedelta``/``datetime`` values kio writes. A plan per entity class is made
once and cached, so the per-response cost is a flat loop.

A name that no version of a response entity has is a handler's mistake (a misspelt
field would silently take its default). With ``SLUICEWAY_STRICT_ENTITIES=1`` in the
environment, which the test suite sets, ``build`` raises on one; in production it is
ignored like any field the asked version lacks. (Requests a test builds may name the
fields of every version at once, so they are not held to this.)
"""

from __future__ import annotations

import dataclasses
import datetime
import importlib
import os
import pkgutil
import re
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from kio.schema.errors import ErrorCode

T = TypeVar("T")

_UTC = datetime.UTC
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=_UTC)


def _ms_to_timedelta(value: Any) -> Any:
    return datetime.timedelta(milliseconds=value) if isinstance(value, int) else value


def _ms_to_datetime(value: Any) -> Any:
    if isinstance(value, int):
        return None if value < 0 else _EPOCH + datetime.timedelta(milliseconds=value)
    return value


def _to_error_code(value: Any) -> Any:
    return value if isinstance(value, ErrorCode) else ErrorCode(int(value))


_CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "timedelta_i32": _ms_to_timedelta,
    "timedelta_i64": _ms_to_timedelta,
    "datetime_i64": _ms_to_datetime,
    "error_code": _to_error_code,
}

_ZERO: dict[str, Any] = {
    "bool": False,
    "int8": 0,
    "int16": 0,
    "int32": 0,
    "int64": 0,
    "uint16": 0,
    "float64": 0.0,
    "string": "",
    "bytes": b"",
    "records": None,
    "uuid": None,
    "error_code": ErrorCode.none,
    "timedelta_i32": datetime.timedelta(0),
    "timedelta_i64": datetime.timedelta(0),
    "datetime_i64": None,
}


@dataclasses.dataclass(frozen=True, slots=True)
class _FieldPlan:
    name: str
    convert: Callable[[Any], Any] | None
    nested: type | None  # entity class of a nested field
    is_array: bool
    default: Any  # dataclasses.MISSING when the builder must synthesise a value
    optional: bool


_PLANS: dict[type, tuple[_FieldPlan, ...]] = {}
_STRICT = os.environ.get("SLUICEWAY_STRICT_ENTITIES") == "1"
_KNOWN: dict[type, frozenset[str]] = {}
_OWN: dict[type, frozenset[str]] = {}
_VERSION = re.compile(r"v\d+")


def _own_names(cls: type) -> frozenset[str]:
    names = _OWN.get(cls)
    if names is None:
        names = _OWN[cls] = frozenset(f.name for f in dataclasses.fields(cls))
    return names


def known_names(cls: type) -> frozenset[str]:
    """The field names of ``cls`` in any version of its API (kio keeps a module per
    version: ``kio.schema.<api>.v<N>.<request|response>``)."""
    names = _KNOWN.get(cls)
    if names is not None:
        return names
    found = {f.name for f in dataclasses.fields(cls)}
    parts = cls.__module__.split(".")
    if len(parts) >= 3 and _VERSION.fullmatch(parts[-2]):
        package = importlib.import_module(".".join(parts[:-2]))
        for sibling in pkgutil.iter_modules(package.__path__):
            if not _VERSION.fullmatch(sibling.name):
                continue
            module = importlib.import_module(f"{package.__name__}.{sibling.name}.{parts[-1]}")
            other = getattr(module, cls.__name__, None)
            if other is not None and dataclasses.is_dataclass(other):
                found.update(f.name for f in dataclasses.fields(other))
    names = _KNOWN[cls] = frozenset(found)
    return names


def _unwrap(tp: Any) -> tuple[Any, bool, bool]:
    """(inner type, is_array, optional) of a field annotation."""
    optional = False
    is_array = False
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        optional = len(args) != len(typing.get_args(tp))
        tp = args[0]
        origin = typing.get_origin(tp)
    if origin is tuple:
        is_array = True
        tp = typing.get_args(tp)[0]
        origin = typing.get_origin(tp)
        if origin in (typing.Union, types.UnionType):
            tp = next(a for a in typing.get_args(tp) if a is not type(None))
    return tp, is_array, optional


def _plan(cls: type) -> tuple[_FieldPlan, ...]:
    plan = _PLANS.get(cls)
    if plan is not None:
        return plan
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        inner, is_array, optional = _unwrap(hints[f.name])
        kafka_type = f.metadata.get("kafka_type")
        nested: type | None = inner if isinstance(inner, type) and dataclasses.is_dataclass(inner) else None
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        elif is_array:
            default = None if optional and nested is None and kafka_type is None else ()
        elif optional:
            default = None
        elif nested is not None:
            default = dataclasses.MISSING
        else:
            default = _ZERO.get(kafka_type or "", dataclasses.MISSING)
        convert = _CONVERTERS.get(kafka_type or "")
        out.append(_FieldPlan(f.name, convert, nested, is_array, default, optional))
    plan = tuple(out)
    _PLANS[cls] = plan
    return plan


def build(cls: type[T], data: Mapping[str, Any] | None = None, /, **fields: Any) -> T:
    """Make a ``cls`` instance from ``data`` (and/or keyword fields).

    Nested entities and arrays of them may be given as mappings; entity instances
    of the right class pass through untouched.
    """
    values: Mapping[str, Any] = {**data, **fields} if data is not None and fields else (data or fields)
    # The class's own fields first: ``known_names`` imports every version of the API, most
    # of a test broker's start-up CPU when done for each response it builds.
    if _STRICT and cls.__module__.endswith(".response") and not values.keys() <= _own_names(cls):
        unknown = values.keys() - known_names(cls)
        if unknown:
            raise TypeError(f"{cls.__module__}.{cls.__qualname__} has no field {', '.join(sorted(unknown))}")
    kwargs: dict[str, Any] = {}
    for fp in _plan(cls):
        if fp.name in values:
            value = values[fp.name]
            if fp.nested is not None and value is not None:
                if fp.is_array:
                    value = tuple(_nested(fp.nested, item) for item in value)
                else:
                    value = _nested(fp.nested, value)
            elif fp.is_array and value is not None:
                value = tuple(fp.convert(v) for v in value) if fp.convert else tuple(value)
            elif fp.convert is not None and value is not None:
                value = fp.convert(value)
            kwargs[fp.name] = value
        elif fp.default is dataclasses.MISSING:
            if fp.nested is None:
                raise TypeError(f"{cls.__qualname__}.{fp.name} needs a value")
            kwargs[fp.name] = build(fp.nested, {})
        else:
            kwargs[fp.name] = fp.default
    return cls(**kwargs)


def _nested(cls: type, item: Any) -> Any:
    if isinstance(item, cls):
        return item
    return build(cls, item)
