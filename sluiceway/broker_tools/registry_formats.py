"""Avro values framed for a Schema Registry in the console tools, as Confluent's
``kafka-avro-console-producer`` / ``-consumer`` do it: lines are read and printed in
Avro's JSON encoding (a union's branch named, ``{"string": "x"}``), records are
Confluent's wire format (byte 0, the 4-byte schema id, the Avro datum).

    sluiceway console-producer --topic t --value-format avro --schema-registry URL \\
        --value-schema '{"type": "record", ...}'
    sluiceway console-consumer --topic t --value-format avro --schema-registry URL
"""

from __future__ import annotations

import io
import json
import struct
from typing import Any

import fastavro

from connect.converters.registry_client import RegistryClient

__all__ = ["AvroLines", "RegistryFormatError"]

_HEADER = struct.Struct(">bI")


class RegistryFormatError(ValueError):
    """A line or a record that is not what the format takes; the message says why."""


class AvroLines:
    def __init__(self, url: str, subject: str, schema: str | None = None) -> None:
        self.client = RegistryClient({"schema.registry.url": url, "max.retry.time.ms": "5000"})
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
        if len(data) < _HEADER.size or data[0] != 0:
            raise RegistryFormatError("Unknown magic byte! (not written by a Schema Registry serializer)")
        _, schema_id = _HEADER.unpack_from(data)
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
