"""Records to rows: what each record asks (write a row, delete one, nothing) and which
columns its key and value fill, per ``pk.mode`` and the field filters. Pure.

``change_of`` reads a record: a Struct value is a row to write; a null value (tombstone)
deletes by key when deletes are enabled; a Debezium change event (``before``, ``after``,
``op``) writes ``after`` for ``c``/``r``/``u`` and deletes for ``d`` (by its key, or by
``before``'s fields with ``primary.key.mode=record_value``), and ``t`` empties the table
with ``truncate.enabled`` (else it is skipped).

``FieldsPlan`` is worked out once per (topic, key schema, value schema), as Confluent's
``FieldsMetadata``: the key columns (``pk.mode``), then the other value fields, and a
function pulling a record's values in that order.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter
from typing import Any, NamedTuple

from connect.api import DataException, Schema, SinkRecord, Struct, Type
from connectors.jdbc.sink.config import KAFKA_PK_FIELDS, SinkSettings

_KAFKA_SCHEMAS = (Schema.STRING_SCHEMA, Schema.INT32_SCHEMA, Schema.INT64_SCHEMA)


class Action(enum.Enum):
    WRITE = "write"
    DELETE = "delete"
    TRUNCATE = "truncate"  # every row of the table (Debezium's truncate.enabled)


class Change(NamedTuple):
    """What one record asks: ``struct`` holds the row's fields (for a delete by
    ``record_value``, the old row's), None for a delete by the record's key."""

    action: Action
    struct: Struct | None


def is_envelope(schema: Schema | None) -> bool:
    """Whether values of ``schema`` are Debezium change events."""
    if schema is None or schema.type is not Type.STRUCT:
        return False
    return schema.field("op") is not None and (
        schema.field("after") is not None or schema.field("before") is not None
    )


def change_of(record: SinkRecord, settings: SinkSettings) -> Change | None:
    """What ``record`` asks; None when it is skipped. Raises DataException for values
    the sink cannot write."""
    value = record.value
    if value is None:
        if settings.delete_enabled:
            if settings.pk_mode != "record_key":
                return None  # a tombstone after a Debezium delete event: the event deleted already
            return Change(Action.DELETE, None)
        if settings.debezium:
            return None  # Debezium's sink ignores tombstones unless deletes are on
        raise DataException(
            "the record has a null value (a tombstone) and delete.enabled=false: "
            "set delete.enabled=true with pk.mode=record_key to delete by key"
        )
    if not isinstance(value, Struct):
        raise DataException(
            f"the value is a {type(value).__name__}, not a Struct: the JDBC sink needs values with a "
            "schema (a converter with schemas, e.g. JsonConverter with schemas.enable=true, or Avro)"
        )
    if settings.debezium and is_envelope(value.schema):
        op = value.get("op")
        if op in ("c", "r", "u"):
            after = value.get("after")
            if not isinstance(after, Struct):
                raise DataException(f"a Debezium {op!r} event without 'after'")
            return Change(Action.WRITE, after)
        if op == "d":
            if not settings.delete_enabled:
                return None
            before = value.get("before")
            if settings.pk_mode == "record_value":
                if not isinstance(before, Struct):
                    raise DataException(
                        "a Debezium delete event without 'before' cannot delete by record_value"
                    )
                return Change(Action.DELETE, before)
            return Change(Action.DELETE, None)
        if op == "t":
            return Change(Action.TRUNCATE, None) if settings.truncate_enabled else None
        raise DataException(f"unknown Debezium operation {op!r}")
    return Change(Action.WRITE, value)


@dataclass(frozen=True, slots=True)
class ColumnDef:
    name: str
    schema: Schema
    key: bool


Extract = Callable[[SinkRecord, Struct | None], list[Any]]
#: A run's values column by column (plan order), from its records and their rows (one value
#: schema, one key schema); None when a record's key is not what the plan takes.
ExtractColumns = Callable[[Sequence[SinkRecord], Sequence[Struct]], list[Sequence[Any]] | None]


@dataclass(frozen=True, slots=True)
class FieldsPlan:
    """The columns a record fills, keys first, and how to pull its values."""

    table: str
    key_columns: tuple[ColumnDef, ...]
    value_columns: tuple[ColumnDef, ...]
    extract: Extract
    extract_key: Extract
    #: ``extract`` of a run of rows to write, as columns: what ``binding`` makes a run's
    #: parameters from with no Python call per record.
    extract_columns: ExtractColumns

    @property
    def columns(self) -> tuple[ColumnDef, ...]:
        return self.key_columns + self.value_columns


def _selected(settings: SinkSettings, topic: str, name: str) -> bool:
    include, exclude = settings.include_fields, settings.exclude_fields
    if include and name not in include and f"{topic}:{name}" not in include:
        return False
    return not (exclude and (name in exclude or f"{topic}:{name}" in exclude))


def _getter(indexes: Sequence[int]) -> Callable[[list[Any]], list[Any]]:
    if not indexes:
        return lambda values: []
    if len(indexes) == 1:
        (i,) = indexes
        return lambda values: [values[i]]
    get = itemgetter(*indexes)
    return lambda values: list(get(values))


def _values_of(schema: Schema) -> Callable[[Struct], list[Any]]:
    """A struct's field values; defaults looked at only when the schema has some."""
    if any(f.schema.default_value is not None for f in schema.fields):
        return lambda struct: struct.values()
    return lambda struct: struct.values(defaults=False)


