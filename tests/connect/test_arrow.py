"""Unit tests of the Spark sink's pure half: Connect schemas and sink records to Arrow
(``connect.api.arrow``). No Spark session, no I/O."""

from __future__ import annotations

import datetime
import decimal
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from connect.api import (
    DataException,
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    SinkRecord,
    Struct,
    Time,
    Timestamp,
    TopicPartition,
    Type,
)
from connect.api.arrow import (
    MAX_PRECISION,
    PRECISION_PARAMETER,
    VALUE_COLUMN,
    Batch,
    BatchBuilder,
    arrow_type,
    conform,
    conform_rows,
    merge_schemas,
)

UTC = datetime.UTC
TS_MS_UTC = pa.timestamp("ms", tz="UTC")
COORDINATES = ["_topic", "_partition", "_offset", "_timestamp", "_key"]


def rec(
    value: Any,
    schema: Schema | None = None,
    offset: int = 0,
    *,
    topic: str = "t",
    partition: int = 0,
    key: Any = None,
    key_schema: Schema | None = None,
    timestamp: int | None = None,
) -> SinkRecord:
    return SinkRecord(
        topic,
        partition,
        key_schema,
        key,
        schema,
        value,
        timestamp,
        kafka_offset=offset,
    )


def struct(schema: Schema, **values: Any) -> Struct:
    s = Struct(schema)
    for name, v in values.items():
        s.put(name, v)
    return s


def decimal_schema(scale: int, precision: int | None = None, optional: bool = False) -> Schema:
    b = Decimal.builder(scale)
    if precision is not None:
        b.parameter(PRECISION_PARAMETER, str(precision))
    if optional:
        b.optional()
    return b.build()


def offsets(records: list[SinkRecord]) -> list[int]:
    return [r.kafka_offset for r in records]


def rejected_offsets(batch: Batch) -> list[int]:
    return [r.kafka_offset for r, _ in batch.rejected]


# -- arrow_type --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema_type", "expected"),
    [
        (Type.INT8, pa.int8()),
        (Type.INT16, pa.int16()),
        (Type.INT32, pa.int32()),
        (Type.INT64, pa.int64()),
        (Type.FLOAT32, pa.float32()),
        (Type.FLOAT64, pa.float64()),
        (Type.BOOLEAN, pa.bool_()),
        (Type.STRING, pa.string()),
        (Type.BYTES, pa.binary()),
    ],
)
@pytest.mark.parametrize("optional", [False, True])
def test_arrow_type_of_primitives(schema_type: Type, expected: pa.DataType, optional: bool) -> None:
    assert arrow_type(Schema(schema_type, optional=optional)) == expected


def test_arrow_type_of_decimal_without_precision_is_spark_max_precision() -> None:
    assert arrow_type(Decimal.schema(2)) == pa.decimal128(MAX_PRECISION, 2)
    assert arrow_type(Decimal.schema(0)) == pa.decimal128(38, 0)


@pytest.mark.parametrize(("precision", "scale"), [(10, 2), (1, 0), (1, 1), (38, 38), (38, 0), (18, 6)])
def test_arrow_type_of_decimal_with_precision(precision: int, scale: int) -> None:
    assert arrow_type(decimal_schema(scale, precision)) == pa.decimal128(precision, scale)


@pytest.mark.parametrize(
    ("precision", "scale"),
    [
        (39, 2),  # beyond Spark's 38 digits
        (100, 0),
        (4, 5),  # scale > precision
        (0, 0),
        (None, 39),  # unknown precision is 38: scale 39 cannot fit
        (10, -1),  # negative scale
    ],
)
def test_arrow_type_refuses_decimals_spark_cannot_hold(precision: int | None, scale: int) -> None:
    with pytest.raises(DataException, match="DECIMAL"):
        arrow_type(decimal_schema(scale, precision))


def test_arrow_type_refuses_a_precision_that_is_not_a_number() -> None:
    schema = Decimal.builder(2).parameter(PRECISION_PARAMETER, "ten").build()
    with pytest.raises(DataException, match="ten"):
        arrow_type(schema)


def test_arrow_type_of_date_time_timestamp() -> None:
    assert arrow_type(Date.SCHEMA) == pa.date32()
    assert arrow_type(Time.SCHEMA) == pa.time64("us")
    assert arrow_type(Timestamp.SCHEMA) == pa.timestamp("ms", tz="UTC")
    # Optional logical types map the same way.
    assert arrow_type(Timestamp.builder().optional().build()) == TS_MS_UTC
    # A physical INT32/INT64 without the logical name stays an integer.
    assert arrow_type(Schema.INT32_SCHEMA) == pa.int32()
    assert arrow_type(Schema.INT64_SCHEMA) == pa.int64()


def test_arrow_type_of_nested_array_map_struct() -> None:
    item = (
        SchemaBuilder.struct()
        .field("qty", Schema.INT16_SCHEMA)
        .field("price", decimal_schema(2, 9))
        .field("at", Timestamp.SCHEMA)
        .build()
    )
    schema = (
        SchemaBuilder.struct()
        .field("id", Schema.INT64_SCHEMA)
        .field("items", SchemaBuilder.array(item).build())
        .field("attrs", SchemaBuilder.map(Schema.STRING_SCHEMA, Date.SCHEMA).optional().build())
        .field("matrix", SchemaBuilder.array(SchemaBuilder.array(Schema.FLOAT64_SCHEMA).build()).build())
        .field("inner", SchemaBuilder.struct().field("flag", Schema.BOOLEAN_SCHEMA).build())
        .build()
    )
    expected = pa.struct(
        [
            pa.field("id", pa.int64()),
            pa.field(
                "items",
                pa.list_(
                    pa.struct(
                        [
                            pa.field("qty", pa.int16()),
                            pa.field("price", pa.decimal128(9, 2)),
                            pa.field("at", TS_MS_UTC),
                        ]
                    )
                ),
            ),
            pa.field("attrs", pa.map_(pa.string(), pa.date32())),
            pa.field("matrix", pa.list_(pa.list_(pa.float64()))),
            pa.field("inner", pa.struct([pa.field("flag", pa.bool_())])),
        ]
    )
    got = arrow_type(schema)
    assert got == expected
    # Every field is nullable, required in Connect or not.
    assert all(got.field(i).nullable for i in range(got.num_fields))


def test_arrow_type_errors_inside_nested_types() -> None:
    bad = decimal_schema(2, 40)
    with pytest.raises(DataException):
        arrow_type(SchemaBuilder.array(bad).build())
    with pytest.raises(DataException):
        arrow_type(SchemaBuilder.map(Schema.STRING_SCHEMA, bad).build())
    with pytest.raises(DataException):
        arrow_type(SchemaBuilder.struct().field("a", bad).build())


# -- build: typed structs ----------------------------------------------------------------

