"""The replication slot, seen from an ordinary connection: its state, and dropping it.

A slot is only usable by this connector when it is a logical ``pgoutput`` slot of the
connector's database; anything else under the same name is another consumer's, and the
failure says to pick another ``slot.name``. Dropping a slot that a connection still
streams from fails with ``SlotInUse`` (the caller retries: a closed connection's
walsender needs a moment to exit).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from connect.api import ConnectException
from connectors.jdbc.cdc.catalog import Catalog
from connectors.jdbc.cdc.connection import ConnectionSettings, close_quietly, connect
from connectors.jdbc.cdc.faults import FatalDatabaseError
from connectors.jdbc.cdc.offsets import SlotState, parse_lsn
from connectors.jdbc.cdc.replication import OBJECT_IN_USE, SlotInUse

__all__ = ["drop_slot", "drop_slot_when_released", "slot_state"]

log = logging.getLogger(__name__)


def slot_state(catalog: Catalog, name: str, dbname: str) -> tuple[SlotState, int | None]:
    """The slot's state and its confirmed flush LSN (None when it has none)."""
    info = catalog.slot(name)
    if info is None:
        return SlotState.MISSING, None
    if info.slot_type != "logical" or info.plugin != "pgoutput" or info.database != dbname:
        raise FatalDatabaseError(
            f'replication slot "{name}" exists but is a {info.slot_type} slot for plugin {info.plugin} '
            f"in database {info.database!r}, not a pgoutput slot in {dbname!r}: give this connector its "
            "own slot.name"
        )
    confirmed = parse_lsn(info.confirmed_flush_lsn) if info.confirmed_flush_lsn else None
    return (SlotState.LOST if info.wal_status == "lost" else SlotState.USABLE), confirmed


def drop_slot(conn: Any, name: str) -> None:
    """Drop the slot (``conn`` is in autocommit); ``SlotInUse`` while a connection streams from it."""
    import psycopg2

    try:
        with conn.cursor() as cur:
            cur.execute("SELECT pg_drop_replication_slot(%s)", (name,))
    except psycopg2.Error as exc:
        if getattr(exc, "pgcode", None) == OBJECT_IN_USE:
            raise SlotInUse(str(exc).strip()) from None
        raise


def drop_slot_when_released(settings: ConnectionSettings, name: str, timeout_s: float = 10) -> None:
    """``slot.drop.on.stop``: drop the slot once the walsender of our closed connection is gone."""
    import psycopg2

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            conn = connect(settings)
            try:
                with conn.cursor() as cur:
                    cur.execute(
                        "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                        "WHERE slot_name = %s",
                        (name,),
                    )
            finally:
                close_quietly(conn)
            log.info('dropped replication slot "%s" (slot.drop.on.stop)', name)
            return
        except (psycopg2.Error, ConnectException) as exc:
            if time.monotonic() > deadline:
                log.warning('could not drop replication slot "%s": %s', name, exc)
                return
            time.sleep(0.2)
