"""Values framed for a Schema Registry in the console tools, as Confluent's
``kafka-avro-console-*``, ``kafka-json-schema-console-*`` and ``kafka-protobuf-console-*``
do it; records are Confluent's wire format (byte 0, the 4-byte schema id, the payload).

- ``avro``: lines are read and printed in Avro's JSON encoding (a union's branch named,
  ``{"string": "x"}``);
- ``json-schema``: lines are JSON documents, checked against the schema before they are
  sent (Confluent's serializer validates too), and printed as they were written;
- ``protobuf``: lines are Protobuf's JSON mapping of a message of the schema's first
  message type (``--value-schema`` is .proto text, compiled by the registry); records carry
  Confluent's message indexes; printed in the JSON mapping.

    sluiceway console-producer --topic t --value-format avro --schema-registry URL \\
        --value-schema '{"type": "record", ...}'
    sluiceway console-consumer --topic t --value-format avro --schema-registry URL
"""

from __future__ import annotations

import io
import json
import struct
from typing import Any, Protocol

import fastavro
import jsonschema
import jsonschema.exceptions
import jsonschema.validators
from google.protobuf import json_format
from google.protobuf.message import DecodeError, Message
from google.protobuf.message_factory import GetMessageClass

from connect.api.protobuf import decode_indexes, encode_indexes, message_at
from connect.converters.protobuf import load_descriptors
from connect.converters.registry_client import RegistryClient

__all__ = [
    "FORMATS",
    "AvroLines",
    "JsonSchemaLines",
    "ProtobufLines",
    "RegistryFormatError",
    "RegistryLines",
    "lines_for",
]

_HEADER = struct.Struct(">bI")


class RegistryFormatError(ValueError):
    """A line or a record that is not what the format takes; the message says why."""


class RegistryLines(Protocol):
    def encode(self, line: str, number: int) -> bytes: ...

    def decode(self, data: bytes | None) -> bytes | None: ...


def _client(url: str) -> RegistryClient:
    return RegistryClient({"schema.registry.url": url, "max.retry.time.ms": "5000"})


def _schema_id(data: bytes) -> int:
    if len(data) < _HEADER.size or data[0] != 0:
        raise RegistryFormatError("Unknown magic byte! (not written by a Schema Registry serializer)")
    schema_id: int = _HEADER.unpack_from(data)[1]
    return schema_id


class AvroLines:
    def __init__(self, url: str, subject: str, schema: str | None = None) -> None:
        self.client = _client(url)
        self.subject = subject
        self._writer: tuple[int, Any] | None = None
        self._schema_text = schema
        self._readers: dict[int, Any] = {}

    def encode(self, line: str, number: int) -> bytes:
        """One line (Avro's JSON encoding of a datum) as a framed record."""
        if self._writer is None:
            if self._schema_text is None:
                raise RegistryFormatError("--value-format avro needs --value-schema to produce")
            try:
                node = json.loads(self._schema_text)
                parsed = fastavro.parse_schema(node)
            except (ValueError, fastavro.schema.SchemaParseException) as exc:
                raise RegistryFormatError(f"--value-schema is not an Avro schema: {exc}") from None
            schema_id = self.client.register(self.subject, json.dumps(node, separators=(",", ":")))
            self._writer = (schema_id, parsed)
        schema_id, parsed = self._writer
        try:
            datum = next(iter(fastavro.json_reader(io.StringIO(line), parsed)))
            out = io.BytesIO()
            out.write(_HEADER.pack(0, schema_id))
            fastavro.schemaless_writer(out, parsed, datum)
        except (ValueError, TypeError, KeyError, StopIteration, AttributeError) as exc:
            raise RegistryFormatError(f"line {number} does not match the Avro schema: {exc}") from None
        return out.getvalue()

    def decode(self, data: bytes | None) -> bytes | None:
        """A framed record as Avro's JSON encoding of its datum."""
        if data is None:
            return None
        schema_id = _schema_id(data)
        parsed = self._readers.get(schema_id)
        if parsed is None:
            found = self.client.schema(schema_id)
            parsed = self._readers[schema_id] = fastavro.parse_schema(json.loads(found["schema"]))
        try:
            datum = fastavro.schemaless_reader(io.BytesIO(data[_HEADER.size :]), parsed, None)
            text = io.StringIO()
            fastavro.json_writer(text, parsed, [datum])
        except (ValueError, TypeError, EOFError, IndexError) as exc:
            raise RegistryFormatError(f"the Avro payload does not match schema {schema_id}: {exc}") from None
        return text.getvalue().strip().encode()


