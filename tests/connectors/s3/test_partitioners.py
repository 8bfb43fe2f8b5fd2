"""Partitioners and timestamp extractors: directories from records, Joda-Time path formats, time zones."""

from __future__ import annotations

import datetime
import decimal
import math
import re
import string
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
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
)
from connectors.s3.partitioners import (
    CONFLUENT_PACKAGE,
    DailyPartitioner,
    DefaultPartitioner,
    FieldPartitioner,
    HourlyPartitioner,
    Partitioner,
    RecordFieldTimestampExtractor,
    RecordTimestampExtractor,
    TimeBasedPartitioner,
    WallclockTimestampExtractor,
    compile_path_format,
    floor_timestamp,
    make_partitioner,
    make_timestamp_extractor,
    needs_timestamp,
    parse_timezone,
)

UTC = datetime.UTC
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=UTC)
MS = datetime.timedelta(milliseconds=1)
HOUR = 3_600_000
DAY = 86_400_000
BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")
KOLKATA = ZoneInfo("Asia/Kolkata")
SAO_PAULO = ZoneInfo("America/Sao_Paulo")
RID = "orders-3@42"  # how errors name the records `rec` makes

# The config model files a partitioner ValueError under the first of these keys its message names.
CONFIG_KEYS = ("partition.field.name", "path.format", "partition.duration.ms", "timezone", "locale")


def ms(iso: str) -> int:
    """Epoch ms of an ISO-8601 date-time with offset, computed exactly (no floats)."""
    return (datetime.datetime.fromisoformat(iso) - EPOCH) // MS


def ms_of(moment: datetime.datetime) -> int:
    return (moment - EPOCH) // MS


def wall(timestamp_ms: int, zone: datetime.tzinfo) -> datetime.datetime:
    return (EPOCH + datetime.timedelta(milliseconds=timestamp_ms)).astimezone(zone)


def rec(value: Any = None, schema: Schema | None = None, timestamp: int | None = None) -> SinkRecord:
    return SinkRecord("orders", 3, value_schema=schema, value=value, timestamp=timestamp, kafka_offset=42)


def partitioner(class_name: str = "TimeBasedPartitioner", **overrides: Any) -> Partitioner:
    values: dict[str, Any] = {
        "field_names": [],
        "path_format": "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH",
        "partition_duration_ms": HOUR,
        "locale": "en",
        "timezone": "UTC",
    }
    values.update(overrides)
    return make_partitioner(class_name, **values)


def time_based(path_format: str, timezone: str = "UTC", duration: int = 0, locale: str = "en") -> Partitioner:
    return partitioner(
        path_format=path_format, timezone=timezone, partition_duration_ms=duration, locale=locale
    )


def encode(p: Partitioner, timestamp_ms: int | None, record: SinkRecord | None = None) -> str:
    return p.encode_partition(record or rec(), timestamp_ms)


def start_of(p: Partitioner, timestamp_ms: int) -> int:
    assert isinstance(p, TimeBasedPartitioner)
    return p.partition_start_ms(timestamp_ms)


def config_key(message: str) -> str | None:
    return next((key for key in CONFIG_KEYS if key in message), None)


# -- choosing a partitioner ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("DefaultPartitioner", DefaultPartitioner),
        ("FieldPartitioner", FieldPartitioner),
        ("TimeBasedPartitioner", TimeBasedPartitioner),
        ("HourlyPartitioner", HourlyPartitioner),
        ("DailyPartitioner", DailyPartitioner),
    ],
)
def test_short_and_confluent_class_names_choose_the_partitioner(name: str, kind: type[Partitioner]) -> None:
    for class_name in (name, CONFLUENT_PACKAGE + name, f"  {CONFLUENT_PACKAGE}{name} "):
        assert type(partitioner(class_name, field_names=["id"])) is kind


@pytest.mark.parametrize(
    "name", ["", "Default", "io.confluent.connect.storage.partitioner.Nope", "com.example.MyPartitioner"]
)
def test_an_unknown_partitioner_is_a_value_error_naming_it(name: str) -> None:
    with pytest.raises(ValueError, match="Unknown partitioner") as caught:
        partitioner(name)
    assert repr(name) in str(caught.value)
    assert "DailyPartitioner" in str(caught.value)
    assert config_key(str(caught.value)) is None  # filed under partitioner.class


def test_an_empty_directory_delimiter_is_refused() -> None:
    with pytest.raises(ValueError, match=re.escape("directory.delim")):
        partitioner("DefaultPartitioner", directory_delim="")


def test_only_time_based_partitioners_need_a_timestamp() -> None:
    assert not needs_timestamp(partitioner("DefaultPartitioner"))
    assert not needs_timestamp(partitioner("FieldPartitioner", field_names=["id"]))
    for name in ("TimeBasedPartitioner", "HourlyPartitioner", "DailyPartitioner"):
        p = partitioner(name)
        assert needs_timestamp(p) and p.needs_timestamp


def test_settings_other_partitioners_use_are_not_checked() -> None:
    # A DefaultPartitioner does not care about a bad time zone or an empty field list.
    bad = {
        "field_names": [],
        "path_format": "qqq",
        "partition_duration_ms": -1,
        "locale": "",
        "timezone": "Nope",
    }
    assert isinstance(make_partitioner("DefaultPartitioner", **bad), DefaultPartitioner)
    assert isinstance(make_partitioner("FieldPartitioner", **{**bad, "field_names": ["a"]}), FieldPartitioner)


def test_the_partitioned_path_is_topic_delimiter_partition() -> None:
    assert partitioner("DefaultPartitioner").partitioned_path("orders", "partition=3") == "orders/partition=3"
    p = partitioner("DefaultPartitioner", directory_delim="#")
    assert p.partitioned_path("orders", "partition=3") == "orders#partition=3"


def test_records_are_named_topic_partition_at_offset() -> None:
    assert rec().where == RID


# -- DefaultPartitioner ---------------------------------------------------------------------------------


def test_default_partitioner_names_the_kafka_partition() -> None:
    p = partitioner("DefaultPartitioner", directory_delim="_")
    assert p.encode_partition(rec(), None) == "partition=3"
    assert p.encode_partition(SinkRecord("t", 0, kafka_offset=1), 123) == "partition=0"


def test_default_partitioner_needs_a_kafka_partition() -> None:
    with pytest.raises(DataException, match=re.escape("Record t-None@7: it has no Kafka partition")):
        partitioner("DefaultPartitioner").encode_partition(SinkRecord("t", None, kafka_offset=7), None)


