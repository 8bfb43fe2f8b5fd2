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
bulk insert, a batch job). ``append`` takes such a change into the open *run* instead,
kept as its texts and positions, and ``take_run`` turns the run into one
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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

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
class _Run:
    """Changes of one table taken by ``append``, in order: what ``take_run`` makes a batch of."""

    table: TableModel
    messages: list[Insert | Update] = field(default_factory=list)
    lsns: list[int] = field(default_factory=list)
    transactions: list[_Transaction] = field(default_factory=list)
    indexes: list[int] = field(default_factory=list)
    sequences: list[str] = field(default_factory=list)
    offsets: list[Mapping[str, Any]] = field(default_factory=list)


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
        if type(message) is Insert:
            op = "c"
        elif type(message) is Update and message.old is None:
            op = "u"
        else:
            return False
        txn = self.transaction
        table = self.tables.get(message.relation_id)
        if txn is None or table is None or op in self.skipped:
            return False  # handle() raises, drops or skips it
        run = self._run
        if run is not None:
            if run.table is not table:
                return False
        else:
            # (With a run open, positions only grew since skip_to was last passed.)
            skip = self.skip_to
            if skip is not None and (txn.commit_lsn, txn.changes, _MAIN) <= (
                skip.commit_lsn,
                skip.event,
                skip.part,
            ):
                return False
        return UNCHANGED_TOAST not in message.new

    def append(self, message: Insert | Update, lsn: int) -> Mapping[str, Any]:
        """Take a change ``appendable`` approved into the open run; the source offset of its record."""
        txn = self.transaction
        table = self.tables[message.relation_id]
        assert txn is not None and table is not None
        run = self._run
        if run is None:
            run = self._run = _Run(table)
        index = txn.changes
        txn.changes += 1
        offset = stream_offset(lsn, txn.commit_lsn, txn.xid, txn.commit_time_us, index, _MAIN)
        run.messages.append(message)
        run.lsns.append(lsn)
        run.transactions.append(txn)
        run.indexes.append(index)
        run.sequences.append(sequence(self.last_commit_lsn, lsn))
        run.offsets.append(offset)
        return offset

    def take_run(self) -> Sequence[SourceRecord]:
        """The open run's records (a ``SourceRecordBatch``; empty without a run), and no run."""
        run, self._run = self._run, None
        if run is None:
            return []
        txns = run.transactions
        # Records at or below this are not made again (the run's last change, all its parts);
        # set here, not per change, as nothing reads it while a run is open.
        self.skip_to = StreamPosition(txns[-1].commit_lsn, run.indexes[-1], _CREATE)
        changes = RowChanges(
            ops=["c" if type(m) is Insert else "u" for m in run.messages],
            rows=[m.new for m in run.messages],
            lsns=run.lsns,
            commit_times_us=[t.commit_time_us for t in txns],
            txids=[t.xid for t in txns],
            sequences=run.sequences,
            offsets=run.offsets,
        )
        batch = self.events.row_changes(run.table, changes)
        if batch is not None:
            return batch
        # A column did not parse: the records one by one, which names the value that failed.
        out: list[SourceRecord] = []
        for message, lsn, txn, index, seq in zip(
            run.messages, run.lsns, txns, run.indexes, run.sequences, strict=True
        ):
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
