"""How a source task's records are acknowledged and its offsets committed: delivery
semantics as hooks on the one source runner, chosen once when the task starts, as
Kafka's ``AbstractWorkerSourceTask`` plugs in ``prepareToSendRecord``/``recordSent``/
``commitOffsets``.

- ``BulkAcks`` (at least once, the default): the producer reports failures only; an
  offset is committed after ``producer.flush`` has confirmed everything sent before it.
  No Python call per record beyond noting the newest offset of each source partition.
- ``PerRecordAcks`` (for tasks that override ``SourceTask.commit_record``): a delivery
  report per record, gathered and handed to ``commit_records`` (``commit_record`` per
  record unless the task has the batch form), offsets committed as far as the
  acknowledged run at the head of each source partition (``SubmittedRecords``).
- ``Transactional`` (exactly once, KIP-618, in ``connect.runtime.transactional_delivery``): a
  transaction begun at the first record, the offsets of what was sent written by the same
  producer into it, committed at the boundary (``transaction.boundary``); an abort drops
  both.

The runner asks ``commit_due`` after each send, after each poll's batch, while paused and
when the task stops, and calls ``commit`` when it says so.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, Literal, Protocol

from confluent_kafka import KafkaError, Producer

from connect.api.records import SourceRecord
from connect.api.source_batch import RecordMetadataBatch, SourceRecordBatch
from connect.api.task import RecordMetadata, SourceTask, partition_key
from connect.runtime.submitted_records import PartitionKey, SubmittedRecord, SubmittedRecords, SubmittedRun
from connect.storage.offsets import OffsetStorageWriter

log = logging.getLogger(__name__)

Offsets = list[tuple[Mapping[str, Any], Mapping[str, Any]]]
# When the runner asks whether to commit: after a send, after a poll's whole batch was sent
# (or an empty poll), while paused (Kafka's onPause commits an exactly-once transaction),
# and when the task stops.
CommitPoint = Literal["send", "batch", "pause", "stop"]


class DeliveryHooks(Protocol):
    #: Offsets are noted once per run of one source partition (``note_run``) and no record
    #: gets a delivery callback: the runner's fast paths apply.
    notes_runs: bool

    def producer_config(self, base: dict[str, Any]) -> dict[str, Any]:
        """The producer's settings for these semantics."""
        ...

    def start(self, producer: Producer) -> None:
        """The producer exists and the task has not started yet (exactly once: fence, init
        the transactions, read the offsets committed so far)."""
        ...

    def sending(self, producer: Producer) -> None:
        """Records of a poll are about to be handed to the producer."""
        ...

    def note_run(self, partition: Mapping[str, Any], offset: Mapping[str, Any]) -> None:
        """The newest offset of a run of records of one source partition (``notes_runs``): of
        records sent, or of a whole poll as its first record goes (``WorkerSourceTask._send_plain``,
        which notes the offset actually reached before anything can commit if it stops early)."""
        ...

    def on_delivery(self, record: SourceRecord) -> Callable[[Any, Any], None] | None:
        """The per-record delivery callback, or None when the producer reports only failures."""
        ...

    def sent(self, record: SourceRecord) -> bool | None:
        """``record`` was handed to the producer (after its on_delivery was made); true when
        a commit is due right after it (a connector-defined transaction boundary)."""
        ...

    def dropped(self, record: SourceRecord) -> bool | None:
        """``record`` was filtered out by a transformation or skipped by error tolerance: its
        offset counts as done, in order, as Kafka's ``recordDropped`` does. True as ``sent``."""
        ...

    def commit_due(self, elapsed_s: float, interval_s: float, point: CommitPoint) -> bool:
        """Whether to commit now, ``elapsed_s`` after the last commit."""
        ...

    def commit(self, producer: Producer, flush_timeout_s: float) -> Offsets | None:
        """Make the offsets of what was sent durable; the offsets committed, None when that
        is not possible now (at least once: the producer did not confirm in time; nothing
        is committed then). Exactly once raises ``ConnectException`` when the transaction
        fails (the task fails; the transaction is aborted)."""
        ...

    def close(self, producer: Producer | None, failed: bool) -> None:
        """The task ends; ``failed``: without a final commit."""
        ...


