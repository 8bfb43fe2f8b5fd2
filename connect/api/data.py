"""Kafka Connect's data API: schemas, structs and logical types.

A record key or value is a Python value plus an optional :class:`Schema` that
describes it. Schemas are immutable and compare by structure, so they can be
cached, used as dict keys and shared between threads. Build them with
:class:`SchemaBuilder`; fill :class:`Struct` values field by field.

Python types for each schema type:

=============  =====================================================
INT8..INT64    ``int`` (range-checked), never ``bool``
FLOAT32/64     ``float`` (``int`` accepted)
BOOLEAN        ``bool``
STRING         ``str``
BYTES          ``bytes`` (``bytearray``/``memoryview`` accepted)
ARRAY          ``list``
MAP            ``dict``
STRUCT         :class:`Struct` whose schema equals the field's schema
Decimal        ``decimal.Decimal`` (physically BYTES, parameter ``scale``)
Date           ``datetime.date`` (physically INT32 days since the epoch)
Time           ``datetime.time`` (physically INT32 ms since midnight, UTC)
Timestamp      ``datetime.datetime`` (physically INT64 epoch ms; naive means UTC)
=============  =====================================================

Example, a source task producing a typed record value::

    import datetime
    import decimal

    from connect.api.data import Date, Decimal, Schema, SchemaBuilder, Struct, Timestamp

    ORDER = (
        SchemaBuilder.struct()
        .name("com.example.Order")
        .version(1)
        .field("id", Schema.INT64_SCHEMA)
        .field("customer", Schema.OPTIONAL_STRING_SCHEMA)
        .field("amount", Decimal.schema(2))
        .field("day", Date.SCHEMA)
        .field("created", Timestamp.SCHEMA)
        .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).optional().build())
        .field("status", SchemaBuilder.string().default_value("NEW").build())
        .build()
    )

    order = (
        Struct(ORDER)
        .put("id", 42)
        .put("customer", "ann")
        .put("amount", decimal.Decimal("19.99"))
        .put("day", datetime.date(2024, 5, 1))
        .put("created", datetime.datetime.now(datetime.UTC))
    )
    order.validate()            # raises DataException if a required field is missing
    order.get("status")         # "NEW": unset fields read as their default
    # return SourceRecord(..., value_schema=ORDER, value=order)

Every mismatch (wrong Python type, out-of-range integer, unknown field, missing
required field) raises :class:`~connect.api.errors.DataException` naming the
field path, e.g. ``Invalid value for field "items[2].qty": 300 is out of range
for INT8``.
"""

from __future__ import annotations

import builtins
import dataclasses
import datetime
import decimal
import enum
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, NamedTuple

from connect.api.errors import DataException

__all__ = [
    "Date",
    "Decimal",
    "Field",
    "Parameters",
    "Schema",
    "SchemaAndValue",
    "SchemaBuilder",
    "SchemaBuilderException",
    "Struct",
    "Time",
    "Timestamp",
    "Type",
]


class SchemaBuilderException(DataException):
    """A :class:`SchemaBuilder` was used incorrectly (as Kafka's ``SchemaBuilderException``)."""


class Type(enum.Enum):
    """The physical type of a schema. ``Type.X.name.lower()`` (= ``.value``) is Kafka's type name."""

    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    FLOAT32 = "float32"
    FLOAT64 = "float64"
    BOOLEAN = "boolean"
    STRING = "string"
    BYTES = "bytes"
    ARRAY = "array"
    MAP = "map"
    STRUCT = "struct"

    @property
    def is_primitive(self) -> bool:
        return self not in (Type.ARRAY, Type.MAP, Type.STRUCT)


#: Inclusive value ranges of the integer types.
INT_RANGES: dict[Type, tuple[int, int]] = {
    Type.INT8: (-(2**7), 2**7 - 1),
    Type.INT16: (-(2**15), 2**15 - 1),
    Type.INT32: (-(2**31), 2**31 - 1),
    Type.INT64: (-(2**63), 2**63 - 1),
}
FLOAT32_MAX = 3.4028234663852886e38
_LOGICAL_NAMES = frozenset(
    {
        "org.apache.kafka.connect.data.Decimal",
        "org.apache.kafka.connect.data.Date",
        "org.apache.kafka.connect.data.Time",
        "org.apache.kafka.connect.data.Timestamp",
    }
)
_NONE_TYPE = type(None)
# The exact Python type of a value of each logical type that needs no further check.
_LOGICAL_EXACT_TYPES: dict[str, type] = {
    "org.apache.kafka.connect.data.Decimal": decimal.Decimal,
    "org.apache.kafka.connect.data.Date": datetime.date,
    "org.apache.kafka.connect.data.Time": datetime.time,
    "org.apache.kafka.connect.data.Timestamp": datetime.datetime,
}
# The exact Python type of a value of each plain type that needs no further check.
_EXACT_TYPES: dict[Type, type] = {
    Type.FLOAT64: float,
    Type.BOOLEAN: bool,
    Type.STRING: str,
    Type.BYTES: bytes,
}


