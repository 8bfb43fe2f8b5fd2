"""TimestampConverter against Kafka's TimestampConverterTest cases, plus the edges: Unix
precisions (truncation toward zero, saturation), time zones, Python's date/time types
without a schema, schema derivation and caching, and every config and data error."""

from __future__ import annotations

import datetime

import pytest

from connect.api import (
    ConfigValidationError,
    DataException,
    Date,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
)
from tests.transforms.support import configured, sink, source
from transforms.timestamp_converter import TimestampConverterKey, TimestampConverterValue

UTC = datetime.UTC
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=UTC)
# Kafka's fixtures: one day and 1234 ms after the epoch.
DATE_PLUS_TIME = datetime.datetime(1970, 1, 2, 0, 0, 1, 234000, tzinfo=UTC)
DATE = datetime.date(1970, 1, 2)
TIME = datetime.time(0, 0, 1, 234000)
DATE_PLUS_TIME_UNIX = 86_401_234
DATE_PLUS_TIME_UNIX_MICROS = DATE_PLUS_TIME_UNIX * 1000 + 123
DATE_PLUS_TIME_UNIX_NANOS = DATE_PLUS_TIME_UNIX_MICROS * 1000 + 456
DATE_PLUS_TIME_UNIX_SECONDS = 86_401
STRING_DATE_FMT = "yyyy MM dd HH mm ss SSS z"
DATE_PLUS_TIME_STRING = "1970 01 02 00 00 01 234 UTC"

OPTIONAL_DATE = Date.builder().optional().build()
OPTIONAL_TIME = Time.builder().optional().build()
OPTIONAL_TIMESTAMP = Timestamp.builder().optional().build()

TARGET_SCHEMAS = {
    "string": (Schema.STRING_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA),
    "unix": (Schema.INT64_SCHEMA, Schema.OPTIONAL_INT64_SCHEMA),
    "Date": (Date.SCHEMA, OPTIONAL_DATE),
    "Time": (Time.SCHEMA, OPTIONAL_TIME),
    "Timestamp": (Timestamp.SCHEMA, OPTIONAL_TIMESTAMP),
}


def value_xform(target: str, **more: str) -> TimestampConverterValue:
    return configured(TimestampConverterValue, {"target.type": target, **more})


def convert(target: str, value: object, schema: Schema | None = None, **more: str) -> object:
    return value_xform(target, **more).apply(sink(value, schema)).value


# -- configuration -------------------------------------------------------------------


def issues(props: dict[str, object]) -> list[tuple[str, str]]:
    return [(i.key, i.message) for i in TimestampConverterValue.Config.issues(props, prefix="transforms.tc.")]


def test_target_type_is_required() -> None:
    assert issues({}) == [
        (
            "transforms.tc.target.type",
            'Missing required configuration "transforms.tc.target.type" which has no default value.',
        )
    ]
    with pytest.raises(ConfigValidationError):
        configured(TimestampConverterValue, {})


@pytest.mark.parametrize("target", ["invalid", "timestamp", "STRING", "date"])
def test_target_type_must_be_one_of_kafkas_case_sensitive_names(target: str) -> None:
    assert issues({"target.type": target}) == [
        (
            "transforms.tc.target.type",
            f"Invalid value {target} for configuration transforms.tc.target.type: "
            "String must be one of: string, unix, Date, Time, Timestamp",
        )
    ]


def test_unix_precision_must_be_one_of_kafkas_names() -> None:
    assert issues({"target.type": "unix", "unix.precision": "invalid"}) == [
        (
            "transforms.tc.unix.precision",
            "Invalid value invalid for configuration transforms.tc.unix.precision: "
            "String must be one of: nanoseconds, microseconds, milliseconds, seconds",
        )
    ]
    assert issues({"target.type": "unix", "unix.precision": "seconds"}) == []


@pytest.mark.parametrize("fmt", [None, "", "   "])
def test_string_target_needs_a_format(fmt: str | None) -> None:
    props = {"target.type": "string"} if fmt is None else {"target.type": "string", "format": fmt}
    assert issues(props) == [
        (
            "transforms.tc.format",
            "TimestampConverter requires format option to be specified when using string timestamps",
        )
    ]


