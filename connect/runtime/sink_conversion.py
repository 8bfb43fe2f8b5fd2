"""A poll's messages to what ``SinkTask.put`` receives: one walk, from messages to a
``SinkRecordBatch``, with no call back into the runner.

Each run of one topic is converted as columns: the messages' fields read with C-level
maps, headers and keys converted at once, values by one ``to_connect_batch`` call. A
converter may leave decoding until a value is read (``ConvertedBatch``): then, without
transformations, the records are made only when the task reads one, and a task that
copies values asks for them as consumed (``SinkRecordBatch.value_runs``), making none.
With transformations the records are made at once and go through the chain as one batch.
Should a converter refuse a run, it is converted again one record at a time, where the
failing record goes through the tolerance operator (which retries, reports and maybe
skips it, naming the message it came from).

``benchmarks/file_pipeline.py`` (topic → file) and ``benchmarks/s3_sink.py`` measure what
making no record per message is worth.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import groupby, repeat
from typing import Any

from confluent_kafka import Message

from connect.api.converter import ConvertedBatch, Converter, HeaderConverter
from connect.api.errors import ConnectException
from connect.api.headers import Headers
from connect.api.records import SinkRecord, TimestampType
from connect.api.sink_batch import RawForm, SinkRecordBatch
from connect.runtime.errors import TOLERATED, RawRecord, RetryWithToleranceOperator, Stage
from connect.runtime.transformation_chain import TransformationChain

_TIMESTAMP_TYPES = {
    0: TimestampType.NO_TIMESTAMP_TYPE,
    1: TimestampType.CREATE_TIME,
    2: TimestampType.LOG_APPEND_TIME,
}


@dataclass(slots=True)
class _TopicRun:
    """One topic's messages of a poll, with what is converted of them so far."""

    topic: str
    messages: list[Message]
    partitions: list[int]
    offsets: list[int]
    headers: list[Any]  # Connect headers, None, or TOLERATED for a record skipped
    keys: ConvertedBatch | None  # None: convert this run record by record
    values: ConvertedBatch | None


