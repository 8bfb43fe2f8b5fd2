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
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

from connect.api.data import Schema
from connect.api.records import SourceRecord

__all__ = ["SourceRecordBatch"]


class SourceRecordBatch(Sequence[SourceRecord]):
    """Records of one topic and one source partition: ``source_offsets[i]``, ``values[i]``
    and (when given) ``keys[i]`` are record ``i``'s; the other fields are every record's.
    No keys means null keys; ``key_schema`` and ``value_schema`` are every record's."""

    __slots__ = (
        "_made",
        "kafka_partition",
        "key_schema",
        "keys",
        "source_offsets",
        "source_partition",
        "timestamp",
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
    ) -> None:
        n = len(values)
        if len(source_offsets) != n:
            raise ValueError(f"{len(source_offsets)} source offsets for {n} values")
        if keys is not None and len(keys) != n:
            raise ValueError(f"{len(keys)} keys for {n} values")
        self.source_partition = source_partition
        self.source_offsets = source_offsets
        self.topic = topic
        self.value_schema = value_schema
        self.values = values
        self.key_schema = key_schema
        self.keys = keys
        self.kafka_partition = kafka_partition
        self.timestamp = timestamp
        self._made: list[SourceRecord | None] | None = None

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
            record = made[index] = SourceRecord(
                self.source_partition,
                self.source_offsets[index],
                self.topic,
                self.kafka_partition,
                self.key_schema,
                None if self.keys is None else self.keys[index],
                self.value_schema,
                self.values[index],
                self.timestamp,
            )
        return record

    def __iter__(self) -> Iterator[SourceRecord]:
        return (self[i] for i in range(len(self.values)))

    def __repr__(self) -> str:
        return f"SourceRecordBatch({self.topic!r}, {len(self)} records)"
