"""``io.confluent.connect.avro.AvroConverter``: Connect data as Avro in Confluent's wire
format (magic byte 0, the schema's 4-byte big-endian registry id, the Avro binary
datum), schemas kept in a Schema Registry.

Writing, a record's Connect schema becomes an Avro schema (``AvroData``), registered
under the subject its strategy names (``auto.register.schemas``, default true; else
looked up, or with ``use.latest.version`` the subject's latest schema is used); reading,
the id in the record names the writer's schema, fetched once and kept. Both directions
cache per schema, so converting calls the registry once per schema, not per record.

Settings (Confluent's): ``schema.registry.url`` (required; a comma list),
``auto.register.schemas``, ``use.latest.version``, ``normalize.schemas``,
``key.subject.name.strategy`` / ``value.subject.name.strategy`` (TopicNameStrategy,
RecordNameStrategy, TopicRecordNameStrategy, by short or Java class name),
``basic.auth.credentials.source`` / ``basic.auth.user.info``, ``connect.meta.data``,
``enhanced.avro.schema.support``.
"""

from __future__ import annotations

import io
import json
import struct
import threading
from collections.abc import Mapping
from typing import Any, ClassVar

import fastavro

from connect.api import ConnectException, Converter, DataException, Headers, Schema, SchemaAndValue
from connect.api.avro import AvroData
from connect.converters.config_values import config_bool
from connect.converters.registry_client import RegistryClient

__all__ = ["AvroConverter"]

MAGIC = 0
_HEADER = struct.Struct(">bI")

_STRATEGIES = {
    "topicnamestrategy": "topic",
    "recordnamestrategy": "record",
    "topicrecordnamestrategy": "topic_record",
}


def _strategy(value: Any) -> str:
    short = str(value or "TopicNameStrategy").rsplit(".", 1)[-1].lower()
    if short not in _STRATEGIES:
        raise ConnectException(
            f"subject name strategy {value}: expected TopicNameStrategy, RecordNameStrategy or "
            "TopicRecordNameStrategy"
        )
    return _STRATEGIES[short]


def _without_logical_types(node: Any) -> Any:
    """The schema with ``logicalType`` left out: fastavro then reads base values, which
    Connect's logical classes turn into values exactly as Kafka does."""
    if isinstance(node, dict):
        return {k: _without_logical_types(v) for k, v in node.items() if k != "logicalType"}
    if isinstance(node, list):
        return [_without_logical_types(v) for v in node]
    return node


