"""The batch writer both JDBC sinks share: records to rows, rows to ``executemany``, in one
transaction per ``put``.

Per (topic, key schema, row schema, action) the writer works out once the columns
(``records.plan_fields``), makes sure the table has them (``tables``) and binds the plan to
it (``binding``: the statement and one converter per column); a record then costs pulling
its values, converting the few that need it and a dict or tuple, and consecutive Struct rows
of one kind are done a column at a time (``Bound.rows``). Consecutive records of
the same kind form a run, written by one ``executemany`` per ``batch.size`` rows (on
PostgreSQL, runs of upserts of ``pg_copy.MIN_ROWS`` rows or more by COPY); order across runs
is kept, so a delete after an insert of the same key stays after it.

Bad records: a record the sink cannot turn into a row (no primary key value, a value
the column cannot take, a value too long) is reported to the errant record reporter as a
``DataException`` naming its topic, partition, offset and column, and the others are
written. When the database refuses a batch for its data (``DataError``,
``IntegrityError``) the batch is rolled back and written again record by record, each
in its own transaction, so that only the culprits are reported.

Exactly once (``exactly.once.enabled``): the rows and the next offset of every partition
of the batch are committed in the same transaction, into the offsets table; records
below the stored offset of their partition (a redelivery) are skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from itertools import groupby
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection, Engine

from connect.api import DataException, Schema, SinkRecord, Struct, TopicPartition
from connectors.jdbc.sink.binding import Bound, bind_table, execute, where
from connectors.jdbc.sink.config import SinkSettings
from connectors.jdbc.sink.records import Action, FieldsPlan, change_of, plan_fields, table_of
from connectors.jdbc.sink.statements import param, write_statement
from connectors.jdbc.sink.tables import TABLE_OPTIONS, Tables

if TYPE_CHECKING:
    from connectors.jdbc.sink.pg_copy import Copier

log = logging.getLogger(__name__)

#: The database refused the data of a statement (not the connection or the statement).
DATA_ERRORS = (sa_exc.DataError, sa_exc.IntegrityError)

Report = Callable[[SinkRecord, DataException], None]
WRITE = Action.WRITE
TRUNCATE = Action.TRUNCATE


class Run:
    """Consecutive records of one kind (one statement), and their parameters."""

    __slots__ = ("bound", "params", "records", "truncate")

    def __init__(self, bound: Bound | None, truncate: sa.Executable | None = None) -> None:
        self.bound = bound
        self.truncate = truncate  # a run of its own: DELETE FROM the table
        self.records: list[SinkRecord] = []
        self.params: list[Any] = []


class Prepared:
    """A batch ready to execute: its runs, and the next offset of each partition it covers
    (exactly once only)."""

    __slots__ = ("ends", "runs")

    def __init__(self, runs: list[Run], ends: dict[TopicPartition, int]) -> None:
        self.runs = runs
        self.ends = ends


class Writer:
    """Writes batches of records to one database."""

    def __init__(self, settings: SinkSettings, engine: Engine, report: Report) -> None:
        self.settings = settings
        self.engine = engine
        self.dialect = engine.dialect.name
        self.report = report
        self.tables = Tables(settings, self.dialect)
        self._bound: dict[tuple[str, Schema | None, Schema | None, Action], Bound] = {}
        self._written: dict[TopicPartition, int] = {}
        self._offsets: sa.Table | None = None
        self._offsets_upsert: sa.Executable | None = None
        self._last: tuple[Schema | None, Schema | None, Action, str, Bound] | None = None
        self._copier: Copier | None = None
        # COPY through psycopg 3 (the driver JDBC URLs translate to); another PostgreSQL
        # driver a SQLAlchemy URL names keeps executemany.
        if self.dialect == "postgresql" and engine.dialect.driver == "psycopg":
            from connectors.jdbc.sink.pg_copy import Copier  # psycopg: PostgreSQL only

            self._copier = Copier(settings.insert_mode)

    # -- exactly once: the offsets table ---------------------------------------------------

    def _offsets_table(self) -> sa.Table:
        if self._offsets is None:
            name = self.tables.name(self.settings.offsets_table)
            self._offsets = sa.Table(
                name,
                sa.MetaData(),
                sa.Column(self.tables.name("connector"), sa.String(255), primary_key=True),
                sa.Column(self.tables.name("topic"), sa.String(255), primary_key=True),
                sa.Column(
                    self.tables.name("kafka_partition"), sa.Integer, primary_key=True, autoincrement=False
                ),
                sa.Column(self.tables.name("next_offset"), sa.BigInteger, nullable=False),
                **TABLE_OPTIONS,
            )
            with self.engine.begin() as connection:
                self._offsets.create(connection, checkfirst=True)
            keys = [c.name for c in self._offsets.columns][:3]
            self._offsets_upsert = write_statement(
                self._offsets, keys, [self._offsets.columns[3].name], "upsert", self.dialect
            )
        return self._offsets

    def stored_offsets(self, partitions: Collection[TopicPartition]) -> dict[TopicPartition, int]:
        """The next offsets the database holds for ``partitions`` (exactly once only)."""
        table = self._offsets_table()
        connector, topic, partition, offset = table.columns
        wanted = {(tp.topic, tp.partition) for tp in partitions}
        with self.engine.connect() as connection:
            rows = connection.execute(
                sa.select(topic, partition, offset).where(connector == self.settings.connector)
            ).all()
        found = {TopicPartition(t, p): int(o) for t, p, o in rows if (t, p) in wanted}
        self._written.update(found)
        return found

    def forget(self, partitions: Collection[TopicPartition]) -> None:
        for tp in partitions:
            self._written.pop(tp, None)

    def _write_offsets(self, connection: Connection, offsets: Mapping[TopicPartition, int]) -> None:
        if not offsets:
            return
        self._offsets_table()
        assert self._offsets_upsert is not None
        connection.execute(
            self._offsets_upsert,
            [
                {param(0): self.settings.connector, param(1): tp.topic, param(2): tp.partition, param(3): off}
                for tp, off in offsets.items()
            ],
        )

    # -- plans -------------------------------------------------------------------------

    def _bind(self, record: SinkRecord, action: Action, struct: Struct | None) -> Bound | None:
        row_schema = struct.schema if struct is not None else None
        if self.settings.source_placeholders:
            return self._bind_by_source(record, action, row_schema)
        last = self._last
        # Records of a batch mostly share one kind: compared by identity before hashing schemas.
        if (
            last is not None
            and last[0] is row_schema
            and last[1] is record.key_schema
            and last[2] is action
            and last[3] == record.topic
        ):
            return last[4]
        cache_key = (record.topic, record.key_schema, row_schema, action)
        bound = self._bound.get(cache_key)
        if bound is not None:
            self._last = (row_schema, record.key_schema, action, record.topic, bound)
        if bound is None:
            plan = plan_fields(self.settings, record.topic, record.key_schema, row_schema)
            made = self._make_bound(plan, action)
            if made is None:
                return None  # a delete from a table not created yet: nothing to delete
            bound = self._bound[cache_key] = made
            self._last = (row_schema, record.key_schema, action, record.topic, bound)
        return bound

    def _bind_by_source(self, record: SinkRecord, action: Action, row_schema: Schema | None) -> Bound | None:
        # Tables named by the change event's source: the name is part of the plan's key.
        table = table_of(record, self.settings)
        cache_key = (f"{record.topic}\0{table}", record.key_schema, row_schema, action)
        bound = self._bound.get(cache_key)
        if bound is None:
            plan = plan_fields(self.settings, record.topic, record.key_schema, row_schema, table)
            bound = self._make_bound(plan, action)
            if bound is not None:
                self._bound[cache_key] = bound
        return bound

    def _make_bound(self, plan: FieldsPlan, action: Action) -> Bound | None:
        columns = plan.key_columns if action is Action.DELETE else plan.columns
        if action is Action.DELETE and not plan.key_columns:
            raise DataException("deletes need primary key columns")
        with self.engine.begin() as connection:
            if action is Action.DELETE:
                table = self.tables.find(connection, plan.table)
                if table is None:
                    return None
            else:
                table = self.tables.ensure(connection, plan.table, columns)
        return bind_table(plan, action, table, self.tables, self.settings, self.engine.dialect)

    def _truncate_statement(self, record: SinkRecord) -> sa.Executable | None:
        """DELETE of every row of ``record``'s table (transactional, unlike TRUNCATE in
        MySQL); None when the table does not exist."""
        name = table_of(record, self.settings) if self.settings.source_placeholders else None
        name = name or self.settings.table_for(record.topic)
        with self.engine.connect() as connection:
            table = self.tables.find(connection, name)
        return None if table is None else sa.delete(table)

    def forget_tables(self) -> None:
        """Reflect again on next use (after a database error that may come from a table
        changed behind the sink's back)."""
        self.tables.forget()
        self._bound.clear()
        self._last = None
        if self._copier is not None:
            self._copier.forget()

    # -- writing -------------------------------------------------------------------------

    def write(self, records: Sequence[SinkRecord]) -> None:
        """Write ``records`` (one ``put``): database errors other than data errors propagate
        (SQLAlchemy's), for the task to retry."""
        prepared = self.prepare(records)
        if prepared is not None:
            self.commit(prepared)

    def prepare(self, records: Sequence[SinkRecord]) -> Prepared | None:
        """``records`` as runs of statement parameters, bad records reported; None when
        there is nothing to write. Creates and evolves tables as needed."""
        settings = self.settings
        ends: dict[TopicPartition, int] = {}
        if settings.exactly_once:
            self._offsets_table()  # created in a transaction of its own, before the batch's
            records = self._unwritten(records, ends)
        runs: list[Run] = []
        if settings.debezium or settings.source_placeholders:
            self._prepare_records(records, runs)
        else:
            self._prepare_rows(records, runs)
        if not runs and not ends:
            return None
        return Prepared(runs, ends)

    def _unwritten(self, records: Sequence[SinkRecord], ends: dict[TopicPartition, int]) -> list[SinkRecord]:
        """``records`` less those committed with their rows already (a redelivery); ``ends``
        gets the next offset of each partition."""
        written = self._written
        kept = []
        for record in records:
            tp = record.topic_partition
            if record.kafka_offset < written.get(tp, -1):
                continue
            ends[tp] = record.kafka_offset + 1
            kept.append(record)
        return kept

    def _prepare_rows(self, records: Sequence[SinkRecord], runs: list[Run]) -> None:
        """Confluent's records: consecutive Struct values of one topic, key schema and value
        schema (a poll's records mostly are) become their run's parameters in one
        ``Bound.rows`` call; anything else, or a group holding a bad record, goes record by
        record (``_prepare_records``), which reports the bad ones."""
        values = [r.value for r in records]
        # Kinds compared by identity (the converters share a schema object per schema), as
        # _bind does: equal schemas that are distinct objects only make shorter groups.
        kinds = zip(
            [id(v.schema) if v.__class__ is Struct else None for v in values],
            [id(r.key_schema) for r in records],
            [r.topic for r in records],
            strict=True,
        )
        start = 0
        for (schema_id, _, _), group in groupby(kinds):
            end = start + len(list(group))
            some, structs = records[start:end], values[start:end]
            start = end
            if schema_id is None:
                self._prepare_records(some, runs)
                continue
            try:
                bound = self._bind(some[0], WRITE, structs[0])
                rows = bound.rows(some, structs) if bound is not None else None
            except DataException:
                rows = None
            if rows is None:
                self._prepare_records(some, runs)  # reports the bad, or skips what has no table
                continue
            run = runs[-1] if runs else None
            if run is None or run.bound is not bound:
                run = Run(bound)
                runs.append(run)
            run.records.extend(some)
            run.params.extend(rows)

    def _prepare_records(self, records: Sequence[SinkRecord], runs: list[Run]) -> None:
        """``records`` one by one into ``runs`` (continuing the last one)."""
        settings = self.settings
        debezium = settings.debezium
        run = runs[-1] if runs else Run(None)
        bind, bad = self._bind, self._bad
        for record in records:
            struct: Struct | None
            try:
                value = record.value
                if value.__class__ is Struct and not debezium:
                    action, struct = WRITE, value  # the common case, without change_of's questions
                else:
                    change = change_of(record, settings)
                    if change is None:
                        continue
                    action, struct = change
                    if action is TRUNCATE:
                        emptied = self._truncate_statement(record)
                        if emptied is not None:
                            run = Run(None, emptied)
                            runs.append(run)
                        continue
                bound = bind(record, action, struct)
                if bound is None:
                    continue
                params = bound.params(record, struct)
            except DataException as exc:
                bad(record, exc)
                continue
            if bound is not run.bound:
                run = Run(bound)
                runs.append(run)
            run.records.append(record)
            run.params.append(params)

    def commit(self, prepared: Prepared) -> None:
        """Execute ``prepared`` in one transaction (with its offsets when exactly once); a
        batch the database refuses for its data is written record by record."""
        runs, ends = prepared.runs, prepared.ends
        exactly_once = self.settings.exactly_once
        size = self.settings.batch_size
        copier = self._copier
        try:
            with self.engine.begin() as connection:
                if copier is not None:
                    copier.used.clear()
                for run in runs:
                    if run.truncate is not None:
                        connection.execute(run.truncate)
                        continue
                    bound = run.bound
                    assert bound is not None
                    rows = run.params
                    for start in range(0, len(rows), size):
                        chunk = rows if len(rows) <= size else rows[start : start + size]
                        if copier is not None and copier.takes(bound, len(chunk)):
                            copier.upsert(connection, bound, chunk)
                        else:
                            execute(connection, bound, chunk)
                if exactly_once:
                    self._write_offsets(connection, ends)
        except DATA_ERRORS as exc:
            log.warning(
                "the database refused a batch (%s); writing it record by record", _driver_message(exc)
            )
            self._one_by_one(runs, ends)
        self._written.update(ends)

    def _one_by_one(self, runs: Sequence[Run], ends: Mapping[TopicPartition, int]) -> None:
        exactly_once = self.settings.exactly_once
        for run in runs:
            if run.truncate is not None:
                with self.engine.begin() as connection:
                    connection.execute(run.truncate)
                continue
            bound = run.bound
            assert bound is not None
            for record, params in zip(run.records, run.params, strict=True):
                try:
                    with self.engine.begin() as connection:
                        execute(connection, bound, [params])
                        if exactly_once:
                            self._write_offsets(connection, {record.topic_partition: record.kafka_offset + 1})
                except DATA_ERRORS as exc:
                    self._bad(
                        record,
                        DataException(
                            f"record {where(record)}: table {bound.plan.table}"
                            f"{_column_in(exc, bound.columns)} refused it: {_driver_message(exc)}"
                        ),
                    )
        if exactly_once and ends:
            with self.engine.begin() as connection:
                self._write_offsets(connection, ends)

    def _bad(self, record: SinkRecord, error: DataException) -> None:
        message = str(error)
        if where(record) not in message:
            error = DataException(f"record {where(record)}: {message}")
        log.warning("%s", error)
        self.report(record, error)


def _driver_message(exc: BaseException) -> str:
    if isinstance(exc, sa_exc.DBAPIError) and exc.orig is not None:
        return f"{type(exc.orig).__name__}: {str(exc.orig).strip()}"
    return f"{type(exc).__name__}: {exc}"


def _column_in(exc: BaseException, columns: Sequence[str]) -> str:
    """`, column c` when the driver's message names one of the columns."""
    text = str(exc.orig if isinstance(exc, sa_exc.DBAPIError) else exc)
    for name in columns:
        if f"'{name}'" in text or f'"{name}"' in text or f"column {name} " in text:
            return f", column {name},"
    return ""
