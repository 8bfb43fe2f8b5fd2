"""The coordinator's memory: Kafka's compacted ``__transaction_state`` topic, in Kafka's
record formats (``broker.transactions.records``). Every state change is appended here before
it is adopted or answered, and read back on start, so transactions survive a kill -9.
The coordinator decides what to write; this module knows where and how."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Final

from broker.config import BrokerConfig
from broker.logs import LogManager
from broker.storage.batch import validate_produced
from broker.storage.log import PartitionLog
from broker.storage.records import parse_records, simple_batch
from broker.transactions import records as rec
from broker.transactions.state import TxnMetadata

log = logging.getLogger(__name__)

TRANSACTION_STATE_TOPIC: Final = "__transaction_state"


class TransactionLog:
    def __init__(self, config: BrokerConfig, logs: LogManager, clock_ms: Callable[[], int]) -> None:
        self.config = config
        self.logs = logs
        self._clock_ms = clock_ms

    def ensure_topic(self) -> None:
        if self.logs.topic(TRANSACTION_STATE_TOPIC) is None:
            self.logs.create_topic(
                TRANSACTION_STATE_TOPIC,
                self.config.transaction_state_log_num_partitions,
                {
                    "cleanup.policy": "compact",
                    "segment.bytes": str(self.config.transaction_state_log_segment_bytes),
                    "compression.type": "uncompressed",
                },
                internal=True,
            )

    def partition_of(self, transactional_id: str) -> int:
        info = self.logs.topic(TRANSACTION_STATE_TOPIC)
        n = info.partitions if info is not None else self.config.transaction_state_log_num_partitions
        return rec.partition_for(transactional_id, n)

    def _partition_log(self, transactional_id: str) -> PartitionLog:
        self.ensure_topic()
        plog = self.logs.get(TRANSACTION_STATE_TOPIC, self.partition_of(transactional_id))
        assert plog is not None
        return plog

    def write(self, transactional_id: str, meta: TxnMetadata | None) -> None:
        """Append the id's new state (None: a tombstone); raises StorageError/OSError."""
        plog = self._partition_log(transactional_id)
        value = rec.encode_value(meta) if meta is not None else None
        batch = simple_batch(0, [(rec.encode_key(transactional_id), value)], self._clock_ms())
        plog.append(batch, validate_produced(batch, 2**31 - 1))
        self.logs.notify((TRANSACTION_STATE_TOPIC, plog.partition))

    def read(self) -> dict[str, TxnMetadata]:
        """Every transactional id's latest state, from the topic (tombstoned ids left out)."""
        latest: dict[str, TxnMetadata | None] = {}
        if self.logs.topic(TRANSACTION_STATE_TOPIC) is None:
            return {}
        for plog in self.logs.partitions(TRANSACTION_STATE_TOPIC):
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
                        if r.key is None:
                            continue
                        try:
                            tid = rec.decode_key(r.key)
                            latest[tid] = None if r.value is None else rec.decode_value(tid, r.value)
                        except (rec.RecordError, UnicodeDecodeError) as exc:
                            # A foreign or damaged record must not stop the broker from starting.
                            log.warning("skipping unreadable %s record: %s", TRANSACTION_STATE_TOPIC, exc)
        return {tid: meta for tid, meta in latest.items() if meta is not None}
