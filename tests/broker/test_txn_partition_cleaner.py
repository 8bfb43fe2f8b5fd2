"""Compaction of a partition with transactions, as Kafka's cleaner does it: aborted
transactions' records go (and never shadow committed ones), markers stay while their
transaction's data remains and then until delete.retention.ms, an open transaction is
never cleaned, and the aborted-transaction index follows the markers, across a crash."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from broker.config import load_config
from broker.storage import cleaner
from broker.storage.batch import TRANSACTIONAL, iter_batches, read_header, validate_produced
from broker.storage.control import read_marker
from broker.storage.log import PartitionLog
from broker.storage.records import Record, build_batch, parse_records
from broker.topic_config import effective

T0 = 1_700_000_000_000
HORIZON = 1000  # delete.retention.ms
CONFIG = {"cleanup.policy": "compact", "segment.bytes": "200", "delete.retention.ms": str(HORIZON)}
BEFORE_HORIZON = T0 + HORIZON // 2
PAST_HORIZON = T0 + 10 * HORIZON
PIDS = (1, 2, 3)
KEYS = (b"a", b"b", b"c")


def open_log(directory: Path) -> PartitionLog:
    return PartitionLog(
        str(directory), "compacted", 0, effective(load_config({}), CONFIG), clock_ms=lambda: T0
    )


def put(plog: PartitionLog, key: bytes, value: bytes, pid: int = -1, seq: int = -1, txn: bool = False) -> int:
    raw = build_batch(
        0,
        [Record(0, 0, key, value)],
        base_timestamp=T0,
        attributes=TRANSACTIONAL if txn else 0,
        producer_id=pid,
        producer_epoch=0,
        base_sequence=seq,
    )
    return plog.append(raw, validate_produced(raw, 1 << 20), now_ms=T0).base_offset


def fill(plog: PartitionLog, tag: str, until_active_base_above: int) -> None:
    """Plain records with keys of their own until ``until_active_base_above`` sits in a closed segment."""
    i = 0
    while plog.active.base_offset <= until_active_base_above:
        put(plog, f"{tag}{i}".encode(), b"filler")
        i += 1


def entries(plog: PartitionLog) -> list[tuple[int, int | str, bytes | None]]:
    """(offset, producer id or "COMMIT"/"ABORT" for a marker, key) of every record."""
    out: list[tuple[int, int | str, bytes | None]] = []
    offset = plog.log_start_offset
    while offset < plog.next_offset:
        data = plog.read(offset, 1 << 30)
        for pos, _, size in iter_batches(data):
            raw = data[pos : pos + size]
            h, records = parse_records(raw)
            if h.is_control:
                marker = read_marker(raw)
                assert marker is not None
                out.append((h.base_offset, "COMMIT" if marker.commit else "ABORT", None))
            else:
                out += [(h.base_offset + r.offset_delta, h.producer_id, r.key) for r in records]
            offset = h.last_offset + 1
    return out


def compact(plog: PartitionLog, now: int) -> None:
    cleaner.install(plog, cleaner.prepare(plog, cleaner.cleanable_segments(plog, now), now))


@pytest.fixture
def plog(tmp_path: Path) -> Iterator[PartitionLog]:
    log = open_log(tmp_path)
    yield log
    log.close()


def test_aborted_records_go_and_markers_outlive_their_data(plog: PartitionLog) -> None:
    assert put(plog, b"k", b"good", pid=1, seq=0, txn=True) == 0
    assert plog.append_marker(1, 0, True, 0) == 1
    assert put(plog, b"k", b"bad", pid=2, seq=0, txn=True) == 2  # newer, but aborted
    assert plog.append_marker(2, 0, False, 0) == 3
    fill(plog, "f", 6)  # closed segments after the markers: neither ends a cleaning round
    assert plog.aborted_transactions(0, plog.next_offset) == [(2, 2)]

    compact(plog, BEFORE_HORIZON)
    kept = entries(plog)
    # The committed value survives the aborted one; the aborted batch is gone; both markers
    # stay: this pass met data of both transactions.
    assert kept[:3] == [(0, 1, b"k"), (1, "COMMIT", None), (3, "ABORT", None)]
    assert plog.aborted_transactions(0, plog.next_offset) == [(2, 2)]  # still indexed with its marker

    compact(plog, BEFORE_HORIZON)
    # No data of the aborted transaction is left: its entry goes, its marker waits for the horizon.
    assert entries(plog)[:3] == [(0, 1, b"k"), (1, "COMMIT", None), (3, "ABORT", None)]
    assert plog.aborted_transactions(0, plog.next_offset) == []

    compact(plog, PAST_HORIZON)
    # Past delete.retention.ms the ABORT marker goes; the COMMIT stays while "k"=good does.
    assert entries(plog)[:2] == [(0, 1, b"k"), (1, "COMMIT", None)]
    assert entries(plog)[2][0] > 3

    # A newer plain value supersedes the committed one: its batch goes, and the next pass
    # finds no data of that transaction, so its marker goes too.
    newer = put(plog, b"k", b"newer")
    fill(plog, "g", newer)
    compact(plog, PAST_HORIZON)
    assert (1, "COMMIT", None) in entries(plog)
    compact(plog, PAST_HORIZON)
    rows = entries(plog)
    assert [r for r in rows if r[2] == b"k"] == [(newer, -1, b"k")]
    assert not [r for r in rows if isinstance(r[1], str)]
    assert plog.next_offset == rows[-1][0] + 1  # offsets never change


def test_an_open_transaction_is_never_cleaned(plog: PartitionLog) -> None:
    put(plog, b"a", b"1")
    fill(plog, "early", 0)
    first = put(plog, b"a", b"2", pid=9, seq=0, txn=True)  # opens at `first`
    put(plog, b"a", b"3", pid=9, seq=1, txn=True)
    fill(plog, "late", first + 4)
    assert plog.last_stable_offset == first
    segs = cleaner.cleanable_segments(plog, PAST_HORIZON)
    assert segs and all(s.next_offset <= first for s in segs)
    before = entries(plog)
    compact(plog, PAST_HORIZON)
    after = entries(plog)
    assert [r for r in after if r[0] >= first] == [r for r in before if r[0] >= first]
    # Once committed, the transaction's older value of "a" is superseded like any other.
    plog.append_marker(9, 0, True, 0)
    fill(plog, "more", plog.next_offset)
    compact(plog, PAST_HORIZON)
    assert [r[0] for r in entries(plog) if r[2] == b"a"] == [first + 1]


@pytest.mark.parametrize("how", ["killed", "closed"])
def test_a_crash_between_prepare_and_install_keeps_the_index_with_its_markers(
    tmp_path: Path, how: str
) -> None:
    plog = open_log(tmp_path)
    for pid in (1, 2, 3):
        put(plog, b"k%d" % pid, b"aborted", pid=pid, seq=0, txn=True)
        plog.append_marker(pid, 0, False, 0)
        fill(plog, f"f{pid}-", plog.next_offset)
    assert [pid for pid, _ in plog.aborted_transactions(0, plog.next_offset)] == [1, 2, 3]
    compact(plog, BEFORE_HORIZON)  # markers stay and keep their entries (data just removed)
    compact(plog, BEFORE_HORIZON)  # entries go (no data left), markers stay for the horizon
    assert plog.aborted_transactions(0, plog.next_offset) == []
    first = put(plog, b"k4", b"aborted", pid=4, seq=0, txn=True)
    plog.append_marker(4, 0, False, 0)
    fill(plog, "late", plog.next_offset)
    end = plog.next_offset
    result = cleaner.prepare(plog, cleaner.cleanable_segments(plog, BEFORE_HORIZON), BEFORE_HORIZON)
    swaps = sorted(n for n in os.listdir(tmp_path) if n.endswith(".swap"))
    assert any(".txnindex." in n for n in swaps) and any(".log." in n for n in swaps)
    expected = [(e.producer_id, e.first_offset) for g in result.groups for e in g.aborted]
    assert expected == [(4, first)]
    if how == "closed":
        plog.close()
    else:
        plog.close_for_delete()
    again = open_log(tmp_path)
    try:
        assert not [n for n in os.listdir(tmp_path) if n.endswith((".swap", ".cleaned"))]
        assert again.next_offset == end
        assert again.aborted_transactions(0, end) == expected
        assert all(r[2] is None or not r[2].startswith(b"k") for r in entries(again))  # aborted data gone
        for offset in range(end):
            assert read_header(again.read(offset, 1)).last_offset >= offset
    finally:
        again.close()


# -- a model: compaction never changes what a read_committed consumer concludes -------------


def committed_view(plog: PartitionLog) -> dict[bytes, bytes]:
    """The latest value per key a read_committed consumer reads below the LSO, decided the
    way Kafka's Java consumer does (``CompletedFetch``): per fetch response, aborted
    transactions become aborted producers once a batch reaches their first offset, an
    ABORT marker ends that, and aborted producers' transactional batches are dropped."""
    latest: dict[bytes, bytes] = {}
    stable = plog.last_stable_offset
    offset = plog.log_start_offset
    while offset < stable:
        data, after = plog.read_span(offset, 1 << 20, below=stable)
        assert data, f"nothing read at {offset} below the LSO {stable}"
        pending = sorted(plog.aborted_transactions(offset, after), key=lambda e: e[1])
        aborted_pids: set[int] = set()
        for pos, _, size in iter_batches(data):
            raw = data[pos : pos + size]
            h, records = parse_records(raw)
            if h.producer_id >= 0:
                while pending and pending[0][1] <= h.last_offset:
                    aborted_pids.add(pending.pop(0)[0])
                if h.is_control:
                    marker = read_marker(raw)
                    if marker is not None and not marker.commit:
                        aborted_pids.discard(h.producer_id)
                    continue
                if h.is_transactional and h.producer_id in aborted_pids:
                    continue
            for r in records:
                if h.base_offset + r.offset_delta >= offset and r.key is not None and r.value is not None:
                    latest[r.key] = r.value
        offset = after
    return latest


