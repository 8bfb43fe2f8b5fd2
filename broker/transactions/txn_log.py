"""The coordinator's memory: Kafka's compacted ``__transaction_state`` topic, in Kafka's
record formats (``broker.transactions.records``). Every state change is appended here before
it is adopted or answered, and read back on start, so transactions survive a kill -9.
The coordinator decides what to write; this module knows where and how."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Final

from broker.config import BrokerConfig
from broker.internal_topic import InternalTopic
from broker.logs import LogManager
from broker.storage.control import one_record_batch
from broker.transactions import records as rec
from broker.transactions.state import TxnMetadata

log = logging.getLogger(__name__)

TRANSACTION_STATE_TOPIC: Final = "__transaction_state"
# Bounds the encoded-key cache (ids come and go over the broker's life).
_KEY_CACHE_SIZE: Final = 10_000


class TransactionLog:
    def __init__(self, config: BrokerConfig, logs: LogManager, clock_ms: Callable[[], int]) -> None:
        self._clock_ms = clock_ms
        # Encoded keys by id: each transaction logs its id's state three times.
        self._keys: dict[str, bytes] = {}
        self.topic = InternalTopic(
            logs,
            TRANSACTION_STATE_TOPIC,
            config.transaction_state_log_num_partitions,
            {
                "segment.bytes": str(config.transaction_state_log_segment_bytes),
                "compression.type": "uncompressed",
            },
            rec.partition_for,
            clock_ms,
        )

    def ensure_topic(self) -> None:
        self.topic.ensure()

    def partition_of(self, transactional_id: str) -> int:
        return self.topic.partition_of(transactional_id)

    def write(self, transactional_id: str, meta: TxnMetadata | None) -> None:
        """Append the id's new state (None: a tombstone); raises StorageError/OSError."""
        value = rec.encode_value(meta) if meta is not None else None
        key = self._keys.get(transactional_id)
        if key is None:
            if len(self._keys) >= _KEY_CACHE_SIZE:
                self._keys.clear()
            key = self._keys[transactional_id] = rec.encode_key(transactional_id)
        self.topic.append(transactional_id, one_record_batch(key, value, self._clock_ms()))

    def read(self) -> dict[str, TxnMetadata]:
        """Every transactional id's latest state, from the topic (tombstoned ids left out)."""
        latest: dict[str, TxnMetadata | None] = {}
        for plog in self.topic.partition_logs():
            for h, records in self.topic.batches(plog):
                if h.is_control:
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
