"""Record batch v2 headers: read, validate and rewrite without parsing records.

The 61-byte header is read with ``struct``; the records behind it stay opaque
bytes on the hot path. CRC-32C covers byte 21 to the end, so the broker can
rewrite the base offset (bytes 0-7) and partition leader epoch (12-15) without
recomputing it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Final

from crc32c import crc32c

HEADER: Final = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE: Final = HEADER.size  # 61
LOG_OVERHEAD: Final = 12  # baseOffset + batchLength precede the part batchLength counts
OFFSET_AND_LENGTH: Final = struct.Struct(">qi")
CRC_OFFSET: Final = 17
ATTRIBUTES_OFFSET: Final = 21
MAX_TIMESTAMP_OFFSET: Final = 35
LAST_OFFSET_DELTA_OFFSET: Final = 23

CODEC_MASK: Final = 0x07
TIMESTAMP_TYPE_LOG_APPEND: Final = 0x08
TRANSACTIONAL: Final = 0x10
CONTROL: Final = 0x20

NO_PRODUCER_ID: Final = -1


class Codec:
    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4
    NAMES: Final = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}


@dataclass(frozen=True, slots=True)
class BatchHeader:
    base_offset: int
    batch_length: int
    leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    count: int

    @property
    def size(self) -> int:
        """Bytes the whole batch occupies in a log."""
        return self.batch_length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def codec(self) -> int:
        return self.attributes & CODEC_MASK

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL)

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL)

    @property
    def last_sequence(self) -> int:
        if self.base_sequence < 0:
            return -1
        return (self.base_sequence + self.last_offset_delta) % (2**31)


def read_header(buf: bytes | bytearray | memoryview, pos: int = 0) -> BatchHeader:
    return BatchHeader(*HEADER.unpack_from(buf, pos))


class InvalidBatch(Exception):
    """A batch a producer sent cannot be appended. ``kind`` names the Kafka error."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind  # "corrupt" | "invalid" | "too_large" | "unsupported_compression"


def validate_produced(
    records: bytes | memoryview, max_message_bytes: int, allow_zstd: bool = True
) -> BatchHeader:
    """Check a partition's ``records`` from a Produce request (v3+) and return its header.

    One whole magic-2 batch with a matching CRC, consecutive offset deltas, no
    control bit, a known codec and at most ``max_message_bytes`` long.
    """
    n = len(records)
    if n < HEADER_SIZE:
        raise InvalidBatch(
            "corrupt", f"record batch of {n} bytes is shorter than its {HEADER_SIZE}-byte header"
        )
    h = read_header(records)
    if h.magic != 2:
        raise InvalidBatch("corrupt", f"record batch magic {h.magic} is not 2")
    if h.size != n:
        if h.size < n and h.size >= HEADER_SIZE:
            raise InvalidBatch("invalid", "a partition's records must hold exactly one record batch")
        raise InvalidBatch(
            "corrupt", f"record batch length {h.batch_length} does not match the {n} bytes sent"
        )
    if n > max_message_bytes:
        raise InvalidBatch(
            "too_large", f"record batch of {n} bytes exceeds max.message.bytes={max_message_bytes}"
        )
    if crc32c(memoryview(records)[ATTRIBUTES_OFFSET:]) != h.crc:
        raise InvalidBatch("corrupt", "record batch CRC-32C does not match its contents")
    if h.count < 1 or h.last_offset_delta != h.count - 1:
        raise InvalidBatch(
            "corrupt", f"record batch count {h.count} does not match last offset delta {h.last_offset_delta}"
        )
    if h.is_control:
        raise InvalidBatch("invalid", "clients may not produce control batches")
    if h.codec > Codec.ZSTD:
        raise InvalidBatch("corrupt", f"unknown compression codec {h.codec}")
    if h.codec == Codec.ZSTD and not allow_zstd:
        raise InvalidBatch("unsupported_compression", "zstd needs Produce v7 or later")
    return h


def rewritten_prefix(base_offset: int, batch_length: int, leader_epoch: int) -> bytes:
    """The first 16 bytes of a stored batch: base offset, length, leader epoch."""
    return struct.pack(">qii", base_offset, batch_length, leader_epoch)


def set_log_append_time(batch: bytearray, timestamp_ms: int) -> None:
    """Mark a batch LogAppendTime with ``timestamp_ms`` and recompute its CRC (in place)."""
    (attributes,) = struct.unpack_from(">h", batch, ATTRIBUTES_OFFSET)
    struct.pack_into(">h", batch, ATTRIBUTES_OFFSET, attributes | TIMESTAMP_TYPE_LOG_APPEND)
    struct.pack_into(">q", batch, MAX_TIMESTAMP_OFFSET, timestamp_ms)
    struct.pack_into(">I", batch, CRC_OFFSET, crc32c(memoryview(batch)[ATTRIBUTES_OFFSET:]))


def cut_before(data: bytes, offset: int) -> tuple[bytes, int]:
    """The whole batches of ``data`` that end before ``offset`` (read_committed stops at the
    last stable offset, which always falls between batches), and the offset after them
    (-1 when none does)."""
    pos = 0
    after = -1
    while pos + LOG_OVERHEAD <= len(data):
        base, length = OFFSET_AND_LENGTH.unpack_from(data, pos)
        if base >= offset:
            break
        (last_delta,) = struct.unpack_from(">i", data, pos + LAST_OFFSET_DELTA_OFFSET)
        after = base + last_delta + 1
        pos += length + LOG_OVERHEAD
    return data[:pos], after


def iter_batches(buf: bytes | bytearray | memoryview, start: int = 0, end: int | None = None):  # type: ignore[no-untyped-def]
    """Yield ``(position, base_offset, size)`` for each whole batch in ``buf[start:end]``."""
    end = len(buf) if end is None else end
    pos = start
    while pos + LOG_OVERHEAD <= end:
        base_offset, length = OFFSET_AND_LENGTH.unpack_from(buf, pos)
        size = length + LOG_OVERHEAD
        if length < HEADER_SIZE - LOG_OVERHEAD or pos + size > end:
            return
        yield pos, base_offset, size
        pos += size
