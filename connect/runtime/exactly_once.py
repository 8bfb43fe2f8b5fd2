"""The pieces of exactly-once source delivery (KIP-618) that are not the task's loop.

- Names: a task's producer is ``<group.id>-<connector>-<task>`` (so a worker that starts
  the task finds, and fences, the producer of its previous incarnation); the leader writes
  the config topic as ``connect-cluster-<group.id>``.
- Producer settings: idempotence forced, ``message.timeout.ms`` within the transaction
  timeout (librdkafka refuses a transactional producer otherwise).
- Where a task's offsets go inside its transaction: the connector's offsets topic, each
  key in the partition Kafka's Java partitioner (murmur2) picks, the partition the
  offsets store's own writes use, so compaction keeps one value per key.
- ``WorkerTransactionContext``: what a task with connector-defined boundaries asks for.
- ``fence_producers``: Kafka's ``Admin.fenceProducers`` done the way librdkafka can, an
  ``InitProducerId`` per transactional id (it bumps the epoch and aborts an open
  transaction, so a zombie task's producer can write no more).
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from confluent_kafka import KafkaException, Producer

from connect.api.errors import ConnectException
from connect.api.records import SourceRecord
from connect.api.task import TransactionContext
from connect.storage.offsets import OffsetBackingStore

log = logging.getLogger(__name__)

# librdkafka's (and Java's) transaction.timeout.ms default.
DEFAULT_TRANSACTION_TIMEOUT_MS = 60000


def task_transactional_id(group_id: str, connector: str, task: int) -> str:
    """Kafka's ``Worker.taskTransactionalId``."""
    return f"{group_id}-{connector}-{task}"


def leader_transactional_id(group_id: str) -> str:
    """Kafka's ``DistributedConfig.transactionalProducerId``."""
    return f"connect-cluster-{group_id}"


def transactional_producer_config(base: Mapping[str, Any], transactional_id: str) -> dict[str, Any]:
    """``base`` made transactional. A ``transactional.id`` the user set is replaced (Kafka does
    so too, with a warning: the id is how zombies are fenced)."""
    config = dict(base)
    if config.get("transactional.id") not in (None, transactional_id):
        log.warning(
            "ignoring transactional.id=%s: exactly-once source tasks use %s",
            config["transactional.id"],
            transactional_id,
        )
    config["transactional.id"] = transactional_id
    config["enable.idempotence"] = True
    config["acks"] = "all"
    timeout = int(config.get("transaction.timeout.ms", DEFAULT_TRANSACTION_TIMEOUT_MS))
    message_timeout = int(config.get("message.timeout.ms", timeout))
    if message_timeout <= 0 or message_timeout > timeout:
        config["message.timeout.ms"] = timeout
    return config


def murmur2(data: bytes) -> int:
    """Kafka's ``Utils.murmur2`` (seed 0x9747b28c), as a signed 32-bit value."""
    m, r = 0x5BD1E995, 24
    length = len(data)
    h = (0x9747B28C ^ length) & 0xFFFFFFFF
    whole = length // 4
    for i in range(whole):
        k = int.from_bytes(data[4 * i : 4 * i + 4], "little")
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> r
        k = (k * m) & 0xFFFFFFFF
        h = (h * m) & 0xFFFFFFFF
        h ^= k
    rest = length % 4
    tail = data[4 * whole :]
    if rest == 3:
        h ^= tail[2] << 16
    if rest >= 2:
        h ^= tail[1] << 8
    if rest >= 1:
        h ^= tail[0]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


@functools.lru_cache(maxsize=4096)
def key_partition(key: bytes, partitions: int) -> int:
    """The partition Kafka's default partitioner (and librdkafka's ``murmur2_random``) gives a key.

    Cached: an exactly-once task asks twice per transaction for each source partition's
    offsets key, and murmur2 in Python costs about 14 us for a file source's key
    (``benchmarks/eos_source.py``: the task thread's time between two commits)."""
    return (murmur2(key) & 0x7FFFFFFF) % partitions


