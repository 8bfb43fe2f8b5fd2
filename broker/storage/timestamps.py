"""Finding records by timestamp (ListOffsets): the first record at or after a time, and the
record with the largest timestamp. Cold paths: they parse the records of the batches
they cannot skip by the time index and batch headers."""

from __future__ import annotations

from broker.storage.batch import TIMESTAMP_TYPE_LOG_APPEND, BatchHeader
from broker.storage.records import parse_records
from broker.storage.segment import Segment


def record_time(h: BatchHeader, timestamp_delta: int) -> int:
    """A record's timestamp: the batch's for LogAppendTime batches, else base + delta."""
    return h.max_timestamp if h.attributes & TIMESTAMP_TYPE_LOG_APPEND else h.base_timestamp + timestamp_delta


def offset_for_timestamp(segments: list[Segment], log_start: int, timestamp: int) -> tuple[int, int] | None:
    """(offset, timestamp) of the first record at or after ``timestamp``."""
    for seg in segments:
        if seg.max_timestamp < timestamp:
            continue
        start = max(seg.time_index.lookup(timestamp), log_start, seg.base_offset)
        pos = seg.find_position(start)
        if pos is None:
            continue
        for bpos, h in seg.batches(pos):
            if h.max_timestamp < timestamp or h.last_offset < log_start:
                continue
            hdr, records = parse_records(seg.read_batch(bpos, h))
            for r in records:
                offset = hdr.base_offset + r.offset_delta
                ts = record_time(hdr, r.timestamp_delta)
                if ts >= timestamp and offset >= log_start:
                    return offset, ts
    return None


def max_timestamp_offset(segments: list[Segment], log_start: int) -> tuple[int, int] | None:
    """(offset, timestamp) of the record with the largest timestamp.

    Segments are visited newest-timestamp first; a segment's maximum may belong to
    records below the log start offset, so the search goes on until no remaining
    segment can beat what was found. Ties go to the lowest offset.
    """
    best: tuple[int, int] | None = None
    for seg in sorted(segments, key=lambda s: s.max_timestamp, reverse=True):
        if seg.max_timestamp < 0 or (best is not None and seg.max_timestamp < best[1]):
            break
        for bpos, h in seg.batches(0):
            if h.last_offset < log_start or (best is not None and h.max_timestamp < best[1]):
                continue
            hdr, records = parse_records(seg.read_batch(bpos, h))
            for r in records:
                offset = hdr.base_offset + r.offset_delta
                ts = record_time(hdr, r.timestamp_delta)
                if offset >= log_start and (
                    best is None or ts > best[1] or (ts == best[1] and offset < best[0])
                ):
                    best = (offset, ts)
    return best
