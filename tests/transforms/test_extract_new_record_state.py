"""ExtractNewRecordState against Debezium's change events: creates, updates, reads, deletes,
tombstones and truncates under every delete handling mode (new and legacy keys), added
fields and headers, topic routing, records that are not envelopes, schemaless envelopes,
the schema cache and the config checks."""

from __future__ import annotations

from typing import Any

import pytest

from connect.api import (
    ConfigValidationError,
    ConnectRecord,
    DataException,
    Headers,
    Schema,
    SchemaBuilder,
    SourceRecord,
    Struct,
)
from connect.runtime.plugins import Plugins
from tests.transforms.support import configured, sink, source
from transforms import ExtractNewRecordState
from transforms.extract_new_record_state import optional_copy

TOPIC = "server.inventory.customers"

KEY = SchemaBuilder.struct().name(TOPIC + ".Key").field("id", Schema.INT32_SCHEMA).build()
ROW = (
    SchemaBuilder.struct()
    .name(TOPIC + ".Value")
    .field("id", Schema.INT32_SCHEMA)
    .field("email", Schema.OPTIONAL_STRING_SCHEMA)
    .field("dest", Schema.OPTIONAL_STRING_SCHEMA)
    .optional()
    .build()
)
SOURCE = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.postgresql.Source")
    .field("version", Schema.STRING_SCHEMA)
    .field("connector", Schema.STRING_SCHEMA)
    .field("ts_ms", Schema.INT64_SCHEMA)
    .field("db", Schema.STRING_SCHEMA)
    .field("table", Schema.STRING_SCHEMA)
    .field("lsn", Schema.OPTIONAL_INT64_SCHEMA)
    .build()
)
TRANSACTION = (
    SchemaBuilder.struct()
    .name("event.block")
    .field("id", Schema.STRING_SCHEMA)
    .field("total_order", Schema.INT64_SCHEMA)
    .field("data_collection_order", Schema.INT64_SCHEMA)
    .optional()
    .build()
)


def envelope_schema(row: Schema = ROW) -> Schema:
    return (
        SchemaBuilder.struct()
        .name(TOPIC + ".Envelope")
        .version(1)
        .field("before", row)
        .field("after", row)
        .field("source", SOURCE)
        .field("transaction", TRANSACTION)
        .field("op", Schema.STRING_SCHEMA)
        .field("ts_ms", Schema.OPTIONAL_INT64_SCHEMA)
        .build()
    )


ENVELOPE = envelope_schema()

DELETE_MODES = ["drop", "tombstone", "rewrite", "rewrite-with-tombstone", "delete-to-tombstone"]


def row(id_: int = 1, email: str | None = "ann@example.com", dest: str | None = None) -> Struct:
    return Struct(ROW).put("id", id_).put("email", email).put("dest", dest)


def event(
    op: str,
    before: Struct | None = None,
    after: Struct | None = None,
    *,
    schema: Schema = ENVELOPE,
    transaction: bool = False,
) -> Struct:
    src = (
        Struct(SOURCE)
        .put("version", "2.7.0.Final")
        .put("connector", "postgresql")
        .put("ts_ms", 1_700_000_000_000)
        .put("db", "inventory")
        .put("table", "customers")
        .put("lsn", 33_227_920)
    )
    value = (
        Struct(schema)
        .put("before", before)
        .put("after", after)
        .put("source", src)
        .put("op", op)
        .put("ts_ms", 1_700_000_000_123)
    )
    if transaction:
        block = Struct(TRANSACTION).put("id", "571:53195832").put("total_order", 1)
        value.put("transaction", block.put("data_collection_order", 1))
    return value


def change(value: Any, schema: Schema | None = ENVELOPE, **kw: Any) -> SourceRecord:
    return source(value, schema, key=Struct(KEY).put("id", 1), key_schema=KEY, topic=TOPIC, **kw)


def created(**kw: Any) -> SourceRecord:
    return change(event("c", after=row(**kw)))


def deleted(**kw: Any) -> SourceRecord:
    return change(event("d", before=row(**kw)))


def tombstone() -> SourceRecord:
    return change(None, None)


