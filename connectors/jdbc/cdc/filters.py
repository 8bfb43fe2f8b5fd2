"""Which schemas, tables and columns the connector captures (Debezium's include/exclude lists).

Each list holds Java regular expressions matched, anchored and case-insensitively as
Debezium matches them, against ``schema``, ``schema.table`` or ``schema.table.column``.
An include list captures only what it matches; an exclude list captures everything
else. System schemas (``pg_catalog``, ``information_schema``, ``pg_toast*``) are never
captured. Primary key columns stay in the event key even when excluded from the value.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from connect.api import compile_java_regex

__all__ = ["Filters", "compile_patterns"]

_SYSTEM_SCHEMAS = re.compile(r"pg_catalog|information_schema|pg_toast.*|pg_temp.*")


def compile_patterns(patterns: Sequence[str]) -> tuple[re.Pattern[str], ...]:
    """Compile a Debezium regex list; ValueError naming the pattern that does not compile."""
    compiled = []
    for p in patterns:
        try:
            compiled.append(compile_java_regex(p, re.IGNORECASE))
        except ValueError as exc:
            raise ValueError(f"invalid regular expression {p!r}: {exc}") from None
    return tuple(compiled)


def _selects(name: str, include: tuple[re.Pattern[str], ...], exclude: tuple[re.Pattern[str], ...]) -> bool:
    if include:
        return any(p.fullmatch(name) for p in include)
    return not any(p.fullmatch(name) for p in exclude)


@dataclass(frozen=True, slots=True)
class Filters:
    schema_include: tuple[re.Pattern[str], ...] = ()
    schema_exclude: tuple[re.Pattern[str], ...] = ()
    table_include: tuple[re.Pattern[str], ...] = ()
    table_exclude: tuple[re.Pattern[str], ...] = ()
    column_include: tuple[re.Pattern[str], ...] = ()
    column_exclude: tuple[re.Pattern[str], ...] = ()

    @classmethod
    def of(
        cls,
        schema_include: Sequence[str] = (),
        schema_exclude: Sequence[str] = (),
        table_include: Sequence[str] = (),
        table_exclude: Sequence[str] = (),
        column_include: Sequence[str] = (),
        column_exclude: Sequence[str] = (),
    ) -> Filters:
        return cls(
            compile_patterns(schema_include),
            compile_patterns(schema_exclude),
            compile_patterns(table_include),
            compile_patterns(table_exclude),
            compile_patterns(column_include),
            compile_patterns(column_exclude),
        )

    def captures_table(self, schema: str, table: str) -> bool:
        if _SYSTEM_SCHEMAS.fullmatch(schema):
            return False
        return _selects(schema, self.schema_include, self.schema_exclude) and _selects(
            f"{schema}.{table}", self.table_include, self.table_exclude
        )

    def captures_column(self, schema: str, table: str, column: str) -> bool:
        return _selects(f"{schema}.{table}.{column}", self.column_include, self.column_exclude)
