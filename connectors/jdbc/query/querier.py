"""One table (or the custom query) being copied: its layout, offset, schedule and reads.

A ``TableQuerier`` runs at most one query per call of ``read`` and keeps no cursor
open between calls, except for results it streams across calls (as Confluent's
connector does) so that they never have to fit in memory: a bulk read of the whole
table, and in timestamp mode a run of rows sharing one timestamp that a batch ended in.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy.engine import Connection, CursorResult

from connect.api import ConnectException, SourceRecord, SourceRecordBatch
from connectors.jdbc.query.config import JdbcSourceConfig
from connectors.jdbc.query.criteria import (
    INCREMENTING_FIELD,
    Criteria,
    Mode,
    Offset,
    OffsetColumns,
    bulk_select,
    incrementing_value,
    query_source,
    record_offsets,
    table_source,
)
from connectors.jdbc.query.dialects import DatabaseDialect, TableDescription
from connectors.jdbc.query.rows import RowMapper
from connectors.jdbc.query.tables import QUERY_PARTITION, TableId
from connectors.jdbc.query.types import ColumnSpec

log = logging.getLogger(__name__)

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def _resolve(column: str, names: Sequence[str]) -> str | None:
    """The database's spelling of ``column``: exact, else the one case-insensitive match."""
    if column in names:
        return column
    folded = [n for n in names if n.lower() == column.lower()]
    return folded[0] if len(folded) == 1 else None


def _maps(offsets: Sequence[Offset | None]) -> list[dict[str, int] | None]:
    """The offsets as stored (a new dict per record)."""
    return [o.to_map() if o is not None else None for o in offsets]


