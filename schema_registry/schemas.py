"""A schema of each type parsed, and its canonical text: what the registry stores and
compares, so that the same schema written with other whitespace gets the same id.

Each schema type is a ``SchemaKind`` (``schema_kind``) in a module of its own: how its
text parses, with the schemas it references, into a canonical text and a parsed form,
and whether one parsed schema reads data written with another (the building block of
every compatibility level). ``KINDS`` names them; ``/schemas/types`` lists them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from schema_registry.avro_schemas import AVRO
from schema_registry.json_schemas import JSON
from schema_registry.protobuf_schemas import PROTOBUF
from schema_registry.schema_kind import SchemaKind, SchemaProblem

__all__ = ["KINDS", "ParsedSchema", "SchemaProblem", "parse", "supported_types"]

KINDS: dict[str, SchemaKind] = {"AVRO": AVRO, "JSON": JSON, "PROTOBUF": PROTOBUF}


@dataclass(frozen=True, slots=True)
class ParsedSchema:
    schema_type: str
    canonical: str
    parsed: Any  # the kind's own parsed form


def supported_types() -> list[str]:
    return list(KINDS)


def parse(
    schema_type: str, text: str, references: Sequence[tuple[str, str]] = (), normalize: bool = False
) -> ParsedSchema:
    """``text`` parsed as a schema of ``schema_type``, the schemas it refers to
    (``references``: (name, text), each after those it refers to itself) known."""
    kind = KINDS.get(schema_type)
    if kind is None:
        raise SchemaProblem(f"of type {schema_type}: this registry registers {', '.join(KINDS)} schemas")
    canonical, parsed = kind.parse(text, references, normalize)
    return ParsedSchema(schema_type, canonical, parsed)
