"""Offsets and the SQL that reads what comes after them (pure: builds statements, runs none).

The queries follow Confluent's ``TimestampIncrementingCriteria``; ``ts`` stands for the
timestamp column, or ``COALESCE`` of the timestamp columns in the order given, and
``end`` for the database's clock minus ``timestamp.delay.interval.ms``:

- ``incrementing``: ``WHERE inc > :last_inc ORDER BY inc``;
- ``timestamp``: ``WHERE ts > :last_ts AND ts < :end ORDER BY ts``;
- ``timestamp+incrementing``: ``WHERE ts < :end AND ((ts = :last_ts AND inc > :last_inc)
  OR ts > :last_ts) ORDER BY ts, inc``.

Before the first offset there is no lower bound (unless ``timestamp.initial`` gives
one). A custom ``query`` is wrapped as ``SELECT * FROM (<query>) AS ...`` so that its
own WHERE clauses keep working. At most ``batch.max.rows`` rows are read per query
(``LIMIT``) unless ``query.suffix`` is set: the suffix comes last, and may hold its
own LIMIT.

**Timestamp mode and equal timestamps.** In timestamp mode the offset cannot tell
rows with the same timestamp apart, so a batch must never end in the middle of them:
when a query returns a full batch, the rows sharing its last timestamp are read in
full by a second query (``WHERE ts = :that_ts``). Within a batch, a record's offset
only advances to its own timestamp once every row with that timestamp is in the batch
(``record_offsets``), so an offset committed mid-batch never skips rows either.

**Late commits.** A row that commits after rows with later timestamps were read is
picked up only if it commits within ``timestamp.delay.interval.ms`` of its timestamp:
the end bound keeps the newest rows out of reach for that long. Rows committed later
than that are lost in the timestamp modes (the known limitation of query-based
capture); ``incrementing`` mode still finds them by their id, log-based CDC always.
"""

from __future__ import annotations

import datetime as dt
import decimal
import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.sql import quoted_name
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.selectable import FromClause, Select

from connect.api import DataException
from connectors.jdbc.query.tables import TableId

INCREMENTING_FIELD = "incrementing"
TIMESTAMP_FIELD = "timestamp"
TIMESTAMP_NANOS_FIELD = "timestamp_nanos"
QUERY_ALIAS = "sluiceway_query"

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


class Mode(enum.Enum):
    """``mode``: how new rows are found."""

    BULK = "bulk"
    INCREMENTING = "incrementing"
    TIMESTAMP = "timestamp"
    TIMESTAMP_INCREMENTING = "timestamp+incrementing"

    @property
    def uses_timestamp(self) -> bool:
        return self in (Mode.TIMESTAMP, Mode.TIMESTAMP_INCREMENTING)

    @property
    def uses_incrementing(self) -> bool:
        return self in (Mode.INCREMENTING, Mode.TIMESTAMP_INCREMENTING)


