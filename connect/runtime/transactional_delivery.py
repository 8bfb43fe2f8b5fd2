"""Exactly once for source tasks (KIP-618): the ``Transactional`` delivery hooks of the one
source runner (``connect.runtime.source_delivery`` holds the at-least-once ones and the
interface they share). Every record and the offsets it advances go in one transaction of
the task's transactional producer; ``connect.runtime.exactly_once`` sets that producer up.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer

from connect.api.errors import ConnectException
from connect.api.records import SourceRecord
from connect.api.task import RecordMetadata, SourceTask, partition_key
from connect.runtime.exactly_once import (
    ExactlyOnceSetup,
    WorkerTransactionContext,
    key_partition,
    transactional_producer_config,
)
from connect.runtime.source_delivery import CommitPoint, Offsets, wants_per_record_acks
from connect.runtime.submitted_records import PartitionKey
from connect.storage.offsets import offset_key, offset_value

log = logging.getLogger(__name__)

# How long a commit or an abort may block (Kafka's max.block.ms).
_TXN_CALL_TIMEOUT_S = 60.0
_REFRESH_STEP_S = 5.0
_PURGED = frozenset({KafkaError._PURGE_QUEUE, KafkaError._PURGE_INFLIGHT})


class Transactional:
    """Exactly once (KIP-618): every record and the offsets it advances in one transaction.

    The transaction begins when a poll's records start going out and is committed at the
    boundary (``poll``: after each poll's batch; ``interval``: the first batch after the
    interval; ``connector``: where the task's ``TransactionContext`` asks), with the offsets
    of what was sent written first by the same producer into the connector's offsets topic.
    The worker's global store gets a copy after the commit when it is another topic. An
    aborted transaction (a connector's request) drops its records; its offsets are still
    committed, in a transaction of their own, so the task does not read them again
    (Kafka's rule). A failed task's open transaction is aborted.

    With a transaction per poll and nothing to do per record (``pipelined``) the runner
    commits with ``start_commit``/``finish_commit``: ``commit_transaction`` waits on a
    thread of its own while the task thread reads the next poll, and the next batch is sent
    only once the commit succeeded.

    Unless the task wants ``commit_record``, the producer has no delivery callback: a record
    the producer fails to deliver fails the transaction's commit (librdkafka refuses to
    commit a transaction with a failed delivery), which fails the task, as Kafka's
    exactly-once task leaves asynchronous send failures to ``commitTransaction``. A
    callback, even one told to report only failures, costs the committing thread the GIL
    for every record delivered (confluent-kafka calls it per record and filters the
    successes itself) while the task thread polls: ``benchmarks/eos_source.py``.
    """

    def __init__(
        self,
        task: SourceTask,
        task_name: str,
        setup: ExactlyOnceSetup,
        boundary: str,
        interval_s: float | None,
        context: WorkerTransactionContext | None,
        on_failure: Callable[[Any, Any], None],
        stopping: threading.Event,
    ) -> None:
        self._task = task
        self._name = task_name
        self._setup = setup
        self._boundary = boundary
        self._interval_s = interval_s
        self._context = context
        self._on_failure = on_failure
        self._stopping = stopping
        self._commit_records = wants_per_record_acks(task)
        # Offsets and record callbacks follow each record where the connector draws the
        # boundaries or wants commit_record; otherwise the runner's fast paths note runs.
        self.notes_runs = boundary != "connector" and not self._commit_records
        # A transaction per poll, nothing per record: the runner may commit in the background
        # (``start_commit``) while the task thread reads the next poll.
        self.pipelined = boundary == "poll" and self.notes_runs
        self._committer: ThreadPoolExecutor | None = None
        self._pending: Future[None] | None = None
        self._to_collect: tuple[Offsets, dict[bytes, bytes | None]] | None = None
        self._open = False
        self._latest: dict[PartitionKey, tuple[Mapping[str, Any], Mapping[str, Any]]] = {}
        # The first offset noted for a source partition in a transaction is written at once
        # (``_write_early``): the source partitions seen in this transaction,
        # the offsets topic partitions written so far, and what was written there (key ->
        # value), which the commit need not write again.
        self._seen: set[PartitionKey] = set()
        self._early_partitions: set[int] = set()
        self._early: dict[bytes, bytes | None] = {}
        # (record, [metadata]) of this transaction, for commit_record after the commit.
        self._sent: list[tuple[SourceRecord, list[RecordMetadata | None]]] = []
        self._producer: Producer | None = None

    def producer_config(self, base: dict[str, Any]) -> dict[str, Any]:
        # No delivery callback: failures surface through commit_transaction (class docstring).
        return transactional_producer_config(base, self._setup.transactional_id)

    def _failed(self, err: KafkaError | None, msg: Any) -> None:
        # An abort purges what it drops: those records were meant to go, not a failure.
        if err is not None and err.code() not in _PURGED:
            self._on_failure(err, msg)

    def start(self, producer: Producer) -> None:
        self._producer = producer
        if self._setup.fence is not None:
            self._setup.fence()
        if self._stopping.is_set():
            return  # do not fence out a later generation by accident
        try:
            producer.init_transactions(_TXN_CALL_TIMEOUT_S)
        except KafkaException as exc:
            raise ConnectException(
                f"{self._name}: could not initialize transactions of producer "
                f"{self._setup.transactional_id}: {exc.args[0].str()}"
            ) from exc
        if self._setup.verify is not None:
            self._setup.verify()
        # Offsets are read committed: an older incarnation's open transaction, aborted by the
        # init above, no longer holds them back; other tasks' transactions may, briefly.
        while not self._stopping.is_set() and not self._setup.refresh(_REFRESH_STEP_S):
            log.warning(
                "%s: still reading the committed offsets of %s", self._name, self._setup.offsets_topic
            )

    def sending(self, producer: Producer) -> None:
        if not self._open:
            try:
                producer.begin_transaction()
            except KafkaException as exc:
                raise ConnectException(f"{self._name}: could not begin a transaction: {exc}") from exc
            self._open = True

    def on_delivery(self, record: SourceRecord) -> Callable[[Any, Any], None] | None:
        if not self._commit_records:
            return None
        slot: list[RecordMetadata | None] = [None]
        self._sent.append((record, slot))

        def done(err: KafkaError | None, msg: Any) -> None:
            if err is not None:
                self._failed(err, msg)
                return
            ts = msg.timestamp()
            slot[0] = RecordMetadata(
                msg.topic(), msg.partition(), msg.offset(), ts[1] if ts and ts[1] > 0 else None
            )

        return done

    def note_run(self, partition: Mapping[str, Any], offset: Mapping[str, Any]) -> None:
        key = partition_key(partition)
        self._latest[key] = (partition, offset)
        if key not in self._seen:
            self._seen.add(key)
            self._write_early(partition, offset)

    def sent(self, record: SourceRecord) -> bool | None:
        sp, so = record.source_partition, record.source_offset
        if sp is not None and so is not None:
            self.note_run(sp, so)
        return self._boundary_after(record)

    def _write_early(self, partition: Mapping[str, Any], offset: Mapping[str, Any]) -> None:
        """Write the first offset noted for a source partition in this transaction now, when
        its offsets topic partition is not in the transaction yet.

        librdkafka adds a partition to the transaction 1 ms after the first record for it
        (then waits for AddPartitionsToTxn) and sends nothing to it before; written only at
        the commit, the offsets record made every commit wait for that first. Written here,
        the partition joins together with the records' own while they are still being
        sent. The runner notes a whole poll's last offset as the poll's first record goes
        (``WorkerSourceTask._send_plain``), so with the ``poll`` boundary a transaction sent
        whole has this as its one offsets record. That offset may be ahead of the records
        sent so far; it is safe because nothing commits a transaction but ``commit``/
        ``start_commit``, which write the newest offset noted after this one whenever it
        differs, and the runner notes the offset actually reached before it can commit (the
        later record of a key is the one that counts, read or compacted). An abort drops
        both, and the offsets ``_latest`` keeps past an abort (committed in a transaction of
        their own, Kafka's rule) are noted only record by record: aborts come from the
        connector's boundaries, where ``notes_runs`` is false and ``_send_plain`` is not
        used."""
        producer, setup = self._producer, self._setup
        if not self._open or producer is None:
            return
        key = offset_key(setup.connector, partition)
        target = key_partition(key, setup.offsets_partitions)
        if target in self._early_partitions:
            return
        value = offset_value(offset)
        try:
            producer.produce(setup.offsets_topic, value, key, target)
        except BufferError:
            return  # only a head start: the commit writes it
        except KafkaException as exc:
            raise ConnectException(_commit_failure(self._name, exc.args[0])) from exc
        self._early_partitions.add(target)
        self._early[key] = value

    def _new_transaction(self) -> None:
        """Forget what the last transaction wrote early (committed or aborted)."""
        self._seen = set()
        self._early_partitions = set()
        self._early = {}

    def dropped(self, record: SourceRecord) -> bool | None:
        if self._commit_records:
            self._sent.append((record, [None]))
        return self.sent(record)

    def _boundary_after(self, record: SourceRecord) -> bool | None:
        context = self._context
        if context is None:
            return None
        if context.should_abort_on(record):
            log.info(
                "%s: aborting the transaction at a record of topic %s as the task asked",
                self._name,
                record.topic,
            )
            self._abort()
            return True  # its offsets are committed all the same
        return context.should_commit_on(record)

    def commit_due(self, elapsed_s: float, interval_s: float, point: CommitPoint) -> bool:
        if point == "send":
            return False
        if self._boundary == "poll":
            return self._open or bool(self._latest)
        if self._boundary == "interval":
            every = self._interval_s if self._interval_s is not None else interval_s
            return point in ("pause", "stop") or elapsed_s >= every
        assert self._context is not None
        if self._context.should_abort_batch():
            log.info("%s: aborting the transaction of this batch as the task asked", self._name)
            self._abort()
            return True
        return self._context.should_commit_batch()

    def commit(self, producer: Producer, flush_timeout_s: float) -> Offsets | None:
        if not self._open and not self._latest:
            return []
        offsets, written = self._write_offsets(producer)
        self._end(producer)
        return self._committed(offsets, written)

    def _write_offsets(self, producer: Producer) -> tuple[Offsets, dict[bytes, bytes | None]]:
        """The offsets of what was sent, written into the transaction (an aborted one's into a
        new one); those offsets, and the records written (key -> value)."""
        self.sending(producer)
        offsets = list(self._latest.values())
        setup = self._setup
        written: dict[bytes, bytes | None] = {}
        try:
            for partition, offset in offsets:
                key, value = offset_key(setup.connector, partition), offset_value(offset)
                written[key] = value
                if key in self._early and self._early[key] == value:
                    continue  # in the transaction already, written as its record went
                producer.produce(
                    setup.offsets_topic, value, key, key_partition(key, setup.offsets_partitions)
                )
        except KafkaException as exc:
            raise ConnectException(_commit_failure(self._name, exc.args[0])) from exc
        except BufferError as exc:
            raise ConnectException(f"{self._name}: the producer's queue is full of offsets") from exc
        return offsets, written

    def _end(self, producer: Producer) -> None:
        """Commit the transaction: the producer drains what was sent, then EndTxn."""
        try:
            producer.commit_transaction(_TXN_CALL_TIMEOUT_S)
        except KafkaException as exc:
            raise ConnectException(_commit_failure(self._name, exc.args[0])) from exc

    def _committed(self, offsets: Offsets, written: dict[bytes, bytes | None]) -> Offsets:
        """The transaction is committed: a new one next, the copy to the worker's offsets
        topic, ``commit_record`` for each of its records."""
        self._open = False
        self._latest = {}
        self._new_transaction()
        setup = self._setup
        if setup.secondary is not None:
            try:
                setup.secondary.set(written)
            except Exception as exc:
                log.warning(
                    "%s: offsets committed, but not copied to the worker's offsets topic: %s", self._name, exc
                )
        sent, self._sent = self._sent, []
        for record, slot in sent:
            try:
                self._task.commit_record(record, slot[0])
            except Exception:
                log.exception("%s: commit_record() raised; continuing", self._name)
        return offsets

    @property
    def pending(self) -> bool:
        """A commit ``start_commit`` began has not been collected by ``finish_commit``."""
        return self._pending is not None

    def start_commit(self, producer: Producer) -> None:
        """``commit`` with its wait on a thread of its own; ``finish_commit`` collects it.

        The offsets are written here; the committer thread runs ``commit_transaction``,
        which waits for the broker (the records' drain, AddPartitionsToTxn, EndTxn) while
        the caller polls, transforms and converts the next batch. Until ``finish_commit``
        the caller touches neither the producer nor this object; the next batch is sent
        once this transaction is committed, as before."""
        assert self._pending is None and self.pipelined
        pending: Future[None]
        if not self._open and not self._latest:
            self._to_collect = None
            pending = Future()
            pending.set_result(None)
        else:
            self._to_collect = self._write_offsets(producer)
            if self._committer is None:
                self._committer = ThreadPoolExecutor(1, thread_name_prefix=f"{self._name}-commit")
            pending = self._committer.submit(self._end, producer)
            # Hand the GIL over now: the committer needs it only to enter commit_transaction,
            # which releases it, but this thread goes on with Python work (the next poll)
            # and would otherwise hold it for up to a switch interval first.
            time.sleep(0)
        self._pending = pending

    def finish_commit(self) -> Offsets:
        """Wait for the commit ``start_commit`` began: the offsets committed, or its error
        (``ConnectException``)."""
        pending, self._pending = self._pending, None
        assert pending is not None
        pending.result()
        collect, self._to_collect = self._to_collect, None
        return [] if collect is None else self._committed(*collect)

    def _abort(self) -> None:
        if not self._open or self._producer is None:
            log.warning("%s: ignoring the task's request to abort: the transaction is empty", self._name)
            return
        try:
            self._producer.abort_transaction(_TXN_CALL_TIMEOUT_S)
        except KafkaException as exc:
            raise ConnectException(
                f"{self._name}: could not abort the transaction: {exc.args[0].str()}"
            ) from exc
        self._open = False
        self._new_transaction()  # what it wrote early is dropped with it
        self._sent = [(r, [None]) for r, _ in self._sent]  # dropped: no metadata

    def close(self, producer: Producer | None, failed: bool) -> None:
        if self._pending is not None:
            # A failed or cancelled task's last commit, still under way: let it end first.
            try:
                self.finish_commit()
            except Exception as exc:
                log.info("%s: the last commit failed while the task stopped: %s", self._name, exc)
        if self._committer is not None:
            self._committer.shutdown()
            self._committer = None
        # What is still open was not committed (a failure, or a boundary the connector never
        # drew): abort it now rather than leave the partitions' last stable offset behind
        # until the transaction times out.
        if producer is None or not self._open:
            return
        try:
            producer.abort_transaction(5.0)
        except KafkaException as exc:
            log.info("%s: the open transaction could not be aborted (%s); it times out", self._name, exc)
        self._open = False


def _commit_failure(task_name: str, error: KafkaError) -> str:
    if error.code() in (KafkaError.INVALID_PRODUCER_EPOCH, KafkaError._FENCED, KafkaError.PRODUCER_FENCED):
        return (
            f"Failed to flush offsets and/or records for task {task_name}: {error.str()}. Another "
            "incarnation of the task fenced this one out, or its transaction outlived transaction.timeout.ms "
            "(tune the producer for throughput, raise producer.override.transaction.timeout.ms, or use "
            "the 'poll' transaction boundary)"
        )
    return f"Failed to flush offsets and/or records for task {task_name}: {error.str()}"
