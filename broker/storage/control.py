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

from broker.storage.batch import CONTROL, TRANSACTIONAL
from broker.storage.records import Record, RecordsError, build_batch, parse_records

ABORT: Final = 0
COMMIT: Final = 1
_KEY: Final = struct.Struct(">hh")
_VALUE: Final = struct.Struct(">hi")


@dataclass(frozen=True, slots=True)
class Marker:
    commit: bool
    coordinator_epoch: int


def build_marker(
    producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int, timestamp_ms: int
) -> bytes:
    """A COMMIT or ABORT marker batch at base offset 0 (the log assigns the real one)."""
    record = Record(
        0,
        0,
        _KEY.pack(0, COMMIT if commit else ABORT),
        _VALUE.pack(0, coordinator_epoch),
    )
    return build_batch(
        0,
        [record],
        base_timestamp=timestamp_ms,
        max_timestamp=timestamp_ms,
        attributes=TRANSACTIONAL | CONTROL,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=-1,
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
