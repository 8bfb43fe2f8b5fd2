"""``io.confluent.connect.protobuf.ProtobufConverter``: Connect data as Protobuf messages
in Confluent's wire format (magic byte 0, the schema's 4-byte registry id, the message
indexes naming the message within its file, the message bytes), schemas kept in a Schema
Registry as ``schemaType`` PROTOBUF.

Writing, a record's Connect schema becomes a ``FileDescriptorProto`` (``ProtobufData``,
``connect.api.protobuf``), registered the way confluent-kafka's ``ProtobufSerializer``
registers one: the descriptor serialized and base64-encoded, each file it imports other
than protobuf's own well-known ones (``google/type/*``, ``confluent/*``) registered under
its file name and given as a reference. Reading, the writer's schema is fetched once per
id as a descriptor (``?format=serialized``), with the files it references, into a
descriptor pool: the converter never parses .proto text. Both directions cache per schema.

Settings: the registry converters' (``registry_converter``), and Confluent's
``optional.for.nullables`` / ``wrapper.for.nullables`` (false: how optional Connect fields
are written).
"""

from __future__ import annotations

import base64
import dataclasses
import threading
from collections.abc import Mapping
from typing import Any, ClassVar

from google.protobuf import descriptor_pb2
from google.protobuf.descriptor_pool import DescriptorPool
from google.protobuf.message import DecodeError, Message
from google.protobuf.message_factory import GetMessageClass

from connect.api import DataException, Headers, Schema, SchemaAndValue
from connect.api.protobuf import (
    BUILTIN_FILES,
    ProtobufData,
    ProtobufSchemaInfo,
    decode_indexes,
    encode_indexes,
    indexes_of,
    message_at,
    new_pool,
)
from connect.converters.config_values import config_bool
from connect.converters.registry_client import RegistryClient
from connect.converters.registry_converter import HEADER, MAGIC, RegistryConverter

__all__ = ["ProtobufConverter", "load_descriptors"]

_SERIALIZED = "serialized"


def _referenced(name: str) -> bytes | None:
    """The file a registry compiles a converter's schemas against, if it is Confluent's
    meta.proto. connect.api's copy of it leaves its extensions out (the mapping reads the
    options' bytes); a registry resolving ``[(confluent.field_meta) = ...]`` needs the real
    file, which confluent-kafka ships. Imported here, when a schema refers to it, not with
    this module: it brings all of ``confluent_kafka.schema_registry`` (its HTTP and Avro
    clients), 21 MB of every worker's idle RSS (``benchmarks/file_pipeline.py``)."""
    if name != "confluent/meta.proto":
        return None
    from confluent_kafka.schema_registry.confluent import meta_pb2

    serialized: bytes = meta_pb2.DESCRIPTOR.serialized_pb
    return serialized


def _descriptor_text(file: descriptor_pb2.FileDescriptorProto) -> str:
    return base64.b64encode(file.SerializeToString()).decode("ascii")


def load_descriptors(
    client: RegistryClient, found: Mapping[str, Any]
) -> tuple[descriptor_pb2.FileDescriptorProto, DescriptorPool]:
    """A registry schema fetched with ``format=serialized`` (its JSON, ``found``) as its
    file and a descriptor pool holding it after the files it references (fetched the same
    way; the built-in files every pool has are not fetched)."""
    pool = new_pool()
    added: set[str] = set()

    def known(name: str) -> bool:
        return name in added or name in BUILTIN_FILES or name.startswith("google/protobuf/")

    def add(found: Mapping[str, Any]) -> descriptor_pb2.FileDescriptorProto:
        for ref in found.get("references") or []:
            if not known(str(ref["name"])):
                add(client.version(str(ref["subject"]), int(ref["version"]), _SERIALIZED))
        file = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(found["schema"]))
        if not known(file.name):
            pool.Add(file)  # type: ignore[no-untyped-call]
            added.add(file.name)
        return file

    return add(found), pool


