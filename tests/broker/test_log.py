"""PartitionLog on a real directory: appends, reads, rolling, recovery, timestamps, retention."""

from __future__ import annotations

import itertools
import os
import random
import struct
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from broker.config import load_config
from broker.storage.batch import (
    HEADER_SIZE,
    TIMESTAMP_TYPE_LOG_APPEND,
    Codec,
    iter_batches,
    read_header,
    validate_produced,
)
from broker.storage.log import (
    OffsetOutOfRange,
    OutOfOrderSequence,
    PartitionLog,
    ProducerFenced,
)
from broker.storage.records import Record, build_batch, parse_records
from broker.storage.segment import segment_name
from broker.topic_config import TopicConfig, effective

BROKER = load_config({})
T0 = 1_700_000_000_000
DAY = 86_400_000


def topic_config(overrides: Mapping[str, str] | None = None) -> TopicConfig:
    return effective(BROKER, dict(overrides or {}))


def open_log(
    directory: Path | str, overrides: Mapping[str, str] | None = None, log_start_offset: int = 0
) -> PartitionLog:
    return PartitionLog(
        str(directory), "topic", 0, topic_config(overrides), log_start_offset, clock_ms=lambda: T0
    )


def make_batch(
    n: int = 1, ts: int = T0, tag: str = "x", ts_deltas: list[int] | None = None, codec: int = 0, **kw: int
) -> bytes:
    deltas = ts_deltas if ts_deltas is not None else [0] * n
    recs = [
        Record(i, deltas[i], f"{tag}-k{i}".encode(), f"{tag}-value-{i}".encode(), [("h", b"v")])
        for i in range(len(deltas))
    ]
    return build_batch(0, recs, base_timestamp=ts, attributes=codec, leader_epoch=7, **kw)


def append(plog: PartitionLog, batch: bytes, now: int = T0) -> int:
    return plog.append(batch, validate_produced(batch, 1 << 24), now_ms=now).base_offset


def stored_batches(plog: PartitionLog) -> list[bytes]:
    """Every batch from the log start, read the way a consumer fetches (one segment per read)."""
    out: list[bytes] = []
    offset = plog.log_start_offset
    while offset < plog.next_offset:
        data = plog.read(offset, 1 << 30)
        assert data, f"no data at offset {offset} below the log end {plog.next_offset}"
        batches = [data[pos : pos + size] for pos, _, size in iter_batches(data)]
        assert sum(len(b) for b in batches) == len(data)  # whole batches only
        out.extend(batches)
        offset = read_header(batches[-1]).last_offset + 1
    return out


def stored_records(plog: PartitionLog) -> list[tuple[int, int, bytes | None, bytes | None]]:
    """(offset, timestamp, key, value) of every record from the log start."""
    out = []
    for raw in stored_batches(plog):
        h, recs = parse_records(raw)
        for r in recs:
            append_time = h.attributes & TIMESTAMP_TYPE_LOG_APPEND
            ts = h.max_timestamp if append_time else h.base_timestamp + r.timestamp_delta
            out.append((h.base_offset + r.offset_delta, ts, r.key, r.value))
    return [r for r in out if r[0] >= plog.log_start_offset]


def files(directory: Path, suffix: str) -> list[str]:
    return sorted(n for n in os.listdir(directory) if n.endswith(suffix))


def seg_path(directory: Path, base: int, ext: str = ".log") -> Path:
    return directory / (segment_name(base) + ext)


@pytest.fixture
def plog(tmp_path: Path) -> Iterator[PartitionLog]:
    log = open_log(tmp_path)
    yield log
    log.close()


# -- appending and reading --------------------------------------------------------------


def test_offsets_are_consecutive_and_batches_read_back_identical(plog: PartitionLog) -> None:
    sent = [make_batch(n, tag=f"b{i}") for i, n in enumerate([1, 3, 2, 5, 1])]
    bases = [append(plog, b) for b in sent]
    assert bases == [0, 1, 4, 6, 11]
    assert plog.next_offset == 12
    stored = stored_batches(plog)
    assert len(stored) == len(sent)
    for raw, original, base in zip(stored, sent, bases, strict=True):
        assert len(raw) == len(original)
        assert raw[16:] == original[16:]  # everything after base offset, length and leader epoch
        assert struct.unpack(">qii", raw[:16]) == (base, len(original) - 12, 0)
        validate_produced(raw, 1 << 20)  # the stored CRC is still valid
    # the same bytes come back in one read of the whole segment
    assert plog.read(0, 1 << 20) == b"".join(stored)


def test_read_from_inside_a_batch_returns_the_whole_batch(plog: PartitionLog) -> None:
    append(plog, make_batch(4))
    append(plog, make_batch(4))
    for offset in range(8):
        data = plog.read(offset, 1 << 20)
        first = read_header(data)
        assert first.base_offset <= offset <= first.last_offset
        assert first.base_offset == (0 if offset < 4 else 4)


