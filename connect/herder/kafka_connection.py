"""One connection from a Connect worker to one Kafka broker, spoken from asyncio: framing,
correlation ids, ApiVersions negotiation and SASL authentication, over TLS when asked.

What the group member (``connect.herder.membership``) sends its group requests on.
Requests go one at a time (Kafka brokers answer a connection's requests in order
anyway); a connection that fails, or whose request times out or is cancelled midway, is
closed and reopened on next use, since the next response on it could otherwise be
mistaken for the answer to a later request. A broker refusing our credentials, or
speaking none of our versions, is a ``GroupError``; anything else that breaks the
connection is ``Unreachable`` (retry on a new one).
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import struct
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import metadata
from typing import Any, Final

from kio.schema.errors import ErrorCode

from broker.protocol.build import build
from broker.protocol.codec import (
    ProtocolError,
    decode_response,
    encode_request,
    request_class,
    response_class,
)
from broker.protocol.framing import FrameTooLarge, frame_size
from broker.protocol.versions import ApiKey
from connect.herder.sasl_client import SaslCredentials, SaslFailure, sasl_exchange

log = logging.getLogger(__name__)

# The APIs this client sends; versions are negotiated per connection.
_APIS: Final = (
    ApiKey.API_VERSIONS,
    ApiKey.FIND_COORDINATOR,
    ApiKey.JOIN_GROUP,
    ApiKey.SYNC_GROUP,
    ApiKey.HEARTBEAT,
    ApiKey.LEAVE_GROUP,
    ApiKey.SASL_HANDSHAKE,
    ApiKey.SASL_AUTHENTICATE,
)
_MAX_RESPONSE_BYTES: Final = 100 << 20  # a group of thousands of workers still fits; garbage does not
# ApiVersions answers always start with header v0 (correlation id) and the error code.
_CORRELATION_AND_ERROR: Final = struct.Struct(">ih")


class GroupError(Exception):
    """The coordinator refused this member for good (e.g. INCONSISTENT_GROUP_PROTOCOL,
    INVALID_SESSION_TIMEOUT, GROUP_AUTHORIZATION_FAILED, FENCED_INSTANCE_ID), or the member
    is closed. ``error`` is Kafka's error name, or None when no broker error is involved."""

    def __init__(self, message: str, error: str | None = None) -> None:
        super().__init__(message)
        self.error = error


class Unreachable(Exception):
    """A broker could not be reached or the connection broke; retry on a new connection."""


# -- versions (pure) ---------------------------------------------------------------------


@cache
def client_versions() -> dict[int, tuple[int, ...]]:
    """Versions of each API this client can encode and decode: those kio has both ways."""
    out: dict[int, tuple[int, ...]] = {}
    for api in _APIS:
        found = []
        for version in range(32):
            try:
                request_class(api, version)
                response_class(api, version)
            except Exception:  # kio raises import/lookup errors for versions it lacks
                continue
            found.append(version)
        out[api] = tuple(found)
    return out


def choose_versions(
    ours: Mapping[int, Sequence[int]], theirs: Mapping[int, tuple[int, int]]
) -> dict[int, int]:
    """Highest version of each API both sides speak; APIs without a common version are absent."""
    chosen: dict[int, int] = {}
    for api, versions in ours.items():
        rng = theirs.get(api)
        if rng is None:
            continue
        common = [v for v in versions if rng[0] <= v <= rng[1]]
        if common:
            chosen[api] = max(common)
    return chosen


def parse_bootstrap(servers: str) -> list[tuple[str, int]]:
    """``host:port[,host:port...]`` (IPv6 hosts in brackets) as (host, port) pairs."""
    out = []
    for item in servers.split(","):
        item = item.strip()
        if not item:
            continue
        host, sep, port = item.rpartition(":")
        if not sep or not port.isdigit() or not host:
            raise ValueError(f"bootstrap server {item!r} is not host:port")
        out.append((host.strip("[]"), int(port)))
    if not out:
        raise ValueError("bootstrap_servers names no broker")
    return out


@cache
def _software_version() -> str:
    try:
        return metadata.version("sluiceway")
    except metadata.PackageNotFoundError:
        return "0"


def error_name(code: ErrorCode) -> str:
    return code.name.upper()


# -- the connection ------------------------------------------------------------------------


