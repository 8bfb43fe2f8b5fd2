"""A batch of ``{"schema":...,"payload":...}`` envelopes to Connect values, for
``JsonConverter.to_connect_batch`` with ``schemas.enable``.

Read one at a time, each envelope is parsed whole (its schema node is often most of its
bytes), and the schema node is serialized again to find its reader in the cache: two
thirds of the time of a record whose schema the topic repeats in every message. Here
msgspec splits each envelope into its two members without building the schema node
(``msgspec.Raw``: the bytes, skipped over), the schema's bytes find its reader (parsed
once per distinct schema text of the batch), and orjson parses only the payload.

Anything off that path is read by ``to_connect_data`` as it always was: a null or empty
datum, an envelope msgspec or orjson refuses (malformed, a lone surrogate, a number beyond
double range), a schema node that is ``null`` or not a valid schema, a payload the schema
does not read (an error to report, numbers that must be exact). So a datum gets exactly
the value, or the error, the record-by-record reading gives; only the time differs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgspec
import orjson

from connect.api.data import Schema, SchemaAndValue
from connect.converters.json_errors import JsonProblem, NeedExactNumbers

Reader = Callable[[Any], Any]
#: The (schema, reader) of a schema node (``JsonConverter``'s cache).
EntryOf = Callable[[Any], tuple[Schema, Reader]]
#: ``to_connect_data`` of one datum.
ReadOne = Callable[[bytes | None], SchemaAndValue]

_split = msgspec.json.Decoder(dict[str, msgspec.Raw]).decode
_SPLIT_ERRORS = (msgspec.DecodeError, TypeError, ValueError, RecursionError)
_NULL = b"null"
_UNSEEN: Any = object()


def read_envelopes(
    data: Sequence[bytes | None], entry_of: EntryOf, read_one: ReadOne
) -> tuple[list[Schema | None], list[Any]]:
    """The schemas and values of ``data``; raises what ``read_one`` raises for the first
    datum it cannot read."""
    loads = orjson.loads
    # Reader of each schema text seen in this batch; None: that schema goes the slow way.
    readers: dict[bytes, tuple[Schema, Reader] | None] = {}
    schemas: list[Schema | None] = []
    values: list[Any] = []
    add_schema, add_value = schemas.append, values.append
    for datum in data:
        try:
            members = _split(datum)  # type: ignore[arg-type]
        except _SPLIT_ERRORS:
            members = None
        if members is not None and len(members) == 2 and "schema" in members and "payload" in members:
            text = bytes(members["schema"])
            entry = readers.get(text, _UNSEEN)
            if entry is _UNSEEN:
                entry = readers[text] = _entry(text, entry_of)
            if entry is not None:
                try:
                    value = entry[1](loads(memoryview(members["payload"])))
                except (orjson.JSONDecodeError, JsonProblem, NeedExactNumbers):
                    pass
                else:
                    add_schema(entry[0])
                    add_value(value)
                    continue
        converted = read_one(datum)
        add_schema(converted.schema)
        add_value(converted.value)
    return schemas, values


def _entry(text: bytes, entry_of: EntryOf) -> tuple[Schema, Reader] | None:
    """The schema and reader of a schema node's text; None when the record-by-record reading
    must decide (not JSON orjson reads, ``null``, not a valid schema)."""
    if text == _NULL:
        return None
    try:
        return entry_of(orjson.loads(text))
    except Exception:
        return None
