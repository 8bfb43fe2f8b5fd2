"""Kafka's framing: every request and response is an int32 size followed by that many bytes."""

from __future__ import annotations

import struct
from typing import Final

SIZE_PREFIX: Final = struct.Struct(">i")


class FrameTooLarge(Exception):
    """A peer announced a frame larger than the configured cap (``socket.request.max.bytes``)."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"frame of {size} bytes exceeds the limit of {limit} bytes")
        self.size = size
        self.limit = limit


def frame(payload: bytes | bytearray | memoryview) -> bytes:
    """Prefix ``payload`` with its int32 size."""
    return SIZE_PREFIX.pack(len(payload)) + bytes(payload)


def frame_size(prefix: bytes, limit: int) -> int:
    """Size announced by a 4-byte prefix, checked against ``limit``.

    A negative size is as malformed as an oversized one; both end the connection.
    """
    (size,) = SIZE_PREFIX.unpack(prefix)
    if size < 0 or size > limit:
        raise FrameTooLarge(size, limit)
    return int(size)
