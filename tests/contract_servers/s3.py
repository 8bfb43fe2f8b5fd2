"""S3 for the S3 sink's tests: moto's S3 in server mode, and a fault-injecting proxy.

``MotoS3Server`` serves moto's real S3 API (the same one ``mock_aws`` uses) over HTTP on
127.0.0.1 and an ephemeral port, in this process or in a child process (so a benchmark's
server does not share the GIL with the code under test), optionally with moto's IAM
authentication switched on (``auth=True``).

``S3FaultProxy`` sits in front of it and forwards every request byte for byte, so SigV4
signatures still verify, and injects what moto cannot produce: throttling (503 SlowDown),
5xx errors, 403s, dropped connections, latency and an endpoint that goes away and comes
back. Fault injection and observation are a thread-safe Python API.

``python -m tests.contract_servers.s3`` runs the child process's server in the foreground and
prints ``LISTENING <port>`` when it accepts connections.
"""

from __future__ import annotations

import argparse
import atexit
import base64
import contextlib
import email.utils
import http.client
import http.server
import os
import secrets
import socket
import subprocess
import sys
import threading
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, NamedTuple, Self, cast
from urllib.parse import parse_qs, unquote, urlsplit
from xml.sax.saxutils import escape

import boto3
from botocore.config import Config
from werkzeug.serving import ThreadedWSGIServer, WSGIRequestHandler

from tests.contract_servers._http import (
    BackgroundServer,
    ContractHandler,
    ContractHTTPServer,
    Endpoint,
    TrackedConnections,
    end_process,
    listening_port,
    serve_in_background,
    serve_until_signalled,
    stop_serving,
)

__all__ = [
    "DEFAULT_CREDENTIALS",
    "OPERATIONS",
    "MotoS3Server",
    "Observation",
    "S3FaultProxy",
    "classify",
    "main",
    "s3_client",
]

REGION: Final = "us-east-1"
DEFAULT_CREDENTIALS: Final = ("testing", "testing")
_ROOT = Path(__file__).resolve().parents[2]
_BUFFER: Final = 1 << 20
# Bodies up to this size go upstream in the same send() as the headers: separate small
# segments would meet Nagle's algorithm and delayed ACKs (~40 ms a request).
_SMALL_BODY: Final = 64 * 1024
# Sent in the IAM setup of auth mode; the server starts with INITIAL_NO_AUTH_ACTION_COUNT at
# exactly this, so no request after the setup goes unchecked.
_AUTH_SETUP_REQUESTS: Final = 3
_S3_ALL_POLICY: Final = (
    '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}'
)


def s3_client(
    endpoint_url: str,
    credentials: tuple[str, str] = DEFAULT_CREDENTIALS,
    *,
    region: str = REGION,
    config: Config | None = None,
) -> Any:
    """A boto3 S3 client for ``endpoint_url`` with path-style addressing (``config`` merged
    on top)."""
    base = Config(s3={"addressing_style": "path"})
    return _client(
        "s3",
        endpoint_url=endpoint_url,
        region_name=region,
        aws_access_key_id=credentials[0],
        aws_secret_access_key=credentials[1],
        config=base if config is None else base.merge(config),
    )


_session: boto3.session.Session | None = None
_session_lock = threading.Lock()


def _client(service: str, **kwargs: Any) -> Any:
    # One session: it caches the loaded service models (a client from a fresh session costs
    # ~60 ms, from a warm one ~3 ms). Sessions are not thread-safe, hence the lock; clients are.
    global _session
    with _session_lock:
        if _session is None:
            _session = boto3.session.Session()
        return _session.client(service, **kwargs)


# --------------------------------------------------------------------------------------------
# moto's S3 in server mode


def _moto_handler() -> type[WSGIRequestHandler]:
    # Imported on first use: moto takes a quarter of a second to import, which a test that
    # only runs the server in a child process should not pay.
    from moto.moto_server.werkzeug_app import MotoRequestHandler

    class QuietHandler(MotoRequestHandler):
        # Set here so werkzeug does not set it on moto's own class (it does when unset).
        protocol_version = "HTTP/1.1"

        def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
            """Silent: a benchmark sends hundreds of thousands of requests."""

    return QuietHandler