INNER = (
    SchemaBuilder.struct()
    .field("x", Schema.INT32_SCHEMA)
    .field("label", Schema.OPTIONAL_STRING_SCHEMA)
    .optional()
    .build()
)
ALL_TYPES = (
    SchemaBuilder.struct()
    .name("AllTypes")
    .field("i8", Schema.INT8_SCHEMA)
    .field("i16", Schema.INT16_SCHEMA)
    .field("i32", Schema.INT32_SCHEMA)
    .field("i64", Schema.INT64_SCHEMA)
    .field("f32", Schema.FLOAT32_SCHEMA)
    .field("f64", Schema.FLOAT64_SCHEMA)
    .field("flag", Schema.BOOLEAN_SCHEMA)
    .field("text", Schema.STRING_SCHEMA)
    .field("raw", Schema.BYTES_SCHEMA)
    .field("amount", decimal_schema(2, 10))
    .field("big", Decimal.schema(4))
    .field("day", Date.SCHEMA)
    .field("clock", Time.SCHEMA)
    .field("at", Timestamp.SCHEMA)
    .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
    .field("days", SchemaBuilder.array(Date.builder().optional()).optional().build())
    .field("counts", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).build())
    .field("by_id", SchemaBuilder.map(Schema.INT32_SCHEMA, INNER).optional().build())
    .field("inner", INNER)
    .field("inners", SchemaBuilder.array(INNER).optional().build())
    .field("maybe", Schema.OPTIONAL_STRING_SCHEMA)
    .build()
)


def all_types_value(i: int) -> tuple[Struct, dict[str, Any]]:
    """A Struct of ALL_TYPES and the dict ``table.to_pylist()`` must give back for it."""
    at = datetime.datetime(2024, 5, 1, 12, 30, 15, 123000, tzinfo=UTC) + datetime.timedelta(days=i)
    clock = datetime.time(23, 59, 58, 999999)
    inner = struct(INNER, x=i, label=f"in{i}")
    inner_no_label = struct(INNER, x=-i)
    value = struct(
        ALL_TYPES,
        i8=-128 + i,
        i16=32767 - i,
        i32=-(2**31) + i,
        i64=2**63 - 1 - i,
        f32=1.5 + i,  # exactly representable in float32
        f64=0.1 * (i + 1),
        flag=i % 2 == 0,
        text=f"héllo {i} ✓",
        raw=bytes([0, 255, i]),
        amount=decimal.Decimal("-12345678.90") + i,
        big=decimal.Decimal("1234567890123456789012345678901234.5678"),
        day=datetime.date(1, 1, 1) + datetime.timedelta(days=i),
        clock=clock,
        at=at,
        tags=["a", "b", ""],
        days=[datetime.date(9999, 12, 31), None],
        counts={"x": 1, "y": -(2**63)},
        by_id={1: inner, 2: None},
        inner=inner,
        inners=[inner, None, inner_no_label],
    )
    expected = {
        "i8": -128 + i,
        "i16": 32767 - i,
        "i32": -(2**31) + i,
        "i64": 2**63 - 1 - i,
        "f32": 1.5 + i,
        "f64": 0.1 * (i + 1),
        "flag": i % 2 == 0,
        "text": f"héllo {i} ✓",
        "raw": bytes([0, 255, i]),
        "amount": decimal.Decimal("-12345678.90") + i,
        "big": decimal.Decimal("1234567890123456789012345678901234.5678"),
        "day": datetime.date(1, 1, 1) + datetime.timedelta(days=i),
        "clock": clock,
        "at": at,
        "tags": ["a", "b", ""],
        "days": [datetime.date(9999, 12, 31), None],
        "counts": [("x", 1), ("y", -(2**63))],  # Arrow maps read back as (key, value) pairs
        "by_id": [(1, {"x": i, "label": f"in{i}"}), (2, None)],
        "inner": {"x": i, "label": f"in{i}"},
        "inners": [{"x": i, "label": f"in{i}"}, None, {"x": -i, "label": None}],
        "maybe": None,
    }
    return value, expected


def test_struct_values_of_every_type_round_trip() -> None:
    pairs = [all_types_value(i) for i in range(3)]
    records = [rec(v, ALL_TYPES, 10 + i) for i, (v, _) in enumerate(pairs)]
    batch = BatchBuilder().build(records)

    assert batch.rejected == []
    assert batch.skipped == 0
    assert batch.accepted == records
    assert batch.table.schema == pa.schema([pa.field(f.name, arrow_type(f.schema)) for f in ALL_TYPES.fields])
    assert batch.table.schema.field("clock").type == pa.time64("us")
    assert batch.table.schema.field("at").type == TS_MS_UTC
    assert batch.table.schema.field("amount").type == pa.decimal128(10, 2)
    assert batch.table.schema.field("big").type == pa.decimal128(38, 4)
    assert all(f.nullable for f in batch.table.schema)
    assert batch.table.to_pylist() == [e for _, e in pairs]
    assert batch.tps == [TopicPartition("t", 0)]
    assert batch.row_tps == [0, 0, 0]
    assert batch.ranges == {TopicPartition("t", 0): (10, 12)}


def test_timestamps_are_utc_instants_at_millisecond_precision() -> None:
    schema = SchemaBuilder.struct().field("at", Timestamp.SCHEMA).build()
    plus2 = datetime.timezone(datetime.timedelta(hours=2))
    values = [
        datetime.datetime(2024, 1, 1, 12, 0, tzinfo=plus2),  # aware: the same instant in UTC
        datetime.datetime(2024, 1, 1, 12, 0),  # naive means UTC (Connect's rule)
        datetime.datetime(2024, 1, 1, 12, 0, 0, 1999, tzinfo=UTC),  # sub-ms truncated, as Connect does
    ]
    batch = BatchBuilder().build([rec(struct(schema, at=v), schema, i) for i, v in enumerate(values)])
    assert batch.table.column("at").to_pylist() == [
        datetime.datetime(2024, 1, 1, 10, 0, tzinfo=UTC),
        datetime.datetime(2024, 1, 1, 12, 0, tzinfo=UTC),
        datetime.datetime(2024, 1, 1, 12, 0, 0, 1000, tzinfo=UTC),
    ]
    # The stored integers are epoch milliseconds, what Connect's Timestamp.from_logical gives.
    stored = batch.table.column("at").cast(pa.int64()).to_pylist()
    assert stored == [Timestamp.from_logical(Timestamp.SCHEMA, v) for v in values]


def test_aware_times_are_stored_in_utc_like_connect_time() -> None:
    schema = SchemaBuilder.struct().field("t", Time.SCHEMA).build()
    minus5 = datetime.timezone(datetime.timedelta(hours=-5))
    values = [
        datetime.time(22, 30, tzinfo=minus5),
        datetime.time(1, 2, 3, 4000, tzinfo=UTC),
        datetime.time(7),
    ]
    batch = BatchBuilder().build([rec(struct(schema, t=v), schema, i) for i, v in enumerate(values)])
    got = batch.table.column("t").to_pylist()
    assert got == [datetime.time(3, 30), datetime.time(1, 2, 3, 4000), datetime.time(7)]
    assert [Time.from_logical(Time.SCHEMA, v) for v in values] == [
        Time.from_logical(Time.SCHEMA, g) for g in got
    ]


