"""ExtractNewRecordState: Debezium's event flattening SMT; a change event becomes the row it describes.

A Debezium change event's value is an envelope ``{before, after, source, op, ts_ms,
transaction}`` (with a schema named ``<prefix>.Envelope``). This transformation replaces
the value with the ``after`` state, the plain row, so that sinks see
``{"id": 7, "email": "ann@example.com"}``. Schemaless envelopes (a map with ``op``,
``before`` and ``after`` keys) are flattened the same way, which Debezium itself does not
do. The key, the topic (unless ``route.by.field`` is set) and the timestamp stay as they
are.

Deletes and tombstones (Debezium follows each delete event with a record whose value is
null) are handled by ``delete.tombstone.handling.mode``:

==========================  ====================================  =================
mode                        delete event becomes                  tombstone
==========================  ====================================  =================
``drop``                    dropped                               dropped
``tombstone``               a null value (the ``after`` schema    dropped
                            kept, as Debezium does)
``rewrite``                 the ``before`` state plus             dropped
                            ``__deleted: "true"``
``rewrite-with-tombstone``  as ``rewrite``                        kept
``delete-to-tombstone``     a Kafka tombstone (null value, null   dropped
                            value schema)
==========================  ====================================  =================

In the rewrite modes every other row gets ``__deleted: "false"``. When
``delete.tombstone.handling.mode`` is not set, the two keys Debezium deprecated in 2.5
(and removed in 3.2) decide, with their defaults: ``drop.tombstones`` (true) and
``delete.handling.mode`` (``drop``; or ``none``, ``rewrite``). So a config that sets
neither drops deletes and tombstones, as Debezium 2.5 to 3.1 do. Two legacy combinations
have no new-style mode and keep their old meaning: ``drop.tombstones=false`` with
``none`` (the delete becomes a null value and the tombstone is kept as well) and with
``drop`` (deletes dropped, tombstones kept).

``add.fields=op,table,lsn,source.ts_ms`` copies envelope fields into the row as
``__op``, ``__table``, ``__lsn`` and ``__source_ts_ms``: ``op``, ``ts_ms``, ``ts_us``
and ``ts_ns`` are read from the envelope, ``id``, ``total_order`` and
``data_collection_order`` from its ``transaction`` block, any other name from
``source``; ``struct.field`` names the block, ``field:name`` renames the output
(``source.ts_ms:event_ts`` gives ``__event_ts``), and ``add.fields.prefix`` replaces the
``__``. A field the envelope's schema does not have is left out, as in Debezium. Each
added field has the source field's schema made optional. ``add.headers`` and
``add.headers.prefix`` do the same for headers; a kept tombstone gets only the ``op``
header, with the value ``"d"``.

``route.by.field=dest`` sends the record to the topic named by the row's ``dest`` field
(the ``before`` state's for deletes); a null or blank value keeps the topic.

Truncate events (``op`` is ``"t"``, or neither state is set) are dropped. Records that
are not envelopes (heartbeats, schema change events, a schema without an ``op`` field,
a map without the ``op``, ``before`` and ``after`` keys, any other value) pass through
unchanged. With a schema, the
output schema is derived once per envelope schema and reused; when nothing is added the
row is the ``after`` struct itself, with its own schema.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from pydantic import field_validator

from connect.api import (
    Boolean,
    ConfigModel,
    ConnectRecord,
    DataException,
    Field,
    Headers,
    Schema,
    SchemaBuilder,
    Struct,
    Transformation,
    Type,
    importance,
)
from transforms.requirements import record_error, require_map, require_struct, type_name
from transforms.schemas import LruCache, copy_basics, derived
from transforms.settings import NameList, check_names

log = logging.getLogger(__name__)

PURPOSE = "source field insertion"
ENVELOPE_SUFFIX = ".Envelope"
DELETED_FIELD = "__deleted"

# Debezium's FieldReference.determineStruct: where an unqualified name is read from.
_TOP_LEVEL = frozenset({"op", "ts_ms", "ts_us", "ts_ns"})
_TRANSACTION = frozenset({"id", "total_order", "data_collection_order"})
# A map is taken for an envelope only when it has all three: a row that merely has an "op"
# column must not be mistaken for one (and dropped as a truncate).
_SCHEMALESS_ENVELOPE = frozenset({"op", "before", "after"})

Mode = Literal["drop", "tombstone", "rewrite", "rewrite-with-tombstone", "delete-to-tombstone"]
LegacyMode = Literal["drop", "rewrite", "none"]
_MODES: tuple[str, ...] = get_args(Mode)
_LEGACY_MODES: tuple[str, ...] = get_args(LegacyMode)

_REFERENCE_DOC = (
    "Names are read from the envelope (op, ts_ms, ts_us, ts_ns), its transaction block (id, total_order, "
    "data_collection_order) or else its source block; 'struct.field' names the block and 'field:name' "
    "renames the output. Example: 'op,table,source.ts_ms' adds __op, __table and __source_ts_ms."
)


def _choice(value: Any, choices: tuple[str, ...]) -> Any:
    """A Debezium enum setting: trimmed, case-insensitive; ValueError listing the choices."""
    if isinstance(value, str) and value.strip().lower() in choices:
        return value.strip().lower()
    raise ValueError("String must be one of (case insensitive): " + ", ".join(choices))


def parse_reference(spec: str) -> tuple[str | None, str, str]:
    """``[struct.]field[:name]`` as (block, field, output name without prefix); ValueError else."""
    path, colon, rename = spec.partition(":")
    block, dot, field = path.partition(".")
    if not dot:
        block, field = "", path
    if not field or (dot and not block) or "." in field or (colon and (not rename or ":" in rename)):
        raise ValueError(f"Invalid field reference '{spec}': expected [struct.]field[:name]")
    if not dot:
        struct = None if field in _TOP_LEVEL else "transaction" if field in _TRANSACTION else "source"
        return struct, field, rename or field
    return block, field, rename or f"{block}_{field}"


def _references(key: str, specs: list[str]) -> list[str]:
    check_names(key, specs, allow_empty=True)
    seen: dict[str, str] = {}
    for spec in specs:
        name = parse_reference(spec)[2]
        if name in seen:
            raise ValueError(f"'{seen[name]}' and '{spec}' would both be added as '<prefix>{name}'")
        seen[name] = spec
    return specs


class ExtractNewRecordStateConfig(ConfigModel):
    delete_tombstone_handling_mode: Mode | None = Field(
        None,
        alias="delete.tombstone.handling.mode",
        description="What happens to delete events and to the tombstones that follow them: drop (both are "
        "removed), tombstone (a delete becomes a record with a null value; tombstones are removed), rewrite "
        "(a delete becomes its before state with __deleted=true, other rows get __deleted=false; tombstones "
        "are removed), rewrite-with-tombstone (rewrite, tombstones kept), delete-to-tombstone (a delete "
        "becomes a Kafka tombstone with a null value schema; tombstones are removed). When unset, the "
        "deprecated drop.tombstones and delete.handling.mode decide.",
        json_schema_extra=importance("MEDIUM", width="MEDIUM"),
    )
    drop_tombstones: Boolean = Field(
        True,
        alias="drop.tombstones",
        description="Deprecated, use delete.tombstone.handling.mode. Whether tombstone records are removed; "
        "only read when delete.tombstone.handling.mode is unset.",
        json_schema_extra=importance("LOW", width="SHORT"),
    )
    delete_handling_mode: LegacyMode = Field(
        "drop",
        alias="delete.handling.mode",
        description="Deprecated, use delete.tombstone.handling.mode. What happens to delete events: drop "
        "(removed), none (a record with a null value), rewrite (the before state with __deleted=true); only "
        "read when delete.tombstone.handling.mode is unset.",
        json_schema_extra=importance("MEDIUM", width="MEDIUM"),
    )
    route_by_field: str = Field(
        "",
        alias="route.by.field",
        description="A row field whose value names the topic to send the record to (the before state's "
        "for deletes). Empty: the topic is kept.",
        json_schema_extra=importance("LOW", width="LONG"),
    )
    add_fields_prefix: str = Field(
        "__",
        alias="add.fields.prefix",
        description="Prefix of the fields add.fields adds.",
        json_schema_extra=importance("LOW", width="SHORT"),
    )
    add_fields: NameList = Field(
        default_factory=list,
        alias="add.fields",
        description="Envelope fields to add to the row. " + _REFERENCE_DOC,
        json_schema_extra=importance("LOW", width="LONG"),
    )
    add_headers_prefix: str = Field(
        "__",
        alias="add.headers.prefix",
        description="Prefix of the headers add.headers adds.",
        json_schema_extra=importance("LOW", width="SHORT"),
    )
    add_headers: NameList = Field(
        default_factory=list,
        alias="add.headers",
        description="Envelope fields to add as headers. " + _REFERENCE_DOC,
        json_schema_extra=importance("LOW", width="LONG"),
    )

    @field_validator("delete_tombstone_handling_mode", mode="before")
    @classmethod
    def _mode(cls, v: Any) -> Any:
        if v is None or (isinstance(v, str) and not v.strip()):
            return None  # blank means unset, as in Debezium
        return _choice(v, _MODES)

    @field_validator("delete_handling_mode", mode="before")
    @classmethod
    def _legacy_mode(cls, v: Any) -> Any:
        return _choice(v, _LEGACY_MODES)

    @field_validator("add_fields")
    @classmethod
    def _fields(cls, v: list[str]) -> list[str]:
        return _references("add.fields", v)

    @field_validator("add_headers")
    @classmethod
    def _headers(cls, v: list[str]) -> list[str]:
        return _references("add.headers", v)


class OnDelete(enum.Enum):
    DROP = "drop"
    NULL_VALUE = "null value"  # value null, the after field's schema kept
    REWRITE = "rewrite"  # the before state plus __deleted=true
    TOMBSTONE = "tombstone"  # value and value schema null


@dataclass(frozen=True, slots=True)
class DeleteHandling:
    """What becomes of a delete event, and whether tombstones are kept."""

    on_delete: OnDelete
    keep_tombstones: bool

    @staticmethod
    def of(config: ExtractNewRecordStateConfig) -> DeleteHandling:
        mode = config.delete_tombstone_handling_mode
        if mode == "drop":
            return DeleteHandling(OnDelete.DROP, False)
        if mode == "tombstone":
            return DeleteHandling(OnDelete.NULL_VALUE, False)
        if mode == "rewrite":
            return DeleteHandling(OnDelete.REWRITE, False)
        if mode == "rewrite-with-tombstone":
            return DeleteHandling(OnDelete.REWRITE, True)
        if mode == "delete-to-tombstone":
            return DeleteHandling(OnDelete.TOMBSTONE, False)
        legacy = {"drop": OnDelete.DROP, "rewrite": OnDelete.REWRITE, "none": OnDelete.NULL_VALUE}
        return DeleteHandling(legacy[config.delete_handling_mode], not config.drop_tombstones)


@dataclass(frozen=True, slots=True)
class Reference:
    """An envelope field to add: block (None: the envelope itself), field, output name."""

    struct: str | None
    field: str
    name: str

    @staticmethod
    def parse(spec: str, prefix: str) -> Reference:
        struct, field, name = parse_reference(spec)
        return Reference(struct, field, prefix + name)


@dataclass(frozen=True, slots=True)
class Located:
    """A reference resolved against an envelope schema: the envelope field's position, the
    field inside it (None: that value itself) and the schema the output gets."""

    name: str
    position: int
    inner: str | None
    schema: Schema


@dataclass(frozen=True, slots=True)
class Plan:
    """What one envelope schema needs, worked out once."""

    op: int
    before: int
    after: int
    after_schema: Schema  # the after field's own schema (a delete's null value keeps it)
    created: Schema  # output schema of a create/update/read
    deleted: Schema  # output schema of a rewritten delete
    fields: tuple[Located, ...]
    headers: tuple[Located, ...]


def optional_copy(schema: Schema) -> Schema:
    """``schema`` as an optional schema without a default (Debezium types added fields so)."""
    if schema.optional and schema.default_value is None:
        return schema
    t = schema.type
    if t is Type.STRUCT:
        builder = SchemaBuilder.struct()
        for f in schema.fields:
            builder.field(f.name, f.schema)
    elif t is Type.ARRAY:
        assert schema.value_schema is not None
        builder = SchemaBuilder.array(schema.value_schema)
    elif t is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        builder = SchemaBuilder.map(schema.key_schema, schema.value_schema)
    else:
        builder = SchemaBuilder.type(t)
    return copy_basics(schema, builder).optional().build()


def is_envelope(schema: Schema) -> bool:
    """Debezium's test (a schema named ``*.Envelope``), plus: it is a struct with an ``op``."""
    name = schema.name
    return (
        name is not None
        and name.endswith(ENVELOPE_SUFFIX)
        and schema.type is Type.STRUCT
        and schema.field("op") is not None
    )


