"""Debezium's MySQL change events: the source block, per-table models and the records.

A change event's value is the ``<prefix>.<db>.<table>.Envelope`` struct (``before``,
``after``, ``source``, ``transaction``, ``op``, ``ts_ms``/``ts_us``/``ts_ns``; the shape
``connectors.jdbc.cdc.events.envelope_schema`` builds for both CDC connectors), its key the
``<prefix>.<db>.<table>.Key`` struct of the primary key columns (null without a key). The
source block ``io.debezium.connector.mysql.Source``::

    version, connector ("mysql" or "mariadb"), name (topic.prefix)
    ts_ms, ts_us, ts_ns     when the change was made (the binlog event's time), or read (snapshot)
    snapshot                "true", "first", "first_in_data_collection", "last_in_data_collection",
                            "last", "false"
    db, table               where the row lives
    server_id               the id of the server that wrote the change
    gtid                    the transaction's GTID (MySQL uuid:n, MariaDB domain-server-seq), or null
    file, pos, row          the binlog file, the position of the transaction's start, the row's
                            index in its rows event
    thread, query           null (binlog_rows_query_log_events is not read)

Heartbeats and tombstones come from ``connectors.jdbc.debezium.records`` (``ServerNameKey``/``Heartbeat``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from connect.api import Schema, SchemaBuilder, SourceRecord, Struct
from connectors.jdbc.cdc.events import envelope_schema
from connectors.jdbc.cdc.filters import Filters
from connectors.jdbc.debezium.records import RecordBuilder
from connectors.jdbc.debezium.source_block import snapshot_enum_schema, source_block_builder
from connectors.jdbc.mysql.values import ValueSettings, conversion_for

if TYPE_CHECKING:
    from connectors.jdbc.mysql.schema import MySqlTable

__all__ = ["SOURCE_SCHEMA", "Column", "EventBuilder", "Position", "TableModel", "build_table_model"]

SNAPSHOT_ENUM_SCHEMA: Final = snapshot_enum_schema(
    "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"
)

SOURCE_SCHEMA: Final = (
    source_block_builder("io.debezium.connector.mysql.Source", SNAPSHOT_ENUM_SCHEMA)
    .field("table", Schema.OPTIONAL_STRING_SCHEMA)
    .field("server_id", Schema.INT64_SCHEMA)
    .field("gtid", Schema.OPTIONAL_STRING_SCHEMA)
    .field("file", Schema.STRING_SCHEMA)
    .field("pos", Schema.INT64_SCHEMA)
    .field("row", Schema.INT32_SCHEMA)
    .field("thread", Schema.OPTIONAL_INT64_SCHEMA)
    .field("query", Schema.OPTIONAL_STRING_SCHEMA)
    .build()
)


@dataclass(frozen=True, slots=True)
class Column:
    """One field of a value or key struct: the row image position it comes from, its schema
    and its conversion (None: the reader's value as it is)."""

    index: int
    schema: Schema
    convert: Callable[[Any], Any] | None


@dataclass(slots=True)
class TableModel:
    """One table at one schema version: its topic, schemas and precompiled row converters.
    Rows are sequences of raw values in column position order (either reader's)."""

    table: MySqlTable
    topic: str
    key_schema: Schema | None
    value_schema: Schema
    envelope_schema: Schema
    value: Callable[[Sequence[Any]], Struct]
    key: Callable[[Sequence[Any]], Struct | None]
    column_count: int
    #: (position, column name, stand-in): where python-mysql-replication gives None for a
    #: value that is not NULL (an empty SET; a zero date in a NOT NULL column)
    not_null_stand_ins: tuple[tuple[int, str, Any], ...] = ()
    value_columns: tuple[Column, ...] = ()
    key_columns: tuple[Column, ...] = ()

    def binlog_values(self, image: Mapping[str, Any], none_sources: Mapping[str, Any] | None) -> list[Any]:
        """A binlog row image's values in position order (without values past the table's
        columns: a system-versioned table's hidden row period)."""
        values = list(image.values())
        if len(values) > self.column_count:
            del values[self.column_count :]
        if none_sources and self.not_null_stand_ins:
            for i, name, stand_in in self.not_null_stand_ins:
                if values[i] is None and none_sources.get(name) not in (None, "null"):
                    values[i] = stand_in
        return values


def _row_converter(
    schema: Schema, indexes: list[int], converts: list[Callable[[Any], Any] | None]
) -> Callable[[Sequence[Any]], Struct]:
    steps = [(j, f) for j, f in enumerate(converts) if f is not None]
    unchecked = Struct.unchecked

    def convert(row: Sequence[Any]) -> Struct:
        out = [row[i] for i in indexes]
        for j, f in steps:
            v = out[j]
            if v is not None:
                out[j] = f(v)
        return unchecked(schema, out)

    return convert


def build_table_model(
    prefix: str, table: MySqlTable, filters: Filters, settings: ValueSettings
) -> TableModel:
    """The model of ``table``; UnsupportedTypeError for a captured column without a mapping."""
    name = f"{prefix}.{table.database}.{table.name}"
    value_builder = SchemaBuilder.struct().name(f"{name}.Value").optional()
    value_indexes: list[int] = []
    value_converts: list[Callable[[Any], Any] | None] = []
    value_columns: list[Column] = []
    key_columns: list[Column] = []
    conversions = {}
    for i, column in enumerate(table.columns):
        keyed = column.name in table.primary_key
        if not keyed and not filters.captures_column(table.database, table.name, column.name):
            continue
        conversion = conversion_for(column, settings, table.id)
        conversions[column.name] = (i, conversion)
        if filters.captures_column(table.database, table.name, column.name):
            value_builder.field(column.name, conversion.schema)
            value_indexes.append(i)
            value_converts.append(conversion.convert)
            value_columns.append(Column(i, conversion.schema, conversion.convert))
    value_schema = value_builder.build()
    key_schema: Schema | None = None
    key: Callable[[Sequence[Any]], Struct | None]
    if table.primary_key:
        key_builder = SchemaBuilder.struct().name(f"{name}.Key")
        key_indexes: list[int] = []
        key_converts: list[Callable[[Any], Any] | None] = []
        for column_name in table.primary_key:
            i, conversion = conversions[column_name]
            key_builder.field(column_name, conversion.schema)
            key_indexes.append(i)
            key_converts.append(conversion.convert)
            key_columns.append(Column(i, conversion.schema, conversion.convert))
        key_schema = key_builder.build()
        key = _row_converter(key_schema, key_indexes, key_converts)
    else:

        def key(row: Sequence[Any]) -> Struct | None:
            return None

    stand_ins = tuple(
        (i, column.name, "" if column.type_name == "SET" else "0000-00-00")
        for i, column in enumerate(table.columns)
        if column.type_name == "SET"
        or (not column.optional and column.type_name in ("DATE", "DATETIME", "TIMESTAMP"))
    )
    return TableModel(
        table,
        name,
        key_schema,
        value_schema,
        envelope_schema(f"{name}.Envelope", value_schema, SOURCE_SCHEMA),
        _row_converter(value_schema, value_indexes, value_converts),
        key,
        len(table.columns),
        stand_ins,
        tuple(value_columns),
        tuple(key_columns),
    )


@dataclass(frozen=True, slots=True)
class Position:
    """The per-event values of the source block."""

    ts_ms: int  # the binlog event's time (streaming) or the read time (snapshot)
    snapshot: str  # "true", "first", "last", ..., "false"
    server_id: int
    gtid: str | None
    file: str
    pos: int
    row: int


class EventBuilder(RecordBuilder):
    """Builds one connector's records: change events, tombstones and heartbeats.

    ``clock_us`` gives the processing time (the envelope's ``ts_*``); tests pass a fixed one.
    """

    def __init__(self, server: str, connector: str, version: str, clock_us: Callable[[], int]) -> None:
        super().__init__(server, version, clock_us)
        self.connector = connector

    def source(self, database: str, table: str | None, position: Position) -> Struct:
        ts_ms = position.ts_ms
        return Struct.unchecked(
            SOURCE_SCHEMA,
            [
                self.version,
                self.connector,
                self.server,
                ts_ms,
                position.snapshot,
                database,
                None,
                ts_ms * 1000,
                ts_ms * 1_000_000,
                table,
                position.server_id,
                position.gtid,
                position.file,
                position.pos,
                position.row,
                None,
                None,
            ],
        )

    def change(
        self,
        model: TableModel,
        op: str,
        key: Struct | None,
        before: Struct | None,
        after: Struct | None,
        position: Position,
        offset: Mapping[str, Any],
    ) -> SourceRecord:
        now_us = self.clock_us()
        table = model.table
        envelope = Struct.unchecked(
            model.envelope_schema,
            [
                before,
                after,
                self.source(table.database, table.name, position),
                None,
                op,
                now_us // 1000,
                now_us,
                now_us * 1000,
            ],
        )
        return SourceRecord(
            self.partition, offset, model.topic, None, model.key_schema, key, model.envelope_schema, envelope
        )

    def row_emitter(
        self, model: TableModel, ts_ms: int, server_id: int, gtid: str | None, file: str, pos: int
    ) -> Callable[[str, Struct | None, Struct | None, Struct | None, int, Mapping[str, Any]], SourceRecord]:
        """What ``change`` does, for the rows of one binlog event: the source block's common
        values and the processing time are taken once; ``emit(op, key, before, after, row,
        offset)`` makes one record."""
        table = model.table
        template: list[Any] = [
            self.version,
            self.connector,
            self.server,
            ts_ms,
            "false",
            table.database,
            None,
            ts_ms * 1000,
            ts_ms * 1_000_000,
            table.name,
            server_id,
            gtid,
            file,
            pos,
            0,
            None,
            None,
        ]
        now_us = self.clock_us()
        now_ms, now_ns = now_us // 1000, now_us * 1000
        envelope_schema, key_schema, topic, partition = (
            model.envelope_schema,
            model.key_schema,
            model.topic,
            self.partition,
        )
        unchecked = Struct.unchecked

        def emit(
            op: str,
            key: Struct | None,
            before: Struct | None,
            after: Struct | None,
            row: int,
            offset: Mapping[str, Any],
        ) -> SourceRecord:
            source = template.copy()
            source[14] = row
            envelope = unchecked(
                envelope_schema,
                [before, after, unchecked(SOURCE_SCHEMA, source), None, op, now_ms, now_us, now_ns],
            )
            return SourceRecord(partition, offset, topic, None, key_schema, key, envelope_schema, envelope)

        return emit
