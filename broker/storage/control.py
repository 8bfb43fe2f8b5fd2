"""Transaction markers: the control batches that end a transaction in a data partition.

Kafka's format (``EndTransactionMarker``, ``ControlRecordType``): a batch with the
transactional and control attribute bits, the transaction's producer id and epoch, base
sequence -1 and one record whose key is int16 version 0 + int16 type (0 ABORT, 1 COMMIT)
and whose value is int16 version 0 + int32 coordinator epoch. The record takes an
offset like any other; consumers never see it as data.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Final

from crc32c import crc32c

from broker.storage.batch import ATTRIBUTES_OFFSET, CONTROL, HEADER, HEADER_SIZE, LOG_OVERHEAD, TRANSACTIONAL
from broker.storage.records import RecordsError, parse_records

ABORT: Final = 0
COMMIT: Final = 1
_KEY: Final = struct.Struct(">hh")
_VALUE: Final = struct.Struct(">hi")


@dataclass(frozen=True, slots=True)
class Marker:
    commit: bool
    coordinator_epoch: int


def _zigzag(n: int) -> bytes:
    """A signed varint (zigzag), as the v2 record format writes lengths."""
    v = (n << 1) ^ (n >> 63)
    out = bytearray()
    while v > 0x7F:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


_NULL = _zigzag(-1)


def one_record_batch(
    key: bytes | None,
    value: bytes | None,
    timestamp_ms: int,
    attributes: int = 0,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
) -> bytes:
    """An uncompressed v2 batch of one record (no headers) at base offset 0, byte for byte
    what ``records.build_batch`` makes of it. The coordinators write several of these per
    transaction (markers, ``__transaction_state`` records); the general encoder's per-field
    varint writers were about a sixth of the broker's EndTxn time (``benchmarks/eos_source.py``
    profiled with py-spy)."""
    # attributes, timestamp delta 0, offset delta 0, key, value, 0 headers
    body = b"".join(
        (
            b"\x00\x00\x00",
            _NULL if key is None else _zigzag(len(key)) + key,
            _NULL if value is None else _zigzag(len(value)) + value,
            b"\x00",
        )
    )
    records = _zigzag(len(body)) + body
    header = bytearray(
        HEADER.pack(
            0,
            HEADER_SIZE - LOG_OVERHEAD + len(records),
            0,
            2,
            0,
            attributes,
            0,
            timestamp_ms,
            timestamp_ms,
            producer_id,
            producer_epoch,
            base_sequence,
            1,
        )
    )
    struct.pack_into(">I", header, 17, crc32c(records, crc32c(header[ATTRIBUTES_OFFSET:])))
    return bytes(header) + records


def build_marker(
    producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int, timestamp_ms: int
) -> bytes:
    """A COMMIT or ABORT marker batch at base offset 0 (the log assigns the real one)."""
    return one_record_batch(
        _KEY.pack(0, COMMIT if commit else ABORT),
        _VALUE.pack(0, coordinator_epoch),
        timestamp_ms,
        TRANSACTIONAL | CONTROL,
        producer_id,
        producer_epoch,
    )


def read_marker(batch: bytes | bytearray | memoryview) -> Marker | None:
    """The marker a control batch holds; None for other control records (and for an empty
    control batch, which compaction leaves behind when a transaction's data is gone)."""
    try:
        _, records = parse_records(batch)
    except RecordsError:
        return None
    if not records or records[0].key is None or len(records[0].key) < _KEY.size:
        return None
    _, kind = _KEY.unpack_from(records[0].key)
    value = records[0].value
    if kind not in (ABORT, COMMIT) or value is None or len(value) < _VALUE.size:
        return None
    # Newer value versions keep the epoch at the same place (Kafka parses them as version 0).
    _, coordinator_epoch = _VALUE.unpack_from(value)
    return Marker(kind == COMMIT, coordinator_epoch)
