"""A batch of ``{"schema":...,"payload":...}`` envelopes to Connect values, for
``JsonConverter.to_connect_batch`` with ``schemas.enable``.

The usual batch is a topic's records as Kafka's converter writes them: each begins with the
same bytes, ``{"schema":<one schema text>,"payload":``, and ends with ``}``. Such a batch is
recognised by those bytes (two C-level maps), its payloads are sliced out, and the schema's
texts reader (``json_readers``) parses them and reads them a field at a time: no schema
node is looked at after the first record's, and no reader is called per field and record
(``benchmarks/jdbc_sink.py``: this reading was about half of a sink task's time). The
slicing reads exactly the envelope: a text that begins with the prefix and ends with ``}``,
and whose middle parses as one JSON value, is an object of those two members.

A batch that is not (schemas that differ, spaces, another key order), or whose payloads
the texts reader refuses, is read an envelope at a time. Each envelope read whole, its
schema node (often most of its bytes) would be built and serialized again to find its
reader in the cache; instead msgspec splits each envelope into its two members without
building the schema node (``msgspec.Raw``: the bytes, skipped over), the schema's bytes
find its reader (parsed once per distinct schema text of the batch), and orjson parses
only the payload.

Anything off that path is read by ``to_connect_data`` as it always was: a null or empty
datum, an envelope msgspec or orjson refuses (malformed, a lone surrogate, a number beyond
double range), a schema node that is ``null`` or not a valid schema, a payload the schema
does not read (an error to report, numbers that must be exact). So a datum gets exactly
the value, or the error, the record-by-record reading gives; only the time differs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import repeat
from operator import getitem
from typing import Any, cast

import msgspec
import orjson

from connect.api.data import Schema, SchemaAndValue
from connect.converters.json_errors import JsonProblem, NeedExactNumbers

Reader = Callable[[Any], Any]
#: Payload texts to values (``json_readers.texts_reader``).
TextsReader = Callable[[list[bytes]], list[Any]]
#: The (schema, reader, texts reader) of a schema node (``JsonConverter``'s cache).
EntryOf = Callable[[Any], tuple[Schema, Reader, TextsReader]]
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
    whole = _one_schema(data, entry_of)
    if whole is not None:
        return whole
    loads = orjson.loads
    # Reader of each schema text seen in this batch; None: that schema goes the slow way.
    readers: dict[bytes, tuple[Schema, Reader, TextsReader] | None] = {}
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


def _one_schema(
    data: Sequence[bytes | None], entry_of: EntryOf
) -> tuple[list[Schema | None], list[Any]] | None:
    """The schemas and values of ``data`` when every datum is an envelope of the first one's
    schema, written as Kafka writes it (``{"schema":S,"payload":P}``, no space), and its
    schema's readers read the payloads; else None."""
    first = data[0] if data else None
    if type(first) is not bytes:
        return None
    try:
        members = _split(first)
    except _SPLIT_ERRORS:
        return None
    if not (len(members) == 2 and "schema" in members and "payload" in members):
        return None
    text = bytes(members["schema"])
    prefix = b'{"schema":' + text + b',"payload":'
    texts = cast("Sequence[bytes]", data)  # what is not bytes makes the maps raise TypeError
    try:
        begin = all(map(bytes.startswith, texts, repeat(prefix)))
        if not (begin and all(map(bytes.endswith, texts, repeat(b"}")))):
            return None
    except TypeError:  # a null datum, or one that is not bytes
        return None
    entry = _entry(text, entry_of)
    if entry is None:
        return None
    schema, _, read_texts = entry
    try:
        # Each payload is the text between the prefix and the closing brace: were it not one
        # JSON value (a third member after it, say), the parser would refuse it.
        cut = repeat(slice(len(prefix), -1))
        values = read_texts(list(map(getitem, texts, cut)))  # type: ignore[arg-type]  # getitem is overloaded
    except Exception:  # read one by one: what the first bad record raises is raised
        return None
    return [schema] * len(values), values


def _entry(text: bytes, entry_of: EntryOf) -> tuple[Schema, Reader, TextsReader] | None:
    """The schema and reader of a schema node's text; None when the record-by-record reading
    must decide (not JSON orjson reads, ``null``, not a valid schema)."""
    if text == _NULL:
        return None
    try:
        return entry_of(orjson.loads(text))
    except Exception:
        return None