def xform(**settings: Any) -> ExtractNewRecordState:
    return configured(ExtractNewRecordState, settings)


def transform(settings: dict[str, Any], record: ConnectRecord) -> ConnectRecord | None:
    return configured(ExtractNewRecordState, settings).apply(record)


def applied(settings: dict[str, Any], record: ConnectRecord) -> ConnectRecord:
    out = transform(settings, record)
    assert out is not None
    return out


def fields(schema: Schema | None) -> list[tuple[str, Schema]]:
    assert schema is not None
    return [(f.name, f.schema) for f in schema.fields]


def names(schema: Schema | None) -> list[str]:
    return [name for name, _ in fields(schema)]


def as_dict(value: Struct) -> dict[str, Any]:
    return {f.name: value.get_without_default(f.name) for f in value.schema.fields}


# Creates, updates, reads


@pytest.mark.parametrize("op", ["c", "u", "r"])
def test_the_after_state_replaces_the_envelope(op: str) -> None:
    after = row(2, "bob@example.com")
    record = change(event(op, before=row() if op == "u" else None, after=after))
    out = applied({}, record)
    assert out.value is after
    assert out.value_schema is ROW
    assert (out.key, out.key_schema) == (record.key, KEY)
    assert (out.topic, out.timestamp) == (TOPIC, record.timestamp)
    assert isinstance(out, SourceRecord)
    assert (out.source_partition, out.source_offset) == (record.source_partition, record.source_offset)
    assert record.value_schema is ENVELOPE  # the input is left alone


def test_sink_records_keep_their_kafka_coordinates() -> None:
    record = sink(event("c", after=row()), ENVELOPE, offset=9)
    out = applied({}, record)
    assert out.value == row()
    assert out._extra() == record._extra()


# Deletes, tombstones and truncates


def test_by_default_deletes_and_tombstones_are_dropped() -> None:
    # The new key unset, the deprecated keys decide with their defaults (Debezium 2.x).
    assert transform({}, deleted()) is None
    assert transform({}, tombstone()) is None


def assert_delete(out: ConnectRecord | None, expected: str) -> None:
    if expected == "dropped":
        assert out is None
        return
    assert out is not None
    assert out.topic == TOPIC
    assert out.key == Struct(KEY).put("id", 1)
    if expected == "null value":
        assert (out.value_schema, out.value) == (ROW, None)
    elif expected == "tombstone":
        assert (out.value_schema, out.value) == (None, None)
    else:
        assert expected == "rewritten"
        assert fields(out.value_schema) == [*fields(ROW), ("__deleted", Schema.OPTIONAL_STRING_SCHEMA)]
        assert as_dict(out.value) == {"id": 1, "email": "ann@example.com", "dest": None, "__deleted": "true"}


MODE_CASES = [
    # mode, the delete event becomes, the tombstone is kept
    ("drop", "dropped", False),
    ("tombstone", "null value", False),
    ("rewrite", "rewritten", False),
    ("rewrite-with-tombstone", "rewritten", True),
    ("delete-to-tombstone", "tombstone", False),
]


@pytest.mark.parametrize(("mode", "delete", "keeps_tombstones"), MODE_CASES)
def test_delete_tombstone_handling_mode(mode: str, delete: str, keeps_tombstones: bool) -> None:
    settings = {"delete.tombstone.handling.mode": mode}
    assert_delete(transform(settings, deleted()), delete)
    record = tombstone()
    assert transform(settings, record) is (record if keeps_tombstones else None)


LEGACY_CASES = [
    # drop.tombstones, delete.handling.mode, the delete event becomes, the tombstone is kept
    ("true", "drop", "dropped", False),
    ("true", "none", "null value", False),
    ("true", "rewrite", "rewritten", False),
    ("false", "rewrite", "rewritten", True),
    # The two combinations that no delete.tombstone.handling.mode value expresses.
    ("false", "none", "null value", True),
    ("false", "drop", "dropped", True),
]