@pytest.mark.parametrize("target", ["string", "Timestamp"])
def test_an_invalid_format_is_refused_whatever_the_target(target: str) -> None:
    assert issues({"target.type": target, "format": "bad-format"}) == [
        (
            "transforms.tc.format",
            "TimestampConverter requires a SimpleDateFormat-compatible pattern "
            "for string timestamps: bad-format",
        )
    ]
    with pytest.raises(ConfigValidationError):
        configured(TimestampConverterValue, {"target.type": target, "format": "bad-format"})


def test_replace_null_with_default_must_be_a_boolean() -> None:
    found = issues({"target.type": "unix", "replace.null.with.default": "maybe"})
    assert [key for key, _ in found] == ["transforms.tc.replace.null.with.default"]


# -- schemaless: Timestamp to the other types (Kafka's tests) -------------------------


def test_schemaless_identity() -> None:
    out = value_xform("Timestamp").apply(sink(DATE_PLUS_TIME))
    assert out.value_schema is None
    assert out.value == DATE_PLUS_TIME


def test_schemaless_timestamp_to_date_time_unix_and_string() -> None:
    assert convert("Date", DATE_PLUS_TIME) == DATE
    assert convert("Time", DATE_PLUS_TIME) == TIME
    assert convert("unix", DATE_PLUS_TIME) == DATE_PLUS_TIME_UNIX
    assert convert("string", DATE_PLUS_TIME, format=STRING_DATE_FMT) == DATE_PLUS_TIME_STRING


def test_schemaless_date_time_unix_and_string_to_timestamp() -> None:
    assert convert("Timestamp", DATE) == datetime.datetime(1970, 1, 2, tzinfo=UTC)
    assert convert("Timestamp", TIME) == datetime.datetime(1970, 1, 1, 0, 0, 1, 234000, tzinfo=UTC)
    assert convert("Timestamp", DATE_PLUS_TIME_UNIX) == DATE_PLUS_TIME
    assert convert("Timestamp", DATE_PLUS_TIME_STRING, format=STRING_DATE_FMT) == DATE_PLUS_TIME


def test_schemaless_output_types_are_python_temporals() -> None:
    ts = convert("Timestamp", DATE_PLUS_TIME_UNIX)
    assert (
        isinstance(ts, datetime.datetime) and ts.tzinfo is not None and ts.utcoffset() == datetime.timedelta()
    )
    assert type(convert("Date", DATE_PLUS_TIME_UNIX)) is datetime.date
    assert type(convert("Time", DATE_PLUS_TIME_UNIX)) is datetime.time


def test_schemaless_date_and_time_keep_their_own_meaning() -> None:
    # Python tells them apart (Kafka sees one java.util.Date): a date is midnight, a time is on 1970-01-01.
    assert convert("Time", datetime.date(2024, 5, 1)) == datetime.time(0, 0)
    assert convert("Date", datetime.time(13, 30)) == datetime.date(1970, 1, 1)
    assert convert("unix", datetime.date(1970, 1, 3)) == 2 * 86_400_000
    assert convert("unix", datetime.time(0, 0, 2)) == 2000


def test_naive_datetimes_are_utc_and_aware_ones_are_converted_to_utc() -> None:
    assert convert("unix", datetime.datetime(1970, 1, 1, 0, 0, 1)) == 1000
    plus_two = datetime.timezone(datetime.timedelta(hours=2))
    local = datetime.datetime(2024, 1, 1, 1, 0, tzinfo=plus_two)  # 2023-12-31T23:00Z
    assert convert("Date", local) == datetime.date(2023, 12, 31)
    assert convert("Time", local) == datetime.time(23, 0)
    assert convert("string", local, format="yyyy-MM-dd'T'HH:mm:ss.SSSXXX") == "2023-12-31T23:00:00.000Z"


def test_date_truncates_to_midnight_utc_and_time_keeps_the_time_of_day_before_the_epoch() -> None:
    before = -3_600_000  # 1969-12-31T23:00Z
    assert convert("Date", before) == datetime.date(1969, 12, 31)
    assert convert("Time", before) == datetime.time(23, 0)
    assert convert("Timestamp", before) == datetime.datetime(1969, 12, 31, 23, 0, tzinfo=UTC)


def test_schemaless_null_values_and_fields_pass_through() -> None:
    for target in TARGET_SCHEMAS:
        record = sink(None)
        assert value_xform(target, format=STRING_DATE_FMT).apply(record) is record
        assert value_xform(target, format=STRING_DATE_FMT, field="ts").apply(record) is record


