"""What ``SourceTask.poll`` may return when it makes many records alike: a sequence of
``SourceRecord`` held as columns, each record made only if something reads it.

A poll returns a sequence of records; a list does, and so does a ``SourceRecordBatch``.
A task whose records share their topic and source partition (a file's lines, a table's
rows) builds the columns it has anyway instead of a record each::

    def poll(self) -> Sequence[SourceRecord] | None:
        lines = self.read_lines()
        return SourceRecordBatch(
            {"filename": self.filename},                # the source partition of every record
            [{"position": end} for end in line_ends],   # each record's source offset
            self.topic,
            Schema.STRING_SCHEMA,
            lines,                                      # the values
        )

The worker reads the columns as they are; a record is made when a transformation that
has no batch form, a task's ``commit_record``, error reporting or anything else reads
``batch[i]`` (then it is kept: ``batch[i] is batch[i]``). Making a ``SourceRecord`` and
reading it back costs about as much per record as producing it does, so a source that
gives columns gets its records to Kafka markedly faster (``benchmarks/file_pipeline.py``).
Values (and keys) may be a ``StructColumn``: structs of one schema held column-wise,
which converters write a column at a time.

Kafka partitions, timestamps and headers are every record's (``kafka_partition``,
``timestamp``) unless given per record (``kafka_partitions``, ``timestamps``, ``headers``):
a copy of another topic keeps each record's own (MirrorSourceTask). Per-record headers
are each record's ``(key, value)`` pairs as a client reads them, every value of
``header_schema``; a record made from the batch gets them as ``Headers``. Pairs rather than
``Headers`` because building a ``Headers`` of ``Header``s per record costs about as much as
producing the record (``benchmarks/mirror.py``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

from connect.api.data import Schema
from connect.api.headers import Header, Headers
from connect.api.records import SourceRecord
from connect.api.task import RecordMetadata

__all__ = ["RecordMetadataBatch", "SourceRecordBatch"]


class SourceRecordBatch(Sequence[SourceRecord]):
    """Records of one topic and one source partition: ``source_offsets[i]``, ``values[i]``
    and (when given) ``keys[i]``, ``kafka_partitions[i]``, ``timestamps[i]`` and
    ``headers[i]`` are record ``i``'s; the other fields are every record's. No keys means
    null keys; ``key_schema``, ``value_schema`` and ``header_schema`` are every record's.
    A per-record column replaces the shared value of its field (``kafka_partition``,
    ``timestamp``), which must then be None."""

    __slots__ = (
        "_made",
        "header_schema",
        "headers",
        "kafka_partition",
        "kafka_partitions",
        "key_schema",
        "keys",
        "source_offsets",
        "source_partition",
        "timestamp",
        "timestamps",
        "topic",
        "value_schema",
        "values",
    )

    def __init__(
        self,
        source_partition: Mapping[str, Any] | None,
        source_offsets: Sequence[Mapping[str, Any] | None],
        topic: str,
        value_schema: Schema | None,
        values: Sequence[Any],
        *,
        key_schema: Schema | None = None,
        keys: Sequence[Any] | None = None,
        kafka_partition: int | None = None,
        timestamp: int | None = None,
        kafka_partitions: Sequence[int | None] | None = None,
        timestamps: Sequence[int | None] | None = None,
        headers: Sequence[Sequence[tuple[str, Any]] | None] | None = None,
        header_schema: Schema | None = None,
    ) -> None:
        n = len(values)
        if len(source_offsets) != n:
            raise ValueError(f"{len(source_offsets)} source offsets for {n} values")
        for name, column in (
            ("keys", keys),
            ("kafka_partitions", kafka_partitions),
            ("timestamps", timestamps),
        ):
            if column is not None and len(column) != n:
                raise ValueError(f"{len(column)} {name} for {n} values")
        if headers is not None and len(headers) != n:
            raise ValueError(f"{len(headers)} headers for {n} values")
        if kafka_partitions is not None and kafka_partition is not None:
            raise ValueError("kafka_partition and kafka_partitions both given: one or the other")
        if timestamps is not None and timestamp is not None:
            raise ValueError("timestamp and timestamps both given: one or the other")
        self.source_partition = source_partition
        self.source_offsets = source_offsets
        self.topic = topic
        self.value_schema = value_schema
        self.values = values
        self.key_schema = key_schema
        self.keys = keys
        self.kafka_partition = kafka_partition
        self.timestamp = timestamp
        self.kafka_partitions = kafka_partitions
        self.timestamps = timestamps
        self.headers = headers
        self.header_schema = header_schema
        self._made: list[SourceRecord | None] | None = None

    @property
    def has_row_columns(self) -> bool:
        """Whether partitions, timestamps or headers are given per record."""
        return self.kafka_partitions is not None or self.timestamps is not None or self.headers is not None

    def __len__(self) -> int:
        return len(self.values)

    @overload
    def __getitem__(self, index: int) -> SourceRecord: ...

    @overload
    def __getitem__(self, index: slice) -> list[SourceRecord]: ...

    def __getitem__(self, index: int | slice) -> SourceRecord | list[SourceRecord]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        n = len(self.values)
        if not -n <= index < n:
            raise IndexError(f"record {index} of a batch of {n}")
        if index < 0:
            index += n
        made = self._made
        if made is None:
            made = self._made = [None] * n
        record = made[index]
        if record is None:
            pairs = None if self.headers is None else self.headers[index]
            schema = self.header_schema
            record = made[index] = SourceRecord(
                self.source_partition,
                self.source_offsets[index],
                self.topic,
                self.kafka_partition if self.kafka_partitions is None else self.kafka_partitions[index],
                self.key_schema,
                None if self.keys is None else self.keys[index],
                self.value_schema,
                self.values[index],
                self.timestamp if self.timestamps is None else self.timestamps[index],
                Headers([Header(k, v, schema) for k, v in pairs]) if pairs else None,
            )
        return record

    def select(self, rows: Sequence[int]) -> SourceRecordBatch:
        """The batch of ``rows`` (in that order) of this one, as columns: what the worker
        hands a task's ``commit_records`` when the task returned a batch. Records already
        made are not carried over."""
        first = rows[0] if rows else 0
        # Acknowledgements mostly come in send order: a run of rows is sliced, in C.
        run = list(rows) == list(range(first, first + len(rows)))

        def pick(column: Sequence[Any]) -> Sequence[Any]:
            return column[first : first + len(rows)] if run else [column[i] for i in rows]

        return SourceRecordBatch(
            self.source_partition,
            pick(self.source_offsets),
            self.topic,
            self.value_schema,
            pick(self.values),
            key_schema=self.key_schema,
            keys=None if self.keys is None else pick(self.keys),
            kafka_partition=self.kafka_partition,
            timestamp=self.timestamp,
            kafka_partitions=None if self.kafka_partitions is None else pick(self.kafka_partitions),
            timestamps=None if self.timestamps is None else pick(self.timestamps),
            headers=None if self.headers is None else pick(self.headers),
            header_schema=self.header_schema,
        )

    def __iter__(self) -> Iterator[SourceRecord]:
        return (self[i] for i in range(len(self.values)))

    def __repr__(self) -> str:
        return f"SourceRecordBatch({self.topic!r}, {len(self)} records)"


class RecordMetadataBatch(Sequence[RecordMetadata | None]):
    """Where Kafka stored the records of a ``SourceRecordBatch``: what the worker hands
    ``SourceTask.commit_records`` as ``metadata`` with such a batch. ``metadata[i]`` is
    record ``i``'s ``RecordMetadata`` (made when read; None for a record that has none: a
    failed send that error tolerance skipped), or read the columns: ``offsets[i]`` (-1
    where there is no metadata), ``partitions[i]``, ``timestamps[i]``.

    It is made of the producer's delivery reports as confluent-kafka gives them (objects
    with ``topic()``, ``partition()``, ``offset()``, ``timestamp()``), read only as far as
    asked: a ``RecordMetadata`` per acknowledged record cost about as much as producing it
    (``benchmarks/mirror.py``)."""

    __slots__ = ("_made", "_offsets", "_reports")

    def __init__(self, reports: Sequence[Any | None]) -> None:
        self._reports = reports
        self._offsets: list[int] | None = None
        self._made: list[RecordMetadata | None] | None = None

    @property
    def offsets(self) -> list[int]:
        """Each record's offset in its Kafka partition, -1 where it has no metadata."""
        if self._offsets is None:
            self._offsets = [-1 if r is None else r.offset() for r in self._reports]
        return self._offsets

    @property
    def partitions(self) -> list[int]:
        """Each record's Kafka partition, -1 where it has no metadata."""
        return [-1 if r is None else r.partition() for r in self._reports]

    @property
    def timestamps(self) -> list[int | None]:
        """Each record's timestamp as Kafka stored it (None where there is none)."""
        return [None if r is None else _timestamp(r) for r in self._reports]

    def __len__(self) -> int:
        return len(self._reports)

    @overload
    def __getitem__(self, index: int) -> RecordMetadata | None: ...

    @overload
    def __getitem__(self, index: slice) -> list[RecordMetadata | None]: ...

    def __getitem__(self, index: int | slice) -> RecordMetadata | list[RecordMetadata | None] | None:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        n = len(self._reports)
        if not -n <= index < n:
            raise IndexError(f"metadata {index} of {n}")
        if index < 0:
            index += n
        made = self._made
        if made is None:
            made = self._made = [None] * n
        meta = made[index]
        if meta is None:
            r = self._reports[index]
            if r is None:
                return None
            meta = made[index] = RecordMetadata(r.topic(), r.partition(), r.offset(), _timestamp(r))
        return meta

    def __iter__(self) -> Iterator[RecordMetadata | None]:
        return (self[i] for i in range(len(self._reports)))

    def __repr__(self) -> str:
        return f"RecordMetadataBatch({len(self)} records)"


def _timestamp(report: Any) -> int | None:
    ts = report.timestamp()[1]
    return ts if ts > 0 else None
