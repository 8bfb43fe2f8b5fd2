"""Connector and task statuses, and the topics each connector has used (KIP-558).

The memory store serves standalone mode; distributed mode keeps the same records
(``status-connector-<c>``, ``status-task-<c>-<n>``, ``status-topic-<t>:connector-<c>``)
in the status topic.
"""

from __future__ import annotations

import threading
import time

from connect.runtime.status import ConnectorTaskId, Status


class MemoryStatusBackingStore:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._connectors: dict[str, Status] = {}
        self._tasks: dict[ConnectorTaskId, Status] = {}
        self._topics: dict[str, dict[str, int]] = {}  # connector -> topic -> discovery time

    # StatusListener --------------------------------------------------------------------

    def on_status(self, connector: str, task: int | None, status: Status) -> None:
        with self._lock:
            if task is None:
                self._connectors[connector] = status
            else:
                self._tasks[ConnectorTaskId(connector, task)] = status

    def on_topic_used(self, connector: str, task: int, topic: str) -> None:
        with self._lock:
            self._topics.setdefault(connector, {}).setdefault(topic, int(time.time() * 1000))

    # queries ---------------------------------------------------------------------------

    def connector(self, connector: str) -> Status | None:
        with self._lock:
            return self._connectors.get(connector)

    def task(self, task: ConnectorTaskId) -> Status | None:
        with self._lock:
            return self._tasks.get(task)

    def tasks(self, connector: str) -> dict[int, Status]:
        with self._lock:
            return {t.task: s for t, s in self._tasks.items() if t.connector == connector}

    def topics(self, connector: str) -> list[str]:
        with self._lock:
            return sorted(self._topics.get(connector, {}))

    def reset_topics(self, connector: str) -> None:
        with self._lock:
            self._topics.pop(connector, None)

    def forget_tasks_from(self, connector: str, count: int) -> None:
        """Tasks numbered ``count`` and above no longer exist."""
        with self._lock:
            for t in [t for t in self._tasks if t.connector == connector and t.task >= count]:
                del self._tasks[t]

    def delete(self, connector: str) -> None:
        with self._lock:
            self._connectors.pop(connector, None)
            for t in [t for t in self._tasks if t.connector == connector]:
                del self._tasks[t]
            self._topics.pop(connector, None)