_SOURCE_PLACEHOLDER = re.compile(r"\$\{source\.([^}]*)\}")


def table_of(record: SinkRecord, settings: SinkSettings) -> str:
    """The table of ``record``, with Debezium's ``${source.<field>}`` placeholders filled
    from its change event's ``source`` (``settings.source_placeholders``)."""
    name = settings.table_for(record.topic)
    value = record.value
    source = value.get("source") if isinstance(value, Struct) and is_envelope(value.schema) else None
    if not isinstance(source, Struct):
        raise DataException(
            f"the table name format {settings.table_format} needs the 'source' of a Debezium change event"
        )

    def field(match: re.Match[str]) -> str:
        found = source.schema.field(match.group(1))
        if found is None:
            raise DataException(f"the change event's source has no field {match.group(1)!r}")
        return str(source.get(match.group(1)))

    return _SOURCE_PLACEHOLDER.sub(field, name)


def plan_fields(
    settings: SinkSettings,
    topic: str,
    key_schema: Schema | None,
    value_schema: Schema | None,
    table: str | None = None,
) -> FieldsPlan:
    """The columns of records of ``topic`` with these key and value (row) schemas, written
    to ``table`` (default: the topic's). Raises DataException when the schemas cannot give
    the key ``pk.mode`` asks for."""
    mode = settings.pk_mode
    table = table if table is not None else settings.table_for(topic)
    row = value_schema if value_schema is not None and value_schema.type is Type.STRUCT else None
    fields = row.fields if row is not None else ()
    key_defs: list[ColumnDef] = []
    key_indexes: list[int] = []  # record_value: key columns are value fields too
    key_part: Extract | None = None  # the key columns' values, when not value fields
    if mode == "kafka":
        names = settings.pk_fields or KAFKA_PK_FIELDS
        key_defs = [ColumnDef(n, s, True) for n, s in zip(names, _KAFKA_SCHEMAS, strict=True)]
        key_part = _kafka_coordinates
    elif mode == "record_key":
        key_defs, key_part = _record_key(settings, key_schema)
    elif mode == "record_value":
        if row is None:
            raise DataException("pk.mode=record_value needs a Struct value")
        for name in settings.pk_fields or tuple(f.name for f in fields):
            f = row.field(name)
            if f is None:
                raise DataException(f"the value has no primary key field {name!r} (pk.fields)")
            key_indexes.append(f.index)
            key_defs.append(ColumnDef(name, f.schema, True))
    taken = {c.name for c in key_defs}
    value_defs: list[ColumnDef] = []
    indexes: list[int] = []
    for f in fields:
        if f.name in taken or not _selected(settings, topic, f.name):
            continue
        value_defs.append(ColumnDef(f.name, f.schema, False))
        indexes.append(f.index)
    values_of = _values_of(row) if row is not None else None
    get_all = _getter(key_indexes + indexes)
    get_keys = _getter(key_indexes)

    row_indexes = key_indexes + indexes

    defaults = row is not None and any(f.schema.default_value is not None for f in row.fields)

    def row_columns(structs: Sequence[Struct]) -> list[Sequence[Any]]:
        if not row_indexes or values_of is None:
            return []
        # Struct.values mapped in C, as values_of calls it (benchmarks/jdbc_sink.py).
        everything = list(zip(*map(Struct.values, structs, repeat(defaults)), strict=True))
        return [everything[i] for i in row_indexes]

    if key_part is None:

        def extract(record: SinkRecord, struct: Struct | None) -> list[Any]:
            if struct is None or values_of is None:
                raise DataException("no value to take the columns from")
            return get_all(values_of(struct))

        def extract_key(record: SinkRecord, struct: Struct | None) -> list[Any]:
            if struct is None or values_of is None:
                raise DataException("no value to take the primary key from")
            return get_keys(values_of(struct))

        def extract_columns(records: Sequence[SinkRecord], structs: Sequence[Struct]) -> list[Sequence[Any]]:
            return row_columns(structs)

        return FieldsPlan(table, tuple(key_defs), tuple(value_defs), extract, extract_key, extract_columns)

    keys_of = key_part

    def extract_with_key(record: SinkRecord, struct: Struct | None) -> list[Any]:
        keys = keys_of(record, struct)
        if struct is not None and values_of is not None:
            keys += get_all(values_of(struct))
        return keys

    key_columns_of = _key_columns(mode, key_schema, len(key_defs), settings)

    def extract_columns_with_key(
        records: Sequence[SinkRecord], structs: Sequence[Struct]
    ) -> list[Sequence[Any]] | None:
        keys = key_columns_of(records)
        if keys is None:
            return None
        return keys + row_columns(structs)

    return FieldsPlan(
        table, tuple(key_defs), tuple(value_defs), extract_with_key, keys_of, extract_columns_with_key
    )