@dataclass(frozen=True, slots=True)
class Offset:
    """Where a table's reading stands: the last timestamp (aware, UTC) and/or id read.

    Stored in Confluent's shape: ``{"incrementing": id}``, ``{"timestamp": epoch ms,
    "timestamp_nanos": nanoseconds within the second}`` or all three.
    """

    timestamp: dt.datetime | None = None
    incrementing: int | None = None

    def to_map(self) -> dict[str, int]:
        out: dict[str, int] = {}
        if self.incrementing is not None:
            out[INCREMENTING_FIELD] = self.incrementing
        if self.timestamp is not None:
            micros = _micros_since_epoch(self.timestamp)
            out[TIMESTAMP_FIELD] = micros // 1000
            out[TIMESTAMP_NANOS_FIELD] = (micros % 1_000_000) * 1000
        return out

    @classmethod
    def from_map(cls, stored: Mapping[str, Any] | None) -> Offset | None:
        """The offset stored as ``stored`` (None when nothing is stored); ValueError when it
        is not an offset of this connector."""
        if not stored:
            return None
        inc = stored.get(INCREMENTING_FIELD)
        millis = stored.get(TIMESTAMP_FIELD)
        nanos = stored.get(TIMESTAMP_NANOS_FIELD)
        for key, value in (
            (INCREMENTING_FIELD, inc),
            (TIMESTAMP_FIELD, millis),
            (TIMESTAMP_NANOS_FIELD, nanos),
        ):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                raise ValueError(f"stored offset {dict(stored)}: {key} is not an integer")
        if inc is None and millis is None:
            raise ValueError(f"stored offset {dict(stored)} has neither incrementing nor timestamp")
        timestamp = None
        if millis is not None:
            seconds = millis // 1000  # Java's Timestamp(millis) then setNanos(nanos)
            fraction_us = (nanos // 1000) if nanos is not None else (millis % 1000) * 1000
            timestamp = _EPOCH + dt.timedelta(seconds=seconds, microseconds=fraction_us)
        return cls(timestamp, inc)


def _micros_since_epoch(moment: dt.datetime) -> int:
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def identifier(name: str, quote: bool) -> quoted_name:
    """``name`` as an identifier: always quoted, or never (``quote.sql.identifiers``)."""
    return quoted_name(name, quote)


def table_source(table: TableId, quote: bool) -> FromClause:
    """The FROM of a table: MySQL's catalog (the database) or the schema qualifies it."""
    qualifier = table.schema or table.catalog
    return sa.table(
        identifier(table.name, quote),
        schema=identifier(qualifier, quote) if qualifier else None,
    )


def query_source(query: str) -> FromClause:
    """The FROM of a custom query: the query as a derived table. Its colons are escaped so
    that casts (``x::int``) and literals (``'10:30'``) are not taken for bind parameters."""
    text = query.strip().rstrip(";").replace(":", "\\:")
    return sa.text(text).columns().subquery(QUERY_ALIAS)


TimestampWrapper = Callable[[ColumnElement[Any]], ColumnElement[Any]]


def _unchanged(expression: ColumnElement[Any]) -> ColumnElement[Any]:
    return expression


@dataclass(frozen=True)
class Criteria:
    """The WHERE and ORDER BY of one table's (or the query's) incremental reads.

    ``normalize_timestamp`` wraps the timestamp expression where the database compares
    timestamps as text (SQLite), so that every value compares in one format.
    """

    mode: Mode
    timestamp_columns: tuple[str, ...] = ()
    incrementing_column: str | None = None
    quote: bool = True
    normalize_timestamp: TimestampWrapper = _unchanged

    def __post_init__(self) -> None:
        if self.mode.uses_timestamp and not self.timestamp_columns:
            raise ValueError(f"mode {self.mode.value} needs timestamp columns")
        if self.mode.uses_incrementing and not self.incrementing_column:
            raise ValueError(f"mode {self.mode.value} needs an incrementing column")

    def _column(self, name: str) -> ColumnElement[Any]:
        return sa.column(identifier(name, self.quote))

    def timestamp_expression(self) -> ColumnElement[Any]:
        columns = [self._column(c) for c in self.timestamp_columns]
        expression = columns[0] if len(columns) == 1 else sa.func.coalesce(*columns)
        return self.normalize_timestamp(expression)

    def select(
        self,
        source: FromClause,
        *,
        last: Offset | None,
        begin: Any = None,
        end: Any = None,
        timestamp_type: sa.types.TypeEngine[Any] | None = None,
        limit: int | None = None,
        suffix: str = "",
    ) -> Select[Any]:
        """The next query after ``last``.

        ``begin`` and ``end`` are the lower and upper timestamp bounds as the database
        compares them (converted by the dialect; ``begin`` None: no lower bound), given
        with ``timestamp_type``. ``limit`` caps the rows unless a ``suffix`` is given.
        """
        stmt: Select[Any] = sa.select(sa.literal_column("*")).select_from(source)
        ts_type = timestamp_type or sa.DateTime()
        if self.mode is Mode.INCREMENTING:
            inc = self._column(self.incrementing_column or "")
            if last is not None and last.incrementing is not None:
                stmt = stmt.where(inc > sa.bindparam("last_inc", last.incrementing, type_=sa.BigInteger()))
            stmt = stmt.order_by(inc.asc())
        elif self.mode is Mode.TIMESTAMP:
            ts = self.timestamp_expression()
            if begin is not None:
                stmt = stmt.where(ts > self.normalize_timestamp(sa.bindparam("begin", begin, type_=ts_type)))
            stmt = stmt.where(
                ts < self.normalize_timestamp(sa.bindparam("end", end, type_=ts_type))
            ).order_by(ts.asc())
        elif self.mode is Mode.TIMESTAMP_INCREMENTING:
            ts = self.timestamp_expression()
            inc = self._column(self.incrementing_column or "")
            stmt = stmt.where(ts < self.normalize_timestamp(sa.bindparam("end", end, type_=ts_type)))
            if begin is not None:
                begin_param = self.normalize_timestamp(sa.bindparam("begin", begin, type_=ts_type))
                if last is not None and last.incrementing is not None:
                    last_inc = sa.bindparam("last_inc", last.incrementing, type_=sa.BigInteger())
                    stmt = stmt.where(sa.or_(sa.and_(ts == begin_param, inc > last_inc), ts > begin_param))
                else:  # timestamp.initial without an id yet: that instant is included
                    stmt = stmt.where(ts >= begin_param)
            stmt = stmt.order_by(ts.asc(), inc.asc())
        if suffix:
            return stmt.suffix_with(suffix)
        if limit is not None:
            stmt = stmt.limit(limit)
        return stmt

    def rest_of_timestamp(
        self,
        source: FromClause,
        at: Any,
        timestamp_type: sa.types.TypeEngine[Any] | None = None,
    ) -> Select[Any]:
        """Every row whose timestamp is ``at``: completes the last group of a full batch in
        timestamp mode (see the module doc)."""
        ts = self.timestamp_expression()
        return (
            sa.select(sa.literal_column("*"))
            .select_from(source)
            .where(
                ts == self.normalize_timestamp(sa.bindparam("at", at, type_=timestamp_type or sa.DateTime()))
            )
        )


def bulk_select(source: FromClause, suffix: str = "") -> Select[Any]:
    """``bulk`` mode's query: the whole table (or query), each time."""
    stmt: Select[Any] = sa.select(sa.literal_column("*")).select_from(source)
    return stmt.suffix_with(suffix) if suffix else stmt


@dataclass(frozen=True, slots=True)
class OffsetColumns:
    """Where the offset columns are in a row, found once per column set."""

    timestamp_positions: tuple[int, ...]
    incrementing_position: int | None

    @classmethod
    def locate(cls, criteria: Criteria, names: Sequence[str], what: str) -> OffsetColumns:
        """Positions of ``criteria``'s columns among ``names``; an exact match wins, else a
        case-insensitive one. ConnectException-worthy ValueError naming the missing column."""

        def find(column: str, key: str) -> int:
            if column in names:
                return names.index(column)
            folded = [n.lower() for n in names]
            if column.lower() in folded:
                return folded.index(column.lower())
            raise ValueError(f"{key} {column!r} is not a column of {what} (its columns: {', '.join(names)})")

        stamps = tuple(find(c, "timestamp.column.name") for c in criteria.timestamp_columns)
        inc = (
            find(criteria.incrementing_column, "incrementing.column.name")
            if criteria.incrementing_column
            else None
        )
        return cls(stamps, inc)

    def offset_of(self, values: Sequence[Any]) -> Offset:
        """The offset of a row, from its converted values (timestamps aware, UTC)."""
        timestamp = None
        for i in self.timestamp_positions:
            if values[i] is not None:
                timestamp = values[i]
                break
        if self.timestamp_positions and timestamp is None:
            raise DataException("every timestamp column of the row is null")
        inc = None
        if self.incrementing_position is not None:
            inc = incrementing_value(values[self.incrementing_position])
        return Offset(timestamp, inc)


def incrementing_value(value: Any) -> int:
    """An incrementing column's value as an int (integers, or decimals with no fraction)."""
    if value is None:
        raise DataException("the incrementing column is null")
    if isinstance(value, bool):
        raise DataException(f"the incrementing column holds a boolean ({value})")
    if isinstance(value, int):
        return value
    if isinstance(value, decimal.Decimal) and value == value.to_integral_value():
        return int(value)
    raise DataException(f"the incrementing column holds {value!r}, not an integer")


def record_offsets(mode: Mode, offsets: Sequence[Offset], previous: Offset | None) -> list[Offset | None]:
    """The offset to attach to each row of a batch, given each row's own offset.

    In timestamp mode a row only gets its own timestamp once no later row of the batch
    shares it; before that it carries the last offset that is safe to resume from
    (``previous``, or an earlier group's; None when there is none yet). Batches end on
    whole groups, so the last row always carries its own. Other modes order rows
    totally: each carries its own.
    """
    if mode is not Mode.TIMESTAMP:
        return list(offsets)
    out: list[Offset | None] = []
    safe = previous
    for i, offset in enumerate(offsets):
        following = offsets[i + 1].timestamp if i + 1 < len(offsets) else None
        if following is None or offset.timestamp is None or following > offset.timestamp:
            safe = offset
        out.append(safe)
    return out