class BrokerConnection:
    """One connection to one broker: framing, correlation ids, and negotiated API versions.

    Requests go one at a time (Kafka brokers answer a connection's requests in order
    anyway). Any failure midway, a timeout or a cancellation closes the connection.
    """

    def __init__(
        self, address: tuple[str, int], reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.address = address
        self._reader = reader
        self._writer = writer
        self._lock = asyncio.Lock()
        self._correlation = 0
        self._closed = False
        self.versions: dict[int, int] = {}

    def __str__(self) -> str:
        return f"{self.address[0]}:{self.address[1]}"

    @classmethod
    async def open(
        cls,
        address: tuple[str, int],
        client_id: str,
        timeout: float,
        tls: ssl.SSLContext | None = None,
        sasl: SaslCredentials | None = None,
    ) -> BrokerConnection:
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(*address, ssl=tls, server_hostname=address[0] if tls else None),
                timeout,
            )
        except (OSError, TimeoutError) as exc:  # ssl.SSLError (a failed handshake) is an OSError
            raise Unreachable(f"cannot connect to {address[0]}:{address[1]}: {exc!r}") from exc
        conn = cls(address, reader, writer)
        try:
            await conn._negotiate(client_id, timeout)
            if sasl is not None:
                await conn._authenticate(sasl, client_id, timeout)
        except BaseException:
            conn.close()
            raise
        return conn

    @property
    def closed(self) -> bool:
        # at_eof: the broker closed an idle connection (connections.max.idle.ms) since the last use.
        return self._closed or self._reader.at_eof()

    @property
    def busy(self) -> bool:
        return self._lock.locked()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._writer.close()

    async def request(self, api: ApiKey, fields: Mapping[str, Any], client_id: str, timeout: float) -> Any:
        """Send ``api`` at the negotiated version, built from ``fields`` (Kafka's field names of
        any version; those the version lacks are ignored), and return the decoded response."""
        version = self.versions.get(api)
        if version is None:
            raise GroupError(
                f"broker {self} supports no version of {api.name} that this client speaks",
                error_name(ErrorCode.unsupported_version),
            )
        body = build(request_class(api, version), fields)
        frame = await self._exchange(encode_request(self._next_correlation(), body, client_id), timeout)
        return self._decode(api, version, frame)

    def version(self, api: ApiKey) -> int:
        return self.versions.get(api, -1)

    def _next_correlation(self) -> int:
        self._correlation = (self._correlation + 1) & 0x7FFFFFFF
        return self._correlation

    def _decode(self, api: ApiKey, version: int, frame: bytes) -> Any:
        try:
            return decode_response(api, version, frame)[1]
        except ProtocolError as exc:
            self.close()
            raise Unreachable(f"unreadable {api.name} v{version} response from {self}: {exc}") from exc

    async def _exchange(self, request: bytes, timeout: float) -> bytes:
        """Write one request frame and return its response frame (without the size prefix)."""
        (correlation,) = struct.unpack_from(">i", request, 8)  # after size, api key and version
        async with self._lock:
            if self.closed:
                raise Unreachable(f"connection to {self} is closed")
            try:
                self._writer.write(request)
                frame = await asyncio.wait_for(self._read_frame(), timeout)
            except BaseException as exc:
                self.close()
                if isinstance(exc, OSError | EOFError | TimeoutError | FrameTooLarge):
                    raise Unreachable(f"request to {self} failed: {exc!r}") from exc
                raise
            (answered,) = struct.unpack_from(">i", frame)
            if answered != correlation:
                self.close()
                raise Unreachable(f"{self} answered correlation id {answered}, expected {correlation}")
            return frame

    async def _read_frame(self) -> bytes:
        size = frame_size(await self._reader.readexactly(4), _MAX_RESPONSE_BYTES)
        return await self._reader.readexactly(size)

    async def _negotiate(self, client_id: str, timeout: float) -> None:
        ours = client_versions()
        version = max(ours[ApiKey.API_VERSIONS])
        fields = {"client_software_name": "sluiceway", "client_software_version": _software_version()}
        while True:
            body = build(request_class(ApiKey.API_VERSIONS, version), fields)
            frame = await self._exchange(encode_request(self._next_correlation(), body, client_id), timeout)
            _, error = _CORRELATION_AND_ERROR.unpack_from(frame)
            if error == ErrorCode.unsupported_version:
                # A broker older than our ApiVersions answers with a v0 body listing what it
                # speaks (KIP-511); ask again at the highest version it knows.
                table = self._decode(ApiKey.API_VERSIONS, 0, frame).api_keys
                theirs = next((k for k in table if k.api_key == ApiKey.API_VERSIONS), None)
                lower = [v for v in ours[ApiKey.API_VERSIONS] if theirs and v <= theirs.max_version]
                if not lower or max(lower) >= version:
                    raise GroupError(f"broker {self} speaks no ApiVersions version this client knows")
                version = max(lower)
                continue
            response = self._decode(ApiKey.API_VERSIONS, version, frame)
            if response.error_code != ErrorCode.none:
                raise Unreachable(f"ApiVersions failed on {self}: {error_name(response.error_code)}")
            theirs_table = {
                int(k.api_key): (int(k.min_version), int(k.max_version)) for k in response.api_keys
            }
            self.versions = choose_versions(ours, theirs_table)
            log.debug("negotiated API versions with %s: %s", self, self.versions)
            return

    async def _authenticate(self, credentials: SaslCredentials, client_id: str, timeout: float) -> None:
        # SaslHandshake v0 would send the tokens as raw frames; every broker since Kafka 1.0
        # speaks v1, whose tokens travel in SaslAuthenticate requests.
        if self.version(ApiKey.SASL_HANDSHAKE) < 1 or self.version(ApiKey.SASL_AUTHENTICATE) < 0:
            raise GroupError(
                f"broker {self} does not offer SaslHandshake v1 and SaslAuthenticate: "
                "is this a SASL listener?",
                error_name(ErrorCode.unsupported_version),
            )
        mechanism, user = credentials.mechanism, credentials.username
        shake = await self.request(ApiKey.SASL_HANDSHAKE, {"mechanism": mechanism}, client_id, timeout)
        if shake.error_code != ErrorCode.none:
            raise GroupError(
                f"broker {self} refused SASL mechanism {mechanism} ({error_name(shake.error_code)}); "
                f"it enables {', '.join(shake.mechanisms) or 'none'}: set sasl.mechanism to one of them",
                error_name(shake.error_code),
            )
        steps = sasl_exchange(credentials)
        token = next(steps)
        while True:
            answer = await self.request(ApiKey.SASL_AUTHENTICATE, {"auth_bytes": token}, client_id, timeout)
            if answer.error_code != ErrorCode.none:
                raise GroupError(
                    f"SASL {mechanism} authentication as {user!r} failed on {self}: "
                    f"{answer.error_message or error_name(answer.error_code)}",
                    error_name(answer.error_code),
                )
            try:
                token = steps.send(bytes(answer.auth_bytes))
            except StopIteration:
                log.debug("authenticated to %s as %r with %s", self, user, mechanism)
                return
            except SaslFailure as exc:
                raise GroupError(f"SASL {mechanism} authentication as {user!r} on {self}: {exc}") from exc
