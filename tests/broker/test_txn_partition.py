"""Transactions in a partition log: open transactions, markers, the last stable offset, the
aborted-transaction index, fencing, and recovery after a kill (reopening without close)."""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatch

from broker.config import load_config
from broker.storage.batch import TRANSACTIONAL, iter_batches, read_header, validate_produced
from broker.storage.log import (
    AppendResult,
    CoordinatorFenced,
    InvalidTxnState,
    PartitionLog,
    ProducerFenced,
)
from broker.storage.records import Record, build_batch, parse_records
from broker.storage.segment import segment_name
from broker.topic_config import effective

BROKER = load_config({})
T0 = 1_700_000_000_000


def open_log(directory: Path, overrides: Mapping[str, str] | None = None) -> PartitionLog:
    return PartitionLog(
        str(directory), "txn", 0, effective(BROKER, dict(overrides or {})), clock_ms=lambda: T0
    )


def batch(
    pid: int = -1, epoch: int = 0, seq: int = -1, n: int = 1, tag: str = "r", txn: bool = False
) -> bytes:
    recs = [Record(i, 0, f"{tag}-{i}".encode(), f"{tag}-v{i}".encode()) for i in range(n)]
    return build_batch(
        0,
        recs,
        base_timestamp=T0,
        attributes=TRANSACTIONAL if txn else 0,
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=seq,
    )


def put(plog: PartitionLog, raw: bytes) -> AppendResult:
    return plog.append(raw, validate_produced(raw, 1 << 20), now_ms=T0)


class Producer:
    """A transactional producer's batches, with its sequence numbers."""

    def __init__(self, plog: PartitionLog, pid: int, epoch: int = 0) -> None:
        self.plog, self.pid, self.epoch, self.seq = plog, pid, epoch, 0

    def send(self, n: int = 1, tag: str = "r", txn: bool = True) -> int:
        result = put(self.plog, batch(self.pid, self.epoch, self.seq, n, tag, txn))
        self.seq += n
        return result.base_offset

    def end(self, commit: bool, coordinator_epoch: int = 0) -> int:
        return self.plog.append_marker(self.pid, self.epoch, commit, coordinator_epoch, now_ms=T0)


def raw_batches(plog: PartitionLog) -> list[bytes]:
    out: list[bytes] = []
    offset = plog.log_start_offset
    while offset < plog.next_offset:
        data = plog.read(offset, 1 << 30)
        out.extend(data[pos : pos + size] for pos, _, size in iter_batches(data))
        offset = read_header(out[-1]).last_offset + 1
    return out


def kill(plog: PartitionLog) -> None:
    """What a kill -9 leaves: files as written, no flush, no snapshot on close."""
    plog.close_for_delete()


@pytest.fixture
def plog(tmp_path: Path) -> Iterator[PartitionLog]:
    log = open_log(tmp_path)
    yield log
    log.close()


# -- markers -------------------------------------------------------------------------------


@pytest.mark.parametrize("commit", [True, False])
def test_a_marker_is_kafkas_control_batch(plog: PartitionLog, commit: bool) -> None:
    Producer(plog, 42, epoch=3).send(2)
    offset = plog.append_marker(42, 3, commit, 9, now_ms=T0 + 5)
    assert offset == 2 and plog.next_offset == 3
    marker = DefaultRecordBatch(bytearray(raw_batches(plog)[-1]))  # kafka-python reads it
    assert marker.validate_crc()
    assert (marker.is_control_batch, marker.is_transactional) == (True, True)
    assert (marker.producer_id, marker.producer_epoch, marker.base_sequence) == (42, 3, -1)
    assert (marker.base_offset, marker.records_count, marker.max_timestamp) == (2, 1, T0 + 5)
    (record,) = list(marker)
    assert record.key == struct.pack(">hh", 0, 1 if commit else 0)  # version 0, COMMIT 1 / ABORT 0
    assert record.value == struct.pack(">hi", 0, 9)  # version 0, coordinator epoch
    assert record.offset == 2 and record.timestamp == T0 + 5