class SinkConversion:
    """The converters, chain and error handling of one sink task, applied to its polls."""

    def __init__(
        self,
        key_converter: Converter,
        value_converter: Converter,
        header_converter: HeaderConverter,
        chain: TransformationChain[Any],
        operator: RetryWithToleranceOperator,
        on_skipped: Callable[[int], None],
    ) -> None:
        self.key_converter = key_converter
        self.value_converter = value_converter
        self.header_converter = header_converter
        self.chain = chain
        self.operator = operator
        self.on_skipped = on_skipped

    def batch(
        self, messages: list[Message], topics: list[str], partitions: list[int], offsets: list[int]
    ) -> SinkRecordBatch:
        """The records of a poll's messages (events already left out), as ``put`` gets them."""
        values: list[bytes] = list(map(Message.value, messages))  # type: ignore[arg-type]
        runs = [
            self._prepare(topics[s], messages[s:e], partitions[s:e], offsets[s:e], values[s:e])
            for s, e in spans(topics)
        ]
        if self.chain.stages:
            records = [r for run in runs for r in self._records(run)]
            return SinkRecordBatch.of(self._transform(records, messages) if records else records)
        partition_runs = [
            (topics[s], partitions[s], offsets[s:e], values[s:e]) for s, e in spans(topics, partitions)
        ]

        def make_records() -> list[SinkRecord]:
            return [r for run in runs for r in self._records(run)]

        def raw_form(form: RawForm) -> bool:
            # Every record is there (none skipped) and every value is the datum in that form.
            return all(
                run.values is not None and TOLERATED not in run.headers and run.values.is_raw(form)
                for run in runs
            )

        return SinkRecordBatch(partition_runs, make_records, raw_form)

    def _prepare(
        self,
        topic: str,
        messages: list[Message],
        partitions: list[int],
        offsets: list[int],
        values: list[bytes],
    ) -> _TopicRun:
        """Headers and keys converted, values handed to their converter (which may decode
        them later); a converter that refuses leaves the run to go record by record."""
        n = len(messages)
        headers: list[Any] = list(map(Message.headers, messages))
        if headers.count(None) != n:
            headers = self._convert_headers(topic, messages, headers)
        run = _TopicRun(topic, messages, partitions, offsets, headers, None, None)
        try:
            run.keys = self._convert_keys(topic, messages)
            run.values = self.value_converter.to_connect_batch(topic, values)
        except Exception:
            run.keys = None
            return run
        return run

    def _records(self, run: _TopicRun) -> list[SinkRecord]:
        """A SinkRecord of each message of a run, leaving out those error tolerance skipped."""
        n = len(run.messages)
        keys, values = run.keys, run.values
        if keys is None or values is None or not _counts(values, n):
            keys, values = self._convert_each(run)
        skipped = run.headers.count(TOLERATED)
        if skipped:
            self.on_skipped(skipped)
        if not n:
            return []
        kinds, stamps = zip(*map(Message.timestamp, run.messages), strict=True)
        timestamp_types: Iterable[str]
        if kinds.count(1) == n:  # CreateTime, what producers set
            timestamp_types = repeat(TimestampType.CREATE_TIME, n)
        else:
            create_time = TimestampType.CREATE_TIME
            timestamp_types = [_TIMESTAMP_TYPES.get(kind, create_time) for kind in kinds]
            stamps = tuple(ts if kind else None for kind, ts in zip(kinds, stamps, strict=True))
        # One C-level map of the constructor over the columns (all of n rows: converted
        # above): a loop making each record cost a quarter more (benchmarks/jdbc_sink.py).
        out = list(
            map(
                SinkRecord,
                repeat(run.topic, n),
                run.partitions,
                keys.schemas,
                keys.values,
                values.schemas,
                values.values,
                stamps,
                run.headers,
                run.offsets,
                timestamp_types,
            )
        )
        if skipped:
            out = [r for r, h in zip(out, run.headers, strict=True) if h is not TOLERATED]
        return out

    def _convert_keys(self, topic: str, messages: list[Message]) -> ConvertedBatch:
        """Keys of a run by one converter call; raises if one is refused."""
        n = len(messages)
        raw_keys = list(map(Message.key, messages))
        if raw_keys.count(None) == n:  # most keys are null: convert null once
            null = self.key_converter.to_connect_data(topic, None)
            return ConvertedBatch([null.schema] * n, [null.value] * n)
        keys = self.key_converter.to_connect_batch(topic, raw_keys)
        if not len(keys.schemas) == len(keys.values) == n:
            raise ConnectException("to_connect_batch returned a different number of keys than given")
        return keys

    def _convert_each(self, run: _TopicRun) -> tuple[ConvertedBatch, ConvertedBatch]:
        """Keys and values of a run one record at a time: a failing conversion goes to the
        tolerance operator as its first attempt (never run twice), which retries, reports or
        skips; a skipped record is marked TOLERATED in the run's headers."""
        topic, headers = run.topic, run.headers
        key_to = self.key_converter.to_connect_data
        value_to = self.value_converter.to_connect_data
        n = len(run.messages)
        key_schemas: list[Any] = [None] * n
        key_values: list[Any] = [None] * n
        value_schemas: list[Any] = [None] * n
        value_values: list[Any] = [None] * n
        for i, msg in enumerate(run.messages):
            if headers[i] is TOLERATED:
                continue
            raw_key, raw_value = msg.key(), msg.value()
            key: Any
            value: Any
            try:
                key = key_to(topic, raw_key)
            except Exception as exc:
                key = self._recover(
                    Stage.KEY_CONVERTER, self.key_converter, partial(key_to, topic, raw_key), exc, msg
                )
            try:
                value = value_to(topic, raw_value)
            except Exception as exc:
                value = self._recover(
                    Stage.VALUE_CONVERTER, self.value_converter, partial(value_to, topic, raw_value), exc, msg
                )
            if key is TOLERATED or value is TOLERATED:
                headers[i] = TOLERATED
                continue
            key_schemas[i], key_values[i] = key
            value_schemas[i], value_values[i] = value
        return ConvertedBatch(key_schemas, key_values), ConvertedBatch(value_schemas, value_values)

    def _convert_headers(self, topic: str, messages: list[Message], raw: list[Any]) -> list[Any]:
        """Connect headers for each message that has any (None for the rest; TOLERATED for
        one whose headers failed and were skipped under errors.tolerance=all)."""
        out: list[Any] = [None] * len(raw)
        for i, (msg, headers) in enumerate(zip(messages, raw, strict=True)):
            if headers:
                try:
                    out[i] = self.headers(topic, headers)
                except Exception as exc:
                    out[i] = self._recover(
                        Stage.HEADER_CONVERTER,
                        self.header_converter,
                        partial(self.headers, topic, headers),
                        exc,
                        msg,
                    )
        return out

    def headers(self, topic: str, raw: Any) -> Headers:
        convert = self.header_converter.to_connect_header
        out = Headers()
        for k, v in raw:
            sv = convert(topic, k, v)
            out.add(k, sv.value, sv.schema)
        return out

    def _transform(self, records: list[SinkRecord], messages: list[Message]) -> list[SinkRecord]:
        """The chain over the poll's records as one batch; a failing record's report names
        the message it came from (found by its coordinates: only failures ask)."""

        def context(original: SinkRecord) -> dict[str, Any]:
            where = (
                original.original_kafka_partition,
                original.original_kafka_offset,
                original.original_topic,
            )
            msg = next(m for m in messages if (m.partition(), m.offset(), m.topic()) == where)
            return consumed_context(msg)

        out = self.chain.apply_batch(records, self.operator, context)
        if out.skipped:
            self.on_skipped(out.skipped)
        columns = out.columns
        return [columns.record(j) for j in range(len(columns))]

    def _recover(
        self, stage: Stage, converter: object, fn: Callable[[], Any], error: Exception, msg: Message
    ) -> Any:
        return self.operator.execute(
            stage, class_name(converter), fn, first_error=error, consumed=raw_record(msg)
        )


