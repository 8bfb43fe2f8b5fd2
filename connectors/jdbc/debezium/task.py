"""The task plumbing Debezium's CDC tasks share: one poll at a time, a stop that waits for it,
and the retry of a lost connection with a doubling wait.

The worker calls ``poll`` and ``stop`` from different threads; a lock makes the connections
one poll's at a time, and a stop that finds a poll running leaves the closing to it.
"""

from __future__ import annotations

import logging
import threading
from abc import abstractmethod
from collections.abc import Sequence
from typing import NoReturn

from connect.api import RetriableException, SourceRecord, SourceTask

__all__ = ["FIRST_BACKOFF_S", "SerialSourceTask"]

FIRST_BACKOFF_S = 0.5


class SerialSourceTask(SourceTask):
    """A source task whose polls run one at a time. Subclasses call ``_init_serial`` in ``start``
    and implement ``_step`` (one poll's work), ``_on_error`` (close what an error broke, then
    raise) and ``_shutdown`` (close everything, once)."""

    def _init_serial(self) -> None:
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._closed = False
        self._backoff_s = FIRST_BACKOFF_S

    def stop(self) -> None:
        self._stopping.set()
        # A poll in progress returns within poll.interval.ms; then close here. If it does not,
        # the poll closes the connections itself when it sees the flag.
        if self._lock.acquire(timeout=5):
            try:
                self._shutdown()
            finally:
                self._lock.release()

    def poll(self) -> Sequence[SourceRecord] | None:
        with self._lock:
            if self._stopping.is_set():
                self._shutdown()
                return None
            try:
                records = self._step()
            except Exception as exc:
                self._on_error(exc)
            finally:
                if self._stopping.is_set():
                    self._shutdown()
        return records or None

    @abstractmethod
    def _step(self) -> Sequence[SourceRecord]: ...

    @abstractmethod
    def _on_error(self, exc: Exception) -> NoReturn: ...

    @abstractmethod
    def _shutdown(self) -> None: ...

    def _retry_later(self, error: RetriableException, exc: Exception, longest_wait_ms: int) -> NoReturn:
        """Raise ``error`` for the worker to poll again after a wait: the server's own hint, or the
        current backoff, which doubles up to ``longest_wait_ms`` (retriable.restart.connector.wait.ms)."""
        delay = error.retry_after if error.retry_after is not None else self._backoff_s
        self._backoff_s = min(self._backoff_s * 2, max(longest_wait_ms / 1000, 0.1))
        # logged as the connector's own task module, where its other messages come from
        logging.getLogger(type(self).__module__).warning("%s; retrying in %.1f s", error, delay)
        raise RetriableException(str(error), retry_after=delay) from exc
