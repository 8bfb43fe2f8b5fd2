"""Schema change events (``include.schema.changes=true``) and Debezium's view of a table change.

Debezium's MySQL connector writes each DDL statement that touches a captured table to the
topic named ``<topic.prefix>``, keyed by ``io.debezium.connector.mysql.SchemaChangeKey``
``{databaseName}`` with an ``io.debezium.connector.mysql.SchemaChangeValue`` value
``{source, ts_ms, databaseName, schemaName, ddl, tableChanges}``. ``tableChanges`` holds one
``io.debezium.connector.schema.Change`` ``{type, id, table}`` per table the statement
created, altered or dropped, the table as Debezium's ``ConnectTableChangeSerializer`` describes
it. The schema history topic (``history``) stores the same description as JSON, so both are
built from ``column_fields`` / ``table_fields`` here.

Debezium's conventions kept here: ``id`` is the double-quoted ``"db"."table"``; ``typeName``
carries ``UNSIGNED``/``ZEROFILL`` (``INT UNSIGNED``); an AUTO_INCREMENT column is also
``generated``; text columns without their own character set report the table's;
``defaultValueExpression`` is the default's value rather than its SQL (a string literal
unquoted, no expression for ``DEFAULT NULL``, ``1970-01-01 00:00:00`` for
``CURRENT_TIMESTAMP``); a DROP carries no table.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from connect.api import Schema, SchemaBuilder, SourceRecord, Struct
from connectors.jdbc.mysql.schema import MySqlColumn, MySqlTable, TableChange

__all__ = [
    "CHANGE_SCHEMA",
    "KEY_SCHEMA",
    "change_fields",
    "column_fields",
    "debezium_default",
    "debezium_id",
    "schema_change_record",
    "table_fields",
    "value_schema",
]

_TEXTUAL: Final = frozenset({"CHAR", "VARCHAR", "TINYTEXT", "TEXT", "MEDIUMTEXT", "LONGTEXT", "ENUM", "SET"})
_NOW: Final = re.compile(r"(?i)^(current_timestamp|now|localtime|localtimestamp)(\s*\(\s*\d*\s*\))?$")
_STRING_LITERAL: Final = re.compile(r"(?is)^(_[a-z0-9]+\s*|n)?'(.*)'$|^\"(.*)\"$")

COLUMN_SCHEMA: Final = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.schema.Column")
    .version(1)
    .field("name", Schema.STRING_SCHEMA)
    .field("jdbcType", Schema.INT32_SCHEMA)
    .field("nativeType", Schema.OPTIONAL_INT32_SCHEMA)
    .field("typeName", Schema.STRING_SCHEMA)
    .field("typeExpression", Schema.OPTIONAL_STRING_SCHEMA)
    .field("charsetName", Schema.OPTIONAL_STRING_SCHEMA)
    .field("length", Schema.OPTIONAL_INT32_SCHEMA)
    .field("scale", Schema.OPTIONAL_INT32_SCHEMA)
    .field("position", Schema.INT32_SCHEMA)
    .field("optional", Schema.OPTIONAL_BOOLEAN_SCHEMA)
    .field("autoIncremented", Schema.OPTIONAL_BOOLEAN_SCHEMA)
    .field("generated", Schema.OPTIONAL_BOOLEAN_SCHEMA)
    .field("comment", Schema.OPTIONAL_STRING_SCHEMA)
    .field("defaultValueExpression", Schema.OPTIONAL_STRING_SCHEMA)
    .field("enumValues", SchemaBuilder.array(Schema.STRING_SCHEMA).optional().build())
    .build()
)
TABLE_SCHEMA: Final = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.schema.Table")
    .version(1)
    .field("defaultCharsetName", Schema.OPTIONAL_STRING_SCHEMA)
    .field("primaryKeyColumnNames", SchemaBuilder.array(Schema.STRING_SCHEMA).optional().build())
    .field("columns", SchemaBuilder.array(COLUMN_SCHEMA).build())
    .field("comment", Schema.OPTIONAL_STRING_SCHEMA)
    .optional()
    .build()
)
CHANGE_SCHEMA: Final = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.schema.Change")
    .version(1)
    .field("type", Schema.STRING_SCHEMA)
    .field("id", Schema.STRING_SCHEMA)
    .field("table", TABLE_SCHEMA)
    .build()
)
KEY_SCHEMA: Final = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.mysql.SchemaChangeKey")
    .version(1)
    .field("databaseName", Schema.STRING_SCHEMA)
    .build()
)


@functools.lru_cache(maxsize=8)
def value_schema(source_schema: Schema) -> Schema:
    """``SchemaChangeValue`` around the connector's source block schema."""
    return (
        SchemaBuilder.struct()
        .name("io.debezium.connector.mysql.SchemaChangeValue")
        .version(1)
        .field("source", source_schema)
        .field("ts_ms", Schema.INT64_SCHEMA)
        .field("databaseName", Schema.OPTIONAL_STRING_SCHEMA)
        .field("schemaName", Schema.OPTIONAL_STRING_SCHEMA)
        .field("ddl", Schema.OPTIONAL_STRING_SCHEMA)
        .field("tableChanges", SchemaBuilder.array(CHANGE_SCHEMA).build())
        .build()
    )