def test_schemaless_field_conversion() -> None:
    out = value_xform("Date", field="ts").apply(sink({"ts": DATE_PLUS_TIME, "other": "x"}))
    assert out.value_schema is None
    assert out.value == {"ts": DATE, "other": "x"}


def test_schemaless_field_conversion_leaves_the_input_map_alone() -> None:
    original = {"ts": DATE_PLUS_TIME_UNIX}
    value_xform("Timestamp", field="ts").apply(sink(original))
    assert original == {"ts": DATE_PLUS_TIME_UNIX}


def test_schemaless_missing_field_is_added_as_null() -> None:
    assert convert("Timestamp", {"other": 1}, field="ts") == {"other": 1, "ts": None}


def test_schemaless_field_mode_needs_a_map() -> None:
    with pytest.raises(DataException) as err:
        value_xform("Timestamp", field="ts").apply(sink("2024"))
    assert str(err.value) == (
        "TimestampConverter$Value: Only Map objects supported in absence of schema for "
        "[converting timestamp formats], found: str (topic 'test', partition 0, offset 42)"
    )


@pytest.mark.parametrize(("value", "name"), [(1.5, "float"), (True, "bool"), (b"x", "bytes"), ([1], "list")])
def test_schemaless_unsupported_types(value: object, name: str) -> None:
    with pytest.raises(DataException) as err:
        convert("Timestamp", value)
    assert str(err.value) == (
        f"TimestampConverter$Value: TimestampConverter does not support {name} objects as timestamps "
        "(topic 'test', partition 0, offset 42)"
    )


# -- with a schema (Kafka's tests) ----------------------------------------------------


def test_with_schema_identity() -> None:
    out = value_xform("Timestamp").apply(sink(DATE_PLUS_TIME, Timestamp.SCHEMA))
    assert out.value_schema == Timestamp.SCHEMA
    assert out.value == DATE_PLUS_TIME


@pytest.mark.parametrize(
    ("target", "schema", "expected"),
    [
        ("Date", Date.SCHEMA, DATE),
        ("Time", Time.SCHEMA, TIME),
        ("unix", Schema.INT64_SCHEMA, DATE_PLUS_TIME_UNIX),
        ("string", Schema.STRING_SCHEMA, DATE_PLUS_TIME_STRING),
    ],
)
def test_with_schema_timestamp_to_other_types(target: str, schema: Schema, expected: object) -> None:
    out = value_xform(target, format=STRING_DATE_FMT).apply(sink(DATE_PLUS_TIME, Timestamp.SCHEMA))
    assert out.value_schema == schema
    assert out.value == expected


@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        (Date.SCHEMA, DATE, datetime.datetime(1970, 1, 2, tzinfo=UTC)),
        (Time.SCHEMA, TIME, datetime.datetime(1970, 1, 1, 0, 0, 1, 234000, tzinfo=UTC)),
        (Schema.INT64_SCHEMA, DATE_PLUS_TIME_UNIX, DATE_PLUS_TIME),
        (Schema.STRING_SCHEMA, DATE_PLUS_TIME_STRING, DATE_PLUS_TIME),
    ],
)
def test_with_schema_other_types_to_timestamp(schema: Schema, value: object, expected: object) -> None:
    out = value_xform("Timestamp", format=STRING_DATE_FMT).apply(sink(value, schema))
    assert out.value_schema == Timestamp.SCHEMA
    assert out.value == expected


def test_with_schema_the_input_type_comes_from_the_schema() -> None:
    # A named INT64 is still a Unix time; name, doc and default are not carried over.
    named = SchemaBuilder.int64().name("com.example.Millis").doc("ms").default_value(5).build()
    out = value_xform("Timestamp").apply(sink(1000, named))
    assert out.value_schema == Timestamp.SCHEMA
    assert out.value == datetime.datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC)
    assert convert("unix", DATE, Date.SCHEMA) == 86_400_000


@pytest.mark.parametrize("target", list(TARGET_SCHEMAS))
@pytest.mark.parametrize(
    "original",
    [
        Schema.OPTIONAL_INT64_SCHEMA,
        OPTIONAL_TIME,
        OPTIONAL_DATE,
        Schema.OPTIONAL_STRING_SCHEMA,
        OPTIONAL_TIMESTAMP,
    ],
)
def test_with_schema_null_value_gets_the_optional_target_schema(target: str, original: Schema) -> None:
    out = value_xform(target, format=STRING_DATE_FMT).apply(sink(None, original))
    assert out.value_schema == TARGET_SCHEMAS[target][1]
    assert out.value is None


