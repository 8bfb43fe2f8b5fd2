"""The task plumbing Debezium's CDC tasks share: reading the stored offset, one poll at a time,
a stop that waits for it, and the retry of a lost connection with a doubling wait.

The worker calls ``poll`` and ``stop`` from different threads; a lock makes the connections
one poll's at a time, and a stop that finds a poll running leaves the closing to it.
"""

from __future__ import annotations

import logging
import threading
import time
from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn, TypeVar

from connect.api import ConnectException, RetriableException, SourceRecord, SourceTask

__all__ = ["FIRST_BACKOFF_S", "SerialSourceTask", "now_us"]

_Offset = TypeVar("_Offset")

FIRST_BACKOFF_S = 0.5


def now_us() -> int:
    """The processing time of events, in microseconds since the epoch."""
    return time.time_ns() // 1000


class SerialSourceTask(SourceTask):
    """A source task whose polls run one at a time. Subclasses call ``_init_serial`` in ``start``
    and implement ``_step`` (one poll's work), ``_on_error`` (close what an error broke, then
    raise) and ``_shutdown`` (close everything, once)."""

    def _init_serial(self) -> None:
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._closed = False
        self._backoff_s = FIRST_BACKOFF_S

    @staticmethod
    def _parse_stored(
        parse: Callable[[Mapping[str, Any] | None], _Offset | None],
        raw: Mapping[str, Any] | None,
        server: str,
    ) -> _Offset | None:
        """The committed offset ``raw`` as ``parse`` reads it (None: none stored); an offset of
        another shape (``parse`` raised ValueError) fails the task, saying what to do."""
        try:
            return parse(raw)
        except ValueError as exc:
            raise ConnectException(
                f"the stored offset of server {server!r} is not this connector's ({exc}); "
                "delete the connector's offsets to start over"
            ) from None

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