class Parameters(Mapping[str, str]):
    """Read-only, hashable, insertion-ordered ``str -> str`` mapping (schema parameters).

    Equality ignores order, like Java's ``Map.equals``.
    """

    __slots__ = ("_hash", "_items")

    def __init__(self, items: Mapping[str, str] | Iterable[tuple[str, str]] = ()) -> None:
        d = dict(items)
        for k, v in d.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise DataException(f"Schema parameters must be strings, got {k!r}: {v!r}")
        self._items = d
        self._hash: int | None = None

    def __getitem__(self, key: str) -> str:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Parameters):
            return self._items == other._items
        if isinstance(other, Mapping):
            return self._items == dict(other.items())
        return NotImplemented

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._items.items()))
        return self._hash

    def __repr__(self) -> str:
        return f"Parameters({self._items!r})"


@dataclasses.dataclass(frozen=True, slots=True)
class Field:
    """A named, positioned field of a STRUCT schema."""

    name: str
    index: int
    schema: Schema


@dataclasses.dataclass(frozen=True, slots=True)
class Schema:
    """An immutable description of a Connect value (Kafka's ``ConnectSchema``).

    Build schemas with :class:`SchemaBuilder`, or use the constants such as
    ``Schema.INT32_SCHEMA`` and ``Schema.OPTIONAL_STRING_SCHEMA``. ARRAY schemas
    describe their items with ``value_schema``; MAP schemas have ``key_schema``
    and ``value_schema``; STRUCT schemas have ``fields``.
    """

    type: Type
    optional: bool = False
    default_value: Any = dataclasses.field(default=None, hash=False)
    name: str | None = None
    version: int | None = None
    doc: str | None = None
    parameters: Mapping[str, str] | None = None
    key_schema: Schema | None = None
    value_schema: Schema | None = None
    fields: tuple[Field, ...] = ()
    _by_name: dict[str, Field] = dataclasses.field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )
    _hash: int | None = dataclasses.field(default=None, init=False, repr=False, compare=False, hash=False)
    # Fast validation, worked out once per schema: the one Python type a plain (non-logical)
    # primitive value has, and the range of an integer type. Values are checked on every
    # Struct.put, so the common case must not walk the type dispatch.
    _exact: builtins.type | None = dataclasses.field(
        default=None, init=False, repr=False, compare=False, hash=False
    )
    _int_range: tuple[int, int] | None = dataclasses.field(
        default=None, init=False, repr=False, compare=False, hash=False
    )

    INT8_SCHEMA: ClassVar[Schema]
    INT16_SCHEMA: ClassVar[Schema]
    INT32_SCHEMA: ClassVar[Schema]
    INT64_SCHEMA: ClassVar[Schema]
    FLOAT32_SCHEMA: ClassVar[Schema]
    FLOAT64_SCHEMA: ClassVar[Schema]
    BOOLEAN_SCHEMA: ClassVar[Schema]
    STRING_SCHEMA: ClassVar[Schema]
    BYTES_SCHEMA: ClassVar[Schema]
    OPTIONAL_INT8_SCHEMA: ClassVar[Schema]
    OPTIONAL_INT16_SCHEMA: ClassVar[Schema]
    OPTIONAL_INT32_SCHEMA: ClassVar[Schema]
    OPTIONAL_INT64_SCHEMA: ClassVar[Schema]
    OPTIONAL_FLOAT32_SCHEMA: ClassVar[Schema]
    OPTIONAL_FLOAT64_SCHEMA: ClassVar[Schema]
    OPTIONAL_BOOLEAN_SCHEMA: ClassVar[Schema]
    OPTIONAL_STRING_SCHEMA: ClassVar[Schema]
    OPTIONAL_BYTES_SCHEMA: ClassVar[Schema]

    def __post_init__(self) -> None:
        t = self.type
        if not isinstance(t, Type):
            raise DataException(f"Schema type must be a Type, got {t!r}")
        if self.parameters is not None and not isinstance(self.parameters, Parameters):
            object.__setattr__(self, "parameters", Parameters(self.parameters))
        if not isinstance(self.fields, tuple):
            object.__setattr__(self, "fields", tuple(self.fields))
        if self.version is not None and (not isinstance(self.version, int) or isinstance(self.version, bool)):
            raise DataException(f"Schema version must be an int, got {self.version!r}")
        if t is Type.STRUCT:
            for i, f in enumerate(self.fields):
                if f.index != i:
                    raise DataException(f"Field {f.name!r} has index {f.index}, expected {i}")
                if f.name in self._by_name:
                    raise DataException(f"Duplicate field name {f.name!r}")
                self._by_name[f.name] = f
        elif self.fields:
            raise DataException(f"Only STRUCT schemas have fields, not {t.name}")
        if t is Type.MAP:
            if self.key_schema is None or self.value_schema is None:
                raise DataException("MAP schemas need a key schema and a value schema")
        elif self.key_schema is not None:
            raise DataException(f"Only MAP schemas have a key schema, not {t.name}")
        if t is Type.ARRAY:
            if self.value_schema is None:
                raise DataException("ARRAY schemas need a value (item) schema")
        elif t is not Type.MAP and self.value_schema is not None:
            raise DataException(f"Only ARRAY and MAP schemas have a value schema, not {t.name}")
        if self.name not in _LOGICAL_NAMES:
            object.__setattr__(self, "_exact", _EXACT_TYPES.get(t))
            object.__setattr__(self, "_int_range", INT_RANGES.get(t))
        if self.default_value is not None:
            try:
                _check(self, self.default_value)
            except _Invalid as e:
                raise SchemaBuilderException(f"Invalid default value: {e.message()}") from None

    def __hash__(self) -> int:
        # Hashing walks the whole schema tree; converters look schemas up per record, so memoize.
        h = self._hash
        if h is None:
            h = hash(
                (
                    self.type,
                    self.optional,
                    self.name,
                    self.version,
                    self.doc,
                    self.parameters,
                    self.key_schema,
                    self.value_schema,
                    self.fields,
                )
            )
            object.__setattr__(self, "_hash", h)
        return h

    def __repr__(self) -> str:
        opt = ",optional" if self.optional else ""
        if self.name is not None:
            return f"Schema{{{self.name}:{self.type.name}{opt}}}"
        return f"Schema{{{self.type.name}{opt}}}"

    def field(self, name: str) -> Field | None:
        """The field called ``name``, or None. Raises DataException on non-STRUCT schemas."""
        if self.type is not Type.STRUCT:
            raise DataException(f"Cannot look up fields on non-struct type {self.type.name}")
        return self._by_name.get(name)

    @property
    def plain_type(self) -> builtins.type | None:
        """The one Python type a plain (not logical) value of this schema has, when there is
        one: ``str`` for STRING, ``bool`` for BOOLEAN, ``float`` for FLOAT64, ``bytes`` for
        BYTES; None for FLOAT32 (its range is checked), the integer types (see ``int_range``),
        logical and composite types.
        A value of exactly this type is valid without further checks: what generated fast
        paths (JDBC rows, JSON writers) test before they take a value as it is."""
        return self._exact

    @property
    def int_range(self) -> tuple[int, int] | None:
        """(lowest, highest) of an integer schema (INT8 to INT64, not logical), else None."""
        return self._int_range

    def fits_all(self, values: Sequence[Any]) -> bool:
        """Whether every one of ``values`` is valid for this schema (``validate_value``
        accepts each): one C-level pass when they all have the schema's one plain Python
        type (``str`` for STRING, an ``int`` in range for the integer types), the full
        check otherwise. What a batch of values of one schema needs checked. Nulls where
        the schema allows them and the logical types' values (a ``decimal.Decimal`` per row,
        a ``datetime`` ...) take the C-level pass too: a table's rows are mostly those
        (``benchmarks/jdbc_source.py``)."""
        if not values:
            return True
        types = set(map(type, values))
        present = values
        if _NONE_TYPE in types:
            if not (self.optional or self.default_value is not None):
                return False
            types.discard(_NONE_TYPE)
            if not types:
                return True
            if self._int_range is not None:
                present = [v for v in values if v is not None]
        if len(types) == 1:
            exact = self._exact
            if exact is None and self.name is not None:
                exact = _LOGICAL_EXACT_TYPES.get(self.name)
            if exact is not None and exact in types:
                return True
            bounds = self._int_range
            if (
                bounds is not None
                and int in types
                and bounds[0] <= min(present)
                and max(present) <= bounds[1]
            ):
                return True
        try:
            for v in values:
                _check(self, v)
        except _Invalid:
            return False
        return True

    @staticmethod
    def validate_value(schema: Schema, value: Any, path: str | None = None) -> None:
        """Check that ``value`` can be used with ``schema`` (Kafka's ``ConnectSchema.validateValue``).

        ``path`` names the value in the error message (a field name, for example).
        Raises DataException naming the offending field path and the problem.
        """
        try:
            _check(schema, value)
        except _Invalid as e:
            raise DataException(e.describe(path)) from None


