"""Record-level access to v2 batches: decompress, parse records, build batches.

Only the cold paths need this (compaction, deep validation of compacted topics,
exact timestamp lookups, the broker's own ``__consumer_offsets`` records), so it
favours clarity; varints go through kio's native readers. Compression is cramjam:
gzip, snappy (raw blocks as librdkafka writes them, and Java's xerial framing),
lz4 frames and zstd frames.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import cramjam
from crc32c import crc32c
from kio.serial.readers import read_signed_varint, read_signed_varlong
from kio.serial.writers import write_signed_varint, write_signed_varlong

from broker.storage.batch import (
    ATTRIBUTES_OFFSET,
    CODEC_MASK,
    HEADER,
    HEADER_SIZE,
    LOG_OVERHEAD,
    BatchHeader,
    Codec,
    read_header,
)

_XERIAL_MAGIC = b"\x82SNAPPY\x00"


class RecordsError(Exception):
    """Records inside a batch could not be decompressed or parsed."""


@dataclass(slots=True)
class Record:
    offset_delta: int
    timestamp_delta: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)
    attributes: int = 0


def decompress(codec: int, data: bytes | memoryview) -> bytes:
    try:
        if codec == Codec.NONE:
            return bytes(data)
        if codec == Codec.GZIP:
            return bytes(cramjam.gzip.decompress(bytes(data)))
        if codec == Codec.SNAPPY:
            raw = bytes(data)
            if raw.startswith(_XERIAL_MAGIC):
                return _xerial_decompress(raw)
            return bytes(cramjam.snappy.decompress_raw(raw))
        if codec == Codec.LZ4:
            return bytes(cramjam.lz4.decompress(bytes(data)))
        if codec == Codec.ZSTD:
            return bytes(cramjam.zstd.decompress(bytes(data)))
    except cramjam.DecompressionError as exc:
        raise RecordsError(f"cannot decompress {Codec.NAMES.get(codec, codec)} records: {exc}") from exc
    raise RecordsError(f"unknown compression codec {codec}")


def _xerial_decompress(raw: bytes) -> bytes:
    # 8-byte magic, int32 version, int32 compatible version, then [int32 size][raw block]*
    out = io.BytesIO()
    pos = 16
    while pos + 4 <= len(raw):
        (size,) = struct.unpack_from(">i", raw, pos)
        pos += 4
        if size < 0 or pos + size > len(raw):
            raise RecordsError("truncated xerial snappy block")
        out.write(bytes(cramjam.snappy.decompress_raw(raw[pos : pos + size])))
        pos += size
    return out.getvalue()


def compress(codec: int, data: bytes) -> bytes:
    if codec == Codec.NONE:
        return data
    if codec == Codec.GZIP:
        return bytes(cramjam.gzip.compress(data))
    if codec == Codec.SNAPPY:
        return bytes(cramjam.snappy.compress_raw(data))
    if codec == Codec.LZ4:
        return bytes(cramjam.lz4.compress(data))
    if codec == Codec.ZSTD:
        return bytes(cramjam.zstd.compress(data))
    raise RecordsError(f"unknown compression codec {codec}")


def _read_bytes(buf: bytes, pos: int) -> tuple[bytes | None, int]:
    length, used = read_signed_varint(buf, pos)
    pos += used
    if length < 0:
        return None, pos
    end = pos + length
    if end > len(buf):
        raise RecordsError("record field runs past the end of the batch")
    return buf[pos:end], end


def parse_records(batch: bytes | bytearray | memoryview) -> tuple[BatchHeader, list[Record]]:
    """Header and records of one whole batch (decompressing if needed)."""
    h = read_header(batch)
    payload = decompress(h.codec, memoryview(batch)[HEADER_SIZE : h.size])
    records: list[Record] = []
    pos = 0
    try:
        for _ in range(h.count):
            length, used = read_signed_varint(payload, pos)
            pos += used
            end = pos + length
            if length < 0 or end > len(payload):
                raise RecordsError("record length runs past the end of the batch")
            attributes = payload[pos]
            pos += 1
            ts_delta, used = read_signed_varlong(payload, pos)
            pos += used
            off_delta, used = read_signed_varint(payload, pos)
            pos += used
            key, pos = _read_bytes(payload, pos)
            value, pos = _read_bytes(payload, pos)
            n_headers, used = read_signed_varint(payload, pos)
            pos += used
            headers: list[tuple[str, bytes | None]] = []
            for _ in range(max(n_headers, 0)):
                hk, pos = _read_bytes(payload, pos)
                hv, pos = _read_bytes(payload, pos)
                headers.append(((hk or b"").decode("utf-8", "replace"), hv))
            if pos != end:
                raise RecordsError("record length does not match its fields")
            records.append(Record(off_delta, ts_delta, key, value, headers, attributes))
    except RecordsError:
        raise
    except Exception as exc:  # kio's readers raise on truncated varints
        raise RecordsError(f"malformed record: {exc}") from exc
    return h, records


def _encode_record(out: io.BytesIO, r: Record) -> None:
    body = io.BytesIO()
    body.write(bytes((r.attributes & 0xFF,)))
    write_signed_varlong(body, r.timestamp_delta)
    write_signed_varint(body, r.offset_delta)
    for blob in (r.key, r.value):
        if blob is None:
            write_signed_varint(body, -1)
        else:
            write_signed_varint(body, len(blob))
            body.write(blob)
    write_signed_varint(body, len(r.headers))
    for hk, hv in r.headers:
        kb = hk.encode()
        write_signed_varint(body, len(kb))
        body.write(kb)
        if hv is None:
            write_signed_varint(body, -1)
        else:
            write_signed_varint(body, len(hv))
            body.write(hv)
    raw = body.getvalue()
    write_signed_varint(out, len(raw))
    out.write(raw)


def build_batch(
    base_offset: int,
    records: Sequence[Record],
    *,
    base_timestamp: int,
    max_timestamp: int | None = None,
    attributes: int = 0,
    last_offset_delta: int | None = None,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    leader_epoch: int = 0,
) -> bytes:
    """Encode a v2 batch; the codec is taken from ``attributes``."""
    payload = io.BytesIO()
    for r in records:
        _encode_record(payload, r)
    body = compress(attributes & CODEC_MASK, payload.getvalue())
    if last_offset_delta is None:
        last_offset_delta = max((r.offset_delta for r in records), default=0)
    if max_timestamp is None:
        max_timestamp = max((base_timestamp + r.timestamp_delta for r in records), default=base_timestamp)
    header = bytearray(
        HEADER.pack(
            base_offset,
            HEADER_SIZE - LOG_OVERHEAD + len(body),
            leader_epoch,
            2,
            0,
            attributes,
            last_offset_delta,
            base_timestamp,
            max_timestamp,
            producer_id,
            producer_epoch,
            base_sequence,
            len(records),
        )
    )
    crc = crc32c(bytes(header[ATTRIBUTES_OFFSET:]) + body)
    struct.pack_into(">I", header, 17, crc)
    return bytes(header) + body


def simple_batch(
    base_offset: int, items: Iterable[tuple[bytes | None, bytes | None]], timestamp_ms: int
) -> bytes:
    """An uncompressed batch of (key, value) records sharing one timestamp."""
    recs = [Record(i, 0, k, v) for i, (k, v) in enumerate(items)]
    return build_batch(base_offset, recs, base_timestamp=timestamp_ms, max_timestamp=timestamp_ms)