class _MotoWsgiServer(TrackedConnections, ThreadedWSGIServer):
    """werkzeug's threaded server running moto's app, which also closes the connections it
    holds and joins their threads when closed (``ThreadedMotoServer`` leaves both behind)."""

    worker_name = "moto-s3-conn"
    # werkzeug's socket settings, unchanged: only the servers written here tune for latency.
    tcp_nodelay = False

    def __init__(self, host: str, port: int) -> None:
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app

        try:
            super().__init__(host, port, DomainDispatcherApplication(create_backend_app), _moto_handler())
        except SystemExit as exc:  # werkzeug reports a failed bind by exiting
            raise OSError(f"cannot listen on {host}:{port}") from exc


# Child processes still running: stopped at interpreter exit whatever the tests did (strong
# references, so a server dropped without stop() is still found).
_LIVE_PROCESSES: set[MotoS3Server] = set()


@atexit.register
def _stop_live_processes() -> None:
    for server in list(_LIVE_PROCESSES):
        server.stop()


class MotoS3Server(Endpoint):
    """moto's S3 (and the rest of moto) on ``http://127.0.0.1:<port>``.

    In-process (the default) the server runs on threads of this process; its data lives in
    moto's process-wide backends, which ``mock_aws`` and any other in-process server share.
    ``process=True`` runs it in a child process (``python -m tests.contract_servers.s3``) with
    its own data and GIL; ``env`` adds to that child's environment (moto reads settings such
    as ``S3_UPLOAD_PART_MIN_SIZE`` from it). The child exits when stopped, when this
    interpreter exits, and when this process dies (it watches its stdin pipe).

    ``auth=True`` (child process only: moto's switch is process-wide) turns on moto's
    signature and IAM policy checks: an IAM user allowed ``s3:*`` is created first and its
    key is ``credentials``; other keys are refused (``InvalidAccessKeyId``, or
    ``SignatureDoesNotMatch`` for a known key with the wrong secret, both 403).
    """

    def __init__(
        self,
        *,
        process: bool = False,
        auth: bool = False,
        port: int = 0,
        region: str = REGION,
        env: dict[str, str] | None = None,
    ) -> None:
        if auth and not process:
            raise ValueError("auth=True needs process=True: moto's auth switch is process-wide")
        if env and not process:
            raise ValueError("env needs process=True: moto reads its settings at import")
        self.process = process
        self.auth = auth
        self.region = region
        self.env = dict(env or {})
        super().__init__("127.0.0.1", port)
        self._credentials: tuple[str, str] = DEFAULT_CREDENTIALS
        self._httpd: _MotoWsgiServer | None = None
        self._thread: threading.Thread | None = None
        self._proc: subprocess.Popen[str] | None = None

    # -- lifecycle

    def start(self, timeout: float = 30.0) -> Self:
        if self.running:
            return self
        if self._proc is not None:  # a child that died on its own: reap it first
            self.stop()
        if self.process:
            self._start_process(timeout)
        else:
            httpd = _MotoWsgiServer(self.host, self._port)
            self._port = int(httpd.server_address[1])
            self._httpd = httpd
            self._thread = serve_in_background(httpd, "moto-s3")
        if self.auth:
            try:
                self._set_up_auth()
            except BaseException:
                self.stop()
                raise
        return self

    def _start_process(self, timeout: float) -> None:
        env = {**os.environ, **self.env}
        if self.auth:
            env["INITIAL_NO_AUTH_ACTION_COUNT"] = str(_AUTH_SETUP_REQUESTS)
        else:
            env.pop("INITIAL_NO_AUTH_ACTION_COUNT", None)
        command = [sys.executable, "-m", "tests.contract_servers.s3", "--host", self.host]
        proc = subprocess.Popen(
            [*command, "--port", str(self._port)],
            cwd=_ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._proc = proc
        _LIVE_PROCESSES.add(self)
        port = listening_port(proc, timeout)
        if port is None:
            code = self.stop()
            raise RuntimeError(f"the moto S3 server did not start (exit code {code})")
        # A restart gets the port the first start had.
        self._port = port

    def _set_up_auth(self) -> None:
        iam = _client(
            "iam",
            endpoint_url=self.url,
            region_name=self.region,
            aws_access_key_id=DEFAULT_CREDENTIALS[0],
            aws_secret_access_key=DEFAULT_CREDENTIALS[1],
        )
        # Exactly _AUTH_SETUP_REQUESTS requests: the ones moto lets through unchecked.
        iam.create_user(UserName="sluiceway-sink")
        key = iam.create_access_key(UserName="sluiceway-sink")["AccessKey"]
        iam.put_user_policy(UserName="sluiceway-sink", PolicyName="s3-all", PolicyDocument=_S3_ALL_POLICY)
        self._credentials = (str(key["AccessKeyId"]), str(key["SecretAccessKey"]))
        # Checks on from here even if a moto version counted the setup differently.
        self._moto_api("reset-auth", b"0")

    def stop(self, timeout: float = 10.0) -> int | None:
        """Stops the server; for a child process, its exit code (SIGTERM, then SIGKILL after
        ``timeout``)."""
        httpd, thread, proc = self._httpd, self._thread, self._proc
        self._httpd = self._thread = self._proc = None
        _LIVE_PROCESSES.discard(self)
        if httpd is not None:
            stop_serving(httpd, thread)
        return None if proc is None else end_process(proc, timeout)

    @property
    def running(self) -> bool:
        return self._httpd is not None or (self._proc is not None and self._proc.poll() is None)

    @property
    def pid(self) -> int | None:
        """The child process's id (``process=True``), else ``None``."""
        return None if self._proc is None else self._proc.pid

    @property
    def credentials(self) -> tuple[str, str]:
        """``(access_key_id, secret_access_key)`` the server accepts (any pair without auth)."""
        return self._credentials

    # -- clients and state

    def client(
        self,
        endpoint_url: str | None = None,
        *,
        credentials: tuple[str, str] | None = None,
        config: Config | None = None,
    ) -> Any:
        """A boto3 S3 client for this server, or for ``endpoint_url`` (an ``S3FaultProxy`` in
        front of it) with this server's credentials."""
        return s3_client(
            endpoint_url or self.url,
            self._credentials if credentials is None else credentials,
            region=self.region,
            config=config,
        )

    def reset(self) -> None:
        """Deletes everything moto holds (all buckets; in auth mode also the IAM user, whose
        replacement then becomes ``credentials``)."""
        self._moto_api("reset", b"")
        if self.auth:
            self._moto_api("reset-auth", str(_AUTH_SETUP_REQUESTS).encode())
            self._set_up_auth()

    def _moto_api(self, op: str, body: bytes) -> None:
        # Not urllib's default form type: Flask would take the body for form fields.
        request = urllib.request.Request(
            f"{self.url}/moto-api/{op}", data=body, method="POST", headers={"Content-Type": "text/plain"}
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            response.read()


def main(argv: Sequence[str] | None = None) -> int:
    """The child process of ``MotoS3Server(process=True)``."""
    parser = argparse.ArgumentParser(prog="python -m tests.contract_servers.s3", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    httpd = _MotoWsgiServer(args.host, args.port)
    port = int(httpd.server_address[1])
    # moto builds some URLs from it (moto.server sets it the same way).
    os.environ["MOTO_PORT"] = str(port)
    serving = serve_in_background(httpd, "moto-s3")
    try:
        # The parent gives the child a pipe on stdin for this.
        serve_until_signalled(port, watch_parent=True)
    finally:
        stop_serving(httpd, serving)
    return 0


# --------------------------------------------------------------------------------------------
# operation names


_VERBS: Final = {"GET": "Get", "PUT": "Put", "DELETE": "Delete"}


def _subresource_ops(table: dict[str, tuple[str, str]]) -> dict[tuple[str, str], str]:
    """``{subresource: (name, methods)}`` as ``{(method, subresource): operation}``."""
    return {(m, sub): _VERBS[m] + name for sub, (name, methods) in table.items() for m in methods.split()}


# Operations named by a query subresource (``PUT /bucket?tagging``), real S3 names only.
_BUCKET_OPS: Final = {
    **_subresource_ops(
        {
            "acl": ("BucketAcl", "GET PUT"),
            "cors": ("BucketCors", "GET PUT DELETE"),
            "encryption": ("BucketEncryption", "GET PUT DELETE"),
            "lifecycle": ("BucketLifecycleConfiguration", "GET PUT"),
            "location": ("BucketLocation", "GET"),
            "logging": ("BucketLogging", "GET PUT"),
            "notification": ("BucketNotificationConfiguration", "GET PUT"),
            "object-lock": ("ObjectLockConfiguration", "GET PUT"),
            "ownershipControls": ("BucketOwnershipControls", "GET PUT DELETE"),
            "policy": ("BucketPolicy", "GET PUT DELETE"),
            "publicAccessBlock": ("PublicAccessBlock", "GET PUT DELETE"),
            "replication": ("BucketReplication", "GET PUT DELETE"),
            "tagging": ("BucketTagging", "GET PUT DELETE"),
            "versioning": ("BucketVersioning", "GET PUT"),
            "website": ("BucketWebsite", "GET PUT DELETE"),
        }
    ),
    ("DELETE", "lifecycle"): "DeleteBucketLifecycle",
}
_OBJECT_OPS: Final = _subresource_ops(
    {
        "acl": ("ObjectAcl", "GET PUT"),
        "legal-hold": ("ObjectLegalHold", "GET PUT"),
        "retention": ("ObjectRetention", "GET PUT"),
        "tagging": ("ObjectTagging", "GET PUT DELETE"),
    }
)
_BUCKET_SUBRESOURCES: Final = frozenset(sub for _, sub in _BUCKET_OPS)
_OBJECT_SUBRESOURCES: Final = frozenset(sub for _, sub in _OBJECT_OPS)

OPERATIONS: Final = frozenset(
    {
        "ListBuckets",
        "CreateBucket",
        "DeleteBucket",
        "HeadBucket",
        "ListObjects",
        "ListObjectsV2",
        "ListObjectVersions",
        "ListMultipartUploads",
        "DeleteObjects",
        "PutObject",
        "CopyObject",
        "GetObject",
        "GetObjectAttributes",
        "HeadObject",
        "DeleteObject",
        "CreateMultipartUpload",
        "UploadPart",
        "UploadPartCopy",
        "CompleteMultipartUpload",
        "AbortMultipartUpload",
        "ListParts",
        "RestoreObject",
        "SelectObjectContent",
        "Unknown",
        *_BUCKET_OPS.values(),
        *_OBJECT_OPS.values(),
    }
)


def _subresource_op(
    method: str, query: dict[str, list[str]], ops: dict[tuple[str, str], str], names: frozenset[str]
) -> str | None:
    for q in query:
        if q in names:
            return ops.get((method, q), "Unknown")
    return None


def classify(method: str, target: str, headers: Any = None) -> str:
    """The S3 operation of a path-style request (``method``, request target with query,
    headers with ``get``), as botocore names it; ``"Unknown"`` when it cannot tell."""
    parts = urlsplit(target)
    query = parse_qs(parts.query, keep_blank_values=True)
    bucket, _, key = parts.path.lstrip("/").partition("/")
    copy = headers is not None and headers.get("x-amz-copy-source") is not None
    if not bucket:
        return "ListBuckets" if method == "GET" else "Unknown"
    if not key:
        sub = _subresource_op(method, query, _BUCKET_OPS, _BUCKET_SUBRESOURCES)
        if sub is not None:
            return sub
        if method == "GET":
            if query.get("list-type") == ["2"]:
                return "ListObjectsV2"
            if "uploads" in query:
                return "ListMultipartUploads"
            return "ListObjectVersions" if "versions" in query else "ListObjects"
        if method == "POST":
            return "DeleteObjects" if "delete" in query else "Unknown"
        return {"PUT": "CreateBucket", "DELETE": "DeleteBucket", "HEAD": "HeadBucket"}.get(method, "Unknown")
    sub = _subresource_op(method, query, _OBJECT_OPS, _OBJECT_SUBRESOURCES)
    if sub is not None:
        return sub
    upload = "uploadId" in query
    if method == "PUT":
        if upload and "partNumber" in query:
            return "UploadPartCopy" if copy else "UploadPart"
        return "CopyObject" if copy else "PutObject"
    if method == "POST":
        if "uploads" in query:
            return "CreateMultipartUpload"
        if upload:
            return "CompleteMultipartUpload"
        if "select" in query:
            return "SelectObjectContent"
        return "RestoreObject" if "restore" in query else "Unknown"
    if method == "GET":
        if upload:
            return "ListParts"
        return "GetObjectAttributes" if "attributes" in query else "GetObject"
    if method == "DELETE":
        return "AbortMultipartUpload" if upload else "DeleteObject"
    return "HeadObject" if method == "HEAD" else "Unknown"


# --------------------------------------------------------------------------------------------
# the fault proxy


_DEFAULT_CODES: Final = {
    400: "BadRequest",
    403: "AccessDenied",
    404: "NoSuchKey",
    409: "OperationAborted",
    500: "InternalError",
    501: "NotImplemented",
    503: "SlowDown",
}
_MESSAGES: Final = {
    "AccessDenied": "Access Denied",
    "BadRequest": "Bad Request",
    "InternalError": "We encountered an internal error. Please try again.",
    "InvalidAccessKeyId": "The AWS Access Key Id you provided does not exist in our records.",
    "NoSuchBucket": "The specified bucket does not exist",
    "NoSuchKey": "The specified key does not exist.",
    "NotImplemented": "A header you provided implies functionality that is not implemented.",
    "OperationAborted": "A conflicting conditional operation is currently in progress against this "
    "resource. Please try again.",
    "RequestTimeout": "Your socket connection to the server was not read from or written to within "
    "the timeout period. Idle connections will be closed.",
    "ServiceUnavailable": "Reduce your request rate.",
    "SignatureDoesNotMatch": "The request signature we calculated does not match the signature you "
    "provided. Check your key and signing method.",
    "SlowDown": "Please reduce your request rate.",
}
_DROPPED: Final = 0


class Observation(NamedTuple):
    """One request the proxy received; ``status`` 0 when it answered none (dropped, or the
    target was unreachable)."""

    method: str
    operation: str
    path: str
    status: int


@dataclass
class _Rule:
    remaining: int
    drop: bool
    status: int
    code: str
    message: str
    methods: frozenset[str] | None
    operations: frozenset[str] | None
    key: str | None = None  # a part of the request's path (unquoted), e.g. an object's name

    def matches(self, method: str, operation: str, path: str) -> bool:
        return (
            (self.methods is None or method in self.methods)
            and (self.operations is None or operation in self.operations)
            and (self.key is None or self.key in unquote(path))
        )


def _names(value: str | Iterable[str] | None, upper: bool = False) -> frozenset[str] | None:
    if value is None:
        return None
    names = frozenset([value] if isinstance(value, str) else value)
    return frozenset(n.upper() for n in names) if upper else names


def _error_body(code: str, message: str, request_id: str, host_id: str) -> bytes:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<Error><Code>{escape(code)}</Code><Message>{escape(message)}</Message>"
        f"<RequestId>{request_id}</RequestId><HostId>{host_id}</HostId></Error>"
    ).encode()


class _Drop(Exception):
    """Close the client's connection without an answer."""


class _ProxyServer(ContractHTTPServer):
    request_queue_size = 128
    worker_name = "s3-proxy-conn"

    def __init__(self, address: tuple[str, int], proxy: S3FaultProxy) -> None:
        self.proxy = proxy
        super().__init__(address, _ProxyHandler)


class _ProxyHandler(ContractHandler):
    server_version = "AmazonS3"

    def do_GET(self) -> None:
        self._handle()

    do_HEAD = do_PUT = do_POST = do_DELETE = do_PATCH = do_OPTIONS = do_GET

    @property
    def _server(self) -> _ProxyServer:
        return cast(_ProxyServer, self.server)

    def _handle(self) -> None:
        proxy = self._server.proxy
        method, target = self.command, self.path
        operation = classify(method, target, self.headers)
        rule = proxy._take_rule(method, operation, target)
        self._pending: Observation | None = Observation(method, operation, target, _DROPPED)
        try:
            if rule is not None and rule.drop:
                raise _Drop
            if rule is not None:
                # Read first: answering over an unread body can reach the client as a reset.
                self._relay_body(None)
                self._observe(rule.status)
                self._send_error(method, rule)
            else:
                self._forward(method, target, proxy)
        except (_Drop, OSError, http.client.HTTPException, ValueError):
            self._observe(_DROPPED)
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
        finally:
            self._observe(_DROPPED)

    def _observe(self, status: int) -> None:
        """Records the request once, before the client can see the outcome (so a test that
        looks right after its call finds it)."""
        if self._pending is not None:
            self._server.proxy._observe(self._pending._replace(status=status))
            self._pending = None

    # -- request bodies

    def _relay_body(self, send: Callable[[bytes], None] | None) -> None:
        """Copies the request body, framing included, to ``send`` (None: discards it)."""
        rfile = self.rfile
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            while True:
                line = rfile.readline(65537)
                if not line.endswith(b"\n"):
                    raise ValueError("bad chunk header")
                size = int(line.split(b";", 1)[0].strip(), 16)
                if send is not None:
                    send(line)
                if size == 0:
                    while True:  # trailers, up to the blank line
                        line = rfile.readline(65537)
                        if not line:
                            raise ValueError("truncated trailers")
                        if send is not None:
                            send(line)
                        if line in (b"\r\n", b"\n"):
                            return
                self._copy(size + 2, send)  # the data and its CRLF
        else:
            self._copy(int(self.headers.get("Content-Length") or 0), send)

    def _copy(self, length: int, send: Callable[[bytes], None] | None) -> None:
        while length > 0:
            data = self.rfile.read(min(length, _BUFFER))
            if not data:
                raise ValueError("the client closed the connection mid-body")
            length -= len(data)
            if send is not None:
                send(data)

    # -- answers

    def _send_error(self, method: str, rule: _Rule) -> None:
        request_id = secrets.token_hex(8).upper()
        host_id = base64.b64encode(secrets.token_bytes(48)).decode()
        body = b"" if method == "HEAD" else _error_body(rule.code, rule.message, request_id, host_id)
        try:
            reason = http.HTTPStatus(rule.status).phrase
        except ValueError:
            reason = "Error"
        head = [
            f"HTTP/1.1 {rule.status} {reason}",
            f"x-amz-request-id: {request_id}",
            f"x-amz-id-2: {host_id}",
            "Content-Type: application/xml",
            f"Content-Length: {len(body)}",
            f"Date: {email.utils.formatdate(usegmt=True)}",
            "Server: AmazonS3",
        ]
        if self.close_connection:
            head.append("Connection: close")
        self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)

    def _forward(self, method: str, target: str, proxy: S3FaultProxy) -> None:
        delay = proxy._delay_s
        if delay > 0 and proxy._stopping.wait(delay):
            raise _Drop
        upstream = http.client.HTTPConnection(proxy._target_host, proxy._target_port, timeout=300)
        try:
            upstream.connect()
            sock = upstream.sock
            assert sock is not None
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if not self._server.track(sock):
                raise _Drop
            try:
                self._exchange(upstream, method, target)
            finally:
                self._server.untrack(sock)
        finally:
            upstream.close()

    def _exchange(self, upstream: http.client.HTTPConnection, method: str, target: str) -> None:
        # Everything as received: Host and x-amz-* are signed, so any change breaks SigV4.
        upstream.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
        for name, value in self.headers.items():
            upstream.putheader(name, value)
        length = self.headers.get("Content-Length")
        chunked = "chunked" in self.headers.get("Transfer-Encoding", "").lower()
        if not chunked and length is not None and int(length) <= _SMALL_BODY:
            body = self.rfile.read(int(length))
            if len(body) != int(length):
                raise ValueError("the client closed the connection mid-body")
            upstream.endheaders(body)
        else:
            upstream.endheaders()
            self._relay_body(upstream.send)
        response = upstream.getresponse()
        status = response.status
        self._observe(status)
        head = [f"HTTP/1.1 {status} {response.reason}"]
        # moto's server (werkzeug) closes every connection and says so; that is a property of
        # the proxy-to-moto leg (a hop-by-hop header), and S3 keeps connections open.
        head.extend(
            f"{name}: {value}" for name, value in response.msg.items() if name.lower() != "connection"
        )
        no_body = method == "HEAD" or status in (204, 304) or 100 <= status < 200
        if self.close_connection:
            head.append("Connection: close")
        if no_body:
            self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        elif response.chunked:
            self._stream_chunked(head, response)
        elif response.length is not None:
            self._stream_sized(head, response, response.length)
        else:
            # Close-delimited: the client finds the end by the connection closing.
            self.close_connection = True
            head.append("Connection: close")
            self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
            while data := response.read(_BUFFER):
                self.wfile.write(data)

    def _stream_sized(self, head: list[str], response: http.client.HTTPResponse, length: int) -> None:
        # The head goes with the first piece of the body, in one write (Nagle, delayed ACKs).
        pending = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1")
        while length > 0:
            data = response.read(min(length, _BUFFER))
            if not data:
                raise ValueError("the target closed the connection mid-body")
            length -= len(data)
            self.wfile.write(pending + data if pending else data)
            pending = b""
        if pending:
            self.wfile.write(pending)

    def _stream_chunked(self, head: list[str], response: http.client.HTTPResponse) -> None:
        # http.client undoes the chunking; it is redone with the same framing header.
        pending = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1")
        while data := response.read1(_BUFFER):
            self.wfile.write(b"%s%x\r\n%s\r\n" % (pending, len(data), data))
            pending = b""
        self.wfile.write(pending + b"0\r\n\r\n")


class S3FaultProxy(BackgroundServer):
    """A reverse proxy for an S3 endpoint (``target``, e.g. ``MotoS3Server.url``) that
    forwards requests unchanged and can answer or drop some itself (see the module
    docstring). ``stop()`` then ``start()`` serves again on the same port.

    Faults queue up: a request takes the first pending rule it matches. ``observations``
    list every request received, injected answers and drops included."""

    accept_thread_name = "s3-proxy"

    def __init__(self, target: str, *, host: str = "127.0.0.1", port: int = 0) -> None:
        parts = urlsplit(target)
        if parts.scheme != "http" or parts.hostname is None:
            raise ValueError(f"target must be an http:// URL: {target!r}")
        self.target = target
        self._target_host = parts.hostname
        self._target_port = parts.port or 80
        super().__init__(host, port)
        self._lock = threading.Lock()
        self._rules: list[_Rule] = []
        self._observations: list[Observation] = []
        self._delay_s = 0.0

    # -- lifecycle

    def _make_server(self, address: tuple[str, int]) -> _ProxyServer:
        return _ProxyServer(address, self)

    # -- faults

    def fail_next(
        self,
        n: int,
        status: int = 503,
        code: str | None = None,
        message: str | None = None,
        *,
        methods: str | Iterable[str] | None = None,
        operation: str | Iterable[str] | None = None,
        key: str | None = None,
    ) -> None:
        """The next ``n`` matching requests get ``status`` with S3's XML error body, from the
        proxy (they never reach the target). ``code`` defaults by status (503 ``SlowDown``,
        500 ``InternalError``, 403 ``AccessDenied``...), ``message`` by code. ``key``
        matches requests whose path holds it (an object's name, say)."""
        if code is None:
            code = _DEFAULT_CODES.get(status, "InternalError" if status >= 500 else "BadRequest")
        self._add_rule(n, False, status, code, message or _MESSAGES.get(code, code), methods, operation, key)

    def drop_next(
        self,
        n: int,
        *,
        methods: str | Iterable[str] | None = None,
        operation: str | Iterable[str] | None = None,
        key: str | None = None,
    ) -> None:
        """The next ``n`` matching requests get no answer: their connection is closed."""
        self._add_rule(n, True, _DROPPED, "", "", methods, operation, key)

    def _add_rule(
        self,
        n: int,
        drop: bool,
        status: int,
        code: str,
        message: str,
        methods: str | Iterable[str] | None,
        operation: str | Iterable[str] | None,
        key: str | None = None,
    ) -> None:
        operations = _names(operation)
        unknown = sorted((operations or frozenset()) - OPERATIONS)
        if unknown:
            # A typo would otherwise match nothing, silently.
            raise ValueError(f"unknown S3 operation(s) {unknown}; known: {sorted(OPERATIONS)}")
        if n <= 0:
            return
        rule = _Rule(n, drop, status, code, message, _names(methods, upper=True), operations, key)
        with self._lock:
            self._rules.append(rule)

    def delay(self, ms: float) -> None:
        """Every forwarded request waits ``ms`` before it goes to the target (0: none)."""
        self._delay_s = max(ms, 0) / 1000.0

    def clear_faults(self) -> None:
        with self._lock:
            self._rules.clear()
        self._delay_s = 0.0

    @property
    def pending_faults(self) -> int:
        """Injected answers and drops still to come."""
        with self._lock:
            return sum(rule.remaining for rule in self._rules)

    def _take_rule(self, method: str, operation: str, path: str) -> _Rule | None:
        with self._lock:
            for rule in self._rules:
                if rule.matches(method, operation, path):
                    rule.remaining -= 1
                    if rule.remaining == 0:
                        self._rules.remove(rule)
                    return rule
        return None

    # -- observation

    def _observe(self, observation: Observation) -> None:
        with self._lock:
            self._observations.append(observation)

    @property
    def observations(self) -> list[Observation]:
        """``(method, operation, path with query, status)`` per request, in completion order."""
        with self._lock:
            return list(self._observations)

    def counts(self) -> Counter[str]:
        """Requests received per operation."""
        with self._lock:
            return Counter(o.operation for o in self._observations)

    def count(self, operation: str) -> int:
        return self.counts()[operation]

    def reset_observations(self) -> None:
        with self._lock:
            self._observations.clear()


if __name__ == "__main__":
    sys.exit(main())
