"""One captured table as events see it: its topic, Key/Value/Envelope schemas and column parsers.

A model is built from the table's columns (from a pgoutput Relation message or, for the
snapshot, from the catalog) plus what only the catalog knows: the primary key and which
columns are NOT NULL. Rows arrive as tuples of texts in the table's column order (the
order of both Relation messages and the snapshot's SELECT list) and become Structs here.

- ``Value`` has the captured columns (``column.include.list``/``column.exclude.list``),
  required where the column is NOT NULL; ``Key`` has the primary key columns (or those of
  the replica identity index), always; a table with neither has no key.
- A NULL in a column the model thinks NOT NULL (the catalog changed since the row was
  written) fails with a DataException naming the column rather than inventing a value.
- A column whose type has no mapping fails the model with ``UnsupportedColumnError``,
  unless the column is neither captured nor part of the key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from connect.api import ConnectException, DataException, Schema, SchemaBuilder, Struct
from connectors.jdbc.cdc.catalog import ColumnInfo, TableName
from connectors.jdbc.cdc.events import envelope_schema
from connectors.jdbc.cdc.filters import Filters
from connectors.jdbc.cdc.pgoutput import UNCHANGED_TOAST, ColumnValue
from connectors.jdbc.cdc.values import Conversion, UnsupportedTypeError, ValueSettings, conversion_for

__all__ = ["ColumnModel", "TableModel", "UnsupportedColumnError", "build_table_model"]


class UnsupportedColumnError(ConnectException):
    """A captured column has a type the connector cannot map; the message says what to do."""


@dataclass(frozen=True, slots=True)
class ColumnModel:
    info: ColumnInfo
    value: Conversion | None  # None: the column is not captured in the value
    key: Conversion | None  # None: not a key column


class TableModel:
    """The schemas and parsers of one table (immutable; rebuilt when the table changes)."""

    __slots__ = (
        "columns",
        "envelope_schema",
        "key_indexes",
        "key_schema",
        "name",
        "replica_identity",
        "topic",
        "value_indexes",
        "value_schema",
    )

    def __init__(
        self,
        name: TableName,
        topic: str,
        columns: tuple[ColumnModel, ...],
        key_indexes: tuple[int, ...],
        key_schema: Schema | None,
        value_schema: Schema,
        replica_identity: str,
    ) -> None:
        self.name = name
        self.topic = topic  # also the stem of the schema names
        self.columns = columns
        self.key_schema = key_schema
        self.value_schema = value_schema
        self.envelope_schema = envelope_schema(f"{topic}.Envelope", value_schema)
        self.replica_identity = replica_identity
        self.key_indexes = key_indexes  # in the key's column order
        self.value_indexes = tuple(i for i, c in enumerate(columns) if c.value is not None)

    def __repr__(self) -> str:
        return f"TableModel({self.name}, {[c.info.name for c in self.columns]})"

    @property
    def has_key(self) -> bool:
        return self.key_schema is not None

    def _convert(
        self, column: ColumnModel, conversion: Conversion, text: ColumnValue, previous: Any = None
    ) -> Any:
        if text is None:
            if not conversion.schema.optional:
                raise DataException(
                    f"{self.name}.{column.info.name}: NULL in a column the catalog says is NOT NULL "
                    "(the table changed after this row was written?)"
                )
            return None
        if not isinstance(text, str):
            if text is UNCHANGED_TOAST:
                # The server leaves out TOASTed values an update did not change; the old row
                # (REPLICA IDENTITY FULL) still has them, else Debezium's placeholder stands in.
                return previous if previous is not None else conversion.unavailable
            raise DataException(f"{self.name}.{column.info.name}: binary pgoutput values are not requested")
        try:
            return conversion.parse(text)
        except (DataException, ValueError, ArithmeticError) as exc:
            shown = text if len(text) <= 60 else text[:57] + "..."
            where = f"{self.name}.{column.info.name} ({column.info.pg_type.qualified})"
            raise DataException(f"{where}: cannot convert {shown!r}: {exc}") from None

    def key(self, values: Sequence[ColumnValue]) -> Struct | None:
        if self.key_schema is None:
            return None
        out = []
        for i in self.key_indexes:
            column = self.columns[i]
            assert column.key is not None
            out.append(self._convert(column, column.key, values[i]))
        return Struct.from_values(self.key_schema, out)

    def row(self, values: Sequence[ColumnValue], old: Struct | None = None) -> Struct:
        """The Value struct of a whole row; unchanged TOASTed values are taken from ``old`` if given."""
        out = []
        previous = old.values(defaults=False) if old is not None else None
        for n, i in enumerate(self.value_indexes):
            column = self.columns[i]
            assert column.value is not None
            out.append(self._convert(column, column.value, values[i], previous[n] if previous else None))
        return Struct.from_values(self.value_schema, out)

    def key_only_row(self, values: Sequence[ColumnValue]) -> Struct:
        """The Value struct of an old key tuple (REPLICA IDENTITY DEFAULT): the key columns, and
        for the rest null, or the type's zero where the field is required (as Debezium does)."""
        out = []
        for i in self.value_indexes:
            column = self.columns[i]
            assert column.value is not None
            if column.key is not None and values[i] is not None:
                out.append(self._convert(column, column.value, values[i]))
            else:
                out.append(column.value.fallback)
        return Struct.from_values(self.value_schema, out)

    def same_key(self, old: Sequence[ColumnValue], new: Sequence[ColumnValue]) -> bool:
        """Whether an update kept the key. A key column the old tuple lacks (a replica identity
        index other than the primary key) or left unchanged (TOAST) counts as kept."""
        return all(
            old[i] is None or old[i] is UNCHANGED_TOAST or new[i] is UNCHANGED_TOAST or old[i] == new[i]
            for i in self.key_indexes
        )


