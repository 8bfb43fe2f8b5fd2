"""Tasks: where the copying happens, one thread per task.

``SourceTask``: the worker calls ``poll`` in a loop on the task's own thread, sends
what it returns to Kafka and records each record's source offset once Kafka has
acknowledged it. ``SinkTask``: the worker consumes from Kafka and calls ``put``
with batches, then ``flush``/``pre_commit`` before it commits consumer offsets.

Either may raise ``RetriableException`` to have the same call retried (after
``retry_after`` if given, or the sink context's ``timeout``); any other exception
fails the task, with its traceback in the task's status. ``stop`` may be called from
another thread while ``poll``/``put`` runs: it should only signal the task to end.

A complete source task::

    class LinesTask(SourceTask):
        def version(self) -> str:
            return "1.0"

        def start(self, props: dict[str, str]) -> None:
            self.topic = props["topic"]
            offset = self.context.offset_storage_reader().offset({"source": "demo"})
            self.n = offset["n"] if offset else 0

        def poll(self) -> list[SourceRecord] | None:
            time.sleep(0.1)              # block briefly, then return so the worker can pause or stop us
            self.n += 1
            return [SourceRecord(source_partition={"source": "demo"}, source_offset={"n": self.n},
                                 topic=self.topic, value_schema=Schema.STRING_SCHEMA, value=f"line {self.n}")]

        def stop(self) -> None:
            pass
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable, Mapping, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from connect.api.plugin_metrics import NoPluginMetrics, PluginMetrics
from connect.api.records import SinkRecord, SourceRecord, TopicPartition
from connect.api.sink_batch import SinkRecordBatch


class OffsetStorageReader(ABC):
    """Committed offsets of source partitions (this connector's only)."""

    @abstractmethod
    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        """The last committed offset of ``partition``, or None if there is none."""

    def offsets(
        self, partitions: Iterable[Mapping[str, Any]]
    ) -> dict[tuple[tuple[str, Any], ...], dict[str, Any]]:
        """Committed offsets of several partitions, keyed by ``partition_key(partition)``;
        partitions without an offset are left out."""
        out = {}
        for p in partitions:
            found = self.offset(p)
            if found is not None:
                out[partition_key(p)] = found
        return out


def partition_key(partition: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """A hashable stand-in for a source partition map."""
    return tuple(sorted(partition.items()))


class TransactionContext(ABC):
    """Exactly-once source tasks that define their own transaction boundaries use this
    (``transaction.boundary=connector``, KIP-618). Requests may come from any thread.

    ``commit_transaction()`` commits after the records of the current ``poll`` batch were
    sent; ``commit_transaction(record)`` right after ``record`` (an object this task's
    ``poll`` returned) was sent. ``abort_transaction`` likewise drops the records of the
    transaction; their offsets are committed all the same, so they are not read again.
    """

    @abstractmethod
    def commit_transaction(self, record: SourceRecord | None = None) -> None: ...

    @abstractmethod
    def abort_transaction(self, record: SourceRecord | None = None) -> None: ...


class TaskContext(ABC):
    @abstractmethod
    def configs(self) -> dict[str, str]:
        """This task's configuration."""

    def plugin_metrics(self) -> PluginMetrics:
        """Where the task registers metrics of its own (exported at the worker's ``/metrics``)."""
        return NoPluginMetrics()


class SourceTaskContext(TaskContext):
    @abstractmethod
    def offset_storage_reader(self) -> OffsetStorageReader: ...

    def transaction_context(self) -> TransactionContext | None:
        """The context a task draws its transaction boundaries with; None unless the worker
        runs exactly-once sources and the connector has ``transaction.boundary=connector``."""
        return None


class ErrantRecordReporter(ABC):
    """Sends a record the sink could not handle to the error reporters (log, dead letter queue).

    ``report`` returns a future that completes when the record has been reported; the
    framework waits for outstanding reports before committing offsets past the record.
    With ``errors.tolerance=none`` reporting fails the task, as Kafka does.
    """

    @abstractmethod
    def report(self, record: SinkRecord, error: BaseException) -> Future[None]: ...


class SinkTaskContext(TaskContext):
    @abstractmethod
    def offset(
        self, offsets: Mapping[TopicPartition, int] | TopicPartition, offset: int | None = None
    ) -> None:
        """Rewind or skip: consumption of each partition resumes at the given offset."""

    @abstractmethod
    def timeout(self, timeout_ms: int) -> None:
        """After ``put`` raises ``RetriableException``, wait this long before retrying it."""

    @abstractmethod
    def assignment(self) -> set[TopicPartition]: ...

    @abstractmethod
    def pause(self, *partitions: TopicPartition) -> None: ...

    @abstractmethod
    def resume(self, *partitions: TopicPartition) -> None: ...

    @abstractmethod
    def request_commit(self) -> None:
        """Flush and commit offsets as soon as possible rather than at the next interval."""

    @abstractmethod
    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        """The reporter, or None when the connector has no error reporting configured."""


class Task(ABC):
    @abstractmethod
    def version(self) -> str: ...

    @abstractmethod
    def start(self, props: dict[str, str]) -> None:
        """Begin with the task configuration the connector produced."""

    @abstractmethod
    def stop(self) -> None:
        """Signal the task to stop; may be called from another thread."""


class SourceTask(Task):
    context: SourceTaskContext

    def initialize(self, context: SourceTaskContext) -> None:
        self.context = context

    @abstractmethod
    def poll(self) -> Sequence[SourceRecord] | None:
        """Records to write, or None/[] when there is nothing right now: a list, or a
        ``SourceRecordBatch`` (records of one topic and source partition as columns, made
        only if read; the faster way for many records alike). May block, but should return
        within a second or so, so the task can be paused or stopped."""

    def commit(self) -> None:
        """Offsets up to what has been acknowledged were just committed (optional hook)."""

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        """``record`` was written to Kafka (``metadata`` says where), or was dropped by a
        transformation or error tolerance (``metadata`` is None). Optional hook."""

    def commit_records(
        self, records: Sequence[SourceRecord], metadata: Sequence[RecordMetadata | None]
    ) -> None:
        """The batch form of ``commit_record``, which the worker calls with the records
        acknowledged since its last call: ``records[i]`` as ``metadata[i]`` says. ``records``
        is a ``SourceRecordBatch`` (read its columns: no record is made) when the task
        returned one, and ``metadata`` then a ``RecordMetadataBatch`` (read its ``offsets``
        column: no ``RecordMetadata`` is made). A task that overrides it overrides
        ``commit_record`` too, with the same effect record by record (either may be called).
        By default, ``commit_record`` for each."""
        for record, meta in zip(records, metadata, strict=True):
            self.commit_record(record, meta)


class RecordMetadata:
    """Where Kafka stored a source record."""

    __slots__ = ("offset", "partition", "timestamp", "topic")

    def __init__(self, topic: str, partition: int, offset: int, timestamp: int | None) -> None:
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.timestamp = timestamp

    def __repr__(self) -> str:
        return f"RecordMetadata({self.topic}-{self.partition}@{self.offset})"


class SinkTask(Task):
    context: SinkTaskContext

    def initialize(self, context: SinkTaskContext) -> None:
        self.context = context

    @abstractmethod
    def put(self, records: SinkRecordBatch) -> None:
        """Write (or buffer) these records. Raise ``RetriableException`` to get the same
        batch again after ``context.timeout`` ms.

        ``records`` is a sequence of ``SinkRecord`` (made when first read) that also
        offers the values as they were consumed, ``records.value_runs(form)``, for sinks
        that copy them (``connect.api.sink_batch``)."""

    def flush(self, current_offsets: Mapping[TopicPartition, int]) -> None:
        """Make everything ``put`` so far durable; ``current_offsets`` are the next offsets
        to read per partition."""

    def pre_commit(self, current_offsets: Mapping[TopicPartition, int]) -> Mapping[TopicPartition, int]:
        """Offsets that are safe to commit (next offset to read per partition). The
        default flushes and returns ``current_offsets``; a sink that writes
        asynchronously returns only what it has durably written."""
        self.flush(current_offsets)
        return current_offsets

    def open(self, partitions: Collection[TopicPartition]) -> None:
        """These partitions were assigned to this task (writers can be created)."""

    def close(self, partitions: Collection[TopicPartition]) -> None:
        """These partitions were taken away (after a final commit); release their writers."""
