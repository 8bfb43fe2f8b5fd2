"""Log compaction: prepare() + install(), tombstones, codecs, crash recovery, dirty ratio."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest
from crc32c import crc32c

from broker.config import load_config
from broker.storage import cleaner
from broker.storage.batch import ATTRIBUTES_OFFSET, Codec, iter_batches, read_header, validate_produced
from broker.storage.cleaner import CleanResult
from broker.storage.log import PartitionLog
from broker.storage.records import Record, build_batch, parse_records, simple_batch
from broker.storage.segment import segment_name
from broker.topic_config import effective

BROKER = load_config({})
T0 = 1_700_000_000_000
COMPACT = {"cleanup.policy": "compact", "segment.bytes": "200", "delete.retention.ms": "1000"}

Row = tuple[int, bytes | None, bytes | None]  # offset, key, value


def open_log(directory: Path, overrides: Mapping[str, str] | None = None) -> PartitionLog:
    cfg = effective(BROKER, dict(COMPACT if overrides is None else overrides))
    return PartitionLog(str(directory), "compacted", 0, cfg, clock_ms=lambda: T0)


def put(plog: PartitionLog, key: bytes | None, value: bytes | None, ts: int = T0) -> int:
    batch = simple_batch(0, [(key, value)], ts)
    return plog.append(batch, validate_produced(batch, 1 << 20), now_ms=ts).base_offset


def put_batch(
    plog: PartitionLog, items: Sequence[tuple[bytes | None, bytes | None]], codec: int = 0, ts: int = T0
) -> int:
    recs = [Record(i, i, k, v) for i, (k, v) in enumerate(items)]
    batch = build_batch(0, recs, base_timestamp=ts, attributes=codec)
    return plog.append(batch, validate_produced(batch, 1 << 20), now_ms=ts).base_offset


def stored_batches(plog: PartitionLog) -> list[bytes]:
    """Every batch from the log start, fetched the way a consumer does."""
    out: list[bytes] = []
    offset = plog.log_start_offset
    while offset < plog.next_offset:
        data = plog.read(offset, 1 << 30)
        assert data, f"nothing to read at {offset} below the log end {plog.next_offset}"
        batches = [data[pos : pos + size] for pos, _, size in iter_batches(data)]
        assert sum(map(len, batches)) == len(data)
        out.extend(batches)
        offset = read_header(batches[-1]).last_offset + 1
    return out


def view(plog: PartitionLog) -> list[Row]:
    rows = []
    for raw in stored_batches(plog):
        h, recs = parse_records(raw)
        rows += [(h.base_offset + r.offset_delta, r.key, r.value) for r in recs]
    return rows


def compact(plog: PartitionLog, now: int) -> CleanResult:
    result = cleaner.prepare(plog, cleaner.cleanable_segments(plog, now), now)
    cleaner.install(plog, result)
    return result


def leftovers(directory: Path) -> list[str]:
    return sorted(n for n in os.listdir(directory) if n.endswith((".swap", ".cleaned", ".deleted")))


def expected_after_compaction(written: list[Row], first_uncleanable: int, drop_tombstones: bool) -> list[Row]:
    """Kafka's rule applied to what was written: the latest record per key in the cleanable part."""
    latest = {k: o for o, k, _ in written if o < first_uncleanable and k is not None}
    out = []
    for o, k, v in written:
        survives = k is not None and latest.get(k) == o and not (v is None and drop_tombstones)
        if o >= first_uncleanable or survives:
            out.append((o, k, v))
    return out


@pytest.fixture
def classic(tmp_path: Path) -> Iterator[tuple[PartitionLog, list[Row]]]:
    """A=1000 B=1000 C=1000 (0-2), A=2000 B=2000 (3-4), then other keys until 0-4 sit in closed segments."""
    plog = open_log(tmp_path)
    written: list[Row] = []
    for key, value in [(b"A", b"1000"), (b"B", b"1000"), (b"C", b"1000"), (b"A", b"2000"), (b"B", b"2000")]:
        written.append((put(plog, key, value), key, value))
    i = 0
    while plog.active.base_offset <= 6:
        key, value = b"K%02d" % i, b"v%02d" % i
        written.append((put(plog, key, value), key, value))
        i += 1
    put(plog, b"K-active", b"in the active segment")
    written.append((plog.next_offset - 1, b"K-active", b"in the active segment"))
    yield plog, written
    plog.close()


# -- the classic example ----------------------------------------------------------------


