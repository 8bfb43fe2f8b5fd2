"""A result row → the record's key and value Structs (pure, no I/O).

``RowMapper.build`` works the layout out once per table (or query) and column set;
``convert`` then only runs each column's converter. The value is a Struct
named after the table (unnamed for a custom query, as Confluent's connector leaves
it); the key is a Struct of the primary key columns, named ``<table>.Key``, or None
when there is no primary key.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from connect.api import DataException, Schema, SchemaBuilder, Struct
from connectors.jdbc.query.types import ColumnSpec, Converter, NumericMapping, map_column


@dataclass(frozen=True, slots=True)
class RowMapper:
    """Converts rows whose columns are ``names`` (in that order) to key and value Structs."""

    names: tuple[str, ...]
    value_schema: Schema
    key_schema: Schema | None
    converters: tuple[Converter, ...]
    key_positions: tuple[int, ...]

    @classmethod
    def build(
        cls,
        columns: Sequence[ColumnSpec],
        dialect: str,
        *,
        schema_name: str | None,
        primary_key: Sequence[str] = (),
        numeric_mapping: NumericMapping = NumericMapping.NONE,
        zone: dt.tzinfo = dt.UTC,
    ) -> RowMapper:
        """The layout of rows with ``columns``; raises DataException when two columns share
        a name (a join selecting ``a.id`` and ``b.id``: alias one of them)."""
        seen: set[str] = set()
        value = SchemaBuilder.struct()
        if schema_name:
            value.name(schema_name)
        converters = []
        fields: dict[str, Schema] = {}
        for spec in columns:
            if spec.name in seen:
                raise DataException(
                    f"the result has two columns named {spec.name!r}; give them distinct names "
                    "(SELECT a.id AS a_id, b.id AS b_id ...)"
                )
            seen.add(spec.name)
            mapping = map_column(spec, dialect, numeric_mapping, zone)
            value.field(spec.name, mapping.schema)
            fields[spec.name] = mapping.schema
            converters.append(mapping.convert)
        names = tuple(spec.name for spec in columns)
        key_schema = None
        positions: tuple[int, ...] = ()
        present = [c for c in primary_key if c in fields]
        if present and len(present) == len(primary_key):
            key = SchemaBuilder.struct().name(f"{schema_name}.Key" if schema_name else "Key")
            for name in present:
                key.field(name, _required(fields[name]))
            key_schema = key.build()
            positions = tuple(names.index(name) for name in present)
        return cls(names, value.build(), key_schema, tuple(converters), positions)

    def convert(self, row: Sequence[Any]) -> list[Any]:
        """The Connect values of one row (in ``names`` order); DataException naming the
        column whose value does not fit."""
        values: list[Any] = []
        for name, convert, raw in zip(self.names, self.converters, row, strict=True):
            if raw is None:
                values.append(None)
                continue
            try:
                values.append(convert(raw))
            except DataException as exc:
                raise DataException(f"column {name!r}: {exc}") from None
            except (TypeError, ValueError, ArithmeticError) as exc:
                raise DataException(f"column {name!r}: cannot convert {raw!r}: {exc}") from None
        return values

    def structs(self, values: list[Any]) -> tuple[Struct | None, Struct]:
        """The (key, value) Structs of converted ``values``."""
        value = Struct.from_values(self.value_schema, values)
        if self.key_schema is None:
            return None, value
        key = Struct.from_values(self.key_schema, [values[i] for i in self.key_positions])
        return key, value


def _required(schema: Schema) -> Schema:
    """``schema`` made required (a primary key column is never null)."""
    if not schema.optional:
        return schema
    return dataclasses.replace(schema, optional=False)