def test_decimal_that_does_not_fit_refuses_only_its_record() -> None:
    schema = SchemaBuilder.struct().field("id", Schema.INT32_SCHEMA).field("d", decimal_schema(2, 5)).build()
    values = [
        decimal.Decimal("123.45"),
        decimal.Decimal("1.234"),
        decimal.Decimal("1234.5"),
        decimal.Decimal("7"),
    ]
    records = [rec(struct(schema, id=i, d=v), schema, i) for i, v in enumerate(values)]
    batch = BatchBuilder().build(records)
    assert batch.table.to_pylist() == [
        {"id": 0, "d": decimal.Decimal("123.45")},
        {"id": 3, "d": decimal.Decimal("7.00")},
    ]
    assert offsets(batch.accepted) == [0, 3]
    assert rejected_offsets(batch) == [1, 2]
    assert all(reason for _, reason in batch.rejected)
    assert batch.ranges == {TopicPartition("t", 0): (0, 3)}


def test_unset_struct_fields_take_their_schema_default() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("id", Schema.INT64_SCHEMA)
        .field("status", SchemaBuilder.string().default_value("NEW").build())
        .field("retries", SchemaBuilder.int32().optional().default_value(3).build())
        .field(
            "nested",
            SchemaBuilder.struct()
            .field("level", SchemaBuilder.int8().default_value(1).build())
            .optional()
            .build(),
        )
        .field("note", Schema.OPTIONAL_STRING_SCHEMA)
        .build()
    )
    nested_schema = schema.field("nested").schema  # type: ignore[union-attr]
    unset = struct(schema, id=1, nested=Struct(nested_schema))
    explicit = struct(schema, id=2, status="DONE", retries=0, nested=struct(nested_schema, level=5), note="n")
    batch = BatchBuilder().build([rec(unset, schema, 0), rec(explicit, schema, 1)])
    assert batch.table.to_pylist() == [
        {"id": 1, "status": "NEW", "retries": 3, "nested": {"level": 1}, "note": None},
        {"id": 2, "status": "DONE", "retries": 0, "nested": {"level": 5}, "note": "n"},
    ]


@pytest.mark.parametrize(
    ("schema", "values", "arrow"),
    [
        (Schema.STRING_SCHEMA, ["a", "", "ü"], pa.string()),
        (Schema.INT16_SCHEMA, [1, -2, 32767], pa.int16()),
        (Schema.FLOAT64_SCHEMA, [0.5, -1e300], pa.float64()),
        (Schema.BYTES_SCHEMA, [b"", b"\x00\xff"], pa.binary()),
        (decimal_schema(3, 6), [decimal.Decimal("1.5"), decimal.Decimal("-999.999")], pa.decimal128(6, 3)),
        (Date.SCHEMA, [datetime.date(2020, 2, 29)], pa.date32()),
        (SchemaBuilder.array(Schema.INT32_SCHEMA).build(), [[1, 2], [], [None]], pa.list_(pa.int32())),
        (
            SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.BOOLEAN_SCHEMA).build(),
            [{"a": True}],
            pa.map_(pa.string(), pa.bool_()),
        ),
    ],
)
def test_primitive_and_collection_values_go_to_the_value_column(
    schema: Schema, values: list[Any], arrow: pa.DataType
) -> None:
    batch = BatchBuilder().build([rec(v, schema, i) for i, v in enumerate(values)])
    assert batch.rejected == []
    assert batch.table.schema == pa.schema([pa.field(VALUE_COLUMN, arrow)])
    expected = [list(v.items()) if isinstance(v, dict) else v for v in values]
    assert batch.table.column(VALUE_COLUMN).to_pylist() == expected


def test_two_value_schemas_in_one_batch_leave_missing_columns_null() -> None:
    v1 = SchemaBuilder.struct().field("id", Schema.INT64_SCHEMA).field("name", Schema.STRING_SCHEMA).build()
    v2 = (
        SchemaBuilder.struct()
        .field("id", Schema.INT64_SCHEMA)
        .field("email", Schema.OPTIONAL_STRING_SCHEMA)
        .field("age", Schema.INT32_SCHEMA)
        .build()
    )
    records = [
        rec(struct(v1, id=1, name="a"), v1, 0),
        rec(struct(v1, id=2, name="b"), v1, 1),
        rec(struct(v2, id=3, email="c@x", age=30), v2, 2),
        rec(struct(v1, id=4, name="d"), v1, 3),
        rec(struct(v2, id=5, age=40), v2, 4),
    ]
    batch = BatchBuilder().build(records)
    assert batch.rejected == []
    assert batch.accepted == records  # rows are in record order
    assert batch.table.column_names == ["id", "name", "email", "age"]
    assert batch.table.schema.field("age").type == pa.int32()
    assert batch.table.to_pylist() == [
        {"id": 1, "name": "a", "email": None, "age": None},
        {"id": 2, "name": "b", "email": None, "age": None},
        {"id": 3, "name": None, "email": "c@x", "age": 30},
        {"id": 4, "name": "d", "email": None, "age": None},
        {"id": 5, "name": None, "email": None, "age": 40},
    ]


def test_two_value_schemas_disagreeing_on_a_type_keep_the_first_and_refuse_what_does_not_fit() -> None:
    wide = SchemaBuilder.struct().field("n", Schema.INT64_SCHEMA).build()
    text = SchemaBuilder.struct().field("n", Schema.STRING_SCHEMA).build()
    records = [
        rec(struct(wide, n=1), wide, 0),
        rec(struct(text, n="abc"), text, 1),
        rec(struct(text, n="5"), text, 2),  # text is not parsed into a number column
        rec(struct(wide, n=4), wide, 3),
    ]
    batch = BatchBuilder().build(records)
    assert batch.table.schema == pa.schema([("n", pa.int64())])
    assert batch.table.column("n").to_pylist() == [1, 4]
    assert offsets(batch.accepted) == [0, 3]
    assert rejected_offsets(batch) == [1, 2]
    assert all("'n'" in reason for _, reason in batch.rejected)


def test_two_value_schemas_with_integer_widths_widen_losslessly() -> None:
    narrow = SchemaBuilder.struct().field("n", Schema.INT8_SCHEMA).build()
    wide = SchemaBuilder.struct().field("n", Schema.INT64_SCHEMA).build()
    batch = BatchBuilder().build([rec(struct(narrow, n=-5), narrow, 0), rec(struct(wide, n=2**40), wide, 1)])
    assert batch.rejected == []
    assert batch.table.column("n").to_pylist() == [-5, 2**40]


def test_a_value_that_is_not_a_struct_for_a_struct_schema_is_refused() -> None:
    schema = SchemaBuilder.struct().field("id", Schema.INT32_SCHEMA).build()
    records = [
        rec(struct(schema, id=1), schema, 0),
        rec({"id": 2}, schema, 1),
        rec(struct(schema, id=3), schema, 2),
    ]
    batch = BatchBuilder().build(records)
    assert batch.table.column("id").to_pylist() == [1, 3]
    assert rejected_offsets(batch) == [1]
    assert "dict" in batch.rejected[0][1]


