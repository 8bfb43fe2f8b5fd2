"""The connector's watch on the database's tables (Confluent's ``TableMonitorThread``).

Every ``table.poll.interval.ms`` a background thread lists the tables again; when the
set changed (a table was created or dropped) it asks the framework for new task
configurations, which spread the new set over the tasks. A failing listing (the
database briefly unreachable) is logged and tried again next interval; any other
error fails the connector through ``raise_error``, so nothing stops unnoticed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from sqlalchemy import exc as sa_exc

from connect.api import ConnectException
from connectors.jdbc.query.database import describe_error
from connectors.jdbc.query.tables import TableId

log = logging.getLogger(__name__)

_JOIN_TIMEOUT_S = 10.0


class TableMonitor:
    """Calls ``find`` every ``interval_s``; ``on_change`` when its answer differs."""

    def __init__(
        self,
        find: Callable[[], list[TableId]],
        interval_s: float,
        on_change: Callable[[], None],
        on_error: Callable[[BaseException], None],
        initial: list[TableId],
    ) -> None:
        self._find = find
        self._interval_s = interval_s
        self._on_change = on_change
        self._on_error = on_error
        self._tables = list(initial)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="jdbc-source-table-monitor", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def tables(self) -> list[TableId]:
        """The tables found by the last listing."""
        with self._lock:
            return list(self._tables)

    def check(self) -> bool:
        """List the tables now; True when they changed since the last listing."""
        found = self._find()
        with self._lock:
            changed = found != self._tables
            previous, self._tables = self._tables, found
        if changed:
            added = sorted(t.fqn for t in set(found) - set(previous))
            dropped = sorted(t.fqn for t in set(previous) - set(found))
            log.info("tables changed (added: %s; dropped: %s): reconfiguring tasks", added, dropped)
        return changed

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            try:
                changed = self.check()
            except (sa_exc.SQLAlchemyError, ConnectException) as exc:
                log.warning(
                    "listing the tables failed, trying again in %.0f s: %s",
                    self._interval_s,
                    describe_error(exc),
                )
                continue
            except Exception as exc:
                log.exception("the table monitor failed")
                self._on_error(exc)
                return
            if changed and not self._stop.is_set():
                self._on_change()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(_JOIN_TIMEOUT_S)
