"""Which tables the connector copies and how they are shared among tasks (pure, no I/O).

A table is named by a ``TableId`` in JDBC's terms: PostgreSQL tables have a schema
(``public.orders``), MySQL/MariaDB tables a catalog, the database (``shop.orders``),
SQLite tables neither (``orders``). The dotted, unquoted ``fqn`` is what Confluent's
connector keys offsets by, so offsets carry over between the two.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

PROTOCOL_KEY = "protocol"
PROTOCOL_VERSION_ONE = "1"
TABLE_KEY = "table"
QUERY_KEY = "query"
QUERY_VALUE = "query"

#: The source partition of the custom ``query`` (Confluent's).
QUERY_PARTITION: dict[str, str] = {QUERY_KEY: QUERY_VALUE}


@dataclass(frozen=True, slots=True)
class TableId:
    """A table's catalog (MySQL: the database), schema (PostgreSQL) and name."""

    catalog: str | None
    schema: str | None
    name: str

    @property
    def fqn(self) -> str:
        """``catalog.schema.name`` without the parts the database does not use, unquoted."""
        return ".".join(p for p in (self.catalog, self.schema, self.name) if p)

    def partition(self) -> dict[str, str]:
        """The source partition offsets are stored under (Confluent's offset protocol 1)."""
        return {PROTOCOL_KEY: PROTOCOL_VERSION_ONE, TABLE_KEY: self.fqn}

    def legacy_partition(self) -> dict[str, str]:
        """Protocol 0's partition (the bare table name), read when protocol 1 has no offset:
        offsets written by Confluent's connector before 5.x still resume."""
        return {TABLE_KEY: self.name}

    def __str__(self) -> str:
        return self.fqn


def sort_tables(tables: Iterable[TableId]) -> list[TableId]:
    """Tables in a stable order (by fully qualified name), so task assignments are too."""
    return sorted(set(tables), key=lambda t: (t.fqn, t.catalog or "", t.schema or ""))


def _matches(table: TableId, names: set[str]) -> bool:
    qualified = {table.fqn, table.name}
    if table.schema:
        qualified.add(f"{table.schema}.{table.name}")
    if table.catalog:
        qualified.add(f"{table.catalog}.{table.name}")
    return not names.isdisjoint(qualified)


def select_tables(
    found: Iterable[TableId], include: Sequence[str] = (), exclude: Sequence[str] = ()
) -> list[TableId]:
    """The tables to copy: those named in ``include`` if given, else all but ``exclude``.

    An entry names a table by its bare name (``orders``, every schema's ``orders``) or
    qualified (``public.orders``, ``shop.orders``), compared exactly (case matters).
    """
    if include:
        wanted = set(include)
        chosen = [t for t in found if _matches(t, wanted)]
    else:
        unwanted = set(exclude)
        chosen = [t for t in found if not _matches(t, unwanted)]
    return sort_tables(chosen)


def group_contiguous(items: Sequence[T], groups: int) -> list[list[T]]:
    """``items`` split into ``groups`` contiguous runs, the first ones one longer when the
    split is uneven (Kafka's ``ConnectorUtils.groupPartitions``)."""
    if groups < 1:
        raise ValueError(f"groups must be at least 1, got {groups}")
    per_group, leftover = divmod(len(items), groups)
    out: list[list[T]] = []
    start = 0
    for g in range(groups):
        size = per_group + (1 if g < leftover else 0)
        out.append(list(items[start : start + size]))
        start += size
    return out


def like_pattern(pattern: str) -> re.Pattern[str]:
    """A SQL LIKE pattern (``%`` any run, ``_`` any one character; ``\\`` escapes) as a regex,
    as JDBC's ``schemaPattern``/``catalogPattern`` are matched."""
    out = []
    escaped = False
    for ch in pattern:
        if escaped:
            out.append(re.escape(ch))
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "%":
            out.append(".*")
        elif ch == "_":
            out.append(".")
        else:
            out.append(re.escape(ch))
    return re.compile("".join(out), re.DOTALL)


def encode_tables(tables: Iterable[TableId]) -> str:
    """The task config value listing a task's tables (JSON: names may contain dots or commas)."""
    return json.dumps([[t.catalog, t.schema, t.name] for t in tables], separators=(",", ":"))


def decode_tables(value: str) -> list[TableId]:
    """Inverse of ``encode_tables``; ValueError if ``value`` is not such a list."""
    if not value.strip():
        return []
    try:
        raw = json.loads(value)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the task's tables are not a JSON list: {exc}") from None
    out = []
    for item in raw if isinstance(raw, list) else [raw]:
        if (
            not isinstance(item, list)
            or len(item) != 3
            or not isinstance(item[2], str)
            or not all(p is None or isinstance(p, str) for p in item[:2])
        ):
            raise ValueError(f"the task's tables hold {item!r}, not [catalog, schema, name]")
        out.append(TableId(item[0], item[1], item[2]))
    return out
