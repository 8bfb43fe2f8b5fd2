"""What the registry needs of a schema type (``SchemaKind``), and the error a schema
that does not parse raises. Each type (AVRO, JSON, PROTOBUF) is one module offering a
``SchemaKind``; ``schemas.KINDS`` names them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["SchemaKind", "SchemaProblem"]


class SchemaProblem(ValueError):
    """A schema that does not parse; the message says why (the REST API's 42201)."""


@dataclass(frozen=True, slots=True)
class SchemaKind:
    # (text, [(reference name, referenced text)] each after those it refers to itself,
    # normalize) -> (canonical text, parsed form); raises SchemaProblem
    parse: Callable[[str, Sequence[tuple[str, str]], bool], tuple[str, Any]]
    # (reader's parsed form, writer's parsed form) -> why the reader cannot read data
    # written with the writer, each problem naming the rule broken and where; empty when
    # it can. BACKWARD is reads(new, old), FORWARD reads(old, new).
    reads: Callable[[Any, Any], list[str]]
