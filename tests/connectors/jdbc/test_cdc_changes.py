"""ChangeStream: decoded pgoutput messages to Debezium records (pure: hand-built messages and
table models, a fixed clock)."""

from __future__ import annotations

from typing import Any

import pytest

from connect.api import DataException, SourceRecord, Struct
from connectors.jdbc.cdc.catalog import ColumnInfo, TableName
from connectors.jdbc.cdc.changes import ChangeStream
from connectors.jdbc.cdc.events import EventBuilder
from connectors.jdbc.cdc.filters import Filters
from connectors.jdbc.cdc.offsets import StreamPosition
from connectors.jdbc.cdc.pgoutput import (
    UNCHANGED_TOAST,
    Begin,
    Commit,
    Delete,
    Insert,
    Message,
    Relation,
    RelationColumn,
    Truncate,
    Update,
)
from connectors.jdbc.cdc.table_model import TableModel, build_table_model
from connectors.jdbc.cdc.values import PgType, ValueSettings

INT4, TEXT = PgType(23, "int4"), PgType(25, "text")
ITEMS, NOTES = 100, 200
NOW_US = 1_700_000_000_123_456


def relation(relation_id: int, name: str, identity: str = "d", extra: tuple[str, ...] = ()) -> Relation:
    columns = [RelationColumn(True, "id", 23, -1), RelationColumn(False, "name", 25, -1)]
    columns += [RelationColumn(False, c, 25, -1) for c in extra]
    return Relation(relation_id, "public", name, identity, tuple(columns))


def describe_with(
    keyless: set[str] | None = None, captured: set[str] | None = None, filters: Filters | None = None
) -> Any:
    def describe(rel: Relation) -> TableModel | None:
        if captured is not None and rel.name not in captured:
            return None
        columns = [
            ColumnInfo(c.name, INT4 if c.type_oid == 23 else TEXT, c.type_modifier, c.name in ("id", "name"))
            for c in rel.columns
        ]
        keys = () if keyless and rel.name in keyless else ("id",)
        return build_table_model(
            "srv",
            TableName(rel.namespace, rel.name),
            columns,
            keys,
            filters or Filters(),
            ValueSettings(),
            rel.replica_identity,
        )

    return describe


def stream(**kw: Any) -> ChangeStream:
    events = EventBuilder("srv", "shop", "1.0.0", lambda: NOW_US)
    return ChangeStream(events, kw.pop("describe", describe_with()), **kw)


def feed(changes: ChangeStream, *messages: tuple[Message, int]) -> list[SourceRecord]:
    out: list[SourceRecord] = []
    for message, lsn in messages:
        out.extend(changes.handle(message, lsn))
    return out


def txn(commit_lsn: int, *changes: tuple[Message, int], xid: int = 700) -> list[tuple[Message, int]]:
    return [
        (Begin(commit_lsn, 1_000_000, xid), commit_lsn - 100),
        *changes,
        (Commit(0, commit_lsn, commit_lsn + 40, 1_000_000), commit_lsn + 40),
    ]


def fields(struct: Struct | None) -> dict[str, Any] | None:
    return None if struct is None else {f.name: struct.get(f.name) for f in struct.schema.fields}


def brief(record: SourceRecord) -> tuple[Any, ...]:
    if record.value is None:
        return ("tombstone", fields(record.key))
    v = record.value
    return (v.get("op"), fields(record.key), fields(v.get("before")), fields(v.get("after")))


def test_insert_update_delete_with_debezium_source_offsets_and_tombstone() -> None:
    changes = stream()
    records = feed(
        changes,
        (relation(ITEMS, "items"), 0),
        *txn(
            1000,
            (Insert(ITEMS, ("1", "pen")), 910),
            (Update(ITEMS, None, False, ("1", "ink")), 920),
            (Delete(ITEMS, ("1", None), True), 930),
        ),
    )
    assert [brief(r) for r in records] == [
        ("c", {"id": 1}, None, {"id": 1, "name": "pen"}),
        ("u", {"id": 1}, None, {"id": 1, "name": "ink"}),
        # Key-only old tuple: the other required fields hold their type's zero, as in Debezium.
        ("d", {"id": 1}, {"id": 1, "name": ""}, None),
        ("tombstone", {"id": 1}),
    ]
    first = records[0]
    assert first.topic == "srv.public.items"
    assert first.source_partition == {"server": "srv"}
    assert first.source_offset == {
        "lsn": 910,
        "lsn_proc": 910,
        "lsn_commit": 1000,
        "txId": 700,
        "ts_usec": 1_000_000,
        "event": 0,
        "event_part": 0,
    }
    assert records[3].source_offset is not None and records[3].source_offset["event_part"] == 1
    source = fields(first.value.get("source"))
    assert source == {
        "version": "1.0.0",
        "connector": "postgresql",
        "name": "srv",
        "ts_ms": 1000,
        "snapshot": "false",
        "db": "shop",
        "sequence": '[null,"910"]',
        "ts_us": 1_000_000,
        "ts_ns": 1_000_000_000,
        "schema": "public",
        "table": "items",
        "txId": 700,
        "lsn": 910,
        "xmin": None,
    }
    assert first.value.get("ts_ms") == NOW_US // 1000 and first.value.get("transaction") is None
    assert first.key_schema is not None and first.key_schema.name == "srv.public.items.Key"
    assert first.value_schema is not None and first.value_schema.name == "srv.public.items.Envelope"
    assert first.value_schema.version == 1


