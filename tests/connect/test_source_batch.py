"""SourceRecordBatch: a sequence of SourceRecords held as columns, each made once, when read."""

from __future__ import annotations

import pytest

from connect.api import Schema, SchemaBuilder, SourceRecord, SourceRecordBatch, Struct, StructColumn
from connect.api.record_columns import RecordColumns


def _batch() -> SourceRecordBatch:
    return SourceRecordBatch(
        {"file": "a.txt"},
        [{"position": 4}, {"position": 9}, {"position": 12}],
        "lines",
        Schema.STRING_SCHEMA,
        ["one", "three", "xy"],
        key_schema=Schema.OPTIONAL_STRING_SCHEMA,
        keys=["k1", None, "k3"],
        kafka_partition=2,
        timestamp=1_700_000_000_000,
    )


def test_each_record_is_the_one_the_columns_describe() -> None:
    batch = _batch()
    assert len(batch) == 3
    assert batch[1] == SourceRecord(
        {"file": "a.txt"},
        {"position": 9},
        "lines",
        2,
        Schema.OPTIONAL_STRING_SCHEMA,
        None,
        Schema.STRING_SCHEMA,
        "three",
        1_700_000_000_000,
    )
    assert [r.value for r in batch] == ["one", "three", "xy"]
    assert batch[-1].source_offset == {"position": 12}
    assert [r.value for r in batch[1:]] == ["three", "xy"]


def test_a_record_is_made_once() -> None:
    batch = _batch()
    first = batch[0]
    assert batch[0] is first and next(iter(batch)) is first and batch[-3] is first
    assert list(batch)[2] is batch[2]


def test_no_keys_means_null_keys() -> None:
    batch = SourceRecordBatch(None, [None, None], "t", None, [b"a", b"b"])
    got = [(r.key, r.key_schema, r.source_partition, r.source_offset) for r in batch]
    assert got == [(None, None, None, None)] * 2


def test_out_of_range_and_mismatched_columns_are_refused() -> None:
    batch = _batch()
    with pytest.raises(IndexError, match="record 3 of a batch of 3"):
        batch[3]
    with pytest.raises(IndexError):
        batch[-4]
    with pytest.raises(ValueError, match="2 source offsets for 3 values"):
        SourceRecordBatch(None, [{}, {}], "t", None, [1, 2, 3])
    with pytest.raises(ValueError, match="1 keys for 2 values"):
        SourceRecordBatch(None, [{}, {}], "t", None, [1, 2], keys=["k"])


def test_columns_are_taken_as_they_are_and_a_struct_column_stays_one() -> None:
    schema = SchemaBuilder.struct().field("id", Schema.INT64_SCHEMA).build()
    values = StructColumn(schema, [[1, 2]])
    batch = SourceRecordBatch({"table": "t"}, [{"id": 1}, {"id": 2}], "t", schema, values)
    cols: RecordColumns[SourceRecord] = RecordColumns(batch)
    assert cols.value is values
    assert cols.topic == ["t", "t"] and cols.key == [None, None] and cols.headers == [None, None]
    assert batch._made is None, "no record was made"
    # A record-by-record stage writing a row makes the records a list of their own.
    cols.set_record(1, batch[1].new_record(value=Struct(schema).put("id", 7)))
    assert type(cols.records) is list and cols.records[0] is batch[0]
    assert cols.value[1] == Struct(schema).put("id", 7)


class _Report:
    """A delivery report as confluent-kafka's Message reads (its constructor is not public)."""

    def __init__(self, partition: int, offset: int, ts: int) -> None:
        self._p, self._o, self._ts = partition, offset, ts

    def topic(self) -> str:
        return "t"

    def partition(self) -> int:
        return self._p

    def offset(self) -> int:
        return self._o

    def timestamp(self) -> tuple[int, int]:
        return (1, self._ts)


def test_record_metadata_batch_reads_the_reports_as_records_or_columns() -> None:
    from connect.api.source_batch import RecordMetadataBatch

    meta = RecordMetadataBatch([_Report(2, 10, 5), None, _Report(1, 11, -1)])
    assert len(meta) == 3
    assert (meta.offsets, meta.partitions, meta.timestamps) == ([10, -1, 11], [2, -1, 1], [5, None, None])
    first = meta[0]
    assert first is not None
    assert (first.topic, first.partition, first.offset, first.timestamp) == ("t", 2, 10, 5)
    assert meta[0] is first and meta[-3] is first  # made once
    assert meta[1] is None
    assert [m.offset if m else None for m in meta] == [10, None, 11]
    assert [m.offset if m else None for m in meta[1:]] == [None, 11]
    with pytest.raises(IndexError):
        meta[3]