def test_a_transaction_opens_with_its_first_batch_and_closes_with_its_marker(plog: PartitionLog) -> None:
    put(plog, batch(tag="plain"))  # 0
    a, b = Producer(plog, 1), Producer(plog, 2)
    assert plog.last_stable_offset == 1
    assert a.send(2) == 1  # 1-2: a's transaction opens at 1
    assert b.send() == 3  # b's at 3
    a.send()  # 4: a's transaction goes on
    assert plog.open_transactions() == {1: 1, 2: 3}
    assert plog.last_stable_offset == 1
    assert a.end(commit=True) == 5
    assert plog.open_transactions() == {2: 3}
    assert plog.last_stable_offset == 3
    assert b.end(commit=False) == 6
    assert plog.open_transactions() == {}
    assert plog.last_stable_offset == plog.next_offset == 7
    # Only the abort is indexed: (pid, first offset) for fetches overlapping it.
    assert plog.aborted_transactions(0, 7) == [(2, 3)]
    assert plog.aborted_transactions(3, 4) == [(2, 3)]
    assert plog.aborted_transactions(6, 7) == [(2, 3)]  # the marker itself is in range
    assert plog.aborted_transactions(0, 3) == []  # ends before the transaction's first offset
    assert plog.aborted_transactions(7, 10) == []  # starts after its marker


def test_txnindex_holds_kafkas_34_byte_entries(tmp_path: Path, plog: PartitionLog) -> None:
    a, b = Producer(plog, 7), Producer(plog, 8)
    a.send()  # 0
    b.send()  # 1
    a.end(commit=False)  # 2: b still open, so the LSO after it is 1
    b.end(commit=False)  # 3: LSO 4
    data = (tmp_path / f"{segment_name(0)}.txnindex").read_bytes()
    assert len(data) == 2 * 34
    assert list(struct.iter_unpack(">hqqqq", data)) == [(0, 7, 0, 2, 1), (0, 8, 1, 3, 4)]


def test_a_marker_without_an_open_transaction_is_written_but_not_indexed(plog: PartitionLog) -> None:
    put(plog, batch(tag="plain"))
    assert plog.append_marker(99, 0, False, 0, now_ms=T0) == 1
    assert plog.aborted_transactions(0, 10) == []
    assert plog.last_stable_offset == plog.next_offset == 2
    assert read_header(raw_batches(plog)[-1]).is_control


def test_a_plain_batch_inside_an_open_transaction_is_invalid_txn_state(plog: PartitionLog) -> None:
    p = Producer(plog, 5)
    p.send()
    with pytest.raises(InvalidTxnState):
        p.send(txn=False)
    with pytest.raises(InvalidTxnState):
        put(plog, batch(pid=5, epoch=0, seq=-1))
    assert plog.next_offset == 1
    p.end(commit=True)
    p.send(txn=False)  # the same producer, idempotent only, once its transaction is over
    assert plog.next_offset == 3
    put(plog, batch(tag="someone else"))  # other producers were never affected


def test_markers_are_fenced_by_producer_and_coordinator_epochs(plog: PartitionLog) -> None:
    p = Producer(plog, 5, epoch=2)
    p.send()
    with pytest.raises(ProducerFenced):
        plog.append_marker(5, 1, True, 0)
    p.end(commit=False, coordinator_epoch=4)
    with pytest.raises(CoordinatorFenced):
        plog.append_marker(5, 2, True, 3)
    end = plog.next_offset
    # The coordinator fences the producer: a marker with a newer epoch, then the old epoch is refused.
    assert plog.append_marker(5, 3, False, 4) == end
    with pytest.raises(ProducerFenced):
        put(plog, batch(5, 2, p.seq, txn=True))
    assert plog.next_offset == end + 1
    # The new epoch starts its sequence at 0.
    assert put(plog, batch(5, 3, 0, txn=True)).base_offset == end + 1


