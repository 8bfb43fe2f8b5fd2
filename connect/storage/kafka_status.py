"""Connector and task statuses, and the topics connectors use, in the status topic.

Kafka Connect's ``KafkaStatusBackingStore``, record for record:

- ``status-connector-<name>`` and ``status-task-<name>-<n>`` →
  ``{"state":...,"trace":...|null,"worker_id":...,"generation":N}``; a tombstone
  when the connector or task is gone (a DESTROYED status is written as one).
- ``status-topic-<topic>:connector-<name>`` →
  ``{"topic":{"name":...,"connector":...,"task":N,"discoverTimestamp":ms}}`` (KIP-558).

Every worker reads the whole topic and tails it, so the queries answer for the
whole cluster. As in Kafka, a status is visible once it has been read back from
the topic (usually within milliseconds); ``refresh()`` waits for it.

Writes are asynchronous: the StatusListener methods are called on task threads
and return at once. Writes of one key land in the order they were made: the
producer keeps one request in flight and does not retry on its own (Kafka's
``retries=0``); this store sends a failed write again only if no newer write of
the same key was made since, and the worker's generation has not changed.

Two rules keep a slow worker from overwriting what a newer owner reported:

- UNASSIGNED and FAILED statuses (what a worker reports when it lets go of, or
  loses, a connector or task) are written only if the current status is absent,
  came from this worker, or has an older or equal generation (Kafka's
  ``putSafe``, used for the same two states by Kafka's ``AbstractHerder``).
- A task status read as UNASSIGNED is ignored while the task is RUNNING on another
  worker with a generation at least as new (the old owner let go after the new one
  started it).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, TypeGuard

from typing_extensions import Unpack

from connect.runtime.status import ConnectorTaskId, State, Status
from connect.storage.kafka_log import KafkaLogWriteError, decode_value, encode_value
from connect.storage.topic_admin import STATUS_TOPIC
from connect.storage.topic_store import TopicBackedStore, TopicStoreOptions

log = logging.getLogger(__name__)

CONNECTOR_STATUS_PREFIX = "status-connector-"
TASK_STATUS_PREFIX = "status-task-"
TOPIC_STATUS_PREFIX = "status-topic-"
TOPIC_STATUS_SEPARATOR = ":connector-"

_SAFE_STATES = frozenset({State.UNASSIGNED, State.FAILED})
_RETRY_BACKOFF_S = 0.1
# Kafka's delivery.timeout.ms default: how long a status waits in the producer for a broker.
_DELIVERY_TIMEOUT_MS = 120000


@dataclass(frozen=True, slots=True)
class TopicStatus:
    """A topic a connector used (KIP-558)."""

    topic: str
    connector: str
    task: int
    discover_ms: int


@dataclass(slots=True)
class _Entry:
    """One status key: the value read back, and how many writes this worker has made of it."""

    value: Status | None = None
    sequence: int = 0
    deleted: bool = False


def status_value(status: Status) -> bytes:
    return encode_value(
        {
            "state": status.state.value,
            "trace": status.trace,
            "worker_id": status.worker_id,
            "generation": status.generation,
        }
    )


def topic_status_value(status: TopicStatus) -> bytes:
    return encode_value(
        {
            "topic": {
                "name": status.topic,
                "connector": status.connector,
                "task": status.task,
                "discoverTimestamp": status.discover_ms,
            }
        }
    )


def connector_status_key(connector: str) -> str:
    return CONNECTOR_STATUS_PREFIX + connector


def task_status_key(task: ConnectorTaskId) -> str:
    return f"{TASK_STATUS_PREFIX}{task.connector}-{task.task}"


def topic_status_key(connector: str, topic: str) -> str:
    return f"{TOPIC_STATUS_PREFIX}{topic}{TOPIC_STATUS_SEPARATOR}{connector}"


def parse_task_status_key(key: str) -> ConnectorTaskId | None:
    prefix, sep, number = key.rpartition("-")
    if not sep or not prefix.startswith(TASK_STATUS_PREFIX) or len(prefix) <= len(TASK_STATUS_PREFIX):
        return None
    try:
        return ConnectorTaskId(prefix[len(TASK_STATUS_PREFIX) :], int(number))
    except ValueError:
        return None


def parse_topic_status_key(key: str) -> tuple[str, str] | None:
    """(topic, connector) of ``status-topic-<topic>:connector-<connector>``; topic names have no ':'."""
    rest = key[len(TOPIC_STATUS_PREFIX) :]
    topic, sep, tail = rest.partition(":")
    if not sep or not topic or not (":" + tail).startswith(TOPIC_STATUS_SEPARATOR):
        return None
    connector = (":" + tail)[len(TOPIC_STATUS_SEPARATOR) :]
    return (topic, connector) if connector else None


def _is_int(v: Any) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool)


def parse_status(doc: Any) -> Status | None:
    if not isinstance(doc, dict):
        return None
    state, trace, worker, generation = (doc.get(k) for k in ("state", "trace", "worker_id", "generation"))
    if not isinstance(state, str) or not isinstance(worker, str) or not _is_int(generation):
        return None
    if trace is not None and not isinstance(trace, str):
        return None
    try:
        return Status(State(state), worker, trace, generation)
    except ValueError:
        return None


def parse_topic_status(doc: Any) -> TopicStatus | None:
    inner = doc.get("topic") if isinstance(doc, dict) else None
    if not isinstance(inner, dict):
        return None
    name, connector, task, discovered = (
        inner.get(k) for k in ("name", "connector", "task", "discoverTimestamp")
    )
    if (
        not isinstance(name, str)
        or not isinstance(connector, str)
        or not _is_int(task)
        or not _is_int(discovered)
    ):
        return None
    return TopicStatus(name, connector, task, discovered)


def _can_write_safely(current: Status | None, status: Status) -> bool:
    return current is None or current.worker_id == status.worker_id or current.generation <= status.generation


class KafkaStatusBackingStore(TopicBackedStore):
    """The status topic; a ``StatusListener`` for the worker and the cluster's status view for REST.

    ``client_settings`` are the worker's Kafka client settings (security, ...).
    With ``create_topic`` the topic is created on ``start()`` if missing
    (``partitions``, ``replication_factor``; -1 for the broker's defaults) and
    checked if it exists.
    """

    purpose = STATUS_TOPIC
    no_topic_message = "Must specify topic for connector status."
    client_suffix = "statuses"

    def __init__(
        self, bootstrap_servers: str, topic: str, *, partitions: int = 5, **options: Unpack[TopicStoreOptions]
    ) -> None:
        settings = dict(options.get("client_settings") or {})
        # No retries or idempotence in the producer: this store decides what is worth sending again.
        producer = {
            "message.timeout.ms": _DELIVERY_TIMEOUT_MS,
            **settings,
            "enable.idempotence": False,
            "retries": 0,
        }
        super().__init__(bootstrap_servers, topic, partitions, producer, **options)
        self._lock = threading.Lock()
        self._generation = 0
        self._connectors: dict[str, _Entry] = {}
        self._tasks: dict[ConnectorTaskId, _Entry] = {}
        self._topics: dict[str, dict[str, TopicStatus]] = {}  # connector -> topic -> status
        self._topics_sent: set[tuple[str, str]] = set()  # (connector, topic) written, not yet read back
        self._retries: ThreadPoolExecutor | None = None
        self._running = False

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> None:
        """Create or check the topic and read all of it. Raises ConnectException if that fails."""
        if self._running:
            return
        self._ensure_topic()
        self._retries = ThreadPoolExecutor(1, thread_name_prefix=f"status-retry-{self.topic}")
        self._running = True
        try:
            self._log.start()
        except BaseException:
            self._running = False
            self._retries.shutdown(wait=False)
            raise

    def stop(self) -> None:
        """Send what is queued (a few seconds at most), then stop."""
        self._running = False  # no more retries get scheduled
        self._log.stop()
        if self._retries is not None:
            self._retries.shutdown(wait=True, cancel_futures=True)
            self._retries = None

    def set_generation(self, generation: int) -> None:
        """The group generation this worker is in; statuses it writes from now on carry it."""
        with self._lock:
            self._generation = generation

    def flush(self, timeout: float) -> None:
        """Wait until this worker's status writes so far are acknowledged (ConnectException after
        ``timeout`` seconds)."""
        self._log.flush(timeout)

    def refresh(self, timeout: float) -> bool:
        """Wait for this worker's writes and read the topic to its end; False after ``timeout`` s."""
        return self._log.read_to_end(timeout)

    # -- StatusListener (task and connector threads) -------------------------------------------

    def on_status(self, connector: str, task: int | None, status: Status) -> None:
        """Write a connector's (``task`` None) or a task's status, stamped with this worker's generation."""
        with self._lock:
            status = replace(status, generation=self._generation)
            if task is None:
                key = connector_status_key(connector)
                entry = self._connectors.setdefault(connector, _Entry())
            else:
                key = task_status_key(ConnectorTaskId(connector, task))
                entry = self._tasks.setdefault(ConnectorTaskId(connector, task), _Entry())
            if status.state in _SAFE_STATES and not _can_write_safely(entry.value, status):
                log.debug("not writing %s %s: %s reported it in a newer generation", key, status, entry.value)
                return
            entry.sequence += 1
            sequence = entry.sequence
        value = None if status.state is State.DESTROYED else status_value(status)
        self._send_status(key, value, entry, sequence, status.generation)

    def on_topic_used(self, connector: str, task: int, topic: str) -> None:
        """Record that ``connector`` used ``topic``, once (a later discovery keeps the first time)."""
        with self._lock:
            if topic in self._topics.get(connector, {}) or (connector, topic) in self._topics_sent:
                return
            self._topics_sent.add((connector, topic))
        status = TopicStatus(topic, connector, task, int(time.time() * 1000))
        self._send_topic(connector, topic, topic_status_value(status))

    # -- queries --------------------------------------------------------------------------

    def connector(self, connector: str) -> Status | None:
        with self._lock:
            entry = self._connectors.get(connector)
            return None if entry is None else entry.value

    def task(self, task: ConnectorTaskId) -> Status | None:
        with self._lock:
            entry = self._tasks.get(task)
            return None if entry is None else entry.value

    def tasks(self, connector: str) -> dict[int, Status]:
        with self._lock:
            return {
                t.task: e.value
                for t, e in self._tasks.items()
                if t.connector == connector and e.value is not None
            }

    def connectors(self) -> list[str]:
        with self._lock:
            return sorted(c for c, e in self._connectors.items() if e.value is not None)

    def topics(self, connector: str) -> list[str]:
        with self._lock:
            return sorted(self._topics.get(connector, {}))

    def topic_status(self, connector: str, topic: str) -> TopicStatus | None:
        with self._lock:
            return self._topics.get(connector, {}).get(topic)

    # -- removals -------------------------------------------------------------------------

    def reset_topics(self, connector: str) -> None:
        """Tombstones for every topic ``connector`` is known to have used (``PUT .../topics/reset``)."""
        with self._lock:
            topics = set(self._topics.get(connector, {})) | {
                t for c, t in self._topics_sent if c == connector
            }
            self._topics_sent -= {(connector, t) for t in topics}
        for topic in sorted(topics):
            self._send_topic(connector, topic, None)

    def forget_tasks_from(self, connector: str, count: int) -> None:
        """Tasks numbered ``count`` and above no longer exist: tombstones for their statuses."""
        with self._lock:
            gone = sorted(t for t in self._tasks if t.connector == connector and t.task >= count)
        for task in gone:
            self._destroy(task_status_key(task), self._tasks, task)

    def delete(self, connector: str) -> None:
        """Tombstones for the connector's status, its tasks' statuses and its topics."""
        with self._lock:
            tasks = sorted(t for t in self._tasks if t.connector == connector)
        for task in tasks:
            self._destroy(task_status_key(task), self._tasks, task)
        self._destroy(connector_status_key(connector), self._connectors, connector)
        self.reset_topics(connector)

    def _destroy(self, key: str, entries: dict[Any, _Entry], name: Any) -> None:
        with self._lock:
            entry = entries.setdefault(name, _Entry())
            entry.sequence += 1
            sequence, generation = entry.sequence, self._generation
        self._send_status(key, None, entry, sequence, generation)

    # -- sending and retrying ---------------------------------------------------------------

    def _send_status(
        self, key: str, value: bytes | None, entry: _Entry, sequence: int, generation: int
    ) -> None:
        def done(future: Future[tuple[int, int]]) -> None:
            error = future.exception()
            if error is None:
                return
            if not isinstance(error, KafkaLogWriteError) or not error.retriable:
                log.error("Failed to write status update %s: %s", key, error)
                return
            with self._lock:
                # A newer write of this key, a removal or a new generation makes this one moot.
                if entry.deleted or entry.sequence != sequence or generation != self._generation:
                    return
            self._retry(lambda: self._send_status(key, value, entry, sequence, generation), key, error)

        self._log.send(key.encode(), value).add_done_callback(done)

    def _send_topic(self, connector: str, topic: str, value: bytes | None) -> None:
        key = topic_status_key(connector, topic)

        def done(future: Future[tuple[int, int]]) -> None:
            error = future.exception()
            if error is None:
                return
            if not isinstance(error, KafkaLogWriteError) or not error.retriable:
                log.error("Failed to write topic status %s: %s", key, error)
                return
            with self._lock:
                still_wanted = ((connector, topic) in self._topics_sent) == (value is not None)
            if still_wanted:
                self._retry(lambda: self._send_topic(connector, topic, value), key, error)

        self._log.send(key.encode(), value).add_done_callback(done)

    def _retry(self, resend: Any, key: str, error: BaseException) -> None:
        """Send again from the retry thread (never from the delivery thread that reported the failure)."""
        executor = self._retries
        if not self._running or executor is None:
            return
        log.debug("writing %s failed (%s); sending it again", key, error)

        def later() -> None:
            time.sleep(_RETRY_BACKOFF_S)
            if self._running:
                resend()

        with contextlib.suppress(RuntimeError):  # shut down meanwhile
            executor.submit(later)

    # -- reading the topic (the log's reader thread) --------------------------------------------------

    def _on_record(self, raw_key: bytes | None, value: bytes | None, partition: int, offset: int) -> None:
        try:
            key = raw_key.decode() if raw_key is not None else None
        except UnicodeDecodeError:
            key = None
        if key is None:
            log.warning(
                "Discarding status record at %s-%d offset %d: no UTF-8 key", self.topic, partition, offset
            )
            return
        doc: Any = None
        if value is not None:
            try:
                doc = decode_value(value)
            except ValueError as exc:
                log.error("Failed to deserialize status record %s: %s", key, exc)
                return
        if key.startswith(CONNECTOR_STATUS_PREFIX):
            self._read_connector_status(key, doc, value is None)
        elif key.startswith(TASK_STATUS_PREFIX):
            self._read_task_status(key, doc, value is None)
        elif key.startswith(TOPIC_STATUS_PREFIX):
            self._read_topic_status(key, doc, value is None)
        else:
            log.warning("Discarding record with invalid key %s", key)

    def _read_connector_status(self, key: str, doc: Any, tombstone: bool) -> None:
        connector = key[len(CONNECTOR_STATUS_PREFIX) :]
        if not connector:
            log.warning("Discarding record with invalid connector status key %s", key)
            return
        with self._lock:
            if tombstone:
                removed = self._connectors.pop(connector, None)
                if removed is not None:
                    removed.deleted = True
                return
            status = parse_status(doc)
            if status is None:
                log.error("Failed to deserialize connector status %s", key)
                return
            self._connectors.setdefault(connector, _Entry()).value = status

    def _read_task_status(self, key: str, doc: Any, tombstone: bool) -> None:
        task = parse_task_status_key(key)
        if task is None:
            log.warning("Discarding record with invalid task status key %s", key)
            return
        with self._lock:
            if tombstone:
                removed = self._tasks.pop(task, None)
                if removed is not None:
                    removed.deleted = True
                return
            status = parse_status(doc)
            if status is None:
                log.warning("Failed to parse task status with key %s", key)
                return
            entry = self._tasks.setdefault(task, _Entry())
            current = entry.value
            # A worker that had not yet read a newer owner's RUNNING may still report UNASSIGNED.
            if (
                status.state is State.UNASSIGNED
                and current is not None
                and current.state is State.RUNNING
                and current.worker_id != status.worker_id
                and current.generation >= status.generation
            ):
                log.debug("Ignoring stale status %s in favour of %s for %s", status, current, task)
                return
            entry.value = status

    def _read_topic_status(self, key: str, doc: Any, tombstone: bool) -> None:
        parsed = parse_topic_status_key(key)
        if parsed is None:
            log.warning("Discarding record with invalid topic status key %s", key)
            return
        topic, connector = parsed
        with self._lock:
            if tombstone:
                used = self._topics.get(connector)
                if used is not None:
                    used.pop(topic, None)
                    if not used:
                        del self._topics[connector]
                return
            status = parse_topic_status(doc)
            if status is None:
                log.warning("Failed to parse topic status with key %s", key)
                return
            self._topics.setdefault(connector, {})[topic] = status
            self._topics_sent.discard((connector, topic))
