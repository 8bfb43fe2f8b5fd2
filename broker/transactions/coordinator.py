"""The transaction coordinator (Kafka's ``TransactionCoordinator`` with its
``TransactionStateManager`` and marker channel, for a single broker).

Decisions come from the pure state machine (``broker.transactions.state``); this object
applies them: a new state is logged to ``__transaction_state`` before it is adopted or
answered, and a ``Prepare*`` state is followed by the COMMIT/ABORT markers on every
partition of the transaction (``PartitionLog.append_marker``), the group coordinator's
completion of transactional offsets, and the ``Complete*`` state.

Kafka answers EndTxn once Prepare* is logged and sends markers afterwards; so does this
coordinator: the EndTxn handler hands the markers and Complete* to its connection
(``RequestContext.after_answer``), which runs them right after the answer is written and
before any request that arrives after it is handled, so a producer's next transaction
never finds this one still in Prepare*, but the answer is not held back by them (they are
on the path of every ``commit_transaction``: ``benchmarks/eos_source.py``).
Recovery is Kafka's: a state found in Prepare* on load (the broker died between the two
records) gets its markers written and its Complete* logged, and an Ongoing one is left to
time out and abort. Markers that cannot be written (a full disk) leave the state in
Prepare*; the periodic sweep retries. Other paths to Prepare* (InitProducerId fencing an
open transaction, the timeout sweep) write the markers before they return.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from kio.schema.errors import ErrorCode

from broker.config import BrokerConfig
from broker.group.offsets_log import OFFSETS_TOPIC
from broker.logs import LogManager
from broker.periodic import every
from broker.storage.log import CoordinatorFenced, ProducerFenced, StorageError
from broker.transactions import state as sm
from broker.transactions.state import PREPARE, TopicPartition, TxnMetadata, TxnState
from broker.transactions.txn_log import TRANSACTION_STATE_TOPIC, TransactionLog

log = logging.getLogger(__name__)

# Runs a callable with one argument later (``RequestContext.after_answer``, or the event
# loop's ``call_soon``).
Defer = Callable[[Callable[[TxnMetadata], None], TxnMetadata], object]

# Kafka's coordinator epoch is the leader epoch of the id's __transaction_state partition;
# a single broker leads every partition in its first (and only) epoch.
COORDINATOR_EPOCH = 0


@dataclass(frozen=True, slots=True)
class InitResult:
    error: ErrorCode
    producer_id: int = -1
    producer_epoch: int = -1


class TransactionCoordinator:
    def __init__(
        self,
        config: BrokerConfig,
        logs: LogManager,
        clock_ms: Callable[[], int] | None = None,
        allocate_pid: Callable[[], int] | None = None,
        complete_offsets: Callable[[int, int, bool], None] | None = None,
    ) -> None:
        self.config = config
        self.logs = logs
        self._clock_ms = clock_ms or (lambda: int(time.time() * 1000))
        self._allocate_pid = allocate_pid or (lambda: logs.metadata.allocate_producer_id())
        # The group coordinator applies (commit) or drops (abort) a producer's offsets.
        self._complete_offsets = complete_offsets or (lambda pid, epoch, committed: None)
        self.txn_log = TransactionLog(config, logs, self._clock_ms)
        self.txns: dict[str, TxnMetadata] = {}
        self.loaded = False

    # -- life cycle -------------------------------------------------------------------

    def load(self) -> None:
        """Rebuild every id's state from ``__transaction_state`` and finish transactions
        caught between Prepare* and Complete*."""
        self.txns = self.txn_log.read()
        self.loaded = True
        pending = [m for m in self.txns.values() if m.state in PREPARE]
        for meta in pending:
            log.info(
                "transactional id %s was in %s at shutdown: writing its markers",
                meta.transactional_id,
                meta.state.kafka_name,
            )
            self._finish(meta)
        log.info("loaded %d transactional ids from %s", len(self.txns), TRANSACTION_STATE_TOPIC)

    def shutdown(self) -> None:
        self.loaded = False

    def coordinator_partition(self, transactional_id: str) -> int:
        return self.txn_log.partition_of(transactional_id)

    # -- applying outcomes ------------------------------------------------------------

    def _persist(self, meta: TxnMetadata) -> None:
        """Log ``meta`` then adopt it; raises StorageError/OSError (nothing adopted)."""
        self.txn_log.write(meta.transactional_id, meta)
        self.txns[meta.transactional_id] = meta

    def _apply(self, outcome: sm.Outcome, defer: Defer | None = None) -> ErrorCode:
        """Log and adopt the outcome's new state; a logging failure is the client's
        COORDINATOR_NOT_AVAILABLE (it retries), as Kafka answers a failed append. A Prepare*
        state's markers are written now, or handed to ``defer`` to run after the answer."""
        if outcome.write is None:
            return outcome.error
        old = self.txns.get(outcome.write.transactional_id)
        assert old is None or sm.can_follow(outcome.write.state, old.state), (old, outcome.write)
        try:
            self._persist(outcome.write)
        except (StorageError, OSError) as exc:
            log.error("cannot log transaction state of %s: %s", outcome.write.transactional_id, exc)
            return ErrorCode.coordinator_not_available
        if outcome.write.state in PREPARE:
            if defer is None:
                self._finish(outcome.write)
            else:
                defer(self._finish_current, outcome.write)
        return outcome.error

    def _finish_current(self, meta: TxnMetadata) -> None:
        """``_finish`` for a deferred Prepare*, unless something already moved the id on
        (the timeout sweep finished it, or the broker is shutting down)."""
        if self.loaded and self.txns.get(meta.transactional_id) is meta:
            self._finish(meta)

    def _finish(self, meta: TxnMetadata) -> bool:
        """Markers on every partition of a Prepare* transaction, then Complete*; False (state
        left in Prepare*, retried by the sweep) when a marker could not be written."""
        commit = meta.state == TxnState.PREPARE_COMMIT
        if not self.write_markers(meta.producer_id, meta.producer_epoch, commit, meta.partitions):
            return False
        try:
            self._persist(sm.complete(meta, self._clock_ms()))
        except (StorageError, OSError) as exc:
            log.error("cannot log completion of transaction %s: %s", meta.transactional_id, exc)
            return False
        return True

    def write_markers(
        self,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        partitions: Iterable[TopicPartition],
        coordinator_epoch: int = COORDINATOR_EPOCH,
    ) -> bool:
        """COMMIT/ABORT markers on ``partitions`` and the offsets' completion; False if
        any could not be written (to be retried: a marker written twice is harmless, the
        second finds no open transaction)."""
        errors = self.write_markers_each(producer_id, producer_epoch, commit, partitions, coordinator_epoch)
        if any(e in (ErrorCode.kafka_storage_error, ErrorCode.unknown_server_error) for e in errors.values()):
            return False
        if any(topic == OFFSETS_TOPIC for topic, _ in errors):
            self._complete_offsets(producer_id, producer_epoch, commit)
        return True

    def write_markers_each(
        self,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        partitions: Iterable[TopicPartition],
        coordinator_epoch: int,
    ) -> dict[TopicPartition, ErrorCode]:
        """One marker per partition, each partition's error as WriteTxnMarkers answers it."""
        now = self._clock_ms()
        out: dict[TopicPartition, ErrorCode] = {}
        for tp in sorted(set(partitions)):
            plog = self.logs.get(*tp)
            if plog is None:
                # A deleted topic or partition has nothing left to mark (Kafka skips it).
                out[tp] = ErrorCode.unknown_topic_or_partition
                continue
            try:
                plog.append_marker(producer_id, producer_epoch, commit, coordinator_epoch, now)
            except ProducerFenced:
                out[tp] = ErrorCode.invalid_producer_epoch
                log.warning(
                    "marker for producer %d epoch %d on %s-%d: fenced", producer_id, producer_epoch, *tp
                )
                continue
            except CoordinatorFenced:
                out[tp] = ErrorCode.transaction_coordinator_fenced
                continue
            except (StorageError, OSError) as exc:
                log.error("cannot write a transaction marker to %s-%d: %s", tp[0], tp[1], exc)
                out[tp] = ErrorCode.kafka_storage_error
                continue
            out[tp] = ErrorCode.none
            self.logs.notify(tp)
        return out

    # -- requests ---------------------------------------------------------------------

    @staticmethod
    def _refused(api: str, transactional_id: str, error: ErrorCode) -> ErrorCode:
        """One line per refused request (bad input, a fenced or confused producer); the
        retriable CONCURRENT_TRANSACTIONS is routine and stays quiet."""
        if error not in (ErrorCode.none, ErrorCode.concurrent_transactions):
            log.info("%s for transactional id %r refused: %s", api, transactional_id, error.name)
        return error

    def _unavailable(self) -> ErrorCode | None:
        return None if self.loaded else ErrorCode.coordinator_load_in_progress

    def _transit(
        self,
        api: str,
        transactional_id: str,
        step: Callable[[TxnMetadata | None, int], sm.Outcome],
        defer: Defer | None = None,
    ) -> ErrorCode:
        """A request that moves the id's transaction on (AddPartitionsToTxn, EndTxn): the
        state machine's ``step`` from the id's state now, logged and applied; refused while
        loading or without an id."""
        if (err := self._unavailable()) is not None:
            return err
        if not transactional_id:
            return self._refused(api, transactional_id, ErrorCode.invalid_request)
        outcome = step(self.txns.get(transactional_id), self._clock_ms())
        return self._refused(api, transactional_id, self._apply(outcome, defer))

    def init_producer_id(
        self, transactional_id: str, timeout_ms: int, expected_pid: int = -1, expected_epoch: int = -1
    ) -> InitResult:
        if (err := self._unavailable()) is not None:
            return InitResult(err)
        try:
            self.txn_log.ensure_topic()
            outcome = sm.init_producer_id(
                self.txns.get(transactional_id),
                transactional_id,
                timeout_ms,
                self.config.transaction_max_timeout_ms,
                self._clock_ms(),
                self._allocate_pid,
                expected_pid,
                expected_epoch,
            )
        except (StorageError, OSError) as exc:
            log.error("InitProducerId for %s: %s", transactional_id, exc)
            return InitResult(ErrorCode.coordinator_not_available)
        error = self._refused("InitProducerId", transactional_id, self._apply(outcome))
        if error != ErrorCode.none:
            return InitResult(error)
        return InitResult(error, outcome.producer_id, outcome.producer_epoch)

    def add_partitions(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Iterable[TopicPartition],
    ) -> ErrorCode:
        return self._transit(
            "AddPartitionsToTxn",
            transactional_id,
            lambda meta, now: sm.add_partitions(meta, producer_id, producer_epoch, partitions, now),
        )

    def verify(
        self, transactional_id: str, producer_id: int, producer_epoch: int, partition: TopicPartition
    ) -> ErrorCode:
        if (err := self._unavailable()) is not None:
            return err
        return sm.verify_partition(self.txns.get(transactional_id), producer_id, producer_epoch, partition)

    def check_produce(
        self, transactional_id: str, producer_id: int, producer_epoch: int, topic: str, partition: int
    ) -> ErrorCode:
        """KIP-890 verification of a transactional Produce, with the codes the produce path
        answers (``AddPartitionsToTxnManager``): the partition must be in this producer's
        Ongoing transaction; a fenced epoch is INVALID_PRODUCER_EPOCH; a coordinator that
        cannot answer yet is NOT_ENOUGH_REPLICAS (retriable for every client)."""
        if not self.config.transaction_partition_verification_enable:
            return ErrorCode.none
        error = self.verify(transactional_id, producer_id, producer_epoch, (topic, partition))
        if error == ErrorCode.producer_fenced:
            return ErrorCode.invalid_producer_epoch
        if error in (
            ErrorCode.coordinator_load_in_progress,
            ErrorCode.coordinator_not_available,
            ErrorCode.not_coordinator,
        ):
            return ErrorCode.not_enough_replicas
        return error

    def end_txn(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        defer: Defer | None = None,
    ) -> ErrorCode:
        """EndTxn; with ``defer`` (``RequestContext.after_answer``) the markers and Complete*
        are written after the caller answered, as Kafka does."""
        return self._transit(
            "EndTxn",
            transactional_id,
            lambda meta, now: sm.end_txn(meta, producer_id, producer_epoch, commit, now),
            defer,
        )

    def admin_write_markers(
        self,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        partitions: Iterable[TopicPartition],
        coordinator_epoch: int,
    ) -> dict[TopicPartition, ErrorCode]:
        """WriteTxnMarkers: markers on request (kafka-transactions.sh abort of a hanging
        transaction); the coordinator's own state is not touched, as in Kafka."""
        errors = self.write_markers_each(producer_id, producer_epoch, commit, partitions, coordinator_epoch)
        if any(topic == OFFSETS_TOPIC and e == ErrorCode.none for (topic, _), e in errors.items()):
            self._complete_offsets(producer_id, producer_epoch, commit)
        return errors

    def describe(self, transactional_id: str) -> tuple[TxnMetadata | None, ErrorCode]:
        if (err := self._unavailable()) is not None:
            return None, err
        meta = self.txns.get(transactional_id)
        if meta is None:
            return None, ErrorCode.transactional_id_not_found
        return meta, ErrorCode.none

    def list_transactions(
        self, states: set[TxnState], producer_ids: set[int], min_duration_ms: int = -1
    ) -> tuple[list[TxnMetadata], ErrorCode]:
        """ListTransactions' filters: any of ``states`` (all if empty), any of
        ``producer_ids`` (all if empty), running for at least ``min_duration_ms`` (v1)."""
        if (err := self._unavailable()) is not None:
            return [], err
        now = self._clock_ms()
        out = [
            m
            for m in self.txns.values()
            if (not states or m.state in states)
            and (not producer_ids or m.producer_id in producer_ids)
            and (min_duration_ms < 0 or (m.state == TxnState.ONGOING and now - m.start_ms >= min_duration_ms))
        ]
        return sorted(out, key=lambda m: m.transactional_id), ErrorCode.none

    # -- background -------------------------------------------------------------------

    def abort_timed_out(self) -> int:
        """Fence and abort Ongoing transactions past their timeout, and retry markers of
        transactions left in Prepare*; returns how many were aborted."""
        if not self.loaded:
            return 0
        now = self._clock_ms()
        aborted = 0
        for meta in list(self.txns.values()):
            if meta.state in PREPARE:
                self._finish(meta)
                continue
            fenced = sm.timed_out(meta, now)
            if fenced is None:
                continue
            log.info(
                "aborting transaction of %s (producer %d epoch %d): timed out after %d ms",
                meta.transactional_id,
                meta.producer_id,
                meta.producer_epoch,
                meta.timeout_ms,
            )
            if self._apply(sm.Outcome(ErrorCode.none, fenced)) == ErrorCode.none:
                aborted += 1
        return aborted

    def start_background(self) -> list[asyncio.Task[None]]:
        """The timeout sweep and the id expiry, for the life of the broker."""
        cfg = self.config
        return [
            every(
                cfg.transaction_abort_timed_out_transaction_cleanup_interval_ms / 1000,
                self.abort_timed_out,
                "transaction-timeouts",
            ),
            every(
                cfg.transaction_remove_expired_transaction_cleanup_interval_ms / 1000,
                self.expire_ids,
                "transactional-id-expiry",
            ),
        ]

    def expire_ids(self) -> int:
        """Tombstone ids idle beyond ``transactional.id.expiration.ms``."""
        if not self.loaded:
            return 0
        now = self._clock_ms()
        count = 0
        for meta in list(self.txns.values()):
            if not sm.expired(meta, self.config.transactional_id_expiration_ms, now):
                continue
            try:
                self.txn_log.write(meta.transactional_id, None)
            except (StorageError, OSError) as exc:
                log.error("cannot expire transactional id %s: %s", meta.transactional_id, exc)
                continue
            del self.txns[meta.transactional_id]
            count += 1
        if count:
            log.info("expired %d transactional ids", count)
        return count