class JsonSchemaLines:
    def __init__(self, url: str, subject: str, schema: str | None = None) -> None:
        self.client = _client(url)
        self.subject = subject
        self._schema_text = schema
        self._writer: tuple[int, Any] | None = None  # (id, a validator of the schema)

    def encode(self, line: str, number: int) -> bytes:
        """One line (a JSON document) as a framed record, once it is valid by the schema."""
        if self._writer is None:
            if self._schema_text is None:
                raise RegistryFormatError("--value-format json-schema needs --value-schema to produce")
            try:
                node = json.loads(self._schema_text)
                cls = jsonschema.validators.validator_for(node)
                cls.check_schema(node)
            except (ValueError, jsonschema.exceptions.SchemaError) as exc:
                raise RegistryFormatError(f"--value-schema is not a JSON Schema: {exc}") from None
            text = json.dumps(node, separators=(",", ":"))
            self._writer = (self.client.register(self.subject, text, "JSON"), cls(node))
        schema_id, validator = self._writer
        try:
            document = json.loads(line)
        except ValueError as exc:
            raise RegistryFormatError(f"line {number} is not JSON: {exc}") from None
        problem = jsonschema.exceptions.best_match(validator.iter_errors(document))
        if problem is not None:
            where = "/".join(str(p) for p in problem.absolute_path) or "the document"
            raise RegistryFormatError(
                f"line {number} does not match the JSON schema at {where}: {problem.message}"
            )
        return _HEADER.pack(0, schema_id) + json.dumps(document, separators=(",", ":")).encode()

    def decode(self, data: bytes | None) -> bytes | None:
        """A framed record as its JSON document."""
        if data is None:
            return None
        _schema_id(data)
        return data[_HEADER.size :]


FORMATS = ("avro", "json-schema", "protobuf")


def lines_for(value_format: str, url: str, subject: str, schema: str | None) -> RegistryLines:
    """The console tools' lines <-> records of ``value_format`` (one of ``FORMATS``)."""
    if value_format == "avro":
        return AvroLines(url, subject, schema)
    if value_format == "json-schema":
        return JsonSchemaLines(url, subject, schema)
    if value_format == "protobuf":
        return ProtobufLines(url, subject, schema)
    raise RegistryFormatError(f"--value-format {value_format}: expected one of {', '.join(FORMATS)}")


class ProtobufLines:
    def __init__(self, url: str, subject: str, schema: str | None = None) -> None:
        self.client = _client(url)
        self.subject = subject
        self._schema_text = schema
        self._writer: tuple[int, type[Message]] | None = None
        self._readers: dict[tuple[int, tuple[int, ...]], type[Message]] = {}

    def _message_class(self, schema_id: int, indexes: list[int]) -> type[Message]:
        key = (schema_id, tuple(indexes))
        known = self._readers.get(key)
        if known is None:
            file, pool = load_descriptors(self.client, self.client.schema(schema_id, "serialized"))
            try:
                descriptor = pool.FindMessageTypeByName(message_at(file, indexes))  # type: ignore[no-untyped-call]
            except (ValueError, KeyError) as exc:
                raise RegistryFormatError(f"message indexes {indexes} of schema {schema_id}: {exc}") from None
            known = self._readers[key] = GetMessageClass(descriptor)
        return known

    def encode(self, line: str, number: int) -> bytes:
        """One line (a message in Protobuf's JSON mapping) as a framed record."""
        if self._writer is None:
            if self._schema_text is None:
                raise RegistryFormatError("--value-format protobuf needs --value-schema to produce")
            schema_id = self.client.register(self.subject, self._schema_text, "PROTOBUF")
            self._writer = (schema_id, self._message_class(schema_id, [0]))
        schema_id, message_class = self._writer
        try:
            message = json_format.Parse(line, message_class())
        except json_format.ParseError as exc:
            raise RegistryFormatError(f"line {number} does not match the Protobuf schema: {exc}") from None
        return _HEADER.pack(0, schema_id) + encode_indexes([0]) + message.SerializeToString()

    def decode(self, data: bytes | None) -> bytes | None:
        """A framed record as its message in Protobuf's JSON mapping."""
        if data is None:
            return None
        schema_id = _schema_id(data)
        try:
            indexes, start = decode_indexes(data, _HEADER.size)
            message = self._message_class(schema_id, indexes)()
            message.ParseFromString(data[start:])
        except (ValueError, DecodeError) as exc:
            raise RegistryFormatError(
                f"the Protobuf payload does not match schema {schema_id}: {exc}"
            ) from None
        text: str = json_format.MessageToJson(message, indent=None, preserving_proto_field_name=True)
        return text.encode()