def test_sequence_carries_the_previous_commit() -> None:
    changes = stream()
    records = feed(
        changes,
        (relation(ITEMS, "items"), 0),
        *txn(1000, (Insert(ITEMS, ("1", "a")), 910)),
        *txn(2000, (Insert(ITEMS, ("2", "b")), 1910)),
    )
    assert [r.value.get("source").get("sequence") for r in records] == ['[null,"910"]', '["1000","1910"]']


def test_full_replica_identity_gives_whole_before_and_fills_unchanged_toast() -> None:
    changes = stream()
    records = feed(
        changes,
        (relation(NOTES, "notes", "f", extra=("body",)), 0),
        *txn(
            1000,
            (Update(NOTES, ("1", "a", "long text"), False, ("1", "b", UNCHANGED_TOAST)), 910),
            (Delete(NOTES, ("1", "b", "long text"), False), 920),
        ),
        *txn(2000, (Update(NOTES, None, False, ("1", "c", UNCHANGED_TOAST)), 1910)),
    )
    assert [brief(r) for r in records] == [
        (
            "u",
            {"id": 1},
            {"id": 1, "name": "a", "body": "long text"},
            {"id": 1, "name": "b", "body": "long text"},
        ),
        ("d", {"id": 1}, {"id": 1, "name": "b", "body": "long text"}, None),
        ("tombstone", {"id": 1}),
        # No old row to take it from: Debezium's placeholder.
        ("u", {"id": 1}, None, {"id": 1, "name": "c", "body": "__debezium_unavailable_value"}),
    ]


def test_primary_key_change_is_delete_tombstone_create_with_key_headers() -> None:
    changes = stream()
    records = feed(
        changes,
        (relation(ITEMS, "items"), 0),
        *txn(1000, (Update(ITEMS, ("1", None), True, ("2", "pen")), 910)),
    )
    assert [brief(r) for r in records] == [
        ("d", {"id": 1}, {"id": 1, "name": ""}, None),
        ("tombstone", {"id": 1}),
        ("c", {"id": 2}, None, {"id": 2, "name": "pen"}),
    ]
    new_key = records[0].headers.last_with_name("__debezium.newkey")
    old_key = records[2].headers.last_with_name("__debezium.oldkey")
    assert new_key is not None and fields(new_key.value) == {"id": 2}
    assert old_key is not None and fields(old_key.value) == {"id": 1}
    assert [r.source_offset["event_part"] for r in records if r.source_offset] == [0, 1, 2]


def test_truncate_is_skipped_by_default_and_one_event_per_captured_table_otherwise() -> None:
    messages = [
        (relation(ITEMS, "items"), 0),
        (relation(NOTES, "notes"), 0),
        (relation(300, "other"), 0),
        *txn(1000, (Truncate((ITEMS, 300, NOTES), False, False), 910)),
    ]
    assert feed(stream(describe=describe_with(captured={"items", "notes"})), *messages) == []
    records = feed(
        stream(describe=describe_with(captured={"items", "notes"}), skipped=frozenset()), *messages
    )
    assert [
        (r.topic, r.key, r.value.get("op"), r.value.get("before"), r.value.get("after")) for r in records
    ] == [
        ("srv.public.items", None, "t", None, None),
        ("srv.public.notes", None, "t", None, None),
    ]
    assert [r.source_offset["event_part"] for r in records if r.source_offset] == [0, 2]


@pytest.mark.parametrize(("skipped", "ops"), [({"c"}, ["u", "d", "tombstone"]), ({"u", "d"}, ["c"])])
def test_skipped_operations(skipped: set[str], ops: list[str]) -> None:
    records = feed(
        stream(skipped=frozenset(skipped)),
        (relation(ITEMS, "items"), 0),
        *txn(
            1000,
            (Insert(ITEMS, ("1", "a")), 910),
            (Update(ITEMS, None, False, ("1", "b")), 920),
            (Delete(ITEMS, ("1", None), True), 930),
        ),
    )
    assert [brief(r)[0] for r in records] == ops


def test_no_tombstones_when_disabled_or_without_a_key() -> None:
    messages = [(relation(ITEMS, "items"), 0), *txn(1000, (Delete(ITEMS, ("1", "a"), False), 910))]
    assert [brief(r)[0] for r in feed(stream(tombstones=False), *messages)] == ["d"]
    keyless = feed(stream(describe=describe_with(keyless={"items"})), *messages)
    assert [brief(r) for r in keyless] == [("d", None, {"id": 1, "name": "a"}, None)]
    assert keyless[0].key_schema is None