def test_reads_return_whole_batches_only(plog: PartitionLog) -> None:
    sent = [make_batch(2, tag=str(i)) for i in range(4)]
    for b in sent:
        append(plog, b)
    size = len(sent[0])
    assert all(len(b) == size for b in sent)
    for max_bytes, whole in [(size, 1), (size + 1, 1), (2 * size - 1, 1), (2 * size, 2), (3 * size + 5, 3)]:
        data = plog.read(0, max_bytes)
        assert len(data) == whole * size
        assert [base for _, base, _ in iter_batches(data)] == [0, 2, 4][:whole]
    assert len(plog.read(2, 2 * size + 10)) == 2 * size  # from the second batch


@pytest.mark.parametrize("max_bytes", [1, 11, 12, 13, HEADER_SIZE, -1])
def test_read_returns_one_whole_batch_when_max_bytes_is_smaller(plog: PartitionLog, max_bytes: int) -> None:
    big = make_batch(20, tag="big")
    append(plog, big)
    append(plog, make_batch(1))
    limit = max_bytes if max_bytes > 0 else len(big) - 1
    data = plog.read(0, limit, min_one=True)
    assert data[16:] == big[16:]
    assert plog.read(0, limit, min_one=False) == b""
    # also when reading from an offset inside the batch
    assert plog.read(13, limit)[16:] == big[16:]


def test_read_with_zero_max_bytes_still_returns_one_batch_when_min_one(plog: PartitionLog) -> None:
    # Kafka (LogSegment.read): adjustedMaxSize = max(maxSize, first batch size) when minOneMessage.
    batch = make_batch(2)
    append(plog, batch)
    assert plog.read(0, 0, min_one=True)[16:] == batch[16:]
    assert plog.read(0, 0, min_one=False) == b""


def test_read_at_log_end_is_empty(plog: PartitionLog) -> None:
    assert plog.read(0, 1 << 20) == b""  # an empty log
    append(plog, make_batch(3))
    assert plog.next_offset == 3
    assert plog.read(3, 1 << 20) == b""


@pytest.mark.parametrize("offset", [-1, 4, 5, 1 << 40])
def test_reads_outside_the_log_raise_offset_out_of_range(plog: PartitionLog, offset: int) -> None:
    append(plog, make_batch(3))
    with pytest.raises(OffsetOutOfRange):
        plog.read(offset, 1 << 20)


def test_empty_log_rejects_reads_past_zero(plog: PartitionLog) -> None:
    with pytest.raises(OffsetOutOfRange):
        plog.read(1, 100)


# -- rolling ----------------------------------------------------------------------------


def test_segments_roll_by_segment_bytes(tmp_path: Path) -> None:
    plog = open_log(tmp_path, {"segment.bytes": "500"})
    sent = [make_batch(1 + i % 3, tag=str(i)) for i in range(30)]
    for b in sent:
        append(plog, b)
    segs = plog.segments
    assert len(segs) > 3
    for seg, nxt in itertools.pairwise(segs):
        assert 0 < seg.size <= 500
        first_of_next = read_header(plog.read(nxt.base_offset, 1))
        assert seg.size + first_of_next.size > 500  # it rolled only when the next batch did not fit
        assert seg.next_offset == nxt.base_offset
    assert files(tmp_path, ".log") == [segment_name(s.base_offset) + ".log" for s in segs]
    assert files(tmp_path, ".index") == [segment_name(s.base_offset) + ".index" for s in segs]
    assert files(tmp_path, ".timeindex") == [segment_name(s.base_offset) + ".timeindex" for s in segs]
    assert sum(os.path.getsize(seg_path(tmp_path, s.base_offset)) for s in segs) == sum(len(b) for b in sent)
    assert [b[16:] for b in stored_batches(plog)] == [b[16:] for b in sent]
    plog.close()


def test_a_batch_larger_than_segment_bytes_gets_a_segment_of_its_own(tmp_path: Path) -> None:
    plog = open_log(tmp_path, {"segment.bytes": "200"})
    append(plog, make_batch(1))
    append(plog, make_batch(30, tag="huge"))
    append(plog, make_batch(1))
    assert [s.base_offset for s in plog.segments] == [0, 1, 31]
    assert [r[0] for r in stored_records(plog)] == list(range(32))
    plog.close()


def test_segments_roll_by_segment_ms(tmp_path: Path) -> None:
    plog = open_log(tmp_path, {"segment.ms": "1000"})
    for t in (0, 500, 1000):
        append(plog, make_batch(1, ts=T0 + t), now=T0 + t)
    assert [s.base_offset for s in plog.segments] == [0]
    append(plog, make_batch(1, ts=T0 + 1001), now=T0 + 1001)
    assert [s.base_offset for s in plog.segments] == [0, 3]
    append(plog, make_batch(2, ts=T0 + 1900), now=T0 + 1900)
    assert [s.base_offset for s in plog.segments] == [0, 3]
    append(plog, make_batch(1, ts=T0 + 2002), now=T0 + 2002)
    assert [s.base_offset for s in plog.segments] == [0, 3, 6]
    assert [r[0] for r in stored_records(plog)] == list(range(7))
    plog.close()


