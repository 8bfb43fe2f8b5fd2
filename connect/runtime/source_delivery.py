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

Transactional exactly once (KIP-618) plugs in here as a third implementation: begin a
transaction at the first record of a batch, and commit the offsets inside it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from confluent_kafka import KafkaError, Producer

from connect.api.records import SourceRecord
from connect.api.task import RecordMetadata, SourceTask, partition_key
from connect.runtime.submitted_records import PartitionKey, SubmittedRecord, SubmittedRecords

log = logging.getLogger(__name__)

Offsets = list[tuple[Mapping[str, Any], Mapping[str, Any]]]


class DeliveryHooks(Protocol):
    def producer_config(self, base: dict[str, Any]) -> dict[str, Any]:
        """The producer's settings for these semantics."""
        ...

    def on_delivery(self, record: SourceRecord) -> Callable[[Any, Any], None] | None:
        """The per-record delivery callback, or None when the producer reports only failures."""
        ...

    def sent(self, record: SourceRecord) -> None:
        """``record`` was handed to the producer (after its on_delivery was made)."""
        ...

    def dropped(self, record: SourceRecord) -> None:
        """``record`` was filtered out by a transformation or skipped by error tolerance: its
        offset counts as done, in order, as Kafka's ``recordDropped`` does."""
        ...

    def committable(self, producer: Producer, flush_timeout_s: float) -> Offsets | None:
        """The offsets that may be written now; None when the producer could not confirm
        what was sent in time (nothing is committed then)."""
        ...


class BulkAcks:
    """At least once with the fewest Python calls: commit after a flush confirmed all."""

    def __init__(self, task_name: str, on_failure: Callable[[Any, Any], None]) -> None:
        self._name = task_name
        self._on_failure = on_failure
        # The newest offset of each source partition, noted in order as records go out.
        self._latest: dict[PartitionKey, tuple[Mapping[str, Any], Mapping[str, Any]]] = {}

    def producer_config(self, base: dict[str, Any]) -> dict[str, Any]:
        return {**base, "delivery.report.only.error": True, "on_delivery": self._on_failure}

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

    def committable(self, producer: Producer, flush_timeout_s: float) -> Offsets | None:
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
        return offsets


class PerRecordAcks:
    """A delivery report per record, for tasks that want ``commit_record``."""

    def __init__(
        self,
        task: SourceTask,
        task_name: str,
        tolerate_failed_send: Callable[[KafkaError, Any, SourceRecord | None], bool],
    ) -> None:
        self._task = task
        self._name = task_name
        self._tolerate = tolerate_failed_send
        self._submitted = SubmittedRecords()
        self._slot: list[SubmittedRecord] = []

    def producer_config(self, base: dict[str, Any]) -> dict[str, Any]:
        return dict(base)

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

    def committable(self, producer: Producer, flush_timeout_s: float) -> Offsets | None:
        producer.poll(0)
        return list(self._submitted.committable().offsets.values())


def wants_per_record_acks(task: SourceTask) -> bool:
    return type(task).commit_record is not SourceTask.commit_record
