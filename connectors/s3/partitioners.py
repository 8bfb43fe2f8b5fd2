"""Where each record goes in the bucket: Confluent's partitioners and timestamp extractors.

A partitioner turns a record (and, for the time-based ones, a timestamp) into the
directory part of an object key::

    DefaultPartitioner      partition=3
    FieldPartitioner        region=eu/active=true          (partition.field.name=region,active)
    TimeBasedPartitioner    year=2024/month=03/day=31      (path.format, partition.duration.ms)
    HourlyPartitioner       'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH, one hour
    DailyPartitioner        'year'=YYYY/'month'=MM/'day'=dd, one day

A timestamp extractor says which time a record has: the wall clock, the Kafka
timestamp, or a field of the value. Everything here is pure (no I/O, no clock: the
writer passes ``now_ms``), so the same record always lands in the same directory
when the extractor is deterministic.

Bad settings raise ``ValueError`` whose message names the offending config key;
records that cannot be partitioned raise ``DataException`` naming the record as
``topic-partition@offset``.
"""

from __future__ import annotations

import abc
import datetime
import math
import re
import zoneinfo
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Final

from connect.api import DataException, SinkRecord, Struct
from connect.api.java_dates import JodaFormat, LocaleNotSupported, offset_text

__all__ = [
    "DailyPartitioner",
    "DefaultPartitioner",
    "FieldPartitioner",
    "HourlyPartitioner",
    "Partitioner",
    "RecordFieldTimestampExtractor",
    "RecordTimestampExtractor",
    "TimeBasedPartitioner",
    "TimestampExtractor",
    "WallclockTimestampExtractor",
    "compile_path_format",
    "floor_timestamp",
    "make_partitioner",
    "make_timestamp_extractor",
    "needs_timestamp",
    "parse_timezone",
]

CONFLUENT_PACKAGE: Final = "io.confluent.connect.storage.partitioner."
HOUR_MS: Final = 3_600_000
DAY_MS: Final = 86_400_000
HOURLY_PATH_FORMAT: Final = "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH"
DAILY_PATH_FORMAT: Final = "'year'=YYYY/'month'=MM/'day'=dd"

_EPOCH: Final = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_NAIVE_EPOCH: Final = datetime.datetime(1970, 1, 1)
_ONE_MS: Final = datetime.timedelta(milliseconds=1)
# datetime covers the years 1..9999; a day's margin keeps zone offsets from overflowing it.
_MIN_MS: Final = (datetime.datetime(1, 1, 2, tzinfo=datetime.UTC) - _EPOCH) // _ONE_MS
_MAX_MS: Final = (datetime.datetime(9999, 12, 31, tzinfo=datetime.UTC) - _EPOCH) // _ONE_MS


# -- reading (nested) fields of a record value ------------------------------------------------------


class _FieldProblem(Exception):
    """Internal: why a dotted field could not be read; callers add the record and the setting."""


def _validate_field_path(path: str, key: str) -> None:
    if not path or any(not part for part in path.split(".")):
        raise ValueError(f"{key}: {path!r} is not a field name (dotted names must not have empty parts)")


def _child(container: Any, name: str, walked: str) -> Any:
    if isinstance(container, Struct):
        if container.schema.field(name) is None:
            raise _FieldProblem(f"{walked or 'the value'} has no field {name!r}")
        return container.get(name)  # unset fields read as their default, as Connect's Struct.get
    if isinstance(container, Mapping):
        if name not in container:
            raise _FieldProblem(f"{walked or 'the value'} has no key {name!r}")
        return container[name]
    if container is None:
        raise _FieldProblem(f"{walked or 'the value'} is null")
    raise _FieldProblem(f"{walked or 'the value'} is {_type_name(container)}, not a struct or map")


def _read_field(value: Any, path: str) -> Any:
    """The value at dotted ``path`` in a Struct or (schemaless) dict, through nested structs and maps."""
    if value is None:
        raise _FieldProblem("the record value is null")
    walked = ""
    for name in path.split("."):
        value = _child(value, name, walked)
        walked = f"{walked}.{name}" if walked else name
    if value is None:
        raise _FieldProblem("its value is null")
    return value


