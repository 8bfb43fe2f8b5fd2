"""Limits that keep one client, or one host, from taking the broker's resources.

- ``max.connections`` and ``max.connections.per.ip`` (with
  ``max.connections.per.ip.overrides``, ``host:n,host:n``) as in Kafka: a connection
  above a limit is closed at once, before anything is read from it.
- ``socket.request.read.timeout.ms`` (Sluiceway's own; Kafka has no key for it): once
  the first byte of a request has arrived, the whole frame must arrive within this
  time, so a client that starts a request and then trickles or stalls (slowloris)
  loses its connection instead of holding it until ``connections.max.idle.ms``.
- Writes: a client that never reads its responses makes the broker wait, not buffer:
  past a high water mark the connection waits for the socket to drain, and a client
  that does not read within ``connections.max.idle.ms`` is closed.

``socket.request.max.bytes`` is checked on the size prefix, before the frame's bytes
are read (``broker.protocol.framing.frame_size``).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Final

from broker.protocol.codec import ProtocolError
from broker.protocol.framing import frame_size

# Responses queued beyond this wait for the client to read; bounds per-connection memory
# to this plus one response.
WRITE_HIGH_WATER: Final = 4 << 20
INT_MAX: Final = 2**31 - 1


class RequestReadTimeout(ProtocolError):
    """A client began a request and did not finish sending it in time."""


class ResponseWriteTimeout(ProtocolError):
    """A client stopped reading its responses."""


def parse_overrides(value: str) -> dict[str, int]:
    """``max.connections.per.ip.overrides``: ``host:n,host:n`` (IPv6 hosts may contain ':')."""
    out: dict[str, int] = {}
    for item in (v.strip() for v in value.split(",")):
        if not item:
            continue
        host, sep, count = item.rpartition(":")
        host = host.strip().strip("[]")
        if not sep or not host or not count.strip().isdigit():
            raise ValueError(f"entry {item!r} is not of the form host:count")
        out[host] = int(count)
    return out


class ConnectionLimits:
    """Counts open connections per client address and says whether one more may stay."""

    def __init__(self, max_connections: int, per_ip: int, overrides: dict[str, int] | None = None) -> None:
        self.max_connections = max_connections
        self.per_ip = per_ip
        self.overrides = overrides or {}
        self._open: Counter[str] = Counter()
        self._total = 0

    def admit(self, host: str) -> str | None:
        """Count a new connection from ``host``; ``None`` if it may stay, else why it may not
        (and then it is not counted)."""
        if self._total >= self.max_connections:
            return f"{self._total} connections are open (max.connections={self.max_connections})"
        limit = self.overrides.get(host, self.per_ip)
        if self._open[host] >= limit:
            return f"{self._open[host]} connections from {host} are open (max.connections.per.ip={limit})"
        self._open[host] += 1
        self._total += 1
        return None

    def release(self, host: str) -> None:
        self._open[host] -= 1
        self._total -= 1
        if self._open[host] <= 0:
            del self._open[host]

    def count(self, host: str) -> int:
        return self._open[host]


class Deadline:
    """A connection's one timer for its idle deadline (``connections.max.idle.ms``) and
    its request-read deadline (``socket.request.read.timeout.ms``).

    ``asyncio.timeout`` around each read made a timer (a heap entry) and a context
    manager per frame, twice a frame: a fifth of the broker's loop in
    ``tests/fuzz/test_broker_frames_million.py``. Here setting a deadline only stores a
    time. The timer is armed at most ``period`` ahead (the shorter of the two timeouts,
    and every deadline is at least that far off when set), so it never fires after a
    deadline set since; when it fires before the deadline it re-arms, and when the
    deadline has passed it cancels the connection's task, which ``read_frame`` turns into
    the timeout. The price: a waiting connection's timer fires once per ``period`` (every
    30 s with the default read timeout).
    """

    __slots__ = ("_expired", "_handle", "_idle", "_loop", "_period", "_task", "_when", "idle_s", "read_s")

    def __init__(self, task: asyncio.Task[None], idle_s: float | None, read_s: float) -> None:
        self._loop = task.get_loop()
        self._task = task
        self.idle_s = idle_s  # None: connections are never closed for idleness
        self.read_s = read_s
        self._period = min(read_s, idle_s) if idle_s is not None else read_s
        self._handle: asyncio.TimerHandle | None = None
        self._when: float | None = None
        self._idle = False  # the deadline set is the idle one, not a request's
        self._expired: bool | None = None  # fired and not yet taken: whether it was the idle one

    def expect_request(self) -> None:
        """From now the connection must send a request within ``idle_s``."""
        self._expect(self.idle_s, idle=True)

    def expect_rest_of_frame(self) -> None:
        """A request has begun: its frame must be complete within ``read_s``."""
        self._expect(self.read_s, idle=False)

    def _expect(self, delay_s: float | None, idle: bool) -> None:
        if delay_s is None:
            self._when = None
            return
        now = self._loop.time()
        self._when = now + delay_s
        self._idle = idle
        if self._handle is None:
            self._handle = self._loop.call_at(now + self._period, self._fire)

    def clear(self) -> None:
        self._when = None

    def close(self) -> None:
        self._when = None
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _fire(self) -> None:
        self._handle = None
        when = self._when
        if when is None:
            return  # armed again by the next expect
        now = self._loop.time()
        if now < when:
            self._handle = self._loop.call_at(min(when, now + self._period), self._fire)
            return
        self._when = None
        self._expired = self._idle
        self._task.cancel()

    def take_expiry(self) -> bool | None:
        """After a cancellation: ``None`` if it was not (only) this deadline's, else whether
        it was the idle one (and the task is no longer being cancelled)."""
        idle = self._expired
        if idle is None:
            return None
        self._expired = None
        if self._task.uncancel() > 0:
            return None  # cancelled by someone else as well (the server stopping): theirs wins
        return idle


async def read_frame(reader: asyncio.StreamReader, deadline: Deadline, max_bytes: int) -> bytes | None:
    """The next request frame (without its size prefix), or ``None`` when the connection
    stayed idle past its deadline. Raises ``RequestReadTimeout`` when a started frame does
    not complete in time, ``FrameTooLarge`` before reading an oversized one."""
    try:
        deadline.expect_request()
        first = await reader.readexactly(1)
        deadline.expect_rest_of_frame()
        prefix = first + await reader.readexactly(3)
        frame = await reader.readexactly(frame_size(prefix, max_bytes))
    except asyncio.CancelledError:
        idle = deadline.take_expiry()
        if idle is None:
            raise  # not ours: the server is stopping
        if idle:
            return None
        raise RequestReadTimeout(
            f"request not complete after {deadline.read_s * 1000:.0f} ms (socket.request.read.timeout.ms)"
        ) from None
    finally:
        deadline.clear()
    return frame


async def drain_if_full(writer: asyncio.StreamWriter, timeout_s: float | None) -> None:
    """Wait for the client to read when too much is queued for it; give up after ``timeout_s``."""
    if writer.transport.get_write_buffer_size() <= WRITE_HIGH_WATER:
        return
    try:
        await asyncio.wait_for(writer.drain(), timeout_s)
    except TimeoutError:
        # close() would keep the queued bytes until the client reads them: drop them.
        writer.transport.abort()
        raise ResponseWriteTimeout(
            f"client read none of {writer.transport.get_write_buffer_size()} queued response bytes "
            f"in {timeout_s} s (connections.max.idle.ms)"
        ) from None
