"""Decoded pgoutput messages in, Debezium change records out: the streaming half of the task.

``ChangeStream.handle`` takes each message with the LSN it was sent at and returns the
records it makes. It keeps what the messages establish: the table model per relation
(rebuilt on every Relation message, which is how a new column reaches the schema of
later events), the open transaction (its commit LSN, time and xid, and a counter of its
changes), and the last commit LSN (Debezium's ``sequence``).

What each change becomes (Debezium's PostgreSQL semantics):

- insert: ``c`` with ``after``;
- update: ``u`` with ``after``, and ``before`` when the server sent the old row (REPLICA
  IDENTITY FULL) or the old key (the key changed); an update that changes the primary
  key becomes a ``d`` event for the old key (header ``__debezium.newkey``), its tombstone,
  and a ``c`` event for the new key (header ``__debezium.oldkey``);
- delete: ``d`` with ``before`` (the whole old row under REPLICA IDENTITY FULL, else the
  key columns with the other fields null or zero), then a tombstone (key, null value)
  when ``tombstones.on.delete``;
- truncate: one ``t`` event per captured table, without key;
- ``skipped.operations`` (default ``t``) drops those kinds.

Runs: inserts, and updates that carry no old row, into one table come in long runs (a
bulk insert, a batch job). ``append`` (``take``) takes such a change into the open *run*
instead, kept as its message and LSN (an insert that continues the run, ``take_insert``,
as its payload, undecoded), and ``take_run`` turns the run into one
``SourceRecordBatch`` whose keys and envelopes are ``StructColumn``s, parsed a column at a
time: no record, struct or call per change until something reads one
(``benchmarks/jdbc_source.py`` pays for this). Its records equal those ``handle`` makes
for the same changes (a property test holds it to that); a column that does not parse
makes the run's records one by one, which raises the error ``handle`` would.

Records at or below the resume position (the stored offset, and after a reconnect the
last record already handed out) are dropped: the server resends every transaction after
the slot's confirmed LSN, some of which Kafka already has. Only the table models need
I/O (the catalog), behind the ``describe`` callable.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from connect.api import DataException, Headers, SourceRecord, Struct
from connectors.jdbc.cdc.events import (
    NEW_KEY_HEADER,
    OLD_KEY_HEADER,
    EventBuilder,
    RowChanges,
    SourcePosition,
    sequence,
)
from connectors.jdbc.cdc.offsets import StreamPosition, stream_offset
from connectors.jdbc.cdc.pgoutput import (
    UNCHANGED_TOAST,
    Begin,
    ColumnValue,
    Commit,
    Delete,
    Insert,
    Message,
    Relation,
    Truncate,
    Update,
    inserted_row,
    new_columns,
)
from connectors.jdbc.cdc.table_model import TableModel

__all__ = ["ChangeStream"]

# Which record of a change a record is (the offset's event_part).
_MAIN, _TOMBSTONE, _CREATE = 0, 1, 2


@dataclass(slots=True)
class _Transaction:
    commit_lsn: int
    commit_time_us: int
    xid: int
    changes: int = 0


@dataclass(slots=True)
class _Segment:
    """The changes of one transaction in a run: from the run's change ``start`` on, the
    first being the transaction's change ``first_index``; ``last_commit_lsn`` as it was."""

    start: int
    transaction: _Transaction
    first_index: int
    last_commit_lsn: int | None


@dataclass(slots=True)
class _Run:
    """Changes of one table taken by ``append``, in order: what ``take_run`` makes a batch
    of. Per change only its message and LSN; what its transaction gives, per segment."""

    table: TableModel
    relation_id: int
    #: Per change its message, or the payload of an insert ``take_insert`` took undecoded.
    messages: list[Insert | Update | bytes] = field(default_factory=list)
    lsns: list[int] = field(default_factory=list)
    segments: list[_Segment] = field(default_factory=list)
    transaction: _Transaction | None = None  # the last segment's
    #: How the payload of an insert that continues the run starts (Insert, its relation id,
    #: N); None until the run has an insert, and after a Relation message.
    insert_prefix: bytes | None = None

    def changes(self) -> Iterator[tuple[Insert | Update, int, _Transaction, int, str]]:
        """Each change with its transaction, index in it and ``sequence``."""
        bounds = [s.start for s in self.segments[1:]] + [len(self.messages)]
        for segment, end in zip(self.segments, bounds, strict=True):
            txn, index = segment.transaction, segment.first_index
            for i in range(segment.start, end):
                lsn, m = self.lsns[i], self.messages[i]
                message = Insert(self.relation_id, inserted_row(m)) if type(m) is bytes else m
                yield message, lsn, txn, index, sequence(segment.last_commit_lsn, lsn)  # type: ignore[misc]
                index += 1


