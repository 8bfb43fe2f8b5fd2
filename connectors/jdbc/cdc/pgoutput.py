"""Decoding of ``pgoutput`` messages: PostgreSQL's logical replication protocol, version 1.

Each XLogData payload a walsender streams from a ``pgoutput`` slot holds one message;
``decode`` turns its bytes into one of the frozen dataclasses below. Pure functions, no
I/O. The formats are PostgreSQL's "Logical Replication Message Formats" (protocol
version 1, the one every server since 10 speaks):

=======  ===========================================================================
``B``    Begin: final (commit) LSN, commit timestamp, xid
``C``    Commit: flags, commit LSN, end LSN, commit timestamp
``O``    Origin: origin commit LSN, origin name
``R``    Relation: id, namespace, name, replica identity, columns (flags, name, type, typmod)
``Y``    Type: id, namespace, name (sent before a Relation that uses a non-built-in type)
``I``    Insert: relation id, ``N`` + new tuple
``U``    Update: relation id, optional ``K`` (old key) or ``O`` (old row) tuple, ``N`` + new tuple
``D``    Delete: relation id, ``K`` or ``O`` + old tuple
``T``    Truncate: relation count, option bits (1 CASCADE, 2 RESTART IDENTITY), relation ids
``M``    Logical decoding message (only with the ``messages`` option)
=======  ===========================================================================

Integers are big-endian; strings are NUL-terminated; timestamps count microseconds
since 2000-01-01 and are converted here to microseconds since the Unix epoch. A tuple
is an Int16 column count followed by, per column, ``n`` (null), ``u`` (an unchanged
TOASTed value the server did not send), ``t`` + Int32 length + text, or ``b`` + Int32
length + binary (the ``binary`` option, not used by this connector).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from connect.api import DataException

__all__ = [
    "UNCHANGED_TOAST",
    "Begin",
    "ColumnValue",
    "Commit",
    "Delete",
    "Insert",
    "LogicalMessage",
    "Message",
    "Origin",
    "PgOutputError",
    "Relation",
    "RelationColumn",
    "Truncate",
    "TypeMessage",
    "Update",
    "decode",
    "inserted_row",
    "new_columns",
]

# 2000-01-01T00:00:00Z in microseconds since the Unix epoch: PostgreSQL's timestamp origin.
PG_EPOCH_OFFSET_US: Final = 946_684_800_000_000


class _Unchanged:
    """The ``u`` marker: a TOASTed value the update did not change, so the server left it out."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNCHANGED_TOAST"


UNCHANGED_TOAST: Final = _Unchanged()

#: One column of a tuple: None (SQL NULL), ``UNCHANGED_TOAST``, text (``str``) or binary (``bytes``).
ColumnValue = str | bytes | _Unchanged | None


class PgOutputError(DataException):
    """A payload that is not a well-formed pgoutput (protocol version 1) message."""


@dataclass(frozen=True, slots=True)
class Begin:
    final_lsn: int  # LSN of the commit record: the transaction's identity in the stream
    commit_time_us: int  # microseconds since the Unix epoch
    xid: int


@dataclass(frozen=True, slots=True)
class Commit:
    flags: int
    commit_lsn: int  # equals the Begin's final_lsn
    end_lsn: int  # the end of the commit record: what a client confirms as flushed
    commit_time_us: int


@dataclass(frozen=True, slots=True)
class Origin:
    commit_lsn: int
    name: str


@dataclass(frozen=True, slots=True)
class RelationColumn:
    is_key: bool  # part of the replica identity (every column under REPLICA IDENTITY FULL)
    name: str
    type_oid: int
    type_modifier: int


@dataclass(frozen=True, slots=True)
class Relation:
    relation_id: int
    namespace: str  # "" stands for pg_catalog
    name: str
    replica_identity: str  # pg_class.relreplident: d(efault), n(othing), f(ull), i(ndex)
    columns: tuple[RelationColumn, ...]


@dataclass(frozen=True, slots=True)
class TypeMessage:
    type_oid: int
    namespace: str
    name: str