def test_values_without_columns_still_are_rows() -> None:
    empty = SchemaBuilder.struct().build()
    for records in (
        [rec(Struct(empty), empty, 0), rec(Struct(empty), empty, 1)],
        [rec({}, None, 0), rec({"a": None}, None, 1)],
    ):
        batch = BatchBuilder().build(records)
        assert batch.table.num_rows == 2, records
        assert batch.accepted == records
        assert batch.row_tps == [0, 0]
        # Conformed to a table schema they become rows of nulls.
        target = pa.schema([("a", pa.int64())])
        assert conform(batch.table, target).to_pylist() == [{"a": None}, {"a": None}]
    with_coordinates = BatchBuilder(include_coordinates=True).build([rec({}, None, 7)])
    assert with_coordinates.table.column_names == COORDINATES
    assert with_coordinates.table.column("_offset").to_pylist() == [7]


def test_schemaless_scalars_go_to_the_value_column() -> None:
    batch = BatchBuilder().build([rec("a", None, 0), rec("b", None, 1)])
    assert batch.table.schema == pa.schema([(VALUE_COLUMN, pa.string())])
    assert batch.table.column(VALUE_COLUMN).to_pylist() == ["a", "b"]
    mixed = BatchBuilder().build([rec(1, None, 0), rec("x", None, 1), rec(2, None, 2)])
    assert mixed.table.column(VALUE_COLUMN).to_pylist() == [1, 2]
    assert rejected_offsets(mixed) == [1]


# -- build: schemaless dicts -------------------------------------------------------------


def test_schemaless_dicts_are_inferred_with_the_keys_of_every_record() -> None:
    values: list[dict[str, Any]] = [
        {"id": 1, "name": "a"},
        {"id": 2, "tags": ["x", "y"]},
        {"id": 3, "name": None, "nested": {"k": 1.5}},
        {"gone": None},
    ]
    batch = BatchBuilder().build([rec(v, None, i) for i, v in enumerate(values)])
    assert batch.rejected == []
    assert batch.table.schema == pa.schema(
        [
            ("id", pa.int64()),
            ("name", pa.string()),
            ("tags", pa.list_(pa.string())),
            ("nested", pa.struct([("k", pa.float64())])),
        ]  # "gone" is null in every record: no type yet, left out
    )
    assert batch.table.to_pylist() == [
        {"id": 1, "name": "a", "tags": None, "nested": None},
        {"id": 2, "name": None, "tags": ["x", "y"], "nested": None},
        {"id": 3, "name": None, "tags": None, "nested": {"k": 1.5}},
        {"id": None, "name": None, "tags": None, "nested": None},
    ]


def test_schemaless_dict_whose_field_does_not_match_the_others_is_refused() -> None:
    values: list[dict[str, Any]] = [{"a": 1, "b": "x"}, {"a": "two", "b": "y"}, {"a": 3, "b": "z"}]
    batch = BatchBuilder().build([rec(v, None, i) for i, v in enumerate(values)])
    assert batch.table.to_pylist() == [{"a": 1, "b": "x"}, {"a": 3, "b": "z"}]
    assert offsets(batch.accepted) == [0, 2]
    assert rejected_offsets(batch) == [1]
    assert "'a'" in batch.rejected[0][1]


DECLARED = pa.schema(
    [
        ("id", pa.int64()),
        ("at", pa.timestamp("us", tz="UTC")),
        ("amount", pa.decimal128(10, 2)),
        ("day", pa.date32()),
        ("score", pa.float64()),
    ]
)


def test_declared_schema_casts_json_strings_for_timestamps_dates_and_decimals() -> None:
    values: list[dict[str, Any]] = [
        {"id": 1, "at": "2024-01-02T03:04:05Z", "amount": "12.34", "day": "2024-01-02", "score": 1},
        {"id": 2, "at": "2024-01-02T03:04:05.123+02:00", "amount": "-0.5"},
    ]
    batch = BatchBuilder(declared=DECLARED).build([rec(v, None, i) for i, v in enumerate(values)])
    assert batch.rejected == []
    assert batch.table.schema == DECLARED
    assert batch.table.to_pylist() == [
        {
            "id": 1,
            "at": datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC),
            "amount": decimal.Decimal("12.34"),
            "day": datetime.date(2024, 1, 2),
            "score": 1.0,
        },
        {
            "id": 2,
            "at": datetime.datetime(2024, 1, 2, 1, 4, 5, 123000, tzinfo=UTC),
            "amount": decimal.Decimal("-0.50"),
            "day": None,
            "score": None,
        },
    ]


def test_declared_schema_refuses_a_dict_with_a_field_of_the_wrong_type_and_keeps_the_others() -> None:
    values: list[dict[str, Any]] = [
        {"id": 1, "at": "2024-01-02T00:00:00Z"},
        {"id": "one"},
        {"id": 3, "amount": "1.234"},  # three decimals do not fit DECIMAL(10, 2)
        {"id": 4, "at": "yesterday"},
        {"id": 5, "day": "2024-02-30"},
        {"id": 6},
    ]
    batch = BatchBuilder(declared=DECLARED).build([rec(v, None, i) for i, v in enumerate(values)])
    assert batch.table.schema == DECLARED
    assert batch.table.column("id").to_pylist() == [1, 6]
    assert offsets(batch.accepted) == [0, 5]
    assert rejected_offsets(batch) == [1, 2, 3, 4]
    reasons = dict((r.kafka_offset, why) for r, why in batch.rejected)
    assert "'id'" in reasons[1]
    assert "'amount'" in reasons[2]
    assert "'at'" in reasons[3]
    assert "'day'" in reasons[4]


def test_declared_schema_does_not_truncate_floats_or_take_bools_as_numbers() -> None:
    values: list[dict[str, Any]] = [
        {"id": 2.0, "score": 1.5},  # 2.0 is the integer 2
        {"id": 2.5},  # pyarrow alone would store 2
        {"id": 3, "score": True},  # pyarrow alone would store 1.0
        {"id": True},
        {"id": 5, "score": 7},
    ]
    batch = BatchBuilder(declared=DECLARED).build([rec(v, None, i) for i, v in enumerate(values)])
    assert [(row["id"], row["score"]) for row in batch.table.to_pylist()] == [(2, 1.5), (5, 7.0)]
    assert rejected_offsets(batch) == [1, 2, 3]


def test_declared_schema_ignores_undeclared_keys_whichever_way_the_values_convert() -> None:
    declared = pa.schema([("id", pa.int64()), ("at", TS_MS_UTC)])
    direct = [{"id": 1, "extra": "x"}]
    through_cast = [{"id": 1, "at": "2024-01-01T00:00:00Z", "extra": "x"}]  # the string needs a cast
    for values in (direct, through_cast):
        batch = BatchBuilder(declared=declared).build([rec(v, None, i) for i, v in enumerate(values)])
        assert batch.rejected == [], values
        assert batch.table.schema == declared
        assert batch.table.column("id").to_pylist() == [1]


# -- build: tombstones, ranges, topic partitions ----------------------------------------

ID = SchemaBuilder.struct().field("id", Schema.INT64_SCHEMA).build()


