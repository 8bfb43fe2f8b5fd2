"""Limits of the REST server: body size, connections per client, slow requests.

uvicorn and h11 bound a request's head (``h11_max_incomplete_event_size``, 16 KiB)
and the number of concurrent connections (``limit_concurrency``: 503 above it), and
close idle keep-alive connections (``timeout_keep_alive``). What they leave open is
added here:

- ``rest.request.max.bytes``: a larger body is answered 413 with Kafka Connect's
  error body, from its ``Content-Length`` or while it streams in, before the app runs;
- ``rest.max.connections.per.ip``: a connection above it is closed at once;
- ``rest.request.read.timeout.ms``: a connection that does not deliver a whole request
  (head and body) within this time after it opened, or after its previous response,
  is closed. uvicorn has no such timer (its keep-alive timer starts only after a
  response), so a slowloris client could otherwise hold a connection forever.

The body is read in full (within the limit) before the app is called and replayed to
it, so a client that disconnects mid-body never reaches a handler.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections import Counter
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any, ClassVar

import h11
import orjson
from uvicorn.protocols.http.h11_impl import H11Protocol

from connect.runtime.config import WorkerConfig

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class RestLimits:
    request_max_bytes: int = 4 << 20
    request_read_timeout_ms: int = 30_000
    max_connections: int = 1000
    max_connections_per_ip: int = 2**31 - 1
    keep_alive_timeout_ms: int = 5000

    @classmethod
    def of(cls, config: WorkerConfig | None) -> RestLimits:
        if config is None:
            return cls()
        return cls(
            config.rest_request_max_bytes,
            config.rest_request_read_timeout_ms,
            config.rest_max_connections,
            config.rest_max_connections_per_ip,
            config.rest_keep_alive_timeout_ms,
        )

    @property
    def keep_alive_timeout_s(self) -> int:
        return max(1, math.ceil(self.keep_alive_timeout_ms / 1000))


async def _too_large(send: Send, size: int, limit: int) -> None:
    body = orjson.dumps(
        {"error_code": 413, "message": f"Request body of {size} bytes exceeds rest.request.max.bytes={limit}"}
    )
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            # The rest of the body is not read: the connection cannot carry another request.
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class RequestBodyLimit:
    """ASGI middleware: a body above ``max_bytes`` gets 413 and never reaches ``app``."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope["headers"]:
            # h11 has checked Content-Length is a number and refused conflicting ones.
            if name == b"content-length" and int(value) > self.max_bytes:
                await _too_large(send, int(value), self.max_bytes)
                return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # nobody to answer
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await _too_large(send, size, self.max_bytes)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body: Message | None = {"type": "http.request", "body": b"".join(chunks), "more_body": False}

        async def replay() -> Message:
            nonlocal body
            if body is not None:
                first, body = body, None
                return first
            return await receive()

        await self.app(scope, replay, send)


def guarded_h11(limits: RestLimits) -> type[H11Protocol]:
    """uvicorn's h11 protocol with the per-IP and request-read limits; the connection counts
    are shared by every server (listener) given the returned class."""

    class GuardedH11Protocol(_GuardedH11Protocol):
        pass

    GuardedH11Protocol.limits = limits
    GuardedH11Protocol.open_per_ip = Counter()
    return GuardedH11Protocol


class _GuardedH11Protocol(H11Protocol):
    limits: ClassVar[RestLimits]
    open_per_ip: ClassVar[Counter[str]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._counted: str | None = None
        self._read_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        host = self.client[0] if self.client else "?"
        limit = self.limits.max_connections_per_ip
        if self.open_per_ip[host] >= limit:
            log.info("REST: rejected connection from %s: rest.max.connections.per.ip=%d reached", host, limit)
            transport.close()
            return
        self.open_per_ip[host] += 1
        self._counted = host
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._counted is not None:
            self.open_per_ip[self._counted] -= 1
            if self.open_per_ip[self._counted] <= 0:
                del self.open_per_ip[self._counted]
            self._counted = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._counted is None:
            return  # rejected; closing
        if self.conn.their_state is h11.IDLE:
            self._arm()  # a new request begins
        super().data_received(data)
        if self.conn.their_state not in (h11.IDLE, h11.SEND_BODY):
            self._disarm()  # the whole request is in

    def _arm(self) -> None:
        if self._read_deadline is None:
            self._read_deadline = self.loop.call_later(
                self.limits.request_read_timeout_ms / 1000, self._read_timed_out
            )

    def _disarm(self) -> None:
        if self._read_deadline is not None:
            self._read_deadline.cancel()
            self._read_deadline = None

    def _read_timed_out(self) -> None:
        self._read_deadline = None
        if not self.transport.is_closing():
            log.info(
                "REST: closing connection from %s: no complete request within %d ms "
                "(rest.request.read.timeout.ms)",
                self.client[0] if self.client else "?",
                self.limits.request_read_timeout_ms,
            )
            self.transport.close()
