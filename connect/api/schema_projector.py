"""Kafka's ``SchemaProjector``: a value written with one schema, re-expressed in another
schema of the same shape, as storage sinks do when ``schema.compatibility`` lets records
of an older or newer schema version into a file opened with another version. Pure.

The rules are Kafka's: the two schemas must have the same type, or a numeric type that
widens (int8 -> int16 -> int32 -> int64 -> float32 -> float64), the same name and the same
parameters (so a Decimal of another scale does not project). A struct takes each of the
target's fields from the source's field of that name, projected; a field the source lacks
is left unset when optional, set to its default when it has one, and is an error
otherwise. A null value projects to null, or to the target's default when the target is
required and the source optional (without a default, that is an error). Arrays and maps
project element by element.
"""

from __future__ import annotations

import struct
from typing import Any

from connect.api.data import Schema, Struct, Type
from connect.api.errors import SchemaProjectorException

__all__ = ["SchemaProjector", "project"]

_WIDENING = (Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.FLOAT32, Type.FLOAT64)
_RANK = {t: i for i, t in enumerate(_WIDENING)}
_FLOAT32 = struct.Struct("<f")


def _promotable(source: Type, target: Type) -> bool:
    a, b = _RANK.get(source), _RANK.get(target)
    return a is not None and b is not None and a <= b


def _check(source: Schema, target: Schema) -> None:
    if source.type is not target.type and not _promotable(source.type, target.type):
        raise SchemaProjectorException(
            f"Schema type mismatch. source type: {source.type.name} and target type: {target.type.name}"
        )
    if source.name != target.name:
        raise SchemaProjectorException(
            f"Schema name mismatch. source name: {source.name} and target name: {target.name}"
        )
    if dict(source.parameters or {}) != dict(target.parameters or {}):
        raise SchemaProjectorException(
            f"Schema parameters not equal. source parameters: {dict(source.parameters or {})} and "
            f"target parameters: {dict(target.parameters or {})}"
        )


def project(source: Schema, value: Any, target: Schema) -> Any:
    """``value`` (of schema ``source``) as a value of schema ``target``; a
    ``SchemaProjectorException`` says why when it cannot be."""
    _check(source, target)
    if value is None:
        if source.optional and not target.optional:
            if target.default_value is None:
                raise SchemaProjectorException(
                    "Writer schema is optional, however, target schema does not provide a default value."
                )
            return target.default_value
        return None
    if source.optional and not target.optional and target.default_value is None:
        raise SchemaProjectorException(
            "Writer schema is optional, however, target schema does not provide a default value."
        )
    t = target.type
    if t is Type.STRUCT:
        return _struct(source, value, target)
    if t is Type.ARRAY:
        assert source.value_schema is not None and target.value_schema is not None
        return [project(source.value_schema, v, target.value_schema) for v in value]
    if t is Type.MAP:
        assert source.key_schema is not None and target.key_schema is not None
        assert source.value_schema is not None and target.value_schema is not None
        return {
            project(source.key_schema, k, target.key_schema): project(
                source.value_schema, v, target.value_schema
            )
            for k, v in value.items()
        }
    if source.type is not t and isinstance(value, int | float) and not isinstance(value, bool):
        if t is Type.FLOAT64:
            return float(value)
        if t is Type.FLOAT32:
            # Java's floatValue(): the nearest single-precision value.
            return float(_FLOAT32.unpack(_FLOAT32.pack(float(value)))[0])
        return int(value)
    return value


def _struct(source: Schema, value: Struct, target: Schema) -> Struct:
    out = Struct(target)
    for field in target.fields:
        theirs = source.field(field.name)
        if theirs is not None:
            try:
                out.put(field.name, project(theirs.schema, value.get(field.name), field.schema))
            except SchemaProjectorException as exc:
                raise SchemaProjectorException(f"Error projecting {field.name}: {exc}") from None
        elif field.schema.optional:
            continue
        elif field.schema.default_value is not None:
            out.put(field.name, field.schema.default_value)
        else:
            raise SchemaProjectorException(
                f"Required field `{field.name}` is missing from source schema: {source}"
            )
    return out


class SchemaProjector:
    """Kafka's ``SchemaProjector.project(source, value, target)``, by its Java name."""

    project = staticmethod(project)