def test_classic_example(classic: tuple[PartitionLog, list[Row]], tmp_path: Path) -> None:
    plog, written = classic
    active = plog.active
    active_path = Path(active.path)
    active_bytes = active_path.read_bytes()
    end = plog.next_offset
    assert len(plog.segments) >= 4

    now = T0 + 1000
    result = compact(plog, now)

    rows = view(plog)
    assert rows[:3] == [(2, b"C", b"1000"), (3, b"A", b"2000"), (4, b"B", b"2000")]
    assert rows[3:] == [r for r in written if r[0] > 4]
    assert rows == expected_after_compaction(written, active.base_offset, drop_tombstones=False)
    # a read from offset 0 starts at the first surviving record
    first = parse_records(plog.read(0, 1 << 20))
    assert first[0].base_offset + first[1][0].offset_delta == 2
    # offsets, log start and log end are unchanged; the active segment is untouched
    assert (plog.log_start_offset, plog.next_offset) == (0, end)
    assert plog.active is active
    assert active_path.read_bytes() == active_bytes
    assert result.cleaned_up_to == active.base_offset
    assert plog.first_dirty_offset == active.base_offset
    assert result.bytes_after < result.bytes_before
    assert leftovers(tmp_path) == []
    assert sum(os.path.getsize(s.path) for s in plog.segments) == plog.size_bytes
    # every offset still reads, from the batch holding it or the next one
    for offset in range(end):
        h = read_header(plog.read(offset, 1))
        assert h.last_offset >= offset
    # appends continue where they were
    assert put(plog, b"A", b"3000") == end


def test_compaction_is_stable_and_survives_a_reopen(
    classic: tuple[PartitionLog, list[Row]], tmp_path: Path
) -> None:
    plog, _ = classic
    compact(plog, T0 + 1000)
    rows = view(plog)
    second = compact(plog, T0 + 1000)  # may merge small cleaned segments, but removes nothing more
    assert view(plog) == rows
    assert second.bytes_after == second.bytes_before
    bases = [s.base_offset for s in plog.segments]
    end = plog.next_offset
    plog.close()
    again = open_log(tmp_path)
    try:
        assert again.next_offset == end
        assert [s.base_offset for s in again.segments] == bases
        assert view(again) == rows
        assert put(again, b"C", b"2000") == end
    finally:
        again.close()


def test_keyless_records_are_removed(tmp_path: Path) -> None:
    plog = open_log(tmp_path)
    for key, value in [(None, b"x"), (b"A", b"1"), (None, b"y"), (b"B", b"1")]:
        put(plog, key, value)
    while plog.active.base_offset < 4:
        put(plog, b"F%d" % plog.next_offset, b"f")
    compact(plog, T0 + 1000)
    assert [r for r in view(plog) if r[0] < 4] == [(1, b"A", b"1"), (3, b"B", b"1")]
    plog.close()


def test_min_compaction_lag_keeps_young_segments_dirty(tmp_path: Path) -> None:
    plog = open_log(tmp_path, {**COMPACT, "min.compaction.lag.ms": "10000"})
    put(plog, b"A", b"old", ts=T0)
    put(plog, b"A", b"old2", ts=T0)
    put(plog, b"A", b"new", ts=T0 + 20_000)
    put(plog, b"A", b"newer", ts=T0 + 20_000)
    put(plog, b"Z", b"z", ts=T0 + 20_000)
    assert len(plog.segments) == 3
    segs = cleaner.cleanable_segments(plog, T0 + 15_000)
    assert [s.base_offset for s in segs] == [0]
    cleaner.install(plog, cleaner.prepare(plog, segs, T0 + 15_000))
    assert [r[0] for r in view(plog)] == [1, 2, 3, 4]  # only offset 0 could go
    plog.close()


# -- tombstones -------------------------------------------------------------------------


def test_tombstones_survive_delete_retention_ms_then_go(tmp_path: Path) -> None:
    plog = open_log(tmp_path)  # delete.retention.ms=1000, two one-record batches per segment
    put(plog, b"A", b"1")
    put(plog, b"B", b"1")
    put(plog, b"A", None)  # offset 2, in a segment whose newest record is at T0
    put(plog, b"C", b"1")
    put(plog, b"D", b"1")
    assert plog.active.base_offset == 4
    compact(plog, T0 + 500)  # A's tombstone is younger than delete.retention.ms
    assert view(plog) == [(1, b"B", b"1"), (2, b"A", None), (3, b"C", b"1"), (4, b"D", b"1")]

    put(plog, b"B", None, ts=T0 + 10_000)  # offset 5, in a segment whose newest record is at T0+10s
    put(plog, b"E", b"1", ts=T0 + 10_000)
    assert plog.active.base_offset == 6
    compact(plog, T0 + 10_500)  # A's tombstone is 10.5 s old and goes; B's is 0.5 s old and stays
    assert view(plog) == [(3, b"C", b"1"), (4, b"D", b"1"), (5, b"B", None), (6, b"E", b"1")]

    put(plog, b"F", None, ts=T0 + 10_000)  # a tombstone in the active segment
    compact(plog, T0 + 11_001)  # B's tombstone is old enough now; F's is in the active segment
    assert view(plog) == [(3, b"C", b"1"), (4, b"D", b"1"), (6, b"E", b"1"), (7, b"F", None)]
    assert plog.next_offset == 8
    plog.close()


