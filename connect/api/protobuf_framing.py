"""Confluent's message indexes: between a Protobuf record's schema id and its message
bytes, which message of the schema's file the bytes are (``[0]``, the first, is the single
byte 0; otherwise a zigzag-varint count, then each index, nested messages deeper)."""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import Descriptor

__all__ = ["decode_indexes", "encode_indexes", "indexes_of", "message_at", "read_uvarint", "uvarint"]


def uvarint(n: int) -> bytes:
    """``n`` (non-negative) as a protobuf base-128 varint."""
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def read_uvarint(data: bytes, pos: int) -> tuple[int, int]:
    """The varint at ``data[pos]`` and the position after it (ValueError when it is cut
    short or longer than the 10 bytes a 64-bit value takes)."""
    shift = n = 0
    while True:
        if pos >= len(data):
            raise ValueError("the data ends before its varint does")
        byte = data[pos]
        pos += 1
        n |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return n, pos
        shift += 7
        if shift > 63:
            raise ValueError("a varint is longer than 10 bytes")


def _zigzag_varint(value: int) -> bytes:
    return uvarint(((value << 1) ^ (value >> 63)) & ((1 << 64) - 1))


def encode_indexes(indexes: list[int]) -> bytes:
    """The message indexes as Confluent writes them: ``[0]`` (the file's first message) is
    the single byte 0; otherwise a zigzag-varint count then each index, zigzag-varint."""
    if indexes == [0]:
        return b"\x00"
    return _zigzag_varint(len(indexes)) + b"".join(_zigzag_varint(i) for i in indexes)


def _read_zigzag(data: bytes, pos: int) -> tuple[int, int]:
    try:
        n, pos = read_uvarint(data, pos)
    except ValueError as exc:
        raise ValueError(f"a message index: {exc}") from None
    return (n >> 1) ^ -(n & 1), pos


def decode_indexes(data: bytes, pos: int) -> tuple[list[int], int]:
    """The message indexes starting at ``data[pos]`` and where the payload starts."""
    count, pos = _read_zigzag(data, pos)
    if count == 0:
        return [0], pos
    if count < 0 or count > 100:
        raise ValueError(f"bad message index count {count}")
    indexes = []
    for _ in range(count):
        index, pos = _read_zigzag(data, pos)
        if index < 0:
            raise ValueError(f"negative message index {index}")
        indexes.append(index)
    return indexes, pos


def message_at(file: descriptor_pb2.FileDescriptorProto, indexes: list[int]) -> str:
    """The full name of the message ``indexes`` point at in ``file`` (ValueError when out of range)."""
    messages: Any = file.message_type
    path = file.package
    for depth, index in enumerate(indexes):
        if index >= len(messages):
            raise ValueError(
                f"message index {index} at depth {depth} is out of range ({len(messages)} messages)"
            )
        message = messages[index]
        path = f"{path}.{message.name}" if path else message.name
        messages = message.nested_type
    return path


def indexes_of(descriptor: Descriptor) -> list[int]:
    """Where ``descriptor`` sits in its file, as message indexes."""
    indexes: list[int] = []
    current = descriptor
    while current.containing_type is not None:
        parent = current.containing_type
        indexes.append(list(parent.nested_types).index(current))
        current = parent
    indexes.append(list(current.file.message_types_by_name.values()).index(current))
    return list(reversed(indexes))