def test_segment_ms_is_measured_between_record_timestamps(tmp_path: Path) -> None:
    # Kafka (LogSegment.timeWaitedForRoll): a segment rolls when the new batch's timestamp is more than
    # segment.ms after the first batch's timestamp; the wall clock only counts for batches without one.
    # Loading a backlog of old records must not roll a segment per batch.
    plog = open_log(tmp_path, {"segment.ms": str(DAY)})
    old = T0 - 30 * DAY
    for i in range(5):
        append(plog, make_batch(1, ts=old + i * 1000), now=T0 + i)
    assert [s.base_offset for s in plog.segments] == [0]
    append(plog, make_batch(1, ts=old + 2 * DAY), now=T0 + 10)
    assert [s.base_offset for s in plog.segments] == [0, 5]
    plog.close()


def test_explicit_roll_and_roll_of_an_empty_segment(plog: PartitionLog) -> None:
    plog.roll()
    assert len(plog.segments) == 1  # nothing to roll
    append(plog, make_batch(2))
    seg = plog.roll()
    assert seg.base_offset == 2
    assert [s.base_offset for s in plog.segments] == [0, 2]
    assert append(plog, make_batch(1)) == 2
    assert [r[0] for r in stored_records(plog)] == [0, 1, 2]


# -- reopening and recovery -------------------------------------------------------------


SMALL = {"segment.bytes": "400", "index.interval.bytes": "100"}


def fill(plog: PartitionLog, n: int = 25) -> list[bytes]:
    sent = []
    for i in range(n):
        b = make_batch(1 + i % 4, ts=T0 + 1000 * i, tag=f"r{i}", ts_deltas=[0, 7, 3, 9][: 1 + i % 4])
        append(plog, b, now=T0 + 1000 * i)
        sent.append(b)
    return sent


def reopen(
    plog: PartitionLog,
    directory: Path,
    overrides: Mapping[str, str] | None,
    crash: bool,
    log_start_offset: int = 0,
) -> PartitionLog:
    """Open the log again, after a clean close or as after a kill (files left as they are)."""
    if not crash:
        plog.close()
    again = open_log(directory, overrides, log_start_offset)
    if crash:
        plog.close_for_delete()  # a killed process: files closed, nothing flushed or snapshotted
    return again


@pytest.mark.parametrize("crash", [False, True], ids=["closed", "killed"])
def test_reopen_gives_the_same_log(tmp_path: Path, crash: bool) -> None:
    plog = open_log(tmp_path, SMALL)
    sent = fill(plog)
    end = plog.next_offset
    bases = [s.base_offset for s in plog.segments]
    sizes = [s.size for s in plog.segments]
    data = stored_batches(plog)
    lookups = {t: plog.offset_for_timestamp(t) for t in range(T0 - 1, T0 + 26_000, 500)}
    assert len(bases) > 3

    again = reopen(plog, tmp_path, SMALL, crash)
    assert again.next_offset == end
    assert [s.base_offset for s in again.segments] == bases
    assert [s.size for s in again.segments] == sizes
    assert stored_batches(again) == data
    assert [b[16:] for b in data] == [b[16:] for b in sent]
    assert {t: again.offset_for_timestamp(t) for t in lookups} == lookups
    for offset in range(end):
        first = read_header(again.read(offset, 1))
        assert first.base_offset <= offset <= first.last_offset
    # appends continue where the log ended
    assert append(again, make_batch(1, ts=T0 + 30_000), now=T0 + 30_000) == end
    again.close()
    third = open_log(tmp_path, SMALL)
    assert third.next_offset == end + 1
    third.close()


def _closed_with(tmp_path: Path, n: int = 6) -> tuple[list[bytes], int, int]:
    """A closed single-segment log of n batches; returns (batches, position and base of the last one)."""
    plog = open_log(tmp_path)
    sent = [make_batch(2, tag=str(i)) for i in range(n)]
    for b in sent:
        append(plog, b)
    plog.close()
    last_pos = sum(len(b) for b in sent[:-1])
    return sent, last_pos, 2 * (n - 1)


