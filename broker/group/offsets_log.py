"""The groups' memory: Kafka's compacted ``__consumer_offsets`` topic, in Kafka's record
formats (``broker.group.records``). Committed offsets and group metadata are appended
here before they are acknowledged and read back on start, so groups survive restarts.
The coordinator decides what to write; this module knows where and how."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Final

from broker.config import BrokerConfig
from broker.group import records as rec
from broker.group.model import Group, OffsetEntry
from broker.logs import LogManager
from broker.storage.batch import validate_produced
from broker.storage.log import PartitionLog, StorageError
from broker.storage.records import parse_records, simple_batch

log = logging.getLogger(__name__)

OFFSETS_TOPIC: Final = "__consumer_offsets"

Record = tuple[bytes, bytes | None]


class OffsetsLog:
    """Appends to and reads back ``__consumer_offsets``."""

    def __init__(self, config: BrokerConfig, logs: LogManager, clock_ms: Callable[[], int]) -> None:
        self.config = config
        self.logs = logs
        self._clock_ms = clock_ms

    def ensure_topic(self) -> None:
        if self.logs.topic(OFFSETS_TOPIC) is None:
            self.logs.create_topic(
                OFFSETS_TOPIC,
                self.config.offsets_topic_num_partitions,
                {
                    "cleanup.policy": "compact",
                    "segment.bytes": str(self.config.offsets_topic_segment_bytes),
                    "compression.type": "producer",
                },
                internal=True,
            )

    def _partition_log(self, group_id: str) -> PartitionLog:
        self.ensure_topic()
        info = self.logs.topic(OFFSETS_TOPIC)
        assert info is not None
        plog = self.logs.get(OFFSETS_TOPIC, rec.partition_for(group_id, info.partitions))
        assert plog is not None
        return plog

    def write(self, group_id: str, items: list[Record]) -> None:
        """Append records for ``group_id`` (all to its partition); raises StorageError."""
        if not items:
            return
        plog = self._partition_log(group_id)
        batch = simple_batch(0, items, self._clock_ms())
        plog.append(batch, validate_produced(batch, 2**31 - 1))
        self.logs.notify((OFFSETS_TOPIC, plog.partition))

    def read(self) -> tuple[dict[str, rec.GroupValue | None], dict[str, dict[tuple[str, int], OffsetEntry]]]:
        """Every group's latest metadata (None: deleted) and committed offsets, from the topic."""
        loaded: dict[str, rec.GroupValue | None] = {}
        offsets: dict[str, dict[tuple[str, int], OffsetEntry]] = {}
        if self.logs.topic(OFFSETS_TOPIC) is None:
            return loaded, offsets
        for plog in self.logs.partitions(OFFSETS_TOPIC):
            for seg in plog.segments:
                for pos, h in seg.batches():
                    if h.last_offset < plog.log_start_offset or h.is_control:
                        continue
                    try:
                        _, records = parse_records(seg.read_batch(pos, h))
                    except Exception as exc:
                        log.warning("skipping unreadable batch at %d in %s: %s", h.base_offset, seg.path, exc)
                        continue
                    for r in records:
                        _apply(r.key, r.value, loaded, offsets)
        return loaded, offsets

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
    key: bytes | None,
    value: bytes | None,
    loaded: dict[str, rec.GroupValue | None],
    offsets: dict[str, dict[tuple[str, int], OffsetEntry]],
) -> None:
    if key is None:
        return
    try:
        k = rec.decode_key(key)
        if isinstance(k, rec.OffsetKey):
            group_offsets = offsets.setdefault(k.group, {})
            if value is None:
                group_offsets.pop((k.topic, k.partition), None)
            else:
                v = rec.decode_offset_value(value)
                group_offsets[(k.topic, k.partition)] = OffsetEntry(
                    v.offset, v.leader_epoch, v.metadata, v.commit_timestamp
                )
        elif isinstance(k, rec.GroupKey):
            if value is None:
                loaded[k.group] = None
                offsets.pop(k.group, None)
            else:
                loaded[k.group] = rec.decode_group_value(value)
    except Exception as exc:  # a foreign or damaged record must not stop the broker from starting
        log.warning("skipping unreadable %s record: %s", OFFSETS_TOPIC, exc)
