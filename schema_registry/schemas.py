"""A schema of each type parsed, and its canonical text: what the registry stores and
compares, so that the same schema written with other whitespace gets the same id.

AVRO is parsed by the Apache ``avro`` package, named types of referenced schemas first
(Confluent's schema references); the canonical text is the parsed schema's JSON with no
whitespace (Confluent's ``canonicalString``), and with ``normalize`` its object keys
sorted too, so key order does not matter either. JSON Schema and Protobuf are not
registered yet: ``/schemas/types`` lists what is.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import avro.errors
import avro.name
import avro.schema

__all__ = ["SUPPORTED_TYPES", "ParsedSchema", "SchemaProblem", "parse"]

SUPPORTED_TYPES: tuple[str, ...] = ("AVRO",)


class SchemaProblem(ValueError):
    """A schema that does not parse; the message says why (the REST API's 42201)."""


@dataclass(frozen=True, slots=True)
class ParsedSchema:
    schema_type: str
    canonical: str
    avro: avro.schema.Schema


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


def parse(
    schema_type: str, text: str, references: Sequence[str] = (), normalize: bool = False
) -> ParsedSchema:
    """``text`` parsed as a schema of ``schema_type``, the schemas it refers to
    (``references``, their texts in dependency order) known by name."""
    if schema_type not in SUPPORTED_TYPES:
        raise SchemaProblem(
            f"of type {schema_type}: this registry registers {', '.join(SUPPORTED_TYPES)} schemas"
        )
    names = avro.name.Names()
    try:
        for referenced in references:
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
    return ParsedSchema(schema_type, json.dumps(node, separators=(",", ":")), parsed)