class _Invalid(Exception):
    """Internal: a validation problem, with the path collected while the stack unwinds."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.segments: list[str] = []

    def path(self, base: str | None = None) -> str:
        return ((base or "") + "".join(reversed(self.segments))).lstrip(".")

    def message(self) -> str:
        p = self.path()
        return f'{self.problem} (at "{p}")' if p else self.problem

    def describe(self, base: str | None = None) -> str:
        p = self.path(base)
        return f'Invalid value for field "{p}": {self.problem}' if p else f"Invalid value: {self.problem}"


def _type_name(value: Any) -> str:
    return type(value).__name__


def _struct_schema_matches(expected: Schema, actual: Schema) -> bool:
    """Struct schema equality, tolerating a default value on one side only.

    A STRUCT schema's default is a Struct built on the schema *without* that
    default (it cannot contain itself), so comparing the two must ignore it.
    """
    if actual is expected or actual == expected:
        return True
    strip = dataclasses.replace
    return strip(actual, default_value=None) == strip(expected, default_value=None)


def _check_logical(schema: Schema, name: str, value: Any) -> bool:
    """Validate a logical-type value; False when ``name`` is not a known logical type."""
    if name == Decimal.LOGICAL_NAME:
        if not isinstance(value, decimal.Decimal):
            raise _Invalid(f"expected decimal.Decimal for logical type Decimal, got {_type_name(value)}")
    elif name == Date.LOGICAL_NAME:
        if not isinstance(value, datetime.date) or isinstance(value, datetime.datetime):
            raise _Invalid(f"expected datetime.date for logical type Date, got {_type_name(value)}")
    elif name == Time.LOGICAL_NAME:
        if not isinstance(value, datetime.time):
            raise _Invalid(f"expected datetime.time for logical type Time, got {_type_name(value)}")
    elif name == Timestamp.LOGICAL_NAME:
        if not isinstance(value, datetime.datetime):
            raise _Invalid(f"expected datetime.datetime for logical type Timestamp, got {_type_name(value)}")
    else:
        return False
    return True


def _check(schema: Schema, value: Any) -> None:
    if value is None:
        if schema.optional or schema.default_value is not None:
            return
        raise _Invalid(f"null used for required {schema.type.name} schema")
    exact = schema._exact
    if exact is not None and type(value) is exact:
        return
    bounds = schema._int_range
    if bounds is not None and type(value) is int and bounds[0] <= value <= bounds[1]:
        return
    if schema.name is not None and _check_logical(schema, schema.name, value):
        return
    t = schema.type
    if t in INT_RANGES:
        if not isinstance(value, int) or isinstance(value, bool):
            raise _Invalid(f"expected int for {t.name}, got {_type_name(value)}")
        lo, hi = INT_RANGES[t]
        if not lo <= value <= hi:
            raise _Invalid(f"{value} is out of range for {t.name}")
    elif t is Type.FLOAT32 or t is Type.FLOAT64:
        if not isinstance(value, (float, int)) or isinstance(value, bool):
            raise _Invalid(f"expected float for {t.name}, got {_type_name(value)}")
        if t is Type.FLOAT32 and math.isfinite(value) and abs(value) > FLOAT32_MAX:
            raise _Invalid(f"{value} is out of range for FLOAT32")
    elif t is Type.BOOLEAN:
        if not isinstance(value, bool):
            raise _Invalid(f"expected bool for BOOLEAN, got {_type_name(value)}")
    elif t is Type.STRING:
        if not isinstance(value, str):
            raise _Invalid(f"expected str for STRING, got {_type_name(value)}")
    elif t is Type.BYTES:
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise _Invalid(f"expected bytes for BYTES, got {_type_name(value)}")
    elif t is Type.ARRAY:
        if not isinstance(value, list):
            raise _Invalid(f"expected list for ARRAY, got {_type_name(value)}")
        item_schema = schema.value_schema
        assert item_schema is not None
        i = 0
        try:
            for i, item in enumerate(value):  # noqa: B007 - i is read in the handler
                _check(item_schema, item)
        except _Invalid as e:
            e.segments.append(f"[{i}]")
            raise
    elif t is Type.MAP:
        if not isinstance(value, dict):
            raise _Invalid(f"expected dict for MAP, got {_type_name(value)}")
        key_schema, value_schema = schema.key_schema, schema.value_schema
        assert key_schema is not None and value_schema is not None
        for k, v in value.items():
            try:
                _check(key_schema, k)
            except _Invalid as e:
                e.segments.append(f"<key {k!r}>")
                raise
            try:
                _check(value_schema, v)
            except _Invalid as e:
                e.segments.append(f"[{k!r}]")
                raise
    elif t is Type.STRUCT:
        if not isinstance(value, Struct):
            raise _Invalid(f"expected Struct for STRUCT, got {_type_name(value)}")
        if not _struct_schema_matches(schema, value.schema):
            raise _Invalid(f"Struct schemas do not match: expected {schema!r}, got {value.schema!r}")
        value._check_fields()


# The constants are built here, after _check exists, because Schema.__post_init__ uses it.
for _t in (
    Type.INT8,
    Type.INT16,
    Type.INT32,
    Type.INT64,
    Type.FLOAT32,
    Type.FLOAT64,
    Type.BOOLEAN,
    Type.STRING,
    Type.BYTES,
):
    setattr(Schema, f"{_t.name}_SCHEMA", Schema(_t))
    setattr(Schema, f"OPTIONAL_{_t.name}_SCHEMA", Schema(_t, optional=True))
del _t


class SchemaBuilder:
    """Fluent, mutable builder of :class:`Schema` (Kafka's ``SchemaBuilder``).

    Every setter returns the builder. Setting an attribute twice to different
    values, adding fields to a non-STRUCT, duplicate field names and invalid
    default values raise :class:`SchemaBuilderException`.
    """

    __slots__ = (
        "_default",
        "_doc",
        "_fields",
        "_key_schema",
        "_name",
        "_optional",
        "_parameters",
        "_type",
        "_value_schema",
        "_version",
    )

    def __init__(self, schema_type: Type) -> None:
        self._type = schema_type
        self._optional: builtins.bool | None = None
        self._default: Any = None
        self._name: str | None = None
        self._version: int | None = None
        self._doc: str | None = None
        self._parameters: dict[str, str] | None = None
        self._fields: dict[str, Field] = {}
        self._key_schema: Schema | None = None
        self._value_schema: Schema | None = None

    # -- constructors -------------------------------------------------------------------------------

    @staticmethod
    def type(schema_type: Type) -> SchemaBuilder:
        return SchemaBuilder(schema_type)

    @staticmethod
    def int8() -> SchemaBuilder:
        return SchemaBuilder(Type.INT8)

    @staticmethod
    def int16() -> SchemaBuilder:
        return SchemaBuilder(Type.INT16)

    @staticmethod
    def int32() -> SchemaBuilder:
        return SchemaBuilder(Type.INT32)

    @staticmethod
    def int64() -> SchemaBuilder:
        return SchemaBuilder(Type.INT64)

    @staticmethod
    def float32() -> SchemaBuilder:
        return SchemaBuilder(Type.FLOAT32)

    @staticmethod
    def float64() -> SchemaBuilder:
        return SchemaBuilder(Type.FLOAT64)

    @staticmethod
    def boolean() -> SchemaBuilder:
        return SchemaBuilder(Type.BOOLEAN)

    bool = boolean  # Kafka's spelling

    @staticmethod
    def string() -> SchemaBuilder:
        return SchemaBuilder(Type.STRING)

    @staticmethod
    def bytes() -> SchemaBuilder:
        return SchemaBuilder(Type.BYTES)

    @staticmethod
    def struct() -> SchemaBuilder:
        return SchemaBuilder(Type.STRUCT)

    @staticmethod
    def array(value_schema: Schema | SchemaBuilder) -> SchemaBuilder:
        b = SchemaBuilder(Type.ARRAY)
        b._value_schema = _as_schema(value_schema, "array value schema")
        return b

    @staticmethod
    def map(key_schema: Schema | SchemaBuilder, value_schema: Schema | SchemaBuilder) -> SchemaBuilder:
        b = SchemaBuilder(Type.MAP)
        b._key_schema = _as_schema(key_schema, "map key schema")
        b._value_schema = _as_schema(value_schema, "map value schema")
        return b

    # -- setters --------------------------------------------------------------------------------------

    def _set(self, attr: str, label: str, value: Any) -> SchemaBuilder:
        current = getattr(self, attr)
        if current is not None and current != value:
            raise SchemaBuilderException(f"Invalid SchemaBuilder call: {label} has already been set.")
        setattr(self, attr, value)
        return self

    def optional(self) -> SchemaBuilder:
        return self._set("_optional", "optional", True)

    def required(self) -> SchemaBuilder:
        return self._set("_optional", "optional", False)

    def name(self, name: str) -> SchemaBuilder:
        return self._set("_name", "name", name)

    def version(self, version: int) -> SchemaBuilder:
        if not isinstance(version, int) or isinstance(version, builtins.bool):
            raise SchemaBuilderException(f"Schema version must be an int, got {version!r}")
        return self._set("_version", "version", version)

    def doc(self, doc: str) -> SchemaBuilder:
        return self._set("_doc", "doc", doc)

    def default_value(self, value: Any) -> SchemaBuilder:
        """Set the default; validated against the schema as built so far (set name/parameters first)."""
        if self._default is not None and self._default != value:
            raise SchemaBuilderException("Invalid SchemaBuilder call: default has already been set.")
        try:
            _check(self._build(None), value)
        except _Invalid as e:
            raise SchemaBuilderException(f"Invalid default value: {e.message()}") from None
        self._default = value
        return self

    def parameter(self, key: str, value: str) -> SchemaBuilder:
        if not isinstance(key, str) or not isinstance(value, str):
            raise SchemaBuilderException(f"Schema parameters must be strings, got {key!r}: {value!r}")
        if self._parameters is None:
            self._parameters = {}
        self._parameters[key] = value
        return self

    def parameters(self, parameters: Mapping[str, str]) -> SchemaBuilder:
        if self._parameters is None:
            self._parameters = {}
        for k, v in parameters.items():
            self.parameter(k, v)
        return self

    def field(self, name: str, schema: Schema | SchemaBuilder) -> SchemaBuilder:
        if self._type is not Type.STRUCT:
            raise SchemaBuilderException(f"Cannot create fields on type {self._type.name}")
        if not isinstance(name, str) or not name:
            raise SchemaBuilderException(f"Field name must be a non-empty string, got {name!r}")
        if name in self._fields:
            raise SchemaBuilderException(f"Cannot create field because of field name duplication {name}")
        self._fields[name] = Field(name, len(self._fields), _as_schema(schema, f"schema of field {name!r}"))
        return self

    # -- build ----------------------------------------------------------------------------------------------

    def _build(self, default: Any) -> Schema:
        return Schema(
            self._type,
            optional=bool(self._optional),
            default_value=default,
            name=self._name,
            version=self._version,
            doc=self._doc,
            parameters=None if self._parameters is None else Parameters(self._parameters),
            key_schema=self._key_schema,
            value_schema=self._value_schema,
            fields=tuple(self._fields.values()),
        )

    def build(self) -> Schema:
        return self._build(self._default)


def _as_schema(schema: Schema | SchemaBuilder, what: str) -> Schema:
    if isinstance(schema, SchemaBuilder):
        return schema.build()
    if not isinstance(schema, Schema):
        raise SchemaBuilderException(f"{what} must be a Schema, got {type(schema).__name__}")
    return schema


_STRUCT = Type.STRUCT  # enum member lookups cost a call; the hot paths use the constant
_new_object = object.__new__


class Struct:
    """A value of a STRUCT schema: field values by name, validated on ``put``.

    ``get`` returns the field's default when the field was never set (or set to
    None). ``validate`` checks that every required field without a default has a
    value; converters call it before writing.
    """

    __slots__ = ("_schema", "_values")

    def __init__(self, schema: Schema) -> None:
        if schema.type is not Type.STRUCT:
            raise DataException(f"Not a struct schema: {schema!r}")
        self._schema = schema
        self._values: list[Any] = [None] * len(schema.fields)

    @classmethod
    def _from_values(cls, schema: Schema, values: list[Any]) -> Struct:
        """Internal: wrap values already checked against ``schema`` (used by converters)."""
        s = cls.__new__(cls)
        s._schema = schema
        s._values = values
        return s

    @classmethod
    def from_values(cls, schema: Schema, values: Iterable[Any]) -> Struct:
        """A struct of ``schema`` holding ``values`` in field order, each validated as ``put``
        validates it: the quick way to build a struct whose values are all at hand (what a
        transformation reshaping a struct does), with no lookup by field name."""
        if schema.type is not _STRUCT:
            raise DataException(f"Not a struct schema: {schema!r}")
        held = list(values)
        fields = schema.fields
        if len(held) != len(fields):
            raise DataException(f"{len(held)} values given for the {len(fields)} fields of {schema!r}")
        for i, v in enumerate(held):
            fs = fields[i].schema
            if v is None or type(v) is not fs._exact:
                try:
                    _check(fs, v)
                except _Invalid as e:
                    raise DataException(e.describe(fields[i].name)) from None
        s = _new_object(cls)
        s._schema = schema
        s._values = held
        return s

    @classmethod
    def unchecked(cls, schema: Schema, values: list[Any]) -> Struct:
        """A struct of ``schema`` holding ``values`` (a list it keeps) as they are, without
        ``from_values``' checks: for hot paths that have checked the values against the
        schema themselves. A value that does not fit is only found when it is written."""
        s = _new_object(cls)
        s._schema = schema
        s._values = values
        return s

    def values(self, defaults: bool = True) -> list[Any]:
        """The field values in schema order; an unset field reads as its default unless
        ``defaults`` is False (then it reads as None, as ``get_without_default``)."""
        values = list(self._values)
        if defaults and None in values:
            fields = self._schema.fields
            for i, v in enumerate(values):
                if v is None:
                    values[i] = fields[i].schema.default_value
        return values

    @property
    def schema(self) -> Schema:
        return self._schema

    def _lookup(self, name: str) -> Field:
        f = self._schema._by_name.get(name)
        if f is None:
            raise DataException(f"{name} is not a valid field name of {self._schema!r}")
        return f

    def put(self, name: str, value: Any) -> Struct:
        """Set field ``name`` to ``value`` after validating it against the field's schema."""
        f = self._schema._by_name.get(name)
        if f is None:
            raise DataException(f"{name} is not a valid field name of {self._schema!r}")
        schema = f.schema
        if value is None or type(value) is not schema._exact:  # else: a plain value of the right type
            try:
                _check(schema, value)
            except _Invalid as e:
                raise DataException(e.describe(name)) from None
        self._values[f.index] = value
        return self

    def get(self, name: str) -> Any:
        """The value of field ``name``, or its schema's default when unset."""
        f = self._lookup(name)
        v = self._values[f.index]
        return f.schema.default_value if v is None else v

    def get_without_default(self, name: str) -> Any:
        """The value of field ``name`` as set (None when unset), ignoring defaults."""
        return self._values[self._lookup(name).index]

    def _check_fields(self) -> None:
        values = self._values
        for f in self._schema.fields:
            v = values[f.index]
            if v is None and (f.schema.optional or f.schema.default_value is not None):
                continue
            try:
                _check(f.schema, v)
            except _Invalid as e:
                e.segments.append("." + f.name)
                raise

    def validate(self) -> None:
        """Raise DataException if a field is invalid or a required field without default is missing."""
        try:
            self._check_fields()
        except _Invalid as e:
            raise DataException(e.describe()) from None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Struct):
            return NotImplemented
        return self._schema == other._schema and self._values == other._values

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        fields = self._schema.fields
        values = self._values
        parts = [f"{f.name}={_display(v)}" for f, v in zip(fields, values, strict=True) if v is not None]
        return "Struct{" + ",".join(parts) + "}"


