"""Binlog events to change events: transactions, positions, skipping, DDL (no I/O of its own).

``ChangeStream.handle`` takes python-mysql-replication's events in binlog order and returns
the records they make. It tracks where the current transaction began (its GTID event, or
its ``BEGIN`` without GTIDs) and how many rows events and rows of it were delivered, which
is what each record's offset says (``offsets``). After a restart the reader starts again
at the transaction's start, and ``resume`` says what to skip there.

Row images carry no column names (unless ``binlog_row_metadata=FULL``) and no character
sets or ENUM/SET members: before a rows event is decoded, its table map is given the
names, character sets and members of the table as the schema catalog knows it at that
point of the binlog (so rows after an ALTER are read with the new schema).

DDL (``QueryEvent`` other than ``BEGIN``/``COMMIT``/``SAVEPOINT``/``ROLLBACK``/``XA`` and
statement-form DML) goes to ``on_ddl``, which updates the catalog and the schema history and
returns the schema change records; every such statement, also one that changes no table.
"""

from __future__ import annotations

import datetime
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from connect.api import ConnectException, SourceRecord, SourceRecordBatch, StructColumn
from connectors.jdbc.mysql.config import GtidFilter
from connectors.jdbc.mysql.events import SOURCE_SCHEMA, Column, EventBuilder, Position, TableModel
from connectors.jdbc.mysql.offsets import BinlogPosition, stream_offset
from connectors.jdbc.mysql.values import binlog_charset

if TYPE_CHECKING:
    from connectors.jdbc.mysql.schema import MySqlTable

__all__ = ["ChangeStream", "GtidSet"]

log = logging.getLogger(__name__)

#: Rows events with at least this many rows become one SourceRecordBatch (when a poll
#: starts with them), fewer go row by row.
BATCH_ROWS = 32
_MARIADB_STANDALONE = 0x01  # a GTID event's flag: no BEGIN/COMMIT follows (DDL)
_HIDDEN_PERIOD = ("\x00row_start", "\x00row_end")
_END_OF_TIME = datetime.datetime(2038, 1, 19, 3, 14, 7)
_DML = re.compile(r"\s*(?:/\*.*?\*/\s*)*(?:INSERT|UPDATE|DELETE|REPLACE)\b", re.IGNORECASE | re.DOTALL)


class GtidSet:
    """The GTIDs executed so far, in the text MySQL (``uuid:1-n``) or MariaDB
    (``domain-server-seq`` per domain) uses."""

    def __init__(self, text: str | None) -> None:
        self.mariadb: dict[str, str] = {}
        self.mysql: dict[str, str] = {}
        for part in (text or "").replace("\n", "").split(","):
            part = part.strip()
            if not part:
                continue
            if ":" in part:
                uuid, _, rest = part.partition(":")
                self.mysql[uuid] = rest
            else:
                self.mariadb[part.split("-", 1)[0]] = part

    def add(self, gtid: str) -> None:
        if ":" in gtid:
            uuid, _, gno = gtid.rpartition(":")
            self.mysql[uuid] = f"1-{gno}"
        else:
            self.mariadb[gtid.split("-", 1)[0]] = gtid

    def text(self) -> str | None:
        parts = [f"{u}:{r}" for u, r in self.mysql.items()] + list(self.mariadb.values())
        return ",".join(parts) or None


