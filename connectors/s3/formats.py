"""Object formats: JSON lines, Avro container files (fastavro), Parquet (pyarrow) and raw
bytes. No S3 here.

An ``ObjectFile`` takes a topic partition's records for one object and, when the
object is committed, ``finish`` gives its bytes (spooled to disk past a few MB) and the
records that turned out not to fit (Parquet knows only then). Output is deterministic:
the same records always give the same bytes (gzip without a timestamp), so an object
written again after a crash is the same object.
"""

from __future__ import annotations

import gzip
import io
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import orjson

from connect.api import DataException, SinkRecord, Struct
from connect.api.json_values import JsonValues
from connectors.s3.config import S3SinkConfig

_SPOOL_BYTES = 8 * 1024 * 1024
_BLOCK_BYTES = 1024 * 1024


@dataclass
class Finished:
    """An object's content: ``size`` bytes in ``body`` (positioned at 0), ``rows`` records."""

    body: IO[bytes]
    size: int
    rows: int
    rejected: list[tuple[SinkRecord, str]] = field(default_factory=list)


class ObjectFile(ABC):
    @abstractmethod
    def append(self, record: SinkRecord) -> None:
        """Take a record; raise ``DataException`` (before taking it) if it cannot be written."""

    def extend(self, records: Sequence[SinkRecord]) -> bool:
        """Take all of ``records``, or none of them and return False (one of them cannot be
        written: the caller then goes one by one, to report it). Formats that gain nothing
        from a batch keep this default, which takes none."""
        return False

    def extend_texts(self, texts: Sequence[bytes]) -> int:
        """Take values given as their JSON text (``connect.api.sink_batch``), as many from
        the first as it can copy; returns how many (the caller writes the next as a record).
        Only formats whose ``copies_json_text`` is true take any."""
        return 0

    @abstractmethod
    def finish(self) -> Finished:
        """The object (``rows`` 0 when no record of it could be written: nothing to upload)."""

    @abstractmethod
    def discard(self) -> None:
        """Drop what was taken (the partition was revoked)."""


class Format(ABC):
    extension: str
    content_type: str
    content_encoding: str | None = None
    #: Whether its files take values as JSON text (``ObjectFile.extend_texts``).
    copies_json_text = False

    @abstractmethod
    def open(self) -> ObjectFile: ...


def make_format(config: S3SinkConfig) -> Format:
    kind = config.format
    if kind == "json":
        return JsonLinesFormat(config)
    if kind == "parquet":
        return ParquetFormat(config)
    if kind == "avro":
        return AvroFormat(config)
    return ByteArrayFormat(config)


# -- line formats ------------------------------------------------------------------------


def _encode_each(encode: Callable[[SinkRecord], bytes]) -> Callable[..., None]:
    def encode_many(records: Sequence[SinkRecord], write: Callable[[bytes], Any], sep: bytes) -> None:
        for r in records:
            write(encode(r))
            write(sep)

    return encode_many


