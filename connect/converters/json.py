"""Kafka's ``JsonConverter``: the ``{"schema":...,"payload":...}`` envelope, byte-compatible.

Writes exactly the bytes Kafka's converter (Jackson) writes for the same data:
schema nodes with Kafka's key order, doubles and floats formatted like Java's
``Double.toString``/``Float.toString``, bytes and Decimals as base64 (or Decimals
as exact JSON numbers with ``decimal.format=NUMERIC``), no whitespace. Reads
anything Kafka's converter writes.

Configs (``key.converter.*``/``value.converter.*`` without the prefix; values may
be strings as they come from ``.properties`` files):

- ``schemas.enable`` (true): wrap values in the envelope; when false, write and
  read bare JSON payloads and infer values without schemas.
- ``schemas.cache.size`` (1000): how many schemas to keep, each way.
- ``decimal.format`` (BASE64): ``BASE64`` or ``NUMERIC``.
- ``replace.null.with.default`` (true): a null field with a default is written
  (and read) as the default.
"""

from __future__ import annotations

import base64
import dataclasses
import decimal
import json
import math
import re
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, ClassVar, cast

import msgspec
import orjson

from connect.api.converter import ConvertedBatch, Converter, HeaderConverter
from connect.api.data import (
    INT_RANGES,
    Date,
    Decimal,
    Field,
    Parameters,
    Schema,
    SchemaAndValue,
    Struct,
    Time,
    Timestamp,
    Type,
)
from connect.api.errors import DataException
from connect.api.headers import Headers
from connect.api.record_columns import StructColumn
from connect.converters.config_values import config_bool, config_choice, config_int
from connect.converters.java_numbers import format_double, format_float, to_float32
from connect.converters.json_envelopes import read_envelopes
from connect.converters.json_errors import JsonProblem, NeedExactNumbers, json_type
from connect.converters.json_readers import (
    ColumnReader,
    TextsReader,
    array_reader,
    column_reader,
    each,
    logical_reader,
    map_reader,
    read_base64,
    struct_column_reader,
    struct_reader,
    struct_texts_reader,
    texts_reader,
    with_fast_path,
)
from connect.converters.json_writers import (
    DATETIME,
    EPOCH,
    UTC,
    array_writer,
    map_writer,
    row_writer,
    struct_writer,
)

__all__ = ["JsonConverter", "format_double", "format_float", "to_float32"]

ENVELOPE_ERROR = (
    'JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain additional '
    "fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter "
    "configuration."
)

_JSON_TYPE_NAMES: dict[Type, str] = {
    Type.BOOLEAN: "boolean",
    Type.INT8: "int8",
    Type.INT16: "int16",
    Type.INT32: "int32",
    Type.INT64: "int64",
    Type.FLOAT32: "float",
    Type.FLOAT64: "double",
    Type.BYTES: "bytes",
    Type.STRING: "string",
    Type.ARRAY: "array",
    Type.MAP: "map",
    Type.STRUCT: "struct",
}
_TYPES_BY_JSON_NAME = {v: k for k, v in _JSON_TYPE_NAMES.items()}
_INT64_MIN, _INT64_MAX = INT_RANGES[Type.INT64]
_INT32_MIN, _INT32_MAX = INT_RANGES[Type.INT32]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"Non-standard JSON token {name}")


def _plain(v: Any) -> Any:
    """Schemaless values from the exact parser: decimals back to floats, like the fast path."""
    if isinstance(v, decimal.Decimal):
        return float(v)
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


# orjson escapes control characters as \u001f, Jackson as \u001F. Only genuine escapes (preceded by an even
# number of backslashes) are rewritten.
_LOWER_HEX_ESCAPE = re.compile(rb"(?<!\\)((?:\\\\)*)\\u00([01][0-9a-f])")


def _jackson_escapes(out: bytes) -> bytes:
    if b"\\u00" not in out:
        return out
    return _LOWER_HEX_ESCAPE.sub(lambda m: m.group(1) + b"\\u00" + m.group(2).upper(), out)


