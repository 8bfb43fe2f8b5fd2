"""Random interleavings of producers' transactional batches, plain batches and markers,
checked against a plain model of what Kafka promises: the last stable offset, the open
transactions, and which aborted transactions a fetch of any range must report.

Two levels: the pure bookkeeping (``ProducerStateTable`` + ``AbortedTxnIndex``) with many
examples, and a real ``PartitionLog`` on disk that is also killed and reopened midway.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from broker.config import load_config
from broker.storage.batch import TRANSACTIONAL, validate_produced
from broker.storage.log import InvalidTxnState, PartitionLog
from broker.storage.producer_state import ProducerStateTable
from broker.storage.records import Record, build_batch
from broker.storage.txn_index import AbortedTxn, AbortedTxnIndex
from broker.topic_config import effective

PIDS = (100, 200, 300)
T0 = 1_700_000_000_000


@dataclass
class Model:
    """Offsets and transactions as Kafka defines them, computed the obvious way."""

    next_offset: int = 0
    open: dict[int, int] = field(default_factory=dict)  # pid -> first offset
    aborted: list[tuple[int, int, int]] = field(default_factory=list)  # pid, first, marker

    def data(self, pid: int, count: int, transactional: bool) -> bool:
        """False when the batch must be refused (plain batch inside an open transaction)."""
        if pid in self.open and not transactional:
            return False
        if transactional and pid not in self.open:
            self.open[pid] = self.next_offset
        self.next_offset += count
        return True

    def marker(self, pid: int, commit: bool) -> None:
        first = self.open.pop(pid, None)
        if first is not None and not commit:
            self.aborted.append((pid, first, self.next_offset))
        self.next_offset += 1

    @property
    def lso(self) -> int:
        return min(self.open.values(), default=self.next_offset)

    def overlapping(self, start: int, end: int) -> list[tuple[int, int]]:
        return [(pid, first) for pid, first, last in self.aborted if last >= start and first < end]


Op = tuple[str, int, int, bool]  # kind, pid, count, transactional-or-commit

ops = st.lists(
    st.one_of(
        st.tuples(st.just("data"), st.sampled_from(PIDS), st.integers(1, 3), st.booleans()),
        st.tuples(st.just("marker"), st.sampled_from(PIDS), st.just(1), st.booleans()),
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(ops)
def test_bookkeeping_matches_the_model(script: list[Op]) -> None:
    model = Model()
    table = ProducerStateTable()
    index = AbortedTxnIndex()
    offset = 0
    for kind, pid, count, flag in script:
        if kind == "data":
            if pid in table.open_txns and not flag:
                assert not model.data(pid, count, flag)
                continue
            assert model.data(pid, count, flag)
            table.record(pid, 0, -1, -1, offset, offset + count - 1, T0, transactional=flag)
            offset += count
        else:
            model.marker(pid, flag)
            first = table.end_txn(pid, 0, 0, offset, T0)
            if first >= 0 and not flag:
                unstable = table.first_unstable_offset()
                index.append(AbortedTxn(pid, first, offset, unstable if unstable >= 0 else offset + 1))
            offset += 1
        assert table.open_txns == model.open
        unstable = table.first_unstable_offset()
        assert (unstable if unstable >= 0 else offset) == model.lso
    for start in range(offset + 1):
        for end in range(start, offset + 2):
            assert index.collect(start, end) == model.overlapping(start, end), (start, end)


class LogMachine(RuleBasedStateMachine):
    """A real partition log, small segments (rolls, snapshots), killed and reopened at random."""

    def __init__(self) -> None:
        super().__init__()
        self.dir = tempfile.mkdtemp(prefix="txn-model-")
        self.config = effective(load_config({}), {"segment.bytes": "400"})
        self.plog = self._open()
        self.model = Model()
        self.seq = dict.fromkeys(PIDS, 0)

    def _open(self) -> PartitionLog:
        return PartitionLog(self.dir, "model", 0, self.config, clock_ms=lambda: T0)

    @rule(pid=st.sampled_from(PIDS), count=st.integers(1, 3), transactional=st.booleans())
    def data(self, pid: int, count: int, transactional: bool) -> None:
        recs = [Record(i, 0, b"k%d" % i, b"v") for i in range(count)]
        raw = build_batch(
            0,
            recs,
            base_timestamp=T0,
            attributes=TRANSACTIONAL if transactional else 0,
            producer_id=pid,
            producer_epoch=0,
            base_sequence=self.seq[pid],
        )
        expected_ok = self.model.data(pid, count, transactional)
        try:
            result = self.plog.append(raw, validate_produced(raw, 1 << 20), now_ms=T0)
        except InvalidTxnState:
            assert not expected_ok
            return
        assert expected_ok
        assert result.base_offset == self.model.next_offset - count
        self.seq[pid] += count

    @rule(pid=st.sampled_from(PIDS), commit=st.booleans())
    def marker(self, pid: int, commit: bool) -> None:
        assert self.plog.append_marker(pid, 0, commit, 0, now_ms=T0) == self.model.next_offset
        self.model.marker(pid, commit)

    @rule(clean=st.booleans())
    def reopen(self, clean: bool) -> None:
        if clean:
            self.plog.close()
        else:
            self.plog.close_for_delete()  # a kill: no flush, no snapshot of the end
        self.plog = self._open()

    @invariant()
    def matches_the_model(self) -> None:
        assert self.plog.next_offset == self.model.next_offset
        assert self.plog.open_transactions() == self.model.open
        assert self.plog.last_stable_offset == self.model.lso
        end = self.model.next_offset
        for start in range(0, end + 1, 3):
            assert self.plog.aborted_transactions(start, end + 1) == self.model.overlapping(start, end + 1)
            assert self.plog.aborted_transactions(start, start + 2) == self.model.overlapping(
                start, start + 2
            )

    def teardown(self) -> None:
        self.plog.close()
        shutil.rmtree(self.dir, ignore_errors=True)


TestLogMachine = LogMachine.TestCase
TestLogMachine.settings = settings(max_examples=40, stateful_step_count=40, deadline=None)
