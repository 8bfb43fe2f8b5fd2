"""The chain over a batch (``TransformationChain.apply_batch``, batch forms and predicates over
columns) gives exactly what applying the transformations one by one, record by record,
gives: random chains of real SMTs (with and without batch forms, gated by predicates,
negated), random records (with and without schemas, nulls, tombstones, headers, values an
SMT refuses), with error tolerance reporting the same records."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from connect.api import Headers, Schema, SchemaBuilder, SourceRecord, SourceRecordBatch, Struct
from connect.api.record_columns import RecordColumns
from connect.runtime.errors import ErrorReporter, ErrorsConfig, ProcessingContext, RetryWithToleranceOperator
from connect.runtime.plugins import Plugins
from connect.runtime.transformation_chain import TransformationChain, TransformationStage

T = "org.apache.kafka.connect.transforms."
P = T + "predicates."

# (class, settings) of each stage the chains are drawn from.
STAGES: list[tuple[str, dict[str, str]]] = [
    (T + "HoistField$Value", {"field": "line"}),
    (T + "HoistField$Key", {"field": "id"}),
    (T + "InsertField$Value", {"topic.field": "topic", "static.field": "origin", "static.value": "x"}),
    (T + "InsertField$Value", {"timestamp.field": "ts!", "partition.field": "p"}),
    (T + "ReplaceField$Value", {"renames": "line:text,name:who"}),
    (T + "ReplaceField$Value", {"exclude": "n"}),
    (T + "RegexRouter", {"regex": "(.*)-raw", "replacement": "$1-clean"}),
    (T + "InsertHeader", {"header": "pipeline", "value.literal": "bench"}),
    (T + "Filter", {}),
    (T + "MaskField$Value", {"fields": "name"}),  # no batch form: record by record
    (T + "Cast$Value", {"spec": "n:string"}),  # no batch form, and refuses some values
    (T + "HeaderFrom$Value", {"fields": "name", "headers": "who", "operation": "copy"}),
]
PREDICATES: list[tuple[str, dict[str, str]]] = [
    (P + "TopicNameMatches", {"pattern": ".*-raw"}),
    (P + "RecordIsTombstone", {}),
    (P + "HasHeaderKey", {"name": "pipeline"}),
]

PERSON = (
    SchemaBuilder.struct()
    .field("name", Schema.OPTIONAL_STRING_SCHEMA)
    .field("n", Schema.INT32_SCHEMA)
    .build()
)


class Recording(ErrorReporter):
    def __init__(self) -> None:
        self.failed: list[Any] = []

    def report(self, ctx: ProcessingContext) -> Future[None]:
        self.failed.append(ctx.source_record)
        f: Future[None] = Future()
        f.set_result(None)
        return f


def _chain(picks: list[tuple[int, int | None, bool]]) -> TransformationChain[Any]:
    plugins = Plugins()
    stages = []
    for n, (stage, predicate, negate) in enumerate(picks):
        cls, conf = STAGES[stage]
        pred = None
        if predicate is not None:
            pcls, pconf = PREDICATES[predicate]
            pred = plugins.new_predicate(pcls, pconf)
        stages.append(TransformationStage(f"s{n}", plugins.new_transformation(cls, conf), pred, negate))
    return TransformationChain(stages)


values = st.one_of(
    st.tuples(st.none(), st.none()),  # a tombstone
    st.tuples(st.just(Schema.OPTIONAL_STRING_SCHEMA), st.one_of(st.none(), st.text(max_size=5))),
    st.tuples(st.just(Schema.STRING_SCHEMA), st.text(max_size=5)),
    st.tuples(st.none(), st.text(max_size=5)),
    st.tuples(st.none(), st.fixed_dictionaries({"line": st.text(max_size=3), "n": st.integers(-5, 5)})),
    st.tuples(st.none(), st.fixed_dictionaries({"name": st.text(max_size=3), "n": st.text(max_size=2)})),
    st.tuples(
        st.just(PERSON),
        st.builds(
            lambda name, n: Struct(PERSON).put("name", name).put("n", n),
            st.none() | st.text(max_size=3),
            st.integers(-9, 9),
        ),
    ),
    st.tuples(st.none(), st.integers()),  # no map, no struct: most SMTs refuse it
)


# (stage, predicate or None, negate) of each stage of a chain.
CHAINS = st.lists(
    st.tuples(
        st.integers(0, len(STAGES) - 1), st.none() | st.integers(0, len(PREDICATES) - 1), st.booleans()
    ),
    max_size=6,
)


@st.composite
def records(draw: st.DrawFn) -> SourceRecord:
    schema, value = draw(values)
    headers = None
    if draw(st.booleans()):
        headers = Headers()
        for key in draw(st.lists(st.sampled_from(["pipeline", "a", "b"]), max_size=2)):
            headers.add(key, draw(st.text(max_size=3)), Schema.STRING_SCHEMA)
    return SourceRecord(
        {"file": "f"},
        {"position": draw(st.integers(0, 100))},
        draw(st.sampled_from(["orders-raw", "orders", "x-raw"])),
        draw(st.none() | st.integers(0, 3)),
        None,
        draw(st.none() | st.text(max_size=3)),
        schema,
        value,
        draw(st.none() | st.integers(0, 2**40)),
        headers,
    )


@st.composite
def uniform_batches(draw: st.DrawFn) -> list[SourceRecord]:
    """Batches whose values all share one schema (a topic's usual poll): where batch forms
    hold structs column-wise (StructColumn) rather than row by row."""
    schema, values_of = draw(
        st.sampled_from(
            [
                (Schema.STRING_SCHEMA, st.text(max_size=4)),
                (Schema.OPTIONAL_STRING_SCHEMA, st.none() | st.text(max_size=4)),
                (
                    PERSON,
                    st.builds(
                        lambda name, n: Struct(PERSON).put("name", name).put("n", n),
                        st.none() | st.text(max_size=3),
                        st.integers(-9, 9),
                    ),
                ),
            ]
        )
    )
    out = []
    for record in draw(st.lists(records(), min_size=1, max_size=10)):
        out.append(record.new_record(value_schema=schema, value=draw(values_of)))
    return out


def _operator() -> tuple[RetryWithToleranceOperator, Recording]:
    reporter = Recording()
    return RetryWithToleranceOperator(ErrorsConfig(tolerate_all=True), "c", 0, [reporter]), reporter


def _fields(r: Any) -> tuple[Any, ...]:
    headers = [(h.key, h.value, h.schema) for h in r.headers] if r.has_headers else []
    return (r.topic, r.kafka_partition, r.key_schema, r.key, r.value_schema, r.value, r.timestamp, headers)


@settings(max_examples=300, deadline=None)
@given(
    CHAINS,
    st.lists(records(), max_size=12),
)
def test_a_chain_over_a_batch_equals_the_chain_record_by_record(
    picks: list[tuple[int, int | None, bool]], batch: list[SourceRecord]
) -> None:
    _check_chain(picks, batch)


@settings(max_examples=300, deadline=None)
@given(
    CHAINS,
    uniform_batches(),
)
def test_a_chain_over_a_batch_of_one_schema_equals_the_chain_record_by_record(
    picks: list[tuple[int, int | None, bool]], batch: list[SourceRecord]
) -> None:
    _check_chain(picks, batch)


@st.composite
def source_record_batches(draw: st.DrawFn) -> SourceRecordBatch:
    """What a task returns as columns: one topic and source partition, values of one schema."""
    schema, values_of = draw(
        st.sampled_from(
            [
                (Schema.STRING_SCHEMA, st.text(max_size=4)),
                (None, st.fixed_dictionaries({"line": st.text(max_size=3), "n": st.integers(-5, 5)})),
                (
                    PERSON,
                    st.builds(
                        lambda name, n: Struct(PERSON).put("name", name).put("n", n),
                        st.none() | st.text(max_size=3),
                        st.integers(-9, 9),
                    ),
                ),
            ]
        )
    )
    values = draw(st.lists(values_of, max_size=10))
    keys = draw(st.none() | st.lists(st.text(max_size=2), min_size=len(values), max_size=len(values)))
    return SourceRecordBatch(
        {"file": "f"},
        [{"position": i} for i in range(len(values))],
        draw(st.sampled_from(["orders-raw", "orders"])),
        schema,
        values,
        key_schema=None if keys is None else Schema.STRING_SCHEMA,
        keys=keys,
        kafka_partition=draw(st.none() | st.integers(0, 3)),
        timestamp=draw(st.none() | st.integers(0, 2**40)),
    )


@settings(max_examples=300, deadline=None)
@given(
    CHAINS,
    source_record_batches(),
)
def test_a_chain_over_a_source_record_batch_equals_the_chain_record_by_record(
    picks: list[tuple[int, int | None, bool]], batch: SourceRecordBatch
) -> None:
    # The batch's columns go through the chain as they are; its records, made when a
    # record-by-record stage or a report reads them, are the ones record by record sees.
    _check_chain(picks, batch)


def _check_chain(picks: list[tuple[int, int | None, bool]], batch: Sequence[SourceRecord]) -> None:
    chain = _chain(picks)
    op_one, reported_one = _operator()
    expected: list[tuple[int, tuple[Any, ...]]] = []
    skipped = 0
    for i, record in enumerate(batch):
        out, was_skipped = chain.apply(record, op_one, lambda r=record: {"source_record": r})
        skipped += was_skipped
        if out is not None:
            expected.append((i, _fields(out)))

    before = [_fields(r) for r in batch]
    op_batch, reported_batch = _operator()
    got = _chain(picks).apply_batch(batch, op_batch, lambda r: {"source_record": r})
    rows = [(got.origin[j], _fields(got.columns.record(j))) for j in range(len(got.columns))]
    assert rows == expected
    assert got.skipped == skipped
    # The same records are reported, the task's originals; stage by stage rather than
    # record by record, so in another order when several stages fail.
    assert sorted(map(id, reported_batch.failed)) == sorted(map(id, reported_one.failed))
    assert [_fields(r) for r in batch] == before, "the task's records are left as they were"


def test_a_batch_form_that_raises_leaves_nothing_half_done() -> None:
    """One record the batch form refuses: the stage runs again record by record, the good
    records come out transformed once, the bad one is reported and skipped."""
    chain = _chain([(2, None, False), (4, None, False)])  # InsertField, then ReplaceField
    good = SourceRecord(None, None, "t", None, None, None, None, {"line": "a"})
    bad = SourceRecord(None, None, "t", None, None, None, None, 42)
    op, reported = _operator()
    out = chain.apply_batch([good, bad, good], op, lambda r: {"source_record": r})
    assert out.origin == [0, 2]
    assert [out.columns.value[j] for j in range(2)] == [{"text": "a", "topic": "t", "origin": "x"}] * 2
    assert out.skipped == 1 and reported.failed == [bad]


def test_columns_of_records_round_trip() -> None:
    h = Headers()
    h.add("k", "v", Schema.STRING_SCHEMA)
    r = SourceRecord({"p": 1}, {"o": 2}, "t", 3, Schema.STRING_SCHEMA, "key", None, {"a": 1}, 99, h)
    cols = RecordColumns([r])
    again = cols.record(0)
    assert again == r and again is not r
    assert again.headers is not r.headers  # a change to the copy's headers leaves the record's alone
