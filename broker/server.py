"""Networking and lifecycle: listeners, one read loop per connection, start and stop.

Each connection reads a frame, handles it, queues the response, then reads the
next: responses go out in request order, as Kafka guarantees (Kafka mutes a
channel while a request is in flight). Pipelined requests wait in the socket
buffer meanwhile. A connection that sends garbage is closed with one log line;
every other connection keeps being served.

Responses queued in one turn of the event loop go out in one write (``broker.responses``):
pipelined requests whose frames are already buffered are read and handled without
the loop turning, so a client that pipelines (librdkafka keeps several requests in
flight) gets their answers in one system call instead of one each.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import socket
import threading
import time
from collections.abc import Callable

from broker.broker import Broker, RequestContext
from broker.config import BrokerConfig, Listener
from broker.connection_limits import ConnectionLimits, Deadline, drain_if_full, parse_overrides, read_frame
from broker.descriptors import raise_soft_limit
from broker.handlers import HANDLERS
from broker.handlers.api_versions import unsupported_version_response
from broker.metrics_server import MetricsServer
from broker.periodic import every
from broker.protocol.codec import ProtocolError, UnsupportedVersion, decode_request, encode_response
from broker.protocol.framing import FrameTooLarge
from broker.protocol.versions import ApiKey
from broker.responses import ResponseQueue
from broker.security.connection import ConnectionSecurity
from broker.security.listeners import PLAINTEXT_LISTENER, ListenerSecurity, listener_security

log = logging.getLogger(__name__)

# How long a stopping broker lets a client read the answers it was sent before it drops them.
_STOPPING_GRACE_S = 1.0


class BrokerServer:
    def __init__(self, config: BrokerConfig, clock_ms: Callable[[], int] | None = None) -> None:
        self.config = config
        self.broker = Broker(config, clock_ms)
        self._servers: list[asyncio.Server] = []
        self._connections: set[asyncio.Task[None]] = set()
        self._reported: set[tuple[int, str]] = set()
        self._limits = ConnectionLimits(
            config.max_connections,
            config.max_connections_per_ip,
            parse_overrides(config.max_connections_per_ip_overrides),
        )
        self._stopped = asyncio.Event()
        self._closing = False
        self._tasks: list[asyncio.Task[None]] = []
        self.metrics_server: MetricsServer | None = None

    @property
    def endpoints(self) -> list[Listener]:
        return self.broker.endpoints

    @property
    def bootstrap(self) -> str:
        ep = self.broker.endpoint
        return f"{ep.host}:{ep.port}"

    async def start(self) -> None:
        # Three open files per partition plus a socket per client: take what the hard limit
        # allows, as the JVM does for Kafka.
        raise_soft_limit()
        self.broker.open()
        listeners = self.config.listener_list()
        advertised = {a.name: a for a in self.config.advertised_list()}
        endpoints = []
        try:
            for lst in listeners:
                security = listener_security(lst.name, self.config.model_extra or {})
                server = await asyncio.start_server(
                    functools.partial(self._serve_connection, security=security),
                    lst.host or None,
                    lst.port,
                    reuse_address=True,
                    limit=1 << 16,
                    ssl=security.ssl_context,
                )
                self._servers.append(server)
                port = server.sockets[0].getsockname()[1]
                adv = advertised.get(lst.name, lst)
                host = adv.host or (lst.host if lst.host not in ("", "0.0.0.0", "::") else socket.getfqdn())
                endpoints.append(Listener(lst.name, host, adv.port if adv.port and adv is not lst else port))
        except BaseException:
            for s in self._servers:
                s.close()
            self.broker.close()
            raise
        self.broker.endpoints = endpoints
        if self.config.metrics_listener:
            self.metrics_server = MetricsServer(self.config.metrics_listener, self.broker.metrics.registry)
            try:
                await self.metrics_server.start()
            except BaseException:
                for s in self._servers:
                    s.close()
                self.broker.close()
                raise
        self.broker.logs.start_background()
        self._tasks.append(
            every(
                self.config.offsets_retention_check_interval_ms / 1000,
                self.broker.groups.expire_offsets,
                "offsets-retention",
            )
        )
        self._tasks.extend(self.broker.transactions.start_background())
        log.info(
            "Sluiceway broker %d started, cluster %s, listening on %s, log.dirs=%s",
            self.broker.node_id,
            self.broker.cluster_id,
            ", ".join(str(e) for e in endpoints),
            self.broker.logs.data_dir,
        )

    async def serve_forever(self) -> None:
        await self._stopped.wait()

    async def stop(self) -> None:
        if self._stopped.is_set():
            return
        log.info("shutting down")
        self._closing = True
        for task in self._tasks:
            task.cancel()
        if self.metrics_server is not None:
            await self.metrics_server.stop()
        for s in self._servers:
            s.close()
        for task in list(self._connections):
            task.cancel()
        if self._connections:
            await asyncio.gather(*self._connections, return_exceptions=True)
        for s in self._servers:
            with contextlib.suppress(Exception):
                await s.wait_closed()
        # Let a compaction in progress finish before its files are closed.
        for plog in list(self.broker.logs.logs.values()):
            async with plog.cleaning:
                pass
        self.broker.close()
        self._stopped.set()
        log.info("shut down cleanly")

    # -- connections -------------------------------------------------------------------

    async def _serve_connection(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        security: ListenerSecurity = PLAINTEXT_LISTENER,
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        peer = writer.get_extra_info("peername")
        host = str(peer[0]) if peer else "?"
        where = f"{host}:{peer[1]}" if peer else "?"
        refused = self._limits.admit(host)
        if refused is not None:
            log.info("rejected connection from %s: %s", where, refused)
            self._connections.discard(task)
            writer.close()
            return
        client_id: str | None = None
        idle_s = self.config.connections_max_idle_ms / 1000 or None
        read_s = self.config.socket_request_read_timeout_ms / 1000
        metrics = self.broker.metrics
        # Who the connection is: a certificate's DN on SSL, the SASL user once authenticated.
        conn = ConnectionSecurity(security, self.broker.scram, writer.get_extra_info("ssl_object"))
        responses = ResponseQueue(writer)
        deadline = Deadline(task, idle_s, read_s)
        try:
            while True:
                frame = await read_frame(reader, deadline, self.config.socket_request_max_bytes)
                if frame is None:
                    log.debug("closing idle connection from %s", where)
                    return
                try:
                    req = decode_request(frame)
                except UnsupportedVersion as exc:
                    if exc.api_key == ApiKey.API_VERSIONS:
                        responses.put(unsupported_version_response(exc.correlation_id))
                        await drain_if_full(writer, idle_s)
                        continue
                    log.warning("closing connection from %s: %s", where, exc)
                    return
                client_id = req.client_id
                ctx = RequestContext(
                    self.broker,
                    req.api_key,
                    req.api_version,
                    req.correlation_id,
                    req.client_id,
                    host,
                    principal=conn.principal,
                    listener=conn.listener,
                    after_answer=responses.after,
                )
                if not conn.passes(req.api_key):
                    # Before SASL authentication: only the SASL exchange (others close the connection).
                    response, close = conn.authenticate(ctx, req.body)
                    responses.put(encode_response(req.correlation_id, response))
                    if close:
                        return  # (its answer goes out as the connection ends)
                    await drain_if_full(writer, idle_s)
                    continue
                started = time.perf_counter()
                try:
                    response = await HANDLERS[req.api_key](ctx, req.body)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    self._report(req.api_key, req.api_version, exc, where, client_id)
                    return
                metrics.request_done(req.api_key, started)
                if response is not None:
                    responses.put(encode_response(req.correlation_id, response))
                    await drain_if_full(writer, idle_s)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the client went away
        except asyncio.CancelledError:
            # Shutdown cancels connections; ending normally keeps asyncio's stream
            # callback from logging the cancellation as an error.
            if not self._closing:
                raise
        except FrameTooLarge as exc:
            log.warning(
                "closing connection from %s (client %s): %s (socket.request.max.bytes)", where, client_id, exc
            )
        except ProtocolError as exc:
            log.warning("closing connection from %s (client %s): %s", where, client_id, exc)
        finally:
            deadline.close()
            try:
                # What was answered before the connection ended still goes (a refused frame
                # after valid ones closes it, and the client reads the valid ones' answers).
                responses.flush()
            finally:
                writer.close()
                # Still counted (and awaited by stop()) until its last answers are read or
                # dropped: it holds their memory until then.
                try:
                    await self._closed(writer, idle_s or read_s)
                finally:
                    self._limits.release(host)
                    self._connections.discard(task)

    async def _closed(self, writer: asyncio.StreamWriter, grace_s: float) -> None:
        """Let the client read what is still queued for it, for up to ``grace_s``
        (``connections.max.idle.ms``, else ``socket.request.read.timeout.ms``) or a second
        once the broker is stopping, then drop it: ``close()`` keeps the bytes until they
        are read, so a client that never reads would hold this connection, and ``stop()``
        with it, for as long as it likes."""
        try:
            await asyncio.wait_for(writer.wait_closed(), _STOPPING_GRACE_S if self._closing else grace_s)
        except TimeoutError:
            writer.transport.abort()
        except asyncio.CancelledError:
            writer.transport.abort()
            if not self._closing:
                raise
            # stop() cancelled the wait: the connection is dropped, which is all it wants.
        except Exception:
            pass  # the connection ended with an error: it is closed either way

    def _report(self, api_key: int, version: int, exc: Exception, where: str, client_id: str | None) -> None:
        """A handler failed: our bug or input we did not anticipate. One traceback per kind, then one line."""
        kind = (api_key, type(exc).__name__)
        name = ApiKey(api_key).name
        if kind in self._reported:
            log.error(
                "closing connection from %s (client %s): %s v%d failed: %s",
                where,
                client_id,
                name,
                version,
                exc,
            )
        else:
            self._reported.add(kind)
            log.exception(
                "closing connection from %s (client %s): %s v%d failed", where, client_id, name, version
            )


class EmbeddedBroker:
    """A broker on its own thread and event loop inside another process (tests, workers)."""

    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self.server: BrokerServer | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def bootstrap(self) -> str:
        assert self.server is not None
        return self.server.bootstrap

    def start(self, timeout: float = 30.0) -> EmbeddedBroker:
        self._thread = threading.Thread(target=self._run, name="sluiceway-broker", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise TimeoutError("embedded broker did not start")
        if self._error is not None:
            raise self._error
        return self

    def _run(self) -> None:
        loop = _new_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            self.server = BrokerServer(self.config)
            loop.run_until_complete(self.server.start())
        except BaseException as exc:
            self._error = exc
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        try:
            loop.run_until_complete(self.server.serve_forever())
        finally:
            loop.close()

    def stop(self, timeout: float = 30.0) -> None:
        if self._loop is None or self.server is None or self._thread is None:
            return
        if self._thread.is_alive():
            fut = asyncio.run_coroutine_threadsafe(self.server.stop(), self._loop)
            fut.result(timeout)
            self._thread.join(timeout)

    def __enter__(self) -> EmbeddedBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _new_loop() -> asyncio.AbstractEventLoop:
    try:
        import uvloop

        return uvloop.new_event_loop()
    except ImportError:
        return asyncio.new_event_loop()
