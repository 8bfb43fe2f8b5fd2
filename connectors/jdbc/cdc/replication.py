"""The replication connection: creating the slot, streaming pgoutput, confirming positions.

A thin layer over psycopg2's ``ReplicationCursor``: ``create_slot`` issues
``CREATE_REPLICATION_SLOT ... LOGICAL pgoutput`` (with ``EXPORT_SNAPSHOT`` when the
snapshot must line up with the stream: the exported snapshot stays valid while this
connection stays idle, which it does until the snapshot is read), ``start`` begins
streaming the publication with protocol version 1, ``read`` returns the next message
without blocking longer than asked, and ``confirm`` reports the flush position that the
``AckTracker`` allows (psycopg2 sends it with its periodic status updates, or at once
when forced). Errors are translated by ``faults``.
"""

from __future__ import annotations

import selectors
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from connect.api import ConnectException
from connectors.jdbc.cdc.catalog import quote_ident
from connectors.jdbc.cdc.connection import ConnectionSettings, close_quietly, connect
from connectors.jdbc.cdc.faults import translate
from connectors.jdbc.cdc.offsets import parse_lsn

__all__ = ["CreatedSlot", "ReplicationMessage", "ReplicationStream", "SlotInUse"]

# SQLSTATE object_in_use: "replication slot ... is active for PID ...".
OBJECT_IN_USE = "55006"


class SlotInUse(ConnectException):
    """Another connection streams from the slot (maybe this connector's previous, dying one)."""


@dataclass(frozen=True, slots=True)
class CreatedSlot:
    consistent_lsn: int  # streaming starts exactly here
    snapshot_name: str | None  # the exported snapshot, valid while the connection stays idle


# Not frozen: a frozen __init__ costs 2.5x, paid per message (benchmarks/jdbc_source.py).
@dataclass(slots=True)
class ReplicationMessage:
    lsn: int  # where the message was sent from (0 for Relation and Type messages)
    payload: bytes


class ReplicationStream:
    def __init__(
        self, settings: ConnectionSettings, slot: str, publication: str, status_interval_s: float
    ) -> None:
        self.settings = settings
        self.slot = slot
        self.publication = publication
        self.status_interval_s = status_interval_s
        self._conn: Any = None
        # Waits for the connection's socket. Not select.select: it refuses descriptors from
        # 1024 on, which a worker (or a test process) with many connections reaches.
        self._ready: selectors.BaseSelector | None = None
        self._cursor: Any = None
        self._read_errors: tuple[type[BaseException], ...] = (OSError, ValueError)
        self.streaming = False

    def open(self) -> None:
        import psycopg2

        # Caught per message read: named once here, not imported per call.
        self._read_errors = (psycopg2.Error, OSError, ValueError)
        self._conn = connect(self.settings, replication=True)
        self._cursor = self._conn.cursor()
        if self._ready is not None:
            self._ready.close()
        self._ready = selectors.DefaultSelector()
        self._ready.register(self._conn.fileno(), selectors.EVENT_READ)

    def _fail(self, exc: BaseException, what: str) -> Exception:
        return translate(exc, what, self.settings)

    def create_slot(self, export_snapshot: bool) -> CreatedSlot:
        import psycopg2

        action = "EXPORT_SNAPSHOT" if export_snapshot else "NOEXPORT_SNAPSHOT"
        try:
            self._cursor.execute(
                f"CREATE_REPLICATION_SLOT {quote_ident(self.slot)} LOGICAL pgoutput {action}"
            )
            _name, consistent_point, snapshot_name, _plugin = self._cursor.fetchone()
        except psycopg2.Error as exc:
            raise self._fail(exc, f'creating replication slot "{self.slot}"') from None
        return CreatedSlot(parse_lsn(consistent_point), snapshot_name)

    def start(self) -> None:
        import psycopg2

        try:
            self._cursor.start_replication(
                slot_name=self.slot,
                decode=False,
                start_lsn=0,  # the slot's confirmed position
                options={"proto_version": "1", "publication_names": self.publication},
                status_interval=self.status_interval_s,
            )
        except psycopg2.Error as exc:
            if getattr(exc, "pgcode", None) == OBJECT_IN_USE:
                raise SlotInUse(str(exc).strip()) from None
            raise self._fail(exc, f'starting replication from slot "{self.slot}"') from None
        self.streaming = True

    def read(self, timeout_s: float) -> ReplicationMessage | None:
        """The next message, waiting at most ``timeout_s`` for one to arrive (0: do not wait)."""
        try:
            msg = self._cursor.read_message()
            if msg is None and timeout_s > 0:
                assert self._ready is not None
                self._ready.select(timeout_s)
                msg = self._cursor.read_message()
        except self._read_errors as exc:
            raise self._fail(exc, f'reading from replication slot "{self.slot}"') from None
        if msg is None:
            return None
        return ReplicationMessage(msg.data_start, msg.payload)

    def read_while(self, take: Callable[[bytes, int], bool], most: int) -> ReplicationMessage | None:
        """Hand messages that have arrived to ``take`` (payload, LSN) while it takes them, at
        most ``most``; the first one it does not take, or None. A run's inserts come this way:
        no ``read`` call or message object each (``benchmarks/jdbc_source.py``)."""
        read = self._cursor.read_message
        try:
            for _ in range(most):
                msg = read()
                if msg is None:
                    return None
                if not take(msg.payload, msg.data_start):
                    return ReplicationMessage(msg.data_start, msg.payload)
        except self._read_errors as exc:
            raise self._fail(exc, f'reading from replication slot "{self.slot}"') from None
        return None

    @property
    def wal_end(self) -> int:
        """The server's WAL position as of the last message or keepalive."""
        return int(self._cursor.wal_end) if self._cursor is not None else 0

    def confirm(self, lsn: int, force: bool = False) -> None:
        """Report everything before ``lsn`` as durably consumed (sent now if ``force``)."""
        import psycopg2

        try:
            self._cursor.send_feedback(write_lsn=lsn, flush_lsn=lsn, force=force)
        except psycopg2.Error as exc:
            raise self._fail(exc, f'confirming LSN on replication slot "{self.slot}"') from None

    def close(self) -> None:
        if self._ready is not None:
            self._ready.close()
            self._ready = None
        close_quietly(self._conn)
        self._conn = self._cursor = None
        self.streaming = False

    @property
    def is_open(self) -> bool:
        return self._conn is not None and not self._conn.closed