@pytest.mark.parametrize(
    "garbage",
    [
        b"\x00" * 5,
        b"\x00" * 100,
        b"\xff" * 100,
        random.Random(7).randbytes(300),
        struct.pack(">qi", 12, 5000) + b"\x00" * 80,  # a header claiming more bytes than the file has
    ],
    ids=["short-zeros", "zeros", "ones", "random", "long-length"],
)
def test_garbage_after_the_last_batch_is_truncated_on_reopen(tmp_path: Path, garbage: bytes) -> None:
    sent, _, _ = _closed_with(tmp_path)
    log_file = seg_path(tmp_path, 0)
    good_size = log_file.stat().st_size
    with open(log_file, "ab") as f:
        f.write(garbage)
    plog = open_log(tmp_path)
    assert log_file.stat().st_size == good_size
    assert plog.next_offset == 12
    assert [b[16:] for b in stored_batches(plog)] == [b[16:] for b in sent]
    assert append(plog, make_batch(1)) == 12
    plog.close()


def test_a_copy_of_an_earlier_batch_after_the_end_is_truncated(tmp_path: Path) -> None:
    _, last_pos, _ = _closed_with(tmp_path)
    log_file = seg_path(tmp_path, 0)
    data = log_file.read_bytes()
    with open(log_file, "ab") as f:
        f.write(data[:last_pos])  # valid CRCs, but offsets going backwards
    plog = open_log(tmp_path)
    assert plog.next_offset == 12
    assert log_file.stat().st_size == len(data)
    plog.close()


@pytest.mark.parametrize("cut", [1, 11, 12, 30, HEADER_SIZE, HEADER_SIZE + 3, -1])
def test_a_torn_last_batch_is_truncated_on_reopen(tmp_path: Path, cut: int) -> None:
    sent, last_pos, last_base = _closed_with(tmp_path)
    log_file = seg_path(tmp_path, 0)
    keep = last_pos + (cut if cut > 0 else len(sent[-1]) + cut)
    os.truncate(log_file, keep)
    plog = open_log(tmp_path)
    assert log_file.stat().st_size == last_pos
    assert plog.next_offset == last_base
    assert [b[16:] for b in stored_batches(plog)] == [b[16:] for b in sent[:-1]]
    # the lost offsets are handed out again
    assert append(plog, make_batch(1, tag="new")) == last_base
    assert stored_records(plog)[-1][2] == b"new-k0"
    plog.close()


def test_a_torn_tail_in_a_multi_segment_log(tmp_path: Path) -> None:
    plog = open_log(tmp_path, SMALL)
    sent = fill(plog)
    bases = [s.base_offset for s in plog.segments]
    last_batch = read_header(stored_batches(plog)[-1])
    plog.close()
    active = seg_path(tmp_path, bases[-1])
    os.truncate(active, active.stat().st_size - 5)
    again = open_log(tmp_path, SMALL)
    assert [s.base_offset for s in again.segments] == bases
    assert again.next_offset == last_batch.base_offset
    assert [b[16:] for b in stored_batches(again)] == [b[16:] for b in sent[:-1]]
    again.close()


@pytest.mark.parametrize("where", [21, 40, HEADER_SIZE, HEADER_SIZE + 5, -1])
def test_a_bit_flipped_last_batch_is_dropped_on_reopen(tmp_path: Path, where: int) -> None:
    sent, last_pos, last_base = _closed_with(tmp_path)
    log_file = seg_path(tmp_path, 0)
    data = bytearray(log_file.read_bytes())
    data[last_pos + where if where >= 0 else len(data) + where] ^= 0x10
    log_file.write_bytes(bytes(data))
    plog = open_log(tmp_path)
    assert plog.next_offset == last_base
    assert log_file.stat().st_size == last_pos
    assert [b[16:] for b in stored_batches(plog)] == [b[16:] for b in sent[:-1]]
    plog.close()


INDEX_DAMAGE: dict[str, dict[str, bytes | None]] = {
    "delete-index": {".index": None},
    "delete-timeindex": {".timeindex": None},
    "delete-both": {".index": None, ".timeindex": None},
    "empty-index": {".index": b""},
    "garbage-index": {".index": b"\xff" * 13},
    "garbage-index-whole-entries": {".index": b"\x7f" * 16},
    "garbage-timeindex": {".timeindex": b"\x01" * 25},
    "garbage-timeindex-whole-entries": {".timeindex": b"\x7f" * 24},
    "garbage-both": {".index": b"\x00\x00\x00\x05" * 6, ".timeindex": b"\x80" * 36},
}


