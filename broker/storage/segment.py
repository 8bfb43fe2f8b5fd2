"""One log segment: a ``.log`` file of record batches plus its ``.index`` and ``.timeindex``,
and a ``.txnindex`` once an aborted transaction ends in it."""

from __future__ import annotations

import contextlib
import os
import struct
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from crc32c import crc32c

from broker.storage.batch import (
    ATTRIBUTES_OFFSET,
    HEADER,
    HEADER_SIZE,
    LOG_OVERHEAD,
    BatchHeader,
)
from broker.storage.index import OffsetIndex, TimeIndex
from broker.storage.txn_index import AbortedTxn, append_file, fsync_file

# Enough of a header to know where a batch ends and which offsets it holds.
_SHORT_HEADER: Final = struct.Struct(">qiibIhi")  # up to lastOffsetDelta (27 bytes)
_SCAN_CHUNK: Final = 1 << 20
_BASE_OFFSET: Final = struct.Struct(">q")
_LAST_DELTA: Final = struct.Struct(">i")  # lastOffsetDelta, 23 bytes into a batch


def segment_name(base_offset: int) -> str:
    return f"{base_offset:020d}"


@dataclass(slots=True)
class ScanResult:
    valid_size: int
    next_offset: int
    max_timestamp: int
    headers: list[tuple[int, BatchHeader]]  # (position, header) of each valid batch