class _LinesFile(ObjectFile):
    """Encoded records, each followed by the separator, optionally gzipped. Lines gather in
    a memory block and go to a spooled file (on disk past a few MB) a block at a time: one
    write per record through the file layers costs more than encoding the record.

    Each encoded record is written to a buffer at once rather than kept as a bytes object
    until a join: keeping a hundred thousand small orjson results alive made encoding a
    run of records about five times slower than streaming them (allocator work).
    """

    def __init__(
        self, encode: Any, separator: bytes, gzipped: bool, encode_many: Any = None, texts: bool = False
    ) -> None:
        self.encode = encode
        self.texts = texts  # takes JSON texts as lines (the separator is a line break)
        # Writes a run of records (each followed by the separator) with the given write
        # function, raising DataException if one cannot be encoded.
        self.encode_many = encode_many or _encode_each(encode)
        self.separator = separator
        self.spool: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES)  # noqa: SIM115 - closed by finish/discard
        self.out: IO[bytes] = (
            gzip.GzipFile(fileobj=self.spool, mode="wb", mtime=0) if gzipped else self.spool  # type: ignore[assignment]
        )
        self.block = io.BytesIO()
        self.rows = 0

    def append(self, record: SinkRecord) -> None:
        data = self.encode(record)  # raises before anything is taken
        self.block.write(data)
        self.block.write(self.separator)
        self.rows += 1
        if self.block.tell() >= _BLOCK_BYTES:
            self._drain()

    def extend(self, records: Sequence[SinkRecord]) -> bool:
        start = self.block.tell()
        try:
            self.encode_many(records, self.block.write, self.separator)
        except DataException:  # none is taken: the lines written so far are cut off again
            self.block.seek(start)
            self.block.truncate()
            return False
        self.rows += len(records)
        if self.block.tell() >= _BLOCK_BYTES:
            self._drain()
        return True

    def extend_texts(self, texts: Sequence[bytes]) -> int:
        # Each text becomes a line as it is, which it can only be if it has no line break
        # of its own (JSON allows them between tokens); such a value is written as its
        # record, encoded compact on its line. One join and two scans of it make a whole
        # run's lines, where encoding costs a Python call per record.
        if not self.texts or not texts:
            return 0
        lines = self.separator.join(texts)
        took = len(texts)
        if lines.count(b"\n") != took - 1 or b"\r" in lines:
            took = next(k for k, t in enumerate(texts) if b"\n" in t or b"\r" in t)
            if not took:
                return 0
            lines = self.separator.join(texts[:took])
        self.block.write(lines)
        self.block.write(self.separator)
        self.rows += took
        if self.block.tell() >= _BLOCK_BYTES:
            self._drain()
        return took

    def _drain(self) -> None:
        if self.block.tell():
            self.out.write(self.block.getbuffer())
            self.block = io.BytesIO()

    def finish(self) -> Finished:
        self._drain()
        if self.out is not self.spool:
            self.out.close()  # writes gzip's trailer; the spool stays open
        if not self.rows:
            self.spool.close()
            return Finished(io.BytesIO(), 0, 0)
        size = self.spool.tell()
        self.spool.seek(0)
        return Finished(self.spool, size, self.rows)

    def discard(self) -> None:
        self.block = io.BytesIO()
        self.spool.close()


class JsonLinesFormat(Format):
    """Confluent's JsonFormat: each value as JSON on its own line (Kafka's JsonConverter
    representation: Timestamps in ms, Dates in days, decimals per json.decimal.format)."""

    content_type = "application/json"
    # A value read from JSON is written as the text it was read from: the same document
    # (whitespace and the spelling of numbers may differ from orjson's), without decoding
    # and encoding it again, which is most of the sink's work per record.
    copies_json_text = True

    def __init__(self, config: S3SinkConfig) -> None:
        self.gzipped = config.s3_compression_type == "gzip"
        self.extension = ".json.gz" if self.gzipped else ".json"
        self.content_encoding = "gzip" if self.gzipped else None
        self.values = JsonValues("number" if config.json_decimal_format == "NUMERIC" else "base64", "epoch")

    def open(self) -> ObjectFile:
        return _LinesFile(self._encode, b"\n", self.gzipped, self._encode_many, texts=True)

    def _encode_many(self, records: Sequence[SinkRecord], write: Callable[[bytes], Any], sep: bytes) -> None:
        """``_encode`` of each record, with schemaless values (JSON in, JSON out: the common
        case) dumped inline rather than through a method call per record."""
        dumps, default, option, encode = (
            orjson.dumps,
            self.values.schemaless,
            orjson.OPT_NON_STR_KEYS,
            self._encode,
        )
        try:
            for r in records:
                v = r.value
                write(
                    dumps(v, default, option)
                    if r.value_schema is None and not isinstance(v, Struct)
                    else encode(r)
                )
                write(sep)
        except TypeError as exc:  # from dumps: going one by one then names the record
            raise DataException(f"a record cannot be written as JSON: {exc}") from None

    def _encode(self, record: SinkRecord) -> bytes:
        value = record.value
        if isinstance(value, Struct):
            value = self.values.struct(value)
        elif record.value_schema is not None and isinstance(value, dict | list):
            value = self.values.value(record.value_schema, value)
        try:
            return orjson.dumps(value, default=self.values.schemaless, option=orjson.OPT_NON_STR_KEYS)
        except TypeError as exc:
            raise DataException(f"Record {record.where} cannot be written as JSON: {exc}") from None


class ByteArrayFormat(Format):
    """Confluent's ByteArrayFormat: each value's bytes followed by the separator."""

    content_type = "application/octet-stream"

    def __init__(self, config: S3SinkConfig) -> None:
        self.gzipped = config.s3_compression_type == "gzip"
        self.extension = config.format_bytearray_extension + (".gz" if self.gzipped else "")
        self.content_encoding = "gzip" if self.gzipped else None
        self.separator = config.format_bytearray_separator.encode()

    def open(self) -> ObjectFile:
        return _LinesFile(_raw_bytes, self.separator, self.gzipped)


