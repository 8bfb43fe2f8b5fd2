"""The HTTP plumbing the contract servers share.

``TrackedConnections`` gives a threading ``socketserver`` server a thread per connection that
``server_close()`` ends: each live connection is shut down and its thread joined, so a stopped
server looks unreachable (kept-alive clients do not go on talking to it) and leaves no thread
behind. ``ContractHTTPServer`` is that on ``http.server``, binding without DNS look-ups.

``BackgroundServer`` is the lifecycle of a server object that outlives its listening socket:
``start()`` / ``stop()`` (again and again, on the same port), a context manager, ``running``,
``port`` and ``url``. ``ContractHandler`` is the base of their request handlers.

A server in a child process runs ``serve_until_signalled``; its parent waits for it with
``listening_port`` and ends it with ``end_process``.
"""

from __future__ import annotations

import contextlib
import http.server
import os
import selectors
import signal
import socket
import socketserver
import stat
import subprocess
import threading
import time
from types import TracebackType
from typing import Any, ClassVar, Self, cast

__all__ = [
    "BackgroundServer",
    "ContractHTTPServer",
    "ContractHandler",
    "Endpoint",
    "Lifecycle",
    "TrackedConnections",
    "end_process",
    "listening_port",
    "serve_in_background",
    "serve_until_signalled",
    "stop_serving",
]

# How long stop() waits for a thread; a handler stuck longer is left to die with the process.
_JOIN_S = 10.0


class TrackedConnections(socketserver.BaseServer):
    """Mixed in before a ``ThreadingMixIn`` server: a daemon thread named ``worker_name`` per
    connection, which ``server_close()`` cuts off and joins."""

    worker_name: ClassVar[str] = "contract-conn"
    # Small answers written in pieces must not wait out Nagle's algorithm and delayed ACKs.
    tcp_nodelay: ClassVar[bool] = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Set before the base initialiser: a failed bind already calls server_close().
        self._conn_lock = threading.Lock()
        self._connections: dict[int, socket.socket] = {}
        self._workers: set[threading.Thread] = set()
        self._closing = False
        super().__init__(*args, **kwargs)

    def track(self, sock: socket.socket) -> bool:
        """Registers a socket ``server_close()`` must shut down (a TLS layer, an upstream
        connection); False once closing, and then the caller should drop what it is doing."""
        with self._conn_lock:
            if self._closing:
                return False
            self._connections[id(sock)] = sock
            return True

    def untrack(self, sock: socket.socket) -> None:
        with self._conn_lock:
            self._connections.pop(id(sock), None)

    def process_request(self, request: Any, client_address: Any) -> None:
        sock = cast(socket.socket, request)
        if self.tcp_nodelay:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        worker = threading.Thread(
            target=self._serve, args=(sock, client_address), daemon=True, name=self.worker_name
        )
        with self._conn_lock:
            if self._closing:
                self.shutdown_request(sock)
                return
            self._connections[id(sock)] = sock
            if len(self._workers) >= 64:  # forget the threads that have ended
                self._workers = {w for w in self._workers if w.is_alive()}
            self._workers.add(worker)
        worker.start()

    def _serve(self, sock: socket.socket, client_address: Any) -> None:
        try:
            self.finish_request(sock, client_address)
        except Exception:
            self.handle_error(sock, client_address)
        finally:
            # The thread stays in _workers: it is still running here, and server_close()
            # must join it, not miss it (a thread seen alive after stop() was this).
            with self._conn_lock:
                self._connections.pop(id(sock), None)
            self.shutdown_request(sock)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Connections dropped by clients or by ``stop()`` are expected, not worth a traceback."""

    def server_close(self) -> None:
        super().server_close()
        with self._conn_lock:
            self._closing = True
            connections = list(self._connections.values())
            workers = list(self._workers)
        # Kept-alive connections must end too, or a client would go on talking to a stopped server.
        for conn in connections:
            # The base method: SSLSocket.shutdown would drop its SSL object under a reader.
            with contextlib.suppress(OSError):
                socket.socket.shutdown(conn, socket.SHUT_RDWR)
        for worker in workers:
            if worker is not threading.current_thread():
                worker.join(_JOIN_S)


class ContractHandler(http.server.BaseHTTPRequestHandler):
    # Keep-alive, as the real services serve; a handler sets close_connection to end one.
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: a benchmark sends hundreds of thousands of requests."""


