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
``latest.compatibility.strict`` (checked with Avro's schema resolution rules),
``key.subject.name.strategy`` / ``value.subject.name.strategy`` (TopicNameStrategy,
RecordNameStrategy, TopicRecordNameStrategy, by short or Java class name),
``basic.auth.credentials.source`` / ``basic.auth.user.info``, ``connect.meta.data``,
``enhanced.avro.schema.support``.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import avro.errors
import avro.schema
from avro.compatibility import ReaderWriterCompatibilityChecker, SchemaCompatibilityType

from connect.api import DataException, Headers, Schema, SchemaAndValue
from connect.api.avro import AvroData
from connect.converters.config_values import config_bool
from connect.converters.lazy_modules import import_into
from connect.converters.registry_converter import HEADER, MAGIC, RegistryConverter

if TYPE_CHECKING:
    # Bound by AvroConverter.configure (lazy_modules): 5 MB a worker holds only once it
    # reads or writes Avro.
    import fastavro

__all__ = ["AvroConverter"]


def _without_logical_types(node: Any) -> Any:
    """The schema with ``logicalType`` left out: fastavro then reads base values, which
    Connect's logical classes turn into values exactly as Kafka does."""
    if isinstance(node, dict):
        return {k: _without_logical_types(v) for k, v in node.items() if k != "logicalType"}
    if isinstance(node, list):
        return [_without_logical_types(v) for v in node]
    return node


def _full_name(node: Any) -> str | None:
    """An Avro schema's full name (what the record name strategies call it), if it has one."""
    if not isinstance(node, dict) or not isinstance(node.get("name"), str):
        return None
    name: str = node["name"]
    namespace = node.get("namespace")
    return f"{namespace}.{name}" if namespace and "." not in name else name


class AvroConverter(RegistryConverter):
    aliases: ClassVar[tuple[str, ...]] = ("io.confluent.connect.avro.AvroConverter",)
    schema_type: ClassVar[str] = "AVRO"

    def __init__(self) -> None:
        super().__init__()
        self.data = AvroData()
        # Connect schema -> (its Avro JSON text, its JSON, fastavro's parsed schema)
        self._avro: dict[Schema, tuple[str, Any, Any]] = {}
        # schema id -> fastavro's parsed schema that writes the records
        self._writers: dict[int, Any] = {}
        # id -> (fastavro's parsed writer schema without logical types, Connect schema)
        # (id, topic) -> (fastavro's parsed writer schema without logical types, Connect
        # schema, with the version the topic's subject gave the id)
        self._readers: dict[tuple[int, str], tuple[Any, Schema]] = {}

    def configure(self, configs: Mapping[str, Any], is_key: bool | None = None) -> None:
        super().configure(configs, is_key)
        import_into(globals(), "fastavro")
        self.data = AvroData(
            connect_meta_data=config_bool(configs, "connect.meta.data", True),
            enhanced=config_bool(configs, "enhanced.avro.schema.support", False),
        )

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
        text, _, parsed = self._avro_of(schema)
        subject = self.subject(topic, schema.name)
        schema_id, latest = self.writer_id(subject, text)
        if latest is not None:
            # The subject's latest schema writes the record (Confluent's use.latest.version):
            # the id must name the schema the bytes were written with.
            with self._lock:
                writer = self._writers.get(schema_id)
            if writer is None:
                try:
                    writer = fastavro.parse_schema(json.loads(latest["schema"]))
                except (ValueError, KeyError, fastavro.schema.SchemaParseException) as exc:
                    raise DataException(
                        f"the latest schema of {subject} is not a usable Avro schema: {exc}"
                    ) from None
                with self._lock:
                    self._writers[schema_id] = writer
            parsed = writer
        try:
            datum = self.data.from_connect_value(schema, value)
            out = io.BytesIO()
            out.write(HEADER.pack(MAGIC, schema_id))
            fastavro.schemaless_writer(out, parsed, datum)
        except (ValueError, TypeError, AttributeError, fastavro.validation.ValidationError) as exc:
            raise DataException(
                f"Converting Kafka Connect data to Avro for topic {topic} failed: {exc}"
            ) from None
        return out.getvalue()

    def latest_cannot_read(self, latest: dict[str, Any], text: str) -> list[str]:
        if latest.get("references"):
            return []  # named types from other subjects: the registry checked them when registered
        try:
            reader = avro.schema.parse(latest["schema"])
            writer = avro.schema.parse(text)
        except (avro.errors.AvroException, ValueError, KeyError) as exc:
            return [f"not an Avro schema: {exc}"]
        checker = ReaderWriterCompatibilityChecker()  # type: ignore[no-untyped-call]
        result = checker.get_compatibility(reader, writer)
        if result.compatibility is SchemaCompatibilityType.compatible:
            return []
        return [f"{', '.join(sorted(result.locations))}: {m}" for m in sorted(map(str, result.messages))]

    # -- bytes -> Connect -------------------------------------------------------------------------

    def _reader(self, schema_id: int, topic: str) -> tuple[Any, Schema]:
        with self._lock:
            known = self._readers.get((schema_id, topic))
        if known is not None:
            return known
        client = self.client
        found = self.fetch_writer(schema_id)
        try:
            node = json.loads(found["schema"])
            named: dict[str, Any] = {}  # referenced named types, for fastavro
            referenced: dict[str, Any] = {}  # and for AvroData, by full name
            for ref in found.get("references") or []:
                ref_node = json.loads(client.version(str(ref["subject"]), int(ref["version"]))["schema"])
                fastavro.parse_schema(_without_logical_types(ref_node), named_schemas=named)
                referenced[str(ref["name"])] = ref_node
            parsed = fastavro.parse_schema(_without_logical_types(node), named_schemas=named)
            version = self.registry_version(topic, schema_id, _full_name(node))
            connect = self.data.to_connect_schema(node, referenced, version)
        except (ValueError, KeyError, TypeError, fastavro.schema.SchemaParseException) as exc:
            raise DataException(
                f"schema {schema_id} from the registry is not a usable Avro schema: {exc}"
            ) from None
        entry = (parsed, connect)
        with self._lock:
            self._readers[(schema_id, topic)] = entry
        return entry

    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        if data is None:
            return SchemaAndValue(None, None)
        schema_id = self.unframe(topic, data)
        parsed, connect = self._reader(schema_id, topic)
        try:
            datum = fastavro.schemaless_reader(io.BytesIO(data[HEADER.size :]), parsed, None)
            value = self.data.to_connect_value(connect, datum)
        except (ValueError, TypeError, EOFError, IndexError, KeyError, UnicodeDecodeError) as exc:
            raise self.read_error(
                topic, f"the Avro payload does not match schema {schema_id}: {exc}"
            ) from None
        return SchemaAndValue(connect, value)