# Not frozen: a frozen __init__ costs 2.5x, paid per row change (benchmarks/jdbc_source.py).
@dataclass(slots=True)
class Insert:
    relation_id: int
    new: tuple[ColumnValue, ...]


@dataclass(slots=True)  # not frozen, as Insert
class Update:
    relation_id: int
    old: tuple[ColumnValue, ...] | None  # the old key (K) or the whole old row (O), when sent
    old_is_key_only: bool  # True for K, False for O (or when there is no old tuple)
    new: tuple[ColumnValue, ...]


@dataclass(slots=True)  # not frozen, as Insert
class Delete:
    relation_id: int
    old: tuple[ColumnValue, ...]
    old_is_key_only: bool


@dataclass(frozen=True, slots=True)
class Truncate:
    relation_ids: tuple[int, ...]
    cascade: bool
    restart_identity: bool


@dataclass(frozen=True, slots=True)
class LogicalMessage:
    transactional: bool
    lsn: int
    prefix: str
    content: bytes


Message = (
    Begin | Commit | Origin | Relation | TypeMessage | Insert | Update | Delete | Truncate | LogicalMessage
)

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")
_U64 = struct.Struct(">Q")


class _Irregular(Exception):
    """A TupleData the quick pass leaves to the checked one."""


class _Reader:
    """A cursor over one payload; every read checks the bounds, so a short payload fails cleanly."""

    __slots__ = ("data", "pos")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 1  # after the message type byte

    def _need(self, n: int) -> None:
        if self.pos + n > len(self.data):
            raise PgOutputError(
                f"pgoutput {chr(self.data[0])!r} message truncated: needed {n} bytes at offset {self.pos}, "
                f"{len(self.data) - self.pos} left"
            )

    def byte(self) -> int:
        self._need(1)
        b = self.data[self.pos]
        self.pos += 1
        return b

    def int16(self) -> int:
        self._need(2)
        (v,) = _I16.unpack_from(self.data, self.pos)
        self.pos += 2
        return int(v)

    def int32(self) -> int:
        self._need(4)
        (v,) = _I32.unpack_from(self.data, self.pos)
        self.pos += 4
        return int(v)

    def uint32(self) -> int:
        self._need(4)
        (v,) = _U32.unpack_from(self.data, self.pos)
        self.pos += 4
        return int(v)

    def int64(self) -> int:
        self._need(8)
        (v,) = _I64.unpack_from(self.data, self.pos)
        self.pos += 8
        return int(v)

    def lsn(self) -> int:
        self._need(8)
        (v,) = _U64.unpack_from(self.data, self.pos)
        self.pos += 8
        return int(v)

    def timestamp_us(self) -> int:
        return self.int64() + PG_EPOCH_OFFSET_US

    def string(self) -> str:
        end = self.data.find(b"\x00", self.pos)
        if end < 0:
            raise PgOutputError(f"pgoutput {chr(self.data[0])!r} message: unterminated string at {self.pos}")
        raw = self.data[self.pos : end]
        self.pos = end + 1
        return _text(raw)

    def raw(self, n: int) -> bytes:
        if n < 0:
            raise PgOutputError(f"pgoutput {chr(self.data[0])!r} message: negative length {n}")
        self._need(n)
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def _checked_tuple(self) -> tuple[ColumnValue, ...]:
        count = self.int16()
        values: list[ColumnValue] = []
        for _ in range(count):
            kind = self.byte()
            if kind == 0x74:  # 't'
                values.append(_text(self.raw(self.int32())))
            elif kind == 0x6E:  # 'n'
                values.append(None)
            elif kind == 0x75:  # 'u'
                values.append(UNCHANGED_TOAST)
            elif kind == 0x62:  # 'b'
                values.append(self.raw(self.int32()))
            else:
                raise PgOutputError(f"unknown tuple column kind {chr(kind)!r} at offset {self.pos - 1}")
        return tuple(values)

    def tuple(self) -> tuple[ColumnValue, ...]:
        """A TupleData: read by ``_texts`` in one pass without a check per read (the common
        case, texts and NULLs); anything else, or anything wrong, read again by
        ``_checked_tuple``, which names the fault."""
        try:
            values, self.pos = _texts(self.data, self.pos)
        except (_Irregular, struct.error, IndexError, UnicodeDecodeError):
            return self._checked_tuple()
        return values

    def done(self) -> None:
        if self.pos != len(self.data):
            raise PgOutputError(
                f"pgoutput {chr(self.data[0])!r} message has {len(self.data) - self.pos} unexpected "
                "trailing bytes"
            )


