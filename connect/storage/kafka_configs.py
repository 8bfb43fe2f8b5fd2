"""Connector configs, task configs, target states, restart requests and session keys in the config topic.

Kafka Connect's ``KafkaConfigBackingStore``, record for record (keys are UTF-8,
values Kafka's JsonConverter output without schemas):

- ``connector-<name>`` → ``{"properties":{...}}``; a tombstone deletes the connector
  (and, in the view, its task configs).
- ``target-state-<name>`` → ``{"state":"STARTED|PAUSED","state.v2":"STARTED|PAUSED|STOPPED"}``;
  STOPPED is written as PAUSED in ``state`` for workers that predate it. A
  connector without one is STARTED.
- ``task-<name>-<n>`` → ``{"properties":{...}}``, buffered until ``commit-<name>`` →
  ``{"tasks":N}``; a commit applies them only if tasks 0..N-1 were all seen since
  the previous commit, otherwise the connector is *inconsistent* (compaction
  removed some, or a leader died mid-write) until its tasks are written again.
  A commit for a connector with no config is ignored (it was deleted and
  compaction removed the tombstone, KAFKA-16838).
- ``restart-connector-<name>`` → ``{"include-tasks":bool,"only-failed":bool}``.
- ``tasks-fencing-<name>`` → ``{"task-count":N}`` (exactly-once sources, KIP-618): the task
  count of the generation whose zombies were fenced last. Task configs read after it put
  the connector back in *pending fencing*; the record itself takes it out.
- ``session-key`` → ``{"key":"<base64>","algorithm":"HmacSHA256","creation-timestamp":ms}``.

Unknown keys are skipped with a warning, unusable values logged and skipped:
a bad record never stops the reader. The topic has one partition, so every
worker applies records in the same order; ``ClusterConfigState.offset`` is the
offset of the last record read (workers compare it to know who is behind).

Writes go through the leader (the herder's job) and return once the records are
acknowledged and read back, so ``snapshot()`` includes them. With ``transactional_id``
(``exactly.once.source.support`` enabled or preparing) the leader's writes go through a
transactional producer of that id, claimed with ``claim_write_privileges`` when a worker
becomes leader: a leader that lost its place (a zombie) is fenced and can write no more.
Target states, which any worker writes, keep the plain producer. The listener is
told about changes read after ``start()`` returns, **on the log's reader
thread**: it must hand the news over (to an event loop, a queue) and return.
"""

from __future__ import annotations

import base64
import binascii
import logging
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Protocol, TypeGuard

from typing_extensions import Unpack

from connect.api.errors import ConnectException
from connect.runtime.status import ConnectorTaskId, TargetState
from connect.storage.configs import ClusterConfigState, ConfigListener
from connect.storage.fencable_writer import FencableWriter
from connect.storage.kafka_log import decode_value, encode_value
from connect.storage.topic_admin import CONFIG_TOPIC, check_single_partition
from connect.storage.topic_store import TopicBackedStore, TopicStoreOptions

log = logging.getLogger(__name__)

CONNECTOR_PREFIX = "connector-"
TARGET_STATE_PREFIX = "target-state-"
TASK_PREFIX = "task-"
COMMIT_TASKS_PREFIX = "commit-"
RESTART_PREFIX = "restart-connector-"
TASK_COUNT_RECORD_PREFIX = "tasks-fencing-"  # exactly-once source (KIP-618)
LOGGER_CLUSTER_PREFIX = "logger-cluster-"  # cluster-wide log levels (KIP-976); read, not used
SESSION_KEY_KEY = "session-key"

_WRITE_TIMEOUT_S = 30.0  # Kafka's READ_WRITE_TOTAL_TIMEOUT_MS


@dataclass(frozen=True, slots=True)
class RestartRequest:
    connector: str
    include_tasks: bool = False
    only_failed: bool = False


@dataclass(frozen=True, slots=True)
class StoredSessionKey:
    """The key workers sign internal REST requests with, as the leader published it."""

    key: bytes
    algorithm: str
    created_ms: int


