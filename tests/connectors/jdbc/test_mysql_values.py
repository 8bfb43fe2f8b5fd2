"""Every MySQL column type through both readers: a row read by the snapshot's SELECT and the
same row read from the binlog must give equal Connect values, and those values must be
Debezium's (default modes, and the decimal/time/bigint/binary modes)."""

from __future__ import annotations

import decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker.server import EmbeddedBroker
from connect.api import Struct
from connectors.jdbc.mysql.schema import MySqlColumn
from connectors.jdbc.mysql.task import MySqlSourceTask
from connectors.jdbc.mysql.values import (
    BigintUnsignedMode,
    BinaryMode,
    DecimalMode,
    TimePrecisionMode,
    UnsupportedTypeError,
    ValueSettings,
    conversion_for,
)
from tests.connectors.jdbc.test_mysql_support import BinlogDatabase, Worker, binlog_db, data
from tests.support import unique

FIXTURES = (binlog_db,)

COLUMNS = """
    id INT PRIMARY KEY,
    b1 BIT(1), b10 BIT(10), bo BOOLEAN,
    ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, siu SMALLINT UNSIGNED, mi MEDIUMINT,
    miu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED,
    fl FLOAT, fl2 FLOAT(30), db DOUBLE, dc DECIMAL(10,3), dc0 DECIMAL(5),
    ch CHAR(3), vc VARCHAR(20), tt TINYTEXT, tx TEXT, lt LONGTEXT, l1 VARCHAR(10) CHARACTER SET latin1,
    bn BINARY(4), vb VARBINARY(10), bl BLOB,
    js JSON, en ENUM('a','b','c'), st SET('x','y','z'), st0 SET('x','y') NOT NULL DEFAULT '',
    yr YEAR, dt DATE, dtz DATE NOT NULL DEFAULT '2000-01-01', tm TIME, tm3 TIME(3), dtm DATETIME,
    dtm3 DATETIME(3), dtm6 DATETIME(6), ts TIMESTAMP(2) NULL, ts0 TIMESTAMP NULL,
    pt POINT
"""

VALUES = """
    b'1', b'1000000011', TRUE,
    -5, 250, -300, 65000, -8000000,
    16000000, -2000000000, 4000000000, -9000000000000000000, 18446744073709551615,
    1.1, 2.5, 3.25, -12.345, 12345,
    'ab', 'héllo ✓', 'tiny', 'text', 'long', 'café',
    X'0102', X'0a0b', X'ff00',
    '{"a": [1, 2.5, null]}', 'b', 'z,x', '',
    2024, '2024-02-29', '0000-00-00', '-12:34:56', '838:59:58.999', '2024-01-02 03:04:05',
    '1969-12-31 23:59:59.123', '2024-01-02 03:04:05.123456', '2024-01-02 03:04:05.12', '2038-01-01 00:00:00',
    ST_GeomFromText('POINT(1 2)')
"""

_NOT_NULL = {"st0": "''", "dtz": "'2000-01-01'"}
NULLS = ", ".join(
    _NOT_NULL.get(line.split()[0], "NULL")
    for line in COLUMNS.replace(",\n", "\n").replace(", ", "\n").strip().splitlines()[1:]
    if line.strip()
)


def after(record: Any) -> dict[str, Any]:
    value: Struct = record.value.get("after")
    return {f.name: value.get(f.name) for f in value.schema.fields}


