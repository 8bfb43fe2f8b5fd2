"""Sink batches whose values are still the JSON (or UTF-8) text that was consumed.

Making a ``SinkRecord`` per message and decoding its JSON value is most of what a sink
worker spends per record. A sink that writes each value back out as JSON (JSON lines
into objects, documents into an index) gains nothing from either: it can copy the text.
Such a task says so with ``SinkTask.accepts_json_runs``; then, where no transformation
is configured and the value converter reads schemaless JSON, the worker checks that a
poll's values are JSON documents without decoding them and hands ``put`` a
``SinkRecordBatch``. Its ``json_runs`` are the poll's records as runs of one topic
partition: offsets and texts, two columns, no objects per record::

    def put(self, records):
        if isinstance(records, SinkRecordBatch):
            for run in records.json_runs:
                self.writer(run.topic, run.partition).write_lines(run.offsets, run.texts)
            return
        for record in records:          # a plain batch: anything the worker could not keep as text
            ...

Each text is one JSON document (RFC 8259, valid UTF-8, never ``null``) that the value
converter reads as the record's value, without a schema. It is the producer's text, not
re-encoded: whitespace and the spelling of numbers are the producer's, and it may span
lines. The batch is also an ordinary sequence of ``SinkRecord``: the records are made,
values decoded, the first time one is read, so a sink can fall back to records for a run
(``run.records``) or for the whole batch.

Text runs are the same for plain text: a task that says ``SinkTask.accepts_text_runs``,
reading values through a converter that decodes them as UTF-8 strings (StringConverter),
gets a poll whose values are all valid UTF-8 as ``records.text_runs``: each text is the
bytes the string value encodes to, as consumed. A batch holds runs of one kind only; the
other attribute is empty.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Literal, TypeVar, overload

from connect.api.records import SinkRecord

RunKind = Literal["json", "text"]


class ValueRun:
    """Consecutive records of one topic partition, in offset order: ``offsets[i]`` and
    ``texts[i]`` (the value as the bytes consumed) are one record's."""

    __slots__ = ("_batch", "_start", "offsets", "partition", "texts", "topic")

    def __init__(
        self,
        topic: str,
        partition: int,
        offsets: Sequence[int],
        texts: Sequence[bytes],
        batch: SinkRecordBatch,
        start: int,
    ) -> None:
        self.topic = topic
        self.partition = partition
        self.offsets = offsets
        self.texts = texts
        self._batch = batch
        self._start = start

    def __len__(self) -> int:
        return len(self.texts)

    @property
    def records(self) -> Sequence[SinkRecord]:
        """The run's records (the batch's records are made on first use)."""
        return self._batch[self._start : self._start + len(self.texts)]

    def __repr__(self) -> str:
        first = self.offsets[0] if self.offsets else None
        where = f"{self.topic}-{self.partition}"
        return f"{type(self).__name__}({where}, {len(self.texts)} records from offset {first})"


class JsonRun(ValueRun):
    """A run whose texts are each one JSON document, the value read without a schema."""

    __slots__ = ()


class TextRun(ValueRun):
    """A run whose texts are each valid UTF-8, the value being the string they encode."""

    __slots__ = ()


_Run = TypeVar("_Run", bound=ValueRun)


class SinkRecordBatch(Sequence[SinkRecord]):
    """One ``put``'s records as JSON (or text) runs, and as SinkRecords made when first read.

    ``runs`` are ``(topic, partition, offsets, texts)`` in the batch's order, of the
    ``kind`` given; ``make_records`` makes the records, in the same order, when one is
    first read. Only the worker makes batches; tests may make their own.
    """

    # The batch keeps its runs as plain tuples and makes the run objects when asked: a run
    # refers to its batch (``run.records``), and a batch holding its runs would be a
    # reference cycle, freed only by the cyclic garbage collector. A poll's messages then
    # stayed alive for collections to traverse, which made the consumer 1.7 times slower.
    __slots__ = ("_count", "_make_records", "_records", "_runs", "kind")

    def __init__(
        self,
        runs: Sequence[tuple[str, int, Sequence[int], Sequence[bytes]]],
        make_records: Callable[[], list[SinkRecord]],
        kind: RunKind = "json",
    ) -> None:
        out = []
        start = 0
        for topic, partition, offsets, texts in runs:
            if len(offsets) != len(texts):
                raise ValueError(
                    f"a run of {topic}-{partition} has {len(offsets)} offsets and {len(texts)} texts"
                )
            out.append((topic, partition, offsets, texts, start))
            start += len(texts)
        self.kind = kind
        self._runs = tuple(out)
        self._count = start
        self._make_records = make_records
        self._records: list[SinkRecord] | None = None

    @property
    def json_runs(self) -> tuple[JsonRun, ...]:
        """The runs when the texts are JSON documents (``kind == "json"``), else empty."""
        return self._made_runs("json", JsonRun)

    @property
    def text_runs(self) -> tuple[TextRun, ...]:
        """The runs when the texts are UTF-8 strings (``kind == "text"``), else empty."""
        return self._made_runs("text", TextRun)

    def _made_runs(self, kind: RunKind, run_class: type[_Run]) -> tuple[_Run, ...]:
        if self.kind != kind:
            return ()
        return tuple(run_class(t, p, offs, texts, self, start) for t, p, offs, texts, start in self._runs)

    def _made(self) -> list[SinkRecord]:
        records = self._records
        if records is None:
            records = self._records = self._make_records()
            if len(records) != self._count:
                raise RuntimeError(f"{len(records)} records were made for a batch of {self._count}")
        return records

    @property
    def records_made(self) -> bool:
        """Whether the records exist yet (something read one)."""
        return self._records is not None

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> SinkRecord: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[SinkRecord]: ...

    def __getitem__(self, index: int | slice) -> SinkRecord | Sequence[SinkRecord]:
        return self._made()[index]

    def __iter__(self) -> Iterator[SinkRecord]:
        return iter(self._made())

    def __repr__(self) -> str:
        return f"SinkRecordBatch({self._count} records in {len(self._runs)} {self.kind} runs)"
