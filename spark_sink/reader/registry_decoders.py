"""Schema Registry-framed JSON Schema and Protobuf keys and values decoded into Arrow, in
Spark's executors (Avro's decoder is ``registry_values``'; this one shares its contract:
``decode(raw) -> (column, reasons by row)``).

- JSON Schema: the payload after the 5-byte header is a JSON document. It is read with the
  reader schema whatever writer id the record carries (a JSON document names its fields
  itself, so no writer schema is needed and none is fetched), through
  ``JsonSchemaData.to_connect_value``: a document that does not fit the reader schema (a
  string for an integer, a null for a required field) is a bad record. The document is not
  validated against the JSON Schema beyond that.
- Protobuf: after the header come Confluent's message indexes, then the message. The
  writer's file (its id fetched once per Python worker with ``format=serialized``) and the
  indexes pick the message it is parsed with; its Connect value (``ProtobufData``) fills
  the reader's columns *by field name*: fields the reader lacks are dropped, fields the
  writer lacks are null, a field whose value does not fit the reader's column type makes
  the record bad.

Values become Arrow through ``connect.api.arrow.python_converter`` (the sink's mapping), a
column at a time; a value that does not fit its column is found and reported alone.
"""

from __future__ import annotations

import decimal
import json
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
from confluent_kafka.schema_registry import SchemaRegistryClient
from google.protobuf import descriptor_pb2
from google.protobuf.descriptor_pool import DescriptorPool
from google.protobuf.message import DecodeError, Message
from google.protobuf.message_factory import GetMessageClass
from pyspark.sql.pandas.types import from_arrow_type, to_arrow_type

from connect.api import DataException, Decimal, Schema, Type
from connect.api.arrow import Converter, arrow_type, python_converter
from connect.api.json_schema import JsonSchemaData
from connect.api.protobuf import ProtobufData, decode_indexes, message_at
from spark_sink.reader.registry_formats import (
    HEADER_SIZE,
    MAGIC_BYTE,
    first_message,
    framing_problem,
    protobuf_files,
)
from spark_sink.reader.registry_plan import FieldPlan, connect_schema, fetch_writer, referenced_files

_ARROW_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError)
#: Writer files by (registry url, id), shared by the tasks a Python worker runs.
_FILES: dict[tuple[str, int], tuple[descriptor_pb2.FileDescriptorProto, DescriptorPool] | str] = {}
_MAX_CACHED = 1000


class _Bad(Exception):
    """A record's key or value does not decode: why."""


class _Decoder:
    """Framing, the per-record loop and the Arrow column; subclasses read the payload."""

    def __init__(self, plan: FieldPlan, url: str, client: Callable[[], SchemaRegistryClient]) -> None:
        self.plan = plan
        self.url = url
        self._client = client
        self.schema = connect_schema(plan)
        self.type = to_arrow_type(
            from_arrow_type(arrow_type(self.schema), prefer_timestamp_ntz=False), timezone="UTC"
        )

    def read(self, schema_id: int, data: bytes) -> Any:
        raise NotImplementedError

    def decode(self, raw: Sequence[bytes | None]) -> tuple[pa.Array, dict[int, str]]:
        datums: list[Any] = []
        errors: dict[int, str] = {}
        for i, data in enumerate(raw):
            if data is None:
                datums.append(None)
                continue
            if len(data) < HEADER_SIZE or data[0] != MAGIC_BYTE:
                errors[i] = framing_problem(data)
                datums.append(None)
                continue
            try:
                datums.append(self.read(int.from_bytes(data[1:HEADER_SIZE], "big"), data))
            except _Bad as exc:
                errors[i] = str(exc)
                datums.append(None)
        try:
            return pa.array(datums, type=self.type), errors
        except _ARROW_ERRORS:
            pass
        for i, datum in enumerate(datums):
            try:
                pa.array([datum], type=self.type)
            except _ARROW_ERRORS as exc:
                errors[i] = f"the decoded {self.plan.side} does not fit its Spark column: {exc}"
                datums[i] = None
        return pa.array(datums, type=self.type), errors


def _has_decimal(schema: Schema) -> bool:
    if schema.name == Decimal.LOGICAL_NAME:
        return True
    children = [f.schema for f in schema.fields] if schema.type is Type.STRUCT else []
    children += [s for s in (schema.key_schema, schema.value_schema) if s is not None]
    return any(_has_decimal(c) for c in children)