def _jackson_escapes_all(out: list[bytes]) -> list[bytes | None]:
    """``_jackson_escapes`` over a batch, searched once over the joined documents: a search
    per document cost as much as writing it (``benchmarks/file_pipeline.py``)."""
    if b"\\u00" not in b"".join(out):
        return cast("list[bytes | None]", out)  # a list of documents, as it is
    return [_jackson_escapes(o) if b"\\u00" in o else o for o in out]


def _one_value(column: Sequence[Any]) -> bool:
    """Whether every row of a field's column holds a value JSON writes alike, so it is written
    once (InsertField's topic and static fields; ``benchmarks/transforms.py``): equal
    strings, or else one object (not mere equality: True == 1 == 1.0, and -0.0 == 0.0)."""
    first = column[0]
    if type(first) is str:  # one C-level pass; a str subclass is written as its text
        return column.count(first) == len(column)
    return first is column[-1] and len(set(map(id, column))) == 1


def _b64(v: bytes | bytearray | memoryview) -> str:
    return base64.b64encode(v).decode("ascii")


# -- configuration -----------------------------------------------------------------------------------------


# Types whose Connect values are their JSON values, checked by Schema.fits_all: a column
# of them needs no writer call per value. (Floats are written the Java way; bytes in base64.)
_AS_IS_TYPES = frozenset({Type.STRING, Type.BOOLEAN, Type.INT8, Type.INT16, Type.INT32, Type.INT64})

# A document that is JSON null, as _are_documents sees it (msgspec's Raw of it).
_NULL_DOCUMENT = msgspec.Raw(b"null")
Writer = Callable[[Any], Any]
Reader = Callable[[Any], Any]
#: A schema node's schema, reader, and reader of payload texts (the batch path's).
ReaderEntry = tuple[Schema, Reader, TextsReader]