def test_the_group_coordinators_batches_without_sequences_open_transactions(plog: PartitionLog) -> None:
    # TxnOffsetCommit records: transactional, the producer's id and epoch, base sequence -1.
    put(plog, batch(pid=11, epoch=1, seq=-1, txn=True))
    put(plog, batch(pid=11, epoch=1, seq=-1, txn=True))
    assert plog.open_transactions() == {11: 0}
    with pytest.raises(ProducerFenced):
        put(plog, batch(pid=11, epoch=0, seq=-1, txn=True))
    plog.append_marker(11, 1, True, 0)
    assert plog.open_transactions() == {}
    assert plog.last_stable_offset == 3


def test_read_below_the_lso_returns_whole_batches_before_it(plog: PartitionLog) -> None:
    put(plog, batch(n=2, tag="a"))  # 0-1
    p = Producer(plog, 3)
    p.send(3)  # 2-4, open
    put(plog, batch(n=2, tag="b"))  # 5-6
    stable = plog.last_stable_offset
    assert stable == 2
    data, after = plog.read_span(0, 1 << 20, below=stable)
    assert after == 2 and [read_header(data, pos).base_offset for pos, _, _ in iter_batches(data)] == [0]
    assert plog.read_span(2, 1 << 20, below=stable) == (b"", -1)
    assert plog.read_span(5, 1 << 20, below=stable) == (b"", -1)
    p.end(commit=True)
    data, after = plog.read_span(0, 1 << 20, below=plog.last_stable_offset)
    assert after == 8 and len(list(iter_batches(data))) == 4


def test_producer_states_and_expiry(plog: PartitionLog) -> None:
    open_one = Producer(plog, 1, epoch=4)
    open_one.send(3)
    idle = Producer(plog, 2)
    idle.send(txn=False)
    plog.append_marker(3, 0, True, 6)  # a marker alone makes a producer known too
    states = {s.producer_id: s for s in plog.producer_states()}
    assert (states[1].producer_epoch, states[1].last_sequence, states[1].current_txn_start_offset) == (
        4,
        2,
        0,
    )
    assert (states[2].last_sequence, states[2].current_txn_start_offset) == (0, -1)
    assert (states[3].coordinator_epoch, states[3].current_txn_start_offset, states[3].last_sequence) == (
        6,
        -1,
        -1,
    )
    assert states[1].last_timestamp == T0
    # Idle producers expire, one with an open transaction does not: it still holds the LSO.
    assert plog.producers.expire(T0 + 1) == 2
    assert [s.producer_id for s in plog.producer_states()] == [1]
    assert plog.last_stable_offset == 0


# -- recovery -------------------------------------------------------------------------------


def test_open_transactions_and_aborts_survive_a_kill(tmp_path: Path) -> None:
    plog = open_log(tmp_path, {"segment.bytes": "300"})  # several segments, snapshots at each roll
    a, b, c = Producer(plog, 1), Producer(plog, 2), Producer(plog, 3)
    a.send(tag="a0")
    for i in range(6):
        b.send(tag=f"b{i}")
    b.end(commit=False)
    c.send()
    for i in range(6):
        put(plog, batch(n=2, tag=f"plain{i}"))
    c.end(commit=True)
    assert len(plog.segments) > 2
    expected = (
        plog.open_transactions(),
        plog.last_stable_offset,
        plog.aborted_transactions(0, plog.next_offset),
    )
    kill(plog)
    again = open_log(tmp_path, {"segment.bytes": "300"})
    try:
        assert (again.open_transactions(), again.last_stable_offset) == expected[:2] == ({1: 0}, 0)
        assert again.aborted_transactions(0, again.next_offset) == expected[2] == [(2, 1)]
        # The open transaction goes on and ends after the restart.
        a.plog = again
        a.seq = 1
        a.send(tag="a1")
        a.end(commit=False)
        assert again.aborted_transactions(0, again.next_offset) == [(2, 1), (1, 0)]
        assert again.last_stable_offset == again.next_offset
    finally:
        again.close()
    clean = open_log(tmp_path, {"segment.bytes": "300"})
    try:
        assert clean.aborted_transactions(0, clean.next_offset) == [(2, 1), (1, 0)]
        assert clean.open_transactions() == {}
    finally:
        clean.close()


