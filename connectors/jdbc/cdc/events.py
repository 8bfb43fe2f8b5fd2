"""Debezium's change event envelope, source block and heartbeat records (Debezium 2.x shapes).

A change event's value is an ``<prefix>.<schema>.<table>.Envelope`` struct (version 1)::

    before       <prefix>.<schema>.<table>.Value, optional   the row before the change
    after        <prefix>.<schema>.<table>.Value, optional   the row after it
    source       io.debezium.connector.postgresql.Source     where the change came from
    transaction  event.block, optional                       always null (no transaction metadata)
    op           string: r (snapshot read), c, u, d, t (truncate)
    ts_ms, ts_us, ts_ns   optional int64: when the connector processed the event

and its key the ``<prefix>.<schema>.<table>.Key`` struct of the primary key columns (null
for a table without a key, and for truncates). The source block::

    version, connector ("postgresql"), name (topic.prefix)    strings
    ts_ms, ts_us, ts_ns     the commit time (streaming) or the read time (snapshot)
    snapshot                io.debezium.data.Enum: "true", "last" (the snapshot's last record), "false"
    db, schema, table       where the row lives
    sequence                '["<last commit LSN>","<event LSN>"]' (streaming), null (snapshot)
    txId, lsn, xmin         the transaction id, the change's LSN, null

``version`` is this connector's version (it is not Debezium). Heartbeats go to
``__debezium-heartbeat.<prefix>`` with key ``io.debezium.connector.common.ServerNameKey``
``{serverName}`` and value ``io.debezium.connector.common.Heartbeat`` ``{ts_ms}``
(``connectors.jdbc.debezium.records``, shared with the MySQL connector).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from connect.api import (
    DataException,
    Headers,
    Schema,
    SchemaBuilder,
    SourceRecord,
    SourceRecordBatch,
    Struct,
    StructColumn,
)
from connectors.jdbc.cdc.values import COLUMN_PARSERS
from connectors.jdbc.debezium.records import RecordBuilder
from connectors.jdbc.debezium.source_block import snapshot_enum_schema, source_block_builder

if TYPE_CHECKING:
    from connectors.jdbc.cdc.table_model import TableModel
    from connectors.jdbc.cdc.values import Conversion

__all__ = [
    "SOURCE_SCHEMA",
    "EventBuilder",
    "RowChanges",
    "SourcePosition",
    "envelope_schema",
]

CONNECTOR_NAME: Final = "postgresql"

SNAPSHOT_ENUM_SCHEMA: Final = snapshot_enum_schema("true,last,false,incremental")

SOURCE_SCHEMA: Final = (
    source_block_builder("io.debezium.connector.postgresql.Source", SNAPSHOT_ENUM_SCHEMA)
    .field("schema", Schema.STRING_SCHEMA)
    .field("table", Schema.STRING_SCHEMA)
    .field("txId", Schema.OPTIONAL_INT64_SCHEMA)
    .field("lsn", Schema.OPTIONAL_INT64_SCHEMA)
    .field("xmin", Schema.OPTIONAL_INT64_SCHEMA)
    .build()
)

TRANSACTION_BLOCK_SCHEMA: Final = (
    SchemaBuilder.struct()
    .name("event.block")
    .version(1)
    .field("id", Schema.STRING_SCHEMA)
    .field("total_order", Schema.INT64_SCHEMA)
    .field("data_collection_order", Schema.INT64_SCHEMA)
    .optional()
    .build()
)

#: Header names Debezium puts on the delete and create events of a primary key change.
NEW_KEY_HEADER: Final = "__debezium.newkey"
OLD_KEY_HEADER: Final = "__debezium.oldkey"


def envelope_schema(name: str, value_schema: Schema, source_schema: Schema = SOURCE_SCHEMA) -> Schema:
    """Debezium's envelope; ``source_schema`` is the connector's source block (the MySQL
    connector passes its own)."""
    return (
        SchemaBuilder.struct()
        .name(name)
        .version(1)
        .field("before", value_schema)
        .field("after", value_schema)
        .field("source", source_schema)
        .field("transaction", TRANSACTION_BLOCK_SCHEMA)
        .field("op", Schema.STRING_SCHEMA)
        .field("ts_ms", Schema.OPTIONAL_INT64_SCHEMA)
        .field("ts_us", Schema.OPTIONAL_INT64_SCHEMA)
        .field("ts_ns", Schema.OPTIONAL_INT64_SCHEMA)
        .build()
    )


@dataclass(frozen=True, slots=True)
class SourcePosition:
    """The per-event values of the source block."""

    ts_us: int  # commit time (streaming) or read time (snapshot), microseconds since the epoch
    snapshot: str  # "true", "last" or "false"
    txid: int | None
    lsn: int | None
    sequence: str | None = None


@dataclass(frozen=True, slots=True)
class RowChanges:
    """Streamed inserts (``c``) and updates without an old row (``u``) of one table, as
    columns: row ``i`` is ``ops[i]`` of the row whose texts are ``columns[j][i]`` (in the
    table's column order), read at ``lsns[i]`` in transaction ``txids[i]`` committed at
    ``commit_times_us[i]``, with Debezium's ``sequences[i]`` and source offset ``offsets[i]``."""

    ops: list[str]
    columns: list[list[Any]]
    lsns: list[int]
    commit_times_us: list[int]
    txids: list[int]
    sequences: list[str]
    offsets: Sequence[Mapping[str, Any]]


class _Unparsed(Exception):
    """A column of a run that the column-wise parse does not take (the caller goes row by row)."""


def _parse_column(conversion: Conversion | None, texts: Sequence[Any]) -> list[Any]:
    """One column's texts as Connect values, checked against the column's schema as
    ``Struct.from_values`` checks them; ``_Unparsed`` for anything else (a NULL in a
    required column, a text that does not parse), which the row-by-row path reports."""
    assert conversion is not None
    schema = conversion.schema
    kinds = set(map(type, texts))
    try:
        if kinds == {str}:
            bulk = COLUMN_PARSERS.get(conversion.parse)
            values = bulk(texts) if bulk is not None else list(map(conversion.parse, texts))
        elif kinds <= {str, type(None)} and schema.optional:
            parse = conversion.parse
            values = [None if t is None else parse(t) for t in texts]
        else:
            raise _Unparsed
    except (DataException, ValueError, ArithmeticError, TypeError):
        raise _Unparsed from None
    if not schema.fits_all(values):
        raise _Unparsed
    return values


def sequence(last_commit_lsn: int | None, lsn: int) -> str:
    """Debezium's ``sequence``: a JSON array of the last commit LSN and the event's LSN, as strings."""
    first = "null" if last_commit_lsn is None else f'"{last_commit_lsn}"'
    return f'[{first},"{lsn}"]'


class EventBuilder(RecordBuilder):
    """Builds the records of one connector: change events, tombstones, truncates, heartbeats.

    ``clock_us`` gives the processing time (the envelope's ``ts_*``); tests pass a fixed one.
    """

    def __init__(self, server: str, database: str, version: str, clock_us: Callable[[], int]) -> None:
        super().__init__(server, version, clock_us)
        self.database = database

    def source(self, table: TableModel, position: SourcePosition) -> Struct:
        ts_us = position.ts_us
        return Struct.unchecked(
            SOURCE_SCHEMA,
            [
                self.version,
                CONNECTOR_NAME,
                self.server,
                ts_us // 1000,
                position.snapshot,
                self.database,
                position.sequence,
                ts_us,
                ts_us * 1000,
                table.name.schema,
                table.name.table,
                position.txid,
                position.lsn,
                None,
            ],
        )

    def _envelope(
        self,
        table: TableModel,
        op: str,
        before: Struct | None,
        after: Struct | None,
        position: SourcePosition,
    ) -> Struct:
        now_us = self.clock_us()
        return Struct.unchecked(
            table.envelope_schema,
            [before, after, self.source(table, position), None, op, now_us // 1000, now_us, now_us * 1000],
        )

    def change(
        self,
        table: TableModel,
        op: str,
        key: Struct | None,
        before: Struct | None,
        after: Struct | None,
        position: SourcePosition,
        offset: Mapping[str, Any],
        headers: Headers | None = None,
    ) -> SourceRecord:
        return SourceRecord(
            self.partition,
            offset,
            table.topic,
            None,
            table.key_schema,
            key,
            table.envelope_schema,
            self._envelope(table, op, before, after, position),
            None,
            headers,
        )

    def row_changes(self, table: TableModel, changes: RowChanges) -> SourceRecordBatch | None:
        """The change events of ``changes`` as one batch of ``StructColumn``s (keys, and
        envelopes whose ``after`` and ``source`` are columns too): the records ``change``
        makes one by one, with the processing time read once for the batch. None when a
        column does not parse column-wise (the caller makes the records one by one)."""
        n = len(changes.lsns)
        columns = changes.columns
        try:
            after: list[Sequence[Any]] = [
                _parse_column(table.columns[i].value, columns[i]) for i in table.value_indexes
            ]
            keys: list[Sequence[Any]] = [
                _parse_column(table.columns[i].key, columns[i]) for i in table.key_indexes
            ]
        except _Unparsed:
            return None
        times = changes.commit_times_us
        if times.count(times[0]) == n and changes.txids.count(changes.txids[0]) == n:
            # One transaction (a bulk statement): its values once, so that the converter
            # sees one object per column and writes it once (benchmarks/jdbc_source.py).
            t, txid = times[0], changes.txids[0]
            ts_ms, ts_us, ts_ns, txids = [t // 1000] * n, [t] * n, [t * 1000] * n, [txid] * n
        else:
            ts_ms, ts_us, ts_ns = [t // 1000 for t in times], times, [t * 1000 for t in times]
            txids = changes.txids
        schema, name = table.name.schema, table.name.table
        source = StructColumn(
            SOURCE_SCHEMA,
            [
                [self.version] * n,
                [CONNECTOR_NAME] * n,
                [self.server] * n,
                ts_ms,
                ["false"] * n,
                [self.database] * n,
                changes.sequences,
                ts_us,
                ts_ns,
                [schema] * n,
                [name] * n,
                txids,
                changes.lsns,
                [None] * n,
            ],
            n,
        )
        now_us = self.clock_us()
        envelopes = StructColumn(
            table.envelope_schema,
            [
                [None] * n,
                StructColumn(table.value_schema, after, n),
                source,
                [None] * n,
                changes.ops,
                [now_us // 1000] * n,
                [now_us] * n,
                [now_us * 1000] * n,
            ],
            n,
        )
        return SourceRecordBatch(
            self.partition,
            changes.offsets,
            table.topic,
            table.envelope_schema,
            envelopes,
            key_schema=table.key_schema,
            keys=None if table.key_schema is None else StructColumn(table.key_schema, keys, n),
        )

    def truncate(
        self, table: TableModel, position: SourcePosition, offset: Mapping[str, Any]
    ) -> SourceRecord:
        return SourceRecord(
            self.partition,
            offset,
            table.topic,
            None,
            None,
            None,
            table.envelope_schema,
            self._envelope(table, "t", None, None, position),
        )
