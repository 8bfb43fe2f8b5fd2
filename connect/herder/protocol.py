"""Kafka Connect's group sub-protocols: worker metadata and assignments, byte for byte.

Workers join their group with JoinGroup ``protocol_type="connect"`` and offer one or more
sub-protocols by name (:class:`ConnectProtocolCompatibility`); the coordinator picks one
that every member offers. Each offer carries the worker's *metadata*, and the leader hands
each member an *assignment* through SyncGroup. These are the byte layouts of Kafka's
``ConnectProtocol`` (V0) and ``IncrementalCooperativeConnectProtocol`` (V1, V2), so a
Sluiceway worker can share a group with Kafka Connect workers.

Encoding uses Kafka's protocol types: big-endian INT16/INT32/INT64, STRING = int16 length
+ UTF-8, ARRAY = int32 count + elements (-1 = null where the field is nullable),
NULLABLE_BYTES = int32 length + bytes (-1 = null). Every message starts with an int16
version::

    Metadata V0     version url:STRING config-offset:INT64
    Metadata V1/V2  ... then allocation:NULLABLE_BYTES  (a serialized assignment: what the
                    worker runs now; null when it has never been assigned anything)
    Assignment V0   version error:INT16 leader:STRING leader-url:STRING config-offset:INT64
                    assignment:[connector:STRING tasks:[INT32]]
    Assignment V1+  ... then revoked:[same shape] delay:INT32

In an assignment list, task ``-1`` stands for the connector itself, so ``{"c", [-1, 0, 2]}``
means connector ``c`` and its tasks 0 and 2. V2 (``sessioned``) has V1's layout; the version
only says that internal REST requests are signed (KIP-507).

Decoding follows Kafka's readers: any version >= 0 is accepted, and a version newer than
this module knows is read by the prefix it shares with the newest known one (extra bytes
are ignored). V1+ assignments tolerate missing trailing fields (assignment and revoked
default to empty, delay to 0) and null arrays, as ``TOLERATE_MISSING_FIELDS_WITH_DEFAULTS``
does in Kafka. Malformed input raises :class:`ProtocolError` naming the field and the byte
offset (counted from the start of the outermost buffer, also inside an embedded allocation).
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field

from connect.runtime.status import ConnectorTaskId

NO_ERROR = 0
CONFIG_MISMATCH = 1  # the leader's configs were behind a member's: read the config topic, rejoin
CONNECTOR_TASK = -1  # the task id that stands for the connector instance on the wire

CONNECT_PROTOCOL_V0 = 0
CONNECT_PROTOCOL_V1 = 1
CONNECT_PROTOCOL_V2 = 2
_NEWEST_VERSION = CONNECT_PROTOCOL_V2

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")
_MAX_STRING_BYTES = 0x7FFF


class ProtocolError(ValueError):
    """Bytes that are not a valid Connect metadata or assignment; ``offset`` is where it broke."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"{message} (at byte {offset})")
        self.offset = offset


class ConnectProtocolCompatibility(enum.Enum):
    """A worker's ``connect.protocol`` mode; the value is the sub-protocol name on the wire."""

    EAGER = "default"
    COMPATIBLE = "compatible"
    SESSIONED = "sessioned"

    @property
    def version(self) -> int:
        """The Connect protocol version of this mode: EAGER 0, COMPATIBLE 1, SESSIONED 2."""
        return _VERSIONS[self]

    @classmethod
    def from_name(cls, name: str) -> ConnectProtocolCompatibility:
        """The mode of a sub-protocol name as offered in JoinGroup (``default``, ``compatible``,
        ``sessioned``), case-insensitive, like Kafka's ``fromProtocol``."""
        for mode in cls:
            if mode.value == name.lower():
                return mode
        raise ValueError(f"Not found Connect protocol compatibility mode for protocol: {name}")

    @classmethod
    def from_config(cls, value: str) -> ConnectProtocolCompatibility:
        """The mode named by the ``connect.protocol`` worker config (``eager``, ``compatible``,
        ``sessioned``), case-insensitive, like Kafka's ``compatibility``."""
        for mode in cls:
            if mode.name == value.upper():
                return mode
        raise ValueError(f"Unknown Connect protocol compatibility mode: {value}")

    @classmethod
    def from_version(cls, version: int) -> ConnectProtocolCompatibility:
        for mode in cls:
            if mode.version == version:
                return mode
        raise ValueError(f"Unknown Connect protocol version: {version}")

    def protocols_offered(self) -> list[ConnectProtocolCompatibility]:
        """What a worker in this mode offers in JoinGroup, most preferred first."""
        return [mode for mode in _PREFERENCE if mode.version <= self.version]