def test_tombstones_are_skipped_with_ignore() -> None:
    records = [
        rec(struct(ID, id=1), ID, 4),
        rec(None, ID, 5),
        rec(None, None, 6),
        rec(struct(ID, id=2), ID, 7),
    ]
    batch = BatchBuilder(null_values="ignore").build(records)
    assert batch.skipped == 2
    assert batch.rejected == []
    assert batch.table.column("id").to_pylist() == [1, 2]
    assert offsets(batch.accepted) == [4, 7]
    assert batch.ranges == {TopicPartition("t", 0): (4, 7)}


def test_tombstones_are_refused_with_fail() -> None:
    records = [rec(None, ID, 5), rec(struct(ID, id=1), ID, 6), rec(None, None, 7)]
    batch = BatchBuilder(null_values="fail").build(records)
    assert batch.skipped == 0
    assert rejected_offsets(batch) == [5, 7]
    assert all("null" in reason for _, reason in batch.rejected)
    assert batch.table.column("id").to_pylist() == [1]
    assert batch.ranges == {TopicPartition("t", 0): (5, 7)}


def test_only_tombstones_give_an_empty_table_and_still_a_range() -> None:
    batch = BatchBuilder(null_values="ignore").build(
        [rec(None, None, 3, partition=1), rec(None, None, 2, partition=1)]
    )
    assert batch.table.num_rows == 0
    assert batch.accepted == []
    assert batch.row_tps == []
    assert batch.tps == [TopicPartition("t", 1)]
    assert batch.ranges == {TopicPartition("t", 1): (2, 3)}


def test_ranges_cover_accepted_refused_and_skipped_records_per_partition_out_of_order() -> None:
    bad = decimal_schema(0, 2)  # 123 does not fit DECIMAL(2, 0)
    records = [
        rec(struct(ID, id=1), ID, 20, topic="a", partition=0),
        rec(None, None, 5, topic="a", partition=0),  # skipped, lowest of a-0
        rec(decimal.Decimal(123), bad, 99, topic="b", partition=2),  # refused, highest of b-2
        rec(struct(ID, id=2), ID, 10, topic="a", partition=1),
        rec(struct(ID, id=3), ID, 50, topic="b", partition=2),
        rec(struct(ID, id=4), ID, 7, topic="a", partition=0),
        rec(None, None, 30, topic="a", partition=0),  # skipped, highest of a-0
        rec(decimal.Decimal(1), bad, 1, topic="b", partition=2),
    ]
    batch = BatchBuilder(null_values="ignore").build(records)
    assert batch.ranges == {
        TopicPartition("a", 0): (5, 30),
        TopicPartition("b", 2): (1, 99),
        TopicPartition("a", 1): (10, 10),
    }
    assert batch.tps == list(batch.ranges)
    assert batch.skipped == 2
    assert rejected_offsets(batch) == [99]
    assert offsets(batch.accepted) == [20, 10, 50, 7, 1]


def test_only_refused_records_still_have_ranges() -> None:
    records = [rec(struct(ID, id=1), Schema.STRING_SCHEMA, 8), rec(None, None, 9, partition=3)]
    batch = BatchBuilder().build(records)
    assert batch.table.num_rows == 0
    assert sorted(rejected_offsets(batch)) == [8, 9]
    assert batch.ranges == {TopicPartition("t", 0): (8, 8), TopicPartition("t", 3): (9, 9)}


def test_row_tps_map_each_row_to_its_topic_partition() -> None:
    records = []
    for i in range(12):
        topic = "ab"[i % 2]
        partition = i % 3
        records.append(rec(struct(ID, id=i), ID, 100 - i, topic=topic, partition=partition))
    records.insert(4, rec(None, None, 500, topic="z", partition=9))  # refused: its tp has no row
    batch = BatchBuilder(include_coordinates=True).build(records)
    assert len(batch.row_tps) == batch.table.num_rows == 12
    assert TopicPartition("z", 9) in batch.tps
    rows = batch.table.to_pylist()
    for row, tp_index, record in zip(rows, batch.row_tps, batch.accepted, strict=True):
        tp = batch.tps[tp_index]
        assert (tp.topic, tp.partition) == (row["_topic"], row["_partition"])
        assert (tp.topic, tp.partition) == (record.topic, record.kafka_partition)
        assert row["_offset"] == record.kafka_offset
        assert row["id"] == 100 - record.kafka_offset
    assert batch.tps.index(TopicPartition("z", 9)) not in batch.row_tps


def test_row_tps_stay_aligned_when_rows_are_refused_across_groups() -> None:
    text = SchemaBuilder.struct().field("id", Schema.STRING_SCHEMA).build()
    records = [
        rec(struct(ID, id=1), ID, 0, partition=0),
        rec(struct(text, id="no"), text, 0, partition=1),  # refused: id is a number column
        rec(struct(ID, id=2), ID, 0, partition=2),
        rec(struct(text, id="no"), text, 1, partition=1),
        rec(struct(ID, id=3), ID, 1, partition=0),
    ]
    batch = BatchBuilder().build(records)
    assert batch.table.column("id").to_pylist() == [1, 2, 3]
    assert [batch.tps[i].partition for i in batch.row_tps] == [0, 2, 0]
    assert [r.kafka_partition for r in batch.accepted] == [0, 2, 0]


# -- build: coordinates ------------------------------------------------------------------


def test_coordinates_columns() -> None:
    records = [
        rec(
            struct(ID, id=1),
            ID,
            41,
            topic="orders",
            partition=3,
            key=7,
            key_schema=Schema.INT64_SCHEMA,
            timestamp=1_700_000_000_123,
        ),
        rec(struct(ID, id=2), ID, 42, topic="orders", partition=3, key=None, key_schema=Schema.INT64_SCHEMA),
    ]
    batch = BatchBuilder(include_coordinates=True).build(records)
    assert batch.table.schema == pa.schema(
        [
            ("id", pa.int64()),
            ("_topic", pa.string()),
            ("_partition", pa.int32()),
            ("_offset", pa.int64()),
            ("_timestamp", TS_MS_UTC),
            ("_key", pa.int64()),
        ]
    )
    assert batch.table.to_pylist() == [
        {
            "id": 1,
            "_topic": "orders",
            "_partition": 3,
            "_offset": 41,
            "_timestamp": datetime.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=UTC),
            "_key": 7,
        },
        {"id": 2, "_topic": "orders", "_partition": 3, "_offset": 42, "_timestamp": None, "_key": None},
    ]


def test_coordinates_key_with_a_struct_key_schema() -> None:
    key_schema = SchemaBuilder.struct().field("k", Schema.STRING_SCHEMA).field("at", Date.SCHEMA).build()
    key = struct(key_schema, k="x", at=datetime.date(2024, 1, 1))
    batch = BatchBuilder(include_coordinates=True).build(
        [rec(struct(ID, id=1), ID, 0, key=key, key_schema=key_schema)]
    )
    assert batch.table.schema.field("_key").type == arrow_type(key_schema)
    assert batch.table.column("_key").to_pylist() == [{"k": "x", "at": datetime.date(2024, 1, 1)}]