class CleanMachine(RuleBasedStateMachine):
    """Transactions, plain records, markers, compactions (before and past the horizon) and
    kills in random order; after each step the read_committed view matches the model."""

    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="txn-clean-"))
        self.plog = open_log(self.dir)
        self.seq = dict.fromkeys(PIDS, 0)
        self.pending: dict[int, list[tuple[int, bytes, bytes]]] = {}  # open txn records per pid
        self.committed: list[tuple[int, bytes, bytes]] = []  # (offset, key, value)
        self.n = 0

    @rule(pid=st.sampled_from([-1, *PIDS]), key=st.sampled_from(KEYS), transactional=st.booleans())
    def data(self, pid: int, key: bytes, transactional: bool) -> None:
        transactional = transactional and pid >= 0
        if pid >= 0 and pid in self.pending and not transactional:
            return  # refused with InvalidTxnState; test_txn_partition covers that
        self.n += 1
        value = b"v%d" % self.n
        offset = put(
            plog=self.plog, key=key, value=value, pid=pid, seq=self.seq.get(pid, -1), txn=transactional
        )
        if pid >= 0:
            self.seq[pid] += 1
        if transactional:
            self.pending.setdefault(pid, []).append((offset, key, value))
        else:
            self.committed.append((offset, key, value))

    @rule(pid=st.sampled_from(PIDS), commit=st.booleans())
    def marker(self, pid: int, commit: bool) -> None:
        self.plog.append_marker(pid, 0, commit, 0)
        records = self.pending.pop(pid, [])
        if commit:
            self.committed += records

    @rule(past_horizon=st.booleans())
    def compact(self, past_horizon: bool) -> None:
        compact(self.plog, PAST_HORIZON if past_horizon else BEFORE_HORIZON)

    @rule()
    def kill_and_reopen(self) -> None:
        self.plog.close_for_delete()
        self.plog = open_log(self.dir)

    @invariant()
    def read_committed_sees_the_latest_committed_values(self) -> None:
        stable = self.plog.last_stable_offset
        assert stable == min((r[0][0] for r in self.pending.values() if r), default=self.plog.next_offset)
        expected: dict[bytes, bytes] = {}
        for offset, key, value in sorted(self.committed):
            if offset < stable:
                expected[key] = value
        assert committed_view(self.plog) == expected

    def teardown(self) -> None:
        self.plog.close()
        shutil.rmtree(self.dir, ignore_errors=True)


TestCleanMachine = CleanMachine.TestCase
TestCleanMachine.settings = settings(max_examples=40, stateful_step_count=40, deadline=None)
