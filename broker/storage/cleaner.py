"""Log compaction: keep the last record for every key, with offsets unchanged.

Split in two so the event loop never waits on it: ``prepare`` runs on a worker
thread, reads the closed segments (immutable files), and writes replacement
segments next to them as ``.swap`` files; ``install`` runs on the loop and swaps
them in. Each swap file is named after the range it replaces
(``<base>.log.<end>.swap``), so a crash between the two leaves files the log
finishes installing when it is next opened (``PartitionLog._complete_swap``):
every group is written before the first install, so recovery always finds a
complete set.

Kafka's rules: a record survives if it is the latest for its key among the
cleanable segments (everything but the active segment, and only segments older
than ``min.compaction.lag.ms``); tombstones are removed once their segment is
older than ``delete.retention.ms``; keyless records have no place in a compacted
log and go; batches keep their base offset and last offset delta, so offsets
never change and producer state stays intact.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from broker.storage.log import PartitionLog
from broker.storage.records import build_batch, parse_records
from broker.storage.segment import Segment, segment_name

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class CleanGroup:
    base_offset: int  # name of the replacement segment
    old_bases: tuple[int, ...]
    swap_path: str
    max_timestamp: int  # newest record of the replaced segments: the replacement's age


@dataclass(frozen=True, slots=True)
class CleanResult:
    groups: tuple[CleanGroup, ...]
    cleaned_up_to: int  # first offset not covered: the new first dirty offset
    bytes_before: int
    bytes_after: int


def cleanable_segments(plog: PartitionLog, now: int) -> list[Segment]:
    """Closed segments old enough for min.compaction.lag.ms, in order."""
    out = []
    for seg in plog.segments[:-1]:
        if seg.max_timestamp > now - plog.config.min_compaction_lag_ms:
            break
        out.append(seg)
    return out


def dirty_ratio(plog: PartitionLog, now: int) -> tuple[float, int]:
    """(dirty share of the cleanable bytes, age in ms of the first dirty batch)."""
    segs = cleanable_segments(plog, now)
    clean = sum(s.size for s in segs if s.next_offset <= plog.first_dirty_offset)
    dirty_segs = [s for s in segs if s.next_offset > plog.first_dirty_offset]
    dirty = sum(s.size for s in dirty_segs)
    total = clean + dirty
    first_ts = dirty_segs[0].first_batch_ts if dirty_segs else -1
    age = now - first_ts if first_ts >= 0 else 0
    return (dirty / total if total else 0.0), age


def needs_cleaning(plog: PartitionLog, now: int) -> bool:
    """Kafka's rule: the dirty ratio exceeds min.cleanable.dirty.ratio, or the oldest dirty
    record has waited longer than max.compaction.lag.ms."""
    if not plog.config.compact or plog.closed:
        return False
    ratio, age = dirty_ratio(plog, now)
    if ratio <= 0:
        return False
    return ratio > plog.config.min_cleanable_dirty_ratio or age > plog.config.max_compaction_lag_ms


def prepare(plog: PartitionLog, segs: list[Segment], now: int) -> CleanResult:
    """Write compacted replacements for ``segs`` (worker thread; reads only closed segments)."""
    latest: dict[bytes, int] = {}
    for seg in segs:
        for pos, h in seg.batches():
            if h.is_control:
                continue
            hdr, records = parse_records(seg.read_batch(pos, h))
            for r in records:
                if r.key is not None:
                    latest[r.key] = hdr.base_offset + r.offset_delta
    tombstone_horizon = now - plog.config.delete_retention_ms
    groups: list[CleanGroup] = []
    limit = plog.config.segment_bytes
    i = 0
    bytes_before = bytes_after = 0
    while i < len(segs):
        group = [segs[i]]
        size = segs[i].size
        while i + len(group) < len(segs) and size + segs[i + len(group)].size <= limit:
            size += segs[i + len(group)].size
            group.append(segs[i + len(group)])
        i += len(group)
        bytes_before += size
        base = group[0].base_offset
        cleaned = os.path.join(plog.dir, segment_name(base) + ".log.cleaned")
        written = 0
        with open(cleaned, "wb") as out:
            for seg in group:
                drop_tombstones = seg.max_timestamp < tombstone_horizon
                for pos, h in seg.batches():
                    raw = seg.read_batch(pos, h)
                    if h.is_control:
                        out.write(raw)
                        written += len(raw)
                        continue
                    hdr, records = parse_records(raw)
                    kept = [
                        r
                        for r in records
                        if r.key is not None
                        and latest.get(r.key) == hdr.base_offset + r.offset_delta
                        and not (r.value is None and drop_tombstones)
                    ]
                    if not kept:
                        continue
                    if len(kept) == len(records):
                        blob = raw
                    else:
                        blob = build_batch(
                            hdr.base_offset,
                            kept,
                            base_timestamp=hdr.base_timestamp,
                            max_timestamp=hdr.max_timestamp,
                            attributes=hdr.attributes,
                            last_offset_delta=hdr.last_offset_delta,
                            producer_id=hdr.producer_id,
                            producer_epoch=hdr.producer_epoch,
                            base_sequence=hdr.base_sequence,
                            leader_epoch=hdr.leader_epoch,
                        )
                    out.write(blob)
                    written += len(blob)
            out.flush()
            os.fsync(out.fileno())
        bytes_after += written
        end = group[-1].next_offset
        swap = os.path.join(plog.dir, f"{segment_name(base)}.log.{segment_name(end)}.swap")
        os.rename(cleaned, swap)
        newest = max(s.max_timestamp for s in group)
        if newest >= 0:
            # The replacement keeps the age of what it replaces: retention.ms goes by it
            # when compaction has left no record to take a timestamp from.
            os.utime(swap, ns=(newest * 1_000_000, newest * 1_000_000))
        groups.append(CleanGroup(base, tuple(s.base_offset for s in group), swap, newest))
    cleaned_up_to = segs[-1].next_offset if segs else plog.first_dirty_offset
    return CleanResult(tuple(groups), cleaned_up_to, bytes_before, bytes_after)


def install(plog: PartitionLog, result: CleanResult) -> None:
    """Swap prepared segments in (event loop; the caller holds ``plog.cleaning``)."""
    for group in result.groups:
        plog.replace_segments(group.old_bases, group.swap_path)
    plog.first_dirty_offset = max(plog.first_dirty_offset, result.cleaned_up_to)
    log.info(
        "%s-%d: compacted %d bytes into %d up to offset %d",
        plog.topic,
        plog.partition,
        result.bytes_before,
        result.bytes_after,
        result.cleaned_up_to,
    )