@pytest.mark.parametrize("damage", list(INDEX_DAMAGE), ids=list(INDEX_DAMAGE))
def test_damaged_indexes_of_closed_segments_are_rebuilt(tmp_path: Path, damage: str) -> None:
    plog = open_log(tmp_path, SMALL)
    fill(plog)
    bases = [s.base_offset for s in plog.segments]
    end = plog.next_offset
    data = stored_batches(plog)
    times = {t: plog.offset_for_timestamp(t) for t in range(T0 - 1, T0 + 26_000, 250)}
    newest = plog.max_timestamp_offset()
    plog.close()
    assert len(bases) >= 4
    for base in bases[:-1]:
        for ext, content in INDEX_DAMAGE[damage].items():
            path = seg_path(tmp_path, base, ext)
            if content is None:
                path.unlink()
            else:
                path.write_bytes(content)

    again = open_log(tmp_path, SMALL)
    assert again.next_offset == end
    assert [s.base_offset for s in again.segments] == bases
    assert stored_batches(again) == data
    for offset in range(end):
        first = read_header(again.read(offset, 1))
        assert first.base_offset <= offset <= first.last_offset
    assert {t: again.offset_for_timestamp(t) for t in times} == times
    assert again.max_timestamp_offset() == newest
    for base in bases[:-1]:
        assert seg_path(tmp_path, base, ".index").stat().st_size % 8 == 0
        assert seg_path(tmp_path, base, ".index").stat().st_size > 0
        assert seg_path(tmp_path, base, ".timeindex").stat().st_size % 12 == 0
        assert seg_path(tmp_path, base, ".timeindex").stat().st_size > 0
    again.close()


# -- timestamps -------------------------------------------------------------------------


def test_offset_for_timestamp_across_segments_and_inside_batches(tmp_path: Path) -> None:
    plog = open_log(tmp_path, {"segment.bytes": "300", "index.interval.bytes": "1"})
    # (base timestamp, deltas): records of one batch out of order, a batch older than the one before
    layout = [
        (1000, [0, 30, 10]),  # offsets 0-2: 1000 1030 1010
        (2000, [0]),  # 3: 2000
        (1500, [0, 600, -100]),  # 4-6: 1500 2100 1400
        (3000, [0, 1, 2, 3]),  # 7-10: 3000..3003
        (2500, [0]),  # 11: 2500
        (5000, [0, -10]),  # 12-13: 5000 4990
    ]
    for i, (ts, deltas) in enumerate(layout):
        append(plog, make_batch(ts=ts, ts_deltas=deltas, tag=str(i)), now=ts)
    assert len(plog.segments) >= 3
    expect = {
        0: (0, 1000),
        1000: (0, 1000),
        1001: (1, 1030),
        1030: (1, 1030),
        1031: (3, 2000),
        2000: (3, 2000),
        2001: (5, 2100),
        2100: (5, 2100),
        2101: (7, 3000),
        3001: (8, 3001),
        3003: (10, 3003),
        3004: (12, 5000),
        4990: (12, 5000),
        5000: (12, 5000),
    }
    for t, want in expect.items():
        assert plog.offset_for_timestamp(t) == want, t
    assert plog.offset_for_timestamp(5001) is None
    assert plog.offset_for_timestamp(1 << 50) is None
    assert plog.max_timestamp_offset() == (12, 5000)
    plog.close()
    again = open_log(tmp_path, {"segment.bytes": "300", "index.interval.bytes": "1"})
    for t, want in expect.items():
        assert again.offset_for_timestamp(t) == want, t
    assert again.offset_for_timestamp(5001) is None
    assert again.max_timestamp_offset() == (12, 5000)
    again.close()


def test_timestamp_lookups_on_an_empty_log(plog: PartitionLog) -> None:
    assert plog.offset_for_timestamp(0) is None
    assert plog.max_timestamp_offset() is None


def _expected_first_at(records: list[tuple[int, int]], target: int) -> tuple[int, int] | None:
    for offset, ts in records:
        if ts >= target:
            return offset, ts
    return None


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    batches=st.lists(
        st.tuples(st.integers(0, 5000), st.lists(st.integers(-300, 300), min_size=1, max_size=4)),
        min_size=1,
        max_size=12,
    ),
    segment_bytes=st.sampled_from([150, 250, 600, 1 << 20]),
    index_interval=st.sampled_from([0, 90, 4096]),
    start_fraction=st.sampled_from([0.0, 0.0, 0.3, 0.7]),
)
def test_timestamp_lookups_match_a_scan_of_every_record(
    batches: list[tuple[int, list[int]]], segment_bytes: int, index_interval: int, start_fraction: float
) -> None:
    cfg = {"segment.bytes": str(segment_bytes), "index.interval.bytes": str(index_interval)}
    records: list[tuple[int, int]] = []
    with tempfile.TemporaryDirectory() as d:
        plog = open_log(d, cfg)
        for i, (base_ts, deltas) in enumerate(batches):
            deltas = [0, *deltas[1:]]  # the base timestamp is the first record's
            base = append(plog, make_batch(ts=base_ts + 300, ts_deltas=deltas, tag=str(i)), now=T0)
            records += [(base + j, base_ts + 300 + dt) for j, dt in enumerate(deltas)]
        stamps = sorted({ts for _, ts in records})
        targets = {0, stamps[-1] + 1, *stamps, *(t + 1 for t in stamps), *(t - 1 for t in stamps)}
        top = max(ts for _, ts in records)
        newest = next((o, ts) for o, ts in records if ts == top)
        start = int(len(records) * start_fraction)
        for reopened in (False, True):
            if reopened:
                plog.close()
                plog = open_log(d, cfg, log_start_offset=start)
            if not start:
                assert plog.max_timestamp_offset() == newest
            if start and not reopened:
                plog.advance_start(start)
            assert plog.log_start_offset == start
            live = [(o, ts) for o, ts in records if o >= start]
            for t in sorted(targets):
                assert plog.offset_for_timestamp(t) == _expected_first_at(live, t), (t, reopened)
        plog.close()


