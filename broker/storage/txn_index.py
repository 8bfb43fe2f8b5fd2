"""The aborted-transaction index: which transactions a read_committed consumer must skip.

Kafka's ``TransactionIndex``: an ABORT marker that closes an open transaction adds an
entry (producer id, first offset, last offset = the marker's, last stable offset once it
was written). A read_committed Fetch returns the entries that overlap the records it
returns; the client drops that producer's transactional batches from the first offset
until it meets the ABORT marker.

Entries live per segment in ``<base>.txnindex`` (the segment that holds the marker), in
Kafka's 34-byte format: int16 version 0, int64 producer id, int64 first offset, int64
last offset, int64 last stable offset. In memory the partition keeps them all in marker
order; ``AbortedTxnIndex`` is that list and its lookups (pure; the file helpers below
are the only I/O).
"""

from __future__ import annotations

import bisect
import contextlib
import os
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

ENTRY: Final = struct.Struct(">hqqqq")  # 34 bytes
_VERSION: Final = 0


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    producer_id: int
    first_offset: int
    last_offset: int  # the ABORT marker
    last_stable_offset: int  # the partition's LSO once the marker was written

    def encode(self) -> bytes:
        return ENTRY.pack(
            _VERSION, self.producer_id, self.first_offset, self.last_offset, self.last_stable_offset
        )


def decode(data: bytes) -> list[AbortedTxn]:
    """Whole entries of an index file; a torn last entry (a killed write) is left out."""
    whole = len(data) - len(data) % ENTRY.size
    return [AbortedTxn(pid, first, last, lso) for _, pid, first, last, lso in ENTRY.iter_unpack(data[:whole])]


class AbortedTxnIndex:
    """A partition's aborted transactions, ordered by marker offset.

    Each entry's last stable offset is at most the first offset of every later entry:
    a later aborted transaction was either open when the marker was written (so it
    bounded the LSO) or began after it. A lookup can therefore stop at the first entry
    whose LSO reaches the end of the range (Kafka's ``collectAbortedTxns``).
    """

    def __init__(self, entries: Iterable[AbortedTxn] = ()) -> None:
        self.entries: list[AbortedTxn] = list(entries)
        self._lasts: list[int] = [e.last_offset for e in self.entries]

    def __len__(self) -> int:
        return len(self.entries)

    def append(self, entry: AbortedTxn) -> None:
        if self._lasts and entry.last_offset <= self._lasts[-1]:
            raise ValueError(f"aborted transaction at {entry.last_offset} is not after {self._lasts[-1]}")
        self.entries.append(entry)
        self._lasts.append(entry.last_offset)

    def collect(self, start: int, end: int) -> list[tuple[int, int]]:
        """(producer id, first offset) of the aborted transactions with data in [start, end):
        last offset >= start and first offset < end."""
        lasts = self._lasts
        if not lasts or lasts[-1] < start:
            return []
        out = []
        for e in self.entries[bisect.bisect_left(lasts, start) :]:
            if e.first_offset < end:
                out.append((e.producer_id, e.first_offset))
            if e.last_stable_offset >= end:
                break
        return out

    def between(self, lo: int, hi: int) -> list[AbortedTxn]:
        """Entries whose marker is in [lo, hi)."""
        return self.entries[bisect.bisect_left(self._lasts, lo) : bisect.bisect_left(self._lasts, hi)]

    def replace(self, lo: int, hi: int, entries: list[AbortedTxn]) -> None:
        """Put ``entries`` (markers in [lo, hi), in order) in place of the entries there."""
        i, j = bisect.bisect_left(self._lasts, lo), bisect.bisect_left(self._lasts, hi)
        if any(not lo <= e.last_offset < hi for e in entries):
            raise ValueError(f"replacement entries outside [{lo}, {hi})")
        self.entries[i:j] = entries
        self._lasts[i:j] = [e.last_offset for e in entries]

    def drop_below(self, offset: int) -> None:
        """Forget entries whose marker is below ``offset`` (their segments were deleted)."""
        self.replace(-1, offset, [])

    def truncate(self, offset: int) -> None:
        """Forget entries whose marker is at or after ``offset``."""
        i = bisect.bisect_left(self._lasts, offset)
        del self.entries[i:]
        del self._lasts[i:]


# -- files ------------------------------------------------------------------------------


def read_file(path: str) -> list[AbortedTxn]:
    try:
        with open(path, "rb") as f:
            return decode(f.read())
    except FileNotFoundError:
        return []


def append_file(path: str, entry: AbortedTxn) -> None:
    """Append one entry. Aborts are rare, so the file is opened for each one rather than
    held open: a partition costs no extra descriptor."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, entry.encode())
    finally:
        os.close(fd)


def write_file(path: str, entries: list[AbortedTxn]) -> None:
    """Make the file hold exactly ``entries`` (no file when there are none)."""
    if not entries:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        return
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(b"".join(e.encode() for e in entries))
    os.replace(tmp, path)


def fsync_file(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