# -- FieldPartitioner -----------------------------------------------------------------------------------

ADDRESS = (
    SchemaBuilder.struct()
    .field("city", Schema.STRING_SCHEMA)
    .field("zip", Schema.OPTIONAL_INT32_SCHEMA)
    .field("tags", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).optional().build())
    .build()
)
CUSTOMER = (
    SchemaBuilder.struct()
    .field("i8", Schema.INT8_SCHEMA)
    .field("i16", Schema.INT16_SCHEMA)
    .field("i32", Schema.INT32_SCHEMA)
    .field("i64", Schema.INT64_SCHEMA)
    .field("name", Schema.STRING_SCHEMA)
    .field("active", Schema.BOOLEAN_SCHEMA)
    .field("blocked", Schema.BOOLEAN_SCHEMA)
    .field("region", SchemaBuilder.string().default_value("eu").build())
    .field("score", Schema.FLOAT64_SCHEMA)
    .field("ratio", Schema.FLOAT32_SCHEMA)
    .field("raw", Schema.BYTES_SCHEMA)
    .field("amount", Decimal.schema(2))
    .field("day", Date.SCHEMA)
    .field("at", Time.SCHEMA)
    .field("ts", Timestamp.SCHEMA)
    .field("list", SchemaBuilder.array(Schema.INT32_SCHEMA).build())
    .field("note", Schema.OPTIONAL_STRING_SCHEMA)
    .field("address", ADDRESS)
    .field("maybe", SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA).optional().build())
    .build()
)


def customer() -> Struct:
    address = Struct(ADDRESS).put("city", "Berlin").put("tags", {"tier": "gold", "": "empty"})
    return (
        Struct(CUSTOMER)
        .put("i8", -8)
        .put("i16", 16)
        .put("i32", 32)
        .put("i64", 2**62)
        .put("name", "ann lee")
        .put("active", True)
        .put("blocked", False)
        .put("score", 1.5)
        .put("ratio", 0.25)
        .put("raw", b"\x00")
        .put("amount", decimal.Decimal("1.50"))
        .put("day", datetime.date(2024, 1, 2))
        .put("at", datetime.time(1, 2))
        .put("ts", datetime.datetime(2024, 1, 2, tzinfo=UTC))
        .put("list", [1])
        .put("address", address)
    )


CUSTOMER_DICT: dict[str, Any] = {
    "i8": -8,
    "i64": 2**62,
    "name": "ann lee",
    "active": True,
    "blocked": False,
    "score": 1.5,
    "raw": b"\x00",
    "amount": decimal.Decimal("1.50"),
    "day": datetime.date(2024, 1, 2),
    "list": [1],
    "nested_list": {"items": [1, 2]},
    "note": None,
    "address": {"city": "Berlin", "zip": 10115, "tags": {"tier": "gold"}, "none": None},
    "empty": "",
}


def fields(names: list[str], value: Any, schema: Schema | None = None, delim: str = "/") -> str:
    return partitioner("FieldPartitioner", field_names=names, directory_delim=delim).encode_partition(
        rec(value, schema), None
    )


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["i8"], "i8=-8"),
        (["i16"], "i16=16"),
        (["i32"], "i32=32"),
        (["i64"], f"i64={2**62}"),
        (["name"], "name=ann lee"),
        (["active", "blocked"], "active=true/blocked=false"),
        (["region"], "region=eu"),  # unset: the field's default, as Struct.get
        (["address.city"], "address.city=Berlin"),
        (["address.tags.tier"], "address.tags.tier=gold"),  # a map inside a struct
        (["name", "address.city", "i32"], "name=ann lee/address.city=Berlin/i32=32"),
    ],
)
def test_field_partitioner_reads_struct_fields(names: list[str], expected: str) -> None:
    assert fields(names, customer(), CUSTOMER) == expected


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["i8"], "i8=-8"),
        (["i64"], f"i64={2**62}"),
        (["name"], "name=ann lee"),
        (["active", "blocked"], "active=true/blocked=false"),
        (["empty"], "empty="),
        (["address.city"], "address.city=Berlin"),
        (["address.zip"], "address.zip=10115"),
        (["address.tags.tier"], "address.tags.tier=gold"),
    ],
)
def test_field_partitioner_reads_schemaless_maps(names: list[str], expected: str) -> None:
    assert fields(names, CUSTOMER_DICT) == expected


def test_field_partitioner_joins_with_the_directory_delimiter() -> None:
    assert fields(["name", "i8"], CUSTOMER_DICT, delim="|") == "name=ann lee|i8=-8"
    assert fields(["name", "i8"], CUSTOMER_DICT, delim="::") == "name=ann lee::i8=-8"


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("missing", "the value has no field 'missing'"),
        ("address.country", "address has no field 'country'"),
        ("note", "its value is null"),
        ("address.zip", "its value is null"),
        ("maybe.x", "maybe is null"),
        ("name.first", "name is a str, not a struct or map"),
        ("address.tags.tier.x", "address.tags.tier is a str, not a struct or map"),
        ("address.tags.none", "address.tags has no key 'none'"),
        ("score", "its value is a float; only integers, strings and booleans can name a partition"),
        ("ratio", "its value is a float"),
        ("raw", "its value is a bytes"),
        ("amount", "its value is a Decimal"),
        ("day", "its value is a date"),
        ("at", "its value is a time"),
        ("ts", "its value is a datetime"),
        ("list", "its value is a list"),
        ("address", "its value is a Struct"),
        ("address.tags", "its value is a dict"),
    ],
)
def test_field_partitioner_errors_on_struct_values_name_record_field_and_problem(
    name: str, problem: str
) -> None:
    expected = f"Record {RID}: cannot partition by field {name!r}: {problem}"
    with pytest.raises(DataException, match=re.escape(expected)):
        fields([name], customer(), CUSTOMER)


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("missing", "the value has no key 'missing'"),
        ("address.none", "its value is null"),
        ("address.country", "address has no key 'country'"),
        ("address.city.x", "address.city is a str, not a struct or map"),
        ("note", "its value is null"),
        ("note.x", "note is null"),
        ("nested_list.items.0", "nested_list.items is a list, not a struct or map"),
        ("score", "its value is a float"),
        ("raw", "its value is a bytes"),
        ("amount", "its value is a Decimal"),
        ("day", "its value is a date"),
        ("list", "its value is a list"),
        ("address", "its value is a dict"),
    ],
)
def test_field_partitioner_errors_on_map_values(name: str, problem: str) -> None:
    expected = f"Record {RID}: cannot partition by field {name!r}: {problem}"
    with pytest.raises(DataException, match=re.escape(expected)):
        fields([name], CUSTOMER_DICT)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (None, "the record value is null"),
        ("text", "the value is a str, not a struct or map"),
        (7, "the value is an int, not a struct or map"),
        ([{"id": 1}], "the value is a list, not a struct or map"),
    ],
)
def test_field_partitioner_needs_a_struct_or_map_value(value: Any, problem: str) -> None:
    with pytest.raises(
        DataException, match=re.escape(f"Record {RID}: cannot partition by field 'id': {problem}")
    ):
        fields(["id"], value)