@pytest.mark.parametrize(
    ("keys", "arrow", "expected"),
    [
        (["a", "b", None], pa.string(), ["a", "b", None]),
        ([None, None], pa.string(), [None, None]),
        ([b"\x01", b"k"], pa.binary(), [b"\x01", b"k"]),
        ([1, "x", None], pa.string(), ["1", "x", None]),  # mixed: JSON text
        ([{"a": 1}, "x"], pa.string(), ['{"a": 1}', "x"]),
        ([[1, 2], 3], pa.string(), ["[1, 2]", "3"]),
    ],
)
def test_coordinates_schemaless_keys(keys: list[Any], arrow: pa.DataType, expected: list[Any]) -> None:
    records = [rec({"id": i}, None, i, key=k) for i, k in enumerate(keys)]
    batch = BatchBuilder(include_coordinates=True).build(records)
    assert batch.rejected == []
    assert batch.table.schema.field("_key").type == arrow
    assert batch.table.column("_key").to_pylist() == expected


def test_coordinates_keys_of_several_types_across_value_schemas_become_text() -> None:
    other = SchemaBuilder.struct().field("name", Schema.STRING_SCHEMA).build()
    key_struct = SchemaBuilder.struct().field("k", Schema.INT32_SCHEMA).build()
    records = [
        rec(struct(ID, id=1), ID, 0, key=5, key_schema=Schema.INT64_SCHEMA),
        rec({"id": 2}, None, 1, key="abc"),
        rec(struct(other, name="n"), other, 2, key=struct(key_struct, k=9), key_schema=key_struct),
        rec(struct(ID, id=4), ID, 3, key=None),
    ]
    batch = BatchBuilder(include_coordinates=True).build(records)
    assert batch.rejected == []  # a key never refuses its record
    assert batch.table.schema.field("_key").type == pa.string()
    assert batch.table.column("_key").to_pylist() == ["5", "abc", '{"k": 9}', None]


def test_coordinates_keys_do_not_depend_on_a_refused_neighbour() -> None:
    records = [
        rec({"a": 1}, None, 0, key=5),
        rec({"a": "x"}, None, 1, key="abc"),
        rec({"a": 3}, None, 2, key="k"),
    ]
    batch = BatchBuilder(include_coordinates=True).build(records)
    assert rejected_offsets(batch) == [1]
    assert batch.table.column("_key").to_pylist() == ["5", "k"]
    assert batch.table.column("a").to_pylist() == [1, 3]


def test_coordinates_key_its_schema_type_cannot_hold_is_kept_untyped() -> None:
    key_schema = decimal_schema(2, 4)
    records = [
        rec(struct(ID, id=1), ID, 0, key=decimal.Decimal("1.5"), key_schema=key_schema),
        rec(struct(ID, id=2), ID, 1, key=decimal.Decimal("123.45"), key_schema=key_schema),  # 5 digits
    ]
    batch = BatchBuilder(include_coordinates=True).build(records)
    assert batch.rejected == []  # a key never refuses its record
    assert batch.table.column("_key").to_pylist() == [decimal.Decimal("1.5"), decimal.Decimal("123.45")]
    mixed = [
        rec(struct(ID, id=1), ID, 0, key=decimal.Decimal("1.5"), key_schema=key_schema),
        rec(struct(ID, id=2), ID, 1, key="k", key_schema=key_schema),  # not even a Decimal
    ]
    batch = BatchBuilder(include_coordinates=True).build(mixed)
    assert batch.rejected == []
    assert batch.table.schema.field("_key").type == pa.string()
    first, second = batch.table.column("_key").to_pylist()
    assert "1.5" in first and second == "k"


# -- merge_schemas -----------------------------------------------------------------------


def test_merge_without_a_table_takes_the_batch_without_null_columns() -> None:
    batch = pa.schema([pa.field("a", pa.int32(), nullable=False), ("n", pa.null()), ("b", pa.string())])
    merged, left_out = merge_schemas(None, batch, allow_new=False)
    assert merged == pa.schema([("a", pa.int32()), ("b", pa.string())])
    assert all(f.nullable for f in merged)
    assert left_out == []


def test_merge_appends_new_columns_when_allowed() -> None:
    table = pa.schema([("a", pa.int32()), ("b", pa.string())])
    batch = pa.schema([("c", pa.float64()), ("a", pa.int64()), ("n", pa.null()), ("d", pa.bool_())])
    merged, left_out = merge_schemas(table, batch, allow_new=True)
    # The table's types win (a stays INT), new columns come after the old ones, null-typed are skipped.
    assert merged == pa.schema(
        [("a", pa.int32()), ("b", pa.string()), ("c", pa.float64()), ("d", pa.bool_())]
    )
    assert left_out == []


def test_merge_leaves_new_columns_out_when_not_allowed() -> None:
    table = pa.schema([("a", pa.int32())])
    batch = pa.schema([("c", pa.float64()), ("a", pa.int64()), ("n", pa.null()), ("d", pa.bool_())])
    merged, left_out = merge_schemas(table, batch, allow_new=False)
    assert merged == table
    assert left_out == ["c", "d"]


def test_merge_a_nested_struct_gains_a_field() -> None:
    table = pa.schema([("id", pa.int64()), ("s", pa.struct([("x", pa.int32()), ("y", pa.string())]))])
    batch = pa.schema(
        [("s", pa.struct([("z", pa.bool_()), ("x", pa.int64()), ("inner", pa.struct([("q", pa.int8())]))]))]
    )
    merged, left_out = merge_schemas(table, batch, allow_new=True)
    assert merged == pa.schema(
        [
            ("id", pa.int64()),
            (
                "s",
                pa.struct(
                    [
                        ("x", pa.int32()),
                        ("y", pa.string()),
                        ("z", pa.bool_()),
                        ("inner", pa.struct([("q", pa.int8())])),
                    ]
                ),
            ),
        ]
    )
    assert left_out == []
    unchanged, _ = merge_schemas(table, batch, allow_new=False)
    assert unchanged == table


def test_merge_is_stable() -> None:
    table = pa.schema([("a", pa.int32()), ("s", pa.struct([("x", pa.int32())]))])
    merged, _ = merge_schemas(table, table, allow_new=True)
    assert merged.equals(table)


# -- conform / conform_rows --------------------------------------------------------------


def test_conform_follows_the_table_column_order_and_fills_missing_columns() -> None:
    batch = pa.table({"c": ["x"], "a": pa.array([1], type=pa.int64()), "b": [True]})
    target = pa.schema([("a", pa.int64()), ("missing", pa.date32()), ("b", pa.bool_()), ("c", pa.string())])
    out = conform(batch, target)
    assert out.schema == target
    assert out.to_pylist() == [{"a": 1, "missing": None, "b": True, "c": "x"}]


def test_int64_into_int32_fits_in_range_and_refuses_rows_out_of_range() -> None:
    batch = pa.table({"id": [0, 1, 2], "n": pa.array([5, 2**31, -(2**31)], type=pa.int64())})
    target = pa.schema([("id", pa.int64()), ("n", pa.int32())])
    with pytest.raises(DataException, match="'n'"):
        conform(batch, target)
    table, refused = conform_rows(batch, target)
    assert table.schema == target
    assert table.to_pylist() == [{"id": 0, "n": 5}, {"id": 2, "n": -(2**31)}]
    assert [i for i, _ in refused] == [1]
    assert "'n'" in refused[0][1]
    fits, none = conform_rows(batch.slice(0, 1), target)
    assert none == [] and fits.to_pylist() == [{"id": 0, "n": 5}]