def test_a_torn_marker_reopens_its_transaction(tmp_path: Path) -> None:
    plog = open_log(tmp_path)
    p = Producer(plog, 4)
    p.send(2)
    p.end(commit=False)
    assert plog.aborted_transactions(0, 10) == [(4, 0)]
    kill(plog)
    log_file = tmp_path / f"{segment_name(0)}.log"
    os.truncate(log_file, log_file.stat().st_size - 3)  # the marker's write was torn
    again = open_log(tmp_path)
    try:
        assert again.next_offset == 2
        assert again.open_transactions() == {4: 0} and again.last_stable_offset == 0
        assert again.aborted_transactions(0, 10) == []
        assert not (tmp_path / f"{segment_name(0)}.txnindex").exists()
        # The coordinator writes the marker again; the index holds it once.
        assert again.append_marker(4, 0, False, 0) == 2
        assert again.aborted_transactions(0, 10) == [(4, 0)]
        assert (tmp_path / f"{segment_name(0)}.txnindex").stat().st_size == 34
    finally:
        again.close()


def test_a_torn_txnindex_entry_is_rebuilt_from_the_log(tmp_path: Path) -> None:
    plog = open_log(tmp_path)
    for pid in (1, 2):
        p = Producer(plog, pid)
        p.send()
        p.end(commit=False)
    kill(plog)
    index = tmp_path / f"{segment_name(0)}.txnindex"
    os.truncate(index, 34 + 20)  # the second entry's write was torn
    again = open_log(tmp_path)
    try:
        assert again.aborted_transactions(0, 10) == [(1, 0), (2, 2)]
        assert index.stat().st_size == 2 * 34
        p = Producer(again, 3)
        p.send()
        p.end(commit=False)
        entries = list(struct.iter_unpack(">hqqqq", index.read_bytes()))
        assert [e[1] for e in entries] == [1, 2, 3]
    finally:
        again.close()


def test_a_snapshot_carries_an_open_transaction_past_a_kill(tmp_path: Path) -> None:
    cfg = {"segment.bytes": "200"}
    plog = open_log(tmp_path, cfg)
    p = Producer(plog, 8, epoch=1)
    p.send(tag="first")
    for i in range(8):
        put(plog, batch(n=2, tag=f"plain{i}"))
    plog.append_marker(9, 0, False, 5)  # another producer's coordinator epoch, in a snapshot too
    for i in range(8):
        put(plog, batch(n=2, tag=f"more{i}"))
    snapshots = sorted(n for n in os.listdir(tmp_path) if n.endswith(".snapshot"))
    assert snapshots and int(snapshots[0][:-9]) > 0  # the first segments are behind a snapshot
    kill(plog)
    again = open_log(tmp_path, cfg)
    try:
        assert again.open_transactions() == {8: 0}
        with pytest.raises(CoordinatorFenced):
            again.append_marker(9, 0, True, 4)
        with pytest.raises(InvalidTxnState):
            put(again, batch(8, 1, p.seq))
    finally:
        again.close()


def test_retention_forgets_the_aborts_of_deleted_segments(tmp_path: Path) -> None:
    plog = open_log(tmp_path, {"segment.bytes": "200"})
    try:
        p = Producer(plog, 1)
        p.send()
        p.end(commit=False)
        for i in range(8):
            put(plog, batch(n=2, tag=f"plain{i}"))
        assert plog.aborted_transactions(0, plog.next_offset) == [(1, 0)]
        plog.advance_start(plog.segments[2].base_offset)
        assert plog.aborted.entries == []
        assert not (tmp_path / f"{segment_name(0)}.txnindex").exists()
    finally:
        plog.close()


def test_a_marker_on_a_log_append_time_topic_gets_the_append_time(tmp_path: Path) -> None:
    plog = open_log(tmp_path, {"message.timestamp.type": "LogAppendTime", "compression.type": "gzip"})
    try:
        Producer(plog, 1).send()
        plog.append_marker(1, 0, True, 0, now_ms=T0 + 77)
        h, records = parse_records(raw_batches(plog)[-1])
        assert h.is_control and h.max_timestamp == T0 + 77 and h.codec == 0  # never recompressed
        assert records[0].key == struct.pack(">hh", 0, 1)
    finally:
        plog.close()