def test_the_first_bad_field_is_reported() -> None:
    with pytest.raises(DataException, match="field 'score'"):
        fields(["name", "score", "missing"], CUSTOMER_DICT)


@pytest.mark.parametrize("names", [[], [""], ["a", ""], [".a"], ["a."], ["a..b"]])
def test_field_partitioner_needs_field_names(names: list[str]) -> None:
    with pytest.raises(ValueError, match=re.escape("partition.field.name")) as caught:
        partitioner("FieldPartitioner", field_names=names)
    assert config_key(str(caught.value)) == "partition.field.name"


# -- time-based settings ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["TimeBasedPartitioner", "HourlyPartitioner", "DailyPartitioner"])
@pytest.mark.parametrize(
    ("overrides", "key", "text"),
    [
        ({"timezone": None}, "timezone", "timezone must be set"),
        ({"timezone": "  "}, "timezone", "timezone must be set"),
        ({"timezone": "Mars/Olympus"}, "timezone", "timezone 'Mars/Olympus' is not a known time zone"),
        ({"timezone": "../etc/passwd"}, "timezone", "is not a known time zone"),
        ({"timezone": "+24:00"}, "timezone", "timezone '+24:00' is not a valid offset"),
        ({"timezone": "+05:60"}, "timezone", "is not a valid offset"),
        ({"locale": ""}, "locale", "locale must not be empty"),
        ({"locale": " "}, "locale", "locale must not be empty"),
    ],
)
def test_time_based_partitioners_need_a_timezone_and_locale(
    name: str, overrides: dict[str, Any], key: str, text: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(text)) as caught:
        partitioner(name, **overrides)
    assert config_key(str(caught.value)) == key


@pytest.mark.parametrize(
    ("overrides", "key", "text"),
    [
        ({"partition_duration_ms": -1}, "partition.duration.ms", "partition.duration.ms must be >= 0"),
        ({"path_format": None}, "path.format", "path.format must be set"),
        ({"path_format": ""}, "path.format", "path.format must be set"),
        ({"path_format": "  "}, "path.format", "path.format must be set"),
        ({"path_format": "YYYY/qq"}, "path.format", "path.format: unknown pattern letter 'q'"),
        (
            {"path_format": "'year=YYYY"},
            "path.format",
            "path.format: Unterminated quote: the quote at position 0 is never closed",
        ),
        ({"path_format": "YYYY/'it''s"}, "path.format", "the quote at position 5 is never closed"),
        ({"path_format": "zzzz"}, "path.format", "long time zone names (zzzz) are not supported"),
        ({"path_format": "'x'=MMM", "locale": "de_DE"}, "locale", "locale 'de_DE' is not supported"),
        ({"path_format": "EEE", "locale": "fr"}, "locale", "text field 'EEE'"),
        ({"path_format": "hh a", "locale": "de-AT"}, "locale", "text field 'a'"),
        ({"path_format": "z", "locale": "de"}, "locale", "text field 'z'"),
        ({"path_format": "G", "locale": "ja"}, "locale", "text field 'G'"),
    ],
)
def test_time_based_settings_errors_name_their_key(overrides: dict[str, Any], key: str, text: str) -> None:
    with pytest.raises(ValueError, match=re.escape(text)) as caught:
        partitioner("TimeBasedPartitioner", **overrides)
    assert config_key(str(caught.value)) == key


@pytest.mark.parametrize("letter", sorted(set(string.ascii_letters) - set("yYxCGMdDHkKhmswwEeaSZz")))
def test_every_letter_joda_does_not_know_is_refused(letter: str) -> None:
    with pytest.raises(ValueError, match=re.escape(f"unknown pattern letter {letter!r}")):
        compile_path_format(f"'ok'/{letter}")


@pytest.mark.parametrize("locale", ["en", "EN", "en_US", "en-GB", "en_IN_x"])
def test_english_locales_print_names(locale: str) -> None:
    p = time_based("MMM/EEE/a/z/G", locale=locale)
    assert encode(p, ms("2024-02-05T13:00:00Z")) == "Feb/Mon/PM/UTC/AD"


@pytest.mark.parametrize("locale", ["de_DE", "fr", "ja-JP", "zz"])
def test_any_locale_prints_numeric_fields(locale: str) -> None:
    p = time_based("'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH/mm/ss/SSS/Z/ZZ/ZZZ", locale=locale)
    assert (
        encode(p, ms("2024-02-05T13:04:05.678Z"))
        == "year=2024/month=02/day=05/hour=13/04/05/678/+0000/+00:00/UTC"
    )


def test_hourly_and_daily_ignore_path_format_and_duration() -> None:
    t = ms("2024-02-05T13:04:05Z")
    hourly = partitioner("HourlyPartitioner", path_format="qqq", partition_duration_ms=-5)
    daily = partitioner("DailyPartitioner", path_format=None, partition_duration_ms=1)
    assert encode(hourly, t) == "year=2024/month=02/day=05/hour=13"
    assert encode(daily, t) == "year=2024/month=02/day=05"
    assert start_of(hourly, t) == ms("2024-02-05T13:00:00Z")
    assert start_of(daily, t) == ms("2024-02-05T00:00:00Z")


def test_a_trailing_delimiter_in_path_format_is_dropped() -> None:
    assert encode(time_based("YYYY/MM//"), ms("2024-02-05T13:00:00Z")) == "2024/02"
    p = partitioner(path_format="YYYY|MM|", directory_delim="|", partition_duration_ms=0)
    assert encode(p, ms("2024-02-05T13:00:00Z")) == "2024|02"
    assert encode(time_based("YYYY/'x/'"), ms("2024-02-05T13:00:00Z")) == "2024/x"  # quoted too