class BulkAcks:
    """At least once with the fewest Python calls: commit after a flush confirmed all."""

    notes_runs = True

    def __init__(
        self, task_name: str, on_failure: Callable[[Any, Any], None], writer: OffsetStorageWriter
    ) -> None:
        self._name = task_name
        self._on_failure = on_failure
        self._writer = writer
        # The newest offset of each source partition, noted in order as records go out.
        self._latest: dict[PartitionKey, tuple[Mapping[str, Any], Mapping[str, Any]]] = {}

    def producer_config(self, base: dict[str, Any]) -> dict[str, Any]:
        return {**base, "delivery.report.only.error": True, "on_delivery": self._on_failure}

    def start(self, producer: Producer) -> None:
        pass

    def sending(self, producer: Producer) -> None:
        pass

    def close(self, producer: Producer | None, failed: bool) -> None:
        pass

    def commit_due(self, elapsed_s: float, interval_s: float, point: CommitPoint) -> bool:
        return point == "stop" or elapsed_s >= interval_s

    def on_delivery(self, record: SourceRecord) -> None:
        return None

    def sent(self, record: SourceRecord) -> None:
        sp, so = record.source_partition, record.source_offset
        if sp is not None and so is not None:
            self.note_run(sp, so)

    dropped = sent

    def note_run(self, partition: Mapping[str, Any], offset: Mapping[str, Any]) -> None:
        """The newest offset of a run of records of one source partition: what the runner
        notes once per run instead of ``sent`` per record (``DeliveryHooks.note_run``)."""
        self._latest[partition_key(partition)] = (partition, offset)

    def commit(self, producer: Producer, flush_timeout_s: float) -> Offsets | None:
        if not self._latest:
            return []
        remaining = producer.flush(flush_timeout_s)
        if remaining:
            log.error(
                "%s: failed to flush, timed out while waiting for the producer to flush outstanding %d "
                "messages; offsets will be committed later",
                self._name,
                remaining,
            )
            return None
        offsets = list(self._latest.values())
        self._latest = {}
        return _written(self._writer, offsets, self._name)


class _Poll:
    """One poll's records as PerRecordAcks sends them: how their acknowledgements are
    tracked for the offsets (a SubmittedRun for a SourceRecordBatch, else a
    SubmittedRecord per sent row), and the rows acknowledged since ``commit_records`` was
    last called."""

    __slots__ = ("fresh", "metadata", "records", "reports", "run", "submitted")

    def __init__(self, records: Sequence[SourceRecord], run: SubmittedRun | None) -> None:
        self.records = records
        self.run = run
        self.submitted: list[SubmittedRecord | None] = [] if run is not None else [None] * len(records)
        self.fresh: list[int] = []  # rows acknowledged (or dropped), in that order
        self.metadata: list[RecordMetadata | None] = []  # fresh's metadata, row for row (no run)
        # A run's delivery reports of fresh, row for row (None: no metadata), read at drain().
        self.reports: list[Any] = []


