"""Field paths (KIP-821): ``field.syntax.version=V1`` names one top-level field;
``V2`` walks nested structs and maps with dots, and backticks quote a name that
contains dots.

V2 rules, as Kafka's ``SingleFieldPath`` reads them:

- ``a.b.c`` is three steps; a trailing dot adds an empty last step (``a.`` → ``a``, ``""``).
- A step that starts with a backtick runs to the next backtick followed by a dot (or
  ending the path): ```a.b`.c`` → ``a.b``, ``c``. A backtick inside it that is not
  followed by a dot is part of the name; ``\\``` before a backtick-dot keeps the
  backtick in the name (the backslash is dropped).
- A backtick that is never closed is an error naming its position.
"""

from __future__ import annotations

from typing import Any, Literal

from connect.api import DataException, Schema, Struct, Type

SyntaxVersion = Literal["V1", "V2"]

_NESTED_PURPOSE = "nested field access"


class FieldPathError(ValueError):
    """A path that cannot be parsed (a config error)."""


def parse_path(path: str, version: SyntaxVersion = "V1") -> tuple[str, ...]:
    """The steps of ``path`` under ``version``; FieldPathError when V2 quoting is broken."""
    if version == "V1":
        return (path,)
    steps: list[str] = []
    i, n = 0, len(path)
    while i < n:
        if path[i] != "`":
            dot = path.find(".", i)
            if dot < 0:
                steps.append(path[i:])
                break
            steps.append(path[i:dot])
            i = dot + 1
            continue
        opening = i
        start = search = i + 1  # the name's pending text starts at ``start``
        buffer = ""
        while True:
            j = path.find("`", search)
            if j < 0:
                raise _incomplete(path, opening)
            escaped = path[j - 1] == "\\"
            if j == n - 1:
                if escaped:
                    raise _incomplete(path, opening)
                steps.append(buffer + path[start:j])
                i = n
                break
            if path[j + 1] != ".":
                search = j + 1  # a backtick inside the name
                continue
            if escaped:
                buffer += path[start : j - 1] + "`"  # \` before a dot: a backtick in the name
                start = search = j + 1
                continue
            steps.append(buffer + path[start:j])
            i = j + 2
            break
    if path.endswith("."):
        steps.append("")
    return tuple(steps)


def _incomplete(path: str, position: int) -> FieldPathError:
    return FieldPathError(
        f"Incomplete backtick pair in path: [{path}], consider adding a backslash before "
        f"backtick at position {position} to escape it"
    )


def field_schema(schema: Schema, steps: tuple[str, ...]) -> Schema | None:
    """The schema at ``steps`` inside the STRUCT ``schema``, or None when a step is missing."""
    current = schema
    for step in steps:
        field = current.field(step)  # raises DataException on a non-struct schema
        if field is None:
            return None
        current = field.schema
    return current


def struct_value(value: Struct | None, steps: tuple[str, ...], use_defaults: bool = True) -> Any:
    """The value at ``steps`` in a struct; None when an intermediate struct is null."""
    current: Any = value
    last = len(steps) - 1
    for i, step in enumerate(steps):
        if current is None:
            return None
        if not isinstance(current, Struct):
            raise DataException(
                f"Only Struct objects supported for [{_NESTED_PURPOSE}], found: {type(current).__name__}"
            )
        current = current.get(step) if (use_defaults or i < last) else current.get_without_default(step)
    return current


def map_value(value: dict[Any, Any] | None, steps: tuple[str, ...]) -> Any:
    """The value at ``steps`` in nested maps; None when a key is missing or a map is null."""
    current: Any = value
    for step in steps:
        if current is None:
            return None
        if not isinstance(current, dict):
            raise DataException(
                "Only Map objects supported in absence of schema for "
                f"[{_NESTED_PURPOSE}], found: {type(current).__name__}"
            )
        current = current.get(step)
    return current


def is_struct(schema: Schema | None) -> bool:
    return schema is not None and schema.type is Type.STRUCT