def build_table_model(
    prefix: str,
    name: TableName,
    columns: Sequence[ColumnInfo],
    key_columns: Sequence[str],
    filters: Filters,
    settings: ValueSettings,
    replica_identity: str = "d",
) -> TableModel:
    """The model of table ``name``; ``UnsupportedColumnError`` names a column that cannot be mapped."""
    base = f"{prefix}.{name.schema}.{name.table}"
    keys = set(key_columns)
    models = []
    for info in columns:
        in_value = filters.captures_column(name.schema, name.table, info.name)
        in_key = info.name in keys
        try:
            value = (
                conversion_for(info.pg_type, info.modifier, not info.not_null, settings) if in_value else None
            )
            key = conversion_for(info.pg_type, info.modifier, False, settings) if in_key else None
        except UnsupportedTypeError as exc:
            raise UnsupportedColumnError(
                f"column {info.name} of table {name} has type {exc.pg_type.qualified}, which the connector "
                f"cannot map: leave the column out with column.exclude.list={name}.{info.name} (or exclude "
                "the table), or set include.unknown.datatypes=true to receive its text as a string"
            ) from None
        models.append(ColumnModel(info, value, key))
    key_schema = None
    position = {m.info.name: i for i, m in enumerate(models)}
    # The key's fields follow the order of the key's definition (PRIMARY KEY (a, b)).
    key_indexes = tuple(position[c] for c in key_columns if c in position)
    if key_indexes:
        builder = SchemaBuilder.struct().name(f"{base}.Key")
        for i in key_indexes:
            conversion = models[i].key
            assert conversion is not None
            builder.field(models[i].info.name, conversion.schema)
        key_schema = builder.build()
    value_builder = SchemaBuilder.struct().name(f"{base}.Value").optional()
    for m in models:
        if m.value is not None:
            value_builder.field(m.info.name, m.value.schema)
    return TableModel(
        name, base, tuple(models), key_indexes, key_schema, value_builder.build(), replica_identity
    )