@pytest.mark.parametrize(("drop_tombstones", "legacy", "delete", "keeps_tombstones"), LEGACY_CASES)
def test_deprecated_keys_apply_when_the_new_one_is_unset(
    drop_tombstones: str, legacy: str, delete: str, keeps_tombstones: bool, caplog: pytest.LogCaptureFixture
) -> None:
    settings = {"drop.tombstones": drop_tombstones, "delete.handling.mode": legacy}
    assert_delete(transform(settings, deleted()), delete)
    record = tombstone()
    assert transform(settings, record) is (record if keeps_tombstones else None)
    assert "deprecated" in caplog.text


def test_each_deprecated_key_has_its_default() -> None:
    assert transform({"drop.tombstones": "false"}, deleted()) is None  # delete.handling.mode=drop
    record = tombstone()
    assert transform({"drop.tombstones": "false"}, record) is record
    assert transform({"delete.handling.mode": "none"}, tombstone()) is None  # drop.tombstones=true


@pytest.mark.parametrize("blank", ["", "  "])
def test_a_blank_new_key_counts_as_unset(blank: str) -> None:
    settings = {"delete.tombstone.handling.mode": blank, "delete.handling.mode": "none"}
    assert_delete(transform(settings, deleted()), "null value")


def test_the_new_key_wins_over_the_deprecated_ones(caplog: pytest.LogCaptureFixture) -> None:
    settings = {
        "delete.tombstone.handling.mode": "rewrite-with-tombstone",
        "drop.tombstones": "true",
        "delete.handling.mode": "drop",
    }
    assert_delete(transform(settings, deleted()), "rewritten")
    record = tombstone()
    assert transform(settings, record) is record
    assert "ignored" in caplog.text


def test_mode_values_are_case_insensitive() -> None:
    assert_delete(transform({"delete.tombstone.handling.mode": " Rewrite "}, deleted()), "rewritten")
    assert_delete(transform({"delete.handling.mode": "NONE"}, deleted()), "null value")


@pytest.mark.parametrize("mode", DELETE_MODES)
def test_truncates_are_dropped(mode: str) -> None:
    settings = {"delete.tombstone.handling.mode": mode}
    assert transform(settings, change(event("t"))) is None
    assert transform(settings, source({"op": "t", "before": None, "after": None, "source": {}})) is None


def test_an_event_with_neither_state_is_dropped_as_debezium_does() -> None:
    assert transform({"delete.tombstone.handling.mode": "rewrite"}, change(event("d"))) is None


@pytest.mark.parametrize("mode", ["rewrite", "rewrite-with-tombstone"])
def test_rewrite_marks_other_rows_not_deleted(mode: str) -> None:
    for op in ("c", "u", "r"):
        out = applied({"delete.tombstone.handling.mode": mode}, change(event(op, after=row(3))))
        assert fields(out.value_schema) == [*fields(ROW), ("__deleted", Schema.OPTIONAL_STRING_SCHEMA)]
        assert as_dict(out.value) == {"id": 3, "email": "ann@example.com", "dest": None, "__deleted": "false"}


def test_rewritten_rows_keep_the_row_schema_identity() -> None:
    out = applied({"delete.tombstone.handling.mode": "rewrite"}, created())
    schema = out.value_schema
    assert schema is not None
    assert (schema.name, schema.optional) == (TOPIC + ".Value", False)  # Kafka's copySchemaBasics


def test_deletes_and_creates_share_one_rewritten_schema() -> None:
    t = xform(**{"delete.tombstone.handling.mode": "rewrite"})
    created_out, deleted_out = t.apply(created()), t.apply(deleted())
    assert created_out is not None and deleted_out is not None
    assert created_out.value_schema is deleted_out.value_schema


def test_a_rewrite_uses_its_own_schema_when_before_and_after_differ() -> None:
    narrow = SchemaBuilder.struct().name("Narrow").field("id", Schema.INT32_SCHEMA).optional().build()
    schema = (
        SchemaBuilder.struct()
        .name("x.Envelope")
        .field("before", narrow)
        .field("after", ROW)
        .field("op", Schema.STRING_SCHEMA)
        .build()
    )
    value = Struct(schema).put("before", Struct(narrow).put("id", 5)).put("op", "d")
    out = applied({"delete.tombstone.handling.mode": "rewrite"}, change(value, schema))
    assert fields(out.value_schema) == [
        ("id", Schema.INT32_SCHEMA),
        ("__deleted", Schema.OPTIONAL_STRING_SCHEMA),
    ]
    assert as_dict(out.value) == {"id": 5, "__deleted": "true"}