class ChangeStream:
    def __init__(
        self,
        events: EventBuilder,
        model_of: Callable[[str, str], tuple[MySqlTable, TableModel] | None],
        on_ddl: Callable[[str | None, str, Position, dict[str, Any]], list[SourceRecord]],
        gtid_filter: GtidFilter,
        start: BinlogPosition,
        tombstones: bool,
    ) -> None:
        self.events = events
        self.model_of = model_of
        self.on_ddl = on_ddl
        self.gtid_filter = gtid_filter
        self.tombstones = tombstones
        self.file = start.file
        self.next_pos = start.pos  # where the next event starts
        self.gtids = GtidSet(start.gtids)
        self.server_id = 0
        self.resume: BinlogPosition | None = start if (start.event or start.row) else None
        self.in_transaction = False
        self.tx_file = start.file
        self.tx_pos = start.pos
        self.tx_gtid: str | None = None
        self.tx_gtids_before: str | None = start.gtids
        self.tx_thread: int | None = None
        self.tx_captured = True
        self.tx_standalone = False
        self.rows_events = 0  # rows events of this transaction read so far

    # -- positions ----------------------------------------------------------------------------------

    def boundary(self) -> BinlogPosition:
        """Where to restart reading without losing or repeating anything delivered: the
        current transaction's start, skipping what was delivered of it."""
        resume = self.resume
        if (
            resume is not None
            and (self.tx_file, self.tx_pos) == (resume.file, resume.pos)
            and self.rows_events <= resume.event
        ):
            return resume
        if self.in_transaction:
            return BinlogPosition(self.tx_file, self.tx_pos, self.rows_events, 0, self.tx_gtids_before)
        return BinlogPosition(self.file, self.next_pos, 0, 0, self.gtids.text())

    def idle_offset(self, ts_sec: int) -> dict[str, Any]:
        return stream_offset(self.file, self.next_pos, self.gtids.text(), 0, 0, ts_sec, self.server_id)

    # -- events -------------------------------------------------------------------------------------

    def handle(self, event: Any, batch: bool = False) -> list[SourceRecord] | SourceRecordBatch:
        """The records of one binlog event (most make none); with ``batch``, the inserts of a
        large rows event come as one ``SourceRecordBatch``."""
        kind = type(event).__name__
        start = self.next_pos
        log_pos = getattr(getattr(event, "packet", None), "log_pos", 0)
        if kind == "RotateEvent":
            self.file = event.next_binlog
            self.next_pos = event.position
            return []
        if log_pos:
            self.next_pos = log_pos
        server_id = getattr(getattr(event, "packet", None), "server_id", None)
        if server_id:
            self.server_id = server_id
        if kind in ("WriteRowsEvent", "UpdateRowsEvent", "DeleteRowsEvent"):
            if not self.in_transaction:
                self._begin(start, None)
            if batch and kind == "WriteRowsEvent":
                inserts = self.insert_batch(event)
                if inserts is not None:
                    return inserts
            records = self._rows(kind, event, self.rows_events)
            self.rows_events += 1  # only once its records are made: a failure reads it again
            return records
        if kind in ("MariadbGtidEvent", "GtidEvent"):
            self._begin(start, event.gtid)
            if kind == "MariadbGtidEvent" and event.flags & _MARIADB_STANDALONE:
                self.tx_standalone = True
            return []
        if kind == "XidEvent":
            self._commit()
            return []
        if kind == "QueryEvent":
            query = event.query.strip()
            upper = query[:8].upper()
            if upper.startswith("BEGIN"):
                if not self.in_transaction:
                    self._begin(start, None)
                self.tx_thread = event.slave_proxy_id
                return []
            if upper.startswith("COMMIT"):
                self._commit()
                return []
            if upper.startswith(("SAVEPOINT", "ROLLBACK", "XA ")):
                return []
            if _DML.match(query):
                # As Debezium: statement-form DML (a session with binlog_format=STATEMENT or
                # MIXED) is no DDL; its rows are not in the binlog as rows, so it is lost.
                log.warning("skipping DML logged as a statement (binlog_format not ROW): %.200s", query)
                return []
            schema = event.schema.decode() if isinstance(event.schema, bytes) else event.schema
            gtid = self.tx_gtid
            self._commit()  # DDL commits implicitly; its offset is the position after it
            position = Position(
                event.timestamp * 1000, "false", self.server_id, gtid, self.file, self.next_pos, 0
            )
            offset = self.idle_offset(event.timestamp)
            return self.on_ddl(schema or None, query, position, offset)
        return []

    def _begin(self, start: int, gtid: str | None) -> None:
        self.in_transaction = True
        self.tx_file = self.file
        self.tx_pos = start
        self.tx_gtid = gtid
        self.tx_gtids_before = self.gtids.text()
        self.tx_thread = None
        self.tx_captured = self.gtid_filter.accepts(gtid)
        self.tx_standalone = False
        self.rows_events = 0

    def _commit(self) -> None:
        if self.tx_gtid is not None:
            self.gtids.add(self.tx_gtid)
        self.in_transaction = False
        self.tx_gtid = None
        self.resume = None  # it pointed into the first transaction read, which is over

    # -- rows -------------------------------------------------------------------------------------

    def _target(self, event: Any, index: int) -> tuple[TableModel, int] | None:
        """The model of a rows event's table and how many of its rows to skip (None: none of
        its rows are wanted: skipped on resume, filtered out, not captured)."""
        skip_rows = 0
        resume = self.resume
        if resume is not None and (self.tx_file, self.tx_pos) == (resume.file, resume.pos):
            if index < resume.event:
                return None
            if index == resume.event:
                skip_rows = resume.row
        if not self.tx_captured:
            return None
        schema, table = getattr(event, "schema", None), getattr(event, "table", None)
        if schema is None or table is None:
            return None
        found = self.model_of(schema, table)
        if found is None:
            return None
        mysql_table, model = found
        self._prepare(event, mysql_table)
        return model, skip_rows

    def insert_batch(self, event: Any) -> SourceRecordBatch | None:
        """The create events of a ``WriteRowsEvent`` as one batch of columns (keys, and
        envelopes whose ``after`` and ``source`` are columns): what ``handle`` makes row by
        row, without a struct per row. None when the event needs the row path (nothing
        captured, or a value a column check refuses); the event is then not consumed."""
        index = self.rows_events
        target = self._target(event, index)
        if target is None:
            return None
        model, skip = target
        rows = event.rows
        if len(rows) - skip < BATCH_ROWS or model.table.hidden_row_period:
            return None  # a few rows: the row path costs less than the columns
        values_of = model.binlog_values
        images = [values_of(r["values"], r.get("none_sources")) for r in rows[skip:]]
        n = len(images)
        columns = list(zip(*images, strict=True))
        after = _convert_columns(model.value_columns, columns)
        keys = _convert_columns(model.key_columns, columns) if model.key_schema is not None else []
        if after is None or keys is None:
            return None
        ts_sec = event.timestamp
        ts_ms = ts_sec * 1000
        base = stream_offset(
            self.tx_file, self.tx_pos, self.tx_gtids_before, index, 0, ts_sec, self.server_id
        )
        offsets = []
        for k in range(skip, skip + n):
            offset = base.copy()
            offset["row"] = k + 1
            offsets.append(offset)
        events = self.events
        table = model.table
        source = StructColumn(
            SOURCE_SCHEMA,
            [
                [events.version] * n,
                [events.connector] * n,
                [events.server] * n,
                [ts_ms] * n,
                ["false"] * n,
                [table.database] * n,
                [None] * n,
                [ts_ms * 1000] * n,
                [ts_ms * 1_000_000] * n,
                [table.name] * n,
                [self.server_id] * n,
                [self.tx_gtid] * n,
                [self.tx_file] * n,
                [self.tx_pos] * n,
                list(range(skip, skip + n)),
                [None] * n,
                [None] * n,
            ],
            n,
        )
        now_us = events.clock_us()
        envelopes = StructColumn(
            model.envelope_schema,
            [
                [None] * n,
                StructColumn(model.value_schema, after, n),
                source,
                [None] * n,
                ["c"] * n,
                [now_us // 1000] * n,
                [now_us] * n,
                [now_us * 1000] * n,
            ],
            n,
        )
        self.rows_events = index + 1
        return SourceRecordBatch(
            events.partition,
            offsets,
            model.topic,
            model.envelope_schema,
            envelopes,
            key_schema=model.key_schema,
            keys=None if model.key_schema is None else StructColumn(model.key_schema, keys, n),
        )

    def _rows(self, kind: str, event: Any, index: int) -> list[SourceRecord]:
        target = self._target(event, index)
        if target is None:
            return []
        model, skip_rows = target
        rows = event.rows
        ts_sec = event.timestamp
        emit = self.events.row_emitter(
            model, ts_sec * 1000, self.server_id, self.tx_gtid, self.tx_file, self.tx_pos
        )
        tombstone, tombstones = self.events.tombstone, self.tombstones
        base = stream_offset(
            self.tx_file, self.tx_pos, self.tx_gtids_before, index, 0, ts_sec, self.server_id
        )
        key_of, value_of, values_of = model.key, model.value, model.binlog_values
        versioned = model.table.hidden_row_period
        out: list[SourceRecord] = []
        append = out.append
        for k in range(skip_rows, len(rows)):
            row = rows[k]
            offset = base.copy()
            offset["row"] = k + 1
            if versioned:
                # A system-versioned table logs the old versions it keeps as rows too: an
                # UPDATE writes the old version (row_end: now) besides updating the current
                # row, a DELETE updates the current row's row_end to now. The events follow
                # the table's current rows, as a reader of the table sees them.
                if kind == "UpdateRowsEvent" and _historical(row["after_values"]):
                    if _historical(row["before_values"]):
                        continue
                    kind_here = "DeleteRowsEvent"
                    row = {"values": row["before_values"], "none_sources": row.get("before_none_sources")}
                elif kind != "UpdateRowsEvent" and _historical(row["values"]):
                    continue
                else:
                    kind_here = kind
            else:
                kind_here = kind
            if kind_here == "WriteRowsEvent":
                values = values_of(row["values"], row.get("none_sources"))
                append(emit("c", key_of(values), None, value_of(values), k, offset))
            elif kind_here == "DeleteRowsEvent":
                values = values_of(row["values"], row.get("none_sources"))
                key = key_of(values)
                # The delete's offset does not cover its tombstone yet: a restart between them
                # sends both again rather than losing the tombstone.
                before_offset = base.copy()
                before_offset["row"] = k
                append(emit("d", key, value_of(values), None, k, before_offset))
                if tombstones:
                    append(tombstone(model, key, offset))
            else:
                before = values_of(row["before_values"], row.get("before_none_sources"))
                after = values_of(row["after_values"], row.get("after_none_sources"))
                old_key, new_key = key_of(before), key_of(after)
                if old_key == new_key:
                    append(emit("u", new_key, value_of(before), value_of(after), k, offset))
                else:
                    # A primary key change: a delete (and tombstone) of the old key, a create of the new.
                    first = base.copy()
                    first["row"] = k
                    append(emit("d", old_key, value_of(before), None, k, first))
                    if tombstones:
                        append(tombstone(model, old_key, first))
                    append(emit("c", new_key, None, value_of(after), k, offset))
        return out

    def _prepare(self, event: Any, table: MySqlTable) -> None:
        """Give the table map the catalog's names, character sets and ENUM/SET members."""
        table_map = event.table_map[event.table_id]
        if getattr(table_map, "sluiceway_table", None) is table:
            return
        columns = table_map.columns
        # MariaDB's hidden row_start/row_end of WITH SYSTEM VERSIONING come last in row images.
        hidden = _HIDDEN_PERIOD if table.hidden_row_period else ()
        if len(columns) != len(table.columns) + len(hidden):
            raise ConnectException(
                f"the binlog has {len(columns)} columns for table {table.id} at {self.file}:{self.tx_pos}, "
                f"but its schema (from the schema history) has {len(table.columns)}: the schema history does "
                "not match the binlog; set snapshot.mode=recovery (no DDL since) or when_needed and restart"
            )
        for binlog_column, name in zip(columns[len(table.columns) :], hidden, strict=True):
            # Names no real column can have (they would collide in the row dicts otherwise).
            binlog_column.name = name
        for binlog_column, column in zip(columns, table.columns, strict=False):
            binlog_column.name = column.name
            binlog_column.unsigned = column.unsigned
            charset = binlog_charset(column, table.default_charset)
            if charset is not None:
                binlog_column.character_set_name = charset
            if column.type_name == "ENUM":
                binlog_column.enum_values = ["", *column.enum_values]
            elif column.type_name == "SET":
                binlog_column.set_values = list(column.enum_values)
        table_map.sluiceway_table = table


def _historical(image: Mapping[str, Any]) -> bool:
    """Whether a system-versioned row image is an old version: its hidden row_end is a past
    moment, not the end of time (2038-01-19 03:14:07.999999 UTC; 2106-02-07 since MariaDB 11.5)."""
    row_end = image.get(_HIDDEN_PERIOD[1])
    return isinstance(row_end, datetime.datetime) and row_end < _END_OF_TIME


def _convert_columns(specs: Sequence[Column], columns: Sequence[Sequence[Any]]) -> list[Sequence[Any]] | None:
    """The converted columns of a batch, each checked against its field's schema; None when
    one does not fit (the caller goes row by row, which reports the row)."""
    out: list[Sequence[Any]] = []
    for spec in specs:
        column = columns[spec.index]
        convert = spec.convert
        if convert is not None:
            column = [None if v is None else convert(v) for v in column]
        if not spec.schema.fits_all(column):
            return None
        out.append(column)
    return out
