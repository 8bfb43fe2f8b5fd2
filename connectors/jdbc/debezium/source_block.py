"""The fields every Debezium connector's source block starts with (Debezium's
``AbstractSourceInfoStructMaker``), in Debezium's order::

    version, connector, name, ts_ms, snapshot, db, sequence, ts_us, ts_ns

after which each connector adds where in its database's log the change was read. The
``snapshot`` field is an ``io.debezium.data.Enum`` whose allowed values differ by connector.
"""

from __future__ import annotations

from connect.api import Schema, SchemaBuilder

__all__ = ["snapshot_enum_schema", "source_block_builder"]


def snapshot_enum_schema(allowed: str) -> Schema:
    """The optional ``snapshot`` field (default ``"false"``); ``allowed`` is the comma list."""
    return (
        SchemaBuilder.string()
        .name("io.debezium.data.Enum")
        .version(1)
        .parameter("allowed", allowed)
        .default_value("false")
        .optional()
        .build()
    )


def source_block_builder(name: str, snapshot_schema: Schema) -> SchemaBuilder:
    """A struct builder named ``name`` (``io.debezium.connector.<connector>.Source``) holding the
    common fields; the caller adds its own and builds."""
    return (
        SchemaBuilder.struct()
        .name(name)
        .field("version", Schema.STRING_SCHEMA)
        .field("connector", Schema.STRING_SCHEMA)
        .field("name", Schema.STRING_SCHEMA)
        .field("ts_ms", Schema.INT64_SCHEMA)
        .field("snapshot", snapshot_schema)
        .field("db", Schema.STRING_SCHEMA)
        .field("sequence", Schema.OPTIONAL_STRING_SCHEMA)
        .field("ts_us", Schema.OPTIONAL_INT64_SCHEMA)
        .field("ts_ns", Schema.OPTIONAL_INT64_SCHEMA)
    )