_VERSIONS = {
    ConnectProtocolCompatibility.EAGER: CONNECT_PROTOCOL_V0,
    ConnectProtocolCompatibility.COMPATIBLE: CONNECT_PROTOCOL_V1,
    ConnectProtocolCompatibility.SESSIONED: CONNECT_PROTOCOL_V2,
}
_PREFERENCE = (
    ConnectProtocolCompatibility.SESSIONED,
    ConnectProtocolCompatibility.COMPATIBLE,
    ConnectProtocolCompatibility.EAGER,
)


@dataclass(frozen=True)
class Allocation:
    """A set of connectors and tasks: what a worker runs, or what it must start or stop."""

    connectors: frozenset[str] = field(default_factory=frozenset)
    tasks: frozenset[ConnectorTaskId] = field(default_factory=frozenset)

    @classmethod
    def of(cls, connectors: Iterable[str] = (), tasks: Iterable[ConnectorTaskId] = ()) -> Allocation:
        return cls(frozenset(connectors), frozenset(tasks))

    @property
    def is_empty(self) -> bool:
        return not self.connectors and not self.tasks


@dataclass(frozen=True)
class WorkerMetadata:
    """What a worker tells the group when it joins.

    ``url`` is its advertised REST URL, ``config_offset`` how far it has read the config
    topic, ``allocation`` what it runs now (V1/V2 only; ``None`` under V0, or when the
    worker has not been assigned anything since it started).
    """

    url: str
    config_offset: int
    allocation: Allocation | None = None


@dataclass(frozen=True)
class ConnectAssignment:
    """What the leader tells one member after a rebalance.

    ``error`` is :data:`NO_ERROR` or :data:`CONFIG_MISMATCH`. ``leader`` is the leader's
    member id and ``leader_url`` its REST URL (where writes are forwarded). The member may
    act on the assignment only once it has read the config topic up to ``config_offset``.

    Under the eager protocol (V0) ``connectors``/``tasks`` are everything the member should
    run. Under the incremental protocols (V1, V2) they are what it should *start* in
    addition to what it keeps running, ``revoked_*`` what it should *stop*, and
    ``delay_ms`` > 0 asks every member to rejoin after that many milliseconds (work of a
    departed worker is being held for it).
    """

    error: int
    leader: str
    leader_url: str
    config_offset: int
    connectors: tuple[str, ...]
    tasks: tuple[ConnectorTaskId, ...]
    revoked_connectors: tuple[str, ...] = ()
    revoked_tasks: tuple[ConnectorTaskId, ...] = ()
    delay_ms: int = 0

    @property
    def failed(self) -> bool:
        return self.error != NO_ERROR

    def assigned(self) -> Allocation:
        return Allocation.of(self.connectors, self.tasks)

    def revoked(self) -> Allocation:
        return Allocation.of(self.revoked_connectors, self.revoked_tasks)


# -- encoding ------------------------------------------------------------------------------------


def encode_metadata(meta: WorkerMetadata, protocol: ConnectProtocolCompatibility) -> bytes:
    """The JoinGroup metadata a worker offers with ``protocol``.

    EAGER writes V0 (no allocation). COMPATIBLE and SESSIONED write V1 and V2, embedding the
    allocation as an assignment of the same version whose leader fields are empty (Kafka's
    leader reads only the connectors and tasks from it).
    """
    out = bytearray()
    out += _INT16.pack(protocol.version)
    _write_string(out, meta.url, "url")
    out += _INT64.pack(meta.config_offset)
    if protocol is ConnectProtocolCompatibility.EAGER:
        return bytes(out)
    if meta.allocation is None:
        out += _INT32.pack(-1)
    else:
        running = ConnectAssignment(
            NO_ERROR,
            "",
            "",
            meta.config_offset,
            tuple(sorted(meta.allocation.connectors)),
            tuple(sorted(meta.allocation.tasks)),
        )
        embedded = encode_assignment(running, protocol.version)
        out += _INT32.pack(len(embedded))
        out += embedded
    return bytes(out)


