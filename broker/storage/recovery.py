"""Opening a partition log after a clean shutdown or a kill: finishing interrupted
compaction swaps, and rebuilding producer state and the aborted-transaction index.

Producer state (epochs, sequences, open transactions, coordinator epochs) is
snapshotted when a segment rolls and on close (``<offset>.snapshot``, JSON, the state
of every batch below that offset). Opening reads the newest snapshot at or below the
log end, then replays the batches after it, as Kafka's ``ProducerStateManager`` does:
data batches open transactions, markers close them, and each ABORT that closed one
adds its aborted-transaction entry again. Entries already in ``.txnindex`` files are
trusted below the snapshot and rebuilt above it, so a torn tail, a lost index write or
a truncated log all come back consistent.
"""

from __future__ import annotations

import contextlib
import logging
import os

import orjson

from broker.storage.control import read_marker
from broker.storage.producer_state import ProducerStateTable
from broker.storage.segment import Segment, segment_name
from broker.storage.txn_index import ENTRY, AbortedTxn, AbortedTxnIndex, read_file, write_file

log = logging.getLogger(__name__)

KEEP_SNAPSHOTS = 2
_SEGMENT_FILES = (".log", ".index", ".timeindex")


def remove_leftovers(directory: str, names: list[str]) -> None:
    """Half-written files of an interrupted compaction or index rewrite."""
    for name in names:
        if name.endswith((".cleaned", ".deleted", ".txnindex.tmp")):
            os.unlink(os.path.join(directory, name))


def complete_swaps(directory: str, where: str) -> None:
    """Finish compaction swaps interrupted by a crash.

    ``<base>.log.<end>.swap`` is a complete replacement for every segment whose base
    offset is in [base, end); those go, and the swap file takes their place. The cleaner
    writes ``<base>.txnindex.<end>.swap`` (the replacement's aborted transactions) before
    the log swap, and the install renames it before the log swap: a log swap without one
    means it is already ``<base>.txnindex``. A txnindex swap without its log swap is the
    remains of a compaction that never finished, and goes.
    """
    names = os.listdir(directory)
    for name in sorted(n for n in names if n.endswith(".swap") and ".log." in n):
        stem, _, end_part = name[: -len(".swap")].partition(".log.")
        if not (stem.isdigit() and end_part.isdigit()):
            log.warning("%s: ignoring unrecognised swap file %s", where, name)
            continue
        base, end = int(stem), int(end_part)
        txn_swap = os.path.join(directory, f"{stem}.txnindex.{end_part}.swap")
        renamed_already = not os.path.exists(txn_swap)
        for other in os.listdir(directory):
            if other.endswith(".log") and other[:-4].isdigit() and base <= int(other[:-4]) < end:
                doomed = [*_SEGMENT_FILES]
                if not (renamed_already and int(other[:-4]) == base):
                    doomed.append(".txnindex")
                for ext in doomed:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(os.path.join(directory, other[:-4] + ext))
        install_txn_swap(txn_swap, os.path.join(directory, segment_name(base) + ".txnindex"))
        os.rename(os.path.join(directory, name), os.path.join(directory, segment_name(base) + ".log"))
    for name in os.listdir(directory):
        if name.endswith(".swap") and ".txnindex." in name:
            os.unlink(os.path.join(directory, name))


def install_txn_swap(swap: str, target: str) -> None:
    """Move a cleaned txnindex into place; an empty one means no entries, so no file."""
    try:
        size = os.path.getsize(swap)
    except FileNotFoundError:
        return
    if size:
        os.replace(swap, target)
    else:
        os.unlink(swap)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(target)


# -- producer snapshots ------------------------------------------------------------------


def snapshot_path(directory: str, offset: int) -> str:
    return os.path.join(directory, f"{segment_name(offset)}.snapshot")


def snapshots(directory: str) -> list[int]:
    return sorted(int(n[:-9]) for n in os.listdir(directory) if n.endswith(".snapshot") and n[:-9].isdigit())


def write_snapshot(directory: str, offset: int, table: ProducerStateTable) -> None:
    path = snapshot_path(directory, offset)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(orjson.dumps(table.to_json()))
    os.replace(tmp, path)
    for old in snapshots(directory)[:-KEEP_SNAPSHOTS]:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(snapshot_path(directory, old))


def _newest_snapshot(directory: str, next_offset: int, where: str) -> tuple[ProducerStateTable, int] | None:
    for offset in reversed(snapshots(directory)):
        if offset > next_offset:
            os.unlink(snapshot_path(directory, offset))
            continue
        try:
            with open(snapshot_path(directory, offset), "rb") as f:
                return ProducerStateTable.from_json(orjson.loads(f.read())), offset
        except (OSError, ValueError, KeyError, TypeError):
            log.warning("%s: ignoring unreadable producer snapshot %d", where, offset)
    return None


# -- producer state and aborted transactions ---------------------------------------------


def load_state(
    directory: str, segments: list[Segment], log_start: int, names: set[str], where: str
) -> tuple[ProducerStateTable, AbortedTxnIndex]:
    """Producer state and aborted transactions as of the log end (see the module doc)."""
    next_offset = segments[-1].next_offset
    found = _newest_snapshot(directory, next_offset, where)
    table, start = found if found is not None else (ProducerStateTable(), log_start)
    index = AbortedTxnIndex(_trusted_entries(segments, start, names))
    for seg in segments:
        if seg.next_offset <= start:
            continue
        pos = seg.find_position(start) if start > seg.base_offset else 0
        if pos is None:
            continue
        for bpos, h in seg.batches(pos):
            pid = h.producer_id
            if pid < 0 or h.last_offset < start:
                continue
            if h.is_control:
                marker = read_marker(seg.read_batch(bpos, h))
                if marker is None:
                    continue
                first = table.end_txn(
                    pid, h.producer_epoch, marker.coordinator_epoch, h.base_offset, h.max_timestamp
                )
                if first >= 0 and not marker.commit:
                    unstable = table.first_unstable_offset()
                    entry = AbortedTxn(
                        pid, first, h.base_offset, unstable if unstable >= 0 else h.base_offset + 1
                    )
                    index.append(entry)
                    seg.append_aborted(entry)
            elif h.base_sequence >= 0 or h.is_transactional:
                table.record(
                    pid,
                    h.producer_epoch,
                    h.base_sequence,
                    h.last_sequence,
                    h.base_offset,
                    h.last_offset,
                    h.max_timestamp,
                    h.is_transactional,
                )
    table.truncate(next_offset)
    return table, index


def _trusted_entries(segments: list[Segment], below: int, names: set[str]) -> list[AbortedTxn]:
    """Index entries on disk whose marker is below ``below`` and inside its segment; files
    holding anything else (entries the replay re-derives, or of a cut tail) are rewritten."""
    out: list[AbortedTxn] = []
    for seg in segments:
        if os.path.basename(seg.txn_index_path) not in names:
            continue
        on_disk = read_file(seg.txn_index_path)
        last = out[-1].last_offset if out else -1
        kept = []
        for e in on_disk:
            if seg.base_offset <= e.last_offset < min(seg.next_offset, below) and e.last_offset > last:
                kept.append(e)
                last = e.last_offset
        torn = os.path.getsize(seg.txn_index_path) != len(on_disk) * ENTRY.size
        if kept != on_disk or torn or not kept:
            write_file(seg.txn_index_path, kept)
        out.extend(kept)
    return out