def _display(value: Any) -> str:
    # Like Java's toString: 1.5, not Decimal('1.5'); bytes keep their b'' form to stay readable.
    return repr(value) if isinstance(value, (bytes, bytearray, memoryview)) else str(value)


class _SchemaAndValueFields(NamedTuple):
    schema: Schema | None
    value: Any


class SchemaAndValue(_SchemaAndValueFields):
    """A schema (None when schemaless) and a value; unpacks as ``schema, value = sav``.

    A named tuple rather than a dataclass: converters make two per record.
    """

    __slots__ = ()
    NULL: ClassVar[SchemaAndValue]


SchemaAndValue.NULL = SchemaAndValue(None, None)


# -- logical types -----------------------------------------------------------------------------------------

_EPOCH_DATE = datetime.date(1970, 1, 1)
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_MILLIS_PER_DAY = 24 * 60 * 60 * 1000


def _require_logical(schema: Schema, logical_name: str, what: str) -> None:
    if schema.name != logical_name:
        raise DataException(f"Requested conversion of {what} object but the schema does not match.")


class Decimal:
    """Arbitrary-precision decimal: BYTES holding the unscaled two's-complement big-endian integer.

    The schema's ``scale`` parameter says where the decimal point is.
    """

    LOGICAL_NAME: ClassVar[str] = "org.apache.kafka.connect.data.Decimal"
    SCALE_FIELD: ClassVar[str] = "scale"

    @staticmethod
    def builder(scale: int) -> SchemaBuilder:
        return (
            SchemaBuilder.bytes()
            .name(Decimal.LOGICAL_NAME)
            .parameter(Decimal.SCALE_FIELD, str(scale))
            .version(1)
        )

    @staticmethod
    def schema(scale: int) -> Schema:
        return Decimal.builder(scale).build()

    @staticmethod
    def scale(schema: Schema) -> int:
        params = schema.parameters
        raw = None if params is None else params.get(Decimal.SCALE_FIELD)
        if raw is None:
            raise DataException("Invalid Decimal schema: scale parameter not found.")
        try:
            return int(raw)
        except ValueError:
            raise DataException(f"Invalid Decimal schema: scale {raw!r} is not an integer.") from None

    @staticmethod
    def unscaled(schema: Schema, value: decimal.Decimal | int) -> int:
        """The unscaled integer of ``value`` at the schema's scale; DataException if digits would be lost."""
        return Decimal.unscaled_at(Decimal.scale(schema), value)

    @staticmethod
    def unscaled_at(scale: int, value: decimal.Decimal | int) -> int:
        """The unscaled integer of ``value`` at ``scale``; DataException if digits would be lost."""
        if isinstance(value, int) and not isinstance(value, bool):
            value = decimal.Decimal(value)
        if not isinstance(value, decimal.Decimal):
            raise DataException(
                f"Invalid type for Decimal: expected decimal.Decimal, got {_type_name(value)}"
            )
        if not value.is_finite():
            raise DataException(f"Decimal values must be finite, got {value}")
        # Exact integer arithmetic on the value's ratio: a seventh of the cost of joining its
        # digits (a CDC numeric column per row, benchmarks/jdbc_source.py).
        numerator, denominator = value.as_integer_ratio()
        if scale >= 0:
            numerator *= 10**scale
        else:
            denominator *= 10**-scale
        unscaled, remainder = divmod(numerator, denominator)
        if remainder:
            raise DataException(f"Decimal {value} does not fit scale {scale} without losing digits")
        return unscaled

    @staticmethod
    def from_logical(schema: Schema, value: decimal.Decimal | int) -> bytes:
        """Encode like Java's ``BigInteger.toByteArray`` of the unscaled value (minimal length)."""
        return Decimal.from_logical_at(Decimal.scale(schema), value)

    @staticmethod
    def from_logical_at(scale: int, value: decimal.Decimal | int) -> bytes:
        """``from_logical`` at ``scale``, for a writer that read its schema's scale once."""
        n = Decimal.unscaled_at(scale, value)
        length = (n if n >= 0 else ~n).bit_length() // 8 + 1
        return n.to_bytes(length, "big", signed=True)

    @staticmethod
    def to_logical(schema: Schema, value: builtins.bytes) -> decimal.Decimal:
        scale = Decimal.scale(schema)
        if len(value) == 0:
            raise DataException("Invalid Decimal bytes: zero length")
        n = int.from_bytes(value, "big", signed=True)
        return decimal.Decimal((1 if n < 0 else 0, tuple(int(c) for c in str(abs(n))), -scale))


