"""The Elasticsearch contract server: HTTP."""

from __future__ import annotations

import contextlib
import gzip
import re
import socket
import ssl
import zlib
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, Final, cast

import orjson

from tests.contract_servers._http import (
    ContractHandler,
    ContractHTTPServer,
)
from tests.contract_servers.elasticsearch.errors import EsError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from tests.contract_servers.elasticsearch.server import ElasticsearchContractServer

_JSON_TYPES: Final = frozenset(
    {
        "application/json",
        "application/x-ndjson",
        "application/vnd.elasticsearch+json",
        "application/vnd.elasticsearch+x-ndjson",
    }
)
_COMPAT = re.compile(r"compatible-with\s*=\s*(\d+)")
_BULK_PARAMS: Final = frozenset(
    {
        "refresh",
        "routing",
        "timeout",
        "wait_for_active_shards",
        "pipeline",
        "require_alias",
        "require_data_stream",
        "_source",
        "_source_includes",
        "_source_excludes",
        "list_executed_pipelines",
        "include_source_on_error",
        "pretty",
        "human",
        "error_trace",
        "filter_path",
    }
)
_WWW_AUTHENTICATE: Final = (
    ("WWW-Authenticate", 'Basic realm="security" charset="UTF-8"'),
    ("WWW-Authenticate", "ApiKey"),
)
_ANONYMOUS_DENIED: Final = (
    "unable to authenticate with provided credentials and anonymous access is not allowed for this request"
)
_FAULT_BODIES: Final = {
    429: ("es_rejected_execution_exception", "rejected execution of coordinating operation"),
    500: ("exception", "injected internal server error"),
    502: (
        "bad_gateway_exception",
        "injected bad gateway: the proxy in front of the cluster lost its upstream",
    ),
    503: (
        "cluster_block_exception",
        "blocked by: [SERVICE_UNAVAILABLE/1/state not recovered / initialized];",
    ),
    504: ("gateway_timeout_exception", "injected gateway timeout"),
}


def _fault_error(status: int, size: int) -> EsError:
    kind, reason = _FAULT_BODIES.get(status, ("status_exception", f"injected failure with status [{status}]"))
    if status == 429:
        reason = (
            f"{reason} [coordinating_and_primary_bytes=0, replica_bytes=0, all_bytes=0, "
            f"coordinating_operation_bytes={size}, max_coordinating_and_primary_bytes=107374182]"
        )
    return EsError(status, kind, reason)


def _item_fault(status: int) -> dict[str, Any]:
    if status == 429:
        return {
            "type": "es_rejected_execution_exception",
            "reason": "rejected execution of primary operation [coordinating_and_primary_bytes=0, "
            "replica_bytes=0, all_bytes=0, primary_operation_bytes=0, "
            "max_coordinating_and_primary_bytes=107374182]",
        }
    if status == 503:
        return {
            "type": "unavailable_shards_exception",
            "reason": "[0] primary shard is not active Timeout: [1m]",
        }
    kind, reason = _FAULT_BODIES.get(status, ("status_exception", f"injected failure with status [{status}]"))
    return {"type": kind, "reason": reason}


class _Response:
    __slots__ = ("body", "headers", "status")

    def __init__(self, status: int, body: Any, headers: Sequence[tuple[str, str]] = ()) -> None:
        self.status = status
        self.body = body
        self.headers = headers


class _HttpServer(ContractHTTPServer):
    worker_name = "es-contract-conn"

    def __init__(self, address: tuple[str, int], app: ElasticsearchContractServer) -> None:
        self.app = app
        super().__init__(address, _Handler)

    def finish_request(self, request: Any, client_address: Any) -> None:
        context = self.app.ssl_context
        if context is None:
            super().finish_request(request, client_address)
            return
        sock = cast(socket.socket, request)
        # A client stalled mid-handshake must not hold stop() up for ever.
        sock.settimeout(10)
        try:
            # Takes over the descriptor: ``sock`` is left detached, its shutdown a no-op.
            active = context.wrap_socket(sock, server_side=True)
        except (OSError, ssl.SSLError):
            return
        try:
            active.settimeout(None)
            # stop() must cut the TLS layer off, not the socket it no longer owns.
            if self.track(active):
                super().finish_request(active, client_address)
        finally:
            self.untrack(active)
            with contextlib.suppress(OSError):
                socket.socket.shutdown(active, socket.SHUT_RDWR)
            active.close()


class _Handler(ContractHandler):
    server_version = "contract"

    def do_GET(self) -> None:
        self._handle("GET")

    def do_HEAD(self) -> None:
        self._handle("HEAD")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks: list[bytes] = []
            while True:
                size_line = self.rfile.readline(1024)
                size = int(size_line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline(8)
            body = b"".join(chunks)
        else:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
        encoding = self.headers.get("Content-Encoding", "").lower()
        if body and encoding == "gzip":
            body = gzip.decompress(body)
        elif body and encoding == "deflate":
            body = zlib.decompress(body)
        return body

    def _handle(self, method: str) -> None:
        app = cast(_HttpServer, self.server).app
        try:
            body = self._read_body()
        except (ValueError, OSError, EOFError, zlib.error):
            self._send(
                method, _Response(400, {"error": "failed to read the request body", "status": 400}), None
            )
            self.close_connection = True
            return
        response = app._dispatch(method, self.path, self.headers, body)
        if response is None:
            self.close_connection = True
            return
        self._send(method, response, self.headers.get("Accept"))

    def _send(self, method: str, response: _Response, accept: str | None) -> None:
        compat = _COMPAT.search(accept or "")
        if accept and "vnd.elasticsearch" in accept and compat:
            content_type = f"application/vnd.elasticsearch+json;compatible-with={compat.group(1)}"
        else:
            content_type = "application/json"
        payload = b"" if response.body is None else orjson.dumps(response.body)
        if method == "HEAD":
            payload = b""
        try:
            phrase = HTTPStatus(response.status).phrase
        except ValueError:
            phrase = "Unknown"
        head = [
            f"HTTP/1.1 {response.status} {phrase}",
            "X-Elastic-Product: Elasticsearch",
            f"Content-Type: {content_type}",
            f"Content-Length: {len(payload)}",
        ]
        head.extend(f"{name}: {value}" for name, value in response.headers)
        if self.close_connection:
            head.append("Connection: close")
        # One write: headers and body in separate segments would meet Nagle and delayed ACKs.
        self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + payload)