class AvroConverter(Converter):
    aliases: ClassVar[tuple[str, ...]] = ("io.confluent.connect.avro.AvroConverter",)

    def __init__(self) -> None:
        self.client: RegistryClient | None = None
        self.is_key = False
        self.auto_register = True
        self.use_latest = False
        self.normalize = False
        self.strategy = "topic"
        self.data = AvroData()
        self._lock = threading.Lock()
        # Connect schema -> (its Avro JSON text, fastavro's parsed schema)
        self._avro: dict[Schema, tuple[str, Any, Any]] = {}
        # (subject, Avro text) -> (id, fastavro's parsed schema that writes the records)
        self._ids: dict[tuple[str, str], tuple[int, Any]] = {}
        # id -> (fastavro's parsed writer schema without logical types, Connect schema)
        self._readers: dict[int, tuple[Any, Schema]] = {}

    def configure(self, configs: Mapping[str, Any], is_key: bool | None = None) -> None:
        self.is_key = bool(is_key)
        self.client = RegistryClient(configs)
        self.auto_register = config_bool(configs, "auto.register.schemas", True)
        self.use_latest = config_bool(configs, "use.latest.version", False)
        self.normalize = config_bool(configs, "normalize.schemas", False)
        self.strategy = _strategy(
            configs.get("key.subject.name.strategy" if self.is_key else "value.subject.name.strategy")
        )
        self.data = AvroData(
            connect_meta_data=config_bool(configs, "connect.meta.data", True),
            enhanced=config_bool(configs, "enhanced.avro.schema.support", False),
        )

    def _subject(self, topic: str, schema: Schema) -> str:
        suffix = "-key" if self.is_key else "-value"
        if self.strategy == "topic":
            return topic + suffix
        name = schema.name
        if not name:
            raise DataException(
                f"{self.strategy.replace('_', '')} subject name strategy needs a named schema; "
                f"topic {topic}'s {suffix[1:]} schema has no name"
            )
        return name if self.strategy == "record" else f"{topic}-{name}"

    def _avro_of(self, schema: Schema) -> tuple[str, Any, Any]:
        with self._lock:
            known = self._avro.get(schema)
        if known is not None:
            return known
        node = self.data.from_connect_schema(schema)
        text = json.dumps(node, separators=(",", ":"))
        entry = (text, node, fastavro.parse_schema(node))
        with self._lock:
            self._avro[schema] = entry
        return entry

    # -- Connect -> bytes -------------------------------------------------------------------------

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        if value is None and (schema is None or schema.optional or schema.default_value is None):
            return None  # a tombstone stays one, as Confluent's converter leaves it
        if schema is None:
            raise DataException(
                f"AvroConverter needs a schema to write the {'key' if self.is_key else 'value'} "
                f"of a record to {topic}"
            )
        client = self.client
        if client is None:
            raise ConnectException("AvroConverter used before configure()")
        text, _, parsed = self._avro_of(schema)
        subject = self._subject(topic, schema)
        key = (subject, text)
        with self._lock:
            known = self._ids.get(key)
        if known is None:
            if self.use_latest:
                # The subject's latest schema writes the record (Confluent's use.latest.version):
                # the id must name the schema the bytes were written with.
                latest = client.latest(subject)
                try:
                    writer = fastavro.parse_schema(json.loads(latest["schema"]))
                except (ValueError, KeyError, fastavro.schema.SchemaParseException) as exc:
                    raise DataException(
                        f"the latest schema of {subject} is not a usable Avro schema: {exc}"
                    ) from None
                known = (int(latest["id"]), writer)
            elif self.auto_register:
                known = (client.register(subject, text, normalize=self.normalize), parsed)
            else:
                known = (client.lookup(subject, text), parsed)
            with self._lock:
                self._ids[key] = known
        schema_id, parsed = known
        try:
            datum = self.data.from_connect_value(schema, value)
            out = io.BytesIO()
            out.write(_HEADER.pack(MAGIC, schema_id))
            fastavro.schemaless_writer(out, parsed, datum)
        except (ValueError, TypeError, AttributeError, fastavro.validation.ValidationError) as exc:
            raise DataException(
                f"Converting Kafka Connect data to Avro for topic {topic} failed: {exc}"
            ) from None
        return out.getvalue()

    # -- bytes -> Connect -------------------------------------------------------------------------

    def _reader(self, schema_id: int) -> tuple[Any, Schema]:
        with self._lock:
            known = self._readers.get(schema_id)
        if known is not None:
            return known
        client = self.client
        if client is None:
            raise ConnectException("AvroConverter used before configure()")
        found = client.schema(schema_id)
        if found.get("schemaType", "AVRO") != "AVRO":
            raise DataException(f"schema {schema_id} is {found.get('schemaType')}, not AVRO")
        try:
            node = json.loads(found["schema"])
            named: dict[str, Any] = {}  # referenced named types, for fastavro
            referenced: dict[str, Any] = {}  # and for AvroData, by full name
            for ref in found.get("references") or []:
                ref_node = json.loads(client.version(str(ref["subject"]), int(ref["version"]))["schema"])
                fastavro.parse_schema(_without_logical_types(ref_node), named_schemas=named)
                referenced[str(ref["name"])] = ref_node
            parsed = fastavro.parse_schema(_without_logical_types(node), named_schemas=named)
            connect = self.data.to_connect_schema(node, referenced)
        except (ValueError, KeyError, TypeError, fastavro.schema.SchemaParseException) as exc:
            raise DataException(
                f"schema {schema_id} from the registry is not a usable Avro schema: {exc}"
            ) from None
        entry = (parsed, connect)
        with self._lock:
            self._readers[schema_id] = entry
        return entry

    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        if data is None:
            return SchemaAndValue(None, None)
        if len(data) < _HEADER.size or data[0] != MAGIC:
            raise DataException(
                "Converting byte[] to Kafka Connect data failed due to serialization error of topic "
                f"{topic}: Unknown magic byte! (the {'key' if self.is_key else 'value'} does not start "
                "with 0 and a "
                "4-byte schema id: not written by a Schema Registry serializer)"
            )
        _, schema_id = _HEADER.unpack_from(data)
        parsed, connect = self._reader(schema_id)
        try:
            datum = fastavro.schemaless_reader(io.BytesIO(data[_HEADER.size :]), parsed, None)
            value = self.data.to_connect_value(connect, datum)
        except (ValueError, TypeError, EOFError, IndexError, KeyError, UnicodeDecodeError) as exc:
            raise DataException(
                "Converting byte[] to Kafka Connect data failed due to serialization error of topic "
                f"{topic}: the Avro payload does not match schema {schema_id}: {exc}"
            ) from None
        return SchemaAndValue(connect, value)

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
