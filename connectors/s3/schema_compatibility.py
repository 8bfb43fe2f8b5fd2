"""``schema.compatibility``: what a storage sink does when a record's value schema is not
the one the partition's files are being written with (Confluent's
``StorageSchemaCompatibility``). Pure.

- NONE (the default): any other schema commits the open files; the record starts new ones.
- BACKWARD and FULL: a record of a newer schema version commits the open files and its
  schema becomes the current one; a record of an older version is projected to the
  current schema (``SchemaProjector``) and joins the open files.
- FORWARD: the other way round: an older version starts new files, a newer one is
  projected to the current (older) schema.

The levels other than NONE order schemas by version (a registry converter gives a read
schema its subject's version), so a schema without one is an error, as is switching
between records with a schema and records without.
"""

from __future__ import annotations

from typing import Literal

from connect.api import Schema, SchemaProjector, SchemaProjectorException, SinkRecord

__all__ = ["LEVELS", "SchemaCompatibility", "project", "should_change"]

SchemaCompatibility = Literal["NONE", "BACKWARD", "FORWARD", "FULL"]
LEVELS: tuple[SchemaCompatibility, ...] = ("NONE", "BACKWARD", "FORWARD", "FULL")


def should_change(level: SchemaCompatibility, schema: Schema | None, current: Schema | None) -> bool:
    """Whether a record of ``schema`` makes ``schema`` the current one (committing the open
    files) rather than being projected to ``current``."""
    if schema is None and current is None:
        return False
    if schema is None or current is None:
        raise SchemaProjectorException("Switch between schema-based and schema-less data is not supported")
    if level == "NONE":
        return schema is not current and schema != current
    if schema.version is None or current.version is None:
        raise SchemaProjectorException(
            f"Schema version required for {level} compatibility (schema {schema.name or schema.type.name} "
            f"has version {schema.version}, the current one {current.version}): use a converter that "
            "gives versions (AvroConverter and the other registry converters do) or schema.compatibility=NONE"
        )
    if level == "FORWARD":
        return schema.version < current.version
    return schema.version > current.version


def project(level: SchemaCompatibility, record: SinkRecord, current: Schema | None) -> SinkRecord:
    """``record`` with its value in the ``current`` schema (itself when it already is)."""
    schema = record.value_schema
    if level == "NONE" or current is None or schema is current or schema == current:
        return record
    assert schema is not None
    value = SchemaProjector.project(schema, record.value, current)
    return record.new_record(value_schema=current, value=value)