def test_tombstone_exactly_at_the_horizon_survives(tmp_path: Path) -> None:
    plog = open_log(tmp_path)
    put(plog, b"A", b"1")
    put(plog, b"A", None)
    put(plog, b"Z", b"1")
    put(plog, b"Y", b"1")
    compact(plog, T0 + 1000)  # the segment is exactly delete.retention.ms old: not older
    assert (1, b"A", None) in view(plog)
    compact(plog, T0 + 1001)
    assert [r[1] for r in view(plog)] == [b"Z", b"Y"]
    plog.close()


# -- compressed batches -----------------------------------------------------------------


@pytest.mark.parametrize("codec", [Codec.NONE, Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD])
def test_compressed_batches_are_compacted_and_keep_their_codec(tmp_path: Path, codec: int) -> None:
    plog = open_log(tmp_path, {**COMPACT, "segment.bytes": "400"})
    layout: list[list[tuple[bytes | None, bytes | None]]] = [
        [(b"k0", b"a0"), (b"k1", b"a1"), (b"k9", b"a9"), (b"k2", b"a2"), (b"k3", b"a3")],
        [(b"k1", b"b1"), (b"k4", b"b4"), (b"k0", b"b0")],
        [(b"k2", b"c2"), (b"k5", None), (None, b"keyless")],
        [(b"k6", b"d6"), (b"k7", b"d7")],
        [(b"k3", b"e3"), (b"k8", b"e8")],
    ]
    written: list[Row] = []
    for items in layout:
        base = put_batch(plog, items, codec)
        written += [(base + i, k, v) for i, (k, v) in enumerate(items)]
    while len(plog.segments) < 3:
        written.append(
            (put_batch(plog, [(b"f%d" % len(written), b"filler")], codec), b"f%d" % len(written), b"filler")
        )
    first_uncleanable = plog.active.base_offset
    assert first_uncleanable > 15
    before = {read_header(b).base_offset: read_header(b) for b in stored_batches(plog)}

    compact(plog, T0 + 500)
    assert view(plog) == expected_after_compaction(written, first_uncleanable, drop_tombstones=False)
    rebuilt = 0
    for raw in stored_batches(plog):
        h, recs = parse_records(raw)
        assert h.codec == codec
        assert crc32c(raw[ATTRIBUTES_OFFSET:]) == h.crc
        assert len(raw) == h.size
        original = before[h.base_offset]
        # offsets never move: same base offset and last offset delta, whatever was removed
        assert h.last_offset_delta == original.last_offset_delta
        assert h.base_timestamp == original.base_timestamp
        assert h.count == len(recs) <= original.count
        rebuilt += h.count < original.count
    assert rebuilt >= 2  # batches partly kept were re-encoded with their codec
    plog.close()


# -- crash between prepare and install -----------------------------------------------------


@pytest.mark.parametrize("how", ["closed", "killed"])
def test_crash_between_prepare_and_install(
    classic: tuple[PartitionLog, list[Row]], tmp_path: Path, how: str
) -> None:
    plog, written = classic
    end = plog.next_offset
    first_uncleanable = plog.active.base_offset
    now = T0 + 1000
    result = cleaner.prepare(plog, cleaner.cleanable_segments(plog, now), now)
    assert result.groups
    assert all(n.endswith(".swap") for n in leftovers(tmp_path)) and leftovers(tmp_path)
    if how == "closed":
        plog.close()
    again = open_log(tmp_path)
    if how == "killed":
        plog.close_for_delete()  # a killed process: files closed, nothing flushed or snapshotted
    try:
        assert leftovers(tmp_path) == []
        assert again.next_offset == end
        rows = view(again)
        assert rows[:3] == [(2, b"C", b"1000"), (3, b"A", b"2000"), (4, b"B", b"2000")]
        assert rows == expected_after_compaction(written, first_uncleanable, drop_tombstones=False)
        for offset in range(end):
            assert read_header(again.read(offset, 1)).last_offset >= offset
        names = {n for n in os.listdir(tmp_path) if n.endswith(".log")}
        assert names == {segment_name(s.base_offset) + ".log" for s in again.segments}
        assert put(again, b"A", b"3000") == end
        assert view(again)[-1] == (end, b"A", b"3000")
    finally:
        again.close()