def _texts(data: bytes, pos: int) -> tuple[tuple[ColumnValue, ...], int]:
    """The TupleData at ``pos`` when its columns are all texts and NULLs, and where it ends;
    ``_Irregular`` (or the error of a read past the end) otherwise. One pass with no check
    per read: a fifth of a CDC record's cost in ``benchmarks/jdbc_source.py`` before it."""
    (count,) = _I16.unpack_from(data, pos)
    pos += 2
    values: list[ColumnValue] = []
    for _ in range(count):
        kind = data[pos]
        if kind == 0x74:  # 't'
            (n,) = _I32.unpack_from(data, pos + 1)
            pos += 5 + n
            if n < 0 or pos > len(data):
                raise _Irregular
            values.append(data[pos - n : pos].decode("utf-8"))
        elif kind == 0x6E:  # 'n'
            values.append(None)
            pos += 1
        else:
            raise _Irregular
    return tuple(values), pos


def inserted_row(payload: bytes) -> tuple[ColumnValue, ...]:
    """The new row of an Insert payload (``decode(payload).new``, read the quick way when it
    is texts and NULLs); ``PgOutputError`` for anything but a well-formed Insert."""
    try:
        values, end = _texts(payload, 6)
        if end == len(payload) and payload[:1] == b"I" and payload[5] == 0x4E:
            return values
    except (_Irregular, struct.error, IndexError, UnicodeDecodeError):
        pass
    message = decode(payload)
    if not isinstance(message, Insert):
        raise PgOutputError(f"pgoutput {chr(payload[0])!r} message where an Insert was read")
    return message.new


def new_columns(messages: Sequence[Insert | Update | bytes], width: int) -> list[list[ColumnValue]]:
    """The new rows of ``messages`` (an Insert's or Update's ``new``, or ``inserted_row`` of
    an Insert's payload) as ``width`` columns, payloads read here in one loop straight into
    the columns: no call, list or tuple per row (a bulk load's runs are all payloads; a
    fifth of reading them, ``benchmarks/jdbc_source.py``). ``ValueError`` for a row of
    another width, ``PgOutputError`` for a malformed payload."""
    columns: list[list[ColumnValue]] = [[] for _ in range(width)]
    adds = [c.append for c in columns]
    unpack_i16, unpack_i32 = _I16.unpack_from, _I32.unpack_from
    for i, m in enumerate(messages):
        if type(m) is bytes:
            try:  # _texts, inline
                if unpack_i16(m, 6)[0] != width:
                    raise _Irregular
                pos = 8
                for add in adds:
                    kind = m[pos]
                    if kind == 0x74:  # 't'
                        (n,) = unpack_i32(m, pos + 1)
                        if n < 0:
                            raise _Irregular
                        pos += 5 + n
                        # (A text past the end: the next read fails, or the check of the end.)
                        add(m[pos - n : pos].decode())  # UTF-8 (named, 15 ns a value more)
                    elif kind == 0x6E:  # 'n'
                        add(None)
                        pos += 1
                    else:
                        raise _Irregular
                if pos != len(m) or m[5] != 0x4E or m[0] != 0x49:
                    raise _Irregular
                continue
            except (_Irregular, struct.error, IndexError, UnicodeDecodeError):
                for column in columns:
                    del column[i:]  # what this row added before the quick read gave up
                row = inserted_row(m)
        else:
            row = m.new  # type: ignore[union-attr]
        if len(row) != width:
            raise ValueError(f"a row of {len(row)} columns among rows of {width}")
        for add, value in zip(adds, row, strict=True):
            add(value)
    return columns


def _text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        # The replication connection asks for UTF-8; anything else is a server we cannot read.
        raise PgOutputError(f"pgoutput text is not UTF-8: {exc}") from None


