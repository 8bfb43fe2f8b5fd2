"""A connection's answers on their way out: queued in one turn of the event loop and written
together, and what must wait until they are written."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)


# Queued responses past this size are written at once rather than at the end of the loop's
# turn, so a pipeline of large Fetch answers is not held in memory beyond this.
COALESCE_BYTES = 1 << 16


class ResponseQueue:
    """A connection's responses, written once per turn of the event loop.

    One write per response cost a system call each; in ``tests/fuzz/
    test_broker_frames_million.py`` (400 pipelined requests a connection) the writes were
    the largest single cost of the broker's loop.
    """

    __slots__ = ("_after", "_loop", "_pending", "_scheduled", "_size", "_writer")

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._loop = asyncio.get_running_loop()
        self._writer = writer
        self._pending: list[bytes] = []
        self._size = 0
        self._scheduled = False
        self._after: list[tuple[Callable[..., object], tuple[Any, ...]]] = []

    def put(self, data: bytes) -> None:
        self._pending.append(data)
        self._size += len(data)
        if self._size >= COALESCE_BYTES:
            self.flush()
        else:
            self._schedule()

    def after(self, fn: Callable[..., object], *args: Any) -> None:
        """Run ``fn(*args)`` right after the next write (``RequestContext.after_answer``).

        EndTxn's markers go here: they are on the path of the transaction's answer only if
        they run before it is written, and a callback queued with ``call_soon`` by the
        handler would run before this connection's flush, which is queued after it
        (``benchmarks/eos_source.py``). Run in the flush's own callback, they still come
        before any request read after the answer is handled."""
        self._after.append((fn, args))
        self._schedule()

    def _schedule(self) -> None:
        if not self._scheduled:
            self._scheduled = True
            self._loop.call_soon(self.flush)

    def flush(self) -> None:
        """Hand what is queued to the transport (a closed one drops it, as a write would),
        then run what waits for that."""
        self._scheduled = False
        pending = self._pending
        try:
            if pending:
                self._pending = []
                self._size = 0
                if not self._writer.is_closing():
                    # One write of the joined bytes, not writelines: asyncio's writelines did
                    # not apply the transport's flow control in some 3.12/3.13 releases
                    # (CPython gh-127655), which drain_if_full relies on, and TLS transports
                    # encrypt each item as its own record.
                    self._writer.write(pending[0] if len(pending) == 1 else b"".join(pending))
        finally:
            after, self._after = self._after, []
            for fn, args in after:
                try:
                    fn(*args)
                except Exception:
                    log.exception("callback after an answer failed: %r", fn)