def debezium_id(table_id: str | tuple[str, str]) -> str:
    """``"db"."table"`` (Debezium's ``TableId.toDoubleQuotedString``)."""
    database, name = table_id.split(".", 1) if isinstance(table_id, str) else table_id
    return ".".join('"' + part.replace('"', '""') + '"' for part in (database, name))


def debezium_default(column: MySqlColumn) -> str | None:
    """The column default as Debezium's MySQL DDL parser records it (``defaultValueExpression``)."""
    text = column.default
    if text is None or text.upper() == "NULL":
        return None
    if _NOW.match(text.strip()):
        # Debezium stands the epoch in for a default that is evaluated on insert.
        return "1970-01-01 00:00:00"
    literal = _STRING_LITERAL.match(text.strip())
    if literal is not None:
        from connectors.jdbc.mysql.ddl import tokenize  # sqlglot unescapes MySQL's string syntax

        strings = [t.text for t in tokenize(text) if t.token_type.name in ("STRING", "NATIONAL_STRING")]
        if len(strings) == 1:
            return strings[0]
    return text


def _type_name(column: MySqlColumn) -> str:
    name = column.type_name
    if column.unsigned:
        name += " UNSIGNED"
    if column.zerofill:
        name += " ZEROFILL"
    return name


def column_fields(column: MySqlColumn, table: MySqlTable) -> dict[str, Any]:
    """One column as Debezium describes it, in Debezium's field order (JSON keys / Struct fields).
    Optional fields Debezium leaves out when unset are absent."""
    charset = column.charset
    if charset is None and column.type_name in _TEXTUAL:
        charset = table.default_charset
    fields: dict[str, Any] = {
        "name": column.name,
        "jdbcType": column.jdbc_type,
        "typeName": _type_name(column),
        "typeExpression": column.type_expression or _type_name(column),
        "charsetName": charset,
    }
    if column.length is not None:
        fields["length"] = column.length
    if column.scale is not None:
        fields["scale"] = column.scale
    fields.update(
        position=column.position,
        optional=column.optional,
        autoIncremented=column.auto_increment,
        generated=column.auto_increment or column.generated,
        comment=column.comment,
        hasDefaultValue=column.default is not None,
    )
    default = debezium_default(column)
    if default is not None:
        fields["defaultValueExpression"] = default
    fields["enumValues"] = list(column.enum_values)
    return fields


def table_fields(table: MySqlTable) -> dict[str, Any]:
    return {
        "defaultCharsetName": table.default_charset,
        "primaryKeyColumnNames": list(table.primary_key),
        "columns": [column_fields(c, table) for c in table.columns],
        "attributes": [],
    }


def change_fields(change: TableChange) -> dict[str, Any]:
    """One table change as Debezium's ``JsonTableChangeSerializer`` writes it."""
    return {
        "type": change.type,
        "id": debezium_id(change.id),
        "table": None if change.table is None else table_fields(change.table),
        "comment": None if change.table is None else change.table.comment,
    }


def _column_struct(column: MySqlColumn, table: MySqlTable) -> Struct:
    fields = column_fields(column, table)
    struct = Struct(COLUMN_SCHEMA)
    for field in COLUMN_SCHEMA.fields:
        value = fields.get(field.name)
        if field.name == "enumValues" and not value:
            value = None  # Debezium sets enumValues only for ENUM and SET columns
        if value is not None:
            struct.put(field.name, value)
    return struct


def _change_struct(change: TableChange) -> Struct:
    struct = Struct(CHANGE_SCHEMA).put("type", change.type).put("id", debezium_id(change.id))
    table = change.table
    if table is not None:
        table_struct = (
            Struct(TABLE_SCHEMA)
            .put("defaultCharsetName", table.default_charset)
            .put("primaryKeyColumnNames", list(table.primary_key))
            .put("columns", [_column_struct(c, table) for c in table.columns])
            .put("comment", table.comment)
        )
        struct.put("table", table_struct)
    return struct


def schema_change_record(
    server_name: str,
    source: Struct,
    database: str | None,
    ddl: str,
    changes: Sequence[TableChange],
    ts_ms: int,
    partition: Mapping[str, Any],
    offset: Mapping[str, Any],
) -> SourceRecord:
    """The schema change event of one DDL statement, for topic ``server_name`` (topic.prefix).

    Keyed by the database the statement ran in (Debezium's ``databaseName``; the empty string
    when it ran without one), in the connector's single partition ``0`` so that events keep
    their order."""
    schema = value_schema(source.schema)
    value = (
        Struct(schema)
        .put("source", source)
        .put("ts_ms", ts_ms)
        .put("databaseName", database)
        .put("ddl", ddl)
        .put("tableChanges", [_change_struct(c) for c in changes])
    )
    key = Struct(KEY_SCHEMA).put("databaseName", database or "")
    return SourceRecord(
        source_partition=dict(partition),
        source_offset=dict(offset),
        topic=server_name,
        kafka_partition=0,
        key_schema=KEY_SCHEMA,
        key=key,
        value_schema=schema,
        value=value,
    )