@pytest.mark.parametrize("target", list(TARGET_SCHEMAS))
@pytest.mark.parametrize(
    "original",
    [
        Schema.OPTIONAL_INT64_SCHEMA,
        OPTIONAL_TIME,
        OPTIONAL_DATE,
        Schema.OPTIONAL_STRING_SCHEMA,
        OPTIONAL_TIMESTAMP,
    ],
)
def test_with_schema_null_field_and_null_struct(target: str, original: Schema) -> None:
    xform = value_xform(target, format=STRING_DATE_FMT, field="ts")
    struct_schema = SchemaBuilder.struct().field("ts", original).field("other", Schema.STRING_SCHEMA)
    expected = (
        SchemaBuilder.struct().field("ts", TARGET_SCHEMAS[target][1]).field("other", Schema.STRING_SCHEMA)
    )
    value = Struct(struct_schema.build()).put("ts", None).put("other", "test")

    out = xform.apply(sink(value, struct_schema.build()))
    assert out.value_schema == expected.build()
    assert out.value.get("ts") is None
    assert out.value.get("other") == "test"

    out = xform.apply(sink(None, struct_schema.optional().build()))
    assert out.value_schema == expected.optional().build()
    assert out.value is None


def test_with_schema_field_conversion() -> None:
    schema = (
        SchemaBuilder.struct().field("ts", Schema.INT64_SCHEMA).field("other", Schema.STRING_SCHEMA).build()
    )
    value = Struct(schema).put("ts", DATE_PLUS_TIME_UNIX).put("other", "test")
    out = value_xform("Timestamp", field="ts").apply(sink(value, schema))
    assert out.value_schema == (
        SchemaBuilder.struct().field("ts", Timestamp.SCHEMA).field("other", Schema.STRING_SCHEMA).build()
    )
    assert out.value.get("ts") == DATE_PLUS_TIME
    assert out.value.get("other") == "test"
    out.value.validate()


@pytest.mark.parametrize(("replace", "expected"), [("false", None), ("true", EPOCH)])
def test_with_schema_null_field_with_default(replace: str, expected: object) -> None:
    schema = (
        SchemaBuilder.struct()
        .field("ts", SchemaBuilder.int64().optional().default_value(0).build())
        .field("other", Schema.STRING_SCHEMA)
        .build()
    )
    value = Struct(schema).put("ts", None).put("other", "test")
    xform = value_xform("Timestamp", field="ts", **{"replace.null.with.default": replace})
    out = xform.apply(sink(value, schema))
    assert out.value_schema.field("ts").schema == OPTIONAL_TIMESTAMP  # the default is not carried over
    assert out.value.get("ts") == expected
    assert out.value.get("other") == "test"


def test_replace_null_with_default_applies_to_the_other_fields_too() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("ts", Schema.INT64_SCHEMA)
        .field("other", SchemaBuilder.string().optional().default_value("dflt").build())
        .build()
    )
    value = Struct(schema).put("ts", 0)
    kept = value_xform("unix", field="ts").apply(sink(value, schema)).value
    assert kept.get_without_default("other") == "dflt"
    raw = (
        value_xform("unix", field="ts", **{"replace.null.with.default": "false"})
        .apply(sink(value, schema))
        .value
    )
    assert raw.get_without_default("other") is None


def test_a_required_field_left_null_is_an_error_without_replacing_defaults() -> None:
    schema = SchemaBuilder.struct().field("ts", SchemaBuilder.int64().default_value(0).build()).build()
    xform = value_xform("Timestamp", field="ts", **{"replace.null.with.default": "false"})
    with pytest.raises(DataException) as err:
        xform.apply(sink(Struct(schema), schema, offset=7))
    message = str(err.value)
    assert message.startswith("TimestampConverter$Value: ")
    assert '"ts"' in message and "null used for required" in message and "offset 7" in message