def _key_columns(
    mode: str, key_schema: Schema | None, count: int, settings: SinkSettings
) -> Callable[[Sequence[SinkRecord]], list[Sequence[Any]] | None]:
    """The key columns of a run of records (``pk.mode`` kafka or record_key), as
    ``_kafka_coordinates`` or ``_record_key``'s extract give them record by record."""
    if mode == "kafka":
        return lambda records: [
            [r.topic for r in records],
            [r.kafka_partition for r in records],
            [r.kafka_offset for r in records],
        ]
    assert key_schema is not None  # _record_key refused a record_key plan without one
    if key_schema.type is not Type.STRUCT:
        return lambda records: [[r.key for r in records]]
    wanted = settings.pk_fields or tuple(f.name for f in key_schema.fields)
    indexes = [f.index for f in (key_schema.field(n) for n in wanted) if f is not None]

    def from_structs(records: Sequence[SinkRecord]) -> list[Sequence[Any]] | None:
        keys = [r.key for r in records]
        if any(k.__class__ is not Struct for k in keys):
            return None  # record by record: it says which
        everything = list(zip(*[k.values() for k in keys], strict=True))
        return [everything[i] for i in indexes]

    return from_structs


def _kafka_coordinates(record: SinkRecord, struct: Struct | None) -> list[Any]:
    return [record.topic, record.kafka_partition, record.kafka_offset]


def _record_key(settings: SinkSettings, key_schema: Schema | None) -> tuple[list[ColumnDef], Extract]:
    if key_schema is None:
        raise DataException("pk.mode=record_key needs records with a key schema; this record's key has none")
    if key_schema.type is Type.STRUCT:
        wanted = settings.pk_fields or tuple(f.name for f in key_schema.fields)
        defs, indexes = [], []
        for name in wanted:
            f = key_schema.field(name)
            if f is None:
                raise DataException(f"the key has no field {name!r} (named in pk.fields)")
            defs.append(ColumnDef(name, f.schema, True))
            indexes.append(f.index)
        get = _getter(indexes)

        def from_struct(record: SinkRecord, struct: Struct | None) -> list[Any]:
            key = record.key
            if not isinstance(key, Struct):
                raise DataException(f"the key is {type(key).__name__}, not a Struct of the key schema")
            return get(key.values())

        return defs, from_struct
    if not key_schema.type.is_primitive:
        raise DataException(f"a {key_schema.type.name} key cannot be a primary key")
    if len(settings.pk_fields) != 1:
        raise DataException(
            "the key is a primitive value: name its one column in pk.fields / primary.key.fields "
            f"(given: {list(settings.pk_fields)})"
        )

    def primitive(record: SinkRecord, struct: Struct | None) -> list[Any]:
        return [record.key]

    return [ColumnDef(settings.pk_fields[0], key_schema, True)], primitive
