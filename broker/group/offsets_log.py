"""The groups' memory: Kafka's compacted ``__consumer_offsets`` topic, in Kafka's record
formats (``broker.group.records``). Committed offsets and group metadata are appended
here before they are acknowledged and read back on start, so groups survive restarts.
The coordinator decides what to write; this module knows where and how."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from broker.config import BrokerConfig
from broker.group import records as rec
from broker.group.model import Group, OffsetEntry
from broker.group.txn_offsets import PendingTxnOffsets, apply_committed
from broker.internal_topic import InternalTopic
from broker.logs import LogManager
from broker.storage.batch import TRANSACTIONAL, BatchHeader
from broker.storage.log import StorageError
from broker.storage.records import Record as LogRecord
from broker.storage.records import build_batch

log = logging.getLogger(__name__)

OFFSETS_TOPIC: Final = "__consumer_offsets"

Record = tuple[bytes, bytes | None]
GroupOffsets = dict[str, dict[tuple[str, int], OffsetEntry]]

# A control record's key: int16 version, int16 type (Kafka's ControlRecordType).
_ABORT, _COMMIT = 0, 1


@dataclass(slots=True)
class Loaded:
    """What ``__consumer_offsets`` holds: each group's latest metadata (None: deleted), its
    committed offsets, and the transactional offsets whose transaction has no marker yet."""

    groups: dict[str, rec.GroupValue | None] = field(default_factory=dict)
    offsets: GroupOffsets = field(default_factory=dict)
    pending: PendingTxnOffsets = field(default_factory=PendingTxnOffsets)


class OffsetsLog:
    """Appends to and reads back ``__consumer_offsets``."""

    def __init__(self, config: BrokerConfig, logs: LogManager, clock_ms: Callable[[], int]) -> None:
        self._clock_ms = clock_ms
        self.topic = InternalTopic(
            logs,
            OFFSETS_TOPIC,
            config.offsets_topic_num_partitions,
            {
                "segment.bytes": str(config.offsets_topic_segment_bytes),
                "compression.type": "producer",
            },
            rec.partition_for,
            clock_ms,
        )

    def ensure_topic(self) -> None:
        self.topic.ensure()

    def write(self, group_id: str, items: list[Record]) -> int:
        """Append records for ``group_id`` (all to its partition); returns the first one's
        offset (-1 when there is nothing to write). Raises StorageError."""
        if not items:
            return -1
        return self.topic.write(group_id, items)

    def write_transactional(
        self, group_id: str, items: list[Record], producer_id: int, producer_epoch: int
    ) -> int:
        """Append a TxnOffsetCommit's records as a batch of the producer's transaction (the
        transactional bit, its pid/epoch, no sequence: Kafka's coordinator writes them so), so
        that the marker the transaction coordinator later writes here closes it. Returns the
        first record's offset; raises StorageError, or the log's ProducerFenced for an epoch
        older than the partition has seen from that producer."""
        now = self._clock_ms()
        records = [LogRecord(i, 0, k, v) for i, (k, v) in enumerate(items)]
        batch = build_batch(
            0,
            records,
            base_timestamp=now,
            max_timestamp=now,
            attributes=TRANSACTIONAL,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            base_sequence=-1,
        )
        return self.topic.append(group_id, batch)

    def partition_for(self, group_id: str) -> int:
        """The ``__consumer_offsets`` partition that holds ``group_id`` (creating the topic)."""
        return self.topic.log_of(group_id).partition

    def read(self) -> Loaded:
        """Replay the topic: groups, committed offsets, and pending transactional offsets.

        A transactional batch's offsets wait for their producer's marker in the same
        partition (COMMIT applies them where they supersede, ABORT drops them); those
        still waiting at the end stay pending until the transaction coordinator, once it
        has recovered, completes the transaction.
        """
        loaded = Loaded()
        for plog in self.topic.partition_logs():
            pending = PendingTxnOffsets()
            for h, records in self.topic.batches(plog):
                if h.is_control:
                    _replay_marker(h, records, pending, loaded.offsets)
                elif h.is_transactional:
                    for r in records:
                        _stage(r.key, r.value, h.producer_id, h.base_offset + r.offset_delta, pending)
                else:
                    for r in records:
                        _apply(r.key, r.value, h.base_offset + r.offset_delta, loaded, pending)
            for pid, group_id, offsets in pending.items():
                loaded.pending.stage(pid, group_id, offsets.items())
        return loaded

    def persist_group(self, group: Group) -> None:
        """The group's metadata (members, generation, assignments) as its latest record."""
        value = rec.GroupValue(
            group.protocol_type or "",
            group.generation,
            group.protocol_name,
            group.leader_id,
            group.state_timestamp,
            tuple(
                rec.MemberValue(
                    m.member_id,
                    m.instance_id,
                    m.client_id,
                    m.client_host,
                    m.rebalance_timeout_ms,
                    m.session_timeout_ms,
                    m.metadata_for(group.protocol_name),
                    m.assignment,
                )
                for m in group.members.values()
            ),
        )
        try:
            self.write(
                group.group_id,
                [(rec.encode_group_key(rec.GroupKey(group.group_id)), rec.encode_group_value(value))],
            )
        except StorageError as exc:
            log.error("cannot persist group %s: %s", group.group_id, exc)


def offset_record(group_id: str, topic: str, partition: int, entry: OffsetEntry) -> Record:
    return (
        rec.encode_offset_key(rec.OffsetKey(group_id, topic, partition)),
        rec.encode_offset_value(
            rec.OffsetValue(entry.offset, entry.leader_epoch, entry.metadata, entry.commit_timestamp)
        ),
    )


def offset_tombstone(group_id: str, topic: str, partition: int) -> Record:
    return (rec.encode_offset_key(rec.OffsetKey(group_id, topic, partition)), None)


def group_tombstone(group_id: str) -> Record:
    return (rec.encode_group_key(rec.GroupKey(group_id)), None)


def _apply(
    key: bytes | None, value: bytes | None, record_offset: int, loaded: Loaded, pending: PendingTxnOffsets
) -> None:
    if key is None:
        return
    try:
        k = rec.decode_key(key)
        if isinstance(k, rec.OffsetKey):
            group_offsets = loaded.offsets.setdefault(k.group, {})
            if value is None:
                group_offsets.pop((k.topic, k.partition), None)
            else:
                group_offsets[(k.topic, k.partition)] = _entry(value, record_offset)
        elif isinstance(k, rec.GroupKey):
            if value is None:
                loaded.groups[k.group] = None
                loaded.offsets.pop(k.group, None)
                pending.forget_group(k.group)  # as delete_group did when it wrote the tombstone
            else:
                loaded.groups[k.group] = rec.decode_group_value(value)
    except Exception as exc:  # a foreign or damaged record must not stop the broker from starting
        log.warning("skipping unreadable %s record: %s", OFFSETS_TOPIC, exc)


def _stage(
    key: bytes | None, value: bytes | None, producer_id: int, record_offset: int, pending: PendingTxnOffsets
) -> None:
    """A TxnOffsetCommit record: pending until its producer's marker."""
    if key is None or value is None:
        return
    try:
        k = rec.decode_key(key)
        if isinstance(k, rec.OffsetKey):
            pending.stage(producer_id, k.group, [((k.topic, k.partition), _entry(value, record_offset))])
    except Exception as exc:
        log.warning("skipping unreadable transactional %s record: %s", OFFSETS_TOPIC, exc)


def _replay_marker(
    h: BatchHeader, records: list[LogRecord], pending: PendingTxnOffsets, offsets: GroupOffsets
) -> None:
    """A COMMIT or ABORT marker: the producer's transaction in this partition is over."""
    key = records[0].key if records else None
    if key is None or len(key) < 4:
        return
    kind = int.from_bytes(key[2:4], "big", signed=True)
    if kind not in (_ABORT, _COMMIT):
        return  # another control record type (e.g. a KRaft leader change): no transaction ends
    for group_id, group_offsets in pending.complete(h.producer_id).items():
        if kind == _COMMIT:
            apply_committed(offsets.setdefault(group_id, {}), group_offsets.items())


def _entry(value: bytes, record_offset: int) -> OffsetEntry:
    v = rec.decode_offset_value(value)
    return OffsetEntry(v.offset, v.leader_epoch, v.metadata, v.commit_timestamp, record_offset)