@pytest.mark.parametrize(
    ("precision", "unix"),
    [
        ("microseconds", DATE_PLUS_TIME_UNIX_MICROS),
        ("nanoseconds", DATE_PLUS_TIME_UNIX_NANOS),
        ("milliseconds", DATE_PLUS_TIME_UNIX),
    ],
)
def test_with_schema_field_conversion_of_finer_precisions_loses_the_sub_milliseconds(
    precision: str, unix: int
) -> None:
    schema = SchemaBuilder.struct().field("ts", Schema.INT64_SCHEMA).build()
    xform = value_xform("Timestamp", field="ts", **{"unix.precision": precision})
    out = xform.apply(sink(Struct(schema).put("ts", unix), schema))
    assert out.value_schema == SchemaBuilder.struct().field("ts", Timestamp.SCHEMA).build()
    assert out.value.get("ts") == DATE_PLUS_TIME


def test_with_schema_field_conversion_seconds() -> None:
    schema = SchemaBuilder.struct().field("ts", Schema.INT64_SCHEMA).build()
    xform = value_xform("Timestamp", field="ts", **{"unix.precision": "seconds"})
    out = xform.apply(sink(Struct(schema).put("ts", DATE_PLUS_TIME_UNIX_SECONDS), schema))
    assert out.value.get("ts") == datetime.datetime(1970, 1, 2, 0, 0, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("precision", "expected"),
    [("microseconds", 86_401_234_000), ("nanoseconds", 86_401_234_000_000), ("seconds", 86_401)],
)
def test_schemaless_string_to_unix_precisions(precision: str, expected: int) -> None:
    out = convert("unix", DATE_PLUS_TIME_STRING, format=STRING_DATE_FMT, **{"unix.precision": precision})
    assert out == expected


def test_key_variant() -> None:
    out = configured(TimestampConverterKey, {"target.type": "Timestamp"}).apply(
        source("v", key=DATE_PLUS_TIME)
    )
    assert out.key_schema is None
    assert out.key == DATE_PLUS_TIME
    out = configured(TimestampConverterKey, {"target.type": "unix"}).apply(
        source("v", Schema.STRING_SCHEMA, key=DATE_PLUS_TIME, key_schema=Timestamp.SCHEMA)
    )
    assert (out.key_schema, out.key) == (Schema.INT64_SCHEMA, DATE_PLUS_TIME_UNIX)
    assert (out.value_schema, out.value) == (Schema.STRING_SCHEMA, "v")


# -- Unix precision arithmetic (Java's TimeUnit) -------------------------------------


@pytest.mark.parametrize(
    ("precision", "unix", "millis"),
    [
        ("microseconds", -1, 0),  # truncated toward zero, not floored to -1
        ("microseconds", -1001, -1),
        ("nanoseconds", -999_999, 0),
        ("nanoseconds", -1_000_001, -1),
        ("seconds", -2, -2000),
    ],
)
def test_finer_units_truncate_toward_zero(precision: str, unix: int, millis: int) -> None:
    assert convert("Timestamp", unix, **{"unix.precision": precision}) == EPOCH + datetime.timedelta(
        milliseconds=millis
    )


def test_coarser_output_truncates_toward_zero() -> None:
    before = datetime.datetime(1969, 12, 31, 23, 59, 58, 500000, tzinfo=UTC)  # -1500 ms
    assert convert("unix", before, **{"unix.precision": "seconds"}) == -1


def test_finer_output_and_coarser_input_saturate_at_the_int64_limits() -> None:
    late = datetime.datetime(2300, 1, 1, tzinfo=UTC)  # beyond 2262, the last instant INT64 nanoseconds reach
    assert convert("unix", late, **{"unix.precision": "nanoseconds"}) == 2**63 - 1
    early = datetime.datetime(1600, 1, 1, tzinfo=UTC)
    assert convert("unix", early, **{"unix.precision": "nanoseconds"}) == -(2**63)
    assert convert("unix", early, **{"unix.precision": "microseconds"}) == -11_676_096_000_000_000
    # seconds in, seconds out: the input saturates on its way to milliseconds first
    assert convert("unix", 2**62, **{"unix.precision": "seconds"}) == (2**63 - 1) // 1000


def test_a_timestamp_outside_pythons_range_is_a_data_error() -> None:
    with pytest.raises(DataException) as err:
        convert("Timestamp", 10**15, **{"unix.precision": "seconds"})
    assert str(err.value).startswith(
        "TimestampConverter$Value: Timestamp 1000000000000000000 ms since the epoch"
    )
    with pytest.raises(DataException, match="outside the range"):
        convert("string", 10**18, format="yyyy")
    with pytest.raises(DataException, match="outside the range"):
        convert("Date", -(10**18))


