"""A plan bound to its table: the statement a run of records executes, and the function that
turns a record into its parameters, made once per (table, schemas).

Parameters are pulled from a record (``FieldsPlan.extract``), checked (no null in a key
column), converted by per-column converters (``types``) and shaped as the driver takes them:
a dict by parameter name, or, with a positional paramstyle (SQLite), a tuple in the compiled
statement's order, each column's SQLAlchemy bind processor joined to its converter, so rows
go to the driver without SQLAlchemy's per-row work. ``Bound.rows`` does the same for a run of
records column by column.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.dml import Delete, Insert, Update

from connect.api import ConnectException, DataException, Schema, SinkRecord, Struct
from connectors.jdbc.sink.config import SinkSettings
from connectors.jdbc.sink.records import Action, FieldsPlan
from connectors.jdbc.sink.statements import delete_statement, param, write_statement
from connectors.jdbc.sink.tables import Tables
from connectors.jdbc.sink.types import Converter, compose, fits_check, sqlite_utc_timestamp, value_converter


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
    #: The statement as SQLAlchemy compiled it, run with ``exec_driver_sql``; with a
    #: positional paramstyle (SQLite's qmark, PyMySQL's format) ``order`` says where each of
    #: its parameters is in a row's values, else rows are dicts by parameter name.
    sql: str | None = None
    order: tuple[int, ...] | None = None
    #: The table and its columns' real names (in parameter order), for ``pg_copy``.
    table: sa.Table | None = None
    real: tuple[str, ...] = ()

    #: The statement's parameters for a record and its row (``struct``, see ``Change``): a
    #: dict, or a tuple in ``sql``'s order.
    params: Callable[[SinkRecord, Struct | None], Any] = field(init=False)
    #: The parameters of a run of records to write and their rows (one value schema, one
    #: key schema), as ``params`` gives them record by record; None when a record of the
    #: run is bad (``params`` then says which).
    rows: Callable[[Sequence[SinkRecord], Sequence[Struct]], list[Any] | None] = field(init=False)

    def __post_init__(self) -> None:
        self.params = _params_function(self)
        self.rows = _rows_function(self)


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


def _rows_function(bound: Bound) -> Callable[[Sequence[SinkRecord], Sequence[Struct]], list[Any] | None]:
    # A run column by column: values pulled, checked and converted by comprehensions and
    # zip rather than a call per record, 2.3 us a row of benchmarks/jdbc_sink.py's down to
    # about 1 (what the sink spends beside the converters' decoding and the driver).
    extract_columns, names, converters = bound.plan.extract_columns, bound.names, bound.converters
    key_count, order = bound.key_count, bound.order
    errors = (ValueError, TypeError, OverflowError, ArithmeticError)
    if order is not None and order != tuple(range(len(names))):
        positions: list[int] | None = list(order)
    else:
        positions = None
    named = order is None

    def rows(records: Sequence[SinkRecord], structs: Sequence[Struct]) -> list[Any] | None:
        columns = extract_columns(records, structs)
        if columns is None:
            return None
        for k in range(key_count):
            if None in columns[k]:
                return None
        for i, convert in converters:
            try:
                columns[i] = [None if v is None else convert(v) for v in columns[i]]
            except errors:
                return None
        if positions is not None:
            columns = [columns[i] for i in positions]
        if named:
            return [dict(zip(names, values, strict=True)) for values in zip(*columns, strict=True)]
        return list(zip(*columns, strict=True))

    return rows


def _reorder(order: tuple[int, ...]) -> Callable[[list[Any]], tuple[Any, ...]]:
    get = itemgetter(*order)
    if len(order) == 1:
        return lambda values: (get(values),)
    return lambda values: tuple(get(values))


def bind_table(
    plan: FieldsPlan,
    action: Action,
    table: sa.Table,
    tables: Tables,
    settings: SinkSettings,
    dialect: Dialect,
) -> Bound:
    """``plan``'s records as parameters of ``action``'s statement on ``table`` (reflected)."""
    columns = plan.key_columns if action is Action.DELETE else plan.columns
    real = []
    converters: list[tuple[int, Converter]] = []
    for i, c in enumerate(columns):
        name = tables.name(c.name)
        column = table.c.get(name)
        if column is None:
            raise DataException(f"table {plan.table} has no column {c.name}")
        real.append(column.name)
        try:
            convert = compose(
                value_converter(c.schema, settings.zone), fits_check(column, dialect.name, c.schema)
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
                table, keys, real[len(plan.key_columns) :], settings.insert_mode, dialect.name
            )
        except ValueError as exc:
            raise ConnectException(str(exc)) from None
    # SQLAlchemy compiles the statement and gives each column's bind processor; the rows
    # then go to the driver as they are, without SQLAlchemy's per-row parameter work
    # (half the time of a batch into SQLite, a sixth of the worker's into PostgreSQL).
    compiled = statement.compile(dialect=dialect)
    schemas = [c.schema for c in columns]
    sql, order = None, None
    if dialect.positional:
        names = compiled.positiontup or []
        sql, order = str(compiled), tuple(int(n[1:]) for n in names)
        converters = _with_processors(converters, compiled, dialect, schemas, settings.zone)
    elif set(compiled.binds) == {param(i) for i in range(len(real))}:
        # Named parameters (psycopg's pyformat): the dicts as they are; a statement with
        # parameters of its own (none the sink builds has) goes through SQLAlchemy.
        sql = str(compiled)
        converters = _with_processors(converters, compiled, dialect, schemas, settings.zone)
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
        table,
        tuple(real),
    )


def execute(connection: Connection, bound: Bound, rows: list[Any]) -> None:
    if bound.sql is not None:
        connection.exec_driver_sql(bound.sql, rows)
    else:
        connection.execute(bound.statement, rows)


def _with_processors(
    converters: list[tuple[int, Converter]],
    compiled: SQLCompiler,
    dialect: Dialect,
    schemas: Sequence[Schema],
    zone: dt.tzinfo,
) -> list[tuple[int, Converter]]:
    """``converters`` followed by SQLAlchemy's bind processor of each parameter's type (what
    ``connection.execute`` would apply), for rows sent to the driver directly."""
    by_index = dict(converters)
    for i, schema in enumerate(schemas):
        bind = compiled.binds.get(param(i))
        if bind is None:
            continue
        impl = bind.type.dialect_impl(dialect)
        process = impl.bind_processor(dialect)
        if process is not None:
            both: Converter = compose(by_index.get(i), process)  # type: ignore[assignment]
            by_index[i] = sqlite_utc_timestamp(schema, zone, impl, both) or both
    return sorted(by_index.items())