@pytest.mark.parametrize(
    ("name", "offset"),
    [
        ("UTC", datetime.timedelta(0)),
        ("+05:30", datetime.timedelta(hours=5, minutes=30)),
        ("-0800", datetime.timedelta(hours=-8)),
        ("+01", datetime.timedelta(hours=1)),
        (" Europe/Berlin ", datetime.timedelta(hours=1)),
    ],
)
def test_timezones_are_iana_names_or_fixed_offsets(name: str, offset: datetime.timedelta) -> None:
    zone = parse_timezone(name)
    assert zone.utcoffset(datetime.datetime(2024, 1, 1)) == offset


def test_fixed_offset_zones_print_as_joda_does() -> None:
    p = time_based("Z/ZZ/ZZZ/z/HH:mm", timezone="-03:30")
    assert encode(p, ms("2024-06-01T12:00:00Z")) == "-0330/-03:30/-03:30/-03:30/08:30"


# -- Joda-Time patterns -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "iso", "expected"),
    [
        # literals: quoted text, '' as a quote in and out of quotes, other characters as they are
        ("'year'=YYYY", "2024-03-05T07:08:09.010", "year=2024"),
        ("''YYYY''", "2024-03-05T07:08:09.010", "'2024'"),
        ("'it''s'/'o''''k'", "2024-03-05T07:08:09.010", "it's/o''k"),
        ("''", "2024-03-05T07:08:09.010", "'"),
        ("'YYYY MM dd'", "2024-03-05T07:08:09.010", "YYYY MM dd"),
        ("yyyy-MM-dd'T'HH:mm:ss.SSS", "2024-03-05T07:08:09.010", "2024-03-05T07:08:09.010"),
        ("'dt'=yyyy_MM_dd #1 ~ é", "2024-03-05T07:08:09.010", "dt=2024_03_05 #1 ~ é"),
        ("''''", "2024-03-05T07:08:09.010", "''"),
        ("'''x'''", "2024-03-05T07:08:09.010", "'x'"),
        # years: Y is year of era in Joda (not week year), 2 letters are the two-digit year
        ("YYYY|yyyy|YY|yy|y|Y|yyy|YYYYY", "2024-12-31T00:00", "2024|2024|24|24|2024|2024|2024|02024"),
        ("YYYY|YY|y", "0987-06-05T00:00", "0987|87|987"),
        ("YY|yy", "2005-01-01T00:00", "05|05"),
        ("YYYY", "0001-01-02T00:00", "0001"),
        ("YYYY/YYYY", "2020-12-31T23:59", "2020/2020"),  # ISO week 53, but year 2020
        ("C|CC", "2024-01-01T00:00", "20|20"),
        # numbers: the repeat count is the minimum width
        ("M|MM|d|dd|ddd|H|HH|m|mm|s|ss", "2024-03-05T07:08:09", "3|03|5|05|005|7|07|8|08|9|09"),
        ("M|MM|d|dd|H|HH|m|mm|s|ss", "2024-11-25T17:48:59", "11|11|25|25|17|17|48|48|59|59"),
        ("D|DD|DDD", "2024-01-09T00:00", "9|09|009"),
        ("D|DDD", "2024-12-31T00:00", "366|366"),
        ("D|DDD", "2023-12-31T00:00", "365|365"),
        # ISO weeks: week of weekyear, weekyear, day of week
        ("w|ww|xxxx|xx|e", "2021-01-03T00:00", "53|53|2020|20|7"),
        ("w|ww|xxxx|e", "2024-12-30T00:00", "1|01|2025|1"),
        ("ww|xxxx", "2024-06-15T00:00", "24|2024"),
        # names
        ("MMM|MMMM|MMMMM", "2024-01-15T00:00", "Jan|January|January"),
        ("MMM|MMMM", "2024-05-15T00:00", "May|May"),
        ("MMM|MMMM", "2024-09-15T00:00", "Sep|September"),
        ("MMM|MMMM", "2024-12-15T00:00", "Dec|December"),
        ("E|EE|EEE|EEEE|EEEEE", "2024-03-04T00:00", "Mon|Mon|Mon|Monday|Monday"),
        ("EEE|EEEE", "2024-03-09T00:00", "Sat|Saturday"),
        ("EEE|EEEE|e", "2024-03-10T00:00", "Sun|Sunday|7"),
        ("G|GGGG", "2024-03-10T00:00", "AD|AD"),
        # 12-hour clocks
        ("hh a|h a|KK|K|kk|k", "2024-03-05T00:30", "12 AM|12 AM|00|0|24|24"),
        ("hh a|h a|KK|kk", "2024-03-05T01:00", "01 AM|1 AM|01|01"),
        ("hh a|h a|K", "2024-03-05T11:59", "11 AM|11 AM|11"),
        ("hh a|h a|K|k", "2024-03-05T12:00", "12 PM|12 PM|0|12"),
        ("hh a|h a|K|k", "2024-03-05T13:05", "01 PM|1 PM|1|13"),
        ("hh:mm a|K|k", "2024-03-05T23:59", "11:59 PM|11|23"),
        # fractions of a second
        ("SSS|SSSS|SS|S", "2024-03-05T00:00:00.120", "120|120|12|12"),
        ("SSS|SS|S", "2024-03-05T00:00:00.100", "100|10|1"),
        ("SSS|SS|S", "2024-03-05T00:00:00.007", "007|007|007"),
        ("SSS|S", "2024-03-05T00:00:00.999", "999|999"),
        ("SSSS|SSS|S", "2024-03-05T00:00:00", "0000|000|0"),
    ],
)
def test_joda_patterns_print_as_joda(pattern: str, iso: str, expected: str) -> None:
    moment = datetime.datetime.fromisoformat(iso).replace(tzinfo=UTC)
    assert compile_path_format(pattern)(moment) == expected


@pytest.mark.parametrize(
    ("zone", "iso", "expected"),
    [
        ("UTC", "2024-01-15T12:00:00Z", "+0000|+00:00|UTC|UTC"),
        ("Asia/Kolkata", "2024-01-15T12:00:00Z", "+0530|+05:30|Asia/Kolkata|IST"),
        ("America/New_York", "2024-01-15T12:00:00Z", "-0500|-05:00|America/New_York|EST"),
        ("America/New_York", "2024-07-15T12:00:00Z", "-0400|-04:00|America/New_York|EDT"),
        ("Europe/Berlin", "2024-01-15T12:00:00Z", "+0100|+01:00|Europe/Berlin|CET"),
        ("Europe/Berlin", "2024-07-15T12:00:00Z", "+0200|+02:00|Europe/Berlin|CEST"),
        ("America/St_Johns", "2024-01-15T12:00:00Z", "-0330|-03:30|America/St_Johns|NST"),
        ("Asia/Kathmandu", "2024-01-15T12:00:00Z", "+0545|+05:45|Asia/Kathmandu|+0545"),
    ],
)
def test_zone_fields_print_offsets_ids_and_names(zone: str, iso: str, expected: str) -> None:
    assert encode(time_based("Z|ZZ|ZZZ|z", timezone=zone), ms(iso)) == expected