def test_excluded_columns_leave_the_value_but_key_columns_stay_in_the_key() -> None:
    filters = Filters.of(column_exclude=[r"public\.items\.(id|secret)"])
    records = feed(
        stream(describe=describe_with(filters=filters)),
        (relation(ITEMS, "items", extra=("secret",)), 0),
        *txn(1000, (Insert(ITEMS, ("1", "pen", "hush")), 910)),
    )
    assert [brief(r) for r in records] == [("c", {"id": 1}, None, {"name": "pen"})]


def test_uncaptured_tables_produce_nothing() -> None:
    records = feed(
        stream(describe=describe_with(captured=set())),
        (relation(ITEMS, "items"), 0),
        *txn(1000, (Insert(ITEMS, ("1", "a")), 910)),
    )
    assert records == []


def test_a_new_column_from_a_relation_message_reaches_later_events() -> None:
    changes = stream()
    records = feed(
        changes,
        (relation(ITEMS, "items"), 0),
        *txn(1000, (Insert(ITEMS, ("1", "a")), 910)),
        (relation(ITEMS, "items", extra=("color",)), 0),
        *txn(2000, (Insert(ITEMS, ("2", "b", "red")), 1910)),
    )
    assert fields(records[0].value.get("after")) == {"id": 1, "name": "a"}
    assert fields(records[1].value.get("after")) == {"id": 2, "name": "b", "color": "red"}
    assert [f.name for f in records[1].value.schema.field("after").schema.fields] == ["id", "name", "color"]


def test_resume_skips_what_was_delivered_including_part_of_a_transaction() -> None:
    messages = [
        (relation(ITEMS, "items"), 0),
        *txn(1000, (Insert(ITEMS, ("1", "a")), 910)),
        *txn(2000, (Insert(ITEMS, ("2", "b")), 1910), (Delete(ITEMS, ("2", None), True), 1920)),
        *txn(3000, (Insert(ITEMS, ("3", "c")), 2910)),
    ]
    everything = feed(stream(), *messages)
    assert [brief(r)[0] for r in everything] == ["c", "c", "d", "tombstone", "c"]
    # Stored: the delete of the second transaction; its tombstone had not been acknowledged.
    resumed = feed(stream(resume=StreamPosition(2000, 1, 0)), *messages)
    assert [brief(r) for r in resumed] == [
        ("tombstone", {"id": 2}),
        ("c", {"id": 3}, None, {"id": 3, "name": "c"}),
    ]
    # A heartbeat's position: everything that committed before it.
    after_heartbeat = feed(stream(resume=StreamPosition.idle_at(2100)), *messages)
    assert [fields(r.key) for r in after_heartbeat] == [{"id": 3}]


def test_after_a_reconnect_the_resent_transaction_continues_where_it_stopped() -> None:
    changes = stream()
    first = feed(
        changes,
        (relation(ITEMS, "items"), 0),
        (Begin(1000, 1_000_000, 700), 900),
        (Insert(ITEMS, ("1", "a")), 910),
    )
    assert [fields(r.key) for r in first] == [{"id": 1}]
    changes.delivered()  # a poll returned it
    changes.reconnected()  # the connection broke before the second insert and the commit
    again = feed(
        changes,
        (relation(ITEMS, "items"), 0),
        *txn(1000, (Insert(ITEMS, ("1", "a")), 910), (Insert(ITEMS, ("2", "b")), 920)),
    )
    assert [fields(r.key) for r in again] == [{"id": 2}]


def test_after_a_reconnect_what_a_broken_poll_made_is_made_again() -> None:
    """Records made in a poll that then failed never reached the worker: the resent
    transaction makes them again instead of skipping them."""
    changes = stream()
    feed(changes, (relation(ITEMS, "items"), 0), *txn(900, (Insert(ITEMS, ("1", "a")), 890)))
    changes.delivered()
    made = feed(changes, (Begin(1000, 1_000_000, 700), 900), (Insert(ITEMS, ("2", "b")), 910))
    assert [fields(r.key) for r in made] == [{"id": 2}]
    changes.reconnected()  # the poll that made it failed
    again = feed(
        changes,
        (relation(ITEMS, "items"), 0),
        *txn(1000, (Insert(ITEMS, ("2", "b")), 910), (Insert(ITEMS, ("3", "c")), 920)),
    )
    assert [fields(r.key) for r in again] == [{"id": 2}, {"id": 3}]


def test_a_change_before_its_relation_is_a_data_error() -> None:
    with pytest.raises(DataException, match="before its Relation message"):
        feed(stream(), *txn(1000, (Insert(ITEMS, ("1", "a")), 910)))


def test_a_null_in_a_not_null_column_names_it() -> None:
    with pytest.raises(DataException, match=r"public\.items\.name: NULL"):
        feed(stream(), (relation(ITEMS, "items"), 0), *txn(1000, (Insert(ITEMS, ("1", None)), 910)))


def test_bad_values_name_table_column_and_type() -> None:
    with pytest.raises(DataException, match=r"public\.items\.id \(int4\): cannot convert 'x'"):
        feed(stream(), (relation(ITEMS, "items"), 0), *txn(1000, (Insert(ITEMS, ("x", "a")), 910)))
