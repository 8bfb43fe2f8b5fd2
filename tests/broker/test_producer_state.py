"""Idempotent producer bookkeeping: sequence checks, duplicates, fencing, snapshots."""

from __future__ import annotations

import orjson
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from broker.storage.producer_state import (
    RETAINED_BATCHES,
    SEQ_MODULUS,
    BatchRecord,
    ProducerStateTable,
    SeqCheck,
)

PID = 1000


def last_seq(first: int, count: int) -> int:
    return (first + count - 1) % SEQ_MODULUS


class Producer:
    """Appends batches to a table the way PartitionLog does: check, then record when OK."""

    def __init__(
        self, table: ProducerStateTable, pid: int = PID, epoch: int = 0, seq: int = 0, offset: int = 0
    ) -> None:
        self.table, self.pid, self.epoch, self.seq, self.offset = table, pid, epoch, seq, offset
        self.sent: list[BatchRecord] = []

    def send(self, count: int, ts: int = 100) -> BatchRecord:
        first, last = self.seq, last_seq(self.seq, count)
        verdict, earlier = self.table.check(self.pid, self.epoch, first, last)
        assert (verdict, earlier) == (SeqCheck.OK, None)
        b = BatchRecord(first, last, self.offset, self.offset + count - 1, ts)
        self.table.record(self.pid, self.epoch, first, last, b.base_offset, b.last_offset, ts)
        self.sent.append(b)
        self.seq = (last + 1) % SEQ_MODULUS
        self.offset += count
        return b


def test_unknown_pid_is_accepted_at_any_sequence() -> None:
    table = ProducerStateTable()
    for first in (0, 1, 17, 2**31 - 1):
        assert table.check(PID, 0, first, first) == (SeqCheck.OK, None)
        assert table.check(PID, 5, first, first) == (SeqCheck.OK, None)
    table.record(PID, 0, 0, 0, 0, 0, 1)
    # another producer is still unknown
    assert table.check(PID + 1, 0, 42, 50) == (SeqCheck.OK, None)


def test_unknown_pid_starting_mid_sequence_then_continues() -> None:
    table = ProducerStateTable()
    Producer(table, seq=500).send(3)
    assert table.check(PID, 0, 503, 503) == (SeqCheck.OK, None)
    assert table.check(PID, 0, 504, 504)[0] is SeqCheck.OUT_OF_ORDER
    assert table.check(PID, 0, 0, 0)[0] is SeqCheck.OUT_OF_ORDER


def test_in_order_batches_are_accepted() -> None:
    table = ProducerStateTable()
    p = Producer(table)
    for count in (1, 5, 2, 10, 1, 1, 3):
        p.send(count)
    assert table.producers[PID].last_seq == p.seq - 1
    assert table.producers[PID].epoch == 0
    assert len(table.producers[PID].batches) == RETAINED_BATCHES


def test_duplicates_of_the_last_five_batches_return_their_offsets() -> None:
    table = ProducerStateTable()
    p = Producer(table)
    for count in (2, 1, 3, 4, 1, 2, 5):
        p.send(count)
    for b in p.sent[-RETAINED_BATCHES:]:
        verdict, earlier = table.check(PID, 0, b.first_seq, b.last_seq)
        assert verdict is SeqCheck.DUPLICATE
        assert earlier is not None
        assert (earlier.base_offset, earlier.last_offset) == (b.base_offset, b.last_offset)
        assert (earlier.first_seq, earlier.last_seq) == (b.first_seq, b.last_seq)


def test_older_duplicates_beyond_five_are_out_of_order() -> None:
    table = ProducerStateTable()
    p = Producer(table)
    for _ in range(RETAINED_BATCHES + 3):
        p.send(2)
    for b in p.sent[:-RETAINED_BATCHES]:
        assert table.check(PID, 0, b.first_seq, b.last_seq) == (SeqCheck.OUT_OF_ORDER, None)


def test_a_retry_with_a_different_batch_boundary_is_not_a_duplicate() -> None:
    table = ProducerStateTable()
    p = Producer(table)
    b = p.send(4)
    p.send(1)
    assert table.check(PID, 0, b.first_seq, b.last_seq - 1)[0] is SeqCheck.OUT_OF_ORDER


def test_gap_is_out_of_order() -> None:
    table = ProducerStateTable()
    p = Producer(table)
    p.send(3)  # seqs 0..2
    assert table.check(PID, 0, 4, 4) == (SeqCheck.OUT_OF_ORDER, None)
    assert table.check(PID, 0, 1000, 1001) == (SeqCheck.OUT_OF_ORDER, None)
    assert table.check(PID, 0, 2, 3) == (SeqCheck.OUT_OF_ORDER, None)  # overlaps, not a duplicate
    assert table.check(PID, 0, 3, 3) == (SeqCheck.OK, None)


