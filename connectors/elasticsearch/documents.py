"""Sink records as bulk actions: the index, the document id, the version and the JSON source.

Pure: no I/O. ``DocumentBuilder.build`` raises ``DataException`` with a message naming
the record when a record cannot become a document, and returns None for a record that
is deliberately skipped (a tombstone with ``behavior.on.null.values=ignore``).

Idempotence comes from here. With ``key.ignore=true`` the id is
``topic+partition+offset``: a redelivered record overwrites itself. With keys as ids and
``write.method=insert``, the record's offset is the document's *external version*, so a
redelivered older record is refused as a version conflict (which the task counts as
success) and can never overwrite a newer one.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

import orjson

from connect.api import DataException, SinkRecord, Struct, Type
from connect.api.json_values import JsonValues
from connectors.elasticsearch.config import ElasticsearchSinkConfig

#: Characters an index name may not hold (Elasticsearch's rules), replaced by ``_``.
_INVALID_INDEX_CHARS = re.compile(r'[\\/*?"<>| ,#:]')
_MAX_INDEX_BYTES = 255
_ORJSON_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_UTC_Z | orjson.OPT_NAIVE_UTC
_TIMESTAMP_FIELD = "@timestamp"
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


@dataclass(slots=True)
class Action:
    """One bulk item: ``op`` is index, create, update or delete."""

    op: str
    index: str
    doc_id: str | None
    version: int | None
    source: bytes | None  # the line after the action line (None for deletes)

    def lines(self) -> list[bytes]:
        meta: dict[str, Any] = {"_index": self.index}
        if self.doc_id is not None:
            meta["_id"] = self.doc_id
        if self.version is not None:
            meta["version"] = self.version
            meta["version_type"] = "external"
        if self.op == "update":
            meta["retry_on_conflict"] = 3  # concurrent upserts of one id: ES re-reads and re-applies
        head = orjson.dumps({self.op: meta})
        return [head] if self.source is None else [head, self.source]

    def size(self) -> int:
        """Bytes this action adds to a bulk body (close enough for ``bulk.size.bytes``)."""
        return 64 + len(self.index) + len(self.doc_id or "") + (len(self.source) + 1 if self.source else 0)


def index_name(topic: str) -> str:
    """The index of a topic: lower-cased, characters Elasticsearch refuses replaced by ``_``,
    no leading ``-``, ``_`` or ``+``, and ``.``/``..`` spelled out (as Confluent's sink does)."""
    name = _INVALID_INDEX_CHARS.sub("_", topic.lower()).lstrip("-_+")
    if name in (".", ".."):
        name = name.replace(".", "dot")
    if not name:
        raise DataException(f"Topic {topic!r} leaves no valid Elasticsearch index name")
    encoded = name.encode()
    if len(encoded) > _MAX_INDEX_BYTES:
        name = encoded[:_MAX_INDEX_BYTES].decode(errors="ignore")
    return name


class DocumentBuilder:
    def __init__(self, config: ElasticsearchSinkConfig) -> None:
        self.config = config
        self._indices: dict[str, str] = {}
        # Numbers and ISO dates: what searches, ranges and aggregations want (see ``mapping``).
        self.values = JsonValues("number", "iso", config.compact_map_entries)

    def index_for(self, topic: str) -> str:
        """The index or data stream that records of ``topic`` go to."""
        found = self._indices.get(topic)
        if found is None:
            c = self.config
            if c.is_data_stream:
                namespace = c.data_stream_namespace.replace("${topic}", topic)
                found = index_name(f"{c.data_stream_type}-{c.data_stream_dataset}-{namespace}")
            else:
                found = index_name(topic)
            self._indices[topic] = found
        return found

    def build(self, record: SinkRecord) -> Action | None:
        c = self.config
        index = self.index_for(record.topic)
        # Data streams hold events, never updated: a key as id would drop every later record
        # with that key as a duplicate, so their ids are always topic+partition+offset.
        keyed = not c.ignores_key(record.topic) and not c.is_data_stream
        doc_id = (
            self._doc_id(record)
            if keyed
            else f"{record.topic}+{record.kafka_partition}+{record.kafka_offset}"
        )
        if record.value is None:
            if c.behavior_on_null_values == "ignore":
                return None
            if c.behavior_on_null_values == "fail":
                raise DataException(
                    f"Record {record.where} has a null value (a tombstone) and "
                    "behavior.on.null.values=fail; set it to ignore or delete"
                )
            return Action("delete", index, doc_id, self._version(record) if keyed else None, None)
        document = self._document(record)
        if c.is_data_stream:
            self._stamp(record, document)
            return Action("create", index, doc_id, None, _dumps(document, record, self.values))
        if c.write_method == "upsert":
            return Action(
                "update",
                index,
                doc_id,
                None,
                _dumps({"doc": document, "doc_as_upsert": True}, record, self.values),
            )
        return Action(
            "index",
            index,
            doc_id,
            self._version(record) if keyed else None,
            _dumps(document, record, self.values),
        )

    # -- parts -----------------------------------------------------------------------------

    def _doc_id(self, record: SinkRecord) -> str:
        key = record.key
        if key is None:
            raise DataException(
                f"Record {record.where} has a null key, and the key is the document id "
                "(key.ignore=false); set key.ignore=true to use topic+partition+offset"
            )
        if isinstance(key, str):
            return key
        if isinstance(key, int) and not isinstance(key, bool):
            return str(key)
        if isinstance(key, bytes):
            try:
                return key.decode()
            except UnicodeDecodeError:
                pass
        raise DataException(
            f"Record {record.where} has a key of type {type(key).__name__}; a document id must be a "
            "string or an integer (extract one field with the ExtractField$Key transformation)"
        )

    def _version(self, record: SinkRecord) -> int | None:
        if self.config.write_method != "insert":
            return None  # Elasticsearch's update API has no external versions
        header = self.config.external_version_header
        if header:
            found = record.headers.last_with_name(header)
            if found is None or found.value is None:
                raise DataException(f"Record {record.where} has no header {header!r} to version it by")
            try:
                return int(found.value if not isinstance(found.value, bytes) else found.value.decode())
            except (TypeError, ValueError):
                raise DataException(
                    f"Record {record.where}: header {header!r} is {found.value!r}, not a number"
                ) from None
        return record.original_kafka_offset

    def _document(self, record: SinkRecord) -> dict[str, Any]:
        value = record.value
        if isinstance(value, Struct):
            return self.values.struct(value)
        if isinstance(value, dict):
            if record.value_schema is not None and record.value_schema.type == Type.MAP:
                value = self.values.map(record.value_schema, value)
            if isinstance(value, dict):
                return value
        if isinstance(value, str | bytes | bytearray):
            # JSON text through the String or ByteArray converter: index it if it is an object.
            try:
                parsed = orjson.loads(value)
            except orjson.JSONDecodeError:
                parsed = None
            if isinstance(parsed, dict):
                return parsed
        raise DataException(
            f"Record {record.where} has a value of type {type(value).__name__}; an Elasticsearch "
            "document is a JSON object (a struct, a map or JSON text of an object)"
        )

    def _stamp(self, record: SinkRecord, document: dict[str, Any]) -> None:
        """Data streams need ``@timestamp``: the first configured field present, else the
        record's timestamp."""
        for name in self.config.data_stream_timestamp_field:
            if document.get(name) is not None:
                document[_TIMESTAMP_FIELD] = document[name]
                return
        if record.timestamp is None:
            raise DataException(
                f"Record {record.where} has no timestamp for @timestamp; name a value field in "
                "data.stream.timestamp.field"
            )
        document[_TIMESTAMP_FIELD] = _EPOCH + dt.timedelta(milliseconds=record.timestamp)


def _dumps(document: Any, record: SinkRecord, values: JsonValues) -> bytes:
    try:
        return orjson.dumps(document, default=values.schemaless, option=_ORJSON_OPTIONS)
    except TypeError as exc:
        raise DataException(f"Record {record.where} cannot be written as JSON: {exc}") from None
