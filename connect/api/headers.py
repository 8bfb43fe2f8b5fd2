"""Record headers: an ordered multi-map of key → (schema, value), as in Kafka Connect.

Headers keep insertion order and allow repeated keys. Values carry an optional
schema like record keys and values do; the worker's header converter turns them
into bytes on the way out and back on the way in.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from connect.api.data import Schema


class Header(NamedTuple):
    """One header: its key, value and the value's schema (None when schemaless).

    A named tuple: immutable, and cheap to make for every record that carries headers.
    """

    key: str
    value: Any
    schema: Schema | None = None

    def rename(self, key: str) -> Header:
        return Header(key, self.value, self.schema)

    def with_value(self, schema: Schema | None, value: Any) -> Header:
        return Header(self.key, value, schema)


class Headers:
    """A mutable, ordered collection of ``Header``s. Mutating methods return ``self``."""

    __slots__ = ("_items",)

    def __init__(self, items: Iterable[Header] = ()) -> None:
        self._items: list[Header] = list(items)

    def add(self, key: str, value: Any, schema: Schema | None = None) -> Headers:
        self._items.append(Header(key, value, schema))
        return self

    def add_header(self, header: Header) -> Headers:
        self._items.append(header)
        return self

    def all_with_name(self, key: str) -> list[Header]:
        return [h for h in self._items if h.key == key]

    def last_with_name(self, key: str) -> Header | None:
        items = self._items
        for i in range(len(items) - 1, -1, -1):
            if items[i].key == key:
                return items[i]
        return None

    def remove(self, key: str) -> Headers:
        self._items = [h for h in self._items if h.key != key]
        return self

    def retain_latest(self, key: str | None = None) -> Headers:
        """Keep only the last header of ``key`` (or of every key when None)."""
        seen: set[str] = set()
        kept: list[Header] = []
        for h in reversed(self._items):
            if (key is None or h.key == key) and h.key in seen:
                continue
            seen.add(h.key)
            kept.append(h)
        self._items = list(reversed(kept))
        return self

    def clear(self) -> Headers:
        self._items.clear()
        return self

    def copy(self) -> Headers:
        return Headers(self._items)

    def keys(self) -> list[str]:
        return [h.key for h in self._items]

    def __iter__(self) -> Iterator[Header]:
        return iter(list(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Headers) and self._items == other._items

    def __repr__(self) -> str:
        return f"Headers({self._items!r})"
