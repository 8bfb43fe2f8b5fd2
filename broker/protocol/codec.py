"""Request/response codecs on top of kio's generated entities.

A frame (without its size prefix) starts with api_key:int16, api_version:int16 and
correlation_id:int32 in every header version, so those are peeked with ``struct``
before the version is checked and the right kio classes are chosen. Readers and
writers are built once per entity class.
"""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass
from functools import cache
from typing import Any, Final

from kio.index import load_request_schema, load_response_schema
from kio.serial import entity_reader

from broker.protocol.framing import SIZE_PREFIX
from broker.protocol.guard import check_layout
from broker.protocol.versions import SUPPORTED_VERSIONS, ApiKey
from broker.protocol.writer import entity_writer

_HEADER_PREFIX: Final = struct.Struct(">hhi")


class ProtocolError(Exception):
    """The bytes are not a well-formed Kafka message; the connection cannot continue."""


class UnsupportedVersion(ProtocolError):
    """A request for an API key or version this side does not implement."""

    def __init__(self, api_key: int, api_version: int, correlation_id: int) -> None:
        super().__init__(f"unsupported API key {api_key} version {api_version}")
        self.api_key = api_key
        self.api_version = api_version
        self.correlation_id = correlation_id


@dataclass(frozen=True, slots=True)
class DecodedRequest:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    body: Any  # the kio request entity of (api_key, api_version)


def peek_request_header(frame: bytes | memoryview) -> tuple[int, int, int]:
    """(api_key, api_version, correlation_id) of a request frame."""
    if len(frame) < _HEADER_PREFIX.size:
        raise ProtocolError(f"request of {len(frame)} bytes is shorter than a request header")
    api_key, api_version, correlation_id = _HEADER_PREFIX.unpack_from(frame)
    return int(api_key), int(api_version), int(correlation_id)


_READERS: dict[Any, Any] = {}
_WRITERS: dict[Any, Any] = {}


def _reader(cls: Any) -> Any:
    reader = _READERS.get(cls)
    if reader is None:
        reader = _READERS[cls] = entity_reader(cls)
    return reader


def _writer(cls: Any) -> Any:
    writer = _WRITERS.get(cls)
    if writer is None:
        writer = _WRITERS[cls] = entity_writer(cls)
    return writer


@cache
def request_class(api_key: int, api_version: int) -> Any:
    return load_request_schema(api_key, api_version)


@cache
def response_class(api_key: int, api_version: int) -> Any:
    return load_response_schema(api_key, api_version)


def decode_request(
    frame: bytes | memoryview,
    supported: dict[int, tuple[int, int]] = SUPPORTED_VERSIONS,
) -> DecodedRequest:
    """Decode a request frame; raise ``UnsupportedVersion`` or ``ProtocolError``."""
    api_key, api_version, correlation_id = peek_request_header(frame)
    rng = supported.get(api_key)
    if rng is None or not rng[0] <= api_version <= rng[1]:
        raise UnsupportedVersion(api_key, api_version, correlation_id)
    cls = request_class(api_key, api_version)
    try:
        check_layout(frame, cls)
        header, used = _reader(cls.__header_schema__)(frame, 0)
        body, _ = _reader(cls)(frame, used)
    except Exception as exc:  # kio raises several types for truncated or garbled input
        raise ProtocolError(
            f"malformed {ApiKey(api_key).name} v{api_version} request: {type(exc).__name__}: {exc}"
        ) from exc
    return DecodedRequest(api_key, api_version, correlation_id, header.client_id, body)


@dataclass(frozen=True, slots=True)
class EncodedBody:
    """A response body encoded once and reused (ApiVersions, Metadata): ``payload`` is
    what ``encode_body`` returned for an instance of ``cls``."""

    cls: Any  # the kio response class
    payload: bytes


def encode_body(body: Any) -> EncodedBody:
    buf = io.BytesIO()
    _writer(type(body))(buf, body)
    return EncodedBody(type(body), buf.getvalue())


_SIZE_AND_CORRELATION: Final = struct.Struct(">ii")


@cache
def _header_tail(header_cls: Any) -> bytes:
    """What a response header holds after its correlation id, as kio writes it: nothing
    (v0) or an empty tagged-field section (v1). Written once per header class; a frame's
    header is then a ``struct`` pack (``encode_response`` runs for every request)."""
    buf = io.BytesIO()
    _writer(header_cls)(buf, header_cls(correlation_id=0))
    return buf.getvalue()[4:]  # after the int32 correlation id


def encode_response(correlation_id: int, body: Any) -> bytes:
    """Size-prefixed response frame for a kio response entity (or an ``EncodedBody``).

    kio's response classes carry their header version (v0, or v1 when flexible;
    ApiVersions always v0), so the header follows from the class.
    """
    cls = body.cls if isinstance(body, EncodedBody) else type(body)
    tail = _header_tail(cls.__header_schema__)
    buf = io.BytesIO()
    buf.write(b"\0" * _SIZE_AND_CORRELATION.size)
    buf.write(tail)
    if isinstance(body, EncodedBody):
        buf.write(body.payload)
    else:
        _writer(cls)(buf, body)
    view = buf.getbuffer()
    _SIZE_AND_CORRELATION.pack_into(view, 0, len(view) - 4, correlation_id)
    del view
    return buf.getvalue()


def encode_request(correlation_id: int, body: Any, client_id: str | None = None) -> bytes:
    """Size-prefixed request frame for a kio request entity (client side)."""
    cls = type(body)
    header_cls = cls.__header_schema__
    buf = io.BytesIO()
    buf.write(b"\0\0\0\0")
    header = header_cls(
        request_api_key=cls.__api_key__,
        request_api_version=cls.__version__,
        correlation_id=correlation_id,
        client_id=client_id,
    )
    _writer(header_cls)(buf, header)
    _writer(cls)(buf, body)
    view = buf.getbuffer()
    SIZE_PREFIX.pack_into(view, 0, len(view) - 4)
    del view
    return buf.getvalue()


def decode_response(api_key: int, api_version: int, frame: bytes | memoryview) -> tuple[int, Any]:
    """(correlation_id, body) of a response frame (client side)."""
    cls = response_class(api_key, api_version)
    try:
        check_layout(frame, cls)
        header, used = _reader(cls.__header_schema__)(frame, 0)
        body, _ = _reader(cls)(frame, used)
    except Exception as exc:
        raise ProtocolError(f"malformed response to API {api_key} v{api_version}: {exc}") from exc
    return int(header.correlation_id), body