class Date:
    """A calendar date: INT32 days since 1970-01-01; Python ``datetime.date``."""

    LOGICAL_NAME: ClassVar[str] = "org.apache.kafka.connect.data.Date"
    SCHEMA: ClassVar[Schema]

    @staticmethod
    def builder() -> SchemaBuilder:
        return SchemaBuilder.int32().name(Date.LOGICAL_NAME).version(1)

    @staticmethod
    def from_logical(schema: Schema, value: datetime.date) -> int:
        _require_logical(schema, Date.LOGICAL_NAME, "Date")
        if not isinstance(value, datetime.date) or isinstance(value, datetime.datetime):
            raise DataException(f"Invalid type for Date, expected datetime.date but was {_type_name(value)}")
        return (value - _EPOCH_DATE).days

    @staticmethod
    def to_logical(schema: Schema, value: int) -> datetime.date:
        _require_logical(schema, Date.LOGICAL_NAME, "Date")
        try:
            return _EPOCH_DATE + datetime.timedelta(days=value)
        except OverflowError:
            raise DataException(f"Date value {value} days is outside the range of datetime.date") from None


class Time:
    """A time of day: INT32 milliseconds since midnight (UTC); Python ``datetime.time``.

    Sub-millisecond precision is truncated; an aware time is converted to UTC.
    """

    LOGICAL_NAME: ClassVar[str] = "org.apache.kafka.connect.data.Time"
    SCHEMA: ClassVar[Schema]

    @staticmethod
    def builder() -> SchemaBuilder:
        return SchemaBuilder.int32().name(Time.LOGICAL_NAME).version(1)

    @staticmethod
    def from_logical(schema: Schema, value: datetime.time) -> int:
        _require_logical(schema, Time.LOGICAL_NAME, "Time")
        if not isinstance(value, datetime.time):
            raise DataException(f"Invalid type for Time, expected datetime.time but was {_type_name(value)}")
        ms = ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000
        offset = value.utcoffset()
        if offset is not None:
            ms = (ms - offset // datetime.timedelta(milliseconds=1)) % _MILLIS_PER_DAY
        return ms

    @staticmethod
    def to_logical(schema: Schema, value: int) -> datetime.time:
        _require_logical(schema, Time.LOGICAL_NAME, "Time")
        if not 0 <= value < _MILLIS_PER_DAY:
            raise DataException(
                f"Time values must be milliseconds >= 0 and < {_MILLIS_PER_DAY} since midnight, got {value}"
            )
        seconds, ms = divmod(value, 1000)
        minutes, s = divmod(seconds, 60)
        h, m = divmod(minutes, 60)
        return datetime.time(h, m, s, ms * 1000)


class Timestamp:
    """An instant: INT64 milliseconds since the epoch; Python ``datetime.datetime``.

    Produced values are aware (UTC); naive inputs are taken as UTC.
    Sub-millisecond precision is truncated.
    """

    LOGICAL_NAME: ClassVar[str] = "org.apache.kafka.connect.data.Timestamp"
    SCHEMA: ClassVar[Schema]

    @staticmethod
    def builder() -> SchemaBuilder:
        return SchemaBuilder.int64().name(Timestamp.LOGICAL_NAME).version(1)

    @staticmethod
    def from_logical(schema: Schema, value: datetime.datetime) -> int:
        _require_logical(schema, Timestamp.LOGICAL_NAME, "Timestamp")
        if not isinstance(value, datetime.datetime):
            raise DataException(
                f"Invalid type for Timestamp, expected datetime.datetime but was {type(value).__name__}"
            )
        if value.tzinfo is None or value.utcoffset() is None:
            value = value.replace(tzinfo=datetime.UTC)
        delta = value - _EPOCH
        return (delta.days * 86400 + delta.seconds) * 1000 + delta.microseconds // 1000

    @staticmethod
    def to_logical(schema: Schema, value: int) -> datetime.datetime:
        _require_logical(schema, Timestamp.LOGICAL_NAME, "Timestamp")
        try:
            return _EPOCH + datetime.timedelta(milliseconds=value)
        except OverflowError:
            raise DataException(f"Timestamp value {value} ms is outside the range of datetime") from None


Date.SCHEMA = Date.builder().build()
Time.SCHEMA = Time.builder().build()
Timestamp.SCHEMA = Timestamp.builder().build()