def _type_name(value: Any) -> str:
    """``a str``, ``an int``: a value's type for messages."""
    name = type(value).__name__
    return f"{'an' if name[0].lower() in 'aeiou' else 'a'} {name}"


# -- partitioners ------------------------------------------------------------------------------------


class Partitioner(abc.ABC):
    """Gives the directory part of an object key for a record."""

    #: Whether ``encode_partition`` uses its ``timestamp_ms`` (the writer extracts one only then).
    needs_timestamp: ClassVar[bool] = False

    def __init__(self, directory_delim: str = "/") -> None:
        if not directory_delim:
            raise ValueError("directory.delim must not be empty")
        self.directory_delim = directory_delim

    @abc.abstractmethod
    def encode_partition(self, record: SinkRecord, timestamp_ms: int | None) -> str:
        """The record's directory, e.g. ``partition=3``; raises DataException if it has none."""

    def partitioned_path(self, topic: str, encoded_partition: str) -> str:
        """``<topic><delim><encoded partition>``: the key prefix below ``topics.dir``."""
        return f"{topic}{self.directory_delim}{encoded_partition}"


def needs_timestamp(partitioner: Partitioner) -> bool:
    """Whether the writer must extract a timestamp for ``partitioner``."""
    return partitioner.needs_timestamp


class DefaultPartitioner(Partitioner):
    """``partition=<kafka partition>``: the layout of the Kafka topic itself."""

    def encode_partition(self, record: SinkRecord, timestamp_ms: int | None) -> str:
        if record.kafka_partition is None:
            raise DataException(f"Record {record.where}: it has no Kafka partition to partition by")
        return f"partition={record.kafka_partition}"


def _partition_text(value: Any) -> str:
    # Confluent accepts only these as directory names; floats would give unstable names ("1.0" vs "1").
    if isinstance(value, bool):
        return "true" if value else "false"  # Java's spelling, not Python's
    if isinstance(value, (int, str)):
        return str(value)
    raise _FieldProblem(
        f"its value is {_type_name(value)}; only integers, strings and booleans can name a partition"
    )


class FieldPartitioner(Partitioner):
    """``name=value`` for each of ``partition.field.name``, joined by the directory delimiter."""

    def __init__(self, field_names: list[str], directory_delim: str = "/") -> None:
        super().__init__(directory_delim)
        if not field_names:
            raise ValueError("partition.field.name must name at least one field for FieldPartitioner")
        for name in field_names:
            _validate_field_path(name, "partition.field.name")
        self.field_names = list(field_names)

    def encode_partition(self, record: SinkRecord, timestamp_ms: int | None) -> str:
        return self.directory_delim.join(f"{name}={self._text(record, name)}" for name in self.field_names)

    @staticmethod
    def _text(record: SinkRecord, name: str) -> str:
        try:
            return _partition_text(_read_field(record.value, name))
        except _FieldProblem as problem:
            raise DataException(
                f"Record {record.where}: cannot partition by field {name!r}: {problem}"
            ) from None