def test_nulls_stay_null_when_a_row_is_rebuilt() -> None:
    with_default = (
        SchemaBuilder.struct()
        .name("Row")
        .field("id", Schema.INT32_SCHEMA)
        .field("status", SchemaBuilder.string().optional().default_value("NEW").build())
        .optional()
        .build()
    )
    schema = envelope_schema(with_default)
    value = event("c", after=Struct(with_default).put("id", 1), schema=schema)
    out = applied({"delete.tombstone.handling.mode": "rewrite"}, change(value, schema))
    assert out.value.get_without_default("status") is None  # Debezium copies with getWithoutDefault


# add.fields


def test_add_fields() -> None:
    settings = {"add.fields": "op,table,lsn,source.ts_ms,ts_ms"}
    out = applied(settings, created())
    assert fields(out.value_schema) == [
        *fields(ROW),
        ("__op", Schema.OPTIONAL_STRING_SCHEMA),
        ("__table", Schema.OPTIONAL_STRING_SCHEMA),
        ("__lsn", Schema.OPTIONAL_INT64_SCHEMA),
        ("__source_ts_ms", Schema.OPTIONAL_INT64_SCHEMA),
        ("__ts_ms", Schema.OPTIONAL_INT64_SCHEMA),
    ]
    assert as_dict(out.value) == {
        "id": 1,
        "email": "ann@example.com",
        "dest": None,
        "__op": "c",
        "__table": "customers",
        "__lsn": 33_227_920,
        "__source_ts_ms": 1_700_000_000_000,
        "__ts_ms": 1_700_000_000_123,
    }
    out.value.validate()


def test_add_fields_prefix_and_renames() -> None:
    settings = {"add.fields": "op:operation,source.ts_ms:event_ts,db", "add.fields.prefix": "meta_"}
    out = applied(settings, created())
    assert names(out.value_schema)[3:] == ["meta_operation", "meta_event_ts", "meta_db"]
    assert as_dict(out.value)["meta_event_ts"] == 1_700_000_000_000
    assert as_dict(applied({**settings, "add.fields.prefix": ""}, created()).value)["operation"] == "c"


def test_added_fields_keep_the_source_schema_identity() -> None:
    logical = SchemaBuilder.int64().name("io.debezium.time.Timestamp").version(1).build()
    source_schema = SchemaBuilder.struct().name("Source").field("ts", logical).build()
    schema = (
        SchemaBuilder.struct()
        .name("x.Envelope")
        .field("before", ROW)
        .field("after", ROW)
        .field("source", source_schema)
        .field("op", Schema.STRING_SCHEMA)
        .build()
    )
    value = (
        Struct(schema).put("after", row()).put("source", Struct(source_schema).put("ts", 5)).put("op", "r")
    )
    out = applied({"add.fields": "ts"}, change(value, schema))
    assert out.value_schema is not None
    added = out.value_schema.field("__ts")
    assert added is not None
    assert (added.schema.type, added.schema.name, added.schema.version) == (logical.type, logical.name, 1)
    assert added.schema.optional
    assert out.value.get("__ts") == 5


def test_a_whole_block_can_be_added() -> None:
    out = applied({"add.fields": "source", "add.headers": "transaction"}, created())
    added = out.value.get("__source")
    assert isinstance(added, Struct)
    assert added.schema == optional_copy(SOURCE)
    assert (added.schema.name, added.schema.optional) == (SOURCE.name, True)
    assert as_dict(added)["table"] == "customers"
    out.value.validate()
    assert [(h.key, h.value, h.schema) for h in out.headers] == [("__transaction", None, TRANSACTION)]