def _counts(values: ConvertedBatch, n: int) -> bool:
    """Whether a (maybe deferred) converted batch decodes to ``n`` values; False when the
    decoding raises, so the run goes record by record."""
    try:
        return len(values.schemas) == len(values.values) == n
    except Exception:
        return False


def spans(*columns: Sequence[Any]) -> list[tuple[int, int]]:
    """(start, end) of each run of messages alike in every column (one topic; one topic
    partition), in a poll's order."""
    n = len(columns[0])
    if all(c.count(c[0]) == n for c in columns):  # the usual poll: a single run
        return [(0, n)]
    out = []
    start = 0
    for _, run in groupby(zip(*columns, strict=True)):
        end = start + sum(1 for _ in run)
        out.append((start, end))
        start = end
    return out


def consumed_context(msg: Message) -> dict[str, Any]:
    return {"consumed": raw_record(msg)}


def raw_record(msg: Message) -> RawRecord:
    """A consumed message as the dead letter queue takes it."""
    kind, ts = msg.timestamp()
    headers: list[tuple[str, Any]] = msg.headers() or []  # type: ignore[assignment]
    return RawRecord(
        msg.topic() or "",
        msg.partition() or 0,
        msg.offset() or 0,
        ts if kind else None,
        msg.key(),
        msg.value(),
        tuple((k, v if v is None or isinstance(v, bytes) else str(v).encode()) for k, v in headers),
    )


def class_name(obj: object) -> str:
    t = type(obj)
    return f"{t.__module__}.{t.__qualname__}"