def test_the_timestamp_is_printed_in_the_time_zone() -> None:
    t = ms("2024-07-01T23:30:00Z")
    pattern = "yyyy-MM-dd HH:mm EEE"
    assert encode(time_based(pattern), t) == "2024-07-01 23:30 Mon"
    assert encode(time_based(pattern, "Asia/Kolkata"), t) == "2024-07-02 05:00 Tue"
    assert encode(time_based(pattern, "America/New_York"), t) == "2024-07-01 19:30 Mon"
    assert encode(time_based(pattern, "Europe/Berlin"), t) == "2024-07-02 01:30 Tue"


# -- flooring to the partition duration ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("zone", "duration", "iso", "start_iso", "expected"),
    [
        ("UTC", HOUR, "2024-03-05T07:59:59.999Z", "2024-03-05T07:00Z", "2024-03-05 07:00"),
        ("UTC", HOUR, "2024-03-05T08:00Z", "2024-03-05T08:00Z", "2024-03-05 08:00"),
        ("UTC", DAY, "2024-03-05T23:59:59.999Z", "2024-03-05T00:00Z", "2024-03-05 00:00"),
        ("UTC", 15 * 60_000, "2024-03-05T07:44:59Z", "2024-03-05T07:30Z", "2024-03-05 07:30"),
        ("UTC", 10 * 60_000, "2024-03-05T07:44:59Z", "2024-03-05T07:40Z", "2024-03-05 07:40"),
        ("UTC", 7 * DAY, "2024-03-05T07:44:59Z", "2024-02-29T00:00Z", "2024-02-29 00:00"),  # epoch was a Thu
        ("UTC", HOUR, "1969-12-31T23:59:59.999Z", "1969-12-31T23:00Z", "1969-12-31 23:00"),
        ("UTC", DAY, "1900-06-15T12:00Z", "1900-06-15T00:00Z", "1900-06-15 00:00"),
        # 30-minute offset: hours and days begin at :30 UTC
        ("Asia/Kolkata", HOUR, "2024-06-01T10:45+05:30", "2024-06-01T10:00+05:30", "2024-06-01 10:00"),
        ("Asia/Kolkata", HOUR, "2024-06-01T05:15Z", "2024-06-01T04:30Z", "2024-06-01 10:00"),
        ("Asia/Kolkata", DAY, "2024-06-01T02:00+05:30", "2024-05-31T18:30Z", "2024-06-01 00:00"),
        ("Asia/Kolkata", DAY, "2024-05-31T18:29:59.999Z", "2024-05-30T18:30Z", "2024-05-31 00:00"),
        ("Asia/Kolkata", 15 * 60_000, "2024-06-01T10:44+05:30", "2024-06-01T10:30+05:30", "2024-06-01 10:30"),
        ("Asia/Kathmandu", HOUR, "2024-06-01T10:44+05:45", "2024-06-01T10:00+05:45", "2024-06-01 10:00"),
        # Berlin, spring forward (2024-03-31 02:00 CET -> 03:00 CEST): a 23-hour day
        ("Europe/Berlin", DAY, "2024-03-31T00:30+01:00", "2024-03-31T00:00+01:00", "2024-03-31 00:00"),
        ("Europe/Berlin", DAY, "2024-03-31T12:00+02:00", "2024-03-31T00:00+01:00", "2024-03-31 00:00"),
        ("Europe/Berlin", DAY, "2024-03-31T23:59:59.999+02:00", "2024-03-30T23:00Z", "2024-03-31 00:00"),
        ("Europe/Berlin", DAY, "2024-04-01T00:00+02:00", "2024-03-31T22:00Z", "2024-04-01 00:00"),
        (
            "Europe/Berlin",
            HOUR,
            "2024-03-31T01:59:59.999+01:00",
            "2024-03-31T01:00+01:00",
            "2024-03-31 01:00",
        ),
        ("Europe/Berlin", HOUR, "2024-03-31T03:00+02:00", "2024-03-31T01:00Z", "2024-03-31 03:00"),
        # 2-hour partitions: 03:30 CEST floors to 02:00, which never happened: the gap's end
        ("Europe/Berlin", 2 * HOUR, "2024-03-31T03:30+02:00", "2024-03-31T01:00Z", "2024-03-31 03:00"),
        ("Europe/Berlin", 2 * HOUR, "2024-03-31T04:30+02:00", "2024-03-31T04:00+02:00", "2024-03-31 04:00"),
        # Berlin, fall back (2024-10-27 03:00 CEST -> 02:00 CET): a 25-hour day, 02:xx twice
        ("Europe/Berlin", DAY, "2024-10-27T01:00+02:00", "2024-10-26T22:00Z", "2024-10-27 00:00"),
        ("Europe/Berlin", DAY, "2024-10-27T02:30+01:00", "2024-10-26T22:00Z", "2024-10-27 00:00"),
        ("Europe/Berlin", DAY, "2024-10-27T23:59:59.999+01:00", "2024-10-26T22:00Z", "2024-10-27 00:00"),
        ("Europe/Berlin", DAY, "2024-10-28T00:00+01:00", "2024-10-27T23:00Z", "2024-10-28 00:00"),
        ("Europe/Berlin", HOUR, "2024-10-27T02:30+02:00", "2024-10-27T00:00Z", "2024-10-27 02:00"),
        ("Europe/Berlin", HOUR, "2024-10-27T02:30+01:00", "2024-10-27T01:00Z", "2024-10-27 02:00"),
        ("Europe/Berlin", HOUR, "2024-10-27T03:00+01:00", "2024-10-27T02:00Z", "2024-10-27 03:00"),
        ("Europe/Berlin", 2 * HOUR, "2024-10-27T02:10+01:00", "2024-10-27T01:00Z", "2024-10-27 02:00"),
        ("Europe/Berlin", 2 * HOUR, "2024-10-27T03:10+01:00", "2024-10-27T01:00Z", "2024-10-27 02:00"),
        # New York, spring forward (2024-03-10 02:00 EST -> 03:00 EDT)
        ("America/New_York", DAY, "2024-03-10T12:00-04:00", "2024-03-10T05:00Z", "2024-03-10 00:00"),
        ("America/New_York", DAY, "2024-03-10T23:30-04:00", "2024-03-10T05:00Z", "2024-03-10 00:00"),
        ("America/New_York", DAY, "2024-03-11T00:00-04:00", "2024-03-11T04:00Z", "2024-03-11 00:00"),
        ("America/New_York", HOUR, "2024-03-10T03:59-04:00", "2024-03-10T07:00Z", "2024-03-10 03:00"),
        # New York, fall back (2024-11-03 02:00 EDT -> 01:00 EST): 01:xx twice
        ("America/New_York", HOUR, "2024-11-03T01:30-04:00", "2024-11-03T05:00Z", "2024-11-03 01:00"),
        ("America/New_York", HOUR, "2024-11-03T01:30-05:00", "2024-11-03T06:00Z", "2024-11-03 01:00"),
        ("America/New_York", DAY, "2024-11-03T01:30-05:00", "2024-11-03T04:00Z", "2024-11-03 00:00"),
        ("America/New_York", DAY, "2024-11-03T23:30-05:00", "2024-11-03T04:00Z", "2024-11-03 00:00"),
        ("America/New_York", DAY, "2024-11-04T00:00-05:00", "2024-11-04T05:00Z", "2024-11-04 00:00"),
        # Sao Paulo, 2018-11-04: clocks went from 00:00 to 01:00, so the day began at 01:00 -02:00
        ("America/Sao_Paulo", DAY, "2018-11-04T12:00-02:00", "2018-11-04T03:00Z", "2018-11-04 01:00"),
        ("America/Sao_Paulo", DAY, "2018-11-03T23:59-03:00", "2018-11-03T03:00Z", "2018-11-03 00:00"),
        # Lord Howe: a 30-minute DST shift (2024-04-07 02:00 +11 -> 01:30 +10:30)
        ("Australia/Lord_Howe", HOUR, "2024-04-07T01:45+10:30", "2024-04-07T01:00+11:00", "2024-04-07 01:00"),
        ("Australia/Lord_Howe", DAY, "2024-04-07T23:00+10:30", "2024-04-06T13:00Z", "2024-04-07 00:00"),
    ],
)
def test_timestamps_are_floored_in_the_time_zone(
    zone: str, duration: int, iso: str, start_iso: str, expected: str
) -> None:
    p = time_based("yyyy-MM-dd HH:mm", zone, duration)
    assert start_of(p, ms(iso)) == ms(start_iso)
    assert encode(p, ms(iso)) == expected
    assert floor_timestamp(ms(iso), duration, ZoneInfo(zone)) == ms(start_iso)


