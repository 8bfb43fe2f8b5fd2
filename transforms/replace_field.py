"""ReplaceField: keep, drop and rename the top-level fields of the key or value.

- ``exclude``: fields to drop; it wins over ``include``.
- ``include``: when set, only these fields are kept.
- ``renames``: ``old:new`` pairs, comma-separated (``abc:xyz,foo:bar``).

Names are matched against the original field names. With a schema the output struct
keeps the kept fields in their original order, under their new names and with their
schemas unchanged; that schema is derived once per input schema. Two fields renamed to
the same name are an error. Without a schema the map keeps its key order (Kafka's
``HashMap`` does not); when two keys end up with the same name, the later one wins.
A record whose fields all stay as they are passes through unchanged. Each output field
reads the input field it came from (Kafka looks values up through the inverted rename
map, which picks the wrong field for ``renames=a:x`` with ``a`` excluded and a field
``x`` kept).

Null keys/values (tombstones) pass through unchanged, schema included.

Kafka 3.x's deprecated ``blacklist`` and ``whitelist`` keys (removed in Kafka 4) are
still read, as fallbacks for ``exclude`` and ``include``: when both the old and the new
key are set, the new one wins. Using them logs a deprecation warning.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationInfo, field_validator

from connect.api import (
    Boolean,
    ConfigModel,
    ConnectRecord,
    DataException,
    Field,
    RecordColumns,
    Schema,
    SchemaBuilder,
    Struct,
    StructColumn,
    importance,
)
from transforms.parts import Key, PartTransformation, Value
from transforms.requirements import record_error, require_map, require_struct
from transforms.schemas import LruCache, copy_basics, derived, field_columns
from transforms.settings import NameList, check_names, replace_null_with_default

PURPOSE = "field replacement"

log = logging.getLogger(__name__)


def parse_renames(mappings: list[str]) -> dict[str, str]:
    """``old:new`` pairs as Kafka reads them (Java ``split(":")``: trailing empty parts are
    dropped, so ``a:b:`` is ``a`` → ``b``); ValueError with Kafka's message otherwise."""
    renames: dict[str, str] = {}
    for mapping in mappings:
        parts = mapping.split(":")
        while parts and not parts[-1]:
            parts.pop()
        if len(parts) != 2:
            raise ValueError(f"Invalid rename mapping: {mapping}")
        renames[parts[0]] = parts[1]
    return renames


def _deprecated(key: str, replacement: str) -> Any:
    return Field(
        None,
        alias=key,
        description=f"Deprecated. Use {replacement} instead.",
        json_schema_extra=importance("LOW"),
    )


class ReplaceFieldConfig(ConfigModel):
    exclude: NameList = Field(
        default_factory=list,
        alias="exclude",
        description="Fields to exclude. This takes precedence over the fields to include.",
        json_schema_extra=importance("MEDIUM"),
    )
    include: NameList = Field(
        default_factory=list,
        alias="include",
        description="Fields to include. If specified, only these fields will be used.",
        json_schema_extra=importance("MEDIUM"),
    )
    renames: NameList = Field(
        default_factory=list,
        alias="renames",
        description="Field rename mappings.",
        json_schema_extra=importance("MEDIUM"),
    )
    replace_null_with_default: Boolean = replace_null_with_default()
    blacklist: NameList | None = _deprecated("blacklist", "exclude")
    whitelist: NameList | None = _deprecated("whitelist", "include")

    @field_validator("exclude", "include", "blacklist", "whitelist")
    @classmethod
    def _names(cls, v: list[str] | None, info: ValidationInfo) -> list[str] | None:
        return None if v is None else check_names(str(info.field_name), v, allow_empty=True)

    @field_validator("renames")
    @classmethod
    def _pairs(cls, v: list[str]) -> list[str]:
        parse_renames(v)
        return v