class TimeBasedPartitioner(Partitioner):
    """Directories named by ``path.format`` (a Joda-Time pattern) after the timestamp is floored
    to ``partition.duration.ms`` in ``timezone``."""

    needs_timestamp = True

    def __init__(
        self,
        *,
        path_format: str | None,
        partition_duration_ms: int,
        locale: str,
        timezone: str | None,
        directory_delim: str = "/",
    ) -> None:
        super().__init__(directory_delim)
        self.zone = parse_timezone(timezone)
        if not locale or not locale.strip():
            raise ValueError("locale must not be empty for time-based partitioners (e.g. en_US)")
        if partition_duration_ms < 0:
            raise ValueError(
                f"partition.duration.ms must be >= 0 for TimeBasedPartitioner, got {partition_duration_ms}"
            )
        if not path_format or not path_format.strip():
            raise ValueError("path.format must be set for TimeBasedPartitioner (e.g. 'year'=YYYY/'month'=MM)")
        self.path_format = path_format
        self.partition_duration_ms = partition_duration_ms
        self.locale = locale.strip()
        self._format = compile_path_format(path_format, self.locale)
        self._encoded: dict[int, str] = {}  # partition start -> directory: records cluster in few partitions

    def partition_start_ms(self, timestamp_ms: int) -> int:
        """The start of the partition holding ``timestamp_ms`` (epoch ms)."""
        return floor_timestamp(timestamp_ms, self.partition_duration_ms, self.zone)

    def encode_partition(self, record: SinkRecord, timestamp_ms: int | None) -> str:
        if timestamp_ms is None:
            raise DataException(
                f"Record {record.where}: no timestamp to partition by (the extractor gave none)"
            )
        if not _MIN_MS <= timestamp_ms <= _MAX_MS:
            raise DataException(
                f"Record {record.where}: timestamp {timestamp_ms} ms is outside the years 1 to 9999"
            )
        try:
            start = self.partition_start_ms(timestamp_ms)
            encoded = self._encoded.get(start)
            if encoded is None:
                if len(self._encoded) >= 4096:
                    self._encoded.clear()
                encoded = self._encoded[start] = self._directory(start)
        except OverflowError:  # a partition.duration.ms so long the partition starts before year 1
            raise DataException(
                f"Record {record.where}: the partition of {timestamp_ms} ms would start before year 1"
            ) from None
        return encoded

    def _directory(self, start_ms: int) -> str:
        directory = self._format(_from_ms(start_ms).astimezone(self.zone))
        # A trailing delimiter ("YYYY/MM/") would leave an empty level ("2024/03//file") in every key.
        while directory.endswith(self.directory_delim):
            directory = directory[: -len(self.directory_delim)]
        return directory


class HourlyPartitioner(TimeBasedPartitioner):
    """``'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH``, one hour each (path.format and duration ignored)."""

    def __init__(self, *, locale: str, timezone: str | None, directory_delim: str = "/") -> None:
        super().__init__(
            path_format=HOURLY_PATH_FORMAT,
            partition_duration_ms=HOUR_MS,
            locale=locale,
            timezone=timezone,
            directory_delim=directory_delim,
        )


class DailyPartitioner(TimeBasedPartitioner):
    """``'year'=YYYY/'month'=MM/'day'=dd``, one day each (path.format and duration ignored)."""

    def __init__(self, *, locale: str, timezone: str | None, directory_delim: str = "/") -> None:
        super().__init__(
            path_format=DAILY_PATH_FORMAT,
            partition_duration_ms=DAY_MS,
            locale=locale,
            timezone=timezone,
            directory_delim=directory_delim,
        )


def _short_class_name(class_name: str) -> str:
    name = class_name.strip()
    return name[len(CONFLUENT_PACKAGE) :] if name.startswith(CONFLUENT_PACKAGE) else name


def make_partitioner(
    class_name: str,
    *,
    field_names: list[str],
    path_format: str | None,
    partition_duration_ms: int,
    locale: str,
    timezone: str | None,
    directory_delim: str = "/",
) -> Partitioner:
    """The partitioner ``partitioner.class`` names (Confluent's class name or its short name).

    Only the settings the chosen partitioner uses are checked; a bad one raises ValueError.
    """
    short = _short_class_name(class_name)
    if short == "DefaultPartitioner":
        return DefaultPartitioner(directory_delim)
    if short == "FieldPartitioner":
        return FieldPartitioner(field_names, directory_delim)
    if short == "TimeBasedPartitioner":
        return TimeBasedPartitioner(
            path_format=path_format,
            partition_duration_ms=partition_duration_ms,
            locale=locale,
            timezone=timezone,
            directory_delim=directory_delim,
        )
    if short == "HourlyPartitioner":
        return HourlyPartitioner(locale=locale, timezone=timezone, directory_delim=directory_delim)
    if short == "DailyPartitioner":
        return DailyPartitioner(locale=locale, timezone=timezone, directory_delim=directory_delim)
    raise ValueError(
        f"Unknown partitioner {class_name!r}: use DefaultPartitioner, FieldPartitioner, "
        f"TimeBasedPartitioner, HourlyPartitioner or DailyPartitioner (or {CONFLUENT_PACKAGE}<name>)"
    )


# -- time zones and flooring -------------------------------------------------------------------------

_FIXED_OFFSET = re.compile(r"([+-])(\d{2})(?::?(\d{2}))?")