class JsonSchemaDecoder(_Decoder):
    def __init__(self, plan: FieldPlan, url: str, client: Callable[[], SchemaRegistryClient]) -> None:
        super().__init__(plan, url, client)
        self.data = JsonSchemaData()
        self.convert = python_converter(self.schema)
        # Exact numbers only where a decimal is read: float parsing is faster.
        self.exact = _has_decimal(self.schema)

    def read(self, schema_id: int, data: bytes) -> Any:
        try:
            doc = json.loads(data[HEADER_SIZE:], parse_float=decimal.Decimal if self.exact else None)
        except (ValueError, UnicodeDecodeError) as exc:
            raise _Bad(f"the payload of schema id {schema_id} is not JSON: {exc}") from None
        try:
            value = self.data.to_connect_value(self.schema, doc)
        except DataException as exc:
            raise _Bad(
                f"the JSON document of schema id {schema_id} does not fit the reader's "
                f"{self.plan.describe()}: {exc}"
            ) from None
        return value if self.convert is None or value is None else self.convert(value)


_Message = tuple[type[Message], Schema, Converter | None]
_File = tuple[descriptor_pb2.FileDescriptorProto, DescriptorPool]


class ProtobufDecoder(_Decoder):
    def __init__(self, plan: FieldPlan, url: str, client: Callable[[], SchemaRegistryClient]) -> None:
        super().__init__(plan, url, client)
        self.data = ProtobufData()
        file, pool = protobuf_files(plan.schema, plan.referenced)
        self._own = (file, pool)
        self.reader_message = first_message(file, pool).full_name
        # (writer id, message indexes) -> (message class, its python converter) or why not.
        self._messages: dict[tuple[int, tuple[int, ...]], _Message | str] = {}

    def _file(self, schema_id: int) -> _File | str:
        if schema_id == self.plan.schema_id:
            return self._own
        cached = _FILES.get((self.url, schema_id))
        if cached is not None:
            return cached

        def files(client: SchemaRegistryClient, schema: Any) -> list[str]:
            if (schema.schema_type or "AVRO") != "PROTOBUF":
                return []
            return referenced_files(client, schema.references or [])

        fetched = fetch_writer(self._client(), self.url, schema_id, files, fmt="serialized")
        entry: _File | str
        if isinstance(fetched, str):
            entry = fetched
        else:
            found, referenced = fetched
            kind = found.schema_type or "AVRO"
            if kind != "PROTOBUF":
                entry = f"schema id {schema_id} is a {kind} schema, not Protobuf"
            else:
                try:
                    entry = protobuf_files(str(found.schema_str), referenced)
                except (DecodeError, TypeError, ValueError, KeyError) as exc:
                    entry = f"writer schema id {schema_id} is not a usable Protobuf schema: {exc}"
        if len(_FILES) >= _MAX_CACHED:
            _FILES.clear()
        _FILES[(self.url, schema_id)] = entry
        return entry

    def _message(self, schema_id: int, indexes: list[int]) -> _Message:
        key = (schema_id, tuple(indexes))
        known = self._messages.get(key)
        if known is None:
            found = self._file(schema_id)
            if isinstance(found, str):
                known = found
            else:
                file, pool = found
                try:
                    descriptor = pool.FindMessageTypeByName(message_at(file, indexes))  # type: ignore[no-untyped-call]
                    schema = self.data.to_connect_schema(descriptor)
                    known = (GetMessageClass(descriptor), schema, python_converter(schema))
                except (ValueError, KeyError, DataException) as exc:
                    known = (
                        f"the message indexes {indexes} name no usable message of schema id "
                        f"{schema_id}: {exc}"
                    )
            self._messages[key] = known
        if isinstance(known, str):
            raise _Bad(known)
        return known

    def read(self, schema_id: int, data: bytes) -> Any:
        try:
            indexes, start = decode_indexes(data, HEADER_SIZE)
        except ValueError as exc:
            raise _Bad(
                f"bad Protobuf message indexes after the header of schema id {schema_id}: {exc}"
            ) from None
        message_class, schema, convert = self._message(schema_id, indexes)
        try:
            value = self.data.to_connect_value(schema, ProtobufData.parse(message_class, data[start:]))
        except DataException as exc:
            raise _Bad(f"schema id {schema_id}: {exc}") from None
        # A dict by field names: the reader's struct column takes the names it has.
        return value if convert is None else convert(value)