def snapshot_and_binlog(
    db: BinlogDatabase, broker: EmbeddedBroker, **settings: str
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(snapshot row, binlog row) pairs of ids 1 (values) and 2 (nulls), ids dropped."""
    db.run(f"INSERT INTO t VALUES (1, {VALUES})", f"INSERT INTO t VALUES (2, {NULLS})")
    config = db.config(unique("v").replace("-", "_"), broker.bootstrap, **settings)
    worker = Worker(MySqlSourceTask(), config)
    try:
        snapshot = data(worker.count(2))
        db.run(f"INSERT INTO t VALUES (11, {VALUES})", f"INSERT INTO t VALUES (12, {NULLS})")
        streamed = data(worker.count(2))
    finally:
        worker.stop()
        db.run("DELETE FROM t")
    assert [r.value.get("op") for r in snapshot] == ["r", "r"]
    assert [r.value.get("op") for r in streamed] == ["c", "c"]
    pairs = []
    for s, b in zip(snapshot, streamed, strict=True):
        left, right = after(s), after(b)
        left.pop("id"), right.pop("id")
        pairs.append((left, right))
        assert s.value.schema == b.value.schema
    return pairs


@pytest.fixture
def typed(binlog_db: BinlogDatabase) -> BinlogDatabase:
    binlog_db.run(f"CREATE TABLE t ({COLUMNS}) DEFAULT CHARSET=utf8mb4")
    return binlog_db


def test_default_modes_match_debezium_and_both_readers(
    typed: BinlogDatabase, shared_broker: EmbeddedBroker
) -> None:
    (snap, binlog), (snap_nulls, binlog_nulls) = snapshot_and_binlog(typed, shared_broker)
    assert snap == binlog
    assert snap_nulls == binlog_nulls
    expected = {
        "b1": True,
        "b10": (0b1000000011).to_bytes(2, "little"),
        "bo": 1,  # BOOLEAN is TINYINT(1): INT16, as Debezium maps it
        "ti": -5,
        "tiu": 250,
        "si": -300,
        "siu": 65000,
        "mi": -8000000,
        "miu": 16000000,
        "i": -2000000000,
        "iu": 4000000000,
        "bi": -9000000000000000000,
        "biu": -1,  # long mode: the unsigned value's 64 bits
        "fl2": 2.5,
        "db": 3.25,
        "dc": decimal.Decimal("-12.345"),
        "dc0": decimal.Decimal("12345"),
        "ch": "ab",
        "vc": "héllo ✓",
        "tt": "tiny",
        "tx": "text",
        "lt": "long",
        "l1": "café",
        "bn": b"\x01\x02\x00\x00",
        "vb": b"\x0a\x0b",
        "bl": b"\xff\x00",
        "js": '{"a": [1, 2.5, null]}',
        "en": "b",
        "st": "x,z",
        "st0": "",
        "yr": 2024,
        "dt": 19782,
        "dtz": 0,  # a zero date in a NOT NULL column: the epoch
        "tm": -(12 * 3600 + 34 * 60 + 56) * 1_000_000,
        "tm3": (838 * 3600 + 59 * 60 + 58) * 1_000_000 + 999_000,
        "dtm": 1704164645000,
        "dtm3": -877,
        "dtm6": 1704164645123456,
        "ts": "2024-01-02T03:04:05.12Z",
        "ts0": "2038-01-01T00:00:00Z",
    }
    assert {k: snap[k] for k in expected} == expected
    assert abs(snap["fl"] - 1.1) < 1e-6
    assert snap["pt"].get("srid") == 0 and len(snap["pt"].get("wkb")) == 21
    assert snap_nulls["st0"] == "" and snap_nulls["dtz"] == 10957
    assert all(v is None for k, v in snap_nulls.items() if k not in ("st0", "dtz"))


def test_other_modes_match_both_readers(typed: BinlogDatabase, shared_broker: EmbeddedBroker) -> None:
    (snap, binlog), _ = snapshot_and_binlog(
        typed,
        shared_broker,
        decimal_handling_mode="string",
        time_precision_mode="connect",
        bigint_unsigned_handling_mode="precise",
        binary_handling_mode="hex",
        snapshot_locking_mode="extended",
    )
    assert snap == binlog
    assert snap["dc"] == "-12.345" and snap["biu"] == decimal.Decimal(18446744073709551615)
    assert snap["vb"] == "0a0b" and snap["bn"] == "01020000"
    assert snap["dt"].isoformat() == "2024-02-29"
    assert snap["dtm3"].isoformat() == "1969-12-31T23:59:59.123000+00:00"
    (snap, binlog), _ = snapshot_and_binlog(
        typed, shared_broker, decimal_handling_mode="double", snapshot_locking_mode="none"
    )
    assert snap == binlog and snap["dc"] == -12.345


def column(type_name: str, **kw: Any) -> MySqlColumn:
    return MySqlColumn("c", type_name, 1, **kw)


def test_schemas_follow_the_modes() -> None:
    default = ValueSettings()
    assert conversion_for(column("DATETIME", length=3), default).schema.name == "io.debezium.time.Timestamp"
    assert (
        conversion_for(column("DATETIME", length=4), default).schema.name == "io.debezium.time.MicroTimestamp"
    )
    assert conversion_for(column("TIMESTAMP"), default).schema.name == "io.debezium.time.ZonedTimestamp"
    assert conversion_for(column("BIT", length=9), default).schema.parameters == {"length": "9"}
    enum_schema = conversion_for(column("ENUM", enum_values=("a", "b")), default).schema
    assert enum_schema.name == "io.debezium.data.Enum" and enum_schema.parameters == {"allowed": "a,b"}
    assert conversion_for(column("FLOAT", length=10, scale=2), default).schema.type.name == "FLOAT64"
    precise = conversion_for(column("DECIMAL", length=7, scale=2), default).schema
    assert precise.parameters == {"scale": "2", "connect.decimal.precision": "7"}
    modes = ValueSettings(
        DecimalMode.DOUBLE, TimePrecisionMode.CONNECT, BigintUnsignedMode.PRECISE, BinaryMode.BASE64
    )
    assert conversion_for(column("DECIMAL", length=7, scale=2), modes).schema.type.name == "FLOAT64"
    assert conversion_for(column("BLOB"), modes).convert(b"\xff") == "/w=="  # type: ignore[misc]
    with pytest.raises(UnsupportedTypeError, match=r"db\.t\.c"):
        conversion_for(column("VECTOR"), default, "db.t")


@given(
    st.integers(min_value=1, max_value=64).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, 2**n - 1)))
)
def test_bits_read_alike_from_either_reader(case: tuple[int, int]) -> None:
    bits, value = case
    convert = conversion_for(column("BIT", length=bits), ValueSettings()).convert
    assert convert is not None
    from_binlog = convert(format(value, f"0{bits}b"))  # python-mysql-replication: "0101..."
    from_select = convert(value.to_bytes((bits + 7) // 8, "big"))  # pymysql: big-endian bytes
    assert from_binlog == from_select
    if bits > 1:
        assert int.from_bytes(from_binlog, "little") == value


@given(st.floats(width=32, allow_nan=False, allow_infinity=False))
def test_float_columns_read_alike_from_the_stored_value_or_its_text(value: float) -> None:
    convert = conversion_for(column("FLOAT"), ValueSettings()).convert
    assert convert is not None
    assert convert(value) == convert(repr(value)) == value


@given(st.decimals(min_value=-(10**6), max_value=10**6, places=3, allow_nan=False))
def test_decimals_keep_the_column_scale(value: decimal.Decimal) -> None:
    conversion = conversion_for(column("DECIMAL", length=10, scale=3), ValueSettings())
    assert conversion.convert is not None
    converted = conversion.convert(value.normalize())
    assert converted == value and converted.as_tuple().exponent == -3
