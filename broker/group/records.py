"""Kafka's ``__consumer_offsets`` record formats, so the topic reads like Kafka's own.

Keys: version 1 = offset commit (group, topic, partition); version 2 = group
metadata (group). Values: OffsetCommitValue v3 and GroupMetadataValue v3, as in
Kafka's ``group-coordinator`` message definitions. A null value is a tombstone.
Pure encode/decode; no I/O.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field


class _Writer:
    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def i16(self, v: int) -> _Writer:
        self.parts.append(struct.pack(">h", v))
        return self

    def i32(self, v: int) -> _Writer:
        self.parts.append(struct.pack(">i", v))
        return self

    def i64(self, v: int) -> _Writer:
        self.parts.append(struct.pack(">q", v))
        return self

    def string(self, v: str | None) -> _Writer:
        if v is None:
            return self.i16(-1)
        b = v.encode()
        self.i16(len(b))
        self.parts.append(b)
        return self

    def blob(self, v: bytes | None) -> _Writer:
        if v is None:
            return self.i32(-1)
        self.i32(len(v))
        self.parts.append(v)
        return self

    def done(self) -> bytes:
        return b"".join(self.parts)


class _Reader:
    def __init__(self, buf: bytes) -> None:
        self.buf = buf
        self.pos = 0

    def _take(self, fmt: str) -> int:
        (v,) = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += struct.calcsize(fmt)
        return int(v)

    def i16(self) -> int:
        return self._take(">h")

    def i32(self) -> int:
        return self._take(">i")

    def i64(self) -> int:
        return self._take(">q")

    def string(self) -> str | None:
        n = self.i16()
        if n < 0:
            return None
        v = self.buf[self.pos : self.pos + n].decode()
        self.pos += n
        return v

    def blob(self) -> bytes:
        n = self.i32()
        if n < 0:
            return b""
        v = self.buf[self.pos : self.pos + n]
        self.pos += n
        return v


@dataclass(frozen=True, slots=True)
class OffsetKey:
    group: str
    topic: str
    partition: int


@dataclass(frozen=True, slots=True)
class GroupKey:
    group: str


@dataclass(frozen=True, slots=True)
class OffsetValue:
    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int


@dataclass(frozen=True, slots=True)
class MemberValue:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    subscription: bytes
    assignment: bytes


@dataclass(frozen=True, slots=True)
class GroupValue:
    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    state_timestamp: int
    members: tuple[MemberValue, ...] = field(default_factory=tuple)


def encode_offset_key(k: OffsetKey) -> bytes:
    return _Writer().i16(1).string(k.group).string(k.topic).i32(k.partition).done()


def encode_group_key(k: GroupKey) -> bytes:
    return _Writer().i16(2).string(k.group).done()


def encode_offset_value(v: OffsetValue) -> bytes:
    return (
        _Writer().i16(3).i64(v.offset).i32(v.leader_epoch).string(v.metadata).i64(v.commit_timestamp).done()
    )


def encode_group_value(v: GroupValue) -> bytes:
    w = _Writer().i16(3).string(v.protocol_type).i32(v.generation).string(v.protocol).string(v.leader)
    w.i64(v.state_timestamp).i32(len(v.members))
    for m in v.members:
        w.string(m.member_id).string(m.group_instance_id).string(m.client_id).string(m.client_host)
        w.i32(m.rebalance_timeout_ms).i32(m.session_timeout_ms).blob(m.subscription).blob(m.assignment)
    return w.done()


def decode_key(raw: bytes) -> OffsetKey | GroupKey | None:
    """The key of a ``__consumer_offsets`` record, or None for kinds this broker ignores."""
    r = _Reader(raw)
    version = r.i16()
    if version in (0, 1):
        return OffsetKey(r.string() or "", r.string() or "", r.i32())
    if version == 2:
        return GroupKey(r.string() or "")
    return None


def decode_offset_value(raw: bytes) -> OffsetValue:
    r = _Reader(raw)
    version = r.i16()
    offset = r.i64()
    epoch = r.i32() if version >= 3 else -1
    metadata = r.string() or ""
    ts = r.i64()
    return OffsetValue(offset, epoch, metadata, ts)


def decode_group_value(raw: bytes) -> GroupValue:
    r = _Reader(raw)
    version = r.i16()
    protocol_type = r.string() or ""
    generation = r.i32()
    protocol = r.string()
    leader = r.string()
    ts = r.i64() if version >= 2 else -1
    members = []
    for _ in range(r.i32()):
        member_id = r.string() or ""
        instance = r.string() if version >= 3 else None
        client_id = r.string() or ""
        host = r.string() or ""
        rebalance = r.i32() if version >= 1 else 0
        session = r.i32()
        members.append(
            MemberValue(
                member_id, instance, client_id, host, rebalance or session, session, r.blob(), r.blob()
            )
        )
    return GroupValue(protocol_type, generation, protocol, leader, ts, tuple(members))


def java_string_hash(s: str) -> int:
    """``String.hashCode()`` over UTF-16 code units, as a signed int32."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def partition_for(group: str, partitions: int) -> int:
    """Kafka's ``Utils.abs(groupId.hashCode) % offsets.topic.num.partitions``."""
    return (java_string_hash(group) & 0x7FFFFFFF) % partitions
