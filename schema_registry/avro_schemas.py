"""AVRO schemas: parsed by the Apache ``avro`` package, the named types of referenced
schemas first (Confluent's schema references); the canonical text is the parsed
schema's JSON with no whitespace (Confluent's ``canonicalString``), and with
``normalize`` its object keys sorted too, so key order does not matter either.

Compatibility is Avro's schema resolution, decided by the package's reader/writer
checker.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import avro.errors
import avro.name
import avro.schema
from avro.compatibility import ReaderWriterCompatibilityChecker, SchemaCompatibilityType

from schema_registry.schema_kind import SchemaKind, SchemaProblem

__all__ = ["AVRO"]


def _sorted_keys(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _sorted_keys(node[k]) for k in sorted(node)}
    if isinstance(node, list):
        return [_sorted_keys(v) for v in node]
    return node


def _load(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        # A bare name ("string", "com.acme.Thing") is a valid Avro schema written unquoted
        # only as JSON; anything else is not JSON at all.
        raise SchemaProblem(f"{text!r}: not JSON") from None


def parse_avro(
    text: str, references: Sequence[tuple[str, str]], normalize: bool
) -> tuple[str, avro.schema.Schema]:
    """The canonical text and the parsed schema; referenced schemas are known by the
    names of the types they define (a reference's own name does not matter to Avro)."""
    names = avro.name.Names()
    try:
        for _name, referenced in references:
            avro.schema.make_avsc_object(_load(referenced), names)
        known = avro.name.Names()
        known.names = dict(names.names)
        parsed = avro.schema.make_avsc_object(_load(text), names)
    except (avro.errors.AvroException, TypeError, KeyError, AttributeError) as exc:
        raise SchemaProblem(f"{text}: {exc}") from None
    # Referenced named types stay references in the canonical text, as they were written.
    node = parsed.to_json(known)
    if normalize:
        node = _sorted_keys(node)
    return json.dumps(node, separators=(",", ":")), parsed


def avro_reads(reader: avro.schema.Schema, writer: avro.schema.Schema) -> list[str]:
    """Why ``reader`` cannot read data written with ``writer`` (empty: it can)."""
    checker = ReaderWriterCompatibilityChecker()  # type: ignore[no-untyped-call]
    result = checker.get_compatibility(reader, writer)
    if result.compatibility is SchemaCompatibilityType.compatible:
        return []
    kinds = sorted(i.name.upper() for i in result.incompatibilities)
    where = sorted(result.locations)
    detail = sorted(str(m) for m in result.messages)
    return [f"{', '.join(kinds)} at {', '.join(where)}: {'; '.join(detail)}"]


AVRO = SchemaKind(parse_avro, avro_reads)