def encode_assignment(a: ConnectAssignment, version: int) -> bytes:
    """An assignment as the leader sends it in SyncGroup.

    ``version`` is the chosen sub-protocol's version: 0 writes V0 (which cannot carry
    revocations or a delay, so those must be empty); 1 and 2 write the V1 layout under
    that version number, as Kafka does for ``compatible`` and ``sessioned``.
    Connectors and tasks are grouped per connector in the order given (each connector
    once, its ``-1`` first).
    """
    if not CONNECT_PROTOCOL_V0 <= version <= _NEWEST_VERSION:
        raise ValueError(f"cannot encode a Connect assignment of version {version}")
    if version == CONNECT_PROTOCOL_V0 and (a.revoked_connectors or a.revoked_tasks or a.delay_ms):
        raise ValueError("a V0 (eager) assignment cannot carry revocations or a delay")
    out = bytearray()
    out += _INT16.pack(version)
    out += _pack(_INT16, a.error, "error")
    _write_string(out, a.leader, "leader")
    _write_string(out, a.leader_url, "leader-url")
    out += _pack(_INT64, a.config_offset, "config-offset")
    _write_connector_tasks(out, a.connectors, a.tasks)
    if version >= CONNECT_PROTOCOL_V1:
        _write_connector_tasks(out, a.revoked_connectors, a.revoked_tasks)
        out += _pack(_INT32, a.delay_ms, "delay")
    return bytes(out)


def _pack(fmt: struct.Struct, value: int, name: str) -> bytes:
    try:
        return fmt.pack(value)
    except struct.error:
        raise ValueError(f"{name} {value} does not fit in {fmt.size * 8} bits") from None


def _write_string(out: bytearray, value: str, name: str) -> None:
    data = value.encode("utf-8")
    if len(data) > _MAX_STRING_BYTES:
        raise ValueError(
            f"{name} is {len(data)} bytes long; a Kafka STRING holds at most {_MAX_STRING_BYTES}"
        )
    out += _INT16.pack(len(data))
    out += data


def _write_connector_tasks(
    out: bytearray, connectors: Iterable[str], tasks: Iterable[ConnectorTaskId]
) -> None:
    grouped: dict[str, list[int]] = {}
    for name in dict.fromkeys(connectors):
        grouped[name] = [CONNECTOR_TASK]
    for task in dict.fromkeys(tasks):
        grouped.setdefault(task.connector, []).append(task.task)
    out += _INT32.pack(len(grouped))
    for name, ids in grouped.items():
        _write_string(out, name, "connector")
        out += _INT32.pack(len(ids))
        for task_id in ids:
            out += _pack(_INT32, task_id, "task id")


# -- decoding ------------------------------------------------------------------------------------


class _Reader:
    """Reads Kafka protocol types from ``data``; ``base`` is where ``data`` starts in the
    outermost buffer, so errors point at the right byte even inside embedded bytes."""

    def __init__(self, data: bytes, base: int = 0) -> None:
        self.data = data
        self.pos = 0
        self.base = base

    @property
    def remaining(self) -> int:
        return len(self.data) - self.pos

    def error(self, message: str, at: int | None = None) -> ProtocolError:
        return ProtocolError(message, self.base + (self.pos if at is None else at))

    def _take(self, size: int, what: str) -> bytes:
        if size > self.remaining:
            raise self.error(f"truncated {what}: needs {size} bytes, {self.remaining} left")
        chunk = self.data[self.pos : self.pos + size]
        self.pos += size
        return chunk

    def int16(self, what: str) -> int:
        value: int = _INT16.unpack(self._take(2, what))[0]
        return value

    def int32(self, what: str) -> int:
        value: int = _INT32.unpack(self._take(4, what))[0]
        return value

    def int64(self, what: str) -> int:
        value: int = _INT64.unpack(self._take(8, what))[0]
        return value

    def string(self, what: str) -> str:
        start = self.pos
        length = self.int16(f"{what} length")
        if length < 0:
            raise self.error(f"{what} length {length} cannot be negative", start)
        raw = self._take_sized(length, what, start)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self.error(f"{what} is not valid UTF-8: {exc.reason}", start + 2 + exc.start) from None

    def nullable_bytes(self, what: str) -> tuple[bytes, int] | None:
        """The bytes and where they start (relative to ``data``), or None for a null."""
        start = self.pos
        length = self.int32(f"{what} length")
        if length == -1:
            return None
        if length < 0:
            raise self.error(f"{what} length {length} is invalid", start)
        at = self.pos
        return self._take_sized(length, what, start), at

    def array_count(self, what: str, element_min_size: int, nullable: bool) -> int | None:
        start = self.pos
        count = self.int32(f"{what} count")
        if count == -1 and nullable:
            return None
        if count < 0:
            raise self.error(f"{what} count {count} is invalid", start)
        # Checked up front so a corrupt count fails at once instead of after a long loop.
        if count * element_min_size > self.remaining:
            raise self.error(
                f"{what} count {count} needs at least {count * element_min_size} bytes, "
                f"{self.remaining} left",
                start,
            )
        return count

    def _take_sized(self, length: int, what: str, start: int) -> bytes:
        if length > self.remaining:
            raise self.error(f"{what} length {length} exceeds the {self.remaining} bytes left", start)
        return self._take(length, what)