def test_log_append_time_topic_stamps_batches(tmp_path: Path) -> None:
    plog = open_log(tmp_path, {"message.timestamp.type": "LogAppendTime"})
    sent = make_batch(3, ts=1000, ts_deltas=[0, 5, 2])
    result = plog.append(sent, validate_produced(sent, 1 << 20), now_ms=T0 + 5)
    assert (result.base_offset, result.log_append_time) == (0, T0 + 5)
    second = make_batch(1, ts=999_999)
    result2 = plog.append(second, validate_produced(second, 1 << 20), now_ms=T0 + 9)
    assert (result2.base_offset, result2.log_append_time) == (3, T0 + 9)
    raw = stored_batches(plog)[0]
    h = validate_produced(raw, 1 << 20)  # CRC recomputed
    assert h.attributes & TIMESTAMP_TYPE_LOG_APPEND
    assert h.max_timestamp == T0 + 5
    assert h.base_timestamp == 1000
    assert raw[HEADER_SIZE:] == sent[HEADER_SIZE:]  # records untouched
    stamps = [(o, ts) for o, ts, _, _ in stored_records(plog)]
    assert stamps == [(0, T0 + 5), (1, T0 + 5), (2, T0 + 5), (3, T0 + 9)]
    assert plog.offset_for_timestamp(1001) == (0, T0 + 5)
    assert plog.offset_for_timestamp(T0 + 6) == (3, T0 + 9)
    assert plog.offset_for_timestamp(T0 + 10) is None
    assert plog.max_timestamp_offset() == (3, T0 + 9)
    plog.close()


def test_log_append_time_duplicate_reports_the_original_append_time(tmp_path: Path) -> None:
    # Kafka (UnifiedLog.append): a duplicate's append info carries the original batch's timestamp, so
    # the retried produce gets the same log_append_time_ms as the first attempt.
    plog = open_log(tmp_path, {"message.timestamp.type": "LogAppendTime"})
    batch = make_batch(2, ts=1000, producer_id=11, producer_epoch=0, base_sequence=0)
    first = plog.append(batch, validate_produced(batch, 1 << 20), now_ms=T0 + 5)
    retry = plog.append(batch, validate_produced(batch, 1 << 20), now_ms=T0 + 500)
    assert retry.duplicate
    assert retry.base_offset == first.base_offset == 0
    assert retry.log_append_time == first.log_append_time == T0 + 5
    plog.close()


def test_create_time_topic_keeps_batches_as_sent(plog: PartitionLog) -> None:
    sent = make_batch(2, ts=1000)
    result = plog.append(sent, validate_produced(sent, 1 << 20), now_ms=T0)
    assert result.log_append_time == -1
    assert stored_batches(plog)[0][16:] == sent[16:]


# -- idempotent producers -----------------------------------------------------------------


PID = 4242


def idem(seq: int, n: int = 2, epoch: int = 1, tag: str = "p") -> bytes:
    return make_batch(n, tag=f"{tag}{seq}", producer_id=PID, producer_epoch=epoch, base_sequence=seq)


def test_idempotent_duplicates_return_the_original_offset(tmp_path: Path) -> None:
    plog = open_log(tmp_path)
    assert append(plog, idem(0)) == 0
    assert append(plog, make_batch(3)) == 2  # a plain producer in between
    assert append(plog, idem(2)) == 5
    end, size = plog.next_offset, plog.size_bytes
    for seq, offset in ((0, 0), (2, 5)):
        batch = idem(seq)
        result = plog.append(batch, validate_produced(batch, 1 << 20), now_ms=T0)
        assert result.duplicate
        assert result.base_offset == offset
    assert (plog.next_offset, plog.size_bytes) == (end, size)
    assert append(plog, idem(4)) == 7
    plog.close()


def test_idempotent_sequence_errors(plog: PartitionLog) -> None:
    append(plog, idem(0))
    with pytest.raises(OutOfOrderSequence):
        append(plog, idem(5))
    with pytest.raises(ProducerFenced):
        append(plog, idem(2, epoch=0))
    with pytest.raises(OutOfOrderSequence):
        append(plog, idem(3, epoch=2))  # a new epoch starts at 0
    assert plog.next_offset == 2
    assert append(plog, idem(0, epoch=2)) == 2