class Segment:
    """A segment file and its indexes. Only the partition's last segment is appended to."""

    def __init__(self, directory: str, base_offset: int) -> None:
        self.base_offset = base_offset
        stem = os.path.join(directory, segment_name(base_offset))
        self.path = stem + ".log"
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        self.index = OffsetIndex(stem + ".index", base_offset)
        self.time_index = TimeIndex(stem + ".timeindex", base_offset)
        self.txn_index_path = stem + ".txnindex"
        self._txn_index_unsynced = False
        self.size = os.fstat(self._fd).st_size
        self.next_offset = base_offset  # one past the last offset held
        self.max_timestamp = -1
        self.bytes_since_index = 0
        # segment.ms is measured from the first batch's timestamp, as in Kafka; the
        # creation time stands in when that batch carries none.
        self.first_batch_ts = -1
        self.created_wall_ms = int(time.time() * 1000)

    # -- opening ---------------------------------------------------------------------

    def scan(self, verify_crc: bool) -> ScanResult:
        """Walk the batches from the start; stop at the first torn or corrupt one."""
        pos = 0
        next_offset = self.base_offset
        max_ts = -1
        headers: list[tuple[int, BatchHeader]] = []
        size = self.size
        while pos + HEADER_SIZE <= size:
            head = os.pread(self._fd, HEADER_SIZE, pos)
            h = BatchHeader(*HEADER.unpack(head))
            end = pos + h.size
            if h.batch_length < HEADER_SIZE - LOG_OVERHEAD or end > size or h.magic != 2:
                break
            if h.base_offset < next_offset or h.last_offset_delta < 0:
                break
            if verify_crc and not self._crc_ok(pos, h):
                break
            headers.append((pos, h))
            next_offset = h.last_offset + 1
            max_ts = max(max_ts, h.max_timestamp)
            pos = end
        return ScanResult(pos, next_offset, max_ts, headers)

    def _crc_ok(self, pos: int, h: BatchHeader) -> bool:
        crc = 0
        start = pos + ATTRIBUTES_OFFSET
        end = pos + h.size
        while start < end:
            chunk = os.pread(self._fd, min(_SCAN_CHUNK, end - start), start)
            if not chunk:
                return False
            crc = crc32c(chunk, crc)
            start += len(chunk)
        return crc == h.crc

    def recover(self, index_interval: int) -> int:
        """Truncate a torn tail and rebuild both indexes; returns bytes truncated."""
        result = self.scan(verify_crc=True)
        truncated = self.size - result.valid_size
        if truncated:
            os.ftruncate(self._fd, result.valid_size)
            self.size = result.valid_size
        self._rebuild_indexes(result, index_interval)
        return truncated

    def _rebuild_indexes(self, result: ScanResult, index_interval: int) -> None:
        self.index.clear()
        self.time_index.clear()
        self.bytes_since_index = 0
        self.max_timestamp = -1
        for pos, h in result.headers:
            self._track(pos, h.base_offset, h.size, h.max_timestamp, index_interval)
        self.next_offset = result.next_offset
        if result.headers:
            self.first_batch_ts = result.headers[0][1].max_timestamp
            self.time_index.append(self.max_timestamp, result.headers[-1][1].base_offset)

    def open_existing(self, next_offset: int, index_interval: int) -> None:
        """Load the indexes of a closed segment, rebuilding them if they look wrong.

        ``next_offset`` is the next segment's base offset: where this one ends, even
        when compaction has removed its last records.
        """
        ok = (
            self.index.load(self.size)
            and self.time_index.load(next_offset)
            and (self.size == 0 or (len(self.index.offsets) > 0 and len(self.time_index.offsets) > 0))
        )
        if ok:
            self.max_timestamp = self.time_index.max_timestamp
            self.first_batch_ts = self.time_index.timestamps[0] if self.time_index.timestamps else -1
        else:
            self._rebuild_indexes(self.scan(verify_crc=False), index_interval)
        self.next_offset = next_offset

    # -- appending -------------------------------------------------------------------

    def _track(self, pos: int, base_offset: int, size: int, max_ts: int, index_interval: int) -> None:
        if max_ts > self.max_timestamp:
            self.max_timestamp = max_ts
        if pos == 0 or self.bytes_since_index >= index_interval:
            self.index.append(base_offset, pos)
            self.time_index.append(self.max_timestamp, base_offset)
            self.bytes_since_index = 0
        self.bytes_since_index += size

    def append(
        self,
        parts: list[bytes | memoryview],
        base_offset: int,
        next_offset: int,
        max_ts: int,
        index_interval: int,
    ) -> None:
        """Write one batch given as buffers; on failure the file is cut back and OSError raised."""
        pos = self.size
        total = sum(len(p) for p in parts)
        try:
            written = os.writev(self._fd, parts)
            if written < total:  # a short write (signal, quota): write the rest
                rest = memoryview(b"".join(parts))[written:]
                while rest:
                    rest = rest[os.write(self._fd, rest) :]
        except OSError:
            os.ftruncate(self._fd, pos)
            raise
        self.size = pos + total
        if pos == 0:
            self.first_batch_ts = max_ts
        self._track(pos, base_offset, total, max_ts, index_interval)
        self.next_offset = next_offset

    def append_aborted(self, entry: AbortedTxn) -> None:
        """Record an aborted transaction whose marker this segment holds."""
        append_file(self.txn_index_path, entry)
        self._txn_index_unsynced = True

    def time_waited_for_roll(self, incoming_ts: int, now_ms: int) -> int:
        if self.first_batch_ts >= 0:
            return incoming_ts - self.first_batch_ts
        return now_ms - self.created_wall_ms

    def seal(self) -> None:
        """The segment stops being active: record its final max timestamp in the time index."""
        if self.next_offset > self.base_offset and self.max_timestamp >= 0:
            self.time_index.append(self.max_timestamp, self.next_offset - 1)

    # -- reading ---------------------------------------------------------------------

    def find_position(self, offset: int) -> int | None:
        """Byte position of the batch holding ``offset``, or None when it is past the end."""
        _, pos = self.index.lookup(offset)
        while pos + _SHORT_HEADER.size <= self.size:
            base, length, _epoch, _magic, _crc, _attrs, last_delta = _SHORT_HEADER.unpack(
                os.pread(self._fd, _SHORT_HEADER.size, pos)
            )
            if base + last_delta >= offset:
                return pos
            pos += length + LOG_OVERHEAD
        return None

    def read(self, position: int, max_bytes: int, min_one: bool) -> bytes:
        """Whole batches from ``position``, at most ``max_bytes`` unless ``min_one`` and the
        first batch alone is larger (KIP-74)."""
        return self.read_span(position, max_bytes, min_one)[0]

    def read_span(self, position: int, max_bytes: int, min_one: bool) -> tuple[bytes, int]:
        """``read``, and the offset after its last batch (-1 when nothing was read): the
        walk that finds whole batches also finds the last one, for the fetch metrics."""
        if position >= self.size:
            return b"", -1
        want = min(max_bytes, self.size - position)
        data = os.pread(self._fd, want, position) if want >= LOG_OVERHEAD else b""
        end = last = 0
        n = len(data)
        while end + LOG_OVERHEAD <= n:
            (length,) = struct.unpack_from(">i", data, end + 8)
            if end + length + LOG_OVERHEAD > n:
                break
            last = end
            end += length + LOG_OVERHEAD
        if end == 0:
            if not min_one:
                return b"", -1
            (length,) = struct.unpack_from(">i", os.pread(self._fd, LOG_OVERHEAD, position), 8)
            data, end = os.pread(self._fd, length + LOG_OVERHEAD, position), length + LOG_OVERHEAD
        (base_offset,) = _BASE_OFFSET.unpack_from(data, last)
        (last_delta,) = _LAST_DELTA.unpack_from(data, last + 23)
        return (data if end == len(data) else data[:end]), base_offset + last_delta + 1

    def read_range(self, start: int, end: int) -> bytes:
        return os.pread(self._fd, end - start, start)

    def batches(self, start_position: int = 0) -> Iterator[tuple[int, BatchHeader]]:
        """(position, header) of each batch from ``start_position``."""
        pos = start_position
        while pos + HEADER_SIZE <= self.size:
            h = BatchHeader(*HEADER.unpack(os.pread(self._fd, HEADER_SIZE, pos)))
            yield pos, h
            pos += h.size

    def read_batch(self, position: int, h: BatchHeader) -> bytes:
        return os.pread(self._fd, h.size, position)

    # -- truncation and lifecycle ----------------------------------------------------

    def truncate_to(self, offset: int) -> None:
        """Drop every batch whose base offset is at or after ``offset``."""
        keep = 0
        next_offset = self.base_offset
        for pos, h in self.batches():
            if h.base_offset >= offset:
                break
            keep = pos + h.size
            next_offset = h.last_offset + 1
        os.ftruncate(self._fd, keep)
        self.size = keep
        self.index.truncate_to_position(keep)
        self.time_index.truncate_to_offset(next_offset)
        self.next_offset = next_offset

    def flush(self) -> None:
        os.fsync(self._fd)
        self.index.flush()
        self.time_index.flush()
        if self._txn_index_unsynced:
            fsync_file(self.txn_index_path)
            self._txn_index_unsynced = False

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        self.index.close()
        self.time_index.close()

    def delete_files(self) -> None:
        self.close()
        for path in (self.path, self.index.path, self.time_index.path, self.txn_index_path):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
