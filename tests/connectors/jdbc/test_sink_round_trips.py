"""The JDBC sink's values read back as written, per database (SQLite, and the session's
throwaway PostgreSQL and MariaDB), with hypothesis: every Connect type the sink maps (their
columns auto-created), and Debezium's temporal types as the instants they stand for."""

from __future__ import annotations

import datetime as dt
import decimal
import struct
import uuid
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from connect.api import Date, Decimal, Schema, SchemaBuilder, SinkRecord, Struct, Time, Timestamp
from tests.connectors.jdbc.test_sink_writer import DIALECTS, Target


def fresh_target(
    kind: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Target:
    """A new database of ``kind``, for one hypothesis test (function fixtures would be
    shared by its examples)."""
    if kind == "sqlite":
        return Target(kind, f"sqlite:///{tmp_path_factory.mktemp('round-trip') / 'r.db'}")
    server: Any = request.getfixturevalue("postgres" if kind == "postgresql" else "mariadb")
    name = f"r{uuid.uuid4().hex[:12]}"
    server.execute(f"CREATE DATABASE {name}")
    return Target(kind, server.url(name))


ALL_TYPES = (
    SchemaBuilder.struct()
    .field("id", Schema.INT64_SCHEMA)
    .field("i8", Schema.OPTIONAL_INT8_SCHEMA)
    .field("i16", Schema.OPTIONAL_INT16_SCHEMA)
    .field("i32", Schema.OPTIONAL_INT32_SCHEMA)
    .field("i64", Schema.OPTIONAL_INT64_SCHEMA)
    .field("f32", Schema.OPTIONAL_FLOAT32_SCHEMA)
    .field("f64", Schema.OPTIONAL_FLOAT64_SCHEMA)
    .field("flag", Schema.OPTIONAL_BOOLEAN_SCHEMA)
    .field("text", Schema.OPTIONAL_STRING_SCHEMA)
    .field("raw", Schema.OPTIONAL_BYTES_SCHEMA)
    .field("amount", Decimal.builder(3).optional().build())
    .field("day", Date.builder().optional().build())
    .field("clock", Time.builder().optional().build())
    .field("instant", Timestamp.builder().optional().build())
    .build()
)


def float32(x: float) -> float:
    return float(struct.unpack("f", struct.pack("f", x))[0])


def values(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=40)
    digits = 15 if kind == "sqlite" else 28  # SQLite holds NUMERIC as a double
    return st.fixed_dictionaries(
        {
            "i8": st.none() | st.integers(-128, 127),
            "i16": st.none() | st.integers(-(2**15), 2**15 - 1),
            "i32": st.none() | st.integers(-(2**31), 2**31 - 1),
            "i64": st.none() | st.integers(-(2**63), 2**63 - 1),
            "f32": st.none() | st.floats(width=32, allow_nan=False, allow_infinity=False),
            "f64": st.none() | st.floats(allow_nan=False, allow_infinity=False),
            "flag": st.none() | st.booleans(),
            "text": st.none() | text,
            "raw": st.none() | st.binary(max_size=40),
            "amount": st.none()
            | st.decimals(
                min_value=-(10 ** (digits - 3)) + 1,
                max_value=10 ** (digits - 3) - 1,
                places=3,
                allow_nan=False,
            ),
            "day": st.none() | st.dates(dt.date(1000, 1, 1), dt.date(9999, 12, 31)),
            "clock": st.none()
            | st.times().map(lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000)),
            "instant": st.none()
            | st.datetimes(dt.datetime(1971, 1, 1), dt.datetime(2037, 12, 31), timezones=st.just(dt.UTC)).map(
                lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000)
            ),
        }
    )


def same(column: str, wrote: Any, read: Any) -> bool:
    if wrote is None or read is None:
        return wrote is read
    if column == "f32":
        # MySQL/MariaDB send FLOAT columns rounded to 6 significant digits.
        return float32(read) == float32(wrote) or bool(abs(read - wrote) <= abs(wrote) * 5e-6)
    if column == "f64":
        return bool(read == wrote)
    if column == "flag":
        return bool(read) is wrote
    if column == "raw":
        return bytes(read) == bytes(wrote)
    if column == "amount":
        # SQLite holds NUMERIC as a double (15 digits), read back at the field's scale.
        return bool(decimal.Decimal(str(read)).quantize(decimal.Decimal("0.001")) == wrote)
    if column == "clock":
        if isinstance(read, dt.timedelta):  # PyMySQL reads TIME as a duration
            read = (dt.datetime(1970, 1, 1) + read).time()
        return bool(read == wrote)
    if column == "instant":
        return bool(read.replace(tzinfo=dt.UTC) == wrote)
    return bool(read == wrote)