def _read_version(reader: _Reader, what: str) -> int:
    version = reader.int16(f"{what} version")
    if version < CONNECT_PROTOCOL_V0:
        raise reader.error(f"unsupported {what} version {version}", 0)
    return version


def decode_metadata(data: bytes) -> tuple[int, WorkerMetadata]:
    """(version, metadata) of a member's JoinGroup metadata, any version."""
    reader = _Reader(bytes(data))
    version = _read_version(reader, "metadata")
    url = reader.string("url")
    config_offset = reader.int64("config-offset")
    allocation: Allocation | None = None
    if version >= CONNECT_PROTOCOL_V1 and reader.remaining:
        embedded = reader.nullable_bytes("allocation")
        if embedded is not None:
            raw, at = embedded
            running = _read_assignment(_Reader(raw, reader.base + at))[1]
            allocation = running.assigned()
    return version, WorkerMetadata(url, config_offset, allocation)


def decode_assignment(data: bytes) -> tuple[int, ConnectAssignment]:
    """(version, assignment) of the bytes a member got from SyncGroup, any version."""
    return _read_assignment(_Reader(bytes(data)))


def _read_assignment(reader: _Reader) -> tuple[int, ConnectAssignment]:
    version = _read_version(reader, "assignment")
    error = reader.int16("error")
    leader = reader.string("leader")
    leader_url = reader.string("leader-url")
    config_offset = reader.int64("config-offset")
    # Kafka's V1 reader (which its workers use for every version) defaults whatever is
    # missing at the end; a V0 assignment simply ends here.
    connectors: list[str] = []
    tasks: list[ConnectorTaskId] = []
    revoked_connectors: list[str] = []
    revoked_tasks: list[ConnectorTaskId] = []
    delay_ms = 0
    if reader.remaining:
        _read_connector_tasks(reader, "assignment", connectors, tasks)
    if reader.remaining:
        _read_connector_tasks(reader, "revoked", revoked_connectors, revoked_tasks)
    if reader.remaining:
        delay_ms = reader.int32("delay")
    return version, ConnectAssignment(
        error,
        leader,
        leader_url,
        config_offset,
        tuple(connectors),
        tuple(tasks),
        tuple(revoked_connectors),
        tuple(revoked_tasks),
        delay_ms,
    )


def _read_connector_tasks(
    reader: _Reader, what: str, connectors: list[str], tasks: list[ConnectorTaskId]
) -> None:
    # Smallest entry: an empty connector name (2 bytes) and an empty task list (4 bytes).
    count = reader.array_count(what, 6, nullable=True)
    for _ in range(count or 0):
        name = reader.string(f"{what} connector")
        ids = reader.array_count(f"{what} tasks of {name!r}", 4, nullable=False) or 0
        for _ in range(ids):
            task_id = reader.int32(f"{what} task id of {name!r}")
            if task_id == CONNECTOR_TASK:
                connectors.append(name)
            else:
                tasks.append(ConnectorTaskId(name, task_id))
