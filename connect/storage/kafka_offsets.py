"""Source offsets in the offsets topic (Kafka Connect's ``KafkaOffsetBackingStore``).

Keys and values are the bytes of ``connect.storage.offsets`` (``["<connector>",{partition}]``
→ the offset map as JSON, a tombstone for a removed offset), the same bytes Kafka
Connect writes, so a Java and a Python cluster can share or hand over the topic.

The whole topic is read into memory on ``start()`` and tailed from then on, so
offsets committed by tasks on other workers show up here; ``refresh()`` waits
until everything written so far is in. A worker should refresh before starting
a source task that may have run elsewhere, so that the task resumes where its
previous owner stopped. ``set()`` returns once every record is acknowledged.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import Future

from typing_extensions import Unpack

from connect.api.errors import ConnectException
from connect.storage.offsets import OffsetBackingStore, canonical_key
from connect.storage.topic_admin import OFFSETS_TOPIC
from connect.storage.topic_store import TopicBackedStore, TopicStoreOptions

log = logging.getLogger(__name__)

_WRITE_TIMEOUT_S = 30.0


class KafkaOffsetBackingStore(OffsetBackingStore, TopicBackedStore):
    """Offsets kept in a compacted topic; thread-safe.

    ``client_settings`` are the worker's Kafka client settings (security, ...).
    With ``create_topic`` the topic is created on ``start()`` if missing
    (``partitions``, ``replication_factor``; -1 for the broker's defaults) and
    checked if it exists.
    """

    purpose = OFFSETS_TOPIC
    no_topic_message = "Offset storage topic must be specified"
    client_suffix = "offsets"

    def __init__(
        self,
        bootstrap_servers: str,
        topic: str,
        *,
        partitions: int = 25,
        write_timeout: float = _WRITE_TIMEOUT_S,
        **options: Unpack[TopicStoreOptions],
    ) -> None:
        OffsetBackingStore.__init__(self)
        settings = dict(options.get("client_settings") or {})
        TopicBackedStore.__init__(
            self,
            bootstrap_servers,
            topic,
            partitions,
            {**settings, "enable.idempotence": True, "message.timeout.ms": 0},
            **options,
        )
        self.write_timeout = write_timeout
        # Where each key's current value was read or written: a record read back later than a
        # newer write of ours must not undo it (keys map to one partition, so offsets compare).
        self._positions: dict[bytes, tuple[int, int]] = {}
        self._running = False

    def start(self) -> None:
        """Create or check the topic and read all of it. Raises ConnectException if that fails."""
        if self._running:
            return
        self._ensure_topic()
        self._log.start()
        self._running = True

    def stop(self) -> None:
        self._running = False
        self._log.stop()

    @property
    def partition_count(self) -> int:
        """The topic's partitions, once started (0 before): an exactly-once task writes each
        key to the partition this store's own writes use."""
        return len(self._log.partitions)

    def refresh(self, timeout: float) -> bool:
        """Read to the end of the topic (offsets other workers committed); False after ``timeout`` s."""
        return self._log.read_to_end(timeout)

    def set(self, values: Mapping[bytes, bytes | None]) -> None:
        """Write every key (None: a tombstone) and return once all are acknowledged.

        Raises ConnectException if any write fails or is not acknowledged within
        ``write_timeout`` seconds; the local view then keeps only what was
        acknowledged.
        """
        if not values:
            return
        deadline = time.monotonic() + self.write_timeout
        sent: list[tuple[bytes, bytes | None, Future[tuple[int, int]]]] = [
            (key, value, self._log.send(key, value)) for key, value in values.items()
        ]
        failure: str | None = None
        for key, value, future in sent:
            try:
                partition, offset = future.result(max(deadline - time.monotonic(), 0.0))
            except TimeoutError:
                failure = failure or f"not acknowledged within {self.write_timeout:g} s"
                continue
            except ConnectException as exc:
                failure = failure or str(exc)
                continue
            self._apply(canonical_key(key), value, partition, offset)
        if failure is not None:
            raise ConnectException(f"could not write source offsets to topic {self.topic}: {failure}")

    def get(self, keys: Iterable[bytes]) -> dict[bytes, bytes | None]:
        """The values in this worker's view (keys in ``canonical_key`` form).

        ``refresh`` first to include what other workers wrote lately."""
        return super().get(keys)

    def _on_record(self, key: bytes | None, value: bytes | None, partition: int, offset: int) -> None:
        if key is None:
            log.warning("ignoring a record without a key at %s-%d offset %d", self.topic, partition, offset)
            return
        self._apply(canonical_key(key), value, partition, offset)

    def _apply(self, key: bytes, value: bytes | None, partition: int, offset: int) -> None:
        with self._lock:
            known = self._positions.get(key)
            if known is not None and known[0] == partition and known[1] > offset:
                return  # older than what this worker already wrote and was acknowledged
            self._positions[key] = (partition, offset)
            if value is None:
                self._data.pop(key, None)
            else:
                self._data[key] = value