@pytest.mark.parametrize("kind", DIALECTS)
def test_values_read_back_as_written(
    kind: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> None:
    target = fresh_target(kind, request, tmp_path_factory)
    w = target.writer(insert_mode="upsert", pk_mode="record_value", pk_fields="id", auto_create="true")
    counter = iter(range(10**9))

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(values(kind), min_size=1, max_size=4))
    def check(rows: list[dict[str, Any]]) -> None:
        records = []
        for r in rows:
            n = next(counter)
            s = Struct(ALL_TYPES).put("id", n)
            for k, v in r.items():
                s.put(k, v)
            records.append(SinkRecord("types", 0, None, None, ALL_TYPES, s, kafka_offset=n))
        w.write(records)
        with target.engine.connect() as c:
            t = sa.Table("types", sa.MetaData(), autoload_with=c)
            for col in t.columns:
                if isinstance(col.type, sa.Float):
                    # MySQL's DOUBLE reflects as a Decimal of scale 10: read the float itself.
                    col.type = sa.Float(asdecimal=False)
            first = records[0].kafka_offset
            got = c.execute(sa.select(t).where(t.c.id >= first).order_by(t.c.id)).mappings().all()
        assert len(got) == len(rows) and target.reports == []
        for wrote, read in zip(rows, got, strict=True):
            for column, value in wrote.items():
                assert same(column, value, read[column]), (column, value, read[column])

    try:
        check()
    finally:
        target.engine.dispose()


DEBEZIUM_TYPES = (
    SchemaBuilder.struct()
    .field("id", Schema.INT64_SCHEMA)
    .field("day", SchemaBuilder.int32().name("io.debezium.time.Date").optional().build())
    .field("micro", SchemaBuilder.int64().name("io.debezium.time.MicroTimestamp").optional().build())
    .field("milli", SchemaBuilder.int64().name("io.debezium.time.Timestamp").optional().build())
    .field("clock", SchemaBuilder.int64().name("io.debezium.time.MicroTime").optional().build())
    .field("zoned", SchemaBuilder.string().name("io.debezium.time.ZonedTimestamp").optional().build())
    .build()
)
_EPOCH = dt.datetime(1970, 1, 1)
_US = 1_000_000


def debezium_values() -> st.SearchStrategy[dict[str, Any]]:
    # Years 1000-9999 (MySQL's DATE/DATETIME range); instants at the precision of the type.
    days = st.integers(-354_285, 2_932_896)
    micros = st.integers(-30_610_224_000 * _US, 253_402_300_799 * _US)
    moments = st.datetimes(dt.datetime(1971, 1, 1), dt.datetime(2037, 12, 31), timezones=st.just(dt.UTC))
    return st.fixed_dictionaries(
        {
            "day": st.none() | days,
            "micro": st.none() | micros,
            "milli": st.none() | micros.map(lambda u: u // 1000),
            "clock": st.none() | st.integers(0, 86_400 * _US - 1),
            "zoned": st.none() | moments.map(lambda d: d.isoformat().replace("+00:00", "Z")),
        }
    )


def expected_debezium(column: str, value: Any) -> Any:
    if value is None:
        return None
    if column == "day":
        return dt.date(1970, 1, 1) + dt.timedelta(days=value)
    if column == "micro":
        return _EPOCH + dt.timedelta(microseconds=value)
    if column == "milli":
        return _EPOCH + dt.timedelta(milliseconds=value)
    if column == "clock":
        return (_EPOCH + dt.timedelta(microseconds=value)).time()
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))


def read_back(column: str, value: Any) -> Any:
    if isinstance(value, dt.timedelta):  # PyMySQL reads TIME as a duration
        return (_EPOCH + value).time()
    if column == "zoned" and isinstance(value, dt.datetime) and value.tzinfo is None:
        return value.replace(tzinfo=dt.UTC)  # written in use.time.zone (UTC) where no zone is kept
    return value


@pytest.mark.parametrize("kind", DIALECTS)
def test_debezium_temporal_values_read_back_as_their_instants(
    kind: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> None:
    target = fresh_target(kind, request, tmp_path_factory)
    w = target.writer(
        debezium=True,
        insert_mode="upsert",
        primary_key_mode="record_value",
        primary_key_fields="id",
        schema_evolution="basic",
    )
    counter = iter(range(10**9))

    @settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(debezium_values())
    def check(row: dict[str, Any]) -> None:
        n = next(counter)
        s = Struct(DEBEZIUM_TYPES).put("id", n)
        for k, v in row.items():
            s.put(k, v)
        w.write([SinkRecord("dbz", 0, None, None, DEBEZIUM_TYPES, s, kafka_offset=n)])
        with target.engine.connect() as c:
            t = sa.Table("dbz", sa.MetaData(), autoload_with=c)
            got = c.execute(sa.select(t).where(t.c.id == n)).mappings().one()
        assert target.reports == []
        for column, value in row.items():
            assert read_back(column, got[column]) == expected_debezium(column, value), (
                column,
                value,
                got[column],
            )

    try:
        check()
    finally:
        target.engine.dispose()