class ContractHTTPServer(TrackedConnections, http.server.ThreadingHTTPServer):
    daemon_threads = True
    # A restart binds the port the first start got, which its old connections may hold in TIME_WAIT.
    allow_reuse_address = True

    def server_bind(self) -> None:
        # HTTPServer.server_bind resolves the host name (getfqdn), which can stall on DNS.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)


def serve_in_background(server: socketserver.BaseServer, name: str) -> threading.Thread:
    # A short poll interval: shutdown() waits for the loop to notice, and tests stop servers often.
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True, name=name
    )
    thread.start()
    return thread


def stop_serving(server: socketserver.BaseServer, thread: threading.Thread | None) -> None:
    server.shutdown()
    server.server_close()
    if thread is not None:
        thread.join(_JOIN_S)


class Lifecycle:
    """``start()`` on entering a ``with`` block, ``stop()`` on leaving it."""

    def start(self) -> Self:
        raise NotImplementedError

    # object: a child process's stop() answers its exit code.
    def stop(self) -> object:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


class Endpoint(Lifecycle):
    """A server on ``host`` at ``port``: the port asked for (0: any free one) until ``start()``
    records the one bound, which a restart then binds again."""

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self._port = port

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self._port}"


class BackgroundServer(Endpoint):
    """A server object whose state outlives its listening socket: ``stop()`` then ``start()``
    serves the same state again on the same port. Subclasses build the socket server in
    ``_make_server`` and may end their own work in ``_before_shutdown``."""

    accept_thread_name: ClassVar[str] = "contract-accept"

    def __init__(self, host: str, port: int) -> None:
        super().__init__(host, port)
        # Set while stopping: handlers waiting out an injected delay give up on it.
        self._stopping = threading.Event()
        self._httpd: ContractHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def _make_server(self, address: tuple[str, int]) -> ContractHTTPServer:
        raise NotImplementedError

    def _before_shutdown(self) -> None:
        """Called by ``stop()`` before the socket server shuts down."""

    def start(self) -> Self:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = self._make_server((self.host, self._port))
        self._port = int(httpd.server_address[1])
        self._httpd = httpd
        self._thread = serve_in_background(httpd, self.accept_thread_name)
        return self

    def stop(self) -> None:
        """Stops listening and closes every connection: clients then get refused."""
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        self._httpd = self._thread = None
        self._stopping.set()
        self._before_shutdown()
        stop_serving(httpd, thread)

    @property
    def running(self) -> bool:
        return self._httpd is not None


def serve_until_signalled(port: int, *, watch_parent: bool) -> None:
    """The foreground of a server's child process, once the server runs: prints ``LISTENING
    <port>`` (what the parent waits for) and returns on SIGTERM or SIGINT, or with
    ``watch_parent`` when the parent closes the pipe on stdin."""
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        stop.set()

    def watch() -> None:
        # EOF on a stdin pipe means the parent is gone, even by SIGKILL. os.read, not
        # sys.stdin: a daemon thread inside a buffered reader's lock breaks interpreter exit.
        with contextlib.suppress(OSError):
            while os.read(0, 4096):
                pass
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    # Only a pipe: a terminal's or /dev/null's stdin says nothing about the parent.
    with contextlib.suppress(OSError):
        if watch_parent and stat.S_ISFIFO(os.fstat(0).st_mode):
            threading.Thread(target=watch, daemon=True).start()
    print(f"LISTENING {port}", flush=True)
    while not stop.wait(0.5):
        pass


def listening_port(proc: subprocess.Popen[str], timeout: float) -> int | None:
    """The port a child running ``serve_until_signalled`` prints; None if it exits or stays
    silent for ``timeout`` seconds."""
    assert proc.stdout is not None
    # readline() alone would block past the deadline on a child that hangs before printing.
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            if not selector.select(left):
                continue
            line = proc.stdout.readline()
            if not line:
                break
            if line.startswith("LISTENING "):
                return int(line.split()[1])
    return None


def end_process(proc: subprocess.Popen[str], timeout: float) -> int:
    """Ends a child (SIGTERM, then SIGKILL after ``timeout``) and closes the pipes to it; its
    exit code."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        code = proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        code = proc.wait(10)
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
    return code
