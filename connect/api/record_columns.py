"""A batch of records as columns: what a transformation's batch form works on.

The runtime runs a connector's transformation chain over a whole poll at once. Between
the stages the records are not objects but columns, one list per field, where row ``i``
of every column is one record: a stage that changes values assigns ``batch.value``
(or items of it) and makes no record, no copy of a record, and no call per record unless
it needs one. A transformation that offers a batch form overrides
``Transformation.apply_columns``; every other one is called record by record, as
Kafka calls it, on records made from the rows (``batch.record(i)``).

A batch form must give the same result as ``apply`` row by row (the runtime's tests hold
the shipped ones to that). It changes the columns in place: assigns whole columns or
items of a list column (a column may also be another sequence, such as a
``StructColumn``, which is never changed in place: assign a new one), appends headers
with ``batch.add_header`` (a row's ``Headers`` may be shared with the record a source
task made, so never change one in place), and drops rows by listing their indexes in
``batch.dropped``. When it raises, the runtime puts the columns
back as they were and runs that stage record by record through the error handling
(``errors.tolerance``, the dead letter queue), so a batch form may simply raise on a row
it cannot handle::

    class Upper(Transformation[ConnectRecord]):
        def apply(self, record):
            return record.with_value(record.value_schema, record.value.upper())

        def apply_columns(self, batch):
            batch.value = [v.upper() for v in batch.value]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from operator import attrgetter
from typing import Any, Generic, TypeVar, overload

from connect.api.data import Schema, Struct
from connect.api.headers import Header, Headers
from connect.api.records import ConnectRecord
from connect.api.source_batch import SourceRecordBatch

_TOPIC = attrgetter("topic")
_KAFKA_PARTITION = attrgetter("kafka_partition")
_KEY_SCHEMA = attrgetter("key_schema")
_KEY = attrgetter("key")
_VALUE_SCHEMA = attrgetter("value_schema")
_VALUE = attrgetter("value")
_TIMESTAMP = attrgetter("timestamp")

R = TypeVar("R", bound=ConnectRecord)


def _column(values: Sequence[Any]) -> Sequence[Any]:
    # A StructColumn stays one; anything else becomes a list of its own (stages change
    # columns in place, and the task's sequence is the task's).
    return values if isinstance(values, StructColumn) else list(values)


class RecordColumns(Generic[R]):
    """Records as columns (lists of equal length); ``records[i]`` is the record row ``i``
    came from, as the task made it (or as the stage before a record-by-record stage
    returned it): it carries what the columns do not, such as source offsets and Kafka
    coordinates."""

    __slots__ = (
        "dropped",
        "headers",
        "kafka_partition",
        "key",
        "key_schema",
        "records",
        "timestamp",
        "topic",
        "value",
        "value_schema",
    )

    records: Sequence[R]  # a list, or the SourceRecordBatch the task returned
    topic: list[str]
    kafka_partition: list[int | None]
    key_schema: list[Any]
    key: Sequence[Any]  # a list, or a StructColumn
    value_schema: list[Any]
    value: Sequence[Any]  # a list, or a StructColumn
    timestamp: list[int | None]
    headers: list[Headers | None]
    dropped: list[int]

    def __init__(self, records: Sequence[R]) -> None:
        if isinstance(records, SourceRecordBatch):
            self._of_batch(records)
            return
        rs = self.records = list(records)
        # map(attrgetter) walks the records in C: half the time of a comprehension a
        # column, paid by every poll (benchmarks/file_pipeline.py).
        self.topic = list(map(_TOPIC, rs))
        self.kafka_partition = list(map(_KAFKA_PARTITION, rs))
        self.key_schema = list(map(_KEY_SCHEMA, rs))
        self.key = list(map(_KEY, rs))
        self.value_schema = list(map(_VALUE_SCHEMA, rs))
        self.value = list(map(_VALUE, rs))
        self.timestamp = list(map(_TIMESTAMP, rs))
        self.headers = [r.headers if r.has_headers else None for r in rs]
        self.dropped = []

    def _of_batch(self, batch: SourceRecordBatch) -> None:
        # The task gave columns: taken as they are, no record made or read.
        n = len(batch)
        self.records = batch  # type: ignore[assignment]  # R is SourceRecord here
        self.topic = [batch.topic] * n
        self.kafka_partition = [batch.kafka_partition] * n
        self.key_schema = [batch.key_schema] * n
        self.key = [None] * n if batch.keys is None else _column(batch.keys)
        self.value_schema = [batch.value_schema] * n
        self.value = _column(batch.values)
        self.timestamp = [batch.timestamp] * n
        self.headers = [None] * n
        self.dropped = []

    def __len__(self) -> int:
        return len(self.records)

    def record(self, i: int) -> R:
        """Row ``i`` as a record (a new one; the batch does not see changes made to it)."""
        h = self.headers[i]
        return self.records[i].new_record(
            topic=self.topic[i],
            kafka_partition=self.kafka_partition[i],
            key_schema=self.key_schema[i],
            key=self.key[i],
            value_schema=self.value_schema[i],
            value=self.value[i],
            timestamp=self.timestamp[i],
            headers=None if h is None else h.copy(),
        )

    def set_record(self, i: int, record: R) -> None:
        """Row ``i`` becomes ``record`` (what a record-by-record stage returned)."""
        records = self.records
        if type(records) is not list:
            self.records = records = list(records)
        records[i] = record
        self.topic[i] = record.topic
        self.kafka_partition[i] = record.kafka_partition
        self.key_schema[i] = record.key_schema
        self.key = keys = self.key if type(self.key) is list else list(self.key)
        keys[i] = record.key
        self.value_schema[i] = record.value_schema
        self.value = values = self.value if type(self.value) is list else list(self.value)
        values[i] = record.value
        self.timestamp[i] = record.timestamp
        self.headers[i] = record.headers if record.has_headers else None

    def add_header(self, i: int, header: Header) -> None:
        """Append ``header`` to row ``i``'s headers, copying them first: the row's headers
        may be the very object of a record the task still holds."""
        own = self.headers[i]
        headers = own.copy() if own else Headers()
        headers.add_header(header)
        self.headers[i] = headers


class StructColumn(Sequence[Struct]):
    """Structs of one schema held as columns of their fields: ``fields[k][i]`` is row
    ``i``'s value of field ``k``. A sequence of ``Struct`` (each made when read), so any
    code may treat it as a column of values; a batch form that reshapes structs (hoist,
    insert, rename, drop fields) reshapes the columns instead, in a few list operations
    per batch rather than a struct per row, and a converter may write it column-wise.

    The values must be valid for their fields' schemas: whoever makes a column checks
    them (``Schema.fits_all``), as ``Struct.put`` would.
    """

    __slots__ = ("fields", "rows", "schema")

    def __init__(self, schema: Schema, fields: list[Sequence[Any]], rows: int | None = None) -> None:
        if len(fields) != len(schema.fields):
            raise ValueError(f"{len(fields)} field columns for the {len(schema.fields)} fields of {schema!r}")
        if rows is None:
            if not fields:
                raise ValueError("a StructColumn of a schema without fields needs its number of rows")
            rows = len(fields[0])
        if any(len(f) != rows for f in fields):
            raise ValueError(f"field columns of a StructColumn of {rows} rows differ in length")
        self.schema = schema
        self.fields = fields
        self.rows = rows

    def __len__(self) -> int:
        return self.rows

    @overload
    def __getitem__(self, index: int) -> Struct: ...

    @overload
    def __getitem__(self, index: slice) -> StructColumn: ...

    def __getitem__(self, index: int | slice) -> Struct | StructColumn:
        if isinstance(index, slice):
            return StructColumn(self.schema, [f[index] for f in self.fields], len(range(self.rows)[index]))
        if not -self.rows <= index < self.rows:
            raise IndexError(f"row {index} of a StructColumn of {self.rows}")
        return Struct.unchecked(self.schema, [f[index] for f in self.fields])

    def __iter__(self) -> Iterator[Struct]:
        unchecked, schema = Struct.unchecked, self.schema
        if not self.fields:
            return (unchecked(schema, []) for _ in range(self.rows))
        return (unchecked(schema, list(row)) for row in zip(*self.fields, strict=True))

    def take(self, rows: Sequence[int]) -> StructColumn:
        """The column of these rows, in this order."""
        return StructColumn(self.schema, [[f[i] for i in rows] for f in self.fields], len(rows))

    def __repr__(self) -> str:
        return f"StructColumn({self.schema!r}, {len(self)} rows)"