class JsonConverter(Converter, HeaderConverter):
    """JSON with an optional embedded schema; Kafka's ``org.apache.kafka.connect.json.JsonConverter``."""

    aliases: ClassVar[tuple[str, ...]] = ("org.apache.kafka.connect.json.JsonConverter",)

    def __init__(self) -> None:
        self.schemas_enable = True
        self.cache_size = 1000
        self.decimal_numeric = False
        self.replace_null_with_default = True
        self.converter_type = "value"
        self._writers: OrderedDict[Schema, tuple[orjson.Fragment, Writer]] = OrderedDict()
        self._last_writer: tuple[Schema, tuple[orjson.Fragment, Writer]] | None = None
        self._readers: OrderedDict[bytes, ReaderEntry] = OrderedDict()
        self._document_checker = msgspec.json.Decoder(msgspec.Raw)

    def configure(self, configs: Mapping[str, Any], is_key: bool | None = None) -> None:
        self.schemas_enable = config_bool(configs, "schemas.enable", True)
        self.cache_size = config_int(configs, "schemas.cache.size", 1000)
        self.decimal_numeric = (
            config_choice(configs, "decimal.format", "BASE64", ("BASE64", "NUMERIC")) == "NUMERIC"
        )
        self.replace_null_with_default = config_bool(configs, "replace.null.with.default", True)
        if is_key is None:
            self.converter_type = config_choice(
                configs, "converter.type", "header", ("key", "value", "header")
            )
        else:
            self.converter_type = "key" if is_key else "value"
        self._writers.clear()
        self._last_writer = None
        self._readers.clear()

    # -- Connect -> JSON -------------------------------------------------------------------------------------

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        if schema is None and value is None:
            return None
        try:
            if schema is None:
                payload = self._infer(value)
                schema_json: orjson.Fragment | None = None
            else:
                last = self._last_writer
                if last is not None and last[0] is schema:
                    schema_json, writer = last[1]  # _writer_entry's first case, inline
                else:
                    schema_json, writer = self._writer_entry(schema)
                payload = writer(value)
        except JsonProblem as e:
            raise DataException(f"Converting Kafka Connect data to JSON failed: {e.message()}") from None
        doc = {"schema": schema_json, "payload": payload} if self.schemas_enable else payload
        try:
            out = orjson.dumps(doc)
            return _jackson_escapes(out) if b"\\u00" in out else out
        except orjson.JSONEncodeError as e:
            raise DataException(
                f"Converting Kafka Connect data to byte[] failed due to serialization error: {e}"
            ) from e

    def from_connect_batch(
        self, topic: str, schemas: Sequence[Schema | None], values: Sequence[Any]
    ) -> list[bytes | None]:
        if isinstance(values, StructColumn) and (
            not self.schemas_enable or (schemas and schemas.count(values.schema) == len(schemas))
        ):
            return self._struct_column(values)
        first = schemas[0] if schemas else None
        if (
            first is not None
            and first.name is None
            and first.type in _AS_IS_TYPES
            and schemas.count(first) == len(schemas)
            and (None not in values or (first.optional and first.default_value is None))
            and first.fits_all(values)
        ):
            # A topic's values of one plain schema (a string per line, say): JSON is the
            # value itself, one orjson call each and no writer (benchmarks/file_pipeline.py).
            dumps = orjson.dumps
            if self.schemas_enable:
                schema_json = self._writer_entry(first)[0]
                out = [dumps({"schema": schema_json, "payload": v}) for v in values]
            else:
                out = list(map(dumps, values))
            return _jackson_escapes_all(out)
        if first is not None and schemas.count(first) == len(schemas):
            # One schema for the run (a table's rows, a CDC topic's change events): its writer
            # looked up once, then a writer and a dumps call per value; what does not convert
            # raises, and the worker converts the run record by record to name it
            # (benchmarks/jdbc_source.py).
            dumps = orjson.dumps
            try:
                schema_json, writer = self._writer_entry(first)
                if self.schemas_enable:
                    out = [dumps({"schema": schema_json, "payload": writer(v)}) for v in values]
                else:
                    out = [dumps(writer(v)) for v in values]
            except JsonProblem as e:
                raise DataException(f"Converting Kafka Connect data to JSON failed: {e.message()}") from None
            return _jackson_escapes_all(out)
        return super().from_connect_batch(topic, schemas, values)

    def _struct_column(self, structs: StructColumn) -> list[bytes | None]:
        """JSON of structs held column-wise (``_struct_rows``), in the schema envelope when
        ``schemas.enable``. ``benchmarks/transforms.py`` pays for this: a struct per row and
        a writer call per field cost more than the chain."""
        try:
            out = self._struct_rows(structs)
            if self.schemas_enable:
                # The envelope around each payload: the bytes orjson writes for
                # {"schema": ..., "payload": ...}, the schema's part written once.
                head = b'{"schema":' + orjson.dumps(self._writer_entry(structs.schema)[0]) + b',"payload":'
                out = [head + o + b"}" for o in out]
        except JsonProblem as e:
            raise DataException(f"Converting Kafka Connect data to JSON failed: {e.message()}") from None
        except orjson.JSONEncodeError as e:
            raise DataException(
                f"Converting Kafka Connect data to byte[] failed due to serialization error: {e}"
            ) from e
        return _jackson_escapes_all(out)

    def _struct_rows(self, structs: StructColumn) -> list[bytes]:
        """Each row's JSON object: each field column written at once (left as it is where
        JSON writes its values unchanged: plain strings, booleans and integers in range; a
        nested ``StructColumn`` the same way, its rows joined in as they are), a field
        holding one value in every row written once, then one object per row."""
        names = [f.name for f in structs.schema.fields]
        rows = len(structs)
        columns: list[Sequence[Any]] = []  # the columns that vary, written
        constants: list[bytes | None] = []  # per field: its JSON if the same in every row
        raw: list[bool] = []  # per field: whether its written column is JSON already
        for f, column in zip(structs.schema.fields, structs.fields, strict=True):
            if isinstance(column, StructColumn) and (column.schema is f.schema or column.schema == f.schema):
                # A CDC envelope's after and source (benchmarks/jdbc_source.py).
                constants.append(None)
                raw.append(True)
                columns.append(self._struct_rows(column))
                continue
            raw.append(False)
            if rows > 1 and _one_value(column):
                constants.append(orjson.dumps(self._plain_column(f.schema, column[:1])[0]))
            else:
                constants.append(None)
                columns.append(self._plain_column(f.schema, column))
        row = row_writer(tuple(names), tuple(constants), tuple(raw))
        return list(map(row, *columns)) if columns else [row()] * rows

    def _plain_column(self, schema: Schema, column: Sequence[Any]) -> Sequence[Any]:
        """A field's column as orjson writes it: itself where JSON writes the values
        unchanged (plain strings, booleans, integers in range), else written one by one."""
        if (
            schema.name is None
            and schema.type in _AS_IS_TYPES
            and (None not in column or (schema.optional and schema.default_value is None))
            and schema.fits_all(column)
        ):
            return column
        return list(map(self._writer(schema), column))

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        return self.from_connect_data(topic, schema, value)

    def _cache_put(self, cache: OrderedDict[Any, Any], key: Any, entry: Any) -> None:
        if self.cache_size <= 0:
            return
        cache[key] = entry
        if len(cache) > self.cache_size:
            cache.popitem(last=False)

    def _writer_entry(self, schema: Schema) -> tuple[orjson.Fragment, Writer]:
        last = self._last_writer
        if last is not None and last[0] is schema:
            return last[1]  # records of a topic mostly share one schema object: no hashing
        entry = self._writers.get(schema)
        if entry is not None:
            self._writers.move_to_end(schema)
            self._last_writer = (schema, entry)
            return entry
        try:
            entry = (orjson.Fragment(orjson.dumps(self.as_json_schema(schema))), self._writer(schema))
        except JsonProblem as e:
            raise DataException(f"Invalid default value in schema: {e.message()}") from None
        self._cache_put(self._writers, schema, entry)
        return entry

    def as_json_schema(self, schema: Schema) -> dict[str, Any]:
        """The JSON schema node Kafka writes for ``schema`` (keys in Kafka's order)."""
        node: dict[str, Any] = {"type": _JSON_TYPE_NAMES[schema.type]}
        if schema.type is Type.ARRAY:
            assert schema.value_schema is not None
            node["items"] = self.as_json_schema(schema.value_schema)
        elif schema.type is Type.MAP:
            assert schema.key_schema is not None and schema.value_schema is not None
            node["keys"] = self.as_json_schema(schema.key_schema)
            node["values"] = self.as_json_schema(schema.value_schema)
        elif schema.type is Type.STRUCT:
            node["fields"] = [{**self.as_json_schema(f.schema), "field": f.name} for f in schema.fields]
        node["optional"] = schema.optional
        if schema.name is not None:
            node["name"] = schema.name
        if schema.version is not None:
            node["version"] = schema.version
        if schema.doc is not None:
            node["doc"] = schema.doc
        if schema.parameters is not None:
            node["parameters"] = dict(schema.parameters)
        if schema.default_value is not None:
            node["default"] = self._writer(schema)(schema.default_value)
        return node

    def _writer(self, schema: Schema) -> Writer:
        base = self._base_writer(schema)
        if schema.default_value is not None and self.replace_null_with_default:
            default_json = base(schema.default_value)

            def write_or_default(v: Any) -> Any:
                return default_json if v is None else base(v)

            return write_or_default
        if schema.optional:

            def write_optional(v: Any) -> Any:
                return None if v is None else base(v)

            return write_optional

        def write_required(v: Any) -> Any:
            if v is None:
                raise JsonProblem("null value for a field that is required and has no default value")
            return base(v)

        return write_required

    def _base_writer(self, schema: Schema) -> Writer:
        logical = self._logical_writer(schema)
        if logical is not None:
            return logical
        t = schema.type
        if t in INT_RANGES:
            lo, hi = INT_RANGES[t]

            def write_int(v: Any) -> Any:
                if type(v) is not int and (not isinstance(v, int) or isinstance(v, bool)):
                    raise JsonProblem(f"expected int for {t.name}, got {type(v).__name__}")
                if not lo <= v <= hi:
                    raise JsonProblem(f"{v} is out of range for {t.name}")
                return v

            return write_int
        if t is Type.FLOAT32 or t is Type.FLOAT64:
            fmt = format_float if t is Type.FLOAT32 else format_double

            def write_float(v: Any) -> Any:
                if type(v) is float:
                    x = v
                elif isinstance(v, (float, int)) and not isinstance(v, bool):
                    try:
                        x = float(v)
                    except OverflowError:
                        raise JsonProblem(f"{v} is out of range for {t.name}") from None
                else:
                    raise JsonProblem(f"expected float for {t.name}, got {type(v).__name__}")
                text = fmt(x)
                if text[0] in "NI-" and text in ("NaN", "Infinity", "-Infinity"):
                    if t is Type.FLOAT32 and math.isfinite(x):
                        raise JsonProblem(f"{v} is out of range for FLOAT32")
                    return text  # Jackson writes non-finite numbers as strings
                return orjson.Fragment(text)

            return write_float
        if t is Type.BOOLEAN:

            def write_bool(v: Any) -> Any:
                if v is not True and v is not False:
                    raise JsonProblem(f"expected bool for BOOLEAN, got {type(v).__name__}")
                return v

            return write_bool
        if t is Type.STRING:

            def write_str(v: Any) -> Any:
                if not isinstance(v, str):
                    raise JsonProblem(f"expected str for STRING, got {type(v).__name__}")
                return v

            return write_str
        if t is Type.BYTES:

            def write_bytes(v: Any) -> Any:
                if not isinstance(v, (bytes, bytearray, memoryview)):
                    raise JsonProblem(f"expected bytes for BYTES, got {type(v).__name__}")
                return _b64(v)

            return write_bytes
        if t is Type.ARRAY:
            assert schema.value_schema is not None
            return array_writer(self._writer(schema.value_schema))
        if t is Type.MAP:
            assert schema.key_schema is not None and schema.value_schema is not None
            return map_writer(
                self._writer(schema.key_schema),
                self._writer(schema.value_schema),
                schema.key_schema.type is Type.STRING,
            )
        return struct_writer(schema, [(f.name, self._writer(f.schema)) for f in schema.fields])

    def _logical_writer(self, schema: Schema) -> Writer | None:
        name = schema.name
        if name == Decimal.LOGICAL_NAME:
            if self.decimal_numeric:
                scale = Decimal.scale(schema)

                def write_numeric(v: Any) -> Any:
                    try:
                        n = Decimal.unscaled(schema, v)
                    except DataException as e:
                        raise JsonProblem(str(e)) from None
                    digits = tuple(int(c) for c in str(abs(n)))
                    return orjson.Fragment(str(decimal.Decimal((1 if n < 0 else 0, digits, -scale))))

                return write_numeric

            try:
                known: int | None = Decimal.scale(schema)
            except DataException:
                known = None  # an invalid schema: from_logical says so at the first value

            def write_base64(v: Any) -> Any:
                try:
                    # The scale read once, not per value: a CDC numeric column per row
                    # (benchmarks/jdbc_source.py).
                    if known is None:
                        return _b64(Decimal.from_logical(schema, v))
                    return _b64(Decimal.from_logical_at(known, v))
                except DataException as e:
                    raise JsonProblem(str(e)) from None

            return write_base64
        logical: type[Date] | type[Time] | type[Timestamp]
        if name == Date.LOGICAL_NAME:
            logical = Date
        elif name == Time.LOGICAL_NAME:
            logical = Time
        elif name == Timestamp.LOGICAL_NAME:
            logical = Timestamp
        else:
            return None
        from_logical = logical.from_logical
        if logical is Timestamp:

            def write_timestamp(v: Any) -> Any:
                if type(v) is DATETIME and v.tzinfo is UTC:  # what sources mostly hold
                    delta = v - EPOCH
                    return (delta.days * 86400 + delta.seconds) * 1000 + delta.microseconds // 1000
                try:
                    return from_logical(schema, v)
                except DataException as e:
                    raise JsonProblem(str(e)) from None

            return write_timestamp

        def write_temporal(v: Any) -> Any:
            try:
                return from_logical(schema, v)
            except DataException as e:
                raise JsonProblem(str(e)) from None

        return write_temporal

    def _infer(self, v: Any) -> Any:
        """Schemaless Connect value -> JSON (Kafka infers the type from the Java class)."""
        if v is None or v is True or v is False or type(v) is str:
            return v
        if isinstance(v, bool):
            return bool(v)
        if isinstance(v, int):
            if not _INT64_MIN <= v <= _INT64_MAX:
                raise JsonProblem(f"{v} is out of range for INT64")
            return v
        if isinstance(v, float):
            text = format_double(v)
            return text if text in ("NaN", "Infinity", "-Infinity") else orjson.Fragment(text)
        if isinstance(v, str):
            return v
        if isinstance(v, (bytes, bytearray, memoryview)):
            return _b64(v)
        if isinstance(v, (list, tuple)):
            out = []
            i = 0
            try:
                for i, x in enumerate(v):  # noqa: B007 - i is read in the handler
                    out.append(self._infer(x))
            except JsonProblem as e:
                e.segments.append(f"[{i}]")
                raise
            return out
        if isinstance(v, dict):
            object_mode = all(isinstance(k, str) for k in v)
            entries: Any = {} if object_mode else []
            for k, x in v.items():
                try:
                    jx = self._infer(x)
                except JsonProblem as e:
                    e.segments.append(f"[{k!r}]")
                    raise
                if object_mode:
                    entries[k] = jx
                else:
                    entries.append([self._infer(k), jx])
            return entries
        if isinstance(v, Struct):
            return self._writer_entry(v.schema)[1](v)
        raise JsonProblem(f"Python type {type(v).__name__} does not have a corresponding schema type")

    # -- JSON -> Connect -------------------------------------------------------------------------------------

    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        if not data:
            return SchemaAndValue.NULL
        try:
            doc = orjson.loads(data)
        except orjson.JSONDecodeError as e:
            # orjson refuses a few things Jackson accepts (numbers beyond double range, lone surrogates).
            return self._to_connect(self._loads_exact(data, e), exact=True)
        try:
            return self._to_connect(doc, exact=False)
        except NeedExactNumbers:
            return self._to_connect(self._loads_exact(data, None), exact=True)

    def to_connect_batch(self, topic: str, data: Sequence[bytes | None]) -> ConvertedBatch:
        if self.schemas_enable:
            schemas, values = read_envelopes(data, self._fast_entry, partial(self.to_connect_data, topic))
            return ConvertedBatch(schemas, values)
        # Schemaless, the usual case for JSON topics: each value is its document. Decoded
        # only when a value is read; a sink that copies JSON asks for the raw form instead.
        data = list(data)
        return ConvertedBatch(
            decode=partial(self._decode_schemaless, topic, data),
            raw={"json": partial(self._are_documents, data)},
        )

    def _decode_schemaless(
        self, topic: str, data: list[bytes | None]
    ) -> tuple[Sequence[Schema | None], Sequence[Any]]:
        # One map of orjson over the batch. A null or empty record, or a document orjson
        # refuses but Jackson reads (a lone surrogate), sends the batch the careful way.
        try:
            values = list(map(orjson.loads, data))  # type: ignore[arg-type]
        except (orjson.JSONDecodeError, TypeError):
            careful = super().to_connect_batch(topic, data)
            return careful.schemas, careful.values
        return [None] * len(values), values

    def _are_documents(self, data: list[bytes | None]) -> bool:
        """Whether each datum is one JSON document, valid UTF-8, never null: then the value
        is the document (no schema) and the bytes can be copied as they are.

        Each document is parsed and skipped over, nothing built: a third of what
        orjson.loads costs. msgspec refuses what orjson refuses (a lone surrogate, NaN)
        or stops earlier (nesting deeper than the recursion limit, under orjson's 1024),
        so decoding reads whatever passes here."""
        try:
            documents = list(map(self._document_checker.decode, data))  # type: ignore[arg-type]
        except (msgspec.DecodeError, TypeError, RecursionError):
            return False
        if documents.count(_NULL_DOCUMENT):
            return False  # a null value: the sink decides what a null means, with the record
        try:
            if not all(map(bytes.isascii, data)):  # type: ignore[arg-type]
                # msgspec does not look inside strings: their bytes must be UTF-8.
                for d in data:
                    if not d.isascii():  # type: ignore[union-attr]
                        d.decode()  # type: ignore[union-attr]
        except (UnicodeDecodeError, TypeError):
            return False
        return True

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        return self.to_connect_data(topic, value)

    @staticmethod
    def _loads_exact(data: bytes, first_error: Exception | None) -> Any:
        try:
            return json.loads(data, parse_float=decimal.Decimal, parse_constant=_reject_constant)
        except ValueError as e:
            raise DataException(
                "Converting byte[] to Kafka Connect data failed due to serialization error: "
                f"{first_error or e}"
            ) from e

    def _to_connect(self, doc: Any, exact: bool) -> SchemaAndValue:
        if self.schemas_enable:
            if not (isinstance(doc, dict) and len(doc) == 2 and "schema" in doc and "payload" in doc):
                raise DataException(ENVELOPE_ERROR)
            schema_node, payload = doc["schema"], doc["payload"]
        else:
            schema_node, payload = None, doc
        if schema_node is None:
            return SchemaAndValue(None, _plain(payload) if exact else payload)
        schema, reader, _ = self._reader_entry(schema_node, exact)
        try:
            return SchemaAndValue(schema, reader(payload))
        except JsonProblem as e:
            raise DataException(f"Converting JSON to Kafka Connect data failed: {e.message()}") from None

    def _fast_entry(self, node: Any) -> ReaderEntry:
        return self._reader_entry(node, exact=False)

    def _reader_entry(self, node: Any, exact: bool) -> ReaderEntry:
        if exact:  # decimals in the node: not orjson-serializable, and rare enough not to cache
            schema = self.as_connect_schema(node)
            read = self._reader(schema)
            return schema, read, texts_reader(each(read))
        key = orjson.dumps(node)
        entry = self._readers.get(key)
        if entry is not None:
            self._readers.move_to_end(key)
            return entry
        schema = self.as_connect_schema(node)
        entry = (schema, self._reader(schema), self._texts_reader(schema))
        self._cache_put(self._readers, key, entry)
        return entry

    def as_connect_schema(self, node: Any) -> Schema:
        """Parse a JSON schema node (as written by Kafka's JsonConverter) into a Schema."""
        if not isinstance(node, dict):
            raise DataException(f"Schema must be a JSON object, got {json_type(node)}")
        type_name = node.get("type")
        if not isinstance(type_name, str):
            raise DataException("Schema must contain 'type' field")
        schema_type = _TYPES_BY_JSON_NAME.get(type_name)
        if schema_type is None:
            raise DataException(f"Unknown schema type: {type_name}")
        key_schema = value_schema = None
        fields: list[Field] = []
        if schema_type is Type.ARRAY:
            items = node.get("items")
            if items is None:
                raise DataException("Array schema did not specify the element type")
            value_schema = self.as_connect_schema(items)
        elif schema_type is Type.MAP:
            if "keys" not in node:
                raise DataException("Map schema did not specify the key type")
            if "values" not in node:
                raise DataException("Map schema did not specify the value type")
            key_schema = self.as_connect_schema(node["keys"])
            value_schema = self.as_connect_schema(node["values"])
        elif schema_type is Type.STRUCT:
            field_nodes = node.get("fields")
            if not isinstance(field_nodes, list):
                raise DataException('Struct schema\'s "fields" argument is not an array.')
            seen = set()
            for i, field_node in enumerate(field_nodes):
                field_name = field_node.get("field") if isinstance(field_node, dict) else None
                if not isinstance(field_name, str):
                    raise DataException("Struct schema's field name not specified properly")
                if field_name in seen:
                    raise DataException(f"Struct schema has a duplicate field name {field_name!r}")
                seen.add(field_name)
                fields.append(Field(field_name, i, self.as_connect_schema(field_node)))
        name = node.get("name")
        if name is not None and not isinstance(name, str):
            raise DataException(f"Schema name must be a string, got {json_type(name)}")
        version = node.get("version")
        if version is not None and (type(version) is not int or not _INT32_MIN <= version <= _INT32_MAX):
            raise DataException(f"Schema version must be an integer, got {version!r}")
        doc = node.get("doc")
        if doc is not None and not isinstance(doc, str):
            raise DataException(f"Schema doc must be a string, got {json_type(doc)}")
        params_node = node.get("parameters")
        parameters = None
        if params_node is not None:
            if not isinstance(params_node, dict) or not all(isinstance(v, str) for v in params_node.values()):
                raise DataException("Schema parameters must have string values.")
            parameters = Parameters(params_node)
        schema = Schema(
            schema_type,
            optional=node.get("optional") is True,
            name=name,
            version=version,
            doc=doc,
            parameters=parameters,
            key_schema=key_schema,
            value_schema=value_schema,
            fields=tuple(fields),
        )
        default_node = node.get("default")
        if default_node is not None:
            try:
                default = self._reader(schema)(default_node)
            except JsonProblem as e:
                raise DataException(f"Invalid default value in schema: {e.message()}") from None
            schema = dataclasses.replace(schema, default_value=default)
        return schema

    def _reader(self, schema: Schema) -> Reader:
        base = self._base_reader(schema)
        default = schema.default_value
        if default is not None and self.replace_null_with_default:

            def read_or_default(v: Any) -> Any:
                return default if v is None else base(v)

            return read_or_default
        if schema.optional:

            def read_optional(v: Any) -> Any:
                return None if v is None else base(v)

            return with_fast_path(schema, read_optional, optional=True)
        type_name = schema.type.name

        def read_required(v: Any) -> Any:
            if v is None:
                raise JsonProblem(f"Invalid null value for required {type_name} field")
            return base(v)

        return with_fast_path(schema, read_required, optional=False)

    def _texts_reader(self, schema: Schema) -> TextsReader:
        """What reads a batch's payload texts of ``schema`` (the batch path's)."""
        read_column = self._column_reader(schema)
        if schema.type is Type.STRUCT and schema.fields:
            fields = [self._column_reader(f.schema) for f in schema.fields]
            return struct_texts_reader(schema, fields, read_column)
        return texts_reader(read_column)

    def _column_reader(self, schema: Schema) -> ColumnReader:
        """What reads a column of ``schema``'s values (``json_readers.column_reader``): the
        batch path's, exactly ``_reader``'s reading of each value."""
        read = self._reader(schema)
        if schema.type is Type.STRUCT:
            fields = [(f.name, self._column_reader(f.schema)) for f in schema.fields]
            return struct_column_reader(schema, fields, read)
        defaulted = schema.default_value is not None and self.replace_null_with_default
        return column_reader(schema, read, schema.optional and not defaulted)

    def _base_reader(self, schema: Schema) -> Reader:
        logical = logical_reader(schema)
        if logical is not None:
            return logical
        t = schema.type
        if t in INT_RANGES:
            lo, hi = INT_RANGES[t]

            def read_int(v: Any) -> Any:
                if type(v) is not int:
                    raise JsonProblem(f"expected an integer for {t.name}, got {json_type(v)} {v!r}")
                if not lo <= v <= hi:
                    raise JsonProblem(f"{v} is out of range for {t.name}")
                return v

            return read_int
        if t is Type.FLOAT32 or t is Type.FLOAT64:
            single = t is Type.FLOAT32

            def read_float(v: Any) -> Any:
                if type(v) is float:
                    x = v
                elif (isinstance(v, (int, decimal.Decimal)) and not isinstance(v, bool)) or v in (
                    "NaN",
                    "Infinity",
                    "-Infinity",
                ):
                    x = float(v)
                else:
                    raise JsonProblem(f"expected a number for {t.name}, got {json_type(v)}")
                return to_float32(x) if single else x

            return read_float
        if t is Type.BOOLEAN:

            def read_bool(v: Any) -> Any:
                if v is not True and v is not False:
                    raise JsonProblem(f"expected a boolean for BOOLEAN, got {json_type(v)}")
                return v

            return read_bool
        if t is Type.STRING:

            def read_str(v: Any) -> Any:
                if type(v) is not str:
                    raise JsonProblem(f"expected a string for STRING, got {json_type(v)}")
                return v

            return read_str
        if t is Type.BYTES:
            return read_base64
        if t is Type.ARRAY:
            assert schema.value_schema is not None
            return array_reader(self._reader(schema.value_schema))
        if t is Type.MAP:
            assert schema.key_schema is not None and schema.value_schema is not None
            return map_reader(
                schema.key_schema, self._reader(schema.key_schema), self._reader(schema.value_schema)
            )
        return struct_reader(schema, [(f.name, self._reader(f.schema)) for f in schema.fields])


# -- container writers and readers -------------------------------------------------------------------------