class ExtractNewRecordState(Transformation[ConnectRecord]):
    """Debezium's ``ExtractNewRecordState``: replaces a change event with its ``after`` row.

    Configure it as in Debezium (``transforms.unwrap.type=io.debezium.transforms.ExtractNewRecordState``);
    see the module documentation for the keys."""

    Config = ExtractNewRecordStateConfig
    aliases = ("io.debezium.transforms.ExtractNewRecordState",)

    def configure(self, configs: Mapping[str, Any]) -> None:
        config = self.config = ExtractNewRecordStateConfig.parse(configs)
        given = config.model_fields_set
        legacy = {"drop_tombstones", "delete_handling_mode"} & given
        if legacy and config.delete_tombstone_handling_mode is not None:
            log.warning(
                "ExtractNewRecordState: drop.tombstones and delete.handling.mode are ignored because "
                "delete.tombstone.handling.mode is set"
            )
        elif legacy:
            log.warning(
                "ExtractNewRecordState: drop.tombstones and delete.handling.mode are deprecated; "
                "use delete.tombstone.handling.mode"
            )
        self.handling = DeleteHandling.of(config)
        self.rewrite = self.handling.on_delete is OnDelete.REWRITE
        self.fields = tuple(Reference.parse(s, config.add_fields_prefix) for s in config.add_fields)
        self.headers = tuple(Reference.parse(s, config.add_headers_prefix) for s in config.add_headers)
        # A kept tombstone has no envelope to read: it gets only the op header (Debezium's rule).
        self.tombstone_headers = tuple(r.name for r in self.headers if r.field == "op")
        self.route_by_field = config.route_by_field or None
        self._plans: LruCache[Schema, Plan] = LruCache()

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        value = record.value
        if value is None:
            return self._tombstone(record)
        schema = record.value_schema
        if schema is None:
            if isinstance(value, dict) and value.keys() >= _SCHEMALESS_ENVELOPE:
                return self._schemaless(record, value)
            return record
        if not is_envelope(schema):
            return record
        return self._with_schema(record, require_struct(self, record, value, "record state extraction"))

    def _tombstone(self, record: ConnectRecord) -> ConnectRecord | None:
        if not self.handling.keep_tombstones:
            return None
        if not self.tombstone_headers:
            return record
        headers = record.headers.copy()
        for name in self.tombstone_headers:
            headers.add(name, "d", Schema.STRING_SCHEMA)
        return record.new_record(headers=headers)

    # With a schema

    def _with_schema(self, record: ConnectRecord, envelope: Struct) -> ConnectRecord | None:
        plan = derived(self, record, self._plans, envelope.schema, self._plan)
        values = envelope.values(False)
        before, after = values[plan.before], values[plan.after]
        if values[plan.op] == "t" or (before is None and after is None):
            return None  # truncate
        if after is None and self.handling.on_delete is OnDelete.DROP:
            return None
        headers = None
        if plan.headers:
            headers = record.headers.copy()
            for located in plan.headers:
                headers.add(located.name, self._read(located, values), located.schema)
        row_schema: Schema | None
        try:
            if after is not None:
                topic = self._route(after)
                row_schema, row = self._row(plan.created, after, plan, values, "false")
            else:
                topic = self._route(before)
                on_delete = self.handling.on_delete
                if on_delete is OnDelete.REWRITE:
                    row_schema, row = self._row(plan.deleted, before, plan, values, "true")
                elif on_delete is OnDelete.NULL_VALUE:
                    row_schema, row = plan.after_schema, None
                else:
                    row_schema = row = None
        except DataException as exc:
            raise record_error(self, record, str(exc)) from None
        return self._out(record, topic, row_schema, row, headers)

    def _row(
        self, schema: Schema, state: Any, plan: Plan, envelope: list[Any], deleted: str
    ) -> tuple[Schema, Any]:
        if not (plan.fields or self.rewrite) or not isinstance(state, Struct):
            return schema, state  # nothing added: the state itself, with the field's schema
        values = state.values(False)
        values.extend(self._read(located, envelope) for located in plan.fields)
        if self.rewrite:
            values.append(deleted)
        return schema, Struct.from_values(schema, values)

    @staticmethod
    def _read(located: Located, envelope: list[Any]) -> Any:
        value = envelope[located.position]
        if located.inner is not None and value is not None:
            assert isinstance(value, Struct)
            value = value.get_without_default(located.inner)
        if isinstance(value, Struct) and value.schema is not located.schema:
            # A struct (add.fields=source) moves to the optional copy of its schema.
            value = Struct.from_values(located.schema, value.values(False))
        return value

    def _plan(self, envelope: Schema) -> Plan:
        op, before, after = envelope.field("op"), envelope.field("before"), envelope.field("after")
        assert op is not None  # is_envelope
        if before is None or after is None:
            raise DataException(f"Envelope schema {envelope.name} has no 'before' or no 'after' field")
        fields = tuple(f for f in (self._locate(envelope, r) for r in self.fields) if f is not None)
        headers = tuple(h for h in (self._locate(envelope, r) for r in self.headers) if h is not None)
        created = self._state_schema(after.schema, fields)
        if not self.rewrite:
            deleted = before.schema  # a delete is never rebuilt
        elif before.schema == after.schema:
            deleted = created
        else:
            deleted = self._state_schema(before.schema, fields)
        return Plan(op.index, before.index, after.index, after.schema, created, deleted, fields, headers)

    @staticmethod
    def _locate(envelope: Schema, reference: Reference) -> Located | None:
        """Where ``reference`` is in ``envelope``: its block, else the envelope itself (a field
        another SMT put there, Debezium's fallback); None when neither has it."""
        if reference.struct is not None:
            block = envelope.field(reference.struct)
            if block is not None and block.schema.type is Type.STRUCT:
                inner = block.schema.field(reference.field)
                if inner is not None:
                    return Located(reference.name, block.index, inner.name, optional_copy(inner.schema))
        top = envelope.field(reference.field)
        if top is None:
            return None
        return Located(reference.name, top.index, None, optional_copy(top.schema))

    def _state_schema(self, state: Schema, fields: tuple[Located, ...]) -> Schema:
        if not fields and not self.rewrite:
            return state
        if state.type is not Type.STRUCT:
            raise DataException(f"Only Struct objects supported for [{PURPOSE}], found: {state.type.name}")
        builder = copy_basics(state, SchemaBuilder.struct())
        for f in state.fields:
            builder.field(f.name, f.schema)
        for located in fields:
            builder.field(located.name, located.schema)
        if self.rewrite:
            builder.field(DELETED_FIELD, Schema.OPTIONAL_STRING_SCHEMA)
        return builder.build()

    # Without a schema

    def _schemaless(self, record: ConnectRecord, envelope: dict[Any, Any]) -> ConnectRecord | None:
        before, after = envelope.get("before"), envelope.get("after")
        if envelope.get("op") == "t" or (before is None and after is None):
            return None  # truncate
        if after is None and self.handling.on_delete is OnDelete.DROP:
            return None
        headers = None
        if self.headers:
            headers = record.headers.copy()
            for reference in self.headers:
                headers.add(reference.name, self._lookup(reference, envelope), None)
        try:
            if after is not None:
                topic = self._route(after)
                row = self._map_row(record, after, envelope, "false")
            else:
                topic = self._route(before)
                rewrite = self.handling.on_delete is OnDelete.REWRITE
                row = self._map_row(record, before, envelope, "true") if rewrite else None
        except DataException as exc:
            raise record_error(self, record, str(exc)) from None
        return self._out(record, topic, None, row, headers)

    def _map_row(self, record: ConnectRecord, state: Any, envelope: dict[Any, Any], deleted: str) -> Any:
        if not self.fields and not self.rewrite:
            return state
        row = dict(require_map(self, record, state, PURPOSE))
        for reference in self.fields:
            row[reference.name] = self._lookup(reference, envelope)
        if self.rewrite:
            row[DELETED_FIELD] = deleted
        return row

    @staticmethod
    def _lookup(reference: Reference, envelope: dict[Any, Any]) -> Any:
        """A schemaless envelope's field, by the rules of ``_locate``; null when missing."""
        if reference.struct is not None:
            block = envelope.get(reference.struct)
            if isinstance(block, dict) and reference.field in block:
                return block[reference.field]
            if reference.struct in envelope and not isinstance(block, dict):
                return None  # the block is there but null (no transaction while snapshotting)
        return envelope.get(reference.field)

    # Both

    def _route(self, state: Any) -> str | None:
        """The topic ``route.by.field`` names in ``state``, or None to keep the record's."""
        name = self.route_by_field
        if name is None:
            return None
        if isinstance(state, Struct):
            field = state.schema.field(name)
            if field is None:
                raise DataException(f"{name} is not a valid field name of {state.schema!r}")
            if field.schema.type is not Type.STRING:
                raise DataException(f"Field '{name}' is not of type STRING")
            topic = state.get(name)
        elif isinstance(state, dict):
            topic = state.get(name)
            if topic is not None and not isinstance(topic, str):
                raise DataException(f"Field '{name}' is not a string, found: {type_name(topic)}")
        else:
            raise DataException(
                f"Only Struct or Map objects supported for [topic routing], found: {type_name(state)}"
            )
        return topic if isinstance(topic, str) and topic.strip() else None

    @staticmethod
    def _out(
        record: ConnectRecord, topic: str | None, schema: Schema | None, value: Any, headers: Headers | None
    ) -> ConnectRecord:
        if topic is None and headers is None:
            return record.with_value(schema, value)
        topic = record.topic if topic is None else topic
        if headers is None:
            return record.new_record(topic=topic, value_schema=schema, value=value)
        return record.new_record(topic=topic, value_schema=schema, value=value, headers=headers)
