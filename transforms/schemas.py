"""Schema helpers shared by the transformations: copying a schema's identity into a
builder, and the small cache of derived schemas each transformation keeps.

A transformation that changes a struct's shape derives the output schema from the
input schema once and reuses it for every record with that input schema, as
Kafka's SMTs do with their 16-entry LRU caches: deriving walks the schema, the
lookup is one dict probe (schemas hash once and compare by identity first).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from connect.api import ConnectRecord, DataException, Schema, SchemaBuilder, StructColumn
from transforms.requirements import RecordError, record_error

K = TypeVar("K")
V = TypeVar("V")
D = TypeVar("D")


def copy_basics(source: Schema, builder: SchemaBuilder) -> SchemaBuilder:
    """Give ``builder`` the name, version, doc and parameters of ``source`` (Kafka's
    ``SchemaUtil.copySchemaBasics``); optionality and default are the caller's choice."""
    if source.name is not None:
        builder.name(source.name)
    if source.version is not None:
        builder.version(source.version)
    if source.doc is not None:
        builder.doc(source.doc)
    if source.parameters:
        builder.parameters(source.parameters)
    return builder


def struct_builder_like(source: Schema) -> SchemaBuilder:
    """An empty STRUCT builder with ``source``'s identity and optionality."""
    builder = copy_basics(source, SchemaBuilder.struct())
    if source.optional:
        builder.optional()
    return builder


class LruCache(Generic[K, V]):
    """A small least-recently-used map (Kafka's ``LRUCache``); one per transformation
    instance, used from the task's thread only."""

    __slots__ = ("_items", "_last_key", "_last_value", "max_size")

    def __init__(self, max_size: int = 16) -> None:
        self.max_size = max_size
        self._items: dict[K, V] = {}
        self._last_key: K | None = None
        self._last_value: V | None = None

    def get(self, key: K) -> V | None:
        # Records of one topic mostly share one schema object: an identity check answers
        # those without hashing the schema.
        if key is self._last_key:
            return self._last_value
        items = self._items
        value = items.get(key)
        if value is not None:
            if len(items) > 1:
                del items[key]
                items[key] = value
            self._last_key, self._last_value = key, value
        return value

    def put(self, key: K, value: V) -> None:
        items = self._items
        # The identity shortcut in get() is only right while the key it remembers is the
        # most recently used one; this key now is.
        self._last_key = self._last_value = None
        items.pop(key, None)
        items[key] = value
        if len(items) > self.max_size:
            del items[next(iter(items))]

    def get_or_compute(self, key: K, compute: Callable[[K], V]) -> V:
        value = self.get(key)
        if value is None:
            value = compute(key)
            self.put(key, value)
        return value

    def __len__(self) -> int:
        return len(self._items)


def derived(
    transform: object,
    record: ConnectRecord,
    cache: LruCache[Schema, D],
    schema: Schema,
    derive: Callable[[Schema], D],
) -> D:
    """What ``transform`` derives from ``schema`` (an output schema, a plan), from ``cache`` or
    made now; a schema it cannot derive from is the record's error, naming the record."""
    found = cache.get(schema)
    if found is None:
        try:
            found = derive(schema)
        except RecordError:
            raise  # already names the transform and the record
        except DataException as exc:
            raise record_error(transform, record, str(exc)) from None
        cache.put(schema, found)
    return found


def field_columns(column: StructColumn, replace_null: bool) -> list[Sequence[Any]]:
    """The field columns of a StructColumn as ``Struct.values(replace_null)`` reads each
    row: with ``replace_null``, a null in a field that has a default reads as the default."""
    fields = column.fields
    if not replace_null:
        return list(fields)
    out: list[Sequence[Any]] = []
    for f, values in zip(column.schema.fields, fields, strict=True):
        default = f.schema.default_value
        if default is not None and None in values:
            values = [default if v is None else v for v in values]
        out.append(values)
    return out