def _begin(r: _Reader) -> Begin:
    return Begin(final_lsn=r.lsn(), commit_time_us=r.timestamp_us(), xid=r.uint32())


def _commit(r: _Reader) -> Commit:
    return Commit(flags=r.byte(), commit_lsn=r.lsn(), end_lsn=r.lsn(), commit_time_us=r.timestamp_us())


def _origin(r: _Reader) -> Origin:
    return Origin(commit_lsn=r.lsn(), name=r.string())


def _relation(r: _Reader) -> Relation:
    relation_id = r.uint32()
    namespace = r.string()
    name = r.string()
    identity = chr(r.byte())
    columns = []
    for _ in range(r.int16()):
        flags = r.byte()
        columns.append(
            RelationColumn(
                is_key=bool(flags & 1), name=r.string(), type_oid=r.uint32(), type_modifier=r.int32()
            )
        )
    return Relation(relation_id, namespace, name, identity, tuple(columns))


def _type(r: _Reader) -> TypeMessage:
    return TypeMessage(type_oid=r.uint32(), namespace=r.string(), name=r.string())


def _expect(r: _Reader, wanted: bytes) -> int:
    kind = r.byte()
    if bytes((kind,)) not in wanted:
        raise PgOutputError(
            f"pgoutput {chr(r.data[0])!r} message: expected one of {wanted!r} at offset {r.pos - 1}, "
            f"got {chr(kind)!r}"
        )
    return kind


def _insert(r: _Reader) -> Insert:
    relation_id = r.uint32()
    _expect(r, b"N")
    return Insert(relation_id, r.tuple())


def _update(r: _Reader) -> Update:
    relation_id = r.uint32()
    kind = _expect(r, b"KON")
    old: tuple[ColumnValue, ...] | None = None
    key_only = False
    if kind != 0x4E:  # an old tuple first, then N
        old = r.tuple()
        key_only = kind == 0x4B
        _expect(r, b"N")
    return Update(relation_id, old, key_only, r.tuple())


def _delete(r: _Reader) -> Delete:
    relation_id = r.uint32()
    kind = _expect(r, b"KO")
    return Delete(relation_id, r.tuple(), kind == 0x4B)


def _truncate(r: _Reader) -> Truncate:
    count = r.int32()
    options = r.byte()
    ids = tuple(r.uint32() for _ in range(count))
    return Truncate(ids, cascade=bool(options & 1), restart_identity=bool(options & 2))


def _message(r: _Reader) -> LogicalMessage:
    flags = r.byte()
    lsn = r.lsn()
    prefix = r.string()
    content = r.raw(r.int32())
    return LogicalMessage(bool(flags & 1), lsn, prefix, content)


_DECODERS: dict[int, Callable[[_Reader], Message]] = {
    ord("B"): _begin,
    ord("C"): _commit,
    ord("O"): _origin,
    ord("R"): _relation,
    ord("Y"): _type,
    ord("I"): _insert,
    ord("U"): _update,
    ord("D"): _delete,
    ord("T"): _truncate,
    ord("M"): _message,
}


def decode(payload: bytes) -> Message:
    """The message in one pgoutput payload; ``PgOutputError`` if it is malformed or unknown."""
    if type(payload) is bytes and payload[:1] == b"I" and len(payload) > 7 and payload[5] == 0x4E:
        # An insert of texts and NULLs (a bulk load streams little else), read without
        # the checked reader's calls: about a third of decoding it (benchmarks/jdbc_source.py).
        try:
            values, end = _texts(payload, 6)
        except (_Irregular, struct.error, IndexError, UnicodeDecodeError):
            pass  # the checked reader names what is wrong
        else:
            if end == len(payload):
                return Insert(_U32.unpack_from(payload, 1)[0], values)
    if not payload:
        raise PgOutputError("empty pgoutput message")
    decoder = _DECODERS.get(payload[0])
    if decoder is None:
        # Stream (S/E/c/A) and two-phase messages only come with protocol versions >= 2.
        raise PgOutputError(f"unknown pgoutput message type {chr(payload[0])!r} (protocol version 1)")
    reader = _Reader(bytes(payload))
    message = decoder(reader)
    reader.done()
    return message