def test_transaction_fields() -> None:
    settings = {"add.fields": "id,total_order,transaction.data_collection_order"}
    out = applied(settings, change(event("c", after=row(), transaction=True)))
    assert as_dict(out.value) == {
        "id": 1,
        "email": "ann@example.com",
        "dest": None,
        "__id": "571:53195832",
        "__total_order": 1,
        "__transaction_data_collection_order": 1,
    }
    # No transaction block (a snapshot): the fields are there, null.
    out = applied(settings, created())
    assert [out.value.get(n) for n in ("__id", "__total_order")] == [None, None]


def test_fields_the_envelope_does_not_have_are_left_out() -> None:
    out = applied({"add.fields": "op,nothing,source.nope,nope.op"}, created())
    # nope.op: no block "nope", so the envelope's own op (Debezium's fallback).
    assert names(out.value_schema) == ["id", "email", "dest", "__op", "__nope_op"]
    assert as_dict(out.value)["__nope_op"] == "c"


def test_added_fields_on_rewritten_deletes() -> None:
    settings = {"delete.tombstone.handling.mode": "rewrite", "add.fields": "op,table"}
    out = applied(settings, deleted())
    assert names(out.value_schema) == [
        "id",
        "email",
        "dest",
        "__op",
        "__table",
        "__deleted",
    ]
    assert as_dict(out.value) == {
        "id": 1,
        "email": "ann@example.com",
        "dest": None,
        "__op": "d",
        "__table": "customers",
        "__deleted": "true",
    }


def test_deletes_that_become_null_get_no_fields() -> None:
    out = applied({"delete.tombstone.handling.mode": "tombstone", "add.fields": "op"}, deleted())
    assert (out.value_schema, out.value) == (ROW, None)


def test_an_added_field_that_clashes_with_a_column_is_a_data_error() -> None:
    clash = SchemaBuilder.struct().field("__op", Schema.STRING_SCHEMA).optional().build()
    schema = envelope_schema(clash)
    value = event("c", after=Struct(clash).put("__op", "x"), schema=schema)
    with pytest.raises(DataException) as err:
        transform({"add.fields": "op"}, change(value, schema))
    message = str(err.value)
    assert message.startswith(
        "ExtractNewRecordState: Cannot create field because of field name duplication __op"
    )
    assert f"topic '{TOPIC}'" in message


# add.headers


def test_add_headers() -> None:
    headers = Headers().add("trace", "abc")
    record = change(event("u", before=row(), after=row(email="new@example.com")), headers=headers)
    out = applied({"add.headers": "op,source.ts_ms,lsn"}, record)
    assert [(h.key, h.value, h.schema) for h in out.headers] == [
        ("trace", "abc", None),
        ("__op", "u", Schema.OPTIONAL_STRING_SCHEMA),
        ("__source_ts_ms", 1_700_000_000_000, Schema.OPTIONAL_INT64_SCHEMA),
        ("__lsn", 33_227_920, Schema.OPTIONAL_INT64_SCHEMA),
    ]
    assert out.value_schema is ROW  # headers only: the row is untouched
    assert [h.key for h in record.headers] == ["trace"]  # the input record is left alone


def test_add_headers_prefix_and_renames() -> None:
    out = applied({"add.headers": "op:kind,table", "add.headers.prefix": "cdc."}, created())
    assert [(h.key, h.value) for h in out.headers] == [("cdc.kind", "c"), ("cdc.table", "customers")]


@pytest.mark.parametrize("mode", ["tombstone", "delete-to-tombstone", "rewrite"])
def test_deletes_get_headers_too(mode: str) -> None:
    out = applied({"delete.tombstone.handling.mode": mode, "add.headers": "op"}, deleted())
    assert [(h.key, h.value) for h in out.headers] == [("__op", "d")]


def test_kept_tombstones_get_only_the_op_header() -> None:
    settings = {"delete.tombstone.handling.mode": "rewrite-with-tombstone", "add.headers": "table,op:kind"}
    record = tombstone()
    out = applied(settings, record)
    assert (out.key, out.value, out.value_schema) == (record.key, None, None)
    assert [(h.key, h.value, h.schema) for h in out.headers] == [("__kind", "d", Schema.STRING_SCHEMA)]
    assert not record.has_headers
    assert transform({"delete.tombstone.handling.mode": "rewrite-with-tombstone"}, record) is record


