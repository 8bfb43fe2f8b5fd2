"""The REST server's limits: oversized bodies, slow clients, connections per client.

One real worker (``EmbeddedConnect``) with its limits set low; every test misbehaves on
raw sockets or with httpx and then checks a well-behaved client is still served.
"""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from sluiceway.embedded import EmbeddedConnect

MAX_BODY = 2048
PER_IP = 6


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedConnect]:
    limits = {
        "rest.request.max.bytes": str(MAX_BODY),
        "rest.request.read.timeout.ms": "400",
        "rest.max.connections.per.ip": str(PER_IP),
        "rest.keep.alive.timeout.ms": "60000",
    }
    with EmbeddedConnect(Path(tmp_path_factory.mktemp("rest-limits")), worker_config=limits) as c:
        yield c


def _serving(worker: EmbeddedConnect) -> None:
    with httpx.Client(base_url=worker.url, timeout=30) as fresh:
        r = fresh.get("/connectors")
        assert r.status_code == 200 and r.json() == []


def _raw(worker: EmbeddedConnect) -> socket.socket:
    parts = urlsplit(worker.url)
    return socket.create_connection((parts.hostname, parts.port), timeout=10)


def _closed_by_server(sock: socket.socket) -> bytes:
    """Everything the server sent until it closed (fails if it kept the connection 10 s)."""
    sock.settimeout(10)
    out = b""
    try:
        while chunk := sock.recv(65536):
            out += chunk
    except ConnectionError:
        pass
    return out


def test_an_oversized_body_is_413_with_kafka_connects_error_body(worker: EmbeddedConnect) -> None:
    big = b'{"name": "x", "config": {"pad": "' + b"p" * MAX_BODY + b'"}}'
    r = worker.http.post("/connectors", content=big, headers={"content-type": "application/json"})  # type: ignore[union-attr]
    assert r.status_code == 413
    assert r.json() == {
        "error_code": 413,
        "message": f"Request body of {len(big)} bytes exceeds rest.request.max.bytes={MAX_BODY}",
    }

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it streams in
        for _ in range(8):
            yield b"x" * 512

    with httpx.Client(base_url=worker.url, timeout=30) as c:
        r = c.post("/connectors", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413 and r.json()["error_code"] == 413
    # Just under the limit goes through to the API, which judges the content.
    small = b'{"name": "x", "config": {}}'
    r = worker.http.post("/connectors", content=small, headers={"content-type": "application/json"})  # type: ignore[union-attr]
    assert r.status_code == 400 and r.json()["error_code"] == 400
    _serving(worker)


def test_slow_clients_are_closed_and_others_served(
    worker: EmbeddedConnect, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    silent, half_head, slow_body = _raw(worker), _raw(worker), _raw(worker)
    try:
        half_head.sendall(b"GET /connectors HTTP/1.1\r\nHost: x\r\n")
        slow_body.sendall(b"POST /connectors HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n")
        slow_body.sendall(b"Content-Length: 100\r\n\r\n{")
        _serving(worker)  # while three connections hang
        for s in (silent, half_head, slow_body):
            assert _closed_by_server(s) == b""  # closed without an answer
    finally:
        for s in (silent, half_head, slow_body):
            s.close()
    assert "rest.request.read.timeout.ms" in caplog.text
    # No handler ever saw the half-sent body, so nothing was logged as a failure.
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    _serving(worker)


def test_a_trickled_request_is_closed_before_it_completes(worker: EmbeddedConnect) -> None:
    request = b"GET /connectors HTTP/1.1\r\nHost: x\r\n" + b"X-Pad: " + b"p" * 2000 + b"\r\n\r\n"
    sent = 0
    with _raw(worker) as s:
        s.setblocking(False)
        try:
            while sent < len(request):  # a byte every 20 ms: 40 s for the whole request
                s.send(request[sent : sent + 1])
                sent += 1
                time.sleep(0.02)
                try:
                    if s.recv(1) == b"":
                        break
                except BlockingIOError:
                    pass
        except (ConnectionError, BrokenPipeError):
            pass
    assert sent < len(request), "the server waited for the whole trickled request"
    _serving(worker)


def test_connections_above_the_per_ip_limit_are_closed_at_once(worker: EmbeddedConnect) -> None:
    held: list[socket.socket] = []
    refused = None
    try:
        # Keep-alive connections, each having completed a request, until one is refused.
        for _ in range(PER_IP + 1):
            s = _raw(worker)
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            s.settimeout(10)
            try:
                first = s.recv(65536)
            except ConnectionResetError:  # closed before our request arrived
                first = b""
            if first == b"":
                refused = s
                break
            assert first.startswith(b"HTTP/1.1 200")
            held.append(s)
        assert refused is not None, f"{PER_IP + 1} connections from one address were all accepted"
        assert len(held) <= PER_IP
        refused.close()
    finally:
        for s in held:
            s.close()
    # The server notices the closes asynchronously; then there is room again.
    deadline = time.monotonic() + 20
    while True:
        try:
            _serving(worker)
            break
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