def test_older_epoch_is_fenced() -> None:
    table = ProducerStateTable()
    Producer(table, epoch=5).send(2)
    assert table.check(PID, 4, 2, 2) == (SeqCheck.FENCED, None)
    assert table.check(PID, 0, 0, 0) == (SeqCheck.FENCED, None)
    # even a retry of a batch the partition has, under an older epoch
    assert table.check(PID, 4, 0, 1) == (SeqCheck.FENCED, None)


def test_new_epoch_must_start_at_zero() -> None:
    table = ProducerStateTable()
    p = Producer(table, epoch=0)
    p.send(5)
    assert table.check(PID, 1, 5, 5) == (SeqCheck.OUT_OF_ORDER, None)
    assert table.check(PID, 1, 1, 1) == (SeqCheck.OUT_OF_ORDER, None)
    assert table.check(PID, 1, 0, 2) == (SeqCheck.OK, None)
    table.record(PID, 1, 0, 2, 5, 7, 200)
    entry = table.producers[PID]
    assert entry.epoch == 1
    assert [(b.first_seq, b.last_seq) for b in entry.batches] == [(0, 2)]  # old epoch's batches gone
    assert table.check(PID, 0, 5, 5) == (SeqCheck.FENCED, None)
    assert table.check(PID, 1, 3, 3) == (SeqCheck.OK, None)
    assert table.check(PID, 1, 0, 2)[0] is SeqCheck.DUPLICATE


def test_sequence_wraps_at_2_pow_31() -> None:
    table = ProducerStateTable()
    p = Producer(table, seq=SEQ_MODULUS - 3)
    p.send(3)  # SEQ_MODULUS-3 .. SEQ_MODULUS-1
    assert table.producers[PID].last_seq == SEQ_MODULUS - 1
    assert table.check(PID, 0, 0, 1) == (SeqCheck.OK, None)
    assert table.check(PID, 0, SEQ_MODULUS, SEQ_MODULUS)[0] is SeqCheck.OUT_OF_ORDER
    b = p.send(2)  # 0, 1
    assert (b.first_seq, b.last_seq) == (0, 1)
    assert table.check(PID, 0, 2, 2) == (SeqCheck.OK, None)


def test_batch_spanning_the_wrap() -> None:
    table = ProducerStateTable()
    p = Producer(table, seq=SEQ_MODULUS - 2)
    b = p.send(4)  # MAX-1, MAX, 0, 1
    assert (b.first_seq, b.last_seq) == (SEQ_MODULUS - 2, 1)
    assert table.check(PID, 0, 2, 2) == (SeqCheck.OK, None)
    verdict, earlier = table.check(PID, 0, SEQ_MODULUS - 2, 1)
    assert verdict is SeqCheck.DUPLICATE and earlier == b


def test_producers_are_independent() -> None:
    table = ProducerStateTable()
    a = Producer(table, pid=1)
    b = Producer(table, pid=2, epoch=3, offset=100)
    a.send(2)
    b.send(1)
    a.send(1)
    assert table.check(1, 0, 3, 3) == (SeqCheck.OK, None)
    assert table.check(2, 3, 1, 1) == (SeqCheck.OK, None)
    assert table.check(2, 2, 1, 1)[0] is SeqCheck.FENCED
    assert table.check(1, 0, 0, 1)[1] == a.sent[0]


def test_json_round_trip() -> None:
    table = ProducerStateTable()
    p1 = Producer(table, pid=1, epoch=2)
    for i in range(RETAINED_BATCHES + 2):
        p1.send(i + 1, ts=1000 + i)
    p2 = Producer(table, pid=2**40, epoch=0, seq=SEQ_MODULUS - 1, offset=500)
    p2.send(2, ts=7)
    data = orjson.loads(orjson.dumps(table.to_json()))  # as written to and read from a snapshot
    copy = ProducerStateTable.from_json(data)
    assert copy.to_json() == table.to_json()
    assert set(copy.producers) == {1, 2**40}
    for pid, entry in table.producers.items():
        other = copy.producers[pid]
        assert other.epoch == entry.epoch
        assert other.last_timestamp == entry.last_timestamp
        assert list(other.batches) == list(entry.batches)
        assert other.batches.maxlen == RETAINED_BATCHES
    # the copy answers exactly like the original
    for b in p1.sent:
        assert copy.check(1, 2, b.first_seq, b.last_seq) == table.check(1, 2, b.first_seq, b.last_seq)
    assert copy.check(1, 2, p1.seq, p1.seq) == (SeqCheck.OK, None)
    assert copy.check(2**40, 0, 1, 1) == (SeqCheck.OK, None)
    # and keeps retaining only five batches
    copy.record(1, 2, p1.seq, p1.seq, 999, 999, 2000)
    assert len(copy.producers[1].batches) == RETAINED_BATCHES


