"""An internal compacted topic a coordinator keeps its state in, as Kafka keeps
``__consumer_offsets`` and ``__transaction_state``: created on first use, each key's records
in the partition the coordinator's partition function picks, appended before they are
acted on, and every batch read back on start. What the records mean stays with the
coordinator's own module (``broker.group.offsets_log``, ``broker.transactions.txn_log``)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator

from broker.logs import LogManager
from broker.storage.batch import BatchHeader, validate_produced
from broker.storage.log import PartitionLog
from broker.storage.records import Record, parse_records, simple_batch

log = logging.getLogger(__name__)

# The coordinator's own appends are not bounded by a client's max.message.bytes.
_NO_SIZE_LIMIT = 2**31 - 1


class InternalTopic:
    def __init__(
        self,
        logs: LogManager,
        name: str,
        partitions: int,
        configs: dict[str, str | None],
        partition_for: Callable[[str, int], int],
        clock_ms: Callable[[], int],
    ) -> None:
        """``partitions`` and ``configs`` are used when the topic is created (compaction is
        implied); ``partition_for(key, partitions)`` is Kafka's hash of the key."""
        self.logs = logs
        self.name = name
        self._partitions = partitions
        self._configs: dict[str, str | None] = {"cleanup.policy": "compact", **configs}
        self._partition_for = partition_for
        self._clock_ms = clock_ms

    def ensure(self) -> None:
        if self.logs.topic(self.name) is None:
            self.logs.create_topic(self.name, self._partitions, dict(self._configs), internal=True)

    def partition_of(self, key: str) -> int:
        """``key``'s partition: by the topic's partition count, or the configured count
        while the topic does not exist yet (it will be created with that many)."""
        info = self.logs.topic(self.name)
        return self._partition_for(key, info.partitions if info is not None else self._partitions)

    def log_of(self, key: str) -> PartitionLog:
        """``key``'s partition log, creating the topic if need be."""
        self.ensure()
        plog = self.logs.get(self.name, self.partition_of(key))
        assert plog is not None
        return plog

    def append(self, key: str, batch: bytes) -> int:
        """Append a batch to ``key``'s partition and wake its readers; returns the batch's
        base offset. Raises StorageError/OSError, or ProducerFenced for a stale producer."""
        plog = self.log_of(key)
        result = plog.append(batch, validate_produced(batch, _NO_SIZE_LIMIT))
        self.logs.notify((self.name, plog.partition))
        return result.base_offset

    def write(self, key: str, items: Iterable[tuple[bytes, bytes | None]]) -> int:
        """Append (key, value) records (value None: a tombstone) as one plain batch."""
        return self.append(key, simple_batch(0, items, self._clock_ms()))

    def partition_logs(self) -> Iterator[PartitionLog]:
        """Every partition's log (none while the topic does not exist)."""
        return self.logs.partitions(self.name)

    @staticmethod
    def batches(plog: PartitionLog) -> Iterator[tuple[BatchHeader, list[Record]]]:
        """Every batch of ``plog`` from its log start, control batches included; an
        unreadable batch is logged and skipped, so a damaged topic cannot stop a start."""
        for seg in plog.segments:
            for pos, h in seg.batches():
                if h.last_offset < plog.log_start_offset:
                    continue
                try:
                    _, records = parse_records(seg.read_batch(pos, h))
                except Exception as exc:
                    log.warning("skipping unreadable batch at %d in %s: %s", h.base_offset, seg.path, exc)
                    continue
                yield h, records
