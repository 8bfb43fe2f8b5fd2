"""pgoutput decoding: messages built by hand from PostgreSQL's documented format, and real ones
captured from a throwaway server (``pg_logical_slot_peek_binary_changes``)."""

from __future__ import annotations

import struct
from collections.abc import Iterator

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connectors.jdbc.cdc.pgoutput import (
    UNCHANGED_TOAST,
    Begin,
    Commit,
    Delete,
    Insert,
    LogicalMessage,
    Origin,
    PgOutputError,
    Relation,
    RelationColumn,
    Truncate,
    TypeMessage,
    Update,
    _Reader,
    decode,
    new_columns,
)
from tests.connectors.jdbc.test_cdc_support import CdcDatabase, cdc_db, lsn

FIXTURES = (cdc_db,)
PG_EPOCH_US = 946_684_800_000_000


def s(text: str) -> bytes:
    return text.encode() + b"\x00"


def tuple_data(*columns: bytes | str | None) -> bytes:
    out = struct.pack(">h", len(columns))
    for c in columns:
        if c is None:
            out += b"n"
        elif c == "u":
            out += b"u"
        elif isinstance(c, bytes):
            out += b"b" + struct.pack(">i", len(c)) + c
        else:
            raw = c.encode()
            out += b"t" + struct.pack(">i", len(raw)) + raw
    return out


# -- hand-built messages -----------------------------------------------------------------------------


def test_begin() -> None:
    payload = b"B" + struct.pack(">QqI", 0x1_0000_0200, 1_000_000, 4_000_000_000)
    assert decode(payload) == Begin(
        final_lsn=0x1_0000_0200, commit_time_us=PG_EPOCH_US + 1_000_000, xid=4_000_000_000
    )


def test_commit() -> None:
    payload = b"C" + struct.pack(">bQQq", 0, 0x200, 0x238, -5)
    assert decode(payload) == Commit(flags=0, commit_lsn=0x200, end_lsn=0x238, commit_time_us=PG_EPOCH_US - 5)


def test_origin() -> None:
    assert decode(b"O" + struct.pack(">Q", 77) + s("node_a")) == Origin(commit_lsn=77, name="node_a")


def test_relation_with_key_flags_and_type_modifiers() -> None:
    payload = (
        b"R"
        + struct.pack(">I", 16401)
        + s("sales")
        + s("örders")
        + b"f"
        + struct.pack(">h", 2)
        + b"\x01"
        + s("id")
        + struct.pack(">Ii", 23, -1)
        + b"\x00"
        + s("amount")
        + struct.pack(">Ii", 1700, (10 << 16 | 2) + 4)
    )
    assert decode(payload) == Relation(
        relation_id=16401,
        namespace="sales",
        name="örders",
        replica_identity="f",
        columns=(
            RelationColumn(is_key=True, name="id", type_oid=23, type_modifier=-1),
            RelationColumn(is_key=False, name="amount", type_oid=1700, type_modifier=(10 << 16 | 2) + 4),
        ),
    )


def test_type() -> None:
    assert decode(b"Y" + struct.pack(">I", 16386) + s("public") + s("mood")) == TypeMessage(
        16386, "public", "mood"
    )


def test_insert_with_null_text_and_binary_columns() -> None:
    payload = b"I" + struct.pack(">I", 5) + b"N" + tuple_data("42", None, "", b"\x00\xff")
    assert decode(payload) == Insert(relation_id=5, new=("42", None, "", b"\x00\xff"))


def test_update_without_old_tuple() -> None:
    payload = b"U" + struct.pack(">I", 5) + b"N" + tuple_data("1", "u")
    assert decode(payload) == Update(
        relation_id=5, old=None, old_is_key_only=False, new=("1", UNCHANGED_TOAST)
    )


def test_update_with_old_key() -> None:
    payload = b"U" + struct.pack(">I", 5) + b"K" + tuple_data("1", None) + b"N" + tuple_data("2", "x")
    assert decode(payload) == Update(5, old=("1", None), old_is_key_only=True, new=("2", "x"))


def test_update_with_old_row() -> None:
    payload = b"U" + struct.pack(">I", 5) + b"O" + tuple_data("1", "a") + b"N" + tuple_data("1", "b")
    assert decode(payload) == Update(5, old=("1", "a"), old_is_key_only=False, new=("1", "b"))


def test_delete_with_key_and_with_row() -> None:
    assert decode(b"D" + struct.pack(">I", 5) + b"K" + tuple_data("1", None)) == Delete(5, ("1", None), True)
    assert decode(b"D" + struct.pack(">I", 5) + b"O" + tuple_data("1", "a")) == Delete(5, ("1", "a"), False)


def test_truncate_of_several_relations_with_options() -> None:
    payload = b"T" + struct.pack(">ib", 3, 3) + struct.pack(">III", 10, 11, 12)
    assert decode(payload) == Truncate(relation_ids=(10, 11, 12), cascade=True, restart_identity=True)
    plain = b"T" + struct.pack(">ib", 1, 0) + struct.pack(">I", 10)
    assert decode(plain) == Truncate((10,), cascade=False, restart_identity=False)