def test_fields_and_headers_together() -> None:
    out = applied({"add.fields": "op", "add.headers": "table"}, created())
    assert out.value.get("__op") == "c"
    assert [(h.key, h.value) for h in out.headers] == [("__table", "customers")]


# route.by.field


def test_route_by_field() -> None:
    settings = {"route.by.field": "dest", "delete.tombstone.handling.mode": "rewrite"}
    assert applied(settings, created(dest="customers_eu")).topic == "customers_eu"
    assert applied(settings, deleted(dest="customers_us")).topic == "customers_us"  # the before state
    assert applied(settings, created(dest=None)).topic == TOPIC  # null keeps the topic
    assert applied(settings, created(dest=" ")).topic == TOPIC  # so does blank


@pytest.mark.parametrize("mode", ["tombstone", "delete-to-tombstone"])
def test_route_by_field_for_deletes_without_a_row(mode: str) -> None:
    out = applied({"route.by.field": "dest", "delete.tombstone.handling.mode": mode}, deleted(dest="eu"))
    assert (out.topic, out.value) == ("eu", None)


def test_route_by_field_with_added_fields_and_headers() -> None:
    settings = {"route.by.field": "dest", "add.fields": "op", "add.headers": "op"}
    out = applied(settings, created(dest="eu"))
    assert (out.topic, out.value.get("__op"), out.headers.last_with_name("__op")) == (
        "eu",
        "c",
        ("__op", "c", Schema.OPTIONAL_STRING_SCHEMA),
    )


def test_route_by_a_field_that_is_not_a_string_is_a_data_error() -> None:
    with pytest.raises(DataException, match=r"^ExtractNewRecordState: Field 'id' is not of type STRING \("):
        transform({"route.by.field": "id"}, created())
    with pytest.raises(DataException, match=r"^ExtractNewRecordState: nope is not a valid field name"):
        transform({"route.by.field": "nope"}, created())


# Records that are not change events


def not_envelopes() -> list[tuple[str, SourceRecord]]:
    heartbeat = (
        SchemaBuilder.struct()
        .name("io.debezium.connector.common.Heartbeat")
        .field("ts_ms", Schema.INT64_SCHEMA)
        .build()
    )
    schema_change = (
        SchemaBuilder.struct()
        .name("io.debezium.connector.mysql.SchemaChangeValue")
        .field("databaseName", Schema.STRING_SCHEMA)
        .field("ddl", Schema.STRING_SCHEMA)
        .build()
    )
    no_op = SchemaBuilder.struct().name("x.Envelope").field("after", ROW).build()
    not_a_struct = SchemaBuilder.string().name("x.Envelope").build()
    return [
        ("heartbeat", source(Struct(heartbeat).put("ts_ms", 1), heartbeat)),
        (
            "schema change",
            source(Struct(schema_change).put("databaseName", "db").put("ddl", "x"), schema_change),
        ),
        ("envelope without op", source(Struct(no_op).put("after", row()), no_op)),
        ("string named like an envelope", source("text", not_a_struct)),
        ("plain row", source(row(), ROW)),
        ("map without op", source({"before": None, "after": {"id": 1}})),
        ("row with an op column", source({"id": 1, "op": "t"})),
        ("string", source("text")),
        ("bytes", source(b"\x00")),
    ]


@pytest.mark.parametrize(("what", "record"), not_envelopes(), ids=[w for w, _ in not_envelopes()])
def test_records_that_are_not_envelopes_pass_through(what: str, record: SourceRecord) -> None:
    settings = {"add.fields": "op", "add.headers": "op", "route.by.field": "dest"}
    assert transform({**settings, "delete.tombstone.handling.mode": "rewrite"}, record) is record