def test_empty_table_round_trip() -> None:
    assert ProducerStateTable.from_json(ProducerStateTable().to_json()).producers == {}


def test_truncate_forgets_batches_at_or_after_the_cut() -> None:
    table = ProducerStateTable()
    p = Producer(table)
    for _ in range(3):
        p.send(2)  # offsets 0-1, 2-3, 4-5
    table.truncate(4)
    assert [b.base_offset for b in table.producers[PID].batches] == [0, 2]
    assert table.check(PID, 0, 4, 5) == (SeqCheck.OK, None)  # the cut batch may be re-sent
    table.truncate(0)
    assert PID not in table.producers


def test_expire_forgets_idle_producers() -> None:
    table = ProducerStateTable()
    Producer(table, pid=1).send(1, ts=100)
    Producer(table, pid=2).send(1, ts=500)
    assert table.expire(300) == 1
    assert set(table.producers) == {2}


# -- a model-based state test --------------------------------------------------------


class ProducerTableMachine(RuleBasedStateMachine):
    """One producer sending batches, retrying old ones and bumping its epoch, against a model."""

    @initialize(start=st.sampled_from([0, 7, SEQ_MODULUS - 5]))
    def setup(self, start: int) -> None:
        self.table = ProducerStateTable()
        self.epoch = 0
        self.next_seq = start
        self.offset = 0
        self.history: list[tuple[int, int, int, int, int]] = []  # epoch, first, last, base, last offset

    def _append(self, first: int, count: int) -> None:
        last = last_seq(first, count)
        assert self.table.check(PID, self.epoch, first, last) == (SeqCheck.OK, None)
        self.table.record(PID, self.epoch, first, last, self.offset, self.offset + count - 1, 0)
        self.history.append((self.epoch, first, last, self.offset, self.offset + count - 1))
        self.offset += count
        self.next_seq = (last + 1) % SEQ_MODULUS

    @rule(count=st.integers(1, 4))
    def send(self, count: int) -> None:
        self._append(self.next_seq, count)

    @precondition(lambda self: bool(self.history))
    @rule(back=st.integers(1, 8))
    def retry(self, back: int) -> None:
        this_epoch = [h for h in self.history if h[0] == self.epoch]
        if not this_epoch:
            return
        _, first, last, base, last_off = this_epoch[-min(back, len(this_epoch))]
        verdict, earlier = self.table.check(PID, self.epoch, first, last)
        if min(back, len(this_epoch)) <= RETAINED_BATCHES:
            assert verdict is SeqCheck.DUPLICATE
            assert earlier is not None and (earlier.base_offset, earlier.last_offset) == (base, last_off)
        else:
            assert (verdict, earlier) == (SeqCheck.OUT_OF_ORDER, None)

    @rule(skip=st.integers(1, 3))
    def gap(self, skip: int) -> None:
        if self.history:
            first = (self.next_seq + skip) % SEQ_MODULUS
            assert self.table.check(PID, self.epoch, first, first)[0] is SeqCheck.OUT_OF_ORDER

    @rule(count=st.integers(1, 3))
    def bump_epoch(self, count: int) -> None:
        if self.history:
            assert self.table.check(PID, self.epoch + 1, 1, 1)[0] is SeqCheck.OUT_OF_ORDER
        self.epoch += 1
        self._append(0, count)

    @precondition(lambda self: self.epoch > 0)
    @rule()
    def zombie(self) -> None:
        assert self.table.check(PID, self.epoch - 1, self.next_seq, self.next_seq)[0] is SeqCheck.FENCED

    @rule()
    def snapshot_and_restore(self) -> None:
        self.table = ProducerStateTable.from_json(orjson.loads(orjson.dumps(self.table.to_json())))

    @invariant()
    def next_in_order_is_accepted(self) -> None:
        if self.history:
            assert self.table.check(PID, self.epoch, self.next_seq, self.next_seq) == (SeqCheck.OK, None)


TestProducerTableMachine = ProducerTableMachine.TestCase
TestProducerTableMachine.settings = settings(max_examples=50, stateful_step_count=30, deadline=None)
