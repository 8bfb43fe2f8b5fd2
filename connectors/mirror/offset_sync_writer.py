"""The producer side of offset syncs: MirrorSourceTask tells it each record the target
acknowledged, and it writes ``OffsetSync`` records to the offset-syncs topic.

Which acknowledgements become a sync right away and which wait for the task's next
``commit()`` is ``OffsetSyncTracker``'s decision (``offset_syncs.py``, pure). This module
sends them the way Kafka's ``OffsetSyncWriter`` does: at most ten in flight, the newest
sync of a partition replacing an older one still waiting, always to partition 0.
A sync that fails to send is logged and not retried: the next one supersedes it, and
translation only ever rounds down to an older sync, never skips a record.

Acknowledgements arrive on the task's thread; ``close`` may come from the thread that
stops the task, so the (rare) sending path holds a lock. The common case, an
acknowledgement that needs no sync, takes none.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Final

from confluent_kafka import KafkaError, Message, Producer

from connectors.mirror.formats import OffsetSync
from connectors.mirror.offset_syncs import OffsetSyncTracker

log = logging.getLogger(__name__)

#: Kafka's MAX_OUTSTANDING_OFFSET_SYNCS.
MAX_OUTSTANDING: Final = 10


class OffsetSyncWriter:
    def __init__(self, producer_config: Mapping[str, Any], topic: str, max_lag: int) -> None:
        self.topic = topic
        self._tracker = OffsetSyncTracker(max_lag)
        self._producer: Producer | None = Producer(dict(producer_config))
        self._pending: dict[tuple[str, int], OffsetSync] = {}
        self._outstanding = 0
        self._lock = threading.Lock()
        self._closed = False
        self.sent = 0  # syncs the offset-syncs topic acknowledged (tests, metrics)
        self.failed = 0

    @property
    def in_flight(self) -> int:
        """Syncs sent and not yet acknowledged (at most ``MAX_OUTSTANDING``)."""
        return self._outstanding

    def acked(self, topic: str, partition: int, upstream: int, downstream: int) -> None:
        """Record ``upstream`` of ``topic``/``partition`` landed at ``downstream`` on the
        target; send a sync now if the tracker says so."""
        sync = self._tracker.acked(topic, partition, upstream, downstream)
        if sync is None:
            return
        with self._lock:
            if self._closed:
                return
            self._pending[topic, partition] = sync
            self._fire()

    def acked_many(
        self, topic: str, partition: int, upstreams: Sequence[int], downstreams: Sequence[int]
    ) -> None:
        """``acked`` for each pair in order; a negative downstream offset (no metadata) is
        skipped, as the task skips such a record."""
        if min(downstreams, default=0) < 0:
            kept = [(u, d) for u, d in zip(upstreams, downstreams, strict=True) if d >= 0]
            upstreams, downstreams = [u for u, _ in kept], [d for _, d in kept]
        syncs = self._tracker.acked_many(topic, partition, upstreams, downstreams)
        if not syncs:
            return
        with self._lock:
            if self._closed:
                return
            # One at a time, as acked() would have queued and fired each.
            for sync in syncs:
                self._pending[topic, partition] = sync
                self._fire()

    def commit(self) -> None:
        """The task committed offsets: send the delayed syncs (so a quiet partition's last
        records get a sync too) and whatever waited for room in flight."""
        delayed = self._tracker.delayed()
        with self._lock:
            if self._closed:
                return
            for sync in delayed:
                # A sync already waiting for the same partition is older: replace it.
                self._pending[sync.topic, sync.partition] = sync
            self._fire()

    def close(self, timeout_s: float = 5.0) -> None:
        """Wait up to ``timeout_s`` for the syncs in flight; nothing is sent afterwards."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            producer, self._producer = self._producer, None
            left = producer.flush(timeout_s) if producer is not None else 0
        # The last reference to the producer goes here: librdkafka closes its connections
        # now rather than when the stopped task is collected (it would otherwise keep
        # reconnecting to a cluster that went away).
        del producer
        if left:
            log.warning("%d offset syncs to %r were not acknowledged before closing", left, self.topic)

    # -- sending (under the lock) -----------------------------------------------------------

    def _fire(self) -> None:
        producer = self._producer
        assert producer is not None  # callers check _closed under the lock
        producer.poll(0)  # acknowledgements free room in flight
        pending = self._pending
        while pending and self._outstanding < MAX_OUTSTANDING:
            key = next(iter(pending))
            sync = pending[key]
            try:
                producer.produce(self.topic, sync.value(), sync.key(), 0, self._delivered)
            except BufferError:
                return  # the producer's queue is full: the next call tries again
            del pending[key]
            self._outstanding += 1

    def _delivered(self, err: KafkaError | None, msg: Message) -> None:
        # Runs inside producer.poll/flush, on a thread that holds the lock.
        self._outstanding -= 1
        if err is not None:
            self.failed += 1
            log.error("failed to send an offset sync to %r: %s", self.topic, err.str())
        else:
            self.sent += 1
