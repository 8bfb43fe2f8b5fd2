"""TimestampConverter: convert a timestamp between Unix epoch numbers, formatted strings
and Connect's Date, Time and Timestamp types, in the whole key/value or in one field.

``target.type`` is the output: ``string`` (formatted with ``format``, a Java
``SimpleDateFormat`` pattern such as ``yyyy-MM-dd'T'HH:mm:ss.SSSXXX``), ``unix`` (an
INT64 count of ``unix.precision`` units since the epoch: ``seconds``,
``milliseconds`` (default), ``microseconds`` or ``nanoseconds``), ``Date`` (the day,
``datetime.date``), ``Time`` (the time of day, ``datetime.time``) or ``Timestamp``
(``datetime.datetime``, aware UTC). Names are case-sensitive, as in Kafka.

What the input is comes from its schema: a Timestamp, Date or Time logical schema, a
STRING (parsed with ``format``) or an INT64 (a Unix time in ``unix.precision``); any
other schema is an error. Without a schema it comes from the Python value: a
``datetime.datetime`` is a Timestamp, an ``int`` a Unix time, a ``str`` a formatted
string. Kafka takes every ``java.util.Date`` as a Timestamp; Python tells dates and
times apart, so a ``datetime.date`` is read as a Date and a ``datetime.time`` as a
Time. Kafka accepts only ``Long`` for Unix times; Python has one ``int``.

Every conversion goes through milliseconds since the epoch, in UTC (Kafka's pivot, a
``java.util.Date``): finer precision is lost, a Date is midnight UTC of its day and a
Time is its time of day on 1970-01-01, so Date → Time gives midnight and Time → Date
gives 1970-01-01. Converting from finer Unix units truncates toward zero and to finer
ones saturates at the INT64 limits, like Java's ``TimeUnit``. Strings are parsed as
``SimpleDateFormat`` does: leniently (``2024-02-30`` is March 1st), ignoring text after
the pattern, in UTC unless the text carries a zone.

With ``field`` set, that field of the struct (or map) is converted and the rest
copied; the struct's schema gets the target type for the field (optional if the field
was), and other schema details are kept. A struct without that field passes through
unchanged; a map without it gets the field as null, as in Kafka. Without ``field``
the whole key/value is converted and its schema replaced by the target type's
(optional if the input's was). Nulls stay null, but a null with a schema still gets
the new schema.

Differences from Kafka: messages name Python classes (``Expected Timestamp to be a
datetime.datetime, but found str``); a string input when ``format`` is unset is a data
error (Kafka throws a NullPointerException); a struct without the field is returned as
it is (Kafka rebuilds an equal struct, writing field defaults out); instants outside
Python's years 1-9999 are data errors.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import field_validator

from connect.api import (
    Boolean,
    ConfigIssue,
    ConfigModel,
    ConnectRecord,
    DataException,
    Date,
    Field,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    Type,
    importance,
)
from connect.api.java_dates import JavaDateFormat
from transforms.parts import Key, PartTransformation, Value
from transforms.requirements import record_error, require_map, require_struct, type_name
from transforms.schemas import LruCache, copy_basics
from transforms.settings import replace_null_with_default

PURPOSE = "converting timestamp formats"

STRING, UNIX, DATE, TIME, TIMESTAMP = "string", "unix", "Date", "Time", "Timestamp"
TARGET_TYPES = (STRING, UNIX, DATE, TIME, TIMESTAMP)
SECONDS, MILLISECONDS, MICROSECONDS, NANOSECONDS = "seconds", "milliseconds", "microseconds", "nanoseconds"
PRECISIONS = (NANOSECONDS, MICROSECONDS, MILLISECONDS, SECONDS)  # Kafka's order, for the message

_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_MS_PER_DAY = 86_400_000
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_EPOCH_DAY = datetime.date(1970, 1, 1).toordinal()
_UTC = datetime.UTC

# The output schema of each target type: (required, optional).
_SCHEMAS: dict[str, tuple[Schema, Schema]] = {
    STRING: (Schema.STRING_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA),
    UNIX: (Schema.INT64_SCHEMA, Schema.OPTIONAL_INT64_SCHEMA),
    DATE: (Date.SCHEMA, Date.builder().optional().build()),
    TIME: (Time.SCHEMA, Time.builder().optional().build()),
    TIMESTAMP: (Timestamp.SCHEMA, Timestamp.builder().optional().build()),
}
# What Kafka names java.util.Date in its messages is, per type, this Python class.
_PYTHON_CLASS = {DATE: "datetime.date", TIME: "datetime.time", TIMESTAMP: "datetime.datetime"}


def _one_of(value: str, allowed: tuple[str, ...]) -> str:
    # Kafka's ValidString: case-sensitive.
    if value not in allowed:
        raise ValueError("String must be one of: " + ", ".join(allowed))
    return value


class TimestampConverterConfig(ConfigModel):
    field: str = Field(
        "",
        alias="field",
        description="The field containing the timestamp, or empty if the entire value is a timestamp",
        json_schema_extra=importance("HIGH"),
    )
    target_type: str = Field(
        alias="target.type",
        description="The desired timestamp representation: string, unix, Date, Time, or Timestamp",
        json_schema_extra=importance("HIGH"),
    )
    format: str = Field(
        "",
        alias="format",
        description="A SimpleDateFormat-compatible format for the timestamp. "
        "Used to generate the output when type=string or used to parse the input if the input is a string.",
        json_schema_extra=importance("MEDIUM"),
    )
    unix_precision: str = Field(
        MILLISECONDS,
        alias="unix.precision",
        description="The desired Unix precision for the timestamp: seconds, milliseconds, microseconds, or "
        "nanoseconds. Used to generate the output when type=unix or used to parse the input if the input is "
        "a Long.Note: This SMT will cause precision loss during conversions from, and to, values with "
        "sub-millisecond components.",
        json_schema_extra=importance("LOW"),
    )
    replace_null_with_default: Boolean = replace_null_with_default()

    @field_validator("target_type")
    @classmethod
    def _target_type(cls, v: str) -> str:
        return _one_of(v, TARGET_TYPES)

    @field_validator("unix_precision")
    @classmethod
    def _unix_precision(cls, v: str) -> str:
        return _one_of(v, PRECISIONS)

    @classmethod
    def problems(cls, props: Mapping[str, Any]) -> list[ConfigIssue]:
        raw = props.get("format")
        pattern = "" if raw is None else str(raw).strip()
        if not pattern:
            if str(props.get("target.type", "")).strip() == STRING:
                return [
                    ConfigIssue(
                        "format",
                        "TimestampConverter requires format option to be specified "
                        "when using string timestamps",
                    )
                ]
            return []
        try:
            JavaDateFormat(pattern)
        except ValueError:
            return [
                ConfigIssue(
                    "format",
                    "TimestampConverter requires a SimpleDateFormat-compatible pattern "
                    "for string timestamps: " + pattern,
                )
            ]
        return []


def _truncating_div(value: int, divisor: int) -> int:
    # Java's long division truncates toward zero; Python's // floors.
    q = abs(value) // divisor
    return q if value >= 0 else -q


def _saturating_mul(value: int, factor: int) -> int:
    return max(_LONG_MIN, min(_LONG_MAX, value * factor))


def _temporal_millis(value: Any) -> int | None:
    """Epoch milliseconds of a datetime (naive = UTC), date (its midnight UTC) or time (on
    1970-01-01 UTC); None for anything else."""
    if isinstance(value, datetime.datetime):
        aware = value.tzinfo is not None and value.utcoffset() is not None
        delta = (value if aware else value.replace(tzinfo=_UTC)) - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000
    if isinstance(value, datetime.date):
        return (value.toordinal() - _EPOCH_DAY) * _MS_PER_DAY
    if isinstance(value, datetime.time):
        return Time.from_logical(Time.SCHEMA, value)
    return None


def _kind_of(schema: Schema) -> str | None:
    """The input type a schema says a timestamp is (Kafka's ``timestampTypeFromSchema``)."""
    name = schema.name
    if name == Timestamp.LOGICAL_NAME:
        return TIMESTAMP
    if name == Date.LOGICAL_NAME:
        return DATE
    if name == Time.LOGICAL_NAME:
        return TIME
    if schema.type is Type.STRING:
        return STRING
    if schema.type is Type.INT64:
        return UNIX
    return None


def _unknown_schema(schema: Schema) -> str:
    return f"Schema {schema!r} does not correspond to a known timestamp type format"


@dataclass(frozen=True, slots=True)
class _FieldPlan:
    """How one input struct schema is converted in field mode (cached per schema)."""

    schema: Schema  # the output schema
    names: tuple[str, ...]  # the input's field names, in order
    index: int  # position of the converted field; -1 when the struct has no such field
    kind: str | None  # the converted field's input type; None when its schema has none
    error: str  # the error for a field schema that is no timestamp type


class TimestampConverter(PartTransformation):
    Config = TimestampConverterConfig

    def configure(self, configs: Mapping[str, Any]) -> None:
        config = self.config = TimestampConverterConfig.parse(configs)
        self.field = config.field
        self.target = config.target_type
        self.format = JavaDateFormat(config.format) if config.format else None
        self._from_unix, self._to_unix = _UNIX[config.unix_precision]
        self.replace_null = config.replace_null_with_default
        self.required_schema, self.optional_schema = _SCHEMAS[self.target]
        outputs: dict[str, Callable[[int], Any]] = {
            STRING: self._to_string,
            UNIX: self._to_unix,
            DATE: _to_date,
            TIME: _to_time,
            TIMESTAMP: _to_timestamp,
        }
        self._output = outputs[self.target]
        self._plans: LruCache[Schema, _FieldPlan] = LruCache()

    # -- records ---------------------------------------------------------------------

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        schema = self.schema_of(record)
        value = self.value_of(record)
        if schema is None:
            if value is None:
                return record
            if not self.field:
                return self.replace(record, None, self._convert(record, value, None))
            out = dict(require_map(self, record, value, PURPOSE))
            out[self.field] = self._convert(record, out.get(self.field), None)
            return self.replace(record, None, out)
        if not self.field:
            kind = _kind_of(schema)
            if kind is None:  # Kafka checks the schema before looking at the value, null or not
                raise record_error(self, record, _unknown_schema(schema))
            new_schema = self.optional_schema if schema.optional else self.required_schema
            return self.replace(record, new_schema, self._convert(record, value, kind))
        struct = None if value is None else require_struct(self, record, value, PURPOSE)
        plan = self._plans.get(schema)
        if plan is None:
            plan = self._plan(record, schema)
            self._plans.put(schema, plan)
        if plan.index < 0:
            return record  # no such field: nothing to convert
        if struct is None:
            return self.replace(record, plan.schema, None)
        return self.replace(record, plan.schema, self._convert_struct(record, struct, plan))

    def _plan(self, record: ConnectRecord, schema: Schema) -> _FieldPlan:
        if schema.type is not Type.STRUCT:
            raise record_error(self, record, f"Cannot list fields on non-struct type {schema.type.name}")
        builder = copy_basics(schema, SchemaBuilder.struct())
        index, kind, error = -1, None, ""
        for f in schema.fields:
            if f.name == self.field:
                index, kind, error = f.index, _kind_of(f.schema), _unknown_schema(f.schema)
                builder.field(f.name, self.optional_schema if f.schema.optional else self.required_schema)
            else:
                builder.field(f.name, f.schema)
        if schema.optional:
            builder.optional()
        names = tuple(f.name for f in schema.fields)
        plan = _FieldPlan(builder.build(), names, index, kind, error)
        if schema.default_value is not None and index >= 0:
            # The struct's default is converted like any value of it.
            default = require_struct(self, record, schema.default_value, PURPOSE)
            try:
                builder.default_value(self._convert_struct(record, default, plan))
            except DataException as exc:
                raise record_error(self, record, str(exc)) from None
            plan = _FieldPlan(builder.build(), names, index, kind, error)
        return plan

    def _convert_struct(self, record: ConnectRecord, struct: Struct, plan: _FieldPlan) -> Struct:
        if plan.kind is None:  # checked before the value, as Kafka does, so a null fails too
            raise record_error(self, record, plan.error)
        get = struct.get if self.replace_null else struct.get_without_default
        names = plan.names
        try:
            values = [get(name) for name in names]
        except DataException as exc:  # a struct whose schema is not the record's
            raise record_error(self, record, str(exc)) from None
        values[plan.index] = self._convert(record, values[plan.index], plan.kind)
        try:
            return Struct.from_values(plan.schema, values)
        except DataException as exc:
            raise record_error(self, record, str(exc)) from None

    # -- values ----------------------------------------------------------------------

    def _convert(self, record: ConnectRecord, value: Any, kind: str | None) -> Any:
        """``value`` of input type ``kind`` (inferred from the value when None) as the target type."""
        if value is None:
            return None
        millis = self._to_millis(record, value, kind)
        try:
            return self._output(millis)
        except (OverflowError, ValueError):
            raise record_error(
                self, record, f"Timestamp {millis} ms since the epoch is outside the range of dates supported"
            ) from None

    def _to_millis(self, record: ConnectRecord, value: Any, kind: str | None) -> int:
        if kind is None:
            millis = _temporal_millis(value)
            if millis is not None:
                return millis
            if isinstance(value, int) and not isinstance(value, bool):
                return self._from_unix(value)
            if isinstance(value, str):
                return self._parse(record, value)
            raise record_error(
                self, record, f"TimestampConverter does not support {type_name(value)} objects as timestamps"
            )
        if kind == UNIX:
            if not isinstance(value, int) or isinstance(value, bool):
                raise record_error(
                    self, record, f"Expected Unix timestamp to be an int, but found {type_name(value)}"
                )
            return self._from_unix(value)
        if kind == STRING:
            if not isinstance(value, str):
                raise record_error(
                    self, record, f"Expected string timestamp to be a str, but found {type_name(value)}"
                )
            return self._parse(record, value)
        millis = _temporal_millis(value)
        if millis is None:
            raise record_error(
                self, record, f"Expected {kind} to be a {_PYTHON_CLASS[kind]}, but found {type_name(value)}"
            )
        return millis

    def _parse(self, record: ConnectRecord, text: str) -> int:
        fmt = self.format
        if fmt is None:
            # Kafka fails here with a NullPointerException.
            raise record_error(
                self, record, f"Could not parse timestamp: value ({text}) needs the format option to be set"
            )
        try:
            parsed = fmt.parse(text)
        except ValueError:
            raise record_error(
                self,
                record,
                f"Could not parse timestamp: value ({text}) does not match pattern ({fmt.pattern})",
            ) from None
        millis = _temporal_millis(parsed)
        assert millis is not None
        return millis

    def _to_string(self, millis: int) -> str:
        assert self.format is not None  # configs with target.type=string and no format are refused
        return self.format.format_millis(millis)


def _same(value: int) -> int:
    return value


# Per unix.precision: (units → milliseconds, milliseconds → units), as Java's TimeUnit converts.
_UNIX: dict[str, tuple[Callable[[int], int], Callable[[int], int]]] = {
    MILLISECONDS: (_same, _same),
    SECONDS: (lambda v: _saturating_mul(v, 1000), lambda ms: _truncating_div(ms, 1000)),
    MICROSECONDS: (lambda v: _truncating_div(v, 1000), lambda ms: _saturating_mul(ms, 1000)),
    NANOSECONDS: (lambda v: _truncating_div(v, 1_000_000), lambda ms: _saturating_mul(ms, 1_000_000)),
}


def _to_date(millis: int) -> datetime.date:
    return datetime.date.fromordinal(_EPOCH_DAY + millis // _MS_PER_DAY)


def _to_time(millis: int) -> datetime.time:
    seconds, ms = divmod(millis % _MS_PER_DAY, 1000)
    minutes, s = divmod(seconds, 60)
    h, m = divmod(minutes, 60)
    return datetime.time(h, m, s, ms * 1000)


def _to_timestamp(millis: int) -> datetime.datetime:
    return _EPOCH + datetime.timedelta(milliseconds=millis)


class TimestampConverterKey(Key, TimestampConverter):
    aliases = ("org.apache.kafka.connect.transforms.TimestampConverter$Key",)


class TimestampConverterValue(Value, TimestampConverter):
    aliases = ("org.apache.kafka.connect.transforms.TimestampConverter$Value",)