class _RunOffsets(Sequence[Mapping[str, Any]]):
    """A run's source offsets, each made when read: the worker reads a few (where a poll's
    offsets start and end), so a dict per change would be made for nothing
    (``benchmarks/jdbc_source.py``)."""

    __slots__ = ("_lsns", "_segments")

    def __init__(self, lsns: list[int], segments: list[_Segment]) -> None:
        self._lsns = lsns
        self._segments = segments

    def __len__(self) -> int:
        return len(self._lsns)

    @overload
    def __getitem__(self, i: int) -> Mapping[str, Any]: ...
    @overload
    def __getitem__(self, i: slice) -> list[Mapping[str, Any]]: ...
    def __getitem__(self, i: int | slice) -> Mapping[str, Any] | list[Mapping[str, Any]]:
        if isinstance(i, slice):
            return [self[j] for j in range(len(self._lsns))[i]]
        n = len(self._lsns)
        if not -n <= i < n:
            raise IndexError(f"offset {i} of a run of {n}")
        if i < 0:
            i += n
        segment = self._segments[bisect_right(self._segments, i, key=_segment_start) - 1]
        txn = segment.transaction
        index = segment.first_index + i - segment.start
        return stream_offset(self._lsns[i], txn.commit_lsn, txn.xid, txn.commit_time_us, index, _MAIN)

    def __contains__(self, value: object) -> bool:
        return value is not None and any(value == o for o in self)


def _segment_start(segment: _Segment) -> int:
    return segment.start