def _raw_bytes(record: SinkRecord) -> bytes:
    value = record.value
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    if isinstance(value, str):
        return value.encode()
    raise DataException(
        f"Record {record.where} has a {type(value).__name__} value; ByteArrayFormat writes bytes "
        "(use the ByteArrayConverter as value.converter)"
    )


# -- Parquet -----------------------------------------------------------------------------


class AvroFormat(Format):
    """Confluent's AvroFormat: an Avro container file per object, its schema the records'
    value schema mapped as Confluent's AvroData maps it (``connect.api.avro``), blocks
    compressed with ``avro.codec``. The writer hands a file records of one schema: by
    ``schema.compatibility`` another schema starts the next file or is projected."""

    extension = ".avro"
    content_type = "application/avro"

    def __init__(self, config: S3SinkConfig) -> None:
        self.codec = config.avro_codec

    def open(self) -> ObjectFile:
        return _AvroFile(self.codec)


class _AvroFile(ObjectFile):
    def __init__(self, codec: str) -> None:
        from connect.api.avro import AvroData

        self.codec = codec
        self.data = AvroData()
        self.schema: Any = None  # the Connect schema of the file's records
        self.datums: list[Any] = []

    def _check(self, record: SinkRecord) -> None:
        if record.value_schema is None:
            raise DataException(
                f"Record {record.where} has no value schema; AvroFormat writes records whose converter "
                "gives one (AvroConverter, or JsonConverter with schemas.enable)"
            )

    def append(self, record: SinkRecord) -> None:
        self._check(record)
        if self.schema is not None and record.value_schema != self.schema:
            raise DataException(
                f"Record {record.where}: an Avro file holds records of one schema, and this one's differs "
                "from the file's"
            )
        datum = self.data.from_connect_value(record.value_schema, record.value)  # type: ignore[arg-type]
        if self.schema is None:
            self.schema = record.value_schema
        self.datums.append(datum)

    def extend(self, records: Sequence[SinkRecord]) -> bool:
        schema = self.schema if self.schema is not None else (records[0].value_schema if records else None)
        if schema is None or any(r.value_schema != schema for r in records):
            return False
        try:
            datums = [self.data.from_connect_value(schema, r.value) for r in records]
        except DataException:
            return False
        self.schema = schema
        self.datums += datums
        return True

    def finish(self) -> Finished:
        import hashlib

        import fastavro

        if not self.datums:
            return Finished(io.BytesIO(), 0, 0)
        node = self.data.from_connect_schema(self.schema)
        text = orjson.dumps(node)
        spool: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES)  # noqa: SIM115 - the uploader closes it
        fastavro.writer(
            spool,
            fastavro.parse_schema(node),
            self.datums,
            codec=self.codec,
            sync_marker=hashlib.sha256(text).digest()[:16],
        )
        rows = len(self.datums)
        self.datums = []
        size = spool.tell()
        spool.seek(0)
        return Finished(spool, size, rows)

    def discard(self) -> None:
        self.datums = []
        self.schema = None


class ParquetFormat(Format):
    """Parquet through pyarrow: the object's records become one Arrow table (columns from
    the Connect schema, or inferred from schemaless values), written with parquet.codec."""

    content_type = "application/vnd.apache.parquet"

    def __init__(self, config: S3SinkConfig) -> None:
        self.codec = config.parquet_codec
        self.extension = ".parquet" if self.codec == "none" else f".{self.codec}.parquet"

    def open(self) -> ObjectFile:
        return _ParquetFile(self.codec)


class _ParquetFile(ObjectFile):
    def __init__(self, codec: str) -> None:
        self.codec = codec
        self.records: list[SinkRecord] = []

    def append(self, record: SinkRecord) -> None:
        if not isinstance(record.value, Struct | dict):
            raise DataException(
                f"Record {record.where} has a {type(record.value).__name__} value; Parquet rows are "
                "structs or JSON objects"
            )
        self.records.append(record)

    def finish(self) -> Finished:
        import pyarrow.parquet as pq

        from connect.api.arrow import BatchBuilder

        batch = BatchBuilder().build(self.records)
        self.records = []
        if not batch.table.num_rows:
            return Finished(io.BytesIO(), 0, 0, batch.rejected)
        spool: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES)  # noqa: SIM115 - the uploader closes it
        pq.write_table(batch.table, spool, compression=None if self.codec == "none" else self.codec)
        size = spool.tell()
        spool.seek(0)
        return Finished(spool, size, batch.table.num_rows, batch.rejected)

    def discard(self) -> None:
        self.records = []
