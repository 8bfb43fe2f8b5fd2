"""Connector configurations, task configurations and target states.

``ClusterConfigState`` is an immutable snapshot a herder works from; stores produce
a new snapshot for every change and tell their listener which connector changed.
The memory store serves standalone mode; distributed mode keeps the same records
in the config topic.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from connect.runtime.status import ConnectorTaskId, TargetState


@dataclass(frozen=True, slots=True)
class ClusterConfigState:
    offset: int = -1  # position in the config log this snapshot reflects
    connector_configs: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    target_states: Mapping[str, TargetState] = field(default_factory=dict)
    task_configs: Mapping[ConnectorTaskId, Mapping[str, str]] = field(default_factory=dict)
    task_counts: Mapping[str, int] = field(default_factory=dict)
    inconsistent: frozenset[str] = frozenset()
    # Exactly-once sources (KIP-618): the task count of each connector's last fenced
    # generation (``tasks-fencing-<name>``), how many task config sets were applied, and
    # the connectors whose newest task configs came after their task count record.
    task_count_records: Mapping[str, int] = field(default_factory=dict)
    task_generations: Mapping[str, int] = field(default_factory=dict)
    pending_fencing: frozenset[str] = frozenset()

    def connectors(self) -> list[str]:
        return sorted(self.connector_configs)

    def contains(self, connector: str) -> bool:
        return connector in self.connector_configs

    def target_state(self, connector: str) -> TargetState:
        return self.target_states.get(connector, TargetState.STARTED)

    def tasks(self, connector: str) -> list[ConnectorTaskId]:
        return [ConnectorTaskId(connector, i) for i in range(self.task_counts.get(connector, 0))]

    def task_config(self, task: ConnectorTaskId) -> Mapping[str, str] | None:
        return self.task_configs.get(task)


ConfigListener = Callable[[str], None]  # called with the connector whose config, tasks or state changed


class MemoryConfigBackingStore:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state = ClusterConfigState()
        self._listener: ConfigListener | None = None

    def set_listener(self, listener: ConfigListener) -> None:
        self._listener = listener

    def snapshot(self) -> ClusterConfigState:
        with self._lock:
            return self._state

    def _update(self, connector: str, **changes: object) -> None:
        with self._lock:
            s = self._state
            fields = {
                "offset": s.offset + 1,
                "connector_configs": dict(s.connector_configs),
                "target_states": dict(s.target_states),
                "task_configs": dict(s.task_configs),
                "task_counts": dict(s.task_counts),
                "inconsistent": s.inconsistent,
            }
            fields.update(changes)
            self._state = ClusterConfigState(**fields)  # type: ignore[arg-type]
        if self._listener is not None:
            self._listener(connector)

    def put_connector_config(
        self, connector: str, config: Mapping[str, str], target_state: TargetState | None = None
    ) -> None:
        s = self.snapshot()
        configs = {**s.connector_configs, connector: dict(config)}
        states = dict(s.target_states)
        if target_state is not None:
            states[connector] = target_state
        self._update(connector, connector_configs=configs, target_states=states)

    def remove_connector_config(self, connector: str) -> None:
        s = self.snapshot()
        self._update(
            connector,
            connector_configs={k: v for k, v in s.connector_configs.items() if k != connector},
            target_states={k: v for k, v in s.target_states.items() if k != connector},
            task_configs={k: v for k, v in s.task_configs.items() if k.connector != connector},
            task_counts={k: v for k, v in s.task_counts.items() if k != connector},
        )

    def put_task_configs(self, connector: str, configs: Sequence[Mapping[str, str]]) -> None:
        s = self.snapshot()
        tasks = {k: v for k, v in s.task_configs.items() if k.connector != connector}
        for i, c in enumerate(configs):
            tasks[ConnectorTaskId(connector, i)] = dict(c)
        self._update(connector, task_configs=tasks, task_counts={**s.task_counts, connector: len(configs)})

    def put_target_state(self, connector: str, state: TargetState) -> None:
        s = self.snapshot()
        self._update(connector, target_states={**s.target_states, connector: state})