def test_logical_decoding_message() -> None:
    payload = b"M" + b"\x01" + struct.pack(">Q", 99) + s("audit") + struct.pack(">i", 3) + b"abc"
    assert decode(payload) == LogicalMessage(transactional=True, lsn=99, prefix="audit", content=b"abc")


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        (b"", "empty"),
        (b"S" + struct.pack(">I", 1) + b"\x01", "unknown pgoutput message type 'S'"),
        (b"B" + struct.pack(">Q", 1), "truncated"),
        (b"I" + struct.pack(">I", 5) + b"X" + tuple_data("1"), "expected one of b'N'"),
        (b"I" + struct.pack(">I", 5) + b"N" + struct.pack(">h", 1) + b"z", "unknown tuple column kind 'z'"),
        (
            b"I" + struct.pack(">I", 5) + b"N" + struct.pack(">h", 1) + b"t" + struct.pack(">i", 9) + b"ab",
            "truncated",
        ),
        (b"O" + struct.pack(">Q", 1) + b"no-terminator", "unterminated string"),
        (b"C" + struct.pack(">bQQq", 0, 1, 2, 3) + b"extra", "trailing bytes"),
        (b"I" + struct.pack(">I", 5) + b"N" + tuple_data("x").replace(b"x", b"\xff"), "not UTF-8"),
    ],
)
def test_malformed_messages_are_refused_with_a_reason(payload: bytes, problem: str) -> None:
    with pytest.raises(PgOutputError, match=problem):
        decode(payload)


@settings(max_examples=500, deadline=None)
@given(
    columns=st.lists(st.none() | st.just("u") | st.text(max_size=6) | st.binary(max_size=4), max_size=6),
    cut=st.none() | st.integers(0, 40),
    flip=st.none() | st.tuples(st.integers(0, 40), st.integers(0, 255)),
)
def test_the_quick_tuple_pass_reads_what_the_checked_one_reads(
    columns: list[bytes | str | None], cut: int | None, flip: tuple[int, int] | None
) -> None:
    """Insert payloads, whole, cut short or with a byte changed: decoded alike by the quick
    pass and the checked one, or refused with the checked one's message."""
    body = bytearray(tuple_data(*columns))
    if flip is not None and flip[0] < len(body):
        body[flip[0]] = flip[1]
    payload = b"I" + struct.pack(">I", 5) + b"N" + bytes(body[:cut] if cut is not None else body)

    def outcome(quick: bool) -> object:
        reader = _Reader(payload)
        reader.pos = 6
        try:
            values = reader.tuple() if quick else reader._checked_tuple()
        except PgOutputError as exc:
            return str(exc)
        return values, reader.pos

    assert outcome(True) == outcome(False)


@settings(max_examples=500, deadline=None)
@given(
    columns=st.lists(st.none() | st.just("u") | st.text(max_size=6) | st.binary(max_size=4), max_size=6),
    cut=st.none() | st.integers(0, 40),
    flip=st.none() | st.tuples(st.integers(0, 40), st.integers(0, 255)),
)
def test_inserts_read_quickly_are_what_the_checked_reader_reads(
    columns: list[bytes | str | None], cut: int | None, flip: tuple[int, int] | None
) -> None:
    """``decode``'s quick path for inserts and ``new_columns`` (a run's payloads read into
    columns, after a well-formed one): the checked reader's values, or its refusal."""
    body = bytearray(tuple_data(*columns))
    if flip is not None and flip[0] < len(body):
        body[flip[0]] = flip[1]
    payload = b"I" + struct.pack(">I", 5) + b"N" + bytes(body[:cut] if cut is not None else body)
    reader = _Reader(payload)
    reader.pos = 6
    try:
        values = reader._checked_tuple()
        reader.done()
    except PgOutputError as exc:
        for read in (lambda: decode(payload), lambda: new_columns([payload], len(columns))):
            with pytest.raises(PgOutputError) as refused:
                read()
            assert str(refused.value) == str(exc)
        return
    assert decode(payload) == Insert(5, values)
    first = b"I" + struct.pack(">I", 5) + b"N" + tuple_data(*["x"] * len(values))
    assert new_columns([first, payload], len(values)) == [["x", v] for v in values]


# -- messages captured from PostgreSQL ---------------------------------------------------------------


def captured(db: CdcDatabase, slot: str) -> list[tuple[int, bytes]]:
    """(lsn, payload) of every message the slot holds (without consuming them)."""
    rows = db.rows(
        f"SELECT lsn::text, data FROM pg_logical_slot_peek_binary_changes('{slot}', NULL, NULL, "
        "'proto_version', '1', 'publication_names', 'cap')"
    )
    return [(lsn(at), bytes(data)) for at, data in rows]


