"""Kafka wire protocol: framing, kio-based codecs and the supported-version table.

This package knows bytes and kio entities, nothing about topics or groups. It is
shared by the broker (server side) and by Connect's group membership client
(client side), so both directions are here: decode a request / encode a response,
and encode a request / decode a response.

Non-goals: no hand-written message codecs (every message is a kio entity), no
connection management, no retries.
"""

from broker.protocol.build import build
from broker.protocol.codec import (
    DecodedRequest,
    EncodedBody,
    ProtocolError,
    UnsupportedVersion,
    decode_request,
    decode_response,
    encode_body,
    encode_request,
    encode_response,
    peek_request_header,
)
from broker.protocol.framing import SIZE_PREFIX, FrameTooLarge, frame
from broker.protocol.versions import SUPPORTED_VERSIONS, ApiKey

__all__ = [
    "SIZE_PREFIX",
    "SUPPORTED_VERSIONS",
    "ApiKey",
    "DecodedRequest",
    "EncodedBody",
    "FrameTooLarge",
    "ProtocolError",
    "UnsupportedVersion",
    "build",
    "decode_request",
    "decode_response",
    "encode_body",
    "encode_request",
    "encode_response",
    "frame",
    "peek_request_header",
]
