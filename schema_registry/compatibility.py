"""Compatibility levels and their rules: whether a new schema may follow the versions a
subject has (Confluent's ``CompatibilityChecker``). Pure.

- BACKWARD: the new schema reads data written with the latest version;
- FORWARD: the latest version reads data written with the new schema;
- FULL: both; the ``_TRANSITIVE`` forms hold the new schema to every live version, not
  just the latest; NONE checks nothing.

Whether one schema reads another's data is its type's rule (``schemas.KINDS``): Avro's
schema resolution for AVRO, Confluent's documented rules for JSON and PROTOBUF. A
refusal says which rule broke, where, and against which version.
"""

from __future__ import annotations

from collections.abc import Sequence

from schema_registry.schemas import KINDS, ParsedSchema

__all__ = ["DEFAULT_LEVEL", "LEVELS", "incompatibilities"]

LEVELS: tuple[str, ...] = (
    "NONE",
    "BACKWARD",
    "BACKWARD_TRANSITIVE",
    "FORWARD",
    "FORWARD_TRANSITIVE",
    "FULL",
    "FULL_TRANSITIVE",
)
DEFAULT_LEVEL = "BACKWARD"


def _reads(reader: ParsedSchema, writer: ParsedSchema) -> list[str]:
    """Why ``reader`` cannot read data written with ``writer`` (empty: it can)."""
    if reader.schema_type != writer.schema_type:
        return [f"TYPE_CHANGED: a {reader.schema_type} schema cannot follow a {writer.schema_type} one"]
    return KINDS[reader.schema_type].reads(reader.parsed, writer.parsed)


def incompatibilities(
    level: str, new: ParsedSchema, previous: Sequence[tuple[int, ParsedSchema]]
) -> list[str]:
    """Why ``new`` may not follow ``previous`` (the subject's live versions as (version,
    schema), oldest first) under ``level``; empty when it may."""
    level = level.upper()
    if level == "NONE" or not previous:
        return []
    against = previous if level.endswith("_TRANSITIVE") else previous[-1:]
    base = level.removesuffix("_TRANSITIVE")
    messages: list[str] = []
    for version, old in reversed(against):
        found: list[str] = []
        if base in ("BACKWARD", "FULL"):
            found += [
                f"the new schema cannot read data written with version {version}: {m}"
                for m in _reads(new, old)
            ]
        if base in ("FORWARD", "FULL"):
            found += [
                f"version {version} cannot read data written with the new schema: {m}"
                for m in _reads(old, new)
            ]
        if found:
            messages += [*found, f"{{oldSchemaVersion: {version}}}", f"{{compatibility: '{level}'}}"]
    return messages
