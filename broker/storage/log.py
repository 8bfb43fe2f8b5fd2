"""A partition's log: an ordered list of segments, appended at the end, read anywhere.

The log is driven from the broker's event loop: appends and reads are plain
system calls on the page cache (a batch is acknowledged once ``write`` returns, so
a killed process loses nothing it acknowledged; ``flush.messages``/``flush.ms``
decide when to fsync against power loss). Compaction prepares replacement
segments on a worker thread and swaps them in here, under ``cleaning``.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import errno
import logging
import os
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import orjson

from broker.storage.batch import (
    CODEC_MASK,
    TIMESTAMP_TYPE_LOG_APPEND,
    BatchHeader,
    Codec,
    rewritten_prefix,
    set_log_append_time,
)
from broker.storage.producer_state import ProducerStateTable, SeqCheck
from broker.storage.records import build_batch, parse_records
from broker.storage.segment import Segment, segment_name
from broker.topic_config import TopicConfig

log = logging.getLogger(__name__)

LEADER_EPOCH: Final = 0
_CODECS: Final = {
    "uncompressed": Codec.NONE,
    "gzip": Codec.GZIP,
    "snappy": Codec.SNAPPY,
    "lz4": Codec.LZ4,
    "zstd": Codec.ZSTD,
}
_KEEP_SNAPSHOTS: Final = 2


class StorageError(Exception):
    """The disk refused a write or read; answered as KAFKA_STORAGE_ERROR."""


class OffsetOutOfRange(Exception):
    pass


class ProducerFenced(Exception):
    pass


class OutOfOrderSequence(Exception):
    pass


@dataclass(frozen=True, slots=True)
class AppendResult:
    base_offset: int
    log_append_time: int  # -1 unless the topic uses LogAppendTime
    duplicate: bool = False


class PartitionLog:
    def __init__(
        self,
        directory: str,
        topic: str,
        partition: int,
        config: TopicConfig,
        log_start_offset: int = 0,
        clock_ms: Callable[[], int] | None = None,
    ) -> None:
        self.dir = directory
        self.topic = topic
        self.partition = partition
        self.config = config
        self._clock_ms = clock_ms or _now_ms
        self.segments: list[Segment] = []
        self._bases: list[int] = []
        self.producers = ProducerStateTable()
        self.unflushed = 0
        self.last_flush_ms = self._clock_ms()
        self.cleaning = asyncio.Lock()
        self.first_dirty_offset = 0  # compaction progress (cleaner checkpoint)
        self.closed = False
        os.makedirs(directory, exist_ok=True)
        self._load(log_start_offset)

    # -- loading and recovery ----------------------------------------------------------

    def _load(self, checkpoint_start: int) -> None:
        names = os.listdir(self.dir)
        for name in names:
            if name.endswith((".cleaned", ".deleted")):
                os.unlink(os.path.join(self.dir, name))
        for name in sorted(n for n in os.listdir(self.dir) if n.endswith(".swap")):
            self._complete_swap(name)
        bases = sorted(int(n[:-4]) for n in os.listdir(self.dir) if n.endswith(".log") and n[:-4].isdigit())
        for base in bases:
            self.segments.append(Segment(self.dir, base))
        if not self.segments:
            self.segments.append(Segment(self.dir, max(checkpoint_start, 0)))
        interval = self.config.index_interval_bytes
        for seg, nxt in zip(self.segments, self.segments[1:], strict=False):
            seg.open_existing(nxt.base_offset, interval)
        active = self.segments[-1]
        truncated = active.recover(interval)
        if truncated:
            log.warning(
                "%s-%d: truncated %d bytes of a torn tail in %s",
                self.topic,
                self.partition,
                truncated,
                os.path.basename(active.path),
            )
        self._bases = [s.base_offset for s in self.segments]
        self.log_start_offset = max(checkpoint_start, self.segments[0].base_offset)
        if self.log_start_offset > self.next_offset:
            self.log_start_offset = self.next_offset
        self._load_producer_state()

    def _complete_swap(self, name: str) -> None:
        """Finish a compaction swap interrupted by a crash.

        ``<base>.log.<end>.swap`` is a complete replacement for every segment whose
        base offset is in [base, end); those go, and the swap file takes their place.
        """
        stem, _, end_part = name[: -len(".swap")].partition(".log.")
        if not (stem.isdigit() and end_part.isdigit()):
            log.warning("%s-%d: ignoring unrecognised swap file %s", self.topic, self.partition, name)
            return
        base, end = int(stem), int(end_part)
        for other in os.listdir(self.dir):
            if other.endswith(".log") and other[:-4].isdigit() and base <= int(other[:-4]) < end:
                for ext in (".log", ".index", ".timeindex"):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(os.path.join(self.dir, other[:-4] + ext))
        os.rename(os.path.join(self.dir, name), os.path.join(self.dir, segment_name(base) + ".log"))

    def _snapshot_path(self, offset: int) -> str:
        return os.path.join(self.dir, f"{segment_name(offset)}.snapshot")

    def _snapshots(self) -> list[int]:
        return sorted(
            int(n[:-9]) for n in os.listdir(self.dir) if n.endswith(".snapshot") and n[:-9].isdigit()
        )

    def _load_producer_state(self) -> None:
        start = self.log_start_offset
        table = ProducerStateTable()
        for offset in reversed(self._snapshots()):
            if offset > self.next_offset:
                os.unlink(self._snapshot_path(offset))
                continue
            try:
                with open(self._snapshot_path(offset), "rb") as f:
                    table = ProducerStateTable.from_json(orjson.loads(f.read()))
                start = offset
                break
            except (OSError, ValueError, KeyError, TypeError):
                log.warning(
                    "%s-%d: ignoring unreadable producer snapshot %d", self.topic, self.partition, offset
                )
        for seg in self.segments:
            if seg.next_offset <= start:
                continue
            pos = seg.find_position(start) if start > seg.base_offset else 0
            if pos is None:
                continue
            for _, h in seg.batches(pos):
                if h.producer_id >= 0 and h.base_sequence >= 0 and h.last_offset >= start:
                    table.record(
                        h.producer_id,
                        h.producer_epoch,
                        h.base_sequence,
                        h.last_sequence,
                        h.base_offset,
                        h.last_offset,
                        h.max_timestamp,
                    )
        table.truncate(self.next_offset)
        self.producers = table

    def _write_snapshot(self, offset: int) -> None:
        path = self._snapshot_path(offset)
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(orjson.dumps(self.producers.to_json()))
        os.replace(tmp, path)
        for old in self._snapshots()[:-_KEEP_SNAPSHOTS]:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._snapshot_path(old))

    # -- state -----------------------------------------------------------------------

    @property
    def active(self) -> Segment:
        return self.segments[-1]

    @property
    def next_offset(self) -> int:
        """Log end offset; with one replica it is also the high watermark."""
        return self.segments[-1].next_offset

    @property
    def size_bytes(self) -> int:
        return sum(s.size for s in self.segments)

    def segment_for(self, offset: int) -> int:
        """Index of the segment that would hold ``offset``."""
        return max(bisect.bisect_right(self._bases, offset) - 1, 0)

    # -- appending -------------------------------------------------------------------

    def append(
        self, batch: bytes | bytearray | memoryview, h: BatchHeader, now_ms: int | None = None
    ) -> AppendResult:
        """Append one validated batch. Raises ProducerFenced, OutOfOrderSequence or StorageError."""
        now = self._clock_ms() if now_ms is None else now_ms
        idempotent = h.producer_id >= 0 and h.base_sequence >= 0
        if idempotent:
            verdict, earlier = self.producers.check(
                h.producer_id, h.producer_epoch, h.base_sequence, h.last_sequence
            )
            if verdict is SeqCheck.DUPLICATE and earlier is not None:
                # A retry gets the answer the original got, append time included.
                append_time = earlier.timestamp if self.config.log_append_time else -1
                return AppendResult(earlier.base_offset, append_time, duplicate=True)
            if verdict is SeqCheck.FENCED:
                raise ProducerFenced(f"producer {h.producer_id} epoch {h.producer_epoch} is fenced")
            if verdict is SeqCheck.OUT_OF_ORDER:
                raise OutOfOrderSequence(
                    f"producer {h.producer_id}: sequence {h.base_sequence} does not follow "
                    f"{self.producers.producers[h.producer_id].last_seq}"
                )
        batch, h = self._apply_topic_formats(batch, h, now)
        log_append_time = now if self.config.log_append_time else -1
        max_ts = log_append_time if log_append_time >= 0 else h.max_timestamp
        if self._should_roll(h.size, max_ts, now):
            self.roll(now)
        seg = self.active
        base = seg.next_offset
        parts: list[bytes | memoryview] = [
            rewritten_prefix(base, h.batch_length, LEADER_EPOCH),
            memoryview(batch)[16:],
        ]
        try:
            seg.append(parts, base, base + h.last_offset_delta + 1, max_ts, self.config.index_interval_bytes)
        except OSError as exc:
            raise StorageError(
                f"{self.topic}-{self.partition}: write failed: "
                f"{exc.strerror or errno.errorcode.get(exc.errno or 0, exc)}"
            ) from exc
        if idempotent:
            self.producers.record(
                h.producer_id,
                h.producer_epoch,
                h.base_sequence,
                h.last_sequence,
                base,
                base + h.last_offset_delta,
                max_ts,
            )
        self.unflushed += h.count
        if self.unflushed >= self.config.flush_messages or now - self.last_flush_ms >= self.config.flush_ms:
            self.flush(now)
        return AppendResult(base, log_append_time)

    def _apply_topic_formats(
        self, batch: bytes | bytearray | memoryview, h: BatchHeader, now: int
    ) -> tuple[bytes | bytearray | memoryview, BatchHeader]:
        """Recompress for ``compression.type`` and stamp LogAppendTime when the topic asks."""
        target = _CODECS.get(self.config.compression_type)
        if target is not None and target != h.codec:
            header, records = parse_records(batch)
            batch = build_batch(
                0,
                records,
                base_timestamp=header.base_timestamp,
                max_timestamp=header.max_timestamp,
                attributes=(header.attributes & ~CODEC_MASK) | target,
                last_offset_delta=header.last_offset_delta,
                producer_id=header.producer_id,
                producer_epoch=header.producer_epoch,
                base_sequence=header.base_sequence,
            )
            h = BatchHeader(*struct.unpack_from(">qiibIhiqqqhii", batch))
        if self.config.log_append_time:
            buf = bytearray(batch)
            set_log_append_time(buf, now)
            batch = buf
            h = BatchHeader(*struct.unpack_from(">qiibIhiqqqhii", buf))
        return batch, h

    def _should_roll(self, incoming: int, incoming_ts: int, now: int) -> bool:
        seg = self.active
        if seg.size == 0:
            return False
        if seg.size + incoming > self.config.segment_bytes:
            return True
        if seg.time_waited_for_roll(incoming_ts, now) > self.config.segment_ms:
            return True
        return seg.next_offset - seg.base_offset >= 2**31 - 1  # relative offsets are int32

    def roll(self, now: int | None = None) -> Segment:
        old = self.active
        if old.size == 0:
            return old
        old.seal()
        old.flush()
        seg = Segment(self.dir, old.next_offset)
        seg.next_offset = old.next_offset
        self.segments.append(seg)
        self._bases.append(seg.base_offset)
        self._write_snapshot(seg.base_offset)
        log.debug("%s-%d: rolled new segment at offset %d", self.topic, self.partition, seg.base_offset)
        return seg

    def flush(self, now: int | None = None) -> None:
        self.active.flush()
        self.unflushed = 0
        self.last_flush_ms = self._clock_ms() if now is None else now

    def maybe_flush(self, now: int) -> None:
        if self.unflushed and now - self.last_flush_ms >= self.config.flush_ms:
            self.flush(now)

    # -- reading ---------------------------------------------------------------------

    def read(self, offset: int, max_bytes: int, min_one: bool = True) -> bytes:
        """Whole batches starting with the one that holds ``offset``."""
        return self.read_span(offset, max_bytes, min_one)[0]

    def read_span(self, offset: int, max_bytes: int, min_one: bool = True) -> tuple[bytes, int]:
        """``read``, and the offset after the last batch read (-1 when nothing was)."""
        end = self.next_offset
        if offset < self.log_start_offset or offset > end:
            raise OffsetOutOfRange(
                f"offset {offset} is outside [{self.log_start_offset}, {end}] "
                f"of {self.topic}-{self.partition}"
            )
        i = self.segment_for(offset)
        while i < len(self.segments):
            seg = self.segments[i]
            pos = seg.find_position(offset)
            if pos is not None:
                return seg.read_span(pos, max_bytes, min_one)
            i += 1
        return b"", -1

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record at or after ``timestamp``."""
        for seg in self.segments:
            if seg.max_timestamp < timestamp:
                continue
            start = max(seg.time_index.lookup(timestamp), self.log_start_offset, seg.base_offset)
            pos = seg.find_position(start)
            if pos is None:
                continue
            for bpos, h in seg.batches(pos):
                if h.max_timestamp < timestamp or h.last_offset < self.log_start_offset:
                    continue
                found = self._first_record_at(seg.read_batch(bpos, h), timestamp)
                if found is not None:
                    return found
        return None

    def _first_record_at(self, batch: bytes, timestamp: int) -> tuple[int, int] | None:
        h, records = parse_records(batch)
        for r in records:
            offset = h.base_offset + r.offset_delta
            ts = _record_time(h, r.timestamp_delta)
            if ts >= timestamp and offset >= self.log_start_offset:
                return offset, ts
        return None

    def max_timestamp_offset(self) -> tuple[int, int] | None:
        """(offset, timestamp) of the record with the largest timestamp (ListOffsets -3).

        Segments are visited newest-timestamp first; a segment's maximum may belong to
        records below the log start offset, so the search goes on until no remaining
        segment can beat what was found. Ties go to the lowest offset.
        """
        best: tuple[int, int] | None = None
        for seg in sorted(self.segments, key=lambda s: s.max_timestamp, reverse=True):
            if seg.max_timestamp < 0 or (best is not None and seg.max_timestamp < best[1]):
                break
            for bpos, h in seg.batches(0):
                if h.last_offset < self.log_start_offset or (best is not None and h.max_timestamp < best[1]):
                    continue
                hdr, records = parse_records(seg.read_batch(bpos, h))
                for r in records:
                    offset = hdr.base_offset + r.offset_delta
                    ts = _record_time(hdr, r.timestamp_delta)
                    if offset >= self.log_start_offset and (
                        best is None or ts > best[1] or (ts == best[1] and offset < best[0])
                    ):
                        best = (offset, ts)
        return best

    # -- deletion --------------------------------------------------------------------

    def advance_start(self, offset: int) -> int:
        """Move the log start offset forward (DeleteRecords, retention); drops whole segments."""
        offset = min(offset, self.next_offset)
        if offset <= self.log_start_offset:
            return self.log_start_offset
        self.log_start_offset = offset
        while len(self.segments) > 1 and self.segments[1].base_offset <= offset:
            self._drop_first()
        if len(self.segments) == 1 and self.active.size > 0 and offset >= self.active.next_offset:
            self.roll()
            self._drop_first()
        return self.log_start_offset

    def replace_segments(self, old_bases: tuple[int, ...], replacement: str) -> Segment:
        """Put the segment file ``replacement`` in place of the consecutive segments starting
        at ``old_bases`` (compaction). The caller holds ``cleaning``."""
        first = self._bases.index(old_bases[0])
        old = self.segments[first : first + len(old_bases)]
        if tuple(s.base_offset for s in old) != old_bases or first + len(old) >= len(self.segments):
            raise ValueError(f"{self.topic}-{self.partition}: segments changed under the cleaner")
        next_base = self.segments[first + len(old)].base_offset
        for seg in old:
            seg.delete_files()
        os.rename(replacement, os.path.join(self.dir, segment_name(old_bases[0]) + ".log"))
        seg = Segment(self.dir, old_bases[0])
        seg.open_existing(next_base, self.config.index_interval_bytes)
        self.segments[first : first + len(old)] = [seg]
        self._bases[first : first + len(old)] = [seg.base_offset]
        return seg

    def _drop_first(self) -> None:
        seg = self.segments.pop(0)
        self._bases.pop(0)
        seg.delete_files()

    def delete_expired(self, now: int) -> int:
        """Apply retention.ms and retention.bytes; returns segments deleted."""
        deleted = 0
        cfg = self.config
        if cfg.retention_ms >= 0:
            horizon = now - cfg.retention_ms
            # Only an empty active segment is spared; an expired active segment is rolled
            # first so that it can go too.
            while self.segments and _segment_time(self.segments[0]) < horizon:
                if len(self.segments) == 1:
                    if self.active.size == 0:
                        break
                    self.roll(now)
                nxt = self.segments[1].base_offset
                self._drop_first()
                self.log_start_offset = max(self.log_start_offset, nxt)
                deleted += 1
        if cfg.retention_bytes >= 0:
            excess = self.size_bytes - cfg.retention_bytes
            while len(self.segments) > 1 and excess - self.segments[0].size >= 0:
                excess -= self.segments[0].size
                nxt = self.segments[1].base_offset
                self._drop_first()
                self.log_start_offset = max(self.log_start_offset, nxt)
                deleted += 1
        return deleted

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self.active.seal()
            self.flush()
            self._write_snapshot(self.next_offset)
        except OSError as exc:
            log.warning("%s-%d: flush on close failed: %s", self.topic, self.partition, exc)
        for seg in self.segments:
            seg.close()

    def close_for_delete(self) -> None:
        """Close the files without writing anything more: the directory is about to be removed."""
        self.closed = True
        for seg in self.segments:
            seg.close()


def _record_time(h: BatchHeader, timestamp_delta: int) -> int:
    """A record's timestamp: the batch's for LogAppendTime batches, else base + delta."""
    return h.max_timestamp if h.attributes & TIMESTAMP_TYPE_LOG_APPEND else h.base_timestamp + timestamp_delta


def _segment_time(seg: Segment) -> int:
    """Newest record timestamp of a segment; its file time when records carry none."""
    if seg.max_timestamp >= 0:
        return seg.max_timestamp
    return int(os.stat(seg.path).st_mtime * 1000)


def _now_ms() -> int:
    import time

    return int(time.time() * 1000)
