"""``metrics.listener``: Prometheus scrapes the broker over HTTP at ``/metrics``.

uvicorn serves prometheus-client's ASGI app on the broker's own event loop, so a
scrape reads logs and groups between requests, never while a handler changes them.
The broker owns signals and shutdown, so uvicorn's own signal capture is off.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Generator
from urllib.parse import urlsplit

import uvicorn
from prometheus_client import make_asgi_app
from prometheus_client.registry import CollectorRegistry

log = logging.getLogger(__name__)


class _EmbeddedServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


def parse_metrics_listener(value: str) -> tuple[str, int]:
    """``http://host:port`` (port 0 picks a free one) → (host, port)."""
    parts = urlsplit(value)
    if parts.scheme != "http" or not parts.hostname or parts.port is None or parts.path not in ("", "/"):
        raise ValueError(f"metrics.listener {value!r} is not of the form http://host:port")
    return parts.hostname, parts.port


class MetricsServer:
    def __init__(self, listener: str, registry: CollectorRegistry) -> None:
        self.host, self.port = parse_metrics_listener(listener)
        self._registry = registry
        self._server: _EmbeddedServer | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        config = uvicorn.Config(
            make_asgi_app(self._registry),
            host=self.host,
            port=self.port,
            log_level="warning",
            lifespan="off",
            access_log=False,
        )
        server = _EmbeddedServer(config)
        self._server = server
        self._task = asyncio.create_task(server.serve(), name="metrics-server")
        while not server.started:
            if self._task.done():
                exc = self._task.exception()
                raise OSError(f"metrics.listener: cannot listen on {self.host}:{self.port}: {exc}")
            await asyncio.sleep(0.01)
        self.port = server.servers[0].sockets[0].getsockname()[1]
        log.info("metrics listening on http://%s:%d/metrics", self.host, self.port)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/metrics"

    async def stop(self) -> None:
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            with contextlib.suppress(Exception):
                await self._task