class TableQuerier:
    """Reads one table (``table``) or the custom query (``table`` None)."""

    def __init__(
        self,
        config: JdbcSourceConfig,
        dialect: DatabaseDialect,
        table: TableId | None,
        offset: Offset | None,
    ) -> None:
        self.config = config
        self.dialect = dialect
        self.table = table
        self.mode = config.query_mode
        self.offset = offset
        self.partition: dict[str, str] = table.partition() if table is not None else dict(QUERY_PARTITION)
        self.topic = config.topic_for(table)
        self.what = f"table {table.fqn}" if table is not None else "the query"
        self.source = table_source(table, config.quote) if table is not None else query_source(config.query)
        self.batch = config.batch_max_rows
        self.interval_s = config.poll_interval_ms / 1000
        self.delay = dt.timedelta(milliseconds=config.timestamp_delay_interval_ms)
        self.zone = config.zone
        #: When this table is due for its next query (time.monotonic()).
        self.next_due = 0.0
        #: How many reads this task made before this table's last one (orders ties fairly).
        self.last_run = -1
        self.missing = False
        self.mapper: RowMapper | None = None
        self.criteria: Criteria | None = None
        self.offset_columns: OffsetColumns | None = None
        self._initial: dt.datetime | None = None
        self._stream: CursorResult[Any] | None = None
        self._held: list[Any] = []
        self._run_end: Offset | None = None

    @property
    def streaming(self) -> bool:
        """In the middle of a streamed result (a bulk read, or a run of equal timestamps):
        the next read continues it, on the same connection and transaction."""
        return self._stream is not None

    # -- layout ----------------------------------------------------------------------------

    def describe(self, connection: Connection) -> None:
        """Work out the columns, the key and the offset columns, and check them (raises
        ConnectException naming the key to fix; ``TableMissing`` if the table is gone)."""
        config = self.config
        if self.table is not None:
            described = self.dialect.describe_table(connection, self.table)
        else:
            described = TableDescription(self.dialect.describe_query(connection, config.query), (), None)
        names = [c.name for c in described.columns]
        by_name = {c.name: c for c in described.columns}
        criteria = None
        if self.mode is not Mode.BULK:
            stamps: list[str] = []
            for column in config.timestamp_column_name if self.mode.uses_timestamp else []:
                found = _resolve(column, names)
                if found is None:
                    raise ConnectException(self._no_column("timestamp.column.name", column, names))
                stamps.append(found)
            incrementing = None
            if self.mode.uses_incrementing:
                wanted = config.incrementing_column_name or described.autoincrement
                if not wanted:
                    raise ConnectException(
                        f"{self.what} has no auto-increment column: set incrementing.column.name "
                        f"(mode {self.mode.value})"
                    )
                incrementing = _resolve(wanted, names)
                if incrementing is None:
                    raise ConnectException(self._no_column("incrementing.column.name", wanted, names))
            if config.validate_non_null and self.table is not None:
                self._check_not_null(incrementing, stamps, by_name)
            criteria = Criteria(
                self.mode,
                tuple(stamps),
                incrementing,
                config.quote,
                self.dialect.normalize_timestamp,
            )
        try:
            mapper = RowMapper.build(
                described.columns,
                self.dialect.name,
                schema_name=self.table.name if self.table is not None else None,
                primary_key=described.primary_key,
                numeric_mapping=config.numeric,
                zone=self.zone,
            )
        except Exception as exc:
            raise ConnectException(f"cannot map the columns of {self.what}: {exc}") from exc
        self.mapper = mapper
        self.criteria = criteria
        self.offset_columns = (
            OffsetColumns.locate(criteria, mapper.names, self.what) if criteria is not None else None
        )

    def _no_column(self, key: str, column: str, names: Sequence[str]) -> str:
        return f"{key}: {column!r} is not a column of {self.what} (its columns: {', '.join(names)})"

    def _check_not_null(
        self, incrementing: str | None, stamps: Sequence[str], by_name: dict[str, ColumnSpec]
    ) -> None:
        hint = "; set validate.non.null=false to copy it anyway"
        if incrementing is not None and by_name[incrementing].nullable:
            raise ConnectException(
                f"Cannot make incremental queries using incrementing column {incrementing} on "
                f"{self.what} because this column is nullable{hint}"
            )
        if stamps and all(by_name[s].nullable for s in stamps):
            raise ConnectException(
                f"Cannot make incremental queries using timestamp columns {list(stamps)} on "
                f"{self.what} because all of these columns are nullable{hint}"
            )

    # -- reading ---------------------------------------------------------------------------

    def read(self, connection: Connection, run: int) -> Sequence[SourceRecord]:
        """One query's worth of records (or the next part of a streamed result); schedules
        the next read: at once while there is more to read, else after ``poll.interval.ms``."""
        self.last_run = run
        if self.mapper is None:
            self.describe(connection)
        if self._stream is not None:
            return self._continue_stream()
        if self.mode is Mode.BULK:
            self._open_stream(connection, bulk_select(self.source, self.config.query_suffix), None)
            return self._continue_stream()
        return self._read_incremental(connection)

    def reset(self) -> None:
        """Abandon a streamed read in progress (after an error); the next read starts over
        from the offset."""
        stream, self._stream = self._stream, None
        self._held = []
        if stream is not None:
            try:
                stream.close()
            except Exception:
                log.debug("closing the result of %s failed", self.what, exc_info=True)

    def _schedule(self, more: bool) -> None:
        self.next_due = time.monotonic() + (0.0 if more else self.interval_s)

    def _check_columns(self, connection: Connection, result: CursorResult[Any]) -> bool:
        """Whether the result has the described columns; re-describes when not (the table
        changed: a column was added, dropped or renamed)."""
        assert self.mapper is not None
        if tuple(result.keys()) == self.mapper.names:
            return True
        log.info(
            "the columns of %s changed (%s, now %s): updating its schema",
            self.what,
            ", ".join(self.mapper.names),
            ", ".join(result.keys()),
        )
        result.close()
        self.describe(connection)
        return False

    def _execute(self, connection: Connection, stmt: Any, **options: Any) -> CursorResult[Any]:
        """Run ``stmt``, describing the table again if its columns changed meanwhile."""
        result = connection.execute(stmt, execution_options=options)
        if not self._check_columns(connection, result):
            result = connection.execute(stmt, execution_options=options)
            assert self.mapper is not None
            if tuple(result.keys()) != self.mapper.names:
                result.close()
                raise ConnectException(
                    f"the columns of {self.what} ({', '.join(result.keys())}) do not match its "
                    f"description ({', '.join(self.mapper.names)})"
                )
        return result

    def _open_stream(self, connection: Connection, stmt: Any, run_end: Offset | None) -> None:
        """Read ``stmt``'s rows over the next reads, ``batch.max.rows`` at a time, without
        holding them all: a bulk read, or (``run_end`` set) the rest of a run of rows sharing
        one timestamp in timestamp mode."""
        # A server-side cursor: the rows stay in the database until they are fetched.
        self._stream = self._execute(connection, stmt, stream_results=True, max_row_buffer=self.batch + 1)
        self._held = []
        self._run_end = run_end

    def _continue_stream(self) -> Sequence[SourceRecord]:
        assert self._stream is not None and self.mapper is not None
        # One row of look-ahead tells whether this part is the last.
        rows = self._held + list(self._stream.fetchmany(self.batch + 1 - len(self._held)))
        chunk, self._held = rows[: self.batch], rows[self.batch :]
        finished = not self._held
        values = [self.mapper.convert(row) for row in chunk]
        run_end = self._run_end
        if finished:
            self.reset()
        if self.mode is Mode.BULK:
            self._schedule(more=not finished)
            return self._records(values, [None] * len(values))
        # A run of equal timestamps: until its last row, each row carries the offset from
        # before the run, so that an offset committed meanwhile resumes at the run's start.
        offsets: list[Offset | None] = [self.offset] * len(values)
        if finished:
            if offsets:
                offsets[-1] = run_end
            self.offset = run_end
        self._schedule(more=True)  # the query that found the run was full: more may follow
        return self._records(values, _maps(offsets))

    def _records(
        self, values: Sequence[list[Any]], offsets: Sequence[dict[str, int] | None]
    ) -> SourceRecordBatch:
        """The records of converted rows, each with its offset (as stored, or None), as
        columns: no SourceRecord made per row (benchmarks/jdbc_source.py). A value that
        does not fit its field is refused naming its column."""
        assert self.mapper is not None
        mapper = self.mapper
        columns = mapper.columns(values)
        if columns is not None:
            keys, structs = columns
            return SourceRecordBatch(
                self.partition,
                offsets,
                self.topic,
                mapper.value_schema,
                structs,
                key_schema=mapper.key_schema,
                keys=keys,
            )
        pairs = list(map(mapper.structs, values))
        return SourceRecordBatch(
            self.partition,
            offsets,
            self.topic,
            mapper.value_schema,
            [value for _, value in pairs],
            key_schema=mapper.key_schema,
            keys=None if mapper.key_schema is None else [key for key, _ in pairs],
        )

    def _initial_timestamp(self, now: dt.datetime) -> dt.datetime | None:
        """``timestamp.initial`` as an instant (fixed at the first read when it is -1)."""
        initial = self.config.timestamp_initial
        if initial is None:
            return None
        if self._initial is None:
            self._initial = now if initial == -1 else _EPOCH + dt.timedelta(milliseconds=initial)
        return self._initial

    def _read_incremental(self, connection: Connection) -> Sequence[SourceRecord]:
        assert self.criteria is not None and self.offset_columns is not None
        criteria, columns = self.criteria, self.offset_columns
        dialect, zone = self.dialect, self.zone
        begin = end = None
        if self.mode.uses_timestamp:
            now = dialect.current_time(connection, zone)
            end = dialect.timestamp_parameter(now - self.delay, zone)
            last_ts = self.offset.timestamp if self.offset is not None else None
            begin_at = last_ts if last_ts is not None else self._initial_timestamp(now)
            if begin_at is not None:
                begin = dialect.timestamp_parameter(begin_at, zone)
        suffix = self.config.query_suffix
        stmt = criteria.select(
            self.source,
            last=self.offset,
            begin=begin,
            end=end,
            timestamp_type=dialect.timestamp_type,
            limit=self.batch,
            suffix=suffix,
        )
        result = self._execute(connection, stmt)
        assert self.mapper is not None
        mapper = self.mapper
        if self.mode is Mode.INCREMENTING:
            return self._read_ids(result, columns)
        try:
            values = [mapper.convert(row) for row in result.fetchmany(self.batch)]
            offsets = [self._offset_of(columns, v) for v in values]
            full = len(values) >= self.batch
            run_at = offsets[-1].timestamp if full and self.mode is Mode.TIMESTAMP else None
            if run_at is not None and suffix:
                # No LIMIT was added, so the rest of the run follows in this very result.
                for row in result:
                    converted = mapper.convert(row)
                    offset = self._offset_of(columns, converted)
                    if offset.timestamp != run_at:
                        break
                    values.append(converted)
                    offsets.append(offset)
                run_at = None
        finally:
            result.close()
        if run_at is not None:
            # The batch may end inside a run of rows sharing its last timestamp, which the
            # offset cannot tell apart: stream the whole run before going past it.
            keep = len(offsets)
            while keep > 0 and offsets[keep - 1].timestamp == run_at:
                keep -= 1
            records = self._records(
                values[:keep], _maps(record_offsets(self.mode, offsets[:keep], self.offset))
            )
            if keep:
                self.offset = offsets[keep - 1]
            rest = criteria.rest_of_timestamp(
                self.source, dialect.timestamp_parameter(run_at, zone), dialect.timestamp_type
            )
            self._open_stream(connection, rest, Offset(run_at))
            if records:
                self._schedule(more=True)
                return records
            return self._continue_stream()
        self._schedule(more=full)
        if not values:
            return []
        attached = record_offsets(self.mode, offsets, self.offset)
        self.offset = offsets[-1]
        return self._records(values, _maps(attached))

    def _read_ids(self, result: CursorResult[Any], columns: OffsetColumns) -> Sequence[SourceRecord]:
        """``incrementing`` mode's records: rows in id order, each carrying its own offset,
        ``{"incrementing": id}``, built directly (no Offset per row)."""
        assert self.mapper is not None
        convert = self.mapper.convert
        position = columns.incrementing_position
        assert position is not None
        try:
            values = [convert(row) for row in result.fetchmany(self.batch)]
            ids = [x if type(x := v[position]) is int else incrementing_value(x) for v in values]
        finally:
            result.close()
        self._schedule(more=len(values) >= self.batch)
        if not values:
            return []
        self.offset = Offset(None, ids[-1])
        return self._records(values, [{INCREMENTING_FIELD: i} for i in ids])

    def _offset_of(self, columns: OffsetColumns, values: Sequence[Any]) -> Offset:
        offset = columns.offset_of(values)
        if offset.timestamp is not None:
            return Offset(self.dialect.offset_timestamp(offset.timestamp), offset.incrementing)
        return offset