def test_berlin_days_across_dst_are_23_and_25_hours_long() -> None:
    daily = partitioner("DailyPartitioner", timezone="Europe/Berlin")
    spring = start_of(daily, ms("2024-04-01T12:00+02:00")) - start_of(daily, ms("2024-03-31T12:00+02:00"))
    autumn = start_of(daily, ms("2024-10-28T12:00+01:00")) - start_of(daily, ms("2024-10-27T12:00+01:00"))
    assert (spring, autumn) == (23 * HOUR, 25 * HOUR)


def test_hourly_directories_repeat_when_the_clock_falls_back() -> None:
    hourly = partitioner("HourlyPartitioner", timezone="America/New_York")
    hours = [encode(hourly, ms("2024-11-03T04:30Z") + i * HOUR) for i in range(4)]
    assert hours == [
        "year=2024/month=11/day=03/hour=00",
        "year=2024/month=11/day=03/hour=01",
        "year=2024/month=11/day=03/hour=01",
        "year=2024/month=11/day=03/hour=02",
    ]


def test_a_zero_duration_does_not_floor() -> None:
    t = ms("2024-03-05T07:08:09.010Z")
    assert start_of(time_based("HH", duration=0), t) == t
    assert encode(time_based("HH:mm:ss.SSS", duration=0), t) == "07:08:09.010"


def test_time_based_partitioners_need_a_timestamp_in_range() -> None:
    p = partitioner("HourlyPartitioner")
    with pytest.raises(DataException, match=re.escape(f"Record {RID}: no timestamp to partition by")):
        encode(p, None)
    for bad in (ms("9999-12-31T00:00Z") + 1, ms("0001-01-02T00:00Z") - 1, 2**63):
        with pytest.raises(
            DataException, match=re.escape(f"Record {RID}: timestamp {bad} ms is outside the years")
        ):
            encode(p, bad)


def test_a_partition_that_would_start_before_year_1_is_a_data_exception() -> None:
    p = time_based("yyyy", duration=10**18)
    with pytest.raises(
        DataException, match=re.escape(f"Record {RID}: the partition of -1 ms would start before")
    ):
        encode(p, -1)
    assert encode(p, 1) == "1970"  # one huge partition starting at the epoch


def test_repeated_partitions_are_encoded_once_and_stay_correct() -> None:
    p = partitioner("HourlyPartitioner", timezone="Europe/Berlin")
    first = [encode(p, ms("2024-01-01T00:00Z") + i * 60_000) for i in range(5000)]
    assert first == [
        wall(ms("2024-01-01T00:00Z") + i * 60_000, BERLIN).strftime("year=%Y/month=%m/day=%d/hour=%H")
        for i in range(5000)
    ]


# -- properties ------------------------------------------------------------------------------------------

