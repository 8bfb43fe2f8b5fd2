"""PostgreSQL upsert runs by COPY (``connectors.jdbc.sink.pg_copy``) against the session's
throwaway PostgreSQL: the same tables as ``executemany`` for random batches with repeated
keys, nulls and every Connect type the sink maps; a row the database refuses still reaches
the reporter while the others are written; exactly-once offsets commit with the rows."""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from connect.api import Schema, SchemaBuilder, SinkRecord, Struct, TopicPartition
from connectors.jdbc.sink.pg_copy import MIN_ROWS
from tests.connectors.jdbc.test_sink_round_trips import ALL_TYPES, values
from tests.connectors.jdbc.test_sink_writer import Target
from tests.databases import PostgresServer

# Every type ALL_TYPES has, and Debezium's zoned timestamps (TIMESTAMPTZ), wall-clock
# timestamps, and JSON (written as text).
_builder = SchemaBuilder.struct()
for f in ALL_TYPES.fields:
    _builder.field(f.name, f.schema)
ROW = (
    _builder.field("zoned", SchemaBuilder.string().name("io.debezium.time.ZonedTimestamp").optional().build())
    .field("micro", SchemaBuilder.int64().name("io.debezium.time.MicroTimestamp").optional().build())
    .field("doc", SchemaBuilder.string().name("io.debezium.data.Json").optional().build())
    .build()
)
KEYS = 12  # ids 0..11: batches of 64 and more repeat keys


def extra() -> st.SearchStrategy[dict[str, Any]]:
    moments = st.datetimes(
        dt.datetime(1971, 1, 1),
        dt.datetime(2037, 12, 31),
        timezones=st.sampled_from([dt.UTC, dt.timezone(dt.timedelta(hours=5, minutes=30))]),
    )
    return st.fixed_dictionaries(
        {
            "zoned": st.none() | moments.map(lambda d: d.isoformat()),
            "micro": st.none() | st.integers(0, 2**50),
            "doc": st.none() | st.just('{"a": [1, "\\\\ \\t"]}'),
        }
    )


def record(topic: str, id: int, row: dict[str, Any], offset: int) -> SinkRecord:
    s = Struct(ROW).put("id", id)
    for k, v in row.items():
        s.put(k, v)
    return SinkRecord(topic, 0, None, None, ROW, s, kafka_offset=offset)


def table_rows(target: Target, table: str) -> list[tuple[Any, ...]]:
    with target.engine.connect() as c:
        t = sa.Table(table, sa.MetaData(), autoload_with=c)
        return [tuple(r) for r in c.execute(sa.select(t).order_by(t.c.id)).all()]


@pytest.fixture
def target(postgres: PostgresServer) -> Any:
    name = f"c{uuid.uuid4().hex[:12]}"
    postgres.execute(f"CREATE DATABASE {name}")
    t = Target("postgresql", postgres.url(name))
    yield t
    t.engine.dispose()


def test_copy_and_executemany_write_the_same_tables(target: Target, caplog: pytest.LogCaptureFixture) -> None:
    w = target.writer(insert_mode="upsert", pk_mode="record_value", pk_fields="id", auto_create="true")
    caplog.set_level(logging.DEBUG, logger="connectors.jdbc.sink.pg_copy")
    counter = iter(range(10**9))
    rows = st.tuples(st.integers(0, KEYS - 1), values("postgresql"), extra())

    @settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(rows, min_size=MIN_ROWS, max_size=MIN_ROWS + 40), st.lists(rows, max_size=20))
    def check(batch: list[Any], before: list[Any]) -> None:
        n = next(counter)
        by_copy, by_many = f"copy{n}", f"many{n}"
        for topic in (by_copy, by_many):
            # Rows already there: the batch's upserts update them.
            w.write([record(topic, i, {**a, **b}, next(counter)) for i, a, b in before])
        caplog.clear()
        w.write([record(by_copy, i, {**a, **b}, next(counter)) for i, a, b in batch])
        assert f"into {by_copy} by COPY" in caplog.text
        caplog.clear()
        # The same records in runs too short for COPY: executemany, applied in order.
        many = [record(by_many, i, {**a, **b}, next(counter)) for i, a, b in batch]
        for start in range(0, len(many), MIN_ROWS - 1):
            w.write(many[start : start + MIN_ROWS - 1])
        assert "by COPY" not in caplog.text
        assert target.reports == []
        copied = table_rows(target, by_copy)
        assert len(copied) == len({i for i, _, _ in batch + before})
        assert copied == table_rows(target, by_many)

    try:
        check()
    finally:
        w.engine.dispose()


def test_a_row_refused_in_a_copy_batch_reaches_the_reporter_and_the_others_are_written(
    target: Target, caplog: pytest.LogCaptureFixture
) -> None:
    target.execute("CREATE TABLE orders (id BIGINT PRIMARY KEY, i32 INTEGER CHECK (i32 > 0), text TEXT)")
    w = target.writer(insert_mode="upsert", pk_mode="record_value", pk_fields="id")
    bad = {7, 70}  # refused by the CHECK (the INSERT ... SELECT)
    nul = 33  # refused by psycopg while copying: text cannot hold NUL
    schema = (
        SchemaBuilder.struct()
        .field("id", Schema.INT64_SCHEMA)
        .field("i32", Schema.INT32_SCHEMA)
        .field("text", Schema.STRING_SCHEMA)
        .build()
    )
    structs = [
        Struct(schema).put("id", i).put("i32", 0 if i in bad else i + 1).put("text", "\0" if i == nul else "")
        for i in range(100)
    ]
    records = [SinkRecord("orders", 0, None, None, schema, s, kafka_offset=i) for i, s in enumerate(structs)]
    caplog.set_level(logging.DEBUG, logger="connectors.jdbc.sink.pg_copy")
    w.write(records)
    # Tried by COPY, refused (by its INSERT), then written record by record.
    assert "into orders by COPY" in caplog.text and "refused a batch" in caplog.text
    assert [r.kafka_offset for r, _ in target.reports] == sorted({*bad, nul})
    assert all("refused it" in str(e) for _, e in target.reports)
    assert all("CheckViolation" in str(e) for r, e in target.reports if r.kafka_offset in bad)
    assert [r[:2] for r in target.rows("orders")] == [(i, i + 1) for i in range(100) if i not in {*bad, nul}]


def test_exactly_once_offsets_commit_with_copied_rows(
    target: Target, caplog: pytest.LogCaptureFixture
) -> None:
    props: dict[str, Any] = {
        "insert_mode": "upsert",
        "pk_mode": "record_value",
        "pk_fields": "id",
        "auto_create": "true",
        "exactly_once_enabled": "true",
    }
    caplog.set_level(logging.DEBUG, logger="connectors.jdbc.sink.pg_copy")
    w = target.writer(**props)
    w.write([record("orders", i % 50, {"i32": i}, i) for i in range(100)])
    assert "into orders by COPY" in caplog.text
    tp = TopicPartition("orders", 0)
    assert [(r[0], r[3]) for r in target.rows("orders")] == [(i, 50 + i) for i in range(50)]
    assert target.rows("__connect_sink_offsets") == [("sink", "orders", 0, 100)]
    # A restarted task skips what the database holds, and copies the rest with its offsets.
    again = target.writer(**props)
    assert again.stored_offsets([tp]) == {tp: 100}
    again.write([record("orders", i % 50, {"i32": -i}, i) for i in range(200)])
    assert [(r[0], r[3]) for r in target.rows("orders")] == [(i, -150 - i) for i in range(50)]
    assert target.rows("__connect_sink_offsets") == [("sink", "orders", 0, 200)]