def _one_batch_segments(plog: PartitionLog, items: Sequence[tuple[bytes, bytes | None]]) -> None:
    for key, value in items:
        put(plog, key, value)
        plog.roll(T0)


# Segments of one record each, so the cleaner merges two segments per group (segment.bytes=200).
# X=1 and K=v are both superseded, so the first group's replacement is empty; the second group keeps
# X=2 and, the tombstone being old, drops K's tombstone.
DELETED_KEY = [(b"X", b"1"), (b"K", b"v"), (b"K", None), (b"X", b"2"), (b"F", b"f"), (b"G", b"g")]


def test_crash_before_install_does_not_resurrect_a_deleted_key(tmp_path: Path) -> None:
    plog = open_log(tmp_path / "crashed")
    _one_batch_segments(plog, DELETED_KEY)
    now = T0 + 10_000  # older than delete.retention.ms: tombstones go
    result = cleaner.prepare(plog, cleaner.cleanable_segments(plog, now), now)
    assert len(result.groups) >= 2
    plog.close()
    again = open_log(tmp_path / "crashed")
    try:
        rows = view(again)
        assert (1, b"K", b"v") not in rows, "K was deleted (tombstone at 2) but its old value is back"
        assert rows == [(3, b"X", b"2"), (4, b"F", b"f"), (5, b"G", b"g")]
    finally:
        again.close()


def test_crash_recovery_ends_like_install(tmp_path: Path) -> None:
    items = [
        (b"A", b"1"),
        (b"B", b"1"),
        (b"A", b"2"),
        (b"C", b"1"),
        (b"B", b"2"),
        (b"D", b"1"),
        (b"C", b"2"),
        (b"E", b"1"),
    ]
    now = T0 + 500
    installed = open_log(tmp_path / "installed")
    _one_batch_segments(installed, items)
    compact(installed, now)
    want = view(installed)
    installed.close()

    crashed = open_log(tmp_path / "crashed")
    _one_batch_segments(crashed, items)
    cleaner.prepare(crashed, cleaner.cleanable_segments(crashed, now), now)
    crashed.close()
    again = open_log(tmp_path / "crashed")
    try:
        assert view(again) == want
    finally:
        again.close()


def test_a_crash_during_prepare_leaves_the_log_as_it_was(
    classic: tuple[PartitionLog, list[Row]], tmp_path: Path
) -> None:
    plog, written = classic
    rows = view(plog)
    plog.close()
    (tmp_path / (segment_name(0) + ".log.cleaned")).write_bytes(b"half a segment")
    again = open_log(tmp_path)
    try:
        assert leftovers(tmp_path) == []
        assert view(again) == rows == written
    finally:
        again.close()


# -- when to clean ------------------------------------------------------------------------------


def test_needs_cleaning_respects_min_cleanable_dirty_ratio(tmp_path: Path) -> None:
    plog = open_log(tmp_path, {**COMPACT, "min.cleanable.dirty.ratio": "0.5"})
    for i in range(12):  # distinct keys: compaction keeps everything, so the clean part stays large
        put(plog, b"key%02d" % i, b"value")
    now = T0 + 1000
    plog.roll(now)
    ratio, _ = cleaner.dirty_ratio(plog, now)
    assert ratio == 1.0
    assert cleaner.needs_cleaning(plog, now)
    compact(plog, now)
    assert cleaner.dirty_ratio(plog, now)[0] == 0.0
    assert not cleaner.needs_cleaning(plog, now)

    clean_bytes = sum(s.size for s in plog.segments[:-1])
    put(plog, b"key00", b"again")
    put(plog, b"key01", b"again")
    plog.roll(now)  # a small dirty segment
    ratio, _ = cleaner.dirty_ratio(plog, now)
    dirty_bytes = plog.segments[-2].size
    assert ratio == pytest.approx(dirty_bytes / (clean_bytes + dirty_bytes))
    assert 0 < ratio < 0.5
    assert not cleaner.needs_cleaning(plog, now)

    for i in range(14):
        put(plog, b"key%02d" % (i % 12), b"third")
    plog.roll(now)
    ratio, _ = cleaner.dirty_ratio(plog, now)
    assert ratio > 0.5
    assert cleaner.needs_cleaning(plog, now)
    plog.close()


