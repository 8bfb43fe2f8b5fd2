"""Serving the REST app inside the worker's event loop (uvicorn's ``Server``, embedded).

The worker owns signals and shutdown, so uvicorn's own signal capture is turned off;
``stop`` ends the server gracefully. Listeners are Kafka's ``listeners`` values
(``http://host:port`` or ``https://host:port``, several allowed; an empty host means every
interface, port 0 a free port); each gets its own uvicorn server on the same app, and the
https ones share one ``ssl.SSLContext`` built from the worker's TLS keys
(``connect.rest.tls``).

The URL the worker advertises to the others follows Kafka's ``RestServer``: the scheme is
``rest.advertised.listener`` if set, else ``http`` if any listener is http, else ``https``;
the port is that listener's (or ``rest.advertised.port``), the host
``rest.advertised.host.name`` or the listener's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import ssl
from collections.abc import Generator
from dataclasses import dataclass
from urllib.parse import urlsplit

import uvicorn
from fastapi import FastAPI

from connect.api.errors import ConnectException
from connect.rest.limits import RequestBodyLimit, RestLimits, guarded_h11
from connect.rest.tls import server_context, tls_settings
from connect.runtime.config import WorkerConfig

log = logging.getLogger(__name__)


class _EmbeddedServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


def parse_listener(listener: str) -> tuple[str, str, int]:
    """(scheme, host, port) of ``http://host:port`` or ``https://host:port``."""
    parts = urlsplit(listener.strip())
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme not in ("http", "https") or (port is None and not listener.rstrip().endswith(":0")):
        raise ConnectException(
            f"listener {listener!r} is not of the form http://host:port or https://host:port"
        )
    return parts.scheme, parts.hostname or "", port or 0


def choose_advertised_scheme(schemes: list[str], advertised_listener: str | None) -> str:
    """Kafka's choice of the advertised protocol among the listeners' ``schemes``."""
    if advertised_listener:
        return advertised_listener.lower()
    return "http" if "http" in schemes or not schemes else "https"


@dataclass
class _Listener:
    scheme: str
    host: str
    port: int
    server: _EmbeddedServer | None = None
    task: asyncio.Task[None] | None = None

    @property
    def address(self) -> str:
        return f"{self.scheme}://{self.host or '0.0.0.0'}:{self.port}"


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host or "0.0.0.0", port))
        sock.set_inheritable(True)
    except OSError:
        sock.close()
        raise
    return sock


class RestServer:
    def __init__(
        self,
        app: FastAPI,
        listeners: list[str],
        advertised_host: str | None = None,
        advertised_port: int | None = None,
        advertised_scheme: str | None = None,
        config: WorkerConfig | None = None,
    ) -> None:
        """``config`` is the worker's, where https listeners find their TLS keys."""
        if not listeners:
            raise ConnectException("listeners: at least one listener (http://host:port) is needed")
        self.app = app
        self._listeners = [_Listener(*parse_listener(item)) for item in listeners]
        self.config = config
        self.limits = RestLimits.of(config)
        self._protocol = guarded_h11(self.limits)  # one class: connections per IP count across listeners
        scheme = choose_advertised_scheme([item.scheme for item in self._listeners], advertised_scheme)
        chosen = next((item for item in self._listeners if item.scheme == scheme), None)
        if chosen is None:
            raise ConnectException(
                f"rest.advertised.listener={scheme}: no {scheme} listener among listeners="
                + ",".join(listeners)
            )
        self._advertised = chosen
        self.advertised_host = advertised_host
        self.advertised_port = advertised_port

    # The advertised listener's scheme, host and (once bound) port.
    @property
    def scheme(self) -> str:
        return self._advertised.scheme

    @property
    def host(self) -> str:
        return self._advertised.host

    @property
    def port(self) -> int:
        return self._advertised.port

    def _ssl_context(self) -> ssl.SSLContext | None:
        if not any(item.scheme == "https" for item in self._listeners):
            return None
        if self.config is None:
            raise ConnectException(
                "an https listener needs the worker's ssl.* (or listeners.https.ssl.*) keys"
            )
        return server_context(tls_settings(self.config))

    async def start(self) -> None:
        context = self._ssl_context()
        try:
            for item in self._listeners:
                await self._start_listener(item, context)
        except BaseException:
            await self.stop()
            raise
        log.info(
            "REST server listening on %s, advertised as %s",
            ", ".join(item.address for item in self._listeners),
            self.url,
        )

    async def _start_listener(self, item: _Listener, context: ssl.SSLContext | None) -> None:
        try:
            sock = _bind(item.host, item.port)
        except OSError as exc:
            raise ConnectException(f"REST server could not listen on {item.address}: {exc}") from None
        https = item.scheme == "https"
        config = uvicorn.Config(
            RequestBodyLimit(self.app, self.limits.request_max_bytes),
            log_config=None,
            access_log=False,
            lifespan="off",
            loop="none",
            http=self._protocol,
            limit_concurrency=self.limits.max_connections,
            timeout_keep_alive=self.limits.keep_alive_timeout_s,
            # uvicorn asks a factory for the context of an https server; ours is built already.
            ssl_context_factory=(lambda _config, _default: context) if https and context else None,
        )
        server = _EmbeddedServer(config)
        item.server = server
        item.task = asyncio.create_task(server.serve(sockets=[sock]), name=f"rest-server-{item.address}")
        while not server.started:
            if item.task.done():
                failure = item.task.exception()
                raise ConnectException(f"REST server could not listen on {item.address}: {failure}")
            await asyncio.sleep(0.01)
        item.port = int(sock.getsockname()[1])

    @property
    def url(self) -> str:
        host = self.advertised_host or self.host or socket.gethostname()
        if host in ("0.0.0.0", "::"):
            host = socket.gethostname()
        if ":" in host:
            host = f"[{host}]"
        return f"{self.scheme}://{host}:{self.advertised_port or self.port}/"

    @property
    def worker_id(self) -> str:
        """Kafka's worker id: the advertised host:port."""
        parts = urlsplit(self.url)
        return f"{parts.hostname}:{parts.port}"

    async def stop(self) -> None:
        for item in self._listeners:
            if item.server is not None:
                item.server.should_exit = True
        for item in self._listeners:
            if item.task is None:
                continue
            try:
                await asyncio.wait_for(item.task, 10)
            except (TimeoutError, asyncio.CancelledError):
                item.task.cancel()
            except Exception as exc:  # a server that failed to start has said why already
                log.debug("REST listener %s ended with %s", item.address, exc)
            item.task = None