class ConfigUpdateListener(Protocol):
    """What a distributed herder is told about the config topic. Called on the log's reader thread."""

    def on_connector_config(self, name: str) -> None: ...

    def on_connector_removed(self, name: str) -> None: ...

    def on_task_configs(self, name: str) -> None: ...

    def on_target_state(self, name: str) -> None: ...

    def on_restart_request(self, name: str, include_tasks: bool, only_failed: bool) -> None: ...

    def on_session_key(self, key: bytes, algorithm: str, created_ms: int) -> None: ...


class _CallableListener:
    """A plain ``ConfigListener`` (the memory store's kind): told the connector of every config change."""

    def __init__(self, fn: ConfigListener) -> None:
        self.fn = fn

    def on_connector_config(self, name: str) -> None:
        self.fn(name)

    def on_connector_removed(self, name: str) -> None:
        self.fn(name)

    def on_task_configs(self, name: str) -> None:
        self.fn(name)

    def on_target_state(self, name: str) -> None:
        self.fn(name)

    def on_restart_request(self, name: str, include_tasks: bool, only_failed: bool) -> None:
        pass

    def on_session_key(self, key: bytes, algorithm: str, created_ms: int) -> None:
        pass


def connector_config_value(config: Mapping[str, str]) -> bytes:
    """``{"properties":{...}}``; values are written as strings, as every reader expects them."""
    return encode_value({"properties": {k: v if v is None else str(v) for k, v in config.items()}})


def target_state_value(state: TargetState) -> bytes:
    legacy = TargetState.PAUSED if state is TargetState.STOPPED else state
    return encode_value({"state": legacy.value, "state.v2": state.value})


def parse_task_key(key: str) -> ConnectorTaskId | None:
    """``task-<connector>-<n>`` (the connector name may contain dashes)."""
    prefix, sep, number = key.rpartition("-")
    if not sep or not prefix.startswith(TASK_PREFIX) or len(prefix) <= len(TASK_PREFIX):
        return None
    try:
        return ConnectorTaskId(prefix[len(TASK_PREFIX) :], int(number))
    except ValueError:
        return None


def _is_int(v: Any) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool)


def _properties(doc: Any) -> dict[str, str] | None:
    """The ``properties`` map of a connector or task config value; None if it is not one."""
    props = doc.get("properties") if isinstance(doc, dict) else None
    if not isinstance(props, dict) or not all(isinstance(v, str) or v is None for v in props.values()):
        return None
    # A null property (Kafka's map allows it) means the same as an absent one.
    return {k: v for k, v in props.items() if v is not None}