class ProtobufConverter(RegistryConverter):
    aliases: ClassVar[tuple[str, ...]] = ("io.confluent.connect.protobuf.ProtobufConverter",)
    schema_type: ClassVar[str] = "PROTOBUF"

    def __init__(self) -> None:
        super().__init__()
        self.data = ProtobufData()
        # Connect schema -> (its file, the descriptor text registered, the references, the frame's indexes)
        self._writers: dict[Schema, tuple[ProtobufSchemaInfo, str, list[dict[str, Any]], bytes]] = {}
        # id -> (the writer's file, a pool holding it and what it imports)
        self._files: dict[int, tuple[descriptor_pb2.FileDescriptorProto, DescriptorPool]] = {}
        # (id, message indexes, topic) -> (message class, Connect schema)
        self._readers: dict[tuple[int, tuple[int, ...], str], tuple[type[Message], Schema]] = {}
        # id of the subject's latest version (use.latest.version) -> its message class
        self._latest: dict[tuple[int, str], tuple[type[Message], bytes]] = {}
        self._cache_lock = threading.Lock()

    def configure(self, configs: Mapping[str, Any], is_key: bool | None = None) -> None:
        super().configure(configs, is_key)
        self.data = ProtobufData(
            optional_for_nullables=config_bool(configs, "optional.for.nullables", False),
            wrapper_for_nullables=config_bool(configs, "wrapper.for.nullables", False),
        )

    # -- Connect -> bytes -------------------------------------------------------------------------

    def _writer(self, schema: Schema) -> tuple[ProtobufSchemaInfo, str, list[dict[str, Any]], bytes]:
        with self._cache_lock:
            known = self._writers.get(schema)
        if known is not None:
            return known
        info = self.data.from_connect_schema(schema)
        references = []
        for name in info.file.dependency:
            if name.startswith("google/protobuf/"):
                continue  # protobuf's well-known types: every registry knows them
            data = _referenced(name) or BUILTIN_FILES.get(name)
            if data is None:
                raise DataException(
                    f"the Protobuf schema of {schema.name} imports {name}, which is not known"
                )
            text = base64.b64encode(data).decode("ascii")
            version = self.client.register_version(name, text, self.schema_type)
            references.append({"name": name, "subject": name, "version": version})
        entry = (info, _descriptor_text(info.file), references, encode_indexes(indexes_of(info.descriptor)))
        with self._cache_lock:
            self._writers[schema] = entry
        return entry

    def _latest_writer(self, schema_id: int, message_name: str) -> tuple[type[Message], bytes]:
        """The message class of ``message_name`` in the subject's latest schema (``use.latest.version``)."""
        key = (schema_id, message_name)
        with self._cache_lock:
            known = self._latest.get(key)
        if known is not None:
            return known
        _, pool = self._file(schema_id)
        try:
            descriptor = pool.FindMessageTypeByName(message_name)  # type: ignore[no-untyped-call]
        except KeyError:
            raise DataException(
                f"the latest schema (id {schema_id}) has no message {message_name} to write the record with"
            ) from None
        entry = (GetMessageClass(descriptor), encode_indexes(indexes_of(descriptor)))
        with self._cache_lock:
            self._latest[key] = entry
        return entry

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        if value is None:
            return None  # a tombstone stays one
        if schema is None:
            raise DataException(
                f"ProtobufConverter needs a schema to write the {self.part} of a record to {topic}"
            )
        info, text, references, indexes = self._writer(schema)
        subject = self.subject(topic, info.message_name)
        schema_id, latest = self.writer_id(subject, text, references)
        try:
            if latest is None:
                message = self.data.from_connect_value(info, schema, value)
            else:
                message_class, indexes = self._latest_writer(schema_id, info.message_name)
                message = self.data.from_connect_value_into(message_class, schema, value)
            payload = message.SerializeToString()
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            raise DataException(
                f"Converting Kafka Connect data to Protobuf for topic {topic} failed: {exc}"
            ) from None
        return HEADER.pack(MAGIC, schema_id) + indexes + payload

    # -- bytes -> Connect -------------------------------------------------------------------------

    def _file(self, schema_id: int) -> tuple[descriptor_pb2.FileDescriptorProto, DescriptorPool]:
        with self._cache_lock:
            known = self._files.get(schema_id)
        if known is not None:
            return known
        found = self.client.schema(schema_id, _SERIALIZED)
        found_type = found.get("schemaType", "AVRO")
        if found_type != self.schema_type:
            raise DataException(f"schema {schema_id} is {found_type}, not {self.schema_type}")
        try:
            entry = load_descriptors(self.client, found)
        except (ValueError, TypeError, KeyError, DecodeError) as exc:
            raise DataException(
                f"schema {schema_id} from the registry is not a usable Protobuf schema: {exc}"
            ) from None
        with self._cache_lock:
            self._files[schema_id] = entry
        return entry

    def _reader(self, schema_id: int, indexes: list[int], topic: str) -> tuple[type[Message], Schema]:
        key = (schema_id, tuple(indexes), topic)
        with self._cache_lock:
            known = self._readers.get(key)
        if known is not None:
            return known
        file, pool = self._file(schema_id)
        try:
            name = message_at(file, indexes)
            descriptor = pool.FindMessageTypeByName(name)  # type: ignore[no-untyped-call]
        except (ValueError, KeyError) as exc:
            raise self.read_error(
                topic, f"the message indexes {indexes} name no message of schema {schema_id}: {exc}"
            ) from None
        connect = self.data.to_connect_schema(descriptor)
        version = self.registry_version(topic, schema_id, name)
        if version is not None and connect.version is None:
            connect = dataclasses.replace(connect, version=version)
        entry = (GetMessageClass(descriptor), connect)
        with self._cache_lock:
            self._readers[key] = entry
        return entry

    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        if data is None:
            return SchemaAndValue(None, None)
        schema_id = self.unframe(topic, data)
        try:
            indexes, start = decode_indexes(data, HEADER.size)
        except ValueError as exc:
            raise self.read_error(topic, f"bad message indexes: {exc}") from None
        message_class, connect = self._reader(schema_id, indexes, topic)
        try:
            message = ProtobufData.parse(message_class, data[start:])
            value = self.data.to_connect_value(connect, message)
        except DataException as exc:
            raise self.read_error(topic, str(exc)) from None
        return SchemaAndValue(connect, value)