class PerRecordAcks:
    """A delivery report per record, for tasks that want ``commit_record``.

    The reports are gathered per poll and handed to the task's ``commit_records`` (the
    batch form; by default ``commit_record`` for each) after the producer's callbacks ran,
    in the order they came; offsets are committed as far as the acknowledged run at the
    head of each source partition (``SubmittedRecords``). The runner sends by row
    (``begin``, then per row a ``partial`` of its callback and ``sent_row``, or
    ``dropped_row``), so that a ``SourceRecordBatch`` is read as columns and nothing is
    made per row but the callback and the metadata (``benchmarks/mirror.py``)."""

    notes_runs = False

    def __init__(
        self,
        task: SourceTask,
        task_name: str,
        tolerate_failed_send: Callable[[KafkaError, Any, SourceRecord | None], bool],
        writer: OffsetStorageWriter,
    ) -> None:
        self._task = task
        self._name = task_name
        self._tolerate = tolerate_failed_send
        self._writer = writer
        self._submitted = SubmittedRecords()
        self._poll: _Poll | None = None  # the poll being sent
        self._acked: list[_Poll] = []  # polls with reports not yet handed to the task

    def producer_config(self, base: dict[str, Any]) -> dict[str, Any]:
        return dict(base)

    def start(self, producer: Producer) -> None:
        pass

    def sending(self, producer: Producer) -> None:
        pass

    def note_run(self, partition: Mapping[str, Any], offset: Mapping[str, Any]) -> None:
        raise AssertionError("per-record acks note every record")

    def close(self, producer: Producer | None, failed: bool) -> None:
        self.drain()

    def commit_due(self, elapsed_s: float, interval_s: float, point: CommitPoint) -> bool:
        # The runner asks after each poll of the producer: the reports it brought go to the
        # task first.
        self.drain()
        return point == "stop" or elapsed_s >= interval_s

    # -- by row, as the runner sends ---------------------------------------------------------

    def begin(
        self, records: Sequence[SourceRecord]
    ) -> tuple[Callable[..., None], Callable[[int], None] | None]:
        """``records`` (a poll) are about to be sent, from its first row or where it left
        off: the callback to bind each row to (``partial(callback, row)``: made in C, where
        a closure per record costs more), and what to call with each row handed to the
        producer after that (None: nothing)."""
        poll = self._poll
        if poll is None or poll.records is not records:
            run = None
            if isinstance(records, SourceRecordBatch):
                run = self._submitted.submit_run(records.source_partition, records.source_offsets)
            poll = self._poll = _Poll(records, run)
        if poll.run is not None:
            return partial(self._run_done, poll), None
        return partial(self._done, poll), self.sent_row

    def sent_row(self, row: int) -> None:
        """``row`` of a list of records was handed to the producer."""
        poll = self._poll
        assert poll is not None
        record = poll.records[row]
        poll.submitted[row] = self._submitted.submit(record.source_partition, record.source_offset)

    def dropped_row(self, row: int) -> None:
        """``row`` was dropped by a transformation or error tolerance: done, in order."""
        poll = self._poll
        assert poll is not None
        if poll.run is not None:
            self._run_done(poll, row, None, None)
            return
        self.sent_row(row)
        self._done(poll, row, None, None)

    def _run_done(self, poll: _Poll, row: int, err: KafkaError | None, msg: Any) -> None:
        # A SourceRecordBatch row's delivery report, inside producer.poll/flush on the task's
        # thread ((None, None) for a dropped row). The per-record part of per-record acks:
        # the report is kept as it is; the row is marked acknowledged and its metadata read
        # at drain(), a run at a time (benchmarks/mirror.py: this was a fifth of the task).
        if err is not None:
            if not self._tolerate(err, msg, poll.records[row]):
                return
            msg = None
        fresh = poll.fresh
        if not fresh:
            self._acked.append(poll)
        fresh.append(row)
        poll.reports.append(msg)

    def _done(self, poll: _Poll, row: int, err: KafkaError | None, msg: Any) -> None:
        # Inside producer.poll/flush, on the task's thread; (None, None) for a dropped row.
        metadata = None
        if msg is not None:
            if err is not None:
                if not self._tolerate(err, msg, poll.records[row]):
                    return
            else:
                ts = msg.timestamp()[1]
                metadata = RecordMetadata(msg.topic(), msg.partition(), msg.offset(), ts if ts > 0 else None)
        submitted = poll.submitted[row]
        assert submitted is not None
        submitted.ack()
        if not poll.fresh:
            self._acked.append(poll)
        poll.fresh.append(row)
        poll.metadata.append(metadata)

    def drain(self) -> None:
        """Hand the reports gathered so far to the task's ``commit_records``."""
        acked, self._acked = self._acked, []
        for poll in acked:
            rows = poll.fresh
            poll.fresh = []
            records = poll.records
            metadata: Sequence[RecordMetadata | None]
            chosen: Sequence[SourceRecord]
            if poll.run is not None:
                assert isinstance(records, SourceRecordBatch)
                poll.run.ack_rows(rows)
                chosen, metadata = records.select(rows), RecordMetadataBatch(poll.reports)
                poll.reports = []
            else:
                metadata, poll.metadata = poll.metadata, []
                if isinstance(records, SourceRecordBatch):
                    chosen = records.select(rows)
                else:
                    chosen = [records[i] for i in rows]
            try:
                self._task.commit_records(chosen, metadata)
            except Exception:
                log.exception("%s: commit_record() raised; continuing", self._name)

    # -- by record (the DeliveryHooks interface; the runner uses the rows above) -------------------

    def on_delivery(self, record: SourceRecord) -> Callable[[Any, Any], None]:
        raise AssertionError("per-record acks are sent by row")

    def sent(self, record: SourceRecord) -> None:
        raise AssertionError("per-record acks are sent by row")

    def dropped(self, record: SourceRecord) -> None:
        raise AssertionError("per-record acks are sent by row")

    def commit(self, producer: Producer, flush_timeout_s: float) -> Offsets | None:
        producer.poll(0)
        self.drain()
        offsets = list(self._submitted.committable().offsets.values())
        return _written(self._writer, offsets, self._name) if offsets else offsets


def _written(writer: OffsetStorageWriter, offsets: Offsets, task_name: str) -> Offsets | None:
    """``offsets`` once the store has them; None (logged) when it refused them."""
    try:
        writer.write(offsets)
    except Exception:
        log.exception("%s: failed to commit offsets", task_name)
        return None
    return offsets


def wants_per_record_acks(task: SourceTask) -> bool:
    return type(task).commit_record is not SourceTask.commit_record