class KafkaConfigBackingStore(TopicBackedStore):
    """The config topic of a distributed worker group (see the module docstring for the records).

    ``client_settings`` are the worker's Kafka client settings (security, ...)
    shared by the log's producer, consumers and the admin client. With
    ``create_topic`` the topic is created on ``start()`` if missing (one
    partition, compacted) and checked if it exists.
    """

    purpose = CONFIG_TOPIC
    no_topic_message = "Must specify topic for connector configuration."
    client_suffix = "configs"

    def __init__(
        self,
        bootstrap_servers: str,
        topic: str,
        *,
        transactional_id: str | None = None,
        **options: Unpack[TopicStoreOptions],
    ) -> None:
        settings = dict(options.get("client_settings") or {})
        # Idempotence keeps retried writes from landing twice or out of order.
        producer = {**settings, "enable.idempotence": True, "message.timeout.ms": 0}
        if transactional_id is not None:
            options = {**options, "read_committed": True}
        super().__init__(bootstrap_servers, topic, 1, producer, **options)
        self._fencable = (
            None
            if transactional_id is None
            else FencableWriter(
                bootstrap_servers,
                topic,
                transactional_id,
                f"{self._log.client_id}-leader",
                self.client_settings,
                _WRITE_TIMEOUT_S,
            )
        )
        self._lock = threading.Lock()
        self._listener: ConfigUpdateListener | None = None
        self._started = False  # the listener hears of records read after the initial read only

        self._offset = -1
        self._connector_configs: dict[str, dict[str, str]] = {}
        self._target_states: dict[str, TargetState] = {}
        self._task_configs: dict[ConnectorTaskId, dict[str, str]] = {}
        self._task_counts: dict[str, int] = {}
        self._inconsistent: set[str] = set()
        self._deferred: dict[str, dict[int, dict[str, str]]] = {}  # task configs waiting for their commit
        self._restarts: dict[str, RestartRequest] = {}
        self._session_key: StoredSessionKey | None = None
        self._task_count_records: dict[str, int] = {}
        self._task_generations: dict[str, int] = {}
        self._pending_fencing: set[str] = set()
        self._snapshot: ClusterConfigState | None = None

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> None:
        """Create or check the topic, then read it to the end. Raises ConnectException if that fails."""
        self._ensure_topic()
        self._log.start()
        try:
            check_single_partition(self.topic, len(self._log.partitions), CONFIG_TOPIC)
        except ConnectException:
            self._log.stop()
            raise
        self._started = True

    def stop(self) -> None:
        self._started = False
        self.relinquish_write_privileges()
        self._log.stop()

    # -- the leader's transactional writes ------------------------------------------------

    @property
    def uses_transactions(self) -> bool:
        return self._fencable is not None

    def claim_write_privileges(self) -> None:
        """Become the one writer (Kafka's ``claimWritePrivileges``): no-op without transactions
        or while held."""
        if self._fencable is not None:
            self._fencable.claim()

    def relinquish_write_privileges(self) -> None:
        if self._fencable is not None:
            self._fencable.relinquish()

    def set_listener(self, listener: ConfigUpdateListener | ConfigListener) -> None:
        """Where changes go; a plain callable is called with the connector of each config change."""
        if callable(listener) and not hasattr(listener, "on_connector_config"):
            self._listener = _CallableListener(listener)
        else:
            self._listener = listener  # type: ignore[assignment]  # the Protocol branch

    def refresh(self, timeout: float) -> bool:
        """Read to the end of the topic; False if that took longer than ``timeout`` seconds."""
        return self._log.read_to_end(timeout)

    # -- queries --------------------------------------------------------------------------

    def snapshot(self) -> ClusterConfigState:
        with self._lock:
            if self._snapshot is None:
                self._snapshot = ClusterConfigState(
                    offset=self._offset,
                    connector_configs={k: dict(v) for k, v in self._connector_configs.items()},
                    target_states=dict(self._target_states),
                    task_configs={k: dict(v) for k, v in self._task_configs.items()},
                    task_counts=dict(self._task_counts),
                    inconsistent=frozenset(self._inconsistent),
                    task_count_records=dict(self._task_count_records),
                    task_generations=dict(self._task_generations),
                    pending_fencing=frozenset(self._pending_fencing),
                )
            return self._snapshot

    def contains(self, connector: str) -> bool:
        with self._lock:
            return connector in self._connector_configs

    def session_key(self) -> StoredSessionKey | None:
        """The latest session key in the topic (read at start too, unlike the listener's news)."""
        with self._lock:
            return self._session_key

    def restart_requests(self) -> dict[str, RestartRequest]:
        """The latest restart request read for each existing connector."""
        with self._lock:
            return dict(self._restarts)

    # -- writes ---------------------------------------------------------------------------

    def put_connector_config(
        self, connector: str, config: Mapping[str, str], target_state: TargetState | None = None
    ) -> None:
        """Write a connector's config (and its target state first, if given), and read them back."""
        records: list[tuple[str, bytes | None]] = []
        if target_state is not None:
            # Before the config, so no worker starts the connector in the wrong state.
            records.append((TARGET_STATE_PREFIX + connector, target_state_value(target_state)))
        records.append((CONNECTOR_PREFIX + connector, connector_config_value(config)))
        self._write(records, "connector configuration")

    def remove_connector_config(self, connector: str) -> None:
        """Tombstones for the config and the target state. As in Kafka, task configs get none: readers
        drop a deleted connector's tasks, and ignore task commits of connectors with no config."""
        self._write(
            [(CONNECTOR_PREFIX + connector, None), (TARGET_STATE_PREFIX + connector, None)],
            "connector configuration removal",
        )

    def put_task_configs(self, connector: str, configs: Sequence[Mapping[str, str]]) -> None:
        """Write ``task-<connector>-<n>`` for each config, then, once they are acknowledged, the commit."""
        deadline = time.monotonic() + _WRITE_TIMEOUT_S
        tasks = [(f"{TASK_PREFIX}{connector}-{i}", connector_config_value(c)) for i, c in enumerate(configs)]
        commit = (COMMIT_TASKS_PREFIX + connector, encode_value({"tasks": len(configs)}))
        if self._fencable is not None:
            # One transaction: the commit record is only ever read with all of its tasks.
            self._write([*tasks, commit], "task configurations", deadline)
            return
        self._send(tasks, "task configurations", deadline)
        self._write(
            [(COMMIT_TASKS_PREFIX + connector, encode_value({"tasks": len(configs)}))],
            "task configurations commit",
            deadline,
        )

    def put_task_count_record(self, connector: str, task_count: int) -> None:
        """``tasks-fencing-<connector>``: the producers of ``task_count`` tasks were fenced."""
        value = encode_value({"task-count": task_count})
        self._write([(TASK_COUNT_RECORD_PREFIX + connector, value)], "task count record")

    def put_target_state(self, connector: str, state: TargetState) -> None:
        # Any worker writes target states (pause, resume): never through the leader's producer.
        self._write(
            [(TARGET_STATE_PREFIX + connector, target_state_value(state))], "target state", privileged=False
        )

    def put_restart_request(self, connector: str, include_tasks: bool, only_failed: bool) -> None:
        value = encode_value({"include-tasks": include_tasks, "only-failed": only_failed})
        self._write([(RESTART_PREFIX + connector, value)], "restart request")

    def put_session_key(self, key: bytes, algorithm: str, created_ms: int) -> None:
        value = encode_value(
            {
                "key": base64.b64encode(key).decode("ascii"),
                "algorithm": algorithm,
                "creation-timestamp": created_ms,
            }
        )
        self._write([(SESSION_KEY_KEY, value)], "session key")

    def _send(self, records: Sequence[tuple[str, bytes | None]], what: str, deadline: float) -> None:
        futures: list[Future[tuple[int, int]]] = [self._log.send(k.encode(), v) for k, v in records]
        for future in futures:
            try:
                future.result(max(deadline - time.monotonic(), 0.0))
            except TimeoutError:
                raise ConnectException(
                    f"Error writing {what} to Kafka: not acknowledged within {_WRITE_TIMEOUT_S:g} s"
                ) from None
            except ConnectException as exc:
                raise ConnectException(f"Error writing {what} to Kafka: {exc}") from exc

    def _write(
        self,
        records: Sequence[tuple[str, bytes | None]],
        what: str,
        deadline: float | None = None,
        privileged: bool = True,
    ) -> None:
        """Send, wait for the acknowledgements, and read back (so the snapshot includes the records)."""
        if deadline is None:
            deadline = time.monotonic() + _WRITE_TIMEOUT_S
        if privileged and self._fencable is not None:
            self._fencable.send(records, what, deadline)
        else:
            self._send(records, what, deadline)
        if not self._log.read_to_end(max(deadline - time.monotonic(), 0.0)):
            raise ConnectException(f"Error writing {what} to Kafka: could not read it back in time")

    # -- reading the topic (the log's reader thread) --------------------------------------------------

    def _on_record(self, raw_key: bytes | None, value: bytes | None, partition: int, offset: int) -> None:
        news: list[tuple[str, tuple[Any, ...]]] = []
        with self._lock:
            self._offset = offset
            self._snapshot = None
            key = self._key(raw_key, offset)
            if key is not None:
                doc = self._doc(key, value)
                if doc is not _UNUSABLE:
                    news = self._apply(key, doc)
        listener = self._listener
        if self._started and listener is not None:
            for method, args in news:
                try:
                    getattr(listener, method)(*args)
                except Exception:
                    log.exception("the config listener failed on %s%s", method, args)

    @staticmethod
    def _key(raw: bytes | None, offset: int) -> str | None:
        if raw is None:
            log.error("Discarding config record at offset %d without a key", offset)
            return None
        try:
            return raw.decode()
        except UnicodeDecodeError:
            log.error("Discarding config record at offset %d: its key is not UTF-8 (%r)", offset, raw[:80])
            return None

    @staticmethod
    def _doc(key: str, value: bytes | None) -> Any:
        if value is None:
            return None
        try:
            return decode_value(value)
        except ValueError as exc:
            log.error("Failed to convert config data to Kafka Connect format for %s: %s; skipped", key, exc)
            return _UNUSABLE

    def _apply(self, key: str, doc: Any) -> list[tuple[str, tuple[Any, ...]]]:
        """Apply one record to the view (lock held); the listener calls it calls for."""
        if key.startswith(TARGET_STATE_PREFIX):
            return self._apply_target_state(key[len(TARGET_STATE_PREFIX) :], doc)
        if key.startswith(CONNECTOR_PREFIX):
            return self._apply_connector_config(key[len(CONNECTOR_PREFIX) :], doc)
        if key.startswith(TASK_PREFIX):
            task = parse_task_key(key)
            if task is None:
                log.error(
                    "Ignoring task configuration because %s couldn't be parsed as a task config key", key
                )
                return []
            self._apply_task_config(task, doc)
            return []
        if key.startswith(COMMIT_TASKS_PREFIX):
            return self._apply_commit(key[len(COMMIT_TASKS_PREFIX) :], doc)
        if key.startswith(RESTART_PREFIX):
            return self._apply_restart(key[len(RESTART_PREFIX) :], doc)
        if key == SESSION_KEY_KEY:
            return self._apply_session_key(doc)
        if key.startswith(TASK_COUNT_RECORD_PREFIX):
            self._apply_task_count_record(key[len(TASK_COUNT_RECORD_PREFIX) :], doc)
            return []
        if key.startswith(LOGGER_CLUSTER_PREFIX):
            log.debug("Ignoring config record %s (not used by this worker)", key)
            return []
        log.warning("Discarding config update record with invalid key: %s", key)
        return []

    def _apply_target_state(self, connector: str, doc: Any) -> list[tuple[str, tuple[Any, ...]]]:
        if doc is None:
            # Written together with the connector's tombstone; the removal itself is the news.
            self._target_states.pop(connector, None)
            if connector in self._connector_configs:
                self._target_states[connector] = TargetState.STARTED
            return []
        if not isinstance(doc, dict):
            log.error("Ignoring target state for connector '%s' because it is in the wrong format", connector)
            return []
        name = doc.get("state.v2")
        if name is not None and not isinstance(name, str):
            log.error(
                "Invalid data for target state for connector '%s': 'state.v2' is not a string", connector
            )
            name = None
        if name is None:
            name = doc.get("state")  # written by a worker that predates STOPPED
        try:
            state = TargetState(name)
        except ValueError:
            log.error("Invalid target state for connector '%s': %r", connector, name)
            return []
        previous = self._target_states.get(connector)
        self._target_states[connector] = state
        if state is not previous and connector in self._connector_configs:
            return [("on_target_state", (connector,))]
        return []

    def _apply_connector_config(self, connector: str, doc: Any) -> list[tuple[str, tuple[Any, ...]]]:
        if doc is None:
            self._connector_configs.pop(connector, None)
            self._drop_tasks(connector)
            self._restarts.pop(connector, None)
            log.info("Successfully processed removal of connector '%s'", connector)
            return [("on_connector_removed", (connector,))]
        props = _properties(doc)
        if props is None:
            log.error(
                "Ignoring configuration for connector '%s' because it is in the wrong format", connector
            )
            return []
        self._connector_configs[connector] = props
        # Connectors created before target states existed, or without one, run.
        self._target_states.setdefault(connector, TargetState.STARTED)
        return [("on_connector_config", (connector,))]

    def _drop_tasks(self, connector: str) -> None:
        self._task_counts.pop(connector, None)
        self._deferred.pop(connector, None)
        self._inconsistent.discard(connector)
        for task in [t for t in self._task_configs if t.connector == connector]:
            del self._task_configs[task]

    def _apply_task_config(self, task: ConnectorTaskId, doc: Any) -> None:
        if doc is None:
            log.error("Ignoring task configuration for task %s because it is unexpectedly null", task)
            return
        props = _properties(doc)
        if props is None:
            log.error("Ignoring task configuration for task %s because it is in the wrong format", task)
            return
        # Applied only when the commit record says how many tasks there are.
        self._deferred.setdefault(task.connector, {})[task.task] = props

    def _apply_commit(self, connector: str, doc: Any) -> list[tuple[str, tuple[Any, ...]]]:
        if connector not in self._connector_configs:
            self._drop_tasks(connector)
            log.debug(
                "Ignoring task configs for connector %s; it appears that the connector was deleted "
                "previously and that log compaction has since removed any trace of its previous "
                "configurations",
                connector,
            )
            return []
        count = doc.get("tasks") if isinstance(doc, dict) else None
        if not _is_int(count) or count < 0:
            log.error(
                "Ignoring connector tasks configuration commit for connector '%s': wrong format", connector
            )
            return []
        # Always drop what was buffered: an incomplete set must not mix with the next one.
        deferred = self._deferred.pop(connector, {})
        if all(i in deferred for i in range(count)):
            for task in [t for t in self._task_configs if t.connector == connector]:
                del self._task_configs[task]
            for i in range(count):
                self._task_configs[ConnectorTaskId(connector, i)] = deferred[i]
            self._inconsistent.discard(connector)
            if deferred:
                self._task_generations[connector] = self._task_generations.get(connector, -1) + 1
        else:
            log.warning(
                "Connector %s has an incomplete set of task configs (commit of %d tasks, saw %s), probably "
                "due to compaction; its tasks wait until they are written again",
                connector,
                count,
                sorted(deferred),
            )
            self._inconsistent.add(connector)
        self._task_counts[connector] = count
        # Task configs after the latest task count record: their generation needs a round of
        # zombie fencing before it starts (exactly-once sources).
        self._pending_fencing.add(connector)
        return [("on_task_configs", (connector,))]

    def _apply_task_count_record(self, connector: str, doc: Any) -> None:
        count = doc.get("task-count") if isinstance(doc, dict) else None
        if not _is_int(count) or count < 0:
            log.error(
                "Ignoring task count record for connector '%s' because it is in the wrong format", connector
            )
            return
        self._task_count_records[connector] = count
        self._pending_fencing.discard(connector)

    def _apply_restart(self, connector: str, doc: Any) -> list[tuple[str, tuple[Any, ...]]]:
        if not isinstance(doc, dict):
            log.error("Ignoring restart request for connector '%s' because it is not a map", connector)
            return []
        flags = []
        for field in ("include-tasks", "only-failed"):
            value = doc.get(field)
            if not isinstance(value, bool):
                log.warning(
                    "Invalid data for restart request '%s' field should be a Boolean but is %r, "
                    "defaulting to false",
                    field,
                    value,
                )
                value = False
            flags.append(value)
        request = RestartRequest(connector, flags[0], flags[1])
        self._restarts[connector] = request
        return [("on_restart_request", (connector, request.include_tasks, request.only_failed))]

    def _apply_session_key(self, doc: Any) -> list[tuple[str, tuple[Any, ...]]]:
        if not isinstance(doc, dict):
            log.error("Ignoring session key because it is not a map (or is null)")
            return []
        encoded, algorithm, created = doc.get("key"), doc.get("algorithm"), doc.get("creation-timestamp")
        if not isinstance(encoded, str) or not isinstance(algorithm, str) or not _is_int(created):
            log.error(
                "Ignoring session key: 'key' and 'algorithm' must be strings, 'creation-timestamp' a long"
            )
            return []
        try:
            key = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            log.error("Ignoring session key: 'key' is not base64")
            return []
        self._session_key = StoredSessionKey(key, algorithm, created)
        return [("on_session_key", (key, algorithm, created))]


_UNUSABLE: Any = object()  # a value that could not be parsed