@pytest.mark.parametrize("snapshots", ["kept", "deleted", "garbage", "killed"])
def test_idempotent_duplicates_survive_a_reopen(tmp_path: Path, snapshots: str) -> None:
    cfg = {"segment.bytes": "250"}
    plog = open_log(tmp_path, cfg)
    offsets = {}
    for seq in range(0, 16, 2):
        offsets[seq] = append(plog, idem(seq))
        append(plog, make_batch(1, tag=f"other{seq}"))
    end, size = plog.next_offset, plog.size_bytes
    assert len(plog.segments) > 2
    if snapshots != "killed":
        plog.close()
    assert files(tmp_path, ".snapshot")
    for name in files(tmp_path, ".snapshot"):
        if snapshots == "deleted":
            os.unlink(tmp_path / name)
        elif snapshots == "garbage":
            (tmp_path / name).write_bytes(b"{not json")

    again = open_log(tmp_path, cfg)
    if snapshots == "killed":
        plog.close_for_delete()  # a killed process: files closed, nothing flushed or snapshotted
    for seq in range(6, 16, 2):  # the last five batches
        batch = idem(seq)
        result = again.append(batch, validate_produced(batch, 1 << 20), now_ms=T0)
        assert result.duplicate and result.base_offset == offsets[seq], seq
    with pytest.raises(OutOfOrderSequence):
        append(again, idem(4))  # older than the last five
    assert (again.next_offset, again.size_bytes) == (end, size)
    assert append(again, idem(16)) == end
    again.close()


def test_a_torn_idempotent_batch_can_be_sent_again_after_reopen(tmp_path: Path) -> None:
    plog = open_log(tmp_path)
    append(plog, idem(0))
    append(plog, idem(2))
    plog.close()
    log_file = seg_path(tmp_path, 0)
    os.truncate(log_file, log_file.stat().st_size - 3)
    again = open_log(tmp_path)
    assert again.next_offset == 2
    batch = idem(2)
    result = again.append(batch, validate_produced(batch, 1 << 20), now_ms=T0)
    assert not result.duplicate
    assert result.base_offset == 2
    assert again.next_offset == 4
    again.close()


# -- retention and log start ----------------------------------------------------------------


def _segments_with_times(plog: PartitionLog, count: int) -> None:
    for i in range(count):
        append(plog, make_batch(2, ts=T0 + 1000 * i, tag=str(i)), now=T0 + 1000 * i)


def test_retention_bytes_deletes_oldest_segments(tmp_path: Path) -> None:
    plog = open_log(tmp_path, {"segment.bytes": "300", "retention.bytes": "700"})
    _segments_with_times(plog, 20)
    before = [(s.base_offset, s.size) for s in plog.segments]
    total = plog.size_bytes
    assert total > 1400
    deleted = plog.delete_expired(T0)
    assert deleted > 0
    bases = [s.base_offset for s in plog.segments]
    assert [b for b, _ in before[deleted:]] == bases
    # Kafka: delete while what remains is still at least retention.bytes; never the active segment
    assert plog.size_bytes >= 700
    assert plog.size_bytes - plog.segments[0].size < 700
    assert plog.log_start_offset == bases[0]
    for base, _ in before[:deleted]:
        assert not seg_path(tmp_path, base).exists()
        assert not seg_path(tmp_path, base, ".index").exists()
        assert not seg_path(tmp_path, base, ".timeindex").exists()
    with pytest.raises(OffsetOutOfRange):
        plog.read(bases[0] - 1, 1 << 20)
    assert read_header(plog.read(bases[0], 1 << 20)).base_offset == bases[0]
    assert plog.delete_expired(T0) == 0  # nothing more to do
    plog.close()


def test_retention_ms_deletes_expired_segments(tmp_path: Path) -> None:
    plog = open_log(tmp_path, {"segment.bytes": "300", "retention.ms": "5000"})
    _segments_with_times(plog, 20)  # record timestamps T0 .. T0+19000
    newest = {s.base_offset: s.max_timestamp for s in plog.segments}
    now = T0 + 14_500
    horizon = now - 5000
    deleted = plog.delete_expired(now)
    expired = [b for b, ts in newest.items() if ts < horizon]
    assert deleted == len(expired) > 0
    assert plog.log_start_offset == plog.segments[0].base_offset
    assert plog.segments[0].max_timestamp >= horizon
    for base in expired:
        assert not seg_path(tmp_path, base).exists()
    remaining = stored_records(plog)
    assert remaining[0][0] == plog.log_start_offset
    assert all(ts >= horizon - 1000 for _, ts, _, _ in remaining)
    with pytest.raises(OffsetOutOfRange):
        plog.read(plog.log_start_offset - 1, 100)
    plog.close()