@dataclass(frozen=True, slots=True)
class ExactlyOnceSetup:
    """What the worker gives an exactly-once task beyond its producer settings.

    ``fence`` runs before the producer's ``init_transactions`` (the herder's preflight zombie
    fencing), ``verify`` after it (the task is still this worker's, of the current
    generation). ``offsets_topic``/``offsets_partitions`` are the connector's offsets
    topic, written by the task's producer inside each transaction; ``secondary`` the
    worker's global store when it is another topic (a copy is written there after each
    commit), ``refresh`` reads the offsets committed so far (False: not within the timeout).
    """

    connector: str
    transactional_id: str
    offsets_topic: str
    offsets_partitions: int
    refresh: Callable[[float], bool]
    secondary: OffsetBackingStore | None = None
    fence: Callable[[], None] | None = None
    verify: Callable[[], None] | None = None


class WorkerTransactionContext(TransactionContext):
    """Kafka's ``WorkerTransactionContext``: requests of a task thread, read by its runner.

    Records are told apart by identity (the objects the task's ``poll`` returned). Thread
    safe: a task may ask from a thread of its own."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._commit_records: set[int] = set()
        self._abort_records: set[int] = set()
        self._commit_batch = False
        self._abort_batch = False

    def commit_transaction(self, record: SourceRecord | None = None) -> None:
        with self._lock:
            if record is None:
                self._commit_batch = True
            else:
                self._commit_records.add(id(record))

    def abort_transaction(self, record: SourceRecord | None = None) -> None:
        with self._lock:
            if record is None:
                self._abort_batch = True
            else:
                self._abort_records.add(id(record))

    def should_commit_batch(self) -> bool:
        with self._lock:
            self._check_batch()
            asked, self._commit_batch = self._commit_batch, False
            return asked

    def should_abort_batch(self) -> bool:
        with self._lock:
            self._check_batch()
            asked, self._abort_batch = self._abort_batch, False
            return asked

    def should_commit_on(self, record: SourceRecord) -> bool:
        with self._lock:
            self._check_record(record)
            if id(record) in self._commit_records:
                self._commit_records.discard(id(record))
                return True
            return False

    def should_abort_on(self, record: SourceRecord) -> bool:
        with self._lock:
            self._check_record(record)
            if id(record) in self._abort_records:
                self._abort_records.discard(id(record))
                return True
            return False

    @property
    def has_record_requests(self) -> bool:
        with self._lock:
            return bool(self._commit_records or self._abort_records)

    def _check_batch(self) -> None:
        if self._commit_batch and self._abort_batch:
            raise ConnectException("Connector requested both commit and abort of same transaction")

    def _check_record(self, record: SourceRecord) -> None:
        if id(record) in self._commit_records and id(record) in self._abort_records:
            raise ConnectException(
                "Connector requested both commit and abort of same record against topic/partition "
                f"{record.topic}/{record.kafka_partition}"
            )


def fence_producers(
    producer_base: Mapping[str, Any], transactional_ids: Iterable[str], timeout_s: float = 60.0
) -> None:
    """Fence every producer with one of ``transactional_ids`` (Kafka's ``Admin.fenceProducers``):
    an ``InitProducerId`` each, in parallel. Raises ConnectException naming the first id
    that could not be fenced."""
    ids = list(transactional_ids)
    if not ids:
        return

    def fence(transactional_id: str) -> None:
        config = transactional_producer_config(
            {**producer_base, "client.id": f"{producer_base.get('client.id', 'connect')}-fencer"},
            transactional_id,
        )
        config.pop("on_delivery", None)
        producer = Producer(config)
        try:
            producer.init_transactions(timeout_s)
        except KafkaException as exc:
            raise ConnectException(
                f"could not fence producer {transactional_id}: {exc.args[0].str()}"
            ) from exc
        finally:
            producer.flush(0)

    with ThreadPoolExecutor(max_workers=min(len(ids), 8), thread_name_prefix="fence") as pool:
        for future in [pool.submit(fence, i) for i in ids]:
            future.result()
    log.info("fenced out the producers %s", ", ".join(ids))
