"""The reader schemas of Schema Registry-framed JSON Schema and Protobuf keys and values as
Connect schemas (pure: no I/O), and Confluent's framing shared by every format.

- JSON Schema: the registered schema's JSON (and those it references, by reference name)
  read by ``connect.api.json_schema.JsonSchemaData`` (Confluent's JsonSchemaData mapping).
- Protobuf: the registered schema fetched as a serialized ``FileDescriptorProto``
  (``format=serialized``, base64), added with the files it imports to a descriptor pool
  that knows the built-in files (``connect.api.protobuf.new_pool``); a message of it read
  by ``ProtobufData`` (Confluent's ProtobufData mapping). The reader's message is the
  file's first one, as Confluent's ``ProtobufSchema`` picks when no name is given.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence

from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import Descriptor
from google.protobuf.descriptor_pool import DescriptorPool

from connect.api import DataException, Schema
from connect.api.json_schema import JsonSchemaData
from connect.api.protobuf import BUILTIN_FILES, ProtobufData, new_pool

MAGIC_BYTE = 0
HEADER_SIZE = 5


def framing_problem(data: bytes) -> str:
    """Why ``data`` is not Schema Registry framing (magic byte 0, a 4-byte schema id)."""
    if not data:
        return "not Schema Registry framing: empty"
    if data[0] != MAGIC_BYTE:
        return f"not Schema Registry framing: unknown magic byte {hex(data[0])}"
    return f"not Schema Registry framing: {len(data)} bytes, fewer than the 5 of magic byte and schema id"


def json_connect_schema(schema: str, names: Sequence[str], referenced: Sequence[str]) -> Schema:
    """The Connect schema of a JSON Schema's text; ``referenced`` the texts of the schemas it
    refers to, by the reference ``names`` (same order)."""
    refs = {n: json.loads(t) for n, t in zip(names, referenced, strict=True)}
    return JsonSchemaData().to_connect_schema(json.loads(schema), refs)


def is_known_file(name: str) -> bool:
    """A file every descriptor pool of ours has: not fetched from the registry."""
    return name in BUILTIN_FILES or name.startswith("google/protobuf/")


def protobuf_files(
    schema: str, referenced: Sequence[str]
) -> tuple[descriptor_pb2.FileDescriptorProto, DescriptorPool]:
    """The file of a serialized (base64) descriptor and a pool holding it after the files it
    imports (``referenced``, base64 too, each after those it imports)."""
    pool = new_pool()
    added: set[str] = set()
    for text in [*referenced, schema]:
        file = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(text))
        if not is_known_file(file.name) and file.name not in added:
            pool.Add(file)  # type: ignore[no-untyped-call]
            added.add(file.name)
    return file, pool


def first_message(file: descriptor_pb2.FileDescriptorProto, pool: DescriptorPool) -> Descriptor:
    if not file.message_type:
        raise DataException(f"the Protobuf file {file.name} has no message")
    package = f"{file.package}." if file.package else ""
    found: Descriptor = pool.FindMessageTypeByName(package + file.message_type[0].name)  # type: ignore[no-untyped-call]
    return found


def protobuf_connect_schema(schema: str, referenced: Sequence[str]) -> Schema:
    """The Connect schema of the first message of a serialized descriptor."""
    file, pool = protobuf_files(schema, referenced)
    return ProtobufData().to_connect_schema(first_message(file, pool))


def connect_schema_of(fmt: str, schema: str, names: Sequence[str], referenced: Sequence[str]) -> Schema:
    """The Connect schema of a JSON Schema or Protobuf reader schema."""
    if fmt == "json-schema":
        return json_connect_schema(schema, names, referenced)
    return protobuf_connect_schema(schema, referenced)
