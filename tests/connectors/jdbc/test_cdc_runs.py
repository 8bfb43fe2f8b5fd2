"""ChangeStream's runs: inserts and updates without an old row taken column-wise
(``appendable``/``append``/``take_run``) make exactly the records ``handle`` makes one by
one, whatever the mix of tables, kinds of change, NULLs, TOAST, resume positions and poll
sizes (pure; hypothesis writes the streams)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connect.api import DataException, SourceRecord, SourceRecordBatch, StructColumn
from connectors.jdbc.cdc.changes import ChangeStream
from connectors.jdbc.cdc.offsets import StreamPosition
from connectors.jdbc.cdc.pgoutput import (
    UNCHANGED_TOAST,
    Begin,
    Commit,
    Delete,
    Insert,
    Message,
    Relation,
    Truncate,
    Update,
    decode,
)
from tests.connectors.jdbc.test_cdc_changes import ITEMS, NOTES, describe_with, relation, stream

OTHER = 300  # a table the connector does not capture
TABLES = {ITEMS: "items", NOTES: "notes", OTHER: "other"}


def by_handle(changes: ChangeStream, messages: list[tuple[Message, int]]) -> list[SourceRecord]:
    out: list[SourceRecord] = []
    for message, lsn in messages:
        out += changes.handle(message, lsn)
    return out


def by_runs(
    changes: ChangeStream, messages: list[tuple[Message, int]], limit: int
) -> list[list[SourceRecord]]:
    """The polls the task makes of these messages (``PostgresCdcSourceTask._stream_batch``'s
    loop): a run of one table in a poll of its own, any other record in a list."""
    polls: list[list[SourceRecord]] = []
    queue = list(messages)
    deferred: tuple[Message, int] | None = None
    while queue or deferred is not None:
        records: list[SourceRecord] = []
        while len(records) + changes.run_length < limit:
            if deferred is not None:
                (message, lsn), deferred = deferred, None
            elif queue:
                message, lsn = queue.pop(0)
            else:
                break
            if records:
                if changes.appendable(message):
                    deferred = (message, lsn)
                    break
            elif changes.take(message, lsn):
                # Inserts that continue the run, taken undecoded (``_extend_run``).
                while queue and changes.run_length < limit:
                    payload = encoded(queue[0][0])
                    if payload is None or not changes.take_insert(payload, queue[0][1]):
                        break
                    queue.pop(0)
                continue
            if changes.run_length and not isinstance(message, Begin | Commit | Relation):
                deferred = (message, lsn)
                break
            records += changes.handle(message, lsn)
        if changes.run_length:
            run = changes.take_run()
            polls.append(list(run))
        else:
            polls.append(records)
    return polls


def encoded(message: Message) -> bytes | None:
    """An Insert of texts and NULLs as the pgoutput payload the server sends; None for others."""
    if type(message) is not Insert or not all(v is None or isinstance(v, str) for v in message.new):
        return None
    out = b"I" + message.relation_id.to_bytes(4, "big") + b"N" + len(message.new).to_bytes(2, "big")
    for v in message.new:
        if v is None:
            out += b"n"
        else:
            text = v.encode()  # type: ignore[union-attr]
            out += b"t" + len(text).to_bytes(4, "big") + text
    return out


def test_encoded_inserts_decode_to_themselves() -> None:
    message = Insert(ITEMS, ("1", None, "ü\x00\"'"))
    payload = encoded(message)
    assert payload is not None and decode(payload) == message


_ids = st.sampled_from(["1", "2", "17", "-5", "2147483647"])
_names = st.sampled_from(["a", "pen", "", "ü\x00\"'", None])
_extras = st.sampled_from(["x", "", None])


@st.composite
def _row(draw: st.DrawFn, toast: bool = False) -> tuple[Any, ...]:
    id_ = draw(st.one_of(_ids, st.just("not a number")) if draw(st.integers(0, 30)) == 0 else _ids)
    name = draw(st.one_of(_names, st.just(UNCHANGED_TOAST)) if toast else _names)
    if name is None and draw(st.integers(0, 4)):
        name = "filled"  # a NULL in the NOT NULL column is an error: keep it rare
    return (id_, name, draw(_extras))


@st.composite
def _change(draw: st.DrawFn) -> Message:
    rel = draw(st.sampled_from([ITEMS, ITEMS, ITEMS, NOTES, OTHER]))
    kind = draw(st.sampled_from(["I", "I", "I", "I", "U", "U", "UK", "UO", "D", "T", "R"]))
    if kind == "I":
        return Insert(rel, draw(_row()))
    if kind == "U":
        return Update(rel, None, False, draw(_row(toast=True)))
    if kind == "UK":
        return Update(rel, (draw(_ids), None, None), True, draw(_row()))
    if kind == "UO":
        return Update(rel, draw(_row()), False, draw(_row(toast=True)))
    if kind == "D":
        return Delete(rel, (draw(_ids), None, None), True)
    if kind == "T":
        return Truncate((ITEMS, NOTES), cascade=False, restart_identity=False)
    return _relation(rel)


def _relation(rel: int) -> Relation:
    return relation(rel, TABLES[rel], extra=("note",))


@st.composite
def _stream(draw: st.DrawFn) -> list[tuple[Message, int]]:
    lsn = 1000
    out: list[tuple[Message, int]] = [(_relation(rel), 0) for rel in TABLES]
    for xid in range(draw(st.integers(1, 4))):
        commit_lsn = lsn + 10_000
        out.append((Begin(commit_lsn, 1_000_000 + xid, 700 + xid), lsn))
        for change in draw(st.lists(_change(), max_size=12)):
            lsn += 8
            out.append((change, lsn))
        out.append((Commit(0, commit_lsn, commit_lsn + 40, 1_000_000 + xid), commit_lsn + 40))
        lsn = commit_lsn + 100
    return out


@settings(max_examples=400, deadline=None)
@given(
    messages=_stream(),
    limit=st.integers(1, 20),
    skipped=st.sampled_from([frozenset({"t"}), frozenset(), frozenset({"c"}), frozenset({"u", "d"})]),
    tombstones=st.booleans(),
    resume=st.one_of(
        st.none(),
        st.builds(StreamPosition, st.sampled_from([11_000, 21_100]), st.integers(-1, 6), st.integers(0, 2)),
    ),
)
def test_runs_make_the_records_handle_makes(
    messages: list[tuple[Message, int]],
    limit: int,
    skipped: frozenset[str],
    tombstones: bool,
    resume: StreamPosition | None,
) -> None:
    def make() -> ChangeStream:
        describe = describe_with(keyless={"notes"}, captured={"items", "notes"})
        return stream(describe=describe, skipped=skipped, tombstones=tombstones, resume=resume)

    try:
        expected = by_handle(make(), messages)
    except DataException as exc:
        with pytest.raises(DataException) as raised:
            by_runs(make(), messages, limit)
        assert str(raised.value) == str(exc)
        return
    polls = by_runs(make(), messages, limit)
    assert [r for poll in polls for r in poll] == expected
    # A poll stops taking changes at the limit; the last change may add a few (a delete and
    # its tombstone, a key change's three records, a truncate's one per table).
    assert all(len(poll) < limit + 3 for poll in polls)


def test_a_run_is_one_batch_of_columns() -> None:
    changes = stream()
    messages: list[tuple[Message, int]] = [
        (relation(ITEMS, "items"), 0),
        (Begin(5000, 1_000_000, 700), 4000),
        *[(Insert(ITEMS, (str(i), f"n{i}")), 4000 + 8 * i) for i in range(1, 6)],
        (Commit(0, 5000, 5040, 1_000_000), 5040),
    ]
    for message, lsn in messages:
        if changes.appendable(message):
            changes.append(message, lsn)  # type: ignore[arg-type]
        else:
            assert changes.handle(message, lsn) == []
    assert changes.run_length == 5
    batch = changes.take_run()
    assert isinstance(batch, SourceRecordBatch) and len(batch) == 5
    assert isinstance(batch.values, StructColumn) and isinstance(batch.keys, StructColumn)
    assert changes.run_length == 0 and changes.take_run() == []
    assert [r.key.get("id") for r in batch] == [1, 2, 3, 4, 5]
    assert batch[4].value.get("after").get("name") == "n5"
    assert batch[4].source_offset == {
        "lsn": 4040,
        "lsn_proc": 4040,
        "lsn_commit": 5000,
        "txId": 700,
        "ts_usec": 1_000_000,
        "event": 4,
        "event_part": 0,
    }


def test_a_value_that_does_not_parse_is_reported_as_handle_reports_it() -> None:
    changes = stream()
    changes.handle(relation(ITEMS, "items"), 0)
    changes.handle(Begin(5000, 1_000_000, 700), 4000)
    for i, id_ in enumerate(["1", "two"]):
        message = Insert(ITEMS, (id_, "n"))
        assert changes.appendable(message)
        changes.append(message, 4100 + i)
    with pytest.raises(DataException, match=r"public\.items\.id \(int4\): cannot convert 'two'"):
        changes.take_run()
