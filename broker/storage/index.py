"""Sparse offset and time indexes of one segment, in Kafka's file formats.

Offset index entries are (relative offset int32, byte position int32); time index
entries are (timestamp int64, relative offset int32). Both live in memory as
arrays for lookups and are appended to their files as entries are added, so a
killed process leaves at worst a short or torn tail, which ``load`` detects and
the segment then rebuilds.
"""

from __future__ import annotations

import bisect
import os
import struct
from array import array
from typing import Final

_OFFSET_ENTRY: Final = struct.Struct(">ii")
_TIME_ENTRY: Final = struct.Struct(">qi")


class _IndexFile:
    """An append-only file of fixed-size entries."""

    entry: struct.Struct

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)

    def _read_entries(self) -> list[tuple[int, ...]] | None:
        """Entries on disk, or None when the file's size is not a whole number of them."""
        size = os.fstat(self._fd).st_size
        if size % self.entry.size:
            return None
        data = os.pread(self._fd, size, 0)
        return list(self.entry.iter_unpack(data))

    def _write(self, *values: int) -> None:
        os.write(self._fd, self.entry.pack(*values))

    def _truncate_entries(self, n: int) -> None:
        os.ftruncate(self._fd, n * self.entry.size)

    def flush(self) -> None:
        os.fsync(self._fd)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def reset(self) -> None:
        os.ftruncate(self._fd, 0)


class OffsetIndex(_IndexFile):
    entry = _OFFSET_ENTRY

    def __init__(self, path: str, base_offset: int) -> None:
        super().__init__(path)
        self.base_offset = base_offset
        self.offsets = array("q")
        self.positions = array("q")

    def load(self, log_size: int) -> bool:
        """Read the file; False when it is inconsistent and must be rebuilt."""
        entries = self._read_entries()
        if entries is None:
            return False
        last_off, last_pos = -1, -1
        for rel, pos in entries:
            if rel <= last_off or pos <= last_pos or pos >= log_size or rel < 0:
                return False
            last_off, last_pos = rel, pos
        self.offsets = array("q", (self.base_offset + rel for rel, _ in entries))
        self.positions = array("q", (pos for _, pos in entries))
        return True

    def append(self, offset: int, position: int) -> None:
        if self.offsets and offset <= self.offsets[-1]:
            return
        self._write(offset - self.base_offset, position)
        self.offsets.append(offset)
        self.positions.append(position)

    def lookup(self, offset: int) -> tuple[int, int]:
        """(offset, position) of the last entry at or before ``offset``; (base, 0) if none."""
        i = bisect.bisect_right(self.offsets, offset) - 1
        if i < 0:
            return self.base_offset, 0
        return self.offsets[i], self.positions[i]

    def truncate_to_position(self, position: int) -> None:
        """Drop entries pointing at or after ``position`` (the log is cut there)."""
        i = bisect.bisect_left(self.positions, position)
        if i < len(self.positions):
            del self.offsets[i:]
            del self.positions[i:]
            self._truncate_entries(i)

    def clear(self) -> None:
        self.offsets = array("q")
        self.positions = array("q")
        self.reset()


class TimeIndex(_IndexFile):
    """Entries (max timestamp so far, offset of the batch that reached it), increasing."""

    entry = _TIME_ENTRY

    def __init__(self, path: str, base_offset: int) -> None:
        super().__init__(path)
        self.base_offset = base_offset
        self.timestamps = array("q")
        self.offsets = array("q")

    def load(self, next_offset: int) -> bool:
        entries = self._read_entries()
        if entries is None:
            return False
        last_ts, last_off = -(2**63), -1
        for ts, rel in entries:
            if (
                ts <= last_ts
                or rel < last_off
                or self.base_offset + rel >= max(next_offset, self.base_offset + 1)
            ):
                return False
            last_ts, last_off = ts, rel
        self.timestamps = array("q", (ts for ts, _ in entries))
        self.offsets = array("q", (self.base_offset + rel for _, rel in entries))
        return True

    @property
    def max_timestamp(self) -> int:
        return self.timestamps[-1] if self.timestamps else -1

    def append(self, timestamp: int, offset: int) -> None:
        if self.timestamps and timestamp <= self.timestamps[-1]:
            return
        self._write(timestamp, offset - self.base_offset)
        self.timestamps.append(timestamp)
        self.offsets.append(offset)

    def lookup(self, timestamp: int) -> int:
        """An offset from which to scan for the first record with a timestamp >= ``timestamp``.

        Every record up to and including the batch of an entry has a timestamp no
        greater than the entry's, so the last entry below ``timestamp`` is a safe start.
        """
        i = bisect.bisect_left(self.timestamps, timestamp) - 1
        return self.base_offset if i < 0 else self.offsets[i]

    def truncate_to_offset(self, next_offset: int) -> None:
        i = bisect.bisect_left(self.offsets, next_offset)
        if i < len(self.offsets):
            del self.offsets[i:]
            del self.timestamps[i:]
            self._truncate_entries(i)

    def clear(self) -> None:
        self.timestamps = array("q")
        self.offsets = array("q")
        self.reset()
