"""The transaction coordinator's pure state machine under random request sequences
(hypothesis), and its ``__transaction_state`` records in Kafka's format."""

from __future__ import annotations

import itertools
import struct
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st
from kio.schema.errors import ErrorCode

from broker.transactions import records
from broker.transactions import state as sm
from broker.transactions.state import TxnMetadata, TxnState

MAX_TIMEOUT = 900_000
PARTITIONS = [("t", 0), ("t", 1), ("u", 0), ("__consumer_offsets", 7)]


@dataclass
class Client:
    """A producer instance as a client library holds it: the pid/epoch it was given."""

    pid: int
    epoch: int


op = st.one_of(
    st.tuples(st.just("init"), st.integers(-1, 3), st.booleans()),
    st.tuples(
        st.just("add"), st.integers(0, 3), st.sets(st.sampled_from(PARTITIONS), min_size=1, max_size=3)
    ),
    st.tuples(st.just("end"), st.integers(0, 3), st.booleans()),
    st.tuples(st.just("tick"), st.integers(0, 70_000)),
    st.tuples(st.just("verify"), st.integers(0, 3), st.sampled_from(PARTITIONS)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(op, max_size=40), st.integers(1, 60_000), st.booleans())
def test_random_request_sequences_keep_the_invariants(
    ops: list[tuple], timeout: int, near_exhaustion: bool
) -> None:
    pids = itertools.count(1000)
    meta: TxnMetadata | None = None
    if near_exhaustion:
        # Start a few bumps before the epoch runs out, so the new-pid path is exercised.
        meta = TxnMetadata("tx", next(pids), sm.MAX_EPOCH - 3, timeout, TxnState.EMPTY, frozenset(), -1, 0)
    clients: list[Client] = []
    now = 0
    seen_pids: set[int] = {meta.producer_id} if meta else set()

    def adopt(outcome: sm.Outcome) -> None:
        nonlocal meta
        new = outcome.write
        if new is None:
            return
        old = meta
        assert new.transactional_id == "tx"
        if old is not None:
            assert sm.can_follow(new.state, old.state), (old.state, new.state)
            if new.producer_id == old.producer_id:
                assert new.producer_epoch >= old.producer_epoch, "epochs never go back"
            else:
                assert new.producer_id not in seen_pids, "a new producer id is fresh"
                assert new.producer_epoch == 0
        seen_pids.add(new.producer_id)
        assert 0 <= new.producer_epoch <= sm.MAX_EPOCH
        if new.state == TxnState.EMPTY:
            assert not new.partitions and new.start_ms == -1
        if new.state == TxnState.ONGOING:
            assert new.partitions and new.start_ms >= 0
        meta = new
        if new.state in sm.PREPARE:
            # The coordinator writes the markers, then logs the completion.
            done = sm.complete(new, now)
            assert sm.can_follow(done.state, new.state)
            assert done.partitions == new.partitions and done.producer_epoch == new.producer_epoch
            meta = done

    for item in ops:
        kind = item[0]
        before = meta
        if kind == "init":
            _, which, expect = item
            c = clients[which] if 0 <= which < len(clients) else None
            out = sm.init_producer_id(
                meta,
                "tx",
                timeout,
                MAX_TIMEOUT,
                now,
                lambda: next(pids),
                c.pid if (c and expect) else -1,
                c.epoch if (c and expect) else -1,
            )
            adopt(out)
            if out.error == ErrorCode.none:
                assert meta is not None and meta.state == TxnState.EMPTY
                assert (out.producer_id, out.producer_epoch) == (meta.producer_id, meta.producer_epoch)
                if c is not None and expect:
                    c.pid, c.epoch = out.producer_id, out.producer_epoch
                else:
                    clients.append(Client(out.producer_id, out.producer_epoch))
            elif out.error == ErrorCode.concurrent_transactions:
                # An open transaction of the previous instance is fenced and aborted first.
                assert before is not None and before.state == TxnState.ONGOING
                assert meta is not None and meta.state == TxnState.COMPLETE_ABORT
                assert meta.producer_epoch > before.producer_epoch or before.producer_epoch == sm.MAX_EPOCH
            else:
                assert out.error == ErrorCode.producer_fenced and out.write is None
        elif kind in ("add", "end", "verify"):
            which = item[1]
            if which >= len(clients):
                continue
            c = clients[which]
            current = meta is not None and (c.pid, c.epoch) == (meta.producer_id, meta.producer_epoch)
            if kind == "add":
                out = sm.add_partitions(meta, c.pid, c.epoch, item[2], now)
            elif kind == "end":
                out = sm.end_txn(meta, c.pid, c.epoch, item[2], now)
            else:
                error = sm.verify_partition(meta, c.pid, c.epoch, item[2])
                assert (error == ErrorCode.none) == (
                    current
                    and meta is not None
                    and meta.state == TxnState.ONGOING
                    and item[2] in meta.partitions
                )
                continue
            if not current:
                # A fenced (or superseded) producer never changes anything.
                assert out.write is None
                assert out.error in (ErrorCode.producer_fenced, ErrorCode.invalid_producer_id_mapping)
                continue
            adopt(out)
            assert meta is not None
            if kind == "add" and out.error == ErrorCode.none:
                assert meta.state == TxnState.ONGOING and set(item[2]) <= meta.partitions
                if before is not None and before.state == TxnState.ONGOING:
                    assert before.partitions <= meta.partitions and meta.start_ms == before.start_ms
            if kind == "end":
                wanted = TxnState.COMPLETE_COMMIT if item[2] else TxnState.COMPLETE_ABORT
                if out.error == ErrorCode.none:
                    assert meta.state == wanted
                else:
                    assert out.error == ErrorCode.invalid_txn_state and out.write is None
        else:
            now += item[1]
            if meta is not None:
                fenced = sm.timed_out(meta, now)
                if fenced is not None:
                    assert meta.state == TxnState.ONGOING and meta.start_ms + meta.timeout_ms <= now
                    adopt(sm.Outcome(ErrorCode.none, fenced))
                    assert meta.state == TxnState.COMPLETE_ABORT
                    assert meta.producer_epoch == before.producer_epoch + 1  # type: ignore[union-attr]


def test_init_producer_id_refuses_bad_input_with_kafkas_codes() -> None:
    alloc = iter(range(10)).__next__
    assert sm.init_producer_id(None, "", 1000, MAX_TIMEOUT, 0, alloc).error == ErrorCode.invalid_request
    for bad in (0, -5, MAX_TIMEOUT + 1):
        out = sm.init_producer_id(None, "tx", bad, MAX_TIMEOUT, 0, alloc)
        assert out.error == ErrorCode.invalid_transaction_timeout and out.write is None


def test_an_exhausted_epoch_moves_to_a_new_producer_id() -> None:
    meta = TxnMetadata("tx", 7, sm.MAX_EPOCH - 1, 1000, TxnState.COMPLETE_COMMIT, frozenset(), 5, 9)
    out = sm.init_producer_id(meta, "tx", 1000, MAX_TIMEOUT, 10, lambda: 8)
    assert (out.error, out.producer_id, out.producer_epoch) == (ErrorCode.none, 8, 0)


def test_end_txn_answers_retries_by_state() -> None:
    ongoing = TxnMetadata("tx", 7, 3, 1000, TxnState.ONGOING, frozenset({("t", 0)}), 5, 9)
    committed = sm.complete(sm.end_txn(ongoing, 7, 3, True, 10).write, 11)  # type: ignore[arg-type]
    assert sm.end_txn(committed, 7, 3, True, 12) == sm.Outcome(ErrorCode.none)
    assert sm.end_txn(committed, 7, 3, False, 12).error == ErrorCode.invalid_txn_state
    preparing = sm.end_txn(ongoing, 7, 3, False, 10).write
    assert sm.end_txn(preparing, 7, 3, False, 12).error == ErrorCode.concurrent_transactions
    assert sm.end_txn(preparing, 7, 3, True, 12).error == ErrorCode.invalid_txn_state
    empty = TxnMetadata("tx", 7, 3, 1000, TxnState.EMPTY, frozenset(), -1, 9)
    assert sm.end_txn(empty, 7, 3, True, 12).error == ErrorCode.invalid_txn_state
    assert sm.end_txn(ongoing, 7, 2, True, 12).error == ErrorCode.producer_fenced
    assert sm.end_txn(ongoing, 8, 3, True, 12).error == ErrorCode.invalid_producer_id_mapping
    assert sm.end_txn(None, 7, 3, True, 12).error == ErrorCode.invalid_producer_id_mapping


@given(
    st.text(min_size=1, max_size=30),
    st.integers(0, 2**63 - 1),
    st.integers(0, sm.MAX_EPOCH),
    st.integers(1, 2**31 - 1),
    st.sampled_from([s for s in TxnState if s != TxnState.EMPTY]),
    st.sets(st.tuples(st.text(min_size=1, max_size=10), st.integers(0, 100)), max_size=6),
    st.integers(-1, 2**40),
)
def test_records_round_trip(
    tid: str, pid: int, epoch: int, timeout: int, state: TxnState, parts: set[tuple[str, int]], ts: int
) -> None:
    meta = TxnMetadata(tid, pid, epoch, timeout, state, frozenset(parts), ts, ts + 1)
    assert records.decode_key(records.encode_key(tid)) == tid
    assert records.decode_value(tid, records.encode_value(meta)) == meta


def test_value_bytes_are_kafkas_v0_layout() -> None:
    meta = TxnMetadata("tx", 5, 2, 60000, TxnState.ONGOING, frozenset({("t", 1), ("t", 0)}), 100, 200)
    raw = records.encode_value(meta)
    expected = (
        struct.pack(">hqhib", 0, 5, 2, 60000, 1)
        + struct.pack(">i", 1)
        + struct.pack(">h", 1)
        + b"t"
        + struct.pack(">iii", 2, 0, 1)
        + struct.pack(">qq", 200, 100)
    )
    assert raw == expected
    assert records.encode_key("tx") == struct.pack(">hh", 0, 2) + b"tx"
    empty = TxnMetadata("tx", 5, 3, 60000, TxnState.EMPTY, frozenset(), -1, 300)
    assert records.encode_value(empty)[17:21] == struct.pack(">i", -1)  # null partitions in Empty


def test_partition_is_javas_string_hash() -> None:
    # Java (jshell): "my-txn".hashCode() == -1061187895, "Ünïcode-tx€".hashCode() == 607003109.
    assert records.partition_for("my-txn", 50) == 1061187895 % 50
    assert records.partition_for("Ünïcode-tx€", 50) == 607003109 % 50


def test_kip_360_reinit_retry_versus_zombie() -> None:
    pids = iter(range(100, 200)).__next__
    first = sm.init_producer_id(None, "tx", 1000, MAX_TIMEOUT, 0, pids).write
    assert first is not None and (first.producer_id, first.producer_epoch) == (100, 0)
    # The producer re-initializes naming its pid/epoch; its retry gets the same answer.
    bumped = sm.init_producer_id(first, "tx", 1000, MAX_TIMEOUT, 1, pids, 100, 0).write
    assert bumped is not None and bumped.producer_epoch == 1
    retry = sm.init_producer_id(bumped, "tx", 1000, MAX_TIMEOUT, 2, pids, 100, 0)
    assert (retry.error, retry.write, retry.producer_epoch) == (ErrorCode.none, None, 1)
    # A new instance (no pid/epoch named) takes over: the old one naming its epoch is a zombie.
    taken = sm.init_producer_id(bumped, "tx", 1000, MAX_TIMEOUT, 3, pids).write
    assert taken is not None and taken.producer_epoch == 2
    assert (
        sm.init_producer_id(taken, "tx", 1000, MAX_TIMEOUT, 4, pids, 100, 1).error
        == ErrorCode.producer_fenced
    )
    assert (
        sm.init_producer_id(taken, "tx", 1000, MAX_TIMEOUT, 4, pids, 99, 2).error == ErrorCode.producer_fenced
    )