def test_needs_cleaning_requires_the_ratio_to_exceed_the_threshold(tmp_path: Path) -> None:
    # Kafka (LogCleanerManager.grabFilthiestCompactedLog): cleanableRatio > minCleanableRatio, strictly;
    # min.cleanable.dirty.ratio=1.0 therefore never triggers cleaning by ratio.
    plog = open_log(tmp_path, {**COMPACT, "min.cleanable.dirty.ratio": "1.0"})
    for i in range(6):
        put(plog, b"A", b"%d" % i)
    now = T0 + 1000
    assert cleaner.dirty_ratio(plog, now)[0] == 1.0
    assert not cleaner.needs_cleaning(plog, now)
    plog.close()


def test_needs_cleaning_needs_compact_policy_and_cleanable_segments(tmp_path: Path) -> None:
    deleting = open_log(tmp_path / "delete", {**COMPACT, "cleanup.policy": "delete"})
    for i in range(6):
        put(deleting, b"A", b"%d" % i)
    assert not cleaner.needs_cleaning(deleting, T0 + 1000)
    deleting.close()

    both = open_log(tmp_path / "both", {**COMPACT, "cleanup.policy": "compact,delete"})
    for i in range(6):
        put(both, b"A", b"%d" % i)
    assert cleaner.needs_cleaning(both, T0 + 1000)
    both.close()
    assert not cleaner.needs_cleaning(both, T0 + 1000)  # a closed log is never cleaned

    fresh = open_log(tmp_path / "fresh")
    put(fresh, b"A", b"1")
    put(fresh, b"A", b"2")
    assert len(fresh.segments) == 1  # only the active segment: nothing cleanable
    assert not cleaner.needs_cleaning(fresh, T0 + 1000)
    fresh.close()

    young = open_log(tmp_path / "young", {**COMPACT, "min.compaction.lag.ms": "60000"})
    for i in range(6):
        put(young, b"A", b"%d" % i)
    assert not cleaner.needs_cleaning(young, T0 + 1000)
    assert cleaner.needs_cleaning(young, T0 + 61_000)
    young.close()


def test_max_compaction_lag_forces_cleaning_below_the_ratio(tmp_path: Path) -> None:
    plog = open_log(
        tmp_path, {**COMPACT, "min.cleanable.dirty.ratio": "0.9", "max.compaction.lag.ms": "5000"}
    )
    for i in range(12):
        put(plog, b"key%02d" % i, b"value")
    plog.roll(T0 + 100)
    compact(plog, T0 + 100)
    put(plog, b"key00", b"again", ts=T0 + 200)
    put(plog, b"key01", b"again", ts=T0 + 200)
    plog.roll(T0 + 200)
    ratio, age = cleaner.dirty_ratio(plog, T0 + 1000)
    assert 0 < ratio < 0.9
    assert age == 800
    assert not cleaner.needs_cleaning(plog, T0 + 1000)
    assert cleaner.needs_cleaning(plog, T0 + 6000)
    plog.close()


def test_time_retention_still_applies_after_compaction_empties_a_segment(tmp_path: Path) -> None:
    # cleanup.policy=compact,delete: the first segment loses all its records to compaction. Kafka's
    # retention only spares an empty *last* segment; an emptied older one must not stop retention.ms.
    plog = open_log(tmp_path, {**COMPACT, "cleanup.policy": "compact,delete", "retention.ms": "5000"})
    written_at = int(time.time() * 1000) - 60_000  # file times of rewritten segments are wall-clock
    for key, value in [(b"A", b"1"), (b"A", b"2"), (b"A", b"3"), (b"B", b"1"), (b"C", b"1"), (b"D", b"1")]:
        put(plog, key, value, ts=written_at)
    compact(plog, written_at + 10)
    assert plog.segments[0].size == 0  # A=1 and A=2 are gone
    end = plog.next_offset
    deleted = plog.delete_expired(written_at + 10 * 86_400_000)  # everything expired long ago
    assert deleted > 0
    assert plog.log_start_offset == end
    assert view(plog) == []
    plog.close()


def test_prepare_does_not_touch_the_live_segments(
    classic: tuple[PartitionLog, list[Row]], tmp_path: Path
) -> None:
    plog, written = classic
    snapshot = {n: (tmp_path / n).read_bytes() for n in os.listdir(tmp_path) if n.endswith(".log")}
    result = cleaner.prepare(plog, cleaner.cleanable_segments(plog, T0 + 1000), T0 + 1000)
    assert {n: (tmp_path / n).read_bytes() for n in snapshot} == snapshot
    assert view(plog) == written  # readers see the old segments until install
    assert {Path(g.swap_path).name for g in result.groups} == set(leftovers(tmp_path))
    for group in result.groups:
        os.unlink(group.swap_path)