class ChangeStream:
    def __init__(
        self,
        events: EventBuilder,
        describe: Callable[[Relation], TableModel | None],
        skipped: frozenset[str] = frozenset({"t"}),
        tombstones: bool = True,
        resume: StreamPosition | None = None,
    ) -> None:
        self.events = events
        self.describe = describe
        self.skipped = skipped
        self.tombstones = tombstones
        #: Records at or below this position are not emitted (again).
        self.skip_to = resume
        self._delivered = resume  # skip_to when the caller last took the records made
        self.tables: dict[int, TableModel | None] = {}
        self.transaction: _Transaction | None = None
        self.last_commit_lsn: int | None = None
        self._run: _Run | None = None

    @property
    def in_transaction(self) -> bool:
        return self.transaction is not None

    def delivered(self) -> None:
        """The records made so far reached the worker (a poll returned them)."""
        self._delivered = self.skip_to

    def reconnected(self) -> None:
        """The replication stream starts over: the server resends from the confirmed LSN, with
        Relation messages again; what was delivered must not be handed out twice, and what
        was made but not delivered (the poll that broke) must be made again."""
        self.transaction = None
        self.tables.clear()
        self._run = None
        self.skip_to = self._delivered

    @property
    def run_length(self) -> int:
        """Changes in the open run."""
        return 0 if self._run is None else len(self._run.messages)

    def appendable(self, message: Message) -> bool:
        """Whether ``append`` would take ``message`` into the open run (or start one)."""
        return self._table_to_append(message) is not None

    def _table_to_append(self, message: Message) -> TableModel | None:
        if type(message) is Insert:
            op = "c"
        elif type(message) is Update and message.old is None:
            op = "u"
        else:
            return None
        txn = self.transaction
        table = self.tables.get(message.relation_id)
        if txn is None or table is None or op in self.skipped:
            return None  # handle() raises, drops or skips it
        run = self._run
        if run is not None:
            if run.table is not table:
                return None
        else:
            # (With a run open, positions only grew since skip_to was last passed.)
            skip = self.skip_to
            if skip is not None and (txn.commit_lsn, txn.changes, _MAIN) <= (
                skip.commit_lsn,
                skip.event,
                skip.part,
            ):
                return None
        return None if UNCHANGED_TOAST in message.new else table

    def append(self, message: Insert | Update, lsn: int) -> None:
        """Take a change ``appendable`` approved into the open run."""
        table = self.tables[message.relation_id]
        assert table is not None
        self._append(table, message, lsn)

    def take(self, message: Message, lsn: int) -> bool:
        """``append`` ``message`` if ``appendable``; whether it did (the task's one call per change)."""
        table = self._table_to_append(message)
        if table is None:
            return False
        self._append(table, message, lsn)  # type: ignore[arg-type]  # an Insert or Update, as checked
        return True

    def _append(self, table: TableModel, message: Insert | Update, lsn: int) -> None:
        # The change's source offset is made only if read (pending_offset, the batch's).
        txn = self.transaction
        assert txn is not None
        run = self._run
        if run is None:
            run = self._run = _Run(table, message.relation_id)
        if run.transaction is not txn:
            run.segments.append(_Segment(len(run.messages), txn, txn.changes, self.last_commit_lsn))
            run.transaction = txn
        txn.changes += 1
        run.messages.append(message)
        run.lsns.append(lsn)
        if run.insert_prefix is None and type(message) is Insert:
            run.insert_prefix = b"I" + message.relation_id.to_bytes(4, "big") + b"N"

    def take_insert(self, payload: bytes, lsn: int) -> bool:
        """Take into the open run, undecoded, an insert payload that continues it (the run's
        table, the same transaction); whether it did. Its row is read in ``take_run``, all
        the run's at once; a malformed one fails there as ``decode`` would have here. Half
        of a change's cost before the converter in ``benchmarks/jdbc_source.py``."""
        run = self._run
        if (
            run is None
            or run.insert_prefix is None
            or payload[:6] != run.insert_prefix
            or run.transaction is not self.transaction
        ):
            return False
        run.transaction.changes += 1  # type: ignore[union-attr]  # the open transaction, as checked
        run.messages.append(payload)
        run.lsns.append(lsn)
        return True

    def pending_offset(self) -> Mapping[str, Any] | None:
        """The source offset of the open transaction's last change if the open run has it
        (the task tells its ``CommitTracker`` before the transaction's Commit), else None."""
        run, txn = self._run, self.transaction
        if run is None or txn is None or run.transaction is not txn:
            return None
        return _RunOffsets(run.lsns, run.segments)[-1]

    def take_run(self) -> Sequence[SourceRecord]:
        """The open run's records (a ``SourceRecordBatch``; empty without a run), and no run."""
        run, self._run = self._run, None
        if run is None:
            return []
        lsns, segments = run.lsns, run.segments
        n = len(lsns)
        last = segments[-1]
        # Records at or below this are not made again (the run's last change, all its parts);
        # set here, not per change, as nothing reads it while a run is open.
        self.skip_to = StreamPosition(
            last.transaction.commit_lsn, last.first_index + n - 1 - last.start, _CREATE
        )
        commit_times: list[int] = []
        txids: list[int] = []
        sequences: list[str] = []
        bounds = [s.start for s in segments[1:]] + [n]
        for segment, end in zip(segments, bounds, strict=True):
            txn, count = segment.transaction, end - segment.start
            commit_times += [txn.commit_time_us] * count
            txids += [txn.xid] * count
            last_commit = segment.last_commit_lsn
            head = '["' + str(last_commit) + '","' if last_commit is not None else '[null,"'
            sequences += [f'{head}{lsn}"]' for lsn in lsns[segment.start : end]]
        messages = run.messages
        changes = RowChanges(
            ops=["u" if type(m) is Update else "c" for m in messages],
            columns=new_columns(messages, len(run.table.columns)),
            lsns=lsns,
            commit_times_us=commit_times,
            txids=txids,
            sequences=sequences,
            offsets=_RunOffsets(lsns, segments),
        )
        batch = self.events.row_changes(run.table, changes)
        if batch is not None:
            return batch
        # A column did not parse: the records one by one, which names the value that failed.
        out: list[SourceRecord] = []
        for message, lsn, txn, index, seq in run.changes():
            out += self._change(message, lsn, txn, index, seq, None, run.table)
        return out

    def handle(self, message: Message, lsn: int) -> list[SourceRecord]:
        if isinstance(message, Begin):
            self.transaction = _Transaction(message.final_lsn, message.commit_time_us, message.xid)
            return []
        if isinstance(message, Commit):
            self.transaction = None
            self.last_commit_lsn = message.commit_lsn
            return []
        if isinstance(message, Relation):
            if self._run is not None:
                self._run.insert_prefix = None  # its inserts are checked against the new model
            self.tables[message.relation_id] = self.describe(message)
            return []
        if isinstance(message, Insert | Update | Delete | Truncate):
            txn = self.transaction
            if txn is None:
                raise DataException(f"pgoutput {type(message).__name__} outside a transaction at LSN {lsn}")
            index = txn.changes
            txn.changes += 1
            if self.skip_to is not None and txn.commit_lsn < self.skip_to.commit_lsn:
                return []
            records = self._change(
                message, lsn, txn, index, sequence(self.last_commit_lsn, lsn), self.skip_to
            )
            if records:
                self.skip_to = StreamPosition(txn.commit_lsn, index, _CREATE)
            return records
        return []  # Origin, Type, logical decoding messages: nothing to emit

    def _table(self, relation_id: int) -> TableModel | None:
        try:
            return self.tables[relation_id]
        except KeyError:
            raise DataException(
                f"pgoutput sent a change for relation {relation_id} before its Relation message"
            ) from None

    def _change(
        self,
        message: Insert | Update | Delete | Truncate,
        lsn: int,
        txn: _Transaction,
        index: int,
        seq: str,
        skip_to: StreamPosition | None,
        model: TableModel | None = None,
    ) -> list[SourceRecord]:
        """The records of one change; ``model`` is the table's as it was when the change was
        read (a run's, made before later Relation messages), else the current one."""
        position = SourcePosition(
            ts_us=txn.commit_time_us, snapshot="false", txid=txn.xid, lsn=lsn, sequence=seq
        )
        out: list[SourceRecord] = []

        def emit(part: int, make: Callable[[dict[str, object]], SourceRecord]) -> None:
            if skip_to is None or StreamPosition(txn.commit_lsn, index, part) > skip_to:
                out.append(make(stream_offset(lsn, txn.commit_lsn, txn.xid, txn.commit_time_us, index, part)))

        if isinstance(message, Truncate):
            if "t" not in self.skipped:
                for part, relation_id in enumerate(message.relation_ids):
                    truncated = self._table(relation_id)
                    if truncated is not None:
                        emit(part, self._truncation(truncated, position))
            return out
        table = model if model is not None else self._table(message.relation_id)
        if table is None:
            return out
        ev = self.events
        if isinstance(message, Insert):
            if "c" not in self.skipped:
                key, after = table.key(message.new), table.row(message.new)
                emit(_MAIN, lambda off: ev.change(table, "c", key, None, after, position, off))
        elif isinstance(message, Update):
            if "u" in self.skipped:
                return out
            old = message.old
            before: Struct | None = None
            if old is not None:
                before = table.key_only_row(old) if message.old_is_key_only else table.row(old)
            after = table.row(message.new, None if message.old_is_key_only else before)
            new_key = table.key(message.new)
            if old is not None and table.has_key and not table.same_key(old, message.new):
                self._key_change(table, old, before, new_key, after, position, emit)
            else:
                emit(_MAIN, lambda off: ev.change(table, "u", new_key, before, after, position, off))
        else:
            if "d" in self.skipped:
                return out
            key = table.key(message.old)
            before = table.key_only_row(message.old) if message.old_is_key_only else table.row(message.old)
            emit(_MAIN, lambda off: ev.change(table, "d", key, before, None, position, off))
            if self.tombstones and key is not None:
                emit(_TOMBSTONE, lambda off: ev.tombstone(table, key, off))
        return out

    def _truncation(
        self, table: TableModel, position: SourcePosition
    ) -> Callable[[dict[str, object]], SourceRecord]:
        return lambda offset: self.events.truncate(table, position, offset)

    def _key_change(
        self,
        table: TableModel,
        old: tuple[ColumnValue, ...],
        before: Struct | None,
        new_key: Struct | None,
        after: Struct,
        position: SourcePosition,
        emit: Callable[[int, Callable[[dict[str, object]], SourceRecord]], None],
    ) -> None:
        """An update of the primary key: Debezium emits delete + tombstone + create."""
        old_key = table.key(old)
        ev = self.events
        delete_headers = Headers().add(NEW_KEY_HEADER, new_key, table.key_schema)
        create_headers = Headers().add(OLD_KEY_HEADER, old_key, table.key_schema)
        emit(_MAIN, lambda off: ev.change(table, "d", old_key, before, None, position, off, delete_headers))
        if self.tombstones:
            emit(_TOMBSTONE, lambda off: ev.tombstone(table, old_key, off))
        emit(_CREATE, lambda off: ev.change(table, "c", new_key, None, after, position, off, create_headers))
