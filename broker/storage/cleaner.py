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

Transactions, as Kafka's cleaner (``CleanedTransactionMetadata``): nothing at or above
the last stable offset is cleanable (an open transaction's batches stay as written);
the batches of aborted transactions go whole and never enter the key map, so they
cannot shadow a committed value; a marker stays while this pass still meets data of
its transaction, and after that goes like a tombstone, once its segment is older than
``delete.retention.ms``. An ABORT marker that stays because its data was just removed
keeps its aborted-transaction entry (a consumer that fetched the data before the
cleaning still needs it); every other entry in the cleaned range goes with its marker,
since an entry without its marker would make consumers drop that producer's later
transactions. The replacement's ``.txnindex`` is written as a swap beside its log.
"""

from __future__ import annotations

import logging
import os
from collections import deque
from dataclasses import dataclass

from broker.storage.batch import CODEC_MASK, BatchHeader
from broker.storage.control import read_marker
from broker.storage.log import PartitionLog
from broker.storage.records import build_batch, parse_records
from broker.storage.segment import Segment, segment_name
from broker.storage.txn_index import AbortedTxn

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class CleanGroup:
    base_offset: int  # name of the replacement segment
    old_bases: tuple[int, ...]
    swap_path: str
    max_timestamp: int  # newest record of the replaced segments: the replacement's age
    txn_swap_path: str = ""  # the replacement's aborted transactions (written before swap_path)
    aborted: tuple[AbortedTxn, ...] = ()


class CleanedTxns:
    """Which batches of a cleaning pass belong to aborted transactions, and which markers
    may go (Kafka's ``CleanedTransactionMetadata``). Fed every batch in offset order."""

    def __init__(self, aborted: list[AbortedTxn]) -> None:
        self._pending = deque(sorted(aborted, key=lambda e: e.first_offset))
        self._aborted: dict[int, tuple[AbortedTxn, bool]] = {}  # pid -> (entry, data seen)
        self._committed: set[int] = set()  # pids whose committed data this pass has met

    def _reach(self, offset: int) -> None:
        while self._pending and self._pending[0].first_offset <= offset:
            e = self._pending.popleft()
            self._aborted[e.producer_id] = (e, False)

    def on_data(self, h: BatchHeader) -> bool:
        """True when the batch belongs to an aborted transaction."""
        self._reach(h.last_offset)
        if not h.is_transactional:
            return False
        state = self._aborted.get(h.producer_id)
        if state is not None:
            self._aborted[h.producer_id] = (state[0], True)
            return True
        self._committed.add(h.producer_id)
        return False

    def on_marker(self, h: BatchHeader, commit: bool | None) -> tuple[bool, AbortedTxn | None]:
        """(may the marker go, the aborted-transaction entry to keep with it)."""
        self._reach(h.last_offset)
        if h.count == 0:  # an empty control batch: a cleaned one, kept only to end a round
            return True, None
        if commit is None:  # not a transaction marker: keep it
            return False, None
        if commit:
            if h.producer_id in self._committed:
                self._committed.discard(h.producer_id)
                return False, None
            return True, None
        state = self._aborted.pop(h.producer_id, None)
        if state is not None and state[1]:
            return False, state[0]
        return True, None


@dataclass(frozen=True, slots=True)
class CleanResult:
    groups: tuple[CleanGroup, ...]
    cleaned_up_to: int  # first offset not covered: the new first dirty offset
    bytes_before: int
    bytes_after: int


def cleanable_segments(plog: PartitionLog, now: int) -> list[Segment]:
    """Closed segments old enough for min.compaction.lag.ms and wholly below the last
    stable offset, in order."""
    out = []
    stable = plog.last_stable_offset
    for seg in plog.segments[:-1]:
        if seg.max_timestamp > now - plog.config.min_compaction_lag_ms or seg.next_offset > stable:
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
    start = segs[0].base_offset if segs else 0
    round_end = segs[-1].next_offset if segs else 0
    # Entries are only appended at the log end meanwhile, past the round: a copy is stable.
    aborted = [e for e in list(plog.aborted.entries) if e.last_offset >= start and e.first_offset < round_end]
    latest: dict[bytes, int] = {}
    txns = CleanedTxns(aborted)
    for seg in segs:
        for pos, h in seg.batches():
            if h.is_control:
                txns.on_marker(h, _marker_kind(seg, pos, h))
                continue
            if txns.on_data(h):
                continue
            hdr, records = parse_records(seg.read_batch(pos, h))
            for r in records:
                if r.key is not None:
                    latest[r.key] = hdr.base_offset + r.offset_delta
    tombstone_horizon = now - plog.config.delete_retention_ms
    txns = CleanedTxns(aborted)
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
        kept_entries: list[AbortedTxn] = []
        with open(cleaned, "wb") as out:
            for seg in group:
                past_horizon = seg.max_timestamp < tombstone_horizon
                for pos, h in seg.batches():
                    raw = seg.read_batch(pos, h)
                    # Kafka keeps the round's last batch, emptied if need be, so the offsets
                    # up to the round's end stay readable: with nothing else before the LSO a
                    # read_committed consumer could not otherwise get past the gap.
                    last_of_round = h.last_offset + 1 == round_end
                    if h.is_control:
                        discardable, entry = txns.on_marker(h, _marker_kind(seg, pos, h, raw))
                        if entry is not None:
                            kept_entries.append(entry)
                        if discardable and past_horizon and not last_of_round:
                            continue
                        out.write(raw)
                        written += len(raw)
                        continue
                    if txns.on_data(h):  # an aborted transaction's batch
                        kept = []
                    else:
                        hdr, records = parse_records(raw)
                        kept = [
                            r
                            for r in records
                            if r.key is not None
                            and latest.get(r.key) == hdr.base_offset + r.offset_delta
                            and not (r.value is None and past_horizon)
                        ]
                    if not kept:
                        if last_of_round:
                            blob = _empty_batch(h)
                            out.write(blob)
                            written += len(blob)
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
        # A swap when there is an index to write or old ones to replace; without one,
        # recovery keeps <base>.txnindex, which then does not exist.
        txn_swap = ""
        if kept_entries or any(os.path.exists(s.txn_index_path) for s in group):
            txn_swap = _write_txn_swap(plog.dir, base, end, kept_entries)
        swap = os.path.join(plog.dir, f"{segment_name(base)}.log.{segment_name(end)}.swap")
        os.rename(cleaned, swap)
        newest = max(s.max_timestamp for s in group)
        if newest >= 0:
            # The replacement keeps the age of what it replaces: retention.ms goes by it
            # when compaction has left no record to take a timestamp from.
            os.utime(swap, ns=(newest * 1_000_000, newest * 1_000_000))
        groups.append(
            CleanGroup(base, tuple(s.base_offset for s in group), swap, newest, txn_swap, tuple(kept_entries))
        )
    cleaned_up_to = segs[-1].next_offset if segs else plog.first_dirty_offset
    return CleanResult(tuple(groups), cleaned_up_to, bytes_before, bytes_after)


def _empty_batch(h: BatchHeader) -> bytes:
    """A batch with ``h``'s offsets, producer and timestamps but no records."""
    return build_batch(
        h.base_offset,
        [],
        base_timestamp=h.base_timestamp,
        max_timestamp=h.max_timestamp,
        attributes=h.attributes & ~CODEC_MASK,
        last_offset_delta=h.last_offset_delta,
        producer_id=h.producer_id,
        producer_epoch=h.producer_epoch,
        base_sequence=h.base_sequence,
        leader_epoch=h.leader_epoch,
    )


def _marker_kind(seg: Segment, pos: int, h: BatchHeader, raw: bytes | None = None) -> bool | None:
    """True for a COMMIT marker, False for an ABORT, None for any other control batch."""
    marker = read_marker(raw if raw is not None else seg.read_batch(pos, h))
    return None if marker is None else marker.commit


def _write_txn_swap(directory: str, base: int, end: int, entries: list[AbortedTxn]) -> str:
    """The replacement's txnindex as ``<base>.txnindex.<end>.swap`` (empty when no entry
    remains), written before the log swap: recovery.complete_swaps relies on that order."""
    cleaned = os.path.join(directory, segment_name(base) + ".txnindex.cleaned")
    with open(cleaned, "wb") as f:
        f.write(b"".join(e.encode() for e in entries))
        f.flush()
        os.fsync(f.fileno())
    swap = os.path.join(directory, f"{segment_name(base)}.txnindex.{segment_name(end)}.swap")
    os.rename(cleaned, swap)
    return swap


def install(plog: PartitionLog, result: CleanResult) -> None:
    """Swap prepared segments in (event loop; the caller holds ``plog.cleaning``)."""
    for group in result.groups:
        plog.replace_segments(group.old_bases, group.swap_path, group.txn_swap_path or None, group.aborted)
    plog.first_dirty_offset = max(plog.first_dirty_offset, result.cleaned_up_to)
    log.info(
        "%s-%d: compacted %d bytes into %d up to offset %d",
        plog.topic,
        plog.partition,
        result.bytes_before,
        result.bytes_after,
        result.cleaned_up_to,
    )
