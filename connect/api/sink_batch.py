"""What ``SinkTask.put`` receives: a poll's records, made when first read, and their values
in the raw form the worker already holds.

``SinkRecordBatch`` is a sequence of ``SinkRecord``: a sink written against "a list of
records" iterates it as it always did. Making a ``SinkRecord`` and decoding its value is
most of what a sink worker spends per record, and a sink that writes each value back out
as it came (JSON documents into objects or an index, lines of text into a file) gains
nothing from either; so the records are made only when something reads them, and one
accessor offers the values as consumed::

    def put(self, records: SinkRecordBatch) -> None:
        runs = records.value_runs("json")
        if runs is not None:                        # every value is a JSON document
            for run in runs:                        # one topic partition, offsets ascending
                self.writer(run.topic, run.partition).write_lines(run.offsets, run.texts)
            return
        for record in records:                      # anything else: the records
            ...

``value_runs(form)`` gives the batch's values as runs of one topic partition, each value
being the bytes consumed, or None when the batch cannot: a transformation changed the
records, the value converter does not read the values in that form, or a value is null or
not of the form (malformed JSON, bytes that are not UTF-8), where the records, error
tolerance and the dead letter queue take over. The forms:

- ``"json"``: each text is one JSON document (RFC 8259, valid UTF-8, never ``null``) that
  the value converter reads as the record's value, without a schema (``JsonConverter``
  with ``schemas.enable=false``). It is the producer's text, not re-encoded: whitespace and
  the spelling of numbers are the producer's, and it may span lines.
- ``"text"``: each text is valid UTF-8 and the value is the string it encodes
  (``StringConverter``).

Asking costs a check of the values (about 0.1 us each), not their decoding; the answer is
kept, so asking twice costs nothing. ``run.records`` are a run's records, should a sink
want both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Literal, overload

from connect.api.records import SinkRecord

RawForm = Literal["json", "text"]

# (topic, partition, offsets, texts, index of the run's first record in the batch)
_RunTuple = tuple[str, int, Sequence[int], Sequence[bytes], int]


class ValueRun:
    """Consecutive records of one topic partition, in offset order: ``offsets[i]`` and
    ``texts[i]`` (the value as the bytes consumed) are one record's."""

    __slots__ = ("_batch", "_start", "form", "offsets", "partition", "texts", "topic")

    def __init__(
        self,
        topic: str,
        partition: int,
        offsets: Sequence[int],
        texts: Sequence[bytes],
        form: RawForm,
        batch: SinkRecordBatch,
        start: int,
    ) -> None:
        self.topic = topic
        self.partition = partition
        self.offsets = offsets
        self.texts = texts
        self.form = form
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
        return f"ValueRun({self.form}, {where}, {len(self.texts)} records from offset {first})"


class SinkRecordBatch(Sequence[SinkRecord]):
    """One ``put``'s records, made when first read, and their values as consumed.

    Only the worker makes batches with raw values (``runs``, ``make_records`` and
    ``raw_form``); ``SinkRecordBatch.of(records)`` wraps records a test or a sink's own
    code already has.
    """

    # The batch keeps its runs as plain tuples and makes the run objects when asked: a run
    # refers to its batch (``run.records``), and a batch holding its runs would be a
    # reference cycle, freed only by the cyclic garbage collector. A poll's messages then
    # stayed alive for collections to traverse, which made the consumer 1.7 times slower.
    __slots__ = ("_count", "_forms", "_make_records", "_raw_form", "_records", "_runs")

    def __init__(
        self,
        runs: Sequence[tuple[str, int, Sequence[int], Sequence[bytes]]],
        make_records: Callable[[], list[SinkRecord]],
        raw_form: Callable[[RawForm], bool],
    ) -> None:
        out: list[_RunTuple] = []
        start = 0
        for topic, partition, offsets, texts in runs:
            if len(offsets) != len(texts):
                raise ValueError(
                    f"a run of {topic}-{partition} has {len(offsets)} offsets and {len(texts)} texts"
                )
            out.append((topic, partition, offsets, texts, start))
            start += len(texts)
        self._runs = tuple(out)
        self._count = start
        self._make_records = make_records
        self._raw_form = raw_form
        self._forms: dict[RawForm, bool] = {}
        self._records: list[SinkRecord] | None = None

    @classmethod
    def of(cls, records: Sequence[SinkRecord]) -> SinkRecordBatch:
        """A batch of records already made; it offers no raw values."""
        batch = cls((), list, _no_raw_form)
        batch._records = list(records)
        batch._count = len(batch._records)
        return batch

    def value_runs(self, form: RawForm) -> tuple[ValueRun, ...] | None:
        """The values as runs of the bytes consumed, when every value of the batch is of
        ``form`` and is read as such (see the module's description); else None."""
        known = self._forms.get(form)
        if known is None:
            known = self._forms[form] = bool(self._runs) and self._raw_form(form)
        if not known:
            return None
        return tuple(
            ValueRun(t, p, offs, texts, form, self, start) for t, p, offs, texts, start in self._runs
        )

    def _made(self) -> list[SinkRecord]:
        records = self._records
        if records is None:
            records = self._records = self._make_records()
            self._count = len(records)
        return records

    @property
    def records_made(self) -> bool:
        """Whether the records exist yet (something read one)."""
        return self._records is not None

    def __len__(self) -> int:
        # Values of a raw form convert without fail, so their count is the records' count;
        # otherwise error tolerance may skip some, which only making them tells.
        if self._records is None and not any(self._forms.values()):
            return len(self._made())
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
        made = "made" if self._records is not None else "not made yet"
        return f"SinkRecordBatch({self._count} records, {made}, in {len(self._runs)} runs)"


def _no_raw_form(form: RawForm) -> bool:
    return False
