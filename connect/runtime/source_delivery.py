"""How a source task's records are acknowledged and its offsets committed: delivery
semantics as hooks on the one source runner, chosen once when the task starts, as
Kafka's ``AbstractWorkerSourceTask`` plugs in ``prepareToSendRecord``/``recordSent``/
``commitOffsets``.

- ``BulkAcks`` (at least once, the default): the producer reports failures only; an
  offset is committed after ``producer.flush`` has confirmed everything sent before it.
  No Python call per record beyond noting the newest offset of each source partition.
- ``PerRecordAcks`` (for tasks that override ``SourceTask.commit_record``): a delivery
  report per record, ``commit_record`` called with its metadata, offsets committed as far
  as the acknowledged run at the head of each source partition (``SubmittedRecords``).
- ``Transactional`` (exactly once, KIP-618, in ``connect.runtime.transactional_delivery``): a
  transaction begun at the first record, the offsets of what was sent written by the same
  producer into it, committed at the boundary (``transaction.boundary``); an abort drops
  both.

The runner asks ``commit_due`` after each send, after each poll's batch, while paused and
when the task stops, and calls ``commit`` when it says so.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Literal, Protocol

from confluent_kafka import KafkaError, Producer

from connect.api.records import SourceRecord
from connect.api.task import RecordMetadata, SourceTask, partition_key
from connect.runtime.submitted_records import PartitionKey, SubmittedRecord, SubmittedRecords
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
        """The newest offset of a run of sent records of one source partition (``notes_runs``)."""
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
        """The newest offset of a run of sent records of one source partition: what the
        runner notes once per run instead of ``sent`` per record."""
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


class PerRecordAcks:
    """A delivery report per record, for tasks that want ``commit_record``."""

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
        self._slot: list[SubmittedRecord] = []

    def producer_config(self, base: dict[str, Any]) -> dict[str, Any]:
        return dict(base)

    def start(self, producer: Producer) -> None:
        pass

    def sending(self, producer: Producer) -> None:
        pass

    def note_run(self, partition: Mapping[str, Any], offset: Mapping[str, Any]) -> None:
        raise AssertionError("per-record acks note every record")

    def close(self, producer: Producer | None, failed: bool) -> None:
        pass

    def commit_due(self, elapsed_s: float, interval_s: float, point: CommitPoint) -> bool:
        return point == "stop" or elapsed_s >= interval_s

    def on_delivery(self, record: SourceRecord) -> Callable[[Any, Any], None]:
        # The record is registered after produce() accepted it (a refused produce leaves
        # no trace); callbacks only run inside producer.poll on this thread, later.
        slot: list[SubmittedRecord] = []
        self._slot = slot

        def done(err: KafkaError | None, msg: Any) -> None:
            submitted = slot[0]
            if err is not None:
                if self._tolerate(err, msg, record):
                    submitted.ack()
                    self.commit_record(record, None)
                return
            submitted.ack()
            ts = msg.timestamp()
            self.commit_record(
                record,
                RecordMetadata(
                    msg.topic(), msg.partition(), msg.offset(), ts[1] if ts and ts[1] > 0 else None
                ),
            )

        return done

    def sent(self, record: SourceRecord) -> None:
        self._slot.append(self._submitted.submit(record.source_partition, record.source_offset))

    def dropped(self, record: SourceRecord) -> None:
        self._submitted.submit(record.source_partition, record.source_offset).ack()
        self.commit_record(record, None)

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        try:
            self._task.commit_record(record, metadata)
        except Exception:
            log.exception("%s: commit_record() raised; continuing", self._name)

    def commit(self, producer: Producer, flush_timeout_s: float) -> Offsets | None:
        producer.poll(0)
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