def test_float_into_bigint_fits_when_integral_only() -> None:
    batch = pa.table({"n": [2.0, 2.5, -3.0, float("nan")]})
    target = pa.schema([("n", pa.int64())])
    table, refused = conform_rows(batch, target)
    assert table.column("n").to_pylist() == [2, -3]
    assert [i for i, _ in refused] == [1, 3]
    assert all("'n'" in reason for _, reason in refused)


def test_int64_beyond_double_precision_does_not_go_into_a_double_column() -> None:
    batch = pa.table({"n": [2**53, 2**60 + 1]})
    table, refused = conform_rows(batch, pa.schema([("n", pa.float64())]))
    assert table.column("n").to_pylist() == [float(2**53)]
    assert [i for i, _ in refused] == [1]


@pytest.mark.parametrize(
    ("values", "arrow", "target"),
    [
        (["abc"], pa.string(), pa.int32()),
        (["5"], pa.string(), pa.int64()),  # text is not a number, even when it parses
        (["1.5"], pa.string(), pa.float64()),
        (["true"], pa.string(), pa.bool_()),
        ([True], pa.bool_(), pa.int32()),
        ([False], pa.bool_(), pa.float64()),
        ([1], pa.int64(), pa.bool_()),
        ([["7"]], pa.list_(pa.string()), pa.list_(pa.int64())),
    ],
)
def test_values_of_another_kind_are_refused(
    values: list[Any], arrow: pa.DataType, target: pa.DataType
) -> None:
    batch = pa.table({"f": pa.array(values, type=arrow)})
    with pytest.raises(DataException, match="'f'"):
        conform(batch, pa.schema([("f", target)]))
    table, refused = conform_rows(batch, pa.schema([("f", target)]))
    assert table.num_rows == 0 and table.schema == pa.schema([("f", target)])
    assert [i for i, _ in refused] == [0]


def test_null_values_of_another_kind_fit() -> None:
    batch = pa.table({"f": pa.array([None, None], type=pa.string())})
    assert conform(batch, pa.schema([("f", pa.int32())])).to_pylist() == [{"f": None}, {"f": None}]


def test_extra_column_without_evolution() -> None:
    target = pa.schema([("a", pa.int64())])
    all_null = pa.table({"a": [1, 2], "extra": pa.array([None, None], type=pa.string())})
    assert conform(all_null, target).to_pylist() == [{"a": 1}, {"a": 2}]

    some = pa.table({"a": [1, 2, 3], "extra": ["x", None, "z"]})
    with pytest.raises(DataException, match="'extra'"):
        conform(some, target)
    table, refused = conform_rows(some, target)
    assert table.to_pylist() == [{"a": 2}]
    assert [i for i, _ in refused] == [0, 2]
    assert all("extra" in reason for _, reason in refused)


def test_conform_nested_structs() -> None:
    s = pa.array(
        [{"x": 1, "extra": None}, None, {"x": 2**40, "extra": None}, {"x": 3, "extra": "boo"}],
        type=pa.struct([("x", pa.int64()), ("extra", pa.string())]),
    )
    batch = pa.table({"s": s})
    target = pa.schema([("s", pa.struct([("x", pa.int32()), ("y", pa.string())]))])
    table, refused = conform_rows(batch, target)
    assert table.schema == target
    assert table.to_pylist() == [{"s": {"x": 1, "y": None}}, {"s": None}]
    assert [i for i, _ in refused] == [2, 3]
    assert "s.x" in refused[0][1]
    assert "s.extra" in refused[1][1]


def test_conform_timestamps() -> None:
    batch = pa.table(
        {
            "at": pa.array(
                [datetime.datetime(2024, 1, 1, 0, 0, 0, 1000), datetime.datetime(2024, 1, 1, 0, 0, 0, 1)],
                type=pa.timestamp("us"),
            )
        }
    )
    table, refused = conform_rows(batch, pa.schema([("at", TS_MS_UTC)]))
    assert table.column("at").to_pylist() == [datetime.datetime(2024, 1, 1, 0, 0, 0, 1000, tzinfo=UTC)]
    assert [i for i, _ in refused] == [1]  # a microsecond is lost at millisecond precision


def test_conform_rows_keeps_good_rows_in_order() -> None:
    batch = pa.table({"n": pa.array(list(range(10)), type=pa.int64()), "s": [str(i) for i in range(10)]})
    table, refused = conform_rows(batch, pa.schema([("s", pa.string()), ("n", pa.int8())]))
    assert refused == []
    assert table.column_names == ["s", "n"]
    assert table.column("n").to_pylist() == list(range(10))


def test_merge_then_conform_a_batch_into_an_evolving_table() -> None:
    old = pa.schema([("id", pa.int32()), ("name", pa.string())])
    batch = BatchBuilder().build(
        [
            rec({"id": 1, "email": "a@b"}, None, 0),
            rec({"id": 2**40, "name": "x"}, None, 1),
            rec({"id": 3}, None, 2),
        ]
    )
    merged, left_out = merge_schemas(old, batch.table.schema, allow_new=True)
    assert merged == pa.schema([("id", pa.int32()), ("name", pa.string()), ("email", pa.string())])
    table, refused = conform_rows(batch.table, merged)
    assert table.to_pylist() == [
        {"id": 1, "name": None, "email": "a@b"},
        {"id": 3, "name": None, "email": None},
    ]
    assert [batch.accepted[i].kafka_offset for i, _ in refused] == [1]

    frozen, left_out = merge_schemas(old, batch.table.schema, allow_new=False)
    assert frozen == old and left_out == ["email"]
    table, refused = conform_rows(batch.table, frozen)
    assert table.to_pylist() == [{"id": 3, "name": None}]
    assert [i for i, _ in refused] == [0, 1]


def test_a_new_field_of_structs_in_a_list_is_added_or_refused_not_dropped() -> None:
    batch = pa.table({"items": pa.array([[{"a": 1, "c": "x"}]])})
    table = pa.schema([("items", pa.list_(pa.struct([("a", pa.int64())])))])
    evolved, _ = merge_schemas(table, batch.schema, allow_new=True)
    _, refused = conform_rows(batch, table)
    assert evolved.field("items").type.value_type.get_field_index("c") >= 0  # evolution on
    assert refused  # evolution off


def test_an_empty_list_in_the_first_batch_does_not_fix_the_column_type() -> None:
    builder = BatchBuilder()
    first = builder.build([rec({"id": 1, "tags": []}, None, 0)])
    table, _ = merge_schemas(None, first.table.schema, True)
    later = builder.build([rec({"id": 2, "tags": ["a"]}, None, 1)])
    target, _ = merge_schemas(table, later.table.schema, True)
    _, refused = conform_rows(later.table, target)
    assert refused == []


# -- properties --------------------------------------------------------------------------

_MS_MIN = Timestamp.from_logical(Timestamp.SCHEMA, datetime.datetime(1, 1, 1, tzinfo=UTC))
_MS_MAX = Timestamp.from_logical(
    Timestamp.SCHEMA, datetime.datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC)
)
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=UTC)