def parse_timezone(timezone: str | None) -> datetime.tzinfo:
    """An IANA zone (``Europe/Berlin``, ``UTC``) or, as Joda accepts, a fixed offset (``+05:30``)."""
    if timezone is None or not timezone.strip():
        raise ValueError("timezone must be set for time-based partitioners (e.g. UTC or Europe/Berlin)")
    name = timezone.strip()
    fixed = _FIXED_OFFSET.fullmatch(name)
    if fixed:
        return _fixed_zone(name, fixed)
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"timezone {name!r} is not a known time zone (use an IANA name)") from None


def _fixed_zone(name: str, match: re.Match[str]) -> datetime.tzinfo:
    sign, hours, minutes = match.group(1), int(match.group(2)), int(match.group(3) or 0)
    if hours > 23 or minutes > 59:
        raise ValueError(f"timezone {name!r} is not a valid offset")
    offset = datetime.timedelta(hours=hours, minutes=minutes) * (-1 if sign == "-" else 1)
    # Named like Joda's fixed zones, so `z` and `ZZZ` print "+05:30".
    return datetime.timezone(offset, offset_text(offset, colon=True))


def _from_ms(ms: int) -> datetime.datetime:
    return _EPOCH + datetime.timedelta(milliseconds=ms)


def _offset_ms(zone: datetime.tzinfo, utc_ms: int) -> int:
    offset = _from_ms(utc_ms).astimezone(zone).utcoffset()
    return 0 if offset is None else offset // _ONE_MS


def floor_timestamp(timestamp_ms: int, duration_ms: int, zone: datetime.tzinfo) -> int:
    """The start of the ``duration_ms`` period holding ``timestamp_ms``, counted in ``zone``'s wall time.

    Confluent's rule: floor the local wall time, then convert it back to an instant. Where that
    wall time is ambiguous (a DST fall-back), the record's own offset is kept when it fits, so
    sub-daily partitions never start after their records. A duration of 0 means no flooring.
    """
    if duration_ms <= 0:
        return timestamp_ms
    offset = _offset_ms(zone, timestamp_ms)
    local = timestamp_ms + offset
    floored = local - local % duration_ms  # Python's % floors, so times before 1970 floor down too
    candidate = floored - offset
    if _offset_ms(zone, candidate) == offset:
        return candidate
    return _local_to_utc(floored, zone)


def _local_to_utc(local_ms: int, zone: datetime.tzinfo) -> int:
    """The instant at which ``zone``'s wall clock reads ``local_ms``: the earlier one if it reads it
    twice, the end of the gap if it skips it (so a partition never starts inside a DST gap)."""
    wall = _NAIVE_EPOCH + datetime.timedelta(milliseconds=local_ms)
    before = _utcoffset_ms(wall.replace(tzinfo=zone, fold=0))
    after = _utcoffset_ms(wall.replace(tzinfo=zone, fold=1))
    earliest = local_ms - before
    if _offset_ms(zone, earliest) == before:
        return earliest
    return _transition(local_ms - after, earliest, zone)


def _utcoffset_ms(aware: datetime.datetime) -> int:
    offset = aware.utcoffset()
    return 0 if offset is None else offset // _ONE_MS


def _transition(low: int, high: int, zone: datetime.tzinfo) -> int:
    """The first instant in ``(low, high]`` with ``high``'s offset: where a DST gap ends."""
    target = _offset_ms(zone, high)
    if _offset_ms(zone, low) == target:
        return high
    while high - low > 1:
        middle = (low + high) // 2
        if _offset_ms(zone, middle) == target:
            high = middle
        else:
            low = middle
    return high


# -- Joda-Time path formats --------------------------------------------------------------------------


def compile_path_format(pattern: str, locale: str = "en") -> Callable[[datetime.datetime], str]:
    """A function printing an aware datetime as the Joda-Time ``pattern`` does (``path.format``).

    Month and day names, AM/PM, eras and zone names are English: another ``locale`` with such a
    field raises ValueError naming ``locale``, as does a letter Joda does not know (``path.format``).
    """
    try:
        return JodaFormat(pattern, locale).format
    except LocaleNotSupported:
        raise
    except ValueError as problem:
        raise ValueError(f"path.format: {problem}") from None


# -- timestamp extractors ----------------------------------------------------------------------------


