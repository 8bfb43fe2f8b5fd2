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
import errno
import logging
import os
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from broker.storage import recovery, timestamps
from broker.storage.batch import (
    CODEC_MASK,
    TRANSACTIONAL,
    BatchHeader,
    Codec,
    cut_before,
    read_header,
    rewritten_prefix,
    set_log_append_time,
)
from broker.storage.control import build_marker
from broker.storage.producer_state import MarkerCheck, ProducerStateTable, ProducerStateView, SeqCheck
from broker.storage.records import build_batch, parse_records
from broker.storage.segment import Segment, segment_name
from broker.storage.txn_index import AbortedTxn, AbortedTxnIndex
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


class StorageError(Exception):
    """The disk refused a write or read; answered as KAFKA_STORAGE_ERROR."""


class OffsetOutOfRange(Exception):
    pass


class ProducerFenced(Exception):
    pass


class OutOfOrderSequence(Exception):
    pass


class InvalidTxnState(Exception):
    """A plain batch from a producer whose transaction is open here (INVALID_TXN_STATE)."""


class CoordinatorFenced(Exception):
    """A marker from an older transaction coordinator (TRANSACTION_COORDINATOR_FENCED)."""


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
        self.aborted = AbortedTxnIndex()
        self.unflushed = 0
        self.last_flush_ms = self._clock_ms()
        self.cleaning = asyncio.Lock()
        self.first_dirty_offset = 0  # compaction progress (cleaner checkpoint)
        self.closed = False
        os.makedirs(directory, exist_ok=True)
        self._load(log_start_offset)

    # -- loading and recovery ----------------------------------------------------------

    def _load(self, checkpoint_start: int) -> None:
        recovery.remove_leftovers(self.dir, os.listdir(self.dir))
        recovery.complete_swaps(self.dir, self._where)
        names = set(os.listdir(self.dir))
        bases = sorted(int(n[:-4]) for n in names if n.endswith(".log") and n[:-4].isdigit())
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
                "%s: truncated %d bytes of a torn tail in %s",
                self._where,
                truncated,
                os.path.basename(active.path),
            )
        self._bases = [s.base_offset for s in self.segments]
        self.log_start_offset = max(checkpoint_start, self.segments[0].base_offset)
        if self.log_start_offset > self.next_offset:
            self.log_start_offset = self.next_offset
        self.producers, self.aborted = recovery.load_state(
            self.dir, self.segments, self.log_start_offset, names, self._where
        )

    @property
    def _where(self) -> str:
        return f"{self.topic}-{self.partition}"

    def _write_snapshot(self, offset: int) -> None:
        recovery.write_snapshot(self.dir, offset, self.producers)

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

    # -- transactions ----------------------------------------------------------------

    @property
    def last_stable_offset(self) -> int:
        """First offset of the oldest open transaction, else the high watermark; never
        below the log start (Kafka's ``firstUnstableOffset`` handling)."""
        first = self.producers.first_unstable_offset()
        end = self.next_offset
        if first < 0:
            return end
        return min(max(first, self.log_start_offset), end)

    def aborted_transactions(self, start: int, end: int) -> list[tuple[int, int]]:
        """(producer id, first offset) of the aborted transactions with data in [start, end)."""
        return self.aborted.collect(start, end)

    def producer_states(self) -> list[ProducerStateView]:
        return self.producers.views()

    def open_transactions(self) -> dict[int, int]:
        """Producer id -> first offset of each open transaction, oldest first."""
        return dict(self.producers.open_txns)

    def append_marker(
        self,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        coordinator_epoch: int,
        now_ms: int | None = None,
    ) -> int:
        """Write a COMMIT or ABORT marker for ``producer_id`` and return its offset.

        Raises ProducerFenced (an older producer epoch), CoordinatorFenced (an older
        coordinator epoch) or StorageError. The caller wakes fetch waiters: the last
        stable offset may have moved.
        """
        now = self._clock_ms() if now_ms is None else now_ms
        verdict = self.producers.check_marker(producer_id, producer_epoch, coordinator_epoch)
        if verdict is MarkerCheck.FENCED:
            raise ProducerFenced(
                f"producer {producer_id} epoch {producer_epoch} is older than "
                f"{self.producers.producers[producer_id].epoch} in {self._where}"
            )
        if verdict is MarkerCheck.COORDINATOR_FENCED:
            raise CoordinatorFenced(
                f"coordinator epoch {coordinator_epoch} for producer {producer_id} is older than "
                f"{self.producers.producers[producer_id].coordinator_epoch} in {self._where}"
            )
        batch: bytes | bytearray = build_marker(producer_id, producer_epoch, commit, coordinator_epoch, now)
        h = read_header(batch)
        if self.config.log_append_time:
            buf = bytearray(batch)
            set_log_append_time(buf, now)
            batch, h = buf, read_header(buf)
        offset = self._write(batch, h, h.max_timestamp, now)
        first = self.producers.end_txn(
            producer_id, producer_epoch, coordinator_epoch, offset, h.max_timestamp
        )
        if first >= 0 and not commit:
            entry = AbortedTxn(producer_id, first, offset, self.last_stable_offset)
            self.aborted.append(entry)
            try:
                self.active.append_aborted(entry)
            except OSError as exc:
                # The marker is in the log: a restart rebuilds the entry from it.
                log.error("%s: cannot write the aborted-transaction index: %s", self._where, exc)
        return offset

    # -- appending -------------------------------------------------------------------

    def append(
        self, batch: bytes | bytearray | memoryview, h: BatchHeader, now_ms: int | None = None
    ) -> AppendResult:
        """Append one validated batch. Raises ProducerFenced, OutOfOrderSequence,
        InvalidTxnState or StorageError."""
        now = self._clock_ms() if now_ms is None else now_ms
        pid = h.producer_id
        transactional = bool(h.attributes & TRANSACTIONAL)
        idempotent = pid >= 0 and h.base_sequence >= 0
        if idempotent:
            verdict, earlier = self.producers.check(pid, h.producer_epoch, h.base_sequence, h.last_sequence)
            if verdict is SeqCheck.DUPLICATE and earlier is not None:
                # A retry gets the answer the original got, append time included.
                append_time = earlier.timestamp if self.config.log_append_time else -1
                return AppendResult(earlier.base_offset, append_time, duplicate=True)
            if verdict is SeqCheck.FENCED:
                raise ProducerFenced(f"producer {pid} epoch {h.producer_epoch} is fenced")
            if verdict is SeqCheck.OUT_OF_ORDER:
                raise OutOfOrderSequence(
                    f"producer {pid}: sequence {h.base_sequence} does not follow "
                    f"{self.producers.producers[pid].last_seq}"
                )
        elif transactional and pid >= 0 and self.producers.is_fenced(pid, h.producer_epoch):
            raise ProducerFenced(f"producer {pid} epoch {h.producer_epoch} is fenced")
        if not transactional and pid >= 0 and pid in self.producers.open_txns:
            raise InvalidTxnState(
                f"producer {pid} sent a non-transactional batch while its transaction is open "
                f"in {self._where}"
            )
        batch, h = self._apply_topic_formats(batch, h, now)
        log_append_time = now if self.config.log_append_time else -1
        max_ts = log_append_time if log_append_time >= 0 else h.max_timestamp
        base = self._write(batch, h, max_ts, now)
        if idempotent or (transactional and pid >= 0):
            self.producers.record(
                pid,
                h.producer_epoch,
                h.base_sequence,
                h.last_sequence,
                base,
                base + h.last_offset_delta,
                max_ts,
                transactional,
            )
        return AppendResult(base, log_append_time)

    def _write(self, batch: bytes | bytearray | memoryview, h: BatchHeader, max_ts: int, now: int) -> int:
        """Put a batch at the log end (rolling first if due); returns its base offset."""
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
                f"{self._where}: write failed: {exc.strerror or errno.errorcode.get(exc.errno or 0, exc)}"
            ) from exc
        self.unflushed += h.count
        if self.unflushed >= self.config.flush_messages or now - self.last_flush_ms >= self.config.flush_ms:
            self.flush(now)
        return base

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

    def read_span(
        self, offset: int, max_bytes: int, min_one: bool = True, below: int = -1
    ) -> tuple[bytes, int]:
        """``read``, and the offset after the last batch read (-1 when nothing was).

        With ``below`` >= 0 (read_committed: the last stable offset) only batches before
        that offset are returned; it always falls between batches.
        """
        end = self.next_offset
        if offset < self.log_start_offset or offset > end:
            raise OffsetOutOfRange(
                f"offset {offset} is outside [{self.log_start_offset}, {end}] of {self._where}"
            )
        if 0 <= below <= offset:
            return b"", -1
        i = self.segment_for(offset)
        while i < len(self.segments):
            seg = self.segments[i]
            pos = seg.find_position(offset)
            if pos is not None:
                data, after = seg.read_span(pos, max_bytes, min_one)
                if 0 <= below < after:
                    return cut_before(data, below)
                return data, after
            i += 1
        return b"", -1

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record at or after ``timestamp``."""
        return timestamps.offset_for_timestamp(self.segments, self.log_start_offset, timestamp)

    def max_timestamp_offset(self) -> tuple[int, int] | None:
        """(offset, timestamp) of the record with the largest timestamp (ListOffsets -3)."""
        return timestamps.max_timestamp_offset(self.segments, self.log_start_offset)

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

    def replace_segments(
        self,
        old_bases: tuple[int, ...],
        replacement: str,
        txn_replacement: str | None = None,
        aborted: tuple[AbortedTxn, ...] = (),
    ) -> Segment:
        """Put the segment file ``replacement`` in place of the consecutive segments starting
        at ``old_bases`` (compaction), with ``txn_replacement`` (its txnindex swap) holding
        ``aborted``. The caller holds ``cleaning``."""
        first = self._bases.index(old_bases[0])
        old = self.segments[first : first + len(old_bases)]
        if tuple(s.base_offset for s in old) != old_bases or first + len(old) >= len(self.segments):
            raise ValueError(f"{self._where}: segments changed under the cleaner")
        next_base = self.segments[first + len(old)].base_offset
        for seg in old:
            seg.delete_files()
        stem = os.path.join(self.dir, segment_name(old_bases[0]))
        # The txnindex before the log: see recovery.complete_swaps for why this order.
        if txn_replacement is not None:
            recovery.install_txn_swap(txn_replacement, stem + ".txnindex")
        os.rename(replacement, stem + ".log")
        seg = Segment(self.dir, old_bases[0])
        seg.open_existing(next_base, self.config.index_interval_bytes)
        self.segments[first : first + len(old)] = [seg]
        self._bases[first : first + len(old)] = [seg.base_offset]
        self.aborted.replace(old_bases[0], next_base, list(aborted))
        return seg

    def _drop_first(self) -> None:
        seg = self.segments.pop(0)
        self._bases.pop(0)
        seg.delete_files()
        self.aborted.drop_below(self.segments[0].base_offset if self.segments else seg.next_offset)

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
            log.warning("%s: flush on close failed: %s", self._where, exc)
        for seg in self.segments:
            seg.close()

    def close_for_delete(self) -> None:
        """Close the files without writing anything more: the directory is about to be removed."""
        self.closed = True
        for seg in self.segments:
            seg.close()


def _segment_time(seg: Segment) -> int:
    """Newest record timestamp of a segment; its file time when records carry none."""
    if seg.max_timestamp >= 0:
        return seg.max_timestamp
    return int(os.stat(seg.path).st_mtime * 1000)


def _now_ms() -> int:
    import time

    return int(time.time() * 1000)
