"""Kafka's ``__transaction_state`` record formats (``TransactionLogKey``/``TransactionLogValue``
version 0, as ``TransactionLog.scala`` writes them), so the topic reads like Kafka's own.
Pure encode/decode; no I/O.

Key: int16 version 0, TransactionalId (int16-length string).
Value: int16 version 0, ProducerId int64, ProducerEpoch int16, TransactionTimeoutMs int32,
TransactionStatus int8, TransactionPartitions nullable array of {Topic string, PartitionIds
[int32]} (null in Empty), TransactionLastUpdateTimestampMs int64,
TransactionStartTimestampMs int64. A null value is a tombstone (an expired id).
"""

from __future__ import annotations

import struct
from collections import defaultdict

from broker.group.records import java_string_hash
from broker.transactions.state import TxnMetadata, TxnState

KEY_VERSION = 0
VALUE_VERSION = 0


class RecordError(ValueError):
    """A ``__transaction_state`` record this broker cannot read."""


def partition_for(transactional_id: str, partitions: int) -> int:
    """Kafka's ``Utils.abs(transactionalId.hashCode) % transaction.state.log.num.partitions``;
    ``Utils.abs`` is Math.abs with Integer.MIN_VALUE mapped to 0 (not ``& 0x7fffffff``)."""
    h = java_string_hash(transactional_id)
    return (0 if h == -(2**31) else abs(h)) % partitions


def _string(v: str) -> bytes:
    b = v.encode()
    return struct.pack(">h", len(b)) + b


def encode_key(transactional_id: str) -> bytes:
    return struct.pack(">h", KEY_VERSION) + _string(transactional_id)


def encode_value(meta: TxnMetadata) -> bytes:
    out = [
        struct.pack(
            ">hqhib", VALUE_VERSION, meta.producer_id, meta.producer_epoch, meta.timeout_ms, meta.state
        )
    ]
    if meta.state == TxnState.EMPTY:
        out.append(struct.pack(">i", -1))
    else:
        by_topic: dict[str, list[int]] = defaultdict(list)
        for topic, partition in sorted(meta.partitions):
            by_topic[topic].append(partition)
        out.append(struct.pack(">i", len(by_topic)))
        for topic, parts in by_topic.items():
            out.append(_string(topic))
            out.append(struct.pack(f">i{len(parts)}i", len(parts), *parts))
    out.append(struct.pack(">qq", meta.update_ms, meta.start_ms))
    return b"".join(out)


class _Reader:
    def __init__(self, buf: bytes) -> None:
        self.buf = buf
        self.pos = 0

    def take(self, fmt: str) -> tuple[int, ...]:
        try:
            values = struct.unpack_from(fmt, self.buf, self.pos)
        except struct.error as exc:
            raise RecordError(f"truncated record: {exc}") from None
        self.pos += struct.calcsize(fmt)
        return tuple(int(v) for v in values)

    def string(self) -> str:
        (n,) = self.take(">h")
        if n < 0 or self.pos + n > len(self.buf):
            raise RecordError("bad string length")
        v = self.buf[self.pos : self.pos + n].decode()
        self.pos += n
        return v


def decode_key(raw: bytes) -> str:
    r = _Reader(raw)
    (version,) = r.take(">h")
    if version != KEY_VERSION:
        raise RecordError(f"unknown key version {version}")
    return r.string()


def decode_value(transactional_id: str, raw: bytes) -> TxnMetadata:
    r = _Reader(raw)
    (version,) = r.take(">h")
    if version not in (0, 1):
        raise RecordError(f"unknown value version {version}")
    if version == 1:
        # Kafka's flexible version (transaction.version >= 1): compact strings/arrays and
        # tagged fields. This broker never writes it; refuse rather than misread.
        raise RecordError("value version 1 (flexible) is not supported")
    pid, epoch, timeout, status = r.take(">qhib")
    try:
        state = TxnState(status)
    except ValueError:
        raise RecordError(f"unknown transaction status {status}") from None
    (count,) = r.take(">i")
    partitions: set[tuple[str, int]] = set()
    for _ in range(max(count, 0)):
        topic = r.string()
        (n,) = r.take(">i")
        for p in r.take(f">{max(n, 0)}i"):
            partitions.add((topic, p))
    update_ms, start_ms = r.take(">qq")
    return TxnMetadata(
        transactional_id, pid, epoch, timeout, state, frozenset(partitions), start_ms, update_ms
    )
