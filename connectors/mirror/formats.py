"""MirrorMaker 2's internal record formats, byte for byte as Kafka writes them.

Kafka serializes offset syncs, checkpoints and heartbeats with its protocol ``Struct``
layouts (``OffsetSync``, ``Checkpoint``, ``Heartbeat``): fields one after another, no
names; a STRING is an int16 byte length then UTF-8, integers are big-endian
(INT16/INT32/INT64). Checkpoint and heartbeat values start with an int16 version (0);
offset-sync values have none. Sharing the layouts lets a Kafka MirrorMaker and this one
read each other's internal topics, and Kafka's ``RemoteClusterUtils`` read our checkpoints.

Decoding is strict where Kafka's own writer could not have produced the bytes (short
buffers, negative string lengths, trailing bytes after a version-0 record, invalid UTF-8)
and raises ``DataException`` naming the record type, the field and the byte position.
A value with a version above 0 is read with the version-0 fields and the rest ignored,
as Kafka does (its version check is only an assertion).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, Final, Self

from connect.api.errors import DataException

VERSION: Final = 0  # the only version of checkpoint and heartbeat values
_MAX_STRING: Final = 0x7FFF  # Java's Short.MAX_VALUE: Kafka refuses longer STRINGs

_INT16: Final = struct.Struct(">h")
_INT32: Final = struct.Struct(">i")
_INT64: Final = struct.Struct(">q")


class _Writer:
    def __init__(self, what: str) -> None:
        self.what = what
        self.parts: list[bytes] = []

    def string(self, field: str, value: str) -> _Writer:
        try:
            data = value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise DataException(f"{self.what}: {field} is not encodable as UTF-8 ({exc.reason})") from None
        if len(data) > _MAX_STRING:
            raise DataException(
                f"{self.what}: {field} is {len(data)} bytes in UTF-8, "
                f"longer than the {_MAX_STRING} a STRING holds"
            )
        self.parts += (_INT16.pack(len(data)), data)
        return self

    def _int(self, layout: struct.Struct, bits: int, field: str, value: int) -> _Writer:
        try:
            self.parts.append(layout.pack(value))
        except struct.error:
            raise DataException(f"{self.what}: {field}={value} does not fit in INT{bits}") from None
        return self

    def int16(self, field: str, value: int) -> _Writer:
        return self._int(_INT16, 16, field, value)

    def int32(self, field: str, value: int) -> _Writer:
        return self._int(_INT32, 32, field, value)

    def int64(self, field: str, value: int) -> _Writer:
        return self._int(_INT64, 64, field, value)

    def done(self) -> bytes:
        return b"".join(self.parts)


class _Reader:
    def __init__(self, what: str, data: bytes | None) -> None:
        if data is None:
            raise DataException(f"{what}: no bytes (null)")
        self.what = what
        self.data = bytes(data)
        self.pos = 0

    def _take(self, field: str, size: int) -> bytes:
        if self.pos + size > len(self.data):
            raise DataException(
                f"{self.what}: {field} needs {size} bytes at byte {self.pos}, "
                f"only {len(self.data) - self.pos} left of {len(self.data)}"
            )
        chunk = self.data[self.pos : self.pos + size]
        self.pos += size
        return chunk

    def int16(self, field: str) -> int:
        value: int = _INT16.unpack(self._take(field, 2))[0]
        return value

    def int32(self, field: str) -> int:
        value: int = _INT32.unpack(self._take(field, 4))[0]
        return value

    def int64(self, field: str) -> int:
        value: int = _INT64.unpack(self._take(field, 8))[0]
        return value

    def string(self, field: str) -> str:
        at = self.pos
        size = self.int16(f"{field}'s length")
        if size < 0:
            raise DataException(f"{self.what}: {field} has a negative length {size} at byte {at}")
        raw = self._take(field, size)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataException(f"{self.what}: {field} at byte {at} is not UTF-8 ({exc.reason})") from None

    def end(self) -> None:
        if self.pos != len(self.data):
            raise DataException(
                f"{self.what}: {len(self.data) - self.pos} unexpected bytes "
                f"after the last field at byte {self.pos}"
            )

    def version(self) -> int:
        version = self.int16("version")
        if version < 0:
            raise DataException(f"{self.what}: version {version} is negative")
        return version


@dataclass(frozen=True, slots=True)
class OffsetSync:
    """Record of the offset-syncs topic: ``upstream_offset`` of ``topic``/``partition`` on
    the source was written at ``downstream_offset`` of the replica on the target."""

    topic: str
    partition: int
    upstream_offset: int
    downstream_offset: int

    def key(self) -> bytes:
        return (
            _Writer("offset sync key").string("topic", self.topic).int32("partition", self.partition).done()
        )

    def value(self) -> bytes:
        return (
            _Writer("offset sync value")
            .int64("upstreamOffset", self.upstream_offset)
            .int64("offset", self.downstream_offset)
            .done()
        )

    @classmethod
    def decode(cls, key: bytes, value: bytes) -> Self:
        k = _Reader("offset sync key", key)
        topic, partition = k.string("topic"), k.int32("partition")
        k.end()
        v = _Reader("offset sync value", value)
        upstream, downstream = v.int64("upstreamOffset"), v.int64("offset")
        v.end()
        return cls(topic, partition, upstream, downstream)


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """Record of ``<source>.checkpoints.internal`` on the target: consumer ``group``'s
    committed ``upstream_offset`` on the source translates to ``downstream_offset`` of
    ``topic`` (already named as on the target) and ``partition``; ``metadata`` is the
    group's commit metadata."""

    group: str
    topic: str
    partition: int
    upstream_offset: int
    downstream_offset: int
    metadata: str

    def key(self) -> bytes:
        return (
            _Writer("checkpoint key")
            .string("group", self.group)
            .string("topic", self.topic)
            .int32("partition", self.partition)
            .done()
        )

    def value(self) -> bytes:
        return (
            _Writer("checkpoint value")
            .int16("version", VERSION)
            .int64("upstreamOffset", self.upstream_offset)
            .int64("offset", self.downstream_offset)
            .string("metadata", self.metadata)
            .done()
        )

    @classmethod
    def decode(cls, key: bytes, value: bytes) -> Self:
        k = _Reader("checkpoint key", key)
        group, topic, partition = k.string("group"), k.string("topic"), k.int32("partition")
        k.end()
        v = _Reader("checkpoint value", value)
        version = v.version()
        upstream, downstream, metadata = v.int64("upstreamOffset"), v.int64("offset"), v.string("metadata")
        if version == VERSION:
            v.end()
        return cls(group, topic, partition, upstream, downstream, metadata)

    def source_partition(self) -> dict[str, Any]:
        """The Connect source partition Kafka's MirrorCheckpointTask gives this record."""
        return {"group": self.group, "topic": self.topic, "partition": self.partition}


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """Record of the ``heartbeats`` topic: ``source_alias`` → ``target_alias`` was alive
    at ``timestamp`` (ms since the epoch)."""

    source_alias: str
    target_alias: str
    timestamp: int

    def key(self) -> bytes:
        return (
            _Writer("heartbeat key")
            .string("sourceClusterAlias", self.source_alias)
            .string("targetClusterAlias", self.target_alias)
            .done()
        )

    def value(self) -> bytes:
        return _Writer("heartbeat value").int16("version", VERSION).int64("timestamp", self.timestamp).done()

    @classmethod
    def decode(cls, key: bytes, value: bytes) -> Self:
        k = _Reader("heartbeat key", key)
        source, target = k.string("sourceClusterAlias"), k.string("targetClusterAlias")
        k.end()
        v = _Reader("heartbeat value", value)
        version = v.version()
        timestamp = v.int64("timestamp")
        if version == VERSION:
            v.end()
        return cls(source, target, timestamp)

    def source_partition(self) -> dict[str, Any]:
        """The Connect source partition Kafka's MirrorHeartbeatTask gives this record."""
        return {"sourceClusterAlias": self.source_alias, "targetClusterAlias": self.target_alias}