@pytest.fixture
def capture(cdc_db: CdcDatabase) -> Iterator[CdcDatabase]:
    cdc_db.run(
        "CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL, price numeric(8,2), tags text[])",
        "CREATE TABLE notes (body text)",
        "CREATE PUBLICATION cap FOR ALL TABLES",
        "SELECT pg_create_logical_replication_slot('cap_slot', 'pgoutput')",
    )
    yield cdc_db
    with psycopg.connect(cdc_db.dsn, autocommit=True) as conn:
        conn.execute("SELECT pg_drop_replication_slot('cap_slot')")


def test_real_transaction_decodes_to_begin_relation_changes_commit(capture: CdcDatabase) -> None:
    capture.transaction(
        "INSERT INTO items VALUES (1, 'pen', 1.50, '{blue,\"dark red\"}'), (2, 'ink', NULL, NULL)",
        "UPDATE items SET price = 2.00 WHERE id = 1",
        "UPDATE items SET id = 3 WHERE id = 2",
        "DELETE FROM items WHERE id = 1",
    )
    messages = [decode(payload) for _, payload in captured(capture, "cap_slot")]
    kinds = [type(m).__name__ for m in messages]
    assert kinds == ["Begin", "Relation", "Insert", "Insert", "Update", "Update", "Delete", "Commit"]
    begin, relation, commit = messages[0], messages[1], messages[-1]
    assert isinstance(begin, Begin) and isinstance(commit, Commit) and isinstance(relation, Relation)
    assert begin.final_lsn == commit.commit_lsn < commit.end_lsn
    assert begin.commit_time_us == commit.commit_time_us
    assert (relation.namespace, relation.name, relation.replica_identity) == ("public", "items", "d")
    assert [(c.name, c.type_oid, c.is_key) for c in relation.columns] == [
        ("id", 23, True),
        ("name", 25, False),
        ("price", 1700, False),
        ("tags", 1009, False),
    ]
    assert relation.columns[2].type_modifier == (8 << 16 | 2) + 4
    assert messages[2] == Insert(relation.relation_id, ("1", "pen", "1.50", '{blue,"dark red"}'))
    assert messages[3] == Insert(relation.relation_id, ("2", "ink", None, None))
    # Key unchanged under REPLICA IDENTITY DEFAULT: no old tuple.
    assert messages[4] == Update(relation.relation_id, None, False, ("1", "pen", "2.00", '{blue,"dark red"}'))
    # Key changed: the old key, other columns null.
    assert messages[5] == Update(
        relation.relation_id, ("2", None, None, None), True, ("3", "ink", None, None)
    )
    assert messages[6] == Delete(relation.relation_id, ("1", None, None, None), True)


def test_real_full_identity_truncate_and_unchanged_toast(capture: CdcDatabase) -> None:
    big = "x" * 100_000
    capture.run(
        "ALTER TABLE items ALTER name SET STORAGE EXTERNAL",  # out of line, uncompressed: TOASTed
        "ALTER TABLE notes REPLICA IDENTITY FULL",
        f"INSERT INTO items VALUES (1, '{big}', 1, NULL)",
        "UPDATE items SET price = 5 WHERE id = 1",
        "INSERT INTO notes VALUES ('a')",
        "UPDATE notes SET body = 'b'",
        "DELETE FROM notes",
        "TRUNCATE items, notes",
    )
    messages = [decode(payload) for _, payload in captured(capture, "cap_slot")]
    changes = [m for m in messages if not isinstance(m, Begin | Commit | Relation)]
    relations = {m.relation_id: m.name for m in messages if isinstance(m, Relation)}
    notes = next(r for r, name in relations.items() if name == "notes")
    items = next(r for r, name in relations.items() if name == "items")
    assert changes[0] == Insert(items, ("1", big, "1.00", None))
    assert changes[1] == Update(items, None, False, ("1", UNCHANGED_TOAST, "5.00", None))
    assert changes[2] == Insert(notes, ("a",))
    assert changes[3] == Update(notes, ("a",), False, ("b",))
    assert changes[4] == Delete(notes, ("b",), False)
    assert isinstance(changes[5], Truncate) and set(changes[5].relation_ids) == {items, notes}
    full = next(m for m in messages if isinstance(m, Relation) and m.name == "notes")
    assert full.replica_identity == "f" and all(c.is_key for c in full.columns)


def test_real_messages_carry_the_lsns_the_protocol_documents(capture: CdcDatabase) -> None:
    capture.run("INSERT INTO notes VALUES ('one')", "INSERT INTO notes VALUES ('two')")
    stream = captured(capture, "cap_slot")
    commits = [(at, decode(p)) for at, p in stream if p[:1] == b"C"]
    assert len(commits) == 2
    first, second = (c for _, c in commits)
    assert isinstance(first, Commit) and isinstance(second, Commit)
    assert first.end_lsn <= second.commit_lsn  # transactions arrive in commit order