def test_an_envelope_schema_needs_before_and_after() -> None:
    schema = (
        SchemaBuilder.struct()
        .name("x.Envelope")
        .field("after", ROW)
        .field("op", Schema.STRING_SCHEMA)
        .build()
    )
    record = change(Struct(schema).put("after", row()).put("op", "c"), schema)
    with pytest.raises(DataException, match=r"^ExtractNewRecordState: Envelope schema x\.Envelope has no"):
        transform({}, record)


def test_an_envelope_schema_needs_a_struct_value() -> None:
    with pytest.raises(
        DataException,
        match=r"^ExtractNewRecordState: Only Struct objects supported for \[record state extraction\], "
        "found: dict",
    ):
        transform({}, change({"op": "c", "after": {"id": 1}}))


# Schemaless change events


def plain_event(op: str, before: dict[str, Any] | None = None, after: Any = None) -> dict[str, Any]:
    return {
        "before": before,
        "after": after,
        "source": {"db": "inventory", "table": "customers", "ts_ms": 1_700_000_000_000, "lsn": 7},
        "transaction": None,
        "op": op,
        "ts_ms": 1_700_000_000_123,
    }


@pytest.mark.parametrize("op", ["c", "u", "r"])
def test_schemaless_after_state(op: str) -> None:
    after = {"id": 1, "email": "ann@example.com"}
    out = applied({}, source(plain_event(op, after=after)))
    assert (out.value_schema, out.value) == (None, after)


@pytest.mark.parametrize(("mode", "delete", "keeps_tombstones"), MODE_CASES)
def test_schemaless_deletes(mode: str, delete: str, keeps_tombstones: bool) -> None:
    settings = {"delete.tombstone.handling.mode": mode}
    out = transform(settings, source(plain_event("d", before={"id": 1})))
    if delete == "dropped":
        assert out is None
    else:
        assert out is not None
        assert out.value_schema is None
        assert out.value == ({"id": 1, "__deleted": "true"} if delete == "rewritten" else None)
    record = source(None)
    assert transform(settings, record) is (record if keeps_tombstones else None)


def test_schemaless_add_fields_headers_and_routing() -> None:
    settings = {
        "delete.tombstone.handling.mode": "rewrite",
        "add.fields": "op,table,source.ts_ms,id",
        "add.headers": "lsn",
        "route.by.field": "dest",
    }
    value = plain_event("c", after={"id": 1, "dest": "eu"})
    out = applied(settings, source(value))
    assert out.topic == "eu"
    assert out.value == {
        "id": 1,
        "dest": "eu",
        "__op": "c",
        "__table": "customers",
        "__source_ts_ms": 1_700_000_000_000,
        "__id": None,  # transaction is null
        "__deleted": "false",
    }
    assert [(h.key, h.value, h.schema) for h in out.headers] == [("__lsn", 7, None)]
    assert value["after"] == {"id": 1, "dest": "eu"}  # the input is left alone


def test_schemaless_route_by_a_field_that_is_not_a_string_is_a_data_error() -> None:
    with pytest.raises(
        DataException, match=r"^ExtractNewRecordState: Field 'id' is not a string, found: int"
    ):
        transform({"route.by.field": "id"}, source(plain_event("c", after={"id": 1})))


def test_schemaless_state_must_be_a_map_to_add_fields() -> None:
    with pytest.raises(DataException, match=r"Only Map objects supported in absence of schema"):
        transform({"add.fields": "op"}, source(plain_event("c", after="text")))


# The schema cache


def test_the_output_schema_is_derived_once_per_envelope_schema() -> None:
    t = xform(**{"add.fields": "op,table", "delete.tombstone.handling.mode": "rewrite"})
    first = t.apply(created())
    second = t.apply(change(event("u", before=row(), after=row(2))))
    # An equal envelope schema built separately is the same cache entry.
    twin = envelope_schema()
    assert twin is not ENVELOPE
    third = t.apply(change(event("c", after=row(3), schema=twin), twin))
    assert first is not None and second is not None and third is not None
    assert first.value_schema is second.value_schema is third.value_schema