# -- strings ---------------------------------------------------------------------------


def test_string_output_uses_the_java_pattern_in_utc() -> None:
    fmt = "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"
    assert convert("string", DATE_PLUS_TIME, format=fmt) == "1970-01-02T00:00:01.234Z"
    assert convert("string", TIME, Time.SCHEMA, format=fmt) == "1970-01-01T00:00:01.234Z"
    assert convert("string", DATE, Date.SCHEMA, format="EEEE d MMMM yyyy") == "Friday 2 January 1970"


def test_string_parsing_is_lenient_ignores_trailing_text_and_honours_zones() -> None:
    assert convert("Date", "2024-02-30 and more", format="yyyy-MM-dd") == datetime.date(2024, 3, 1)
    fmt = "yyyy-MM-dd'T'HH:mm:ssXXX"
    assert convert("Timestamp", "2024-01-01T10:00:00+02:00", format=fmt) == datetime.datetime(
        2024, 1, 1, 8, tzinfo=UTC
    )


def test_string_to_string_reformats() -> None:
    out = convert("string", "20240501", Schema.STRING_SCHEMA, format="yyyyMMdd")
    assert out == "20240501"


def test_unparseable_string_is_a_data_error() -> None:
    with pytest.raises(DataException) as err:
        convert("Timestamp", "nope", Schema.STRING_SCHEMA, format="yyyy-MM-dd")
    assert str(err.value) == (
        "TimestampConverter$Value: Could not parse timestamp: value (nope) does not match "
        "pattern (yyyy-MM-dd) (topic 'test', partition 0, offset 42)"
    )


def test_string_input_without_a_format_is_a_data_error() -> None:
    with pytest.raises(DataException) as err:
        convert("Timestamp", "2024-01-01")
    assert "Could not parse timestamp: value (2024-01-01) needs the format option to be set" in str(err.value)


# -- data errors with a schema -------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "value", "message"),
    [
        (Schema.STRING_SCHEMA, 5, "Expected string timestamp to be a str, but found int"),
        (Schema.INT64_SCHEMA, "5", "Expected Unix timestamp to be an int, but found str"),
        (Schema.INT64_SCHEMA, True, "Expected Unix timestamp to be an int, but found bool"),
        (Timestamp.SCHEMA, "x", "Expected Timestamp to be a datetime.datetime, but found str"),
        (Date.SCHEMA, 1, "Expected Date to be a datetime.date, but found int"),
        (Time.SCHEMA, 1.5, "Expected Time to be a datetime.time, but found float"),
    ],
)
def test_a_value_that_does_not_fit_its_schema(schema: Schema, value: object, message: str) -> None:
    with pytest.raises(DataException) as err:
        convert("Timestamp", value, schema, format="yyyy")
    assert str(err.value) == f"TimestampConverter$Value: {message} (topic 'test', partition 0, offset 42)"


@pytest.mark.parametrize("value", [5, None])
def test_a_schema_of_no_timestamp_type_is_an_error_even_for_null(value: object) -> None:
    with pytest.raises(DataException) as err:
        convert("Timestamp", value, Schema.OPTIONAL_INT32_SCHEMA)
    assert str(err.value).startswith(
        "TimestampConverter$Value: Schema Schema{INT32,optional} "
        "does not correspond to a known timestamp type format"
    )


def test_a_field_of_no_timestamp_type_is_an_error_unless_the_struct_is_null() -> None:
    schema = SchemaBuilder.struct().field("ts", Schema.OPTIONAL_FLOAT64_SCHEMA).optional().build()
    xform = value_xform("Timestamp", field="ts")
    with pytest.raises(DataException, match=r"Schema Schema\{FLOAT64,optional\} does not correspond"):
        xform.apply(sink(Struct(schema), schema))
    out = xform.apply(sink(None, schema))
    assert out.value_schema.field("ts").schema == OPTIONAL_TIMESTAMP


def test_field_mode_with_a_schema_needs_a_struct() -> None:
    with pytest.raises(DataException) as err:
        value_xform("Timestamp", field="ts").apply(sink("x", Schema.STRING_SCHEMA))
    assert "Only Struct objects supported for [converting timestamp formats], found: str" in str(err.value)
    with pytest.raises(DataException, match="Cannot list fields on non-struct type STRING"):
        value_xform("Timestamp", field="ts").apply(sink(None, Schema.OPTIONAL_STRING_SCHEMA))