@st.composite
def _decimal_kind(draw: st.DrawFn) -> tuple[Schema, st.SearchStrategy[Any]]:
    scale = draw(st.integers(0, 6))
    precision = draw(st.one_of(st.none(), st.integers(max(scale, 1), 38)))
    digits = (precision or 38) - scale
    # Unscaled integers made decimals through text: decimal arithmetic (and st.decimals)
    # rounds to the context's 28 digits, and these have up to 38.
    bound = 10**digits - 1
    values = st.integers(-bound, bound).map(lambda n: decimal.Decimal(f"{n}e-{scale}"))
    return decimal_schema(scale, precision), values


_SIMPLE_KINDS: list[tuple[Schema, st.SearchStrategy[Any]]] = [
    (Schema.INT8_SCHEMA, st.integers(-(2**7), 2**7 - 1)),
    (Schema.INT16_SCHEMA, st.integers(-(2**15), 2**15 - 1)),
    (Schema.INT32_SCHEMA, st.integers(-(2**31), 2**31 - 1)),
    (Schema.INT64_SCHEMA, st.integers(-(2**63), 2**63 - 1)),
    (Schema.FLOAT32_SCHEMA, st.floats(width=32, allow_nan=False)),
    (Schema.FLOAT64_SCHEMA, st.floats(allow_nan=False)),
    (Schema.BOOLEAN_SCHEMA, st.booleans()),
    (Schema.STRING_SCHEMA, st.text(max_size=8)),
    (Schema.BYTES_SCHEMA, st.binary(max_size=8)),
    (Date.SCHEMA, st.dates()),
    (Time.SCHEMA, st.times()),
    (
        Timestamp.SCHEMA,
        st.integers(_MS_MIN, _MS_MAX).map(lambda ms: _EPOCH + datetime.timedelta(milliseconds=ms)),
    ),
]


@st.composite
def flat_schemas(draw: st.DrawFn) -> tuple[Schema, list[st.SearchStrategy[Any]]]:
    names = draw(st.lists(st.sampled_from("abcdefghij"), min_size=1, max_size=6, unique=True))
    b = SchemaBuilder.struct()
    values = []
    for name in names:
        kind = draw(st.one_of(st.sampled_from(_SIMPLE_KINDS), _decimal_kind()))
        schema, strategy = kind
        optional = draw(st.booleans())
        if optional:
            schema = _optional(schema)
            strategy = st.one_of(st.none(), strategy)
        b.field(name, schema)
        values.append(strategy)
    return b.build(), values


def _optional(schema: Schema) -> Schema:
    return Schema(schema.type, True, None, schema.name, schema.version, schema.doc, schema.parameters)


class Case:
    """A drawn batch: records of one flat struct schema and the rows they must become.

    A plain class with a short repr: hypothesis would otherwise print the Schema
    dataclasses field by field, recursively, which takes minutes."""

    def __init__(
        self, schema: Schema, records: list[SinkRecord], expected: list[dict[str, Any] | None]
    ) -> None:
        self.schema = schema
        self.records = records
        self.expected = expected

    def __repr__(self) -> str:
        fields = ", ".join(f"{f.name}: {f.schema!r}{f.schema.parameters or ''}" for f in self.schema.fields)
        rows = "; ".join(
            f"{r.topic}-{r.kafka_partition}@{r.kafka_offset} {e!r}"
            for r, e in zip(self.records, self.expected, strict=True)
        )
        return f"Case([{fields}] {rows})"


@st.composite
def record_batches(draw: st.DrawFn) -> Case:
    schema, strategies = draw(flat_schemas())
    n = draw(st.integers(0, 12))
    records = []
    expected: list[dict[str, Any] | None] = []
    for _ in range(n):
        tp = draw(st.sampled_from([("a", 0), ("a", 1), ("b", 0)]))
        offset = draw(st.integers(0, 1000))
        if draw(st.integers(0, 5)) == 0:
            records.append(rec(None, schema, offset, topic=tp[0], partition=tp[1]))
            expected.append(None)
            continue
        values = [draw(s) for s in strategies]
        value = Struct.from_values(schema, values)
        records.append(rec(value, schema, offset, topic=tp[0], partition=tp[1]))
        expected.append({f.name: v for f, v in zip(schema.fields, values, strict=True)})
    return Case(schema, records, expected)


_PROPERTY = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_PROPERTY
@given(record_batches(), st.booleans())
def test_property_build_accepts_every_valid_record_and_round_trips(case: Case, coordinates: bool) -> None:
    schema, records, expected = case.schema, case.records, case.expected
    batch = BatchBuilder(include_coordinates=coordinates, null_values="ignore").build(records)
    rows = [e for e in expected if e is not None]
    assert batch.rejected == []
    assert batch.skipped == len(records) - len(rows)
    assert batch.table.num_rows == len(rows)
    assert batch.accepted == [r for r, e in zip(records, expected, strict=True) if e is not None]
    got = batch.table.to_pylist()
    if coordinates and rows:
        for row, record in zip(got, batch.accepted, strict=True):
            assert row.pop("_offset") == record.kafka_offset
            assert (row.pop("_topic"), row.pop("_partition")) == (record.topic, record.kafka_partition)
            assert row.pop("_timestamp") is None and row.pop("_key") is None
    assert got == rows
    if rows:
        assert batch.table.column_names[: len(schema.fields)] == [f.name for f in schema.fields]
    # Ranges: min and max offset per topic partition, over every record.
    want: dict[TopicPartition, tuple[int, int]] = {}
    for r in records:
        tp = TopicPartition(r.topic, r.kafka_partition or 0)
        lo, hi = want.get(tp, (r.kafka_offset, r.kafka_offset))
        want[tp] = (min(lo, r.kafka_offset), max(hi, r.kafka_offset))
    assert batch.ranges == want
    assert [batch.tps[i] for i in batch.row_tps] == [
        TopicPartition(r.topic, r.kafka_partition or 0) for r in batch.accepted
    ]


@_PROPERTY
@given(record_batches(), st.booleans())
def test_property_conform_to_the_merged_schema_is_identity(case: Case, coordinates: bool) -> None:
    records = case.records
    table = BatchBuilder(include_coordinates=coordinates, null_values="ignore").build(records).table
    target, left_out = merge_schemas(None, table.schema, True)
    assert left_out == []
    out = conform(table, target)
    assert out.schema == target
    assert out.to_pylist() == table.to_pylist()
    again, refused = conform_rows(table, target)
    assert refused == []
    assert again.to_pylist() == table.to_pylist()


@_PROPERTY
@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(["a", "b", "c"]),
            st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)),
            max_size=3,
        ),
        max_size=10,
    )
)
def test_property_schemaless_int_dicts_keep_every_key_and_value(values: list[dict[str, Any]]) -> None:
    batch = BatchBuilder().build([rec(v, None, i) for i, v in enumerate(values)])
    assert batch.rejected == []
    assert batch.table.num_rows == len(values)
    names = batch.table.column_names
    assert batch.table.to_pylist() == [{n: v.get(n) for n in names} for v in values]
    assert set(names) == {k for v in values for k, x in v.items() if x is not None}