def test_retention_ms_can_empty_the_whole_log(tmp_path: Path) -> None:
    plog = open_log(tmp_path, {"segment.bytes": "300", "retention.ms": "5000"})
    _segments_with_times(plog, 6)
    end = plog.next_offset
    plog.delete_expired(T0 + 100_000)
    assert plog.log_start_offset == end
    assert plog.next_offset == end
    assert plog.size_bytes == 0
    assert plog.read(end, 100) == b""
    with pytest.raises(OffsetOutOfRange):
        plog.read(end - 1, 100)
    assert files(tmp_path, ".log") == [segment_name(end) + ".log"]
    assert append(plog, make_batch(1), now=T0 + 100_000) == end
    plog.close()


def test_unlimited_retention_deletes_nothing(tmp_path: Path) -> None:
    plog = open_log(tmp_path, {"segment.bytes": "300", "retention.ms": "-1", "retention.bytes": "-1"})
    _segments_with_times(plog, 10)
    n = len(plog.segments)
    assert plog.delete_expired(T0 + 10**12) == 0
    assert len(plog.segments) == n
    assert plog.log_start_offset == 0
    plog.close()


def test_advance_start_moves_the_log_start_anywhere(tmp_path: Path) -> None:
    plog = open_log(tmp_path, {"segment.bytes": "300"})
    _segments_with_times(plog, 10)  # batches of 2: offsets 0..19
    bases = [s.base_offset for s in plog.segments]
    target = bases[2] + 1  # inside a batch of the third segment
    assert plog.advance_start(target) == target
    assert plog.log_start_offset == target
    assert [s.base_offset for s in plog.segments] == bases[2:]
    for base in bases[:2]:
        assert not seg_path(tmp_path, base).exists()
    with pytest.raises(OffsetOutOfRange):
        plog.read(target - 1, 1 << 20)
    first = read_header(plog.read(target, 1 << 20))
    assert first.base_offset <= target <= first.last_offset
    assert stored_records(plog)[0][0] == target
    assert plog.offset_for_timestamp(0) == (target, T0 + 1000 * (target // 2))
    assert plog.advance_start(3) == target  # never backwards
    plog.close()
    again = open_log(tmp_path, {"segment.bytes": "300"}, log_start_offset=target)
    assert again.log_start_offset == target
    with pytest.raises(OffsetOutOfRange):
        again.read(target - 1, 100)
    again.close()


def test_advance_start_to_the_end_empties_the_log(tmp_path: Path) -> None:
    plog = open_log(tmp_path)
    _segments_with_times(plog, 3)
    assert plog.advance_start(1 << 40) == 6  # capped at the log end
    assert plog.log_start_offset == plog.next_offset == 6
    assert plog.read(6, 100) == b""
    with pytest.raises(OffsetOutOfRange):
        plog.read(5, 100)
    assert not seg_path(tmp_path, 0).exists()
    assert append(plog, make_batch(1)) == 6
    plog.close()


# -- compression.type -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("topic_codec", "producer_codec", "stored_codec"),
    [
        ("gzip", Codec.NONE, Codec.GZIP),
        ("gzip", Codec.ZSTD, Codec.GZIP),
        ("lz4", Codec.SNAPPY, Codec.LZ4),
        ("uncompressed", Codec.LZ4, Codec.NONE),
        ("producer", Codec.SNAPPY, Codec.SNAPPY),
        ("gzip", Codec.GZIP, Codec.GZIP),
    ],
)
def test_topic_compression_type_recompresses(
    tmp_path: Path, topic_codec: str, producer_codec: int, stored_codec: int
) -> None:
    plog = open_log(tmp_path, {"compression.type": topic_codec})
    recs = [
        Record(0, 0, b"a", b"x" * 300, [("h", b"1")]),
        Record(1, 5, None, b"keyless"),
        Record(2, 9, b"c", None),
    ]
    sent = build_batch(
        0,
        recs,
        base_timestamp=T0,
        attributes=producer_codec,
        producer_id=9,
        producer_epoch=0,
        base_sequence=0,
    )
    assert append(plog, sent) == 0
    assert append(plog, make_batch(2)) == 3
    raw = stored_batches(plog)[0]
    h = validate_produced(raw, 1 << 20)
    assert h.codec == stored_codec
    assert (h.count, h.last_offset_delta, h.base_timestamp, h.max_timestamp) == (3, 2, T0, T0 + 9)
    assert (h.producer_id, h.producer_epoch, h.base_sequence) == (9, 0, 0)
    _, parsed = parse_records(raw)
    assert [(r.offset_delta, r.timestamp_delta, r.key, r.value, r.headers) for r in parsed] == [
        (r.offset_delta, r.timestamp_delta, r.key, r.value, r.headers) for r in recs
    ]
    if topic_codec == "gzip" and producer_codec == Codec.NONE:
        assert len(raw) < len(sent)
    assert plog.next_offset == 5
    plog.close()