def test_errors_on_source_records_name_the_source_position() -> None:
    with pytest.raises(DataException) as err:
        value_xform("Timestamp").apply(source(1.5))
    assert "source partition {'source': 's'}, source offset {'position': 7}" in str(err.value)


# -- schema derivation and caching ----------------------------------------------------


def test_field_mode_keeps_the_struct_schemas_identity_and_other_fields() -> None:
    nested = SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA).build()
    schema = (
        SchemaBuilder.struct()
        .name("com.example.Event")
        .version(3)
        .doc("an event")
        .parameter("p", "v")
        .field("id", Schema.INT64_SCHEMA)
        .field("ts", Schema.OPTIONAL_STRING_SCHEMA)
        .field("nested", nested)
        .optional()
        .build()
    )
    value = Struct(schema).put("id", 1).put("ts", "2024-05-01").put("nested", Struct(nested).put("x", 2))
    out = value_xform("Date", field="ts", format="yyyy-MM-dd").apply(sink(value, schema))
    s = out.value_schema
    assert (s.name, s.version, s.doc, dict(s.parameters or {}), s.optional) == (
        "com.example.Event",
        3,
        "an event",
        {"p": "v"},
        True,
    )
    assert [(f.name, f.schema) for f in s.fields] == [
        ("id", Schema.INT64_SCHEMA),
        ("ts", OPTIONAL_DATE),
        ("nested", nested),
    ]
    assert out.value.get("ts") == datetime.date(2024, 5, 1)
    assert out.value.get("id") == 1
    assert out.value.get("nested").get("x") == 2


def test_the_struct_default_is_converted_too() -> None:
    base = SchemaBuilder.struct().field("ts", Schema.INT64_SCHEMA)
    default = Struct(base.build()).put("ts", 86_400_000)
    schema = base.default_value(default).build()
    out = value_xform("Date", field="ts").apply(sink(Struct(schema).put("ts", 0), schema))
    converted_default = out.value_schema.default_value
    assert isinstance(converted_default, Struct)
    assert converted_default.get("ts") == datetime.date(1970, 1, 2)
    assert out.value.get("ts") == datetime.date(1970, 1, 1)


def test_the_derived_schema_is_cached_per_input_schema() -> None:
    schema = SchemaBuilder.struct().field("ts", Schema.INT64_SCHEMA).build()
    xform = value_xform("Timestamp", field="ts")
    first = xform.apply(sink(Struct(schema).put("ts", 1), schema)).value_schema
    second = xform.apply(sink(Struct(schema).put("ts", 2), schema)).value_schema
    assert first is second
    other = SchemaBuilder.struct().field("ts", Schema.OPTIONAL_INT64_SCHEMA).build()
    assert xform.apply(sink(Struct(other), other)).value_schema.field("ts").schema == OPTIONAL_TIMESTAMP
    assert xform.apply(sink(Struct(schema).put("ts", 3), schema)).value_schema is first


def test_a_struct_without_the_field_passes_through_unchanged() -> None:
    schema = SchemaBuilder.struct().field("other", Schema.STRING_SCHEMA).build()
    record = sink(Struct(schema).put("other", "x"), schema)
    assert value_xform("Timestamp", field="ts").apply(record) is record


def test_the_record_keeps_its_coordinates_and_the_other_part() -> None:
    record = sink(DATE_PLUS_TIME, Timestamp.SCHEMA, key="k", key_schema=Schema.STRING_SCHEMA)
    out = value_xform("unix").apply(record)
    assert (out.topic, out.kafka_partition, out.kafka_offset, out.timestamp) == (
        "test",
        0,
        42,
        record.timestamp,
    )
    assert (out.key, out.key_schema) == ("k", Schema.STRING_SCHEMA)
    assert record.value == DATE_PLUS_TIME  # the input record is not modified


def test_a_datetime_whose_zone_gives_no_offset_counts_as_utc() -> None:
    import datetime as dt

    class NoOffset(dt.tzinfo):
        def utcoffset(self, d: dt.datetime | None) -> None:
            return None

    from tests.transforms.support import configured, sink
    from transforms.timestamp_converter import TimestampConverterValue

    value = dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=NoOffset())
    out = configured(TimestampConverterValue, {"target.type": "unix"}).apply(sink(value))
    assert out.value == 1000