def test_a_different_envelope_schema_gets_its_own_output_schema() -> None:
    t = xform(**{"add.fields": "op"})
    other_row = SchemaBuilder.struct().name("Other").field("id", Schema.INT32_SCHEMA).optional().build()
    other = envelope_schema(other_row)
    first = t.apply(created())
    second = t.apply(change(event("c", after=Struct(other_row).put("id", 1), schema=other), other))
    assert first is not None and second is not None
    assert fields(second.value_schema) == [
        ("id", Schema.INT32_SCHEMA),
        ("__op", Schema.OPTIONAL_STRING_SCHEMA),
    ]
    assert first.value_schema != second.value_schema
    third = t.apply(created())
    assert third is not None and third.value_schema is first.value_schema


# Config


def issues(props: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (i.key, i.message) for i in ExtractNewRecordState.Config.issues(props, prefix="transforms.unwrap.")
    ]


def test_defaults() -> None:
    config = xform().config
    assert config.originals() == {}
    assert ExtractNewRecordState.Config.issues({}) == []
    t = xform()
    assert (t.handling.on_delete.value, t.handling.keep_tombstones) == ("drop", False)
    assert (t.fields, t.headers, t.route_by_field) == ((), (), None)


@pytest.mark.parametrize(
    ("props", "key", "message"),
    [
        (
            {"delete.tombstone.handling.mode": "delete.to.tombstone"},
            "delete.tombstone.handling.mode",
            "Invalid value delete.to.tombstone for configuration "
            "transforms.unwrap.delete.tombstone.handling.mode: "
            "String must be one of (case insensitive): drop, tombstone, rewrite, rewrite-with-tombstone, "
            "delete-to-tombstone",
        ),
        (
            {"delete.handling.mode": "keep"},
            "delete.handling.mode",
            "Invalid value keep for configuration transforms.unwrap.delete.handling.mode: "
            "String must be one of (case insensitive): drop, rewrite, none",
        ),
        (
            {"drop.tombstones": "yes"},
            "drop.tombstones",
            "Invalid value yes for configuration transforms.unwrap.drop.tombstones: "
            "Expected value to be either true or false",
        ),
        (
            {"add.fields": "op,,table"},
            "add.fields",
            "Invalid value op,,table for configuration transforms.unwrap.add.fields: "
            "Configuration 'add.fields' values must not be empty.",
        ),
        (
            {"add.headers": "op,op"},
            "add.headers",
            "Invalid value op,op for configuration transforms.unwrap.add.headers: "
            "Configuration 'add.headers' values must not be duplicated.",
        ),
        (
            {"add.fields": "source.ts_ms,source_ts_ms"},
            "add.fields",
            "Invalid value source.ts_ms,source_ts_ms for configuration transforms.unwrap.add.fields: "
            "'source.ts_ms' and 'source_ts_ms' would both be added as '<prefix>source_ts_ms'",
        ),
    ],
)
def test_config_errors_name_the_key(props: dict[str, Any], key: str, message: str) -> None:
    assert issues(props) == [("transforms.unwrap." + key, message)]
    with pytest.raises(ConfigValidationError) as err:
        configured(ExtractNewRecordState, props)
    assert [i.key for i in err.value.issues] == [key]


@pytest.mark.parametrize("spec", ["a.b.c", ".op", "source.", "op:", "op:a:b", ":x"])
def test_malformed_field_references_are_refused(spec: str) -> None:
    for key in ("add.fields", "add.headers"):
        found = issues({key: spec})
        assert [k for k, _ in found] == ["transforms.unwrap." + key]
        assert f"Invalid field reference '{spec}': expected [struct.]field[:name]" in found[0][1]


def test_list_items_are_trimmed() -> None:
    out = applied({"add.fields": " op , source.table "}, created())
    assert names(out.value_schema)[3:] == ["__op", "__source_table"]


def test_registered_under_the_debezium_class_name() -> None:
    assert ExtractNewRecordState.aliases == ("io.debezium.transforms.ExtractNewRecordState",)
    t = Plugins().new_transformation(
        "io.debezium.transforms.ExtractNewRecordState", {"delete.tombstone.handling.mode": "rewrite"}
    )
    assert isinstance(t, ExtractNewRecordState)
    out = t.apply(deleted())
    assert out is not None and out.value.get("__deleted") == "true"
