"""The transaction coordinator's state machine, free of I/O (Kafka's ``TransactionMetadata``
and the decisions of ``TransactionCoordinator``).

Each function takes a transactional id's current metadata (None: unknown id) and a request,
and returns an ``Outcome``: the error to answer, the metadata to log to
``__transaction_state`` (and adopt once it is logged), and the producer id/epoch to reply
with. A written ``Prepare*`` state means: write markers to ``partitions`` next, then log
``complete(...)``. Nothing here changes anything; the coordinator applies outcomes.

States and the states they may follow (``TransactionState.validPreviousStates``)::

    Empty 0          <- Empty, CompleteCommit, CompleteAbort
    Ongoing 1        <- Ongoing, Empty, CompleteCommit, CompleteAbort
    PrepareCommit 2  <- Ongoing
    PrepareAbort 3   <- Ongoing
    CompleteCommit 4 <- PrepareCommit
    CompleteAbort 5  <- PrepareAbort
    Dead 6           <- Empty, CompleteCommit, CompleteAbort   (expiry: a tombstone)

Kafka's PrepareEpochFence (7) is a pending state that is never logged: here fencing an
Ongoing transaction logs PrepareAbort with the bumped epoch directly, which is what Kafka
logs after it.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from kio.schema.errors import ErrorCode

TopicPartition = tuple[str, int]

# Kafka's ``ProducerIdAndEpoch``/``RecordBatch``: epochs are int16; at Short.MaxValue - 1 an
# id is exhausted and the next InitProducerId hands out a new producer id at epoch 0.
MAX_EPOCH = 32767
NO_PRODUCER_ID = -1
NO_EPOCH = -1


class TxnState(enum.IntEnum):
    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6

    @property
    def kafka_name(self) -> str:
        """The name DescribeTransactions/ListTransactions and kafka-transactions.sh use."""
        return _NAMES[self]


_NAMES = {
    TxnState.EMPTY: "Empty",
    TxnState.ONGOING: "Ongoing",
    TxnState.PREPARE_COMMIT: "PrepareCommit",
    TxnState.PREPARE_ABORT: "PrepareAbort",
    TxnState.COMPLETE_COMMIT: "CompleteCommit",
    TxnState.COMPLETE_ABORT: "CompleteAbort",
    TxnState.DEAD: "Dead",
}

STATE_BY_NAME = {name: state for state, name in _NAMES.items()}

COMPLETE = frozenset({TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT})
PREPARE = frozenset({TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT})

VALID_PREVIOUS: dict[TxnState, frozenset[TxnState]] = {
    TxnState.EMPTY: COMPLETE,
    TxnState.ONGOING: COMPLETE | {TxnState.ONGOING},
    TxnState.PREPARE_COMMIT: frozenset({TxnState.ONGOING}),
    TxnState.PREPARE_ABORT: frozenset({TxnState.ONGOING}),
    TxnState.COMPLETE_COMMIT: frozenset({TxnState.PREPARE_COMMIT}),
    TxnState.COMPLETE_ABORT: frozenset({TxnState.PREPARE_ABORT}),
    TxnState.DEAD: COMPLETE,
}


@dataclass(frozen=True, slots=True)
class TxnMetadata:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TxnState
    partitions: frozenset[TopicPartition]
    start_ms: int  # when the current transaction started (entered Ongoing), -1 if none
    update_ms: int
    # The epoch before the last bump, for InitProducerId retries (Kafka's lastProducerEpoch);
    # not logged, as in Kafka's record v0.
    last_epoch: int = NO_EPOCH


@dataclass(frozen=True, slots=True)
class Outcome:
    error: ErrorCode
    write: TxnMetadata | None = None
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_EPOCH


def can_follow(new: TxnState, old: TxnState) -> bool:
    return old in VALID_PREVIOUS[new]


def is_exhausted(epoch: int) -> bool:
    return epoch >= MAX_EPOCH - 1


def _fenced_epoch(epoch: int) -> int:
    # An exhausted epoch cannot be bumped; the abort then keeps it and the next
    # InitProducerId moves to a new producer id.
    return epoch + 1 if epoch < MAX_EPOCH else epoch


def init_producer_id(
    meta: TxnMetadata | None,
    transactional_id: str,
    timeout_ms: int,
    max_timeout_ms: int,
    now_ms: int,
    allocate_pid: Callable[[], int],
    expected_pid: int = NO_PRODUCER_ID,
    expected_epoch: int = NO_EPOCH,
) -> Outcome:
    """InitProducerId for a transactional id (``handleInitProducerId``)."""
    if not transactional_id:
        return Outcome(ErrorCode.invalid_request)
    if timeout_ms <= 0 or timeout_ms > max_timeout_ms:
        return Outcome(ErrorCode.invalid_transaction_timeout)
    expecting = expected_pid != NO_PRODUCER_ID
    if meta is None or meta.state == TxnState.DEAD:
        # An unknown (or expired) id starts afresh, whatever pid/epoch the producer expects:
        # there is no newer instance it could be a zombie of.
        new = TxnMetadata(
            transactional_id, allocate_pid(), 0, timeout_ms, TxnState.EMPTY, frozenset(), -1, now_ms
        )
        return Outcome(ErrorCode.none, new, new.producer_id, new.producer_epoch)
    # Kafka's isValidProducerId: only the producer id is checked here; the epoch is
    # checked when it is bumped (prepareIncrementProducerEpoch).
    if expecting and expected_pid != meta.producer_id:
        return Outcome(ErrorCode.producer_fenced)
    if meta.state in PREPARE:
        return Outcome(ErrorCode.concurrent_transactions)
    if meta.state == TxnState.ONGOING:
        # A new producer instance with this id: fence the old one (epoch + 1, so its
        # markers fence it at every partition) and abort its transaction; the client
        # retries on CONCURRENT_TRANSACTIONS and then gets the next epoch.
        return Outcome(ErrorCode.concurrent_transactions, _prepare_abort(meta, now_ms, fence=True))
    if not expecting or expected_epoch == meta.producer_epoch:
        if is_exhausted(meta.producer_epoch):
            pid, epoch, last = allocate_pid(), 0, NO_EPOCH
        else:
            # The previous epoch is remembered only for a producer that named it (KIP-360),
            # so a retry of its bump can be told apart from a zombie.
            last = meta.producer_epoch if expecting else NO_EPOCH
            pid, epoch = meta.producer_id, meta.producer_epoch + 1
    elif expected_epoch == meta.last_epoch != NO_EPOCH:
        # A retry of a bump that already happened: answer what it produced.
        return Outcome(ErrorCode.none, None, meta.producer_id, meta.producer_epoch)
    else:
        return Outcome(ErrorCode.producer_fenced)
    new = replace(
        meta,
        producer_id=pid,
        producer_epoch=epoch,
        last_epoch=last,
        timeout_ms=timeout_ms,
        state=TxnState.EMPTY,
        partitions=frozenset(),
        start_ms=-1,
        update_ms=now_ms,
    )
    return Outcome(ErrorCode.none, new, pid, epoch)


def _check_producer(meta: TxnMetadata | None, producer_id: int, producer_epoch: int) -> ErrorCode:
    if meta is None or meta.state == TxnState.DEAD or meta.producer_id != producer_id:
        return ErrorCode.invalid_producer_id_mapping
    if producer_epoch != meta.producer_epoch:
        return ErrorCode.producer_fenced
    return ErrorCode.none


def add_partitions(
    meta: TxnMetadata | None,
    producer_id: int,
    producer_epoch: int,
    partitions: Iterable[TopicPartition],
    now_ms: int,
) -> Outcome:
    """AddPartitionsToTxn/AddOffsetsToTxn (``handleAddPartitionsToTransaction``)."""
    error = _check_producer(meta, producer_id, producer_epoch)
    if error != ErrorCode.none:
        return Outcome(error)
    assert meta is not None
    if meta.state in PREPARE:
        return Outcome(ErrorCode.concurrent_transactions)
    wanted = frozenset(partitions)
    if meta.state == TxnState.ONGOING and wanted <= meta.partitions:
        return Outcome(ErrorCode.none)
    ongoing = meta.state == TxnState.ONGOING
    new = replace(
        meta,
        state=TxnState.ONGOING,
        partitions=(meta.partitions if ongoing else frozenset()) | wanted,
        start_ms=meta.start_ms if ongoing else now_ms,
        update_ms=now_ms,
    )
    return Outcome(ErrorCode.none, new)


def verify_partition(
    meta: TxnMetadata | None, producer_id: int, producer_epoch: int, partition: TopicPartition
) -> ErrorCode:
    """AddPartitionsToTxn verify_only (KIP-890): is ``partition`` in this producer's open
    transaction? A partition that is not gets INVALID_TXN_STATE."""
    error = _check_producer(meta, producer_id, producer_epoch)
    if error != ErrorCode.none:
        return error
    assert meta is not None
    if meta.state != TxnState.ONGOING or partition not in meta.partitions:
        return ErrorCode.invalid_txn_state
    return ErrorCode.none


def end_txn(
    meta: TxnMetadata | None, producer_id: int, producer_epoch: int, commit: bool, now_ms: int
) -> Outcome:
    """EndTxn (``handleEndTransaction``): Ongoing -> Prepare*, retries answered by state."""
    error = _check_producer(meta, producer_id, producer_epoch)
    if error != ErrorCode.none:
        return Outcome(error)
    assert meta is not None
    done, preparing = (
        (TxnState.COMPLETE_COMMIT, TxnState.PREPARE_COMMIT)
        if commit
        else (TxnState.COMPLETE_ABORT, TxnState.PREPARE_ABORT)
    )
    if meta.state == TxnState.ONGOING:
        new = replace(meta, state=preparing, update_ms=now_ms)
        return Outcome(ErrorCode.none, new)
    if meta.state == done:
        return Outcome(ErrorCode.none)  # a retry after the transaction completed
    if meta.state == preparing:
        return Outcome(ErrorCode.concurrent_transactions)
    return Outcome(ErrorCode.invalid_txn_state)


def _prepare_abort(meta: TxnMetadata, now_ms: int, fence: bool) -> TxnMetadata:
    epoch = _fenced_epoch(meta.producer_epoch) if fence else meta.producer_epoch
    return replace(
        meta,
        producer_epoch=epoch,
        # Kafka's prepareFenceProducerEpoch forgets the previous epoch: the fenced instance
        # must not pass for a retry of the bump.
        last_epoch=NO_EPOCH if fence else meta.last_epoch,
        state=TxnState.PREPARE_ABORT,
        update_ms=now_ms,
    )


def complete(meta: TxnMetadata, now_ms: int) -> TxnMetadata:
    """The Complete* state logged once every marker of a Prepare* state is written."""
    assert meta.state in PREPARE, meta.state
    state = TxnState.COMPLETE_COMMIT if meta.state == TxnState.PREPARE_COMMIT else TxnState.COMPLETE_ABORT
    return replace(meta, state=state, update_ms=now_ms)


def timed_out(meta: TxnMetadata, now_ms: int) -> TxnMetadata | None:
    """PrepareAbort with a fencing epoch bump for an Ongoing transaction past its timeout
    (``abortTimedOutTransactions``), else None."""
    if meta.state == TxnState.ONGOING and meta.start_ms + meta.timeout_ms <= now_ms:
        return _prepare_abort(meta, now_ms, fence=True)
    return None


def expired(meta: TxnMetadata, expiration_ms: int, now_ms: int) -> bool:
    """An id idle in a completed state for ``transactional.id.expiration.ms`` is dropped."""
    return meta.state in COMPLETE and meta.update_ms + expiration_ms <= now_ms
