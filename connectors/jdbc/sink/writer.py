"""The batch writer both JDBC sinks share: records to rows, rows to ``executemany``, in one
transaction per ``put``.

Per (topic, key schema, row schema, action) the writer works out once the columns
(``records.plan_fields``), makes sure the table has them (``tables``), builds the
statement (``statements``) and one converter per column (``types``); a record then costs
pulling its values, converting the few that need it and a dict. Consecutive records of
the same kind form a run, written by one ``executemany`` per ``batch.size`` rows; order
across runs is kept, so a delete after an insert of the same key stays after it.

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
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection, Dialect, Engine
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.dml import Delete, Insert, Update

from connect.api import ConnectException, DataException, Schema, SinkRecord, Struct, TopicPartition
from connectors.jdbc.sink.config import SinkSettings
from connectors.jdbc.sink.records import Action, FieldsPlan, change_of, plan_fields, table_of
from connectors.jdbc.sink.statements import delete_statement, param, write_statement
from connectors.jdbc.sink.tables import TABLE_OPTIONS, Tables
from connectors.jdbc.sink.types import Converter, compose, fits_check, value_converter

log = logging.getLogger(__name__)

#: The database refused the data of a statement (not the connection or the statement).
DATA_ERRORS = (sa_exc.DataError, sa_exc.IntegrityError)

Report = Callable[[SinkRecord, DataException], None]
WRITE = Action.WRITE


def where(record: SinkRecord) -> str:
    return f"{record.topic}-{record.kafka_partition}@{record.kafka_offset}"


@dataclass(slots=True)
class Bound:
    """A plan bound to its table: the statement and how a record becomes its parameters."""

    plan: FieldsPlan
    action: Action
    statement: sa.Executable
    names: tuple[str, ...]
    columns: tuple[str, ...]
    converters: tuple[tuple[int, Converter], ...]
    key_count: int
    extract: Callable[[SinkRecord, Struct | None], list[Any]]
    #: With a positional paramstyle (SQLite's qmark, PyMySQL's format): the statement as
    #: SQLAlchemy compiled it, and where each of its parameters is in a row's values.
    sql: str | None = None
    order: tuple[int, ...] | None = None

    #: The statement's parameters for a record and its row (``struct``, see ``Change``): a
    #: dict, or a tuple in ``sql``'s order.
    params: Callable[[SinkRecord, Struct | None], Any] = field(init=False)

    def __post_init__(self) -> None:
        self.params = _params_function(self)


def _params_function(bound: Bound) -> Callable[[SinkRecord, Struct | None], Any]:
    # One closure per plan, over locals: this runs once per record, and attribute look-ups,
    # loops over nothing and zip's strictness cost as much as the work itself.
    extract, names, columns, converters = bound.extract, bound.names, bound.columns, bound.converters
    key_count = bound.key_count
    order = bound.order
    if order is not None:
        shape: Callable[[list[Any]], Any] = tuple if order == tuple(range(len(names))) else _reorder(order)
    else:

        def shape(values: list[Any]) -> Any:
            return dict(zip(names, values, strict=False))  # as long by construction

    def refuse_null_key(record: SinkRecord, values: list[Any]) -> None:
        column = columns[values.index(None)]
        raise DataException(f"record {where(record)}: primary key column {column} has no value")

    def convert_all(record: SinkRecord, values: list[Any]) -> None:
        for i, convert in converters:
            value = values[i]
            if value is not None:
                try:
                    values[i] = convert(value)
                except (ValueError, TypeError, OverflowError, ArithmeticError) as exc:
                    raise DataException(f"record {where(record)}: column {columns[i]}: {exc}") from None

    if key_count == 1 and len(converters) == 1:
        ((at, convert),) = converters

        def params(record: SinkRecord, struct: Struct | None) -> Any:
            values = extract(record, struct)
            if values[0] is None:
                refuse_null_key(record, values)
            value = values[at]
            if value is not None:
                try:
                    values[at] = convert(value)
                except (ValueError, TypeError, OverflowError, ArithmeticError):
                    convert_all(record, values)  # raises, naming the column
            return shape(values)

    else:

        def params(record: SinkRecord, struct: Struct | None) -> Any:
            values = extract(record, struct)
            if key_count and None in values[:key_count]:
                refuse_null_key(record, values)
            if converters:
                convert_all(record, values)
            return shape(values)

    return params


def _reorder(order: tuple[int, ...]) -> Callable[[list[Any]], tuple[Any, ...]]:
    get = itemgetter(*order)
    if len(order) == 1:
        return lambda values: (get(values),)
    return lambda values: tuple(get(values))


class Run:
    """Consecutive records of one kind (one statement), and their parameters."""

    __slots__ = ("bound", "params", "records")

    def __init__(self, bound: Bound | None) -> None:
        self.bound = bound
        self.records: list[SinkRecord] = []
        self.params: list[Any] = []


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
        real = []
        converters: list[tuple[int, Converter]] = []
        for i, c in enumerate(columns):
            name = self.tables.name(c.name)
            column = table.c.get(name)
            if column is None:
                raise DataException(f"table {plan.table} has no column {c.name}")
            real.append(column.name)
            try:
                convert = compose(
                    value_converter(c.schema, self.settings.zone), fits_check(column, self.dialect, c.schema)
                )
            except ValueError as exc:
                raise DataException(f"column {c.name}: {exc}") from None
            if convert is not None:
                converters.append((i, convert))
        keys = real[: len(plan.key_columns)]
        if action is Action.DELETE:
            statement: Insert | Update | Delete = delete_statement(table, keys)
        else:
            try:
                statement = write_statement(
                    table, keys, real[len(plan.key_columns) :], self.settings.insert_mode, self.dialect
                )
            except ValueError as exc:
                raise ConnectException(str(exc)) from None
        sql, order = None, None
        dialect = self.engine.dialect
        if dialect.positional:
            # SQLAlchemy compiles the statement and gives each column's bind processor; the
            # rows then go to the driver as tuples, without SQLAlchemy's per-row dict work
            # (half the time of a batch into SQLite).
            compiled = statement.compile(dialect=dialect)
            names = compiled.positiontup or []
            sql, order = str(compiled), tuple(int(n[1:]) for n in names)
            converters = _with_processors(converters, compiled, dialect, len(real))
        return Bound(
            plan,
            action,
            statement,
            tuple(param(i) for i in range(len(real))),
            tuple(c.name for c in columns),
            tuple(converters),
            len(plan.key_columns),
            plan.extract_key if action is Action.DELETE else plan.extract,
            sql,
            order,
        )

    def forget_tables(self) -> None:
        """Reflect again on next use (after a database error that may come from a table
        changed behind the sink's back)."""
        self.tables.forget()
        self._bound.clear()
        self._last = None

    # -- writing -------------------------------------------------------------------------

    def write(self, records: Sequence[SinkRecord]) -> None:
        """Write ``records`` (one ``put``): database errors other than data errors propagate
        (SQLAlchemy's), for the task to retry."""
        settings = self.settings
        written = self._written
        debezium = settings.debezium
        exactly_once = settings.exactly_once
        if exactly_once:
            self._offsets_table()  # created in a transaction of its own, before the batch's
        runs: list[Run] = []
        ends: dict[TopicPartition, int] = {}
        run = Run(None)
        bind, bad = self._bind, self._bad
        for record in records:
            if exactly_once:
                tp = record.topic_partition
                if record.kafka_offset < written.get(tp, -1):
                    continue  # committed with its row already: a redelivery
                ends[tp] = record.kafka_offset + 1
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
        if not runs and not ends:
            return
        size = settings.batch_size
        try:
            with self.engine.begin() as connection:
                for run in runs:
                    assert run.bound is not None
                    rows = run.params
                    for start in range(0, len(rows), size):
                        _execute(
                            connection, run.bound, rows if len(rows) <= size else rows[start : start + size]
                        )
                if exactly_once:
                    self._write_offsets(connection, ends)
        except DATA_ERRORS as exc:
            log.warning(
                "the database refused a batch (%s); writing it record by record", _driver_message(exc)
            )
            self._one_by_one(runs, ends)
        written.update(ends)

    def _one_by_one(self, runs: Sequence[Run], ends: Mapping[TopicPartition, int]) -> None:
        exactly_once = self.settings.exactly_once
        for run in runs:
            bound = run.bound
            assert bound is not None
            for record, params in zip(run.records, run.params, strict=True):
                try:
                    with self.engine.begin() as connection:
                        _execute(connection, bound, [params])
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


def _execute(connection: Connection, bound: Bound, rows: list[Any]) -> None:
    if bound.sql is not None:
        connection.exec_driver_sql(bound.sql, rows)
    else:
        connection.execute(bound.statement, rows)


def _with_processors(
    converters: list[tuple[int, Converter]], compiled: SQLCompiler, dialect: Dialect, count: int
) -> list[tuple[int, Converter]]:
    """``converters`` followed by SQLAlchemy's bind processor of each parameter's type (what
    ``connection.execute`` would apply), for rows sent to the driver directly."""
    by_index = dict(converters)
    for i in range(count):
        bind = compiled.binds.get(param(i))
        if bind is None:
            continue
        process = bind.type.dialect_impl(dialect).bind_processor(dialect)
        if process is not None:
            by_index[i] = compose(by_index.get(i), process)  # type: ignore[assignment]
    return sorted(by_index.items())


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
