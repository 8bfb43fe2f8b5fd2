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
import decimal
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from connect.api import (
    DataException,
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    Struct,
    StructColumn,
    Time,
    Timestamp,
)
from connectors.jdbc.query.types import ColumnSpec, Converter, NumericMapping, map_column, passthrough_type

_LOGICAL_TYPES: dict[str, type] = {
    Decimal.LOGICAL_NAME: decimal.Decimal,
    Date.LOGICAL_NAME: dt.date,
    Time.LOGICAL_NAME: dt.time,
    Timestamp.LOGICAL_NAME: dt.datetime,
}


def _unset(*args: Any) -> Any:
    raise AssertionError("set in __post_init__")


@dataclass(frozen=True, slots=True)
class RowMapper:
    """Converts rows whose columns are ``names`` (in that order) to key and value Structs."""

    names: tuple[str, ...]
    value_schema: Schema
    key_schema: Schema | None
    converters: tuple[Converter, ...]
    key_positions: tuple[int, ...]
    #: Generated per layout (``_generate``): ``convert`` and ``structs`` for the common case.
    _fast_convert: Callable[[Sequence[Any]], list[Any]] = dataclasses.field(
        default=_unset, compare=False, repr=False
    )
    _fast_structs: Callable[[list[Any]], tuple[Struct | None, Struct] | None] = dataclasses.field(
        default=_unset, compare=False, repr=False
    )

    def __post_init__(self) -> None:
        convert, structs = _generate(self)
        object.__setattr__(self, "_fast_convert", convert)
        object.__setattr__(self, "_fast_structs", structs)

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
        try:
            # The common case in one generated expression; when something does not
            # convert, the per-column loop runs again to say which column.
            return self._fast_convert(row)
        except (DataException, TypeError, ValueError, ArithmeticError):
            return self._convert_each(row)

    def _convert_each(self, row: Sequence[Any]) -> list[Any]:
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

    def columns(self, rows: Sequence[list[Any]]) -> tuple[StructColumn | None, StructColumn] | None:
        """The (keys, values) of converted ``rows`` as StructColumns, each field's values one
        column checked at once (``Schema.fits_all``) rather than a Struct per row: half the
        JSON converter's cost of a table's rows (``benchmarks/jdbc_source.py``). None when
        a value does not fit: ``structs``, row by row, then says which."""
        n = len(rows)
        width = len(self.names)
        if not n or any(len(r) != width for r in rows):
            return None
        fields: list[Sequence[Any]] = [list(c) for c in zip(*rows, strict=True)]
        value_fields = self.value_schema.fields
        if not all(f.schema.fits_all(c) for f, c in zip(value_fields, fields, strict=True)):
            return None
        values = StructColumn(self.value_schema, fields, n)
        if self.key_schema is None:
            return None, values
        key_fields = [fields[i] for i in self.key_positions]
        if not all(f.schema.fits_all(c) for f, c in zip(self.key_schema.fields, key_fields, strict=True)):
            return None  # a null in a key column
        return StructColumn(self.key_schema, key_fields, n), values

    def structs(self, values: list[Any]) -> tuple[Struct | None, Struct]:
        """The (key, value) Structs of converted ``values``."""
        fast = self._fast_structs(values)
        if fast is not None:
            return fast
        value = Struct.from_values(self.value_schema, values)
        if self.key_schema is None:
            return None, value
        key = Struct.from_values(self.key_schema, [values[i] for i in self.key_positions])
        return key, value


def _generate(
    mapper: RowMapper,
) -> tuple[Callable[[Sequence[Any]], list[Any]], Callable[[list[Any]], tuple[Struct | None, Struct] | None]]:
    """Straight-line code for one layout: ``convert`` without the per-column loop (a value a
    converter returns unchanged is kept as it is), and the Structs of values whose types
    all fit their fields as ``Struct.from_values`` checks them (None when one may not:
    ``structs`` then checks them one by one). Paid for by ``benchmarks/jdbc_source.py``;
    ``tests/connectors/jdbc/test_query_types.py`` holds both to the checked paths."""
    n = len(mapper.converters)
    namespace: dict[str, Any] = {
        "_Struct": Struct,
        "_value_schema": mapper.value_schema,
        "_key_schema": mapper.key_schema,
    }
    xs = "".join(f"x{i}, " for i in range(n))
    items = []
    for i, convert in enumerate(mapper.converters):
        namespace[f"c{i}"] = convert
        keep = passthrough_type(convert)
        if keep is not None:
            namespace[f"k{i}"] = keep
            items.append(f"x{i} if x{i} is None or type(x{i}) is k{i} else c{i}(x{i})")
        else:
            items.append(f"None if x{i} is None else c{i}(x{i})")
    checks = []
    for i, f in enumerate(mapper.value_schema.fields):
        fs = f.schema
        fit: type | None
        if fs.name in _LOGICAL_TYPES:
            fit = _LOGICAL_TYPES[fs.name]
        elif fs.plain_type is not None:
            fit = fs.plain_type
        elif fs.int_range is not None:
            fit = int
        else:
            fit = None
        if fit is None:
            checks = ["False"]
            break
        namespace[f"t{i}"] = fit
        check = f"type(x{i}) is t{i}"
        if fs.int_range is not None and fs.name not in _LOGICAL_TYPES:
            lo, hi = fs.int_range
            check += f" and {lo} <= x{i} <= {hi}"
        if (fs.optional or fs.default_value is not None) and i not in mapper.key_positions:
            check = f"(x{i} is None or ({check}))"  # null fits; a key field is never null
        checks.append(check)
    key = (
        "None"
        if mapper.key_schema is None
        else "_struct(_key_schema, [" + "".join(f"x{i}, " for i in mapper.key_positions) + "])"
    )
    source = f"""
_struct = _Struct.unchecked

def convert(row):
    ({xs}) = row
    return [{", ".join(items)}]

def structs(values):
    if type(values) is not list or len(values) != {n}:
        return None
    ({xs}) = values
    if {" and ".join(checks) or "True"}:
        return {key}, _struct(_value_schema, values)
    return None
"""
    exec(source, namespace)  # built from positions and types only
    return namespace["convert"], namespace["structs"]


def _required(schema: Schema) -> Schema:
    """``schema`` made required (a primary key column is never null)."""
    if not schema.optional:
        return schema
    return dataclasses.replace(schema, optional=False)