class TimestampExtractor(abc.ABC):
    """Which time a record has, in epoch milliseconds."""

    #: Whether the same record always gets the same time (exactly-once needs this).
    deterministic: ClassVar[bool] = True

    @abc.abstractmethod
    def extract(self, record: SinkRecord, now_ms: int) -> int | None:
        """The record's time; raises DataException if it has none."""


class WallclockTimestampExtractor(TimestampExtractor):
    """The time the sink sees the record: not deterministic across retries and restarts."""

    deterministic = False

    def extract(self, record: SinkRecord, now_ms: int) -> int | None:
        return now_ms


class RecordTimestampExtractor(TimestampExtractor):
    """The Kafka timestamp of the record."""

    def extract(self, record: SinkRecord, now_ms: int) -> int | None:
        if record.timestamp is None:
            raise DataException(
                f"Record {record.where}: it has no Kafka timestamp (timestamp.extractor=Record)"
            )
        return record.timestamp


def _ms_from_datetime(value: datetime.datetime) -> int:
    if value.tzinfo is None or value.utcoffset() is None:
        value = value.replace(tzinfo=datetime.UTC)  # Connect's Timestamp: naive means UTC
    return (value - _EPOCH) // _ONE_MS


def _ms_from_text(text: str) -> int:
    try:
        parsed = datetime.datetime.fromisoformat(text.strip())
    except ValueError:
        raise _FieldProblem(f"its value {text!r} is not an ISO-8601 date-time") from None
    return _ms_from_datetime(parsed)


def _ms_from_number(value: int | float) -> int:
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _FieldProblem(f"its value {value} is not a time")
        return int(value)  # truncated, as Java's Number.longValue()
    return value


def _timestamp_ms(value: Any) -> int:
    if isinstance(value, bool):  # an int to Python, never a time
        raise _FieldProblem("its value is a bool, not a time")
    if isinstance(value, (int, float)):
        return _ms_from_number(value)
    if isinstance(value, datetime.datetime):
        return _ms_from_datetime(value)
    if isinstance(value, datetime.date):  # Connect's Date: midnight UTC
        return _ms_from_datetime(datetime.datetime.combine(value, datetime.time(), datetime.UTC))
    if isinstance(value, str):
        return _ms_from_text(value)
    raise _FieldProblem(
        f"its value is {_type_name(value)}; use epoch milliseconds, a Timestamp, a Date or ISO-8601 text"
    )


class RecordFieldTimestampExtractor(TimestampExtractor):
    """The time in a value field (``timestamp.field``, dotted for nested fields): epoch ms, a
    Connect Timestamp or Date, or ISO-8601 text (naive means UTC)."""

    def __init__(self, timestamp_field: str) -> None:
        _validate_field_path(timestamp_field, "timestamp.field")
        self.timestamp_field = timestamp_field

    def extract(self, record: SinkRecord, now_ms: int) -> int | None:
        try:
            return _timestamp_ms(_read_field(record.value, self.timestamp_field))
        except _FieldProblem as problem:
            raise DataException(
                f"Record {record.where}: cannot read timestamp field {self.timestamp_field!r}: {problem}"
            ) from None


_EXTRACTOR_NAMES: Final = {
    "Wallclock": "Wallclock",
    "Record": "Record",
    "RecordField": "RecordField",
    f"{CONFLUENT_PACKAGE}TimeBasedPartitioner$WallclockTimestampExtractor": "Wallclock",
    f"{CONFLUENT_PACKAGE}TimeBasedPartitioner$RecordTimestampExtractor": "Record",
    f"{CONFLUENT_PACKAGE}TimeBasedPartitioner$RecordFieldTimestampExtractor": "RecordField",
}


def make_timestamp_extractor(name: str, timestamp_field: str = "timestamp") -> TimestampExtractor:
    """The extractor ``timestamp.extractor`` names: Wallclock, Record, RecordField or Confluent's class."""
    kind = _EXTRACTOR_NAMES.get(name.strip())
    if kind == "Wallclock":
        return WallclockTimestampExtractor()
    if kind == "Record":
        return RecordTimestampExtractor()
    if kind == "RecordField":
        return RecordFieldTimestampExtractor(timestamp_field.strip())
    raise ValueError(f"Unknown timestamp extractor {name!r}: use Wallclock, Record or RecordField")