class ReplaceField(PartTransformation):
    Config = ReplaceFieldConfig

    def configure(self, configs: Mapping[str, Any]) -> None:
        config = self.config = ReplaceFieldConfig.parse(configs)
        given = config.model_fields_set
        exclude, include = config.exclude, config.include
        for old, new in (("blacklist", "exclude"), ("whitelist", "include")):
            legacy = getattr(config, old)
            if legacy is None:
                continue
            if new in given:
                log.warning("ReplaceField: '%s' is deprecated and ignored because '%s' is set", old, new)
            else:
                log.warning("ReplaceField: '%s' is deprecated; use '%s' instead", old, new)
                if new == "exclude":
                    exclude = legacy
                else:
                    include = legacy
        self.exclude = frozenset(exclude)
        self.include = frozenset(include)
        self.renames = parse_renames(config.renames)
        self.replace_null = config.replace_null_with_default
        # Schema -> (output schema, the input field index of each output field); the input
        # schema itself when nothing changes.
        self._schemas: LruCache[Schema, tuple[Schema, tuple[int, ...]]] = LruCache()

    def keep(self, name: str) -> bool:
        return name not in self.exclude and (not self.include or name in self.include)

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        value = self.value_of(record)
        if value is None:
            return record
        if self.schema_of(record) is None:
            return self._schemaless(record, value)
        return self._with_schema(record, value)

    def _schemaless(self, record: ConnectRecord, value: Any) -> ConnectRecord:
        data = require_map(self, record, value, PURPOSE)
        out = self._renamed_map(data)
        return record if out is data else self.replace(record, None, out)

    def _with_schema(self, record: ConnectRecord, value: Any) -> ConnectRecord:
        struct = require_struct(self, record, value, PURPOSE)
        schema = struct.schema  # Kafka keys its cache on the struct's own schema
        updated, sources = derived(self, record, self._schemas, schema, self._derive)
        if updated is schema:
            return record
        values = struct.values(self.replace_null)
        try:
            out = Struct.from_values(updated, [values[i] for i in sources])
        except DataException as exc:
            raise record_error(self, record, str(exc)) from None
        return self.replace(record, updated, out)

    def apply_columns(self, batch: RecordColumns[ConnectRecord]) -> None:
        """``apply`` over the columns; a row that is neither a map nor a struct raises, and
        the chain runs the stage record by record, where the error names the record."""
        schemas, values = self.columns(batch)
        if isinstance(values, StructColumn):
            # Structs held column-wise: kept fields are whole columns, renamed by the schema.
            updated_schema, sources = self._schemas.get_or_compute(values.schema, self._derive)
            if updated_schema is not values.schema:
                fields = field_columns(values, self.replace_null)
                kept = StructColumn(updated_schema, [fields[i] for i in sources], len(values))
                self.set_columns(batch, [updated_schema] * len(values), kept)
            return
        cache = self._schemas
        unchecked = Struct.unchecked
        out_schemas: list[Schema | None] = []
        out_values: list[Any] = []
        last: Schema | None = None
        plan: tuple[Schema, tuple[int, ...]] | None = None
        identity: tuple[int, ...] = ()
        for schema, value in zip(schemas, values, strict=True):
            if value is None:
                out_schemas.append(schema)
                out_values.append(None)
            elif schema is None:
                if type(value) is not dict:
                    raise DataException("not a map")
                out_schemas.append(None)
                out_values.append(self._renamed_map(value))
            else:
                if type(value) is not Struct:
                    raise DataException("not a struct")
                own = value.schema
                if own is not last:
                    plan = cache.get_or_compute(own, self._derive)
                    last = own
                    identity = tuple(range(len(own.fields)))
                assert plan is not None
                updated, sources = plan
                if updated is own:
                    out_schemas.append(schema)
                    out_values.append(value)
                    continue
                row = value.values(self.replace_null)
                # Each kept value keeps its field's schema, and was checked when the struct
                # was made: nothing to check again.
                out_values.append(
                    unchecked(updated, row if sources == identity else [row[i] for i in sources])
                )
                out_schemas.append(updated)
        self.set_columns(batch, out_schemas, out_values)

    def _renamed_map(self, data: dict[Any, Any]) -> dict[Any, Any]:
        """The map with fields dropped and renamed; ``data`` itself when nothing changes."""
        renames = self.renames
        out: dict[Any, Any] = {}
        renamed = False
        for k, v in data.items():
            if self.keep(k):
                new = renames.get(k, k)
                renamed = renamed or new != k
                out[new] = v
        return data if not renamed and len(out) == len(data) else out

    def _derive(self, schema: Schema) -> tuple[Schema, tuple[int, ...]]:
        builder = copy_basics(schema, SchemaBuilder.struct())
        sources: list[int] = []
        for f in schema.fields:
            if self.keep(f.name):
                builder.field(self.renames.get(f.name, f.name), f.schema)
                sources.append(f.index)
        updated = builder.build()
        return (schema if updated == schema else updated), tuple(sources)


class ReplaceFieldKey(Key, ReplaceField):
    aliases = ("org.apache.kafka.connect.transforms.ReplaceField$Key",)


class ReplaceFieldValue(Value, ReplaceField):
    aliases = ("org.apache.kafka.connect.transforms.ReplaceField$Value",)