YEAR_1000 = ms("1000-01-01T00:00Z")
YEAR_1_DAY_2 = ms("0001-01-02T00:00Z")
YEAR_9999_END = ms("9999-12-31T00:00Z")
YEAR_1950 = ms("1950-01-01T00:00Z")
YEAR_2100 = ms("2100-01-01T00:00Z")
DST_ZONES = ["Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "America/Sao_Paulo"]
HOURLY_UTC = partitioner("HourlyPartitioner")
HOURLY = {zone: partitioner("HourlyPartitioner", timezone=zone) for zone in DST_ZONES}
DAILY = {zone: partitioner("DailyPartitioner", timezone=zone) for zone in DST_ZONES}


@settings(max_examples=400)
@given(st.integers(YEAR_1000, YEAR_9999_END))
def test_hourly_in_utc_is_strftime(t: int) -> None:
    # t / 1000 rounds to the microsecond, never across a millisecond, so the hour is exact
    expected = datetime.datetime.fromtimestamp(t / 1000, UTC).strftime("year=%Y/month=%m/day=%d/hour=%H")
    assert encode(HOURLY_UTC, t) == expected
    start = start_of(HOURLY_UTC, t)
    assert t - HOUR < start <= t and start % HOUR == 0


@settings(max_examples=300)
@given(st.integers(YEAR_1_DAY_2, YEAR_9999_END))
def test_hourly_in_utc_over_all_years(t: int) -> None:
    moment = wall(t, UTC)
    expected = f"year={moment.year:04d}/month={moment.month:02d}/day={moment.day:02d}/hour={moment.hour:02d}"
    assert encode(HOURLY_UTC, t) == expected


@settings(max_examples=300)
@given(st.integers(YEAR_1000, YEAR_9999_END), st.integers(1, 30 * DAY))
def test_utc_floors_lie_within_one_duration(t: int, duration: int) -> None:
    start = floor_timestamp(t, duration, UTC)
    assert t - duration < start <= t
    assert start % duration == 0
    assert floor_timestamp(start, duration, UTC) == start


@settings(max_examples=300)
@given(st.sampled_from(DST_ZONES), st.integers(YEAR_1950, YEAR_2100))
def test_hourly_in_a_zone_is_the_local_hour(zone: str, t: int) -> None:
    local = wall(t, ZoneInfo(zone))
    assert encode(HOURLY[zone], t) == local.strftime("year=%Y/month=%m/day=%d/hour=%H")
    into_hour = ((local.minute * 60 + local.second) * 1000) + local.microsecond // 1000
    # Lord Howe's half-hour DST shift makes some local hours 30 minutes long
    assert start_of(HOURLY[zone], t) == t - into_hour or zone == "Australia/Lord_Howe"


@settings(max_examples=300)
@given(
    st.sampled_from(["Europe/Berlin", "America/New_York", "Asia/Kolkata"]), st.integers(YEAR_1950, YEAR_2100)
)
def test_daily_in_a_zone_starts_at_local_midnight(zone: str, t: int) -> None:
    tz = ZoneInfo(zone)
    local = wall(t, tz)
    midnight = datetime.datetime.combine(local.date(), datetime.time(), tz)  # unique in these zones
    assert encode(DAILY[zone], t) == local.strftime("year=%Y/month=%m/day=%d")
    assert start_of(DAILY[zone], t) == ms_of(midnight)


@settings(max_examples=500)
@given(
    st.sampled_from(["UTC", *DST_ZONES]),
    st.sampled_from([60_000, 15 * 60_000, 30 * 60_000, 45 * 60_000, HOUR, 2 * HOUR, 3 * HOUR, DAY]),
    st.integers(YEAR_1950, YEAR_2100),
    st.integers(0, 3 * DAY),
)
def test_floors_are_idempotent_not_after_the_time_and_mostly_monotonic(
    zone: str, duration: int, t: int, later: int
) -> None:
    tz = ZoneInfo(zone)
    start = floor_timestamp(t, duration, tz)
    assert start <= t < start + duration + 2 * HOUR  # at most one DST shift longer
    assert floor_timestamp(start, duration, tz) == start
    if HOUR % duration == 0 or duration % HOUR == 0:
        # When the clock falls back, a bucket the repeated hour does not start (45 minutes) is
        # floored again from a wall time that was already passed: only aligned ones are monotonic.
        assert floor_timestamp(t + later, duration, tz) >= start


def test_unaligned_buckets_can_go_back_when_the_clock_does() -> None:
    # Sao Paulo, 2012-02-26 00:00 -02 became 23:00 -03: 23:40 -02 is in the 23:15 bucket,
    # the later 23:10 -03 in the 22:30 one (multiples of 45 minutes since the local epoch).
    assert floor_timestamp(ms("2012-02-25T23:40-02:00"), 45 * 60_000, SAO_PAULO) == ms(
        "2012-02-25T23:15-02:00"
    )
    assert floor_timestamp(ms("2012-02-25T23:10-03:00"), 45 * 60_000, SAO_PAULO) == ms(
        "2012-02-25T22:30-02:00"
    )


# -- timestamp extractors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "kind", "deterministic"),
    [
        ("Wallclock", WallclockTimestampExtractor, False),
        ("Record", RecordTimestampExtractor, True),
        ("RecordField", RecordFieldTimestampExtractor, True),
    ],
)
def test_extractor_names(name: str, kind: type[Any], deterministic: bool) -> None:
    confluent = f"{CONFLUENT_PACKAGE}TimeBasedPartitioner${name}TimestampExtractor"
    for spelled in (name, confluent, f" {name} "):
        extractor = make_timestamp_extractor(spelled)
        assert type(extractor) is kind
        assert extractor.deterministic is deterministic


@pytest.mark.parametrize(
    "name", ["", "wallclock", "Kafka", f"{CONFLUENT_PACKAGE}WallclockTimestampExtractor", "com.example.Mine"]
)
def test_an_unknown_extractor_is_a_value_error(name: str) -> None:
    with pytest.raises(ValueError, match=re.escape(f"Unknown timestamp extractor {name!r}")):
        make_timestamp_extractor(name)


@pytest.mark.parametrize("field", ["", " ", "a..b", ".a", "a."])
def test_record_field_needs_a_field_name(field: str) -> None:
    with pytest.raises(ValueError, match=re.escape("timestamp.field")):
        make_timestamp_extractor("RecordField", field)


def test_wallclock_is_now() -> None:
    assert make_timestamp_extractor("Wallclock").extract(rec(timestamp=5), 1234) == 1234


def test_record_is_the_kafka_timestamp() -> None:
    extractor = make_timestamp_extractor("Record")
    assert extractor.extract(rec(timestamp=1_700_000_000_123), 1) == 1_700_000_000_123
    assert extractor.extract(rec(timestamp=0), 1) == 0
    with pytest.raises(DataException, match=re.escape(f"Record {RID}: it has no Kafka timestamp")):
        extractor.extract(rec(timestamp=None), 1)


def test_record_field_uses_timestamp_by_default() -> None:
    assert make_timestamp_extractor("RecordField").extract(rec({"timestamp": 77}), 1) == 77


META = SchemaBuilder.struct().field("created", Timestamp.SCHEMA).build()
EVENT = (
    SchemaBuilder.struct()
    .field("millis", Schema.INT64_SCHEMA)
    .field("small", Schema.INT32_SCHEMA)
    .field("at", Timestamp.SCHEMA)
    .field("day", Date.SCHEMA)
    .field("text", Schema.STRING_SCHEMA)
    .field("time", Time.SCHEMA)
    .field("flag", Schema.BOOLEAN_SCHEMA)
    .field("none", Schema.OPTIONAL_INT64_SCHEMA)
    .field("meta", META)
    .build()
)


