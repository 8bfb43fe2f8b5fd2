"""The writer's run-at-a-time parameters (``Bound.rows``, ``Writer._prepare_rows``) against
the record-by-record ones (``Bound.params``), on every dialect and primary-key mode, with
hypothesis: the same runs, the same parameters, the same bad records reported. And SQLite's
short way of writing a UTC Timestamp gives SQLAlchemy's text."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.dialects import sqlite

from connect.api import DataException, Schema, SchemaBuilder, SinkRecord, Struct, Timestamp
from connectors.jdbc.sink.types import compose, sqlite_utc_timestamp, value_converter
from connectors.jdbc.sink.writer import Prepared, Writer
from tests.connectors.jdbc.test_sink_round_trips import ALL_TYPES, fresh_target, values
from tests.connectors.jdbc.test_sink_writer import DIALECTS, Target

KEY = SchemaBuilder.struct().field("id", Schema.INT64_SCHEMA).build()
# The same schema as another object: records of it make a group of their own.
ALL_TYPES_AGAIN = SchemaBuilder.struct()
for _f in ALL_TYPES.fields:
    ALL_TYPES_AGAIN.field(_f.name, _f.schema)
ROW_AGAIN = ALL_TYPES_AGAIN.build()

# (pk.mode, key kind); record_key keys are INT64 values (pk.fields=id) or KEY structs.
MODES = [
    ("none", None),
    ("kafka", None),
    ("record_key", "int"),
    ("record_key", "struct"),
    ("record_value", None),
]


def records_of(kind: str) -> st.SearchStrategy[list[tuple[str, Any]]]:
    """A batch's records as (what, row values): mostly rows, with tombstones, values
    without a schema and keys that are null among them."""
    what = st.sampled_from(["row"] * 8 + ["again", "other-topic", "tombstone", "text", "null-key"])
    return st.lists(st.tuples(what, values(kind)), min_size=1, max_size=30)


def make(batch: list[tuple[str, Any]], key_kind: str | None) -> list[SinkRecord]:
    out = []
    for offset, (what, row) in enumerate(batch):
        id_ = offset % 7  # repeated keys
        schema = ROW_AGAIN if what == "again" else ALL_TYPES
        value: Any = Struct(schema).put("id", id_)
        for k, v in row.items():
            value.put(k, v)
        value_schema: Schema | None = schema
        if what == "tombstone":
            value, value_schema = None, None
        elif what == "text":
            value, value_schema = "not a row", Schema.STRING_SCHEMA
        key: Any
        key_schema: Schema | None
        if key_kind == "struct":
            key, key_schema = Struct(KEY).put("id", id_), KEY
        else:
            key, key_schema = (None if what == "null-key" else id_), Schema.INT64_SCHEMA
        topic = "others" if what == "other-topic" else "rows"
        out.append(SinkRecord(topic, offset % 2, key_schema, key, value_schema, value, kafka_offset=offset))
    return out


def plain(params: Any) -> Any:
    """Parameters comparable: psycopg's ``Binary`` wrappers (bytes values) compare by identity."""
    values = params.values() if isinstance(params, dict) else params
    return [("Binary", bytes(v.obj)) if type(v).__name__ == "Binary" else v for v in values]


def shape(prepared: Prepared | None) -> list[tuple[Any, ...]]:
    if prepared is None:
        return []
    return [
        (
            run.bound.sql if run.bound is not None else None,
            run.bound.plan.table if run.bound is not None else None,
            [(r.topic, r.kafka_partition, r.kafka_offset) for r in run.records],
            [plain(p) for p in run.params],
            [list(p) if isinstance(p, dict) else None for p in run.params],
            run.truncate is not None,
        )
        for run in prepared.runs
    ]


