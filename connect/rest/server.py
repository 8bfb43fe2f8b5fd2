"""Serving the REST app inside the worker's event loop (uvicorn's ``Server``, embedded).

The worker owns signals and shutdown, so uvicorn's own signal capture is turned off;
``stop`` ends the server gracefully. Listeners are Kafka's ``listeners`` values
(``http://host:port``; an empty host means every interface, port 0 a free port).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Generator
from urllib.parse import urlsplit

import uvicorn
from fastapi import FastAPI

from connect.api.errors import ConnectException

log = logging.getLogger(__name__)


class _EmbeddedServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


def parse_listener(listener: str) -> tuple[str, str, int]:
    """(scheme, host, port) of ``http://host:port``."""
    parts = urlsplit(listener.strip())
    if parts.scheme not in ("http", "https") or (parts.port is None and not listener.rstrip().endswith(":0")):
        raise ConnectException(f"listener {listener!r} is not of the form http://host:port")
    return parts.scheme, parts.hostname or "", parts.port or 0


class RestServer:
    def __init__(
        self,
        app: FastAPI,
        listeners: list[str],
        advertised_host: str | None = None,
        advertised_port: int | None = None,
        advertised_scheme: str | None = None,
    ) -> None:
        self.app = app
        self.scheme, self.host, self.port = parse_listener(listeners[0])
        self.advertised_host = advertised_host
        self.advertised_port = advertised_port
        self.advertised_scheme = advertised_scheme
        self._server: _EmbeddedServer | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        config = uvicorn.Config(
            self.app,
            host=self.host or "0.0.0.0",
            port=self.port,
            log_config=None,
            access_log=False,
            lifespan="off",
            loop="none",
            http="h11",
        )
        server = _EmbeddedServer(config)
        self._server = server
        self._task = asyncio.create_task(server.serve(), name="rest-server")
        while not server.started:
            if self._task.done():
                exc = self._task.exception()
                raise ConnectException(f"REST server could not listen on {self.host}:{self.port}: {exc}")
            await asyncio.sleep(0.01)
        bound = server.servers[0].sockets[0].getsockname()
        self.port = int(bound[1])
        log.info(
            "REST server listening on %s://%s:%d, advertised as %s",
            self.scheme,
            self.host or "0.0.0.0",
            self.port,
            self.url,
        )

    @property
    def url(self) -> str:
        host = self.advertised_host or self.host or socket.gethostname()
        if host in ("0.0.0.0", "::"):
            host = socket.gethostname()
        return f"{self.advertised_scheme or self.scheme}://{host}:{self.advertised_port or self.port}/"

    @property
    def worker_id(self) -> str:
        """Kafka's worker id: the advertised host:port."""
        parts = urlsplit(self.url)
        return f"{parts.hostname}:{parts.port}"

    async def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._task is not None:
            try:
                await asyncio.wait_for(self._task, 10)
            except (TimeoutError, asyncio.CancelledError):
                self._task.cancel()
