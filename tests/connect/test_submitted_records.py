"""Tests of connect.runtime.submitted_records: which source offsets may be committed.

Kafka's rule (``SubmittedRecords``): acknowledgements arrive in any order, but the offset
committed for a source partition is that of the last record of the unbroken run of
acknowledged records at the head of that partition's queue; an unacknowledged record
holds back every record submitted after it in the same partition, and only that partition.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from connect.api.task import partition_key
from connect.runtime.submitted_records import CommittableOffsets, SubmittedRecord, SubmittedRecords

A = {"filename": "a.txt"}
B = {"filename": "b.txt"}


def offsets_of(c: CommittableOffsets) -> dict[Any, Any]:
    return {key: offset for key, (_partition, offset) in c.offsets.items()}


# -- examples ------------------------------------------------------------------------------------


def test_nothing_submitted_is_empty() -> None:
    s = SubmittedRecords()
    c = s.committable()
    assert c.is_empty()
    assert c.offsets == {}
    assert (c.records, c.pending) == (0, 0)
    assert s.pending == 0
    assert len(s) == 0


def test_unacknowledged_records_commit_nothing() -> None:
    s = SubmittedRecords()
    s.submit(A, {"position": 1})
    s.submit(A, {"position": 2})
    c = s.committable()
    assert c.is_empty()
    assert c.records == 0
    assert c.pending == 2
    assert len(s) == 2


def test_in_order_acks_commit_the_last_offset_with_its_partition() -> None:
    s = SubmittedRecords()
    records = [s.submit(A, {"position": n}) for n in (1, 2, 3)]
    for r in records:
        r.ack()
    c = s.committable()
    assert c.offsets == {partition_key(A): (A, {"position": 3})}
    assert c.records == 3
    assert c.pending == 0
    assert len(s) == 0
    # What was returned is removed: asking again gives nothing.
    again = s.committable()
    assert again.is_empty()
    assert again.records == 0


def test_an_unacked_record_holds_back_the_records_after_it() -> None:
    s = SubmittedRecords()
    r1 = s.submit(A, {"position": 1})
    r2 = s.submit(A, {"position": 2})
    r3 = s.submit(A, {"position": 3})
    r2.ack()
    r3.ack()
    c = s.committable()
    assert c.is_empty(), "position 3 must not be committed while position 1 is unacknowledged"
    assert c.pending == 1
    assert len(s) == 3
    r1.ack()
    c = s.committable()
    assert offsets_of(c) == {partition_key(A): {"position": 3}}
    assert c.records == 3
    assert c.pending == 0


def test_prefix_only_up_to_the_first_gap() -> None:
    s = SubmittedRecords()
    r1 = s.submit(A, {"position": 1})
    r2 = s.submit(A, {"position": 2})
    s.submit(A, {"position": 3})
    r4 = s.submit(A, {"position": 4})
    for r in (r4, r2, r1):
        r.ack()
    c = s.committable()
    assert offsets_of(c) == {partition_key(A): {"position": 2}}
    assert c.records == 2
    assert c.pending == 1
    assert len(s) == 2  # position 3 (unacked) and 4 (acked, behind it) are still tracked


def test_partitions_are_independent() -> None:
    s = SubmittedRecords()
    a1 = s.submit(A, {"position": 1})
    b1 = s.submit(B, {"position": 10})
    b2 = s.submit(B, {"position": 20})
    b1.ack()
    b2.ack()
    c = s.committable()
    assert c.offsets == {partition_key(B): (B, {"position": 20})}
    assert c.pending == 1
    a1.ack()
    c = s.committable()
    assert c.offsets == {partition_key(A): (A, {"position": 1})}
    assert c.pending == 0


def test_partition_maps_with_the_same_content_share_a_queue() -> None:
    s = SubmittedRecords()
    first = s.submit({"db": "x", "table": "t"}, {"id": 1})
    s.submit({"table": "t", "db": "x"}, {"id": 2})  # same partition, other key order
    first.ack()
    c = s.committable()
    assert offsets_of(c) == {partition_key({"db": "x", "table": "t"}): {"id": 1}}
    assert c.pending == 1


def test_records_without_partition_or_offset_only_count_as_pending() -> None:
    s = SubmittedRecords()
    none_partition = s.submit(None, {"position": 1})
    no_offset = s.submit(A, None)
    assert s.pending == 2
    c = s.committable()
    assert c.is_empty()
    assert c.pending == 2
    none_partition.ack()
    no_offset.ack()
    c = s.committable()
    assert c.is_empty(), "a record without a partition or offset has no offset to commit"
    assert c.records == 2
    assert c.pending == 0
    assert len(s) == 0


def test_offsetless_record_does_not_hide_an_earlier_offset_of_the_prefix() -> None:
    s = SubmittedRecords()
    r1 = s.submit(A, {"position": 1})
    r2 = s.submit(A, None)
    r1.ack()
    r2.ack()
    c = s.committable()
    assert offsets_of(c) == {partition_key(A): {"position": 1}}
    assert c.records == 2


def test_offsetless_unacked_record_still_holds_back_later_offsets() -> None:
    s = SubmittedRecords()
    r1 = s.submit(A, {"position": 1})
    s.submit(A, None)
    r3 = s.submit(A, {"position": 3})
    r1.ack()
    r3.ack()
    c = s.committable()
    assert offsets_of(c) == {partition_key(A): {"position": 1}}
    assert c.pending == 1


def test_ack_is_idempotent() -> None:
    s = SubmittedRecords()
    r = s.submit(A, {"position": 1})
    s.submit(A, {"position": 2})
    r.ack()
    r.ack()
    assert s.pending == 1
    assert r.acked
    c = s.committable()
    assert c.pending == 1
    assert c.records == 1


def test_submit_returns_the_tracked_record() -> None:
    s = SubmittedRecords()
    r = s.submit(A, {"position": 7})
    assert isinstance(r, SubmittedRecord)
    assert r.partition == partition_key(A)
    assert r.source_partition == A
    assert r.offset == {"position": 7}
    assert not r.acked


def test_pending_counts_acks_before_committable_is_called() -> None:
    s = SubmittedRecords()
    records = [s.submit(A, {"position": n}) for n in range(5)]
    assert s.pending == 5
    records[3].ack()
    assert s.pending == 4
    records[0].ack()
    assert s.pending == 3
    assert len(s) == 5  # nothing removed until committable()


# -- property: random submits and random ack order ------------------------------------------------

PARTITIONS: list[dict[str, Any] | None] = [{"file": "a"}, {"file": "b"}, {"file": "c", "shard": 1}, None]


class SubmittedRecordsMachine(RuleBasedStateMachine):
    """The model keeps, per partition, the queue of (sequence number, has offset, acked)."""

    def __init__(self) -> None:
        super().__init__()
        self.sut = SubmittedRecords()
        self.queues: dict[Any, list[list[Any]]] = {}  # key -> [[seq, offset, acked, handle]]
        self.unacked: list[tuple[Any, int]] = []  # (key, seq) of records not yet acked
        self.seq = 0
        self.committed: dict[Any, int] = {}  # key -> last committed seq

    @initialize()
    def start(self) -> None:
        assert self.sut.pending == 0

    @rule(which=st.integers(0, len(PARTITIONS) - 1), with_offset=st.booleans())
    def submit(self, which: int, with_offset: bool) -> None:
        self.seq += 1
        partition = PARTITIONS[which]
        offset = {"seq": self.seq} if with_offset else None
        handle = self.sut.submit(partition, offset)
        key = partition_key(partition) if partition is not None else None
        self.queues.setdefault(key, []).append([self.seq, offset, False, handle])
        self.unacked.append((key, self.seq))

    @precondition(lambda self: bool(self.unacked))
    @rule(data=st.data())
    def ack(self, data: st.DataObject) -> None:
        index = data.draw(st.integers(0, len(self.unacked) - 1))
        key, seq = self.unacked.pop(index)
        entry = next(e for e in self.queues[key] if e[0] == seq)
        entry[2] = True
        entry[3].ack()

    @precondition(lambda self: any(q for q in self.queues.values()))
    @rule(data=st.data())
    def ack_again(self, data: st.DataObject) -> None:
        """Acknowledging an already acknowledged record changes nothing."""
        acked = [e for q in self.queues.values() for e in q if e[2]]
        if acked:
            data.draw(st.sampled_from(acked))[3].ack()

    @rule()
    def committable(self) -> None:
        before_pending = len(self.unacked)
        result = self.sut.committable()
        expected: dict[Any, dict[str, int]] = {}
        covered = 0
        for key, queue in self.queues.items():
            last = None
            while queue and queue[0][2]:
                entry = queue.pop(0)
                covered += 1
                if entry[1] is not None:
                    last = entry
            if last is not None and key is not None:
                expected[key] = last[1]
        assert offsets_of(result) == expected
        assert result.records == covered
        assert result.pending == before_pending
        assert result.is_empty() == (not expected)
        for key, (partition, offset) in result.offsets.items():
            assert partition_key(partition) == key
            seq = offset["seq"]
            # Never beyond an unacknowledged record of the same partition...
            assert all(s > seq for k, s in self.unacked if k == key)
            # ...and committed offsets of a partition only move forward.
            assert seq > self.committed.get(key, 0)
            self.committed[key] = seq

    @invariant()
    def counts(self) -> None:
        assert self.sut.pending == len(self.unacked)
        assert len(self.sut) == sum(len(q) for q in self.queues.values())


SubmittedRecordsMachine.TestCase.settings = settings(
    max_examples=150, stateful_step_count=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
TestSubmittedRecordsMachine = SubmittedRecordsMachine.TestCase


@pytest.mark.parametrize("seed", range(5))
def test_every_record_is_eventually_committable_whatever_the_ack_order(seed: int) -> None:
    rng = random.Random(seed)
    s = SubmittedRecords()
    handles = []
    last: dict[Any, int] = {}
    for n in range(200):
        p = rng.choice([A, B])
        handles.append(s.submit(p, {"n": n}))
        last[partition_key(p)] = n
    rng.shuffle(handles)
    got: dict[Any, int] = {}
    for i, h in enumerate(handles):
        h.ack()
        if i % 17 == 0:
            for key, (_p, offset) in s.committable().offsets.items():
                assert offset["n"] > got.get(key, -1)
                got[key] = offset["n"]
    for key, (_p, offset) in s.committable().offsets.items():
        got[key] = offset["n"]
    assert got == last
    assert s.pending == 0
    assert len(s) == 0