@pytest.mark.parametrize(("pk_mode", "key_kind"), MODES)
@pytest.mark.parametrize("kind", DIALECTS)
def test_a_run_by_columns_is_its_records_one_by_one(
    kind: str,
    pk_mode: str,
    key_kind: str | None,
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    target = fresh_target(kind, request, tmp_path_factory)
    props: dict[str, Any] = {
        "auto_create": "true",
        "insert_mode": "insert" if pk_mode == "none" else "upsert",
        "pk_mode": pk_mode,
        "table_name_format": "t_${topic}",
        "delete_enabled": str(pk_mode == "record_key").lower(),
    }
    if pk_mode in ("record_key", "record_value"):
        props["pk_fields"] = "id"

    def writer(reports: list[tuple[int, str]]) -> Writer:
        s = target.settings(**props)
        return Writer(s, sa.create_engine(s.url.url), lambda r, e: reports.append((r.kafka_offset, str(e))))

    @given(records_of(kind))
    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    def check(batch: list[tuple[str, Any]]) -> None:
        by_runs: list[tuple[int, str]] = []
        by_records: list[tuple[int, str]] = []
        records = make(batch, key_kind)
        prepared = writer(by_runs).prepare(records)  # creates the tables first
        one_by_one = writer(by_records)
        runs: list[Any] = []
        one_by_one._prepare_records(records, runs)
        assert shape(prepared) == shape(Prepared(runs, {}) if runs else None)
        assert by_runs == by_records
        for run in prepared.runs if prepared is not None else ():
            assert run.bound is not None
            assert [plain(p) for p in run.params] == [
                plain(run.bound.params(r, r.value)) for r in run.records
            ]

    try:
        check()
    finally:
        target.engine.dispose()


def test_a_run_with_a_bad_record_reports_it_alone(tmp_path_factory: pytest.TempPathFactory) -> None:
    target = Target("sqlite", f"sqlite:///{tmp_path_factory.mktemp('rows') / 'r.db'}")
    reports: list[tuple[SinkRecord, DataException]] = []
    s = target.settings(auto_create="true", insert_mode="upsert", pk_mode="record_key", pk_fields="id")
    w = Writer(s, sa.create_engine(s.url.url), lambda r, e: reports.append((r, e)))
    records = make([("row", {}), ("null-key", {}), ("row", {})], "int")
    w.write(records)
    assert [(r.kafka_offset, str(e)) for r, e in reports] == [
        (1, "record rows-1@1: primary key column id has no value")
    ]
    assert target.rows("rows") == [(0, *[None] * 13), (2, *[None] * 13)]


instants = st.datetimes(
    dt.datetime(1, 1, 1),
    dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
    timezones=st.none() | st.just(dt.UTC) | st.timezones(),
)


@pytest.mark.parametrize("bound_type", [sqlite.DATETIME(), sa.TIMESTAMP(), sa.DateTime()])
@given(instants)
def test_sqlite_utc_timestamps_the_short_way_are_sqlalchemys_text(
    bound_type: Any, instant: dt.datetime
) -> None:
    dialect = sqlite.dialect()
    impl = bound_type.dialect_impl(dialect)
    schema = Timestamp.builder().build()
    general = compose(value_converter(schema, dt.UTC), impl.bind_processor(dialect))
    assert general is not None
    short = sqlite_utc_timestamp(schema, dt.UTC, impl, general)
    assert short is not None
    try:
        expected = general(instant)
    except OverflowError:  # astimezone past year 9999 or before year 1
        with pytest.raises(OverflowError):
            short(instant)
        return
    assert short(instant) == expected


def test_the_short_way_only_where_it_is_sqlalchemys_text() -> None:
    dialect = sqlite.dialect()
    schema = Timestamp.builder().build()
    impl = sqlite.DATETIME().dialect_impl(dialect)
    paris = value_converter(schema, dt.timezone(dt.timedelta(hours=1)))
    assert paris is not None
    assert sqlite_utc_timestamp(schema, dt.timezone(dt.timedelta(hours=1)), impl, paris) is None
    assert sqlite_utc_timestamp(Schema.INT64_SCHEMA, dt.UTC, impl, paris) is None
    own = sqlite.DATETIME(storage_format="%(year)04d/%(month)02d/%(day)02d").dialect_impl(dialect)
    assert sqlite_utc_timestamp(schema, dt.UTC, own, paris) is None
    assert sqlite_utc_timestamp(schema, dt.UTC, sqlite.DATETIME(truncate_microseconds=True), paris) is None
