"""MaskField: replace fields of the key or value with an empty value of their type, or with a
fixed replacement.

``fields=ssn,card`` masks those fields of a Struct (with a schema) or of a map (without
one). Without ``replacement`` a masked value becomes the "null value" of its type:
0 for numbers, ``False``, ``""``, ``Decimal(0)``, an empty list or dict, and for
dates and times the epoch (``date(1970, 1, 1)``, ``time(0, 0)``, and
``1970-01-01T00:00Z`` for a timestamp). Null values stay null; a struct or bytes field
cannot be masked.

With ``replacement`` (e.g. ``replacement=***`` or ``replacement=0``) strings become the
replacement and numbers its numeric value, read as Kafka reads it (Java ``BigDecimal``
syntax: "123.9" is 123 for an integer field, "1e3" is 1000, "300" in an int8 field wraps
to 44 as Java's byte cast does). Which conversion applies is chosen by the value's
Python type, narrowed by the field's schema type when there is one (an int8 field, a
float32 field); without a schema ints are int64 and floats float64. A replacement that
is not a number is an error for numeric fields only, so it shows up on the first
record with such a field; booleans, dates, lists and maps cannot take a replacement.

With a schema the record keeps its schema and gets a new Struct. Without one, a listed
field that the map lacks is added with a null value, as in Kafka. A null key or value
(tombstone) is an error, as in Kafka.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import field_validator

from connect.api import (
    Boolean,
    ConfigModel,
    ConnectRecord,
    DataException,
    Field,
    Schema,
    Struct,
    Type,
    importance,
)
from transforms.java_numbers import (
    NumberFormatError,
    decimal_to_double,
    decimal_to_int,
    parse_big_decimal,
    to_float32,
    wrap,
)
from transforms.parts import Key, PartTransformation, Value
from transforms.requirements import record_error, require_map, require_struct
from transforms.schemas import LruCache
from transforms.settings import NameList, check_names, replace_null_with_default

PURPOSE = "mask fields"

# The "null value" of each type; all immutable, so one instance serves every record.
_EMPTY: dict[type, Any] = {
    bool: False,
    int: 0,
    float: 0.0,
    str: "",
    decimal.Decimal: decimal.Decimal(0),
    datetime.datetime: datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC),
    datetime.date: datetime.date(1970, 1, 1),
    datetime.time: datetime.time(0, 0),
}
_MISSING = object()
_NUMBER_TYPES = (Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.FLOAT32, Type.FLOAT64)


def empty_value(value: Any) -> Any:
    """The masked form of ``value`` without a replacement (Kafka's ``maskWithNullValue``)."""
    empty = _EMPTY.get(type(value), _MISSING)
    if empty is not _MISSING:
        return empty
    if isinstance(value, list):
        return []  # a new list each time: the receiver may change it
    if isinstance(value, dict):
        return {}
    for cls, empty in _EMPTY.items():  # subclasses (an IntEnum, a str subclass…); bool before int
        if isinstance(value, cls):
            return empty
    raise DataException(f"Cannot mask value of type: {type(value).__name__}")


@dataclass(frozen=True, slots=True)
class Replacements:
    """``replacement`` converted once for every kind of value it may replace; a conversion
    that failed holds the error message, raised when a value of that kind is masked."""

    text: str
    numbers: Mapping[Type, int | float | str]  # by Connect number type; str: the error
    decimal: decimal.Decimal | str

    @staticmethod
    def of(text: str) -> Replacements:
        numbers: dict[Type, int | float | str]
        try:
            # Kafka's Values.convertToX: new BigDecimal(text), then longValue() or doubleValue().
            d = parse_big_decimal(text)
        except NumberFormatError:
            failure = f"Unable to convert {text} (class str) to a number"
            numbers = dict.fromkeys(_NUMBER_TYPES, failure)
            return Replacements(text, numbers, f"Unable to convert {text} (class str) to number")
        n = decimal_to_int(d, 64)
        x = decimal_to_double(d)
        numbers = {
            Type.INT8: wrap(n, 8),
            Type.INT16: wrap(n, 16),
            Type.INT32: wrap(n, 32),
            Type.INT64: n,
            Type.FLOAT32: to_float32(x),
            Type.FLOAT64: x,
        }
        return Replacements(text, numbers, d)

    def replace(self, value: Any, field_type: Type | None) -> Any:
        """The replacement for ``value``, converted for the field's type (``maskWithCustomReplacement``)."""
        result: int | float | decimal.Decimal | str
        if isinstance(value, str):
            return self.text
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if field_type is None or field_type not in self.numbers:  # schemaless
                field_type = Type.FLOAT64 if isinstance(value, float) else Type.INT64
            result = self.numbers[field_type]
        elif isinstance(value, decimal.Decimal):
            result = self.decimal
        else:
            raise DataException(f"Cannot mask value of type {type(value).__name__} with custom replacement.")
        if isinstance(result, str):
            raise DataException(result)
        return result


class MaskFieldConfig(ConfigModel):
    fields: NameList = Field(
        alias="fields", description="Names of fields to mask.", json_schema_extra=importance("HIGH")
    )
    replacement: str | None = Field(
        None,
        alias="replacement",
        description="Custom value replacement, that will be applied to all 'fields' values (numeric or "
        "non-empty string values only).",
        json_schema_extra=importance("LOW"),
    )
    replace_null_with_default: Boolean = replace_null_with_default()

    @field_validator("fields")
    @classmethod
    def _names(cls, v: list[str]) -> list[str]:
        return check_names("fields", v)

    @field_validator("replacement")
    @classmethod
    def _non_empty(cls, v: str | None) -> str | None:
        if v == "":
            raise ValueError("String must be non-empty")
        return v


class MaskField(PartTransformation):
    Config = MaskFieldConfig

    def configure(self, configs: Mapping[str, Any]) -> None:
        config = self.config = MaskFieldConfig.parse(configs)
        self.fields = tuple(config.fields)
        self.replacements = None if config.replacement is None else Replacements.of(config.replacement)
        self.replace_null = config.replace_null_with_default
        # Per struct schema: each field's name, whether it is masked, and its type.
        self._plans: LruCache[Schema, tuple[tuple[str, bool, Type], ...]] = LruCache()

    def mask(self, value: Any, field_type: Type | None = None) -> Any:
        if value is None:
            return None
        if self.replacements is None:
            return empty_value(value)
        return self.replacements.replace(value, field_type)

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        value = self.value_of(record)
        schema = self.schema_of(record)
        if schema is None:
            data = require_map(self, record, value, PURPOSE)
            out = dict(data)
            try:
                for name in self.fields:
                    out[name] = self.mask(data.get(name))
            except DataException as exc:
                raise record_error(self, record, str(exc)) from None
            return self.replace(record, None, out)
        struct = require_struct(self, record, value, PURPOSE)
        try:
            masked = self._masked_struct(struct)
        except DataException as exc:
            raise record_error(self, record, str(exc)) from None
        return self.replace(record, schema, masked)

    def _masked_struct(self, struct: Struct) -> Struct:
        schema = struct.schema
        plan = self._plans.get(schema)
        if plan is None:
            listed = set(self.fields)
            plan = tuple((f.name, f.name in listed, f.schema.type) for f in schema.fields)
            self._plans.put(schema, plan)
        values = struct.values(self.replace_null)
        for i, (_name, masked, field_type) in enumerate(plan):
            if masked:
                values[i] = self.mask(values[i], field_type)
        return Struct.from_values(schema, values)


class MaskFieldKey(Key, MaskField):
    aliases = ("org.apache.kafka.connect.transforms.MaskField$Key",)


class MaskFieldValue(Value, MaskField):
    aliases = ("org.apache.kafka.connect.transforms.MaskField$Value",)