def event() -> Struct:
    meta = Struct(META).put("created", datetime.datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=UTC))
    return (
        Struct(EVENT)
        .put("millis", 1_700_000_000_123)
        .put("small", 86_400_000)
        .put(
            "at",
            datetime.datetime(
                2024, 1, 2, 3, 4, 5, 678999, tzinfo=datetime.timezone(datetime.timedelta(hours=2))
            ),
        )
        .put("day", datetime.date(2024, 1, 2))
        .put("text", "2024-01-02T03:04:05.678+01:00")
        .put("time", datetime.time(1, 2))
        .put("flag", True)
        .put("meta", meta)
    )


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ("millis", 1_700_000_000_123),
        ("small", 86_400_000),
        ("at", ms("2024-01-02T01:04:05.678Z")),  # sub-millisecond digits are dropped
        ("day", ms("2024-01-02T00:00Z")),
        ("text", ms("2024-01-02T02:04:05.678Z")),
        ("meta.created", ms("2024-01-02T03:04:05.678Z")),
    ],
)
def test_record_field_reads_struct_fields(field: str, expected: int) -> None:
    assert make_timestamp_extractor("RecordField", field).extract(rec(event(), EVENT), 0) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1_700_000_000_123, 1_700_000_000_123),
        (-5, -5),
        (0, 0),
        (1_700_000_000_123.9, 1_700_000_000_123),  # truncated, as Java's longValue
        (-1.9, -1),
        (datetime.datetime(2024, 1, 2, 3, 4, 5), ms("2024-01-02T03:04:05Z")),  # naive is UTC
        (datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=KOLKATA), ms("2024-01-02T03:04:05+05:30")),
        (datetime.date(1969, 12, 31), -DAY),
        ("2024-01-02T03:04:05Z", ms("2024-01-02T03:04:05Z")),
        ("2024-01-02T03:04:05.123+05:30", ms("2024-01-02T03:04:05.123+05:30")),
        ("2024-01-02T03:04:05.123456-08:00", ms("2024-01-02T03:04:05.123-08:00")),
        ("2024-01-02T03:04:05", ms("2024-01-02T03:04:05Z")),  # naive is UTC
        ("2024-01-02 03:04", ms("2024-01-02T03:04Z")),
        ("2024-01-02", ms("2024-01-02T00:00Z")),
        ("20240102T030405Z", ms("2024-01-02T03:04:05Z")),
        (" 2024-01-02T03:04:05Z\n", ms("2024-01-02T03:04:05Z")),
    ],
)
def test_record_field_reads_map_values(value: Any, expected: int) -> None:
    extractor = make_timestamp_extractor("RecordField", "meta.ts")
    assert extractor.extract(rec({"meta": {"ts": value}}), 0) == expected


@pytest.mark.parametrize(
    ("value", "field", "problem"),
    [
        (None, "ts", "the record value is null"),
        ("text", "ts", "the value is a str, not a struct or map"),
        ({}, "ts", "the value has no key 'ts'"),
        ({"ts": None}, "ts", "its value is null"),
        ({"ts": True}, "ts", "its value is a bool, not a time"),
        ({"ts": math.nan}, "ts", "its value nan is not a time"),
        ({"ts": math.inf}, "ts", "its value inf is not a time"),
        (
            {"ts": b"1"},
            "ts",
            "its value is a bytes; use epoch milliseconds, a Timestamp, a Date or ISO-8601 text",
        ),
        ({"ts": [1]}, "ts", "its value is a list"),
        ({"ts": {"a": 1}}, "ts", "its value is a dict"),
        ({"ts": decimal.Decimal(1)}, "ts", "its value is a Decimal"),
        ({"ts": datetime.time(1)}, "ts", "its value is a time"),
        ({"ts": "yesterday"}, "ts", "its value 'yesterday' is not an ISO-8601 date-time"),
        ({"ts": "1700000000000"}, "ts", "its value '1700000000000' is not an ISO-8601 date-time"),
        ({"ts": ""}, "ts", "its value '' is not an ISO-8601 date-time"),
        ({"meta": None}, "meta.ts", "meta is null"),
        ({"meta": 5}, "meta.ts", "meta is an int, not a struct or map"),
    ],
)
def test_record_field_errors_name_record_field_and_problem(value: Any, field: str, problem: str) -> None:
    extractor = make_timestamp_extractor("RecordField", field)
    expected = f"Record {RID}: cannot read timestamp field {field!r}: {problem}"
    with pytest.raises(DataException, match=re.escape(expected)):
        extractor.extract(rec(value), 0)


@pytest.mark.parametrize(
    ("field", "problem"),
    [
        ("missing", "the value has no field 'missing'"),
        ("none", "its value is null"),
        ("flag", "its value is a bool"),
        ("time", "its value is a time"),
        ("meta", "its value is a Struct"),
        ("meta.other", "meta has no field 'other'"),
    ],
)
def test_record_field_errors_on_struct_values(field: str, problem: str) -> None:
    extractor = make_timestamp_extractor("RecordField", field)
    with pytest.raises(DataException, match=re.escape(f"cannot read timestamp field {field!r}: {problem}")):
        extractor.extract(rec(event(), EVENT), 0)


AWARE = st.datetimes(
    min_value=datetime.datetime(1, 1, 2),
    max_value=datetime.datetime(9999, 12, 30),
    timezones=st.sampled_from([UTC, KOLKATA, BERLIN, NEW_YORK]),
)


@given(AWARE)
def test_record_field_times_round_trip(moment: datetime.datetime) -> None:
    extractor = make_timestamp_extractor("RecordField", "ts")
    expected = (moment - EPOCH) // MS
    assert extractor.extract(rec({"ts": moment}), 0) == expected
    assert extractor.extract(rec({"ts": moment.isoformat()}), 0) == expected
    assert extractor.extract(rec({"ts": expected}), 0) == expected


def test_an_extracted_time_partitions_its_record() -> None:
    extractor = make_timestamp_extractor("RecordField", "meta.created")
    record = rec(event(), EVENT)
    t = extractor.extract(record, 0)
    p = partitioner("HourlyPartitioner", timezone="Asia/Kolkata")
    assert p.encode_partition(record, t) == "year=2024/month=01/day=02/hour=08"
