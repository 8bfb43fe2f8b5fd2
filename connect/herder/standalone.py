"""The standalone herder: one worker, configs in memory (from ``.properties`` files and the
REST API), source offsets in a file, statuses in memory.

Config changes are serialized by one lock; each ends with the worker running exactly
what the configs and target states say: the connector (re)started, its task configs
regenerated, and tasks restarted when those configs changed.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from connect.api.errors import AlreadyExistsException, NotFoundException
from connect.herder.base import not_found, task_not_found
from connect.herder.offsets import OffsetsEndpoints
from connect.runtime.plugins import Plugins
from connect.runtime.status import ConnectorTaskId, State, Status, TargetState
from connect.runtime.worker import Worker
from connect.storage.configs import MemoryConfigBackingStore
from connect.storage.status import MemoryStatusBackingStore

log = logging.getLogger(__name__)


class StandaloneHerder(OffsetsEndpoints):
    def __init__(
        self,
        worker: Worker,
        plugins: Plugins,
        configs: MemoryConfigBackingStore,
        statuses: MemoryStatusBackingStore,
    ) -> None:
        super().__init__(worker, plugins)
        self.configs = configs
        self.statuses = statuses
        self._lock = asyncio.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- lifecycle ----------------------------------------------------------------------

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        await self.blocking(self.worker.start)
        self.kafka_cluster_id = await self.blocking(self._cluster_id, "connect-standalone-admin")
        self.ready = True

    async def stop(self) -> None:
        self.ready = False
        self._cancel_background()
        await self.blocking(self.worker.stop)

    # -- queries ----------------------------------------------------------------------

    async def connectors(self) -> list[str]:
        return self.configs.snapshot().connectors()

    async def connector_config(self, name: str) -> dict[str, str]:
        config = self.configs.snapshot().connector_configs.get(name)
        if config is None:
            raise not_found(name)
        return dict(config)

    async def task_configs(self, name: str) -> list[dict[str, str]]:
        snap = self.configs.snapshot()
        if not snap.contains(name):
            raise not_found(name)
        return [dict(snap.task_config(t) or {}) for t in snap.tasks(name)]

    def task_ids(self, name: str) -> list[ConnectorTaskId]:
        return self.configs.snapshot().tasks(name)

    def target_state(self, name: str) -> TargetState:
        return self.configs.snapshot().target_state(name)

    def connector_status_raw(self, name: str) -> Status | None:
        return self.statuses.connector(name)

    def task_status_raw(self, task: ConnectorTaskId) -> Status | None:
        return self.statuses.task(task)

    def active_topics(self, name: str) -> list[str]:
        return self.statuses.topics(name)

    async def reset_active_topics(self, name: str) -> None:
        # Like Kafka, no check that the connector exists: its topics are simply forgotten.
        self.statuses.reset_topics(name)

    # -- changes ----------------------------------------------------------------------

    async def put_connector_config(
        self, name: str, config: dict[str, str], allow_replace: bool, initial_state: TargetState | None = None
    ) -> bool:
        await self.validated(name, config)
        async with self._lock:
            snap = self.configs.snapshot()
            exists = snap.contains(name)
            if exists and not allow_replace:
                raise AlreadyExistsException(f"Connector {name} already exists")
            target = snap.target_state(name) if exists else (initial_state or TargetState.STARTED)
            if exists:
                await self._stop_connector(name)
            self.configs.put_connector_config(name, config, target)
            await self._start_connector(name)
            return not exists

    async def delete_connector(self, name: str) -> None:
        async with self._lock:
            if not self.configs.snapshot().contains(name):
                raise not_found(name)
            await self._stop_connector(name)
            self.configs.remove_connector_config(name)
            self.statuses.delete(name)
            log.info("deleted connector %s", name)

    async def set_target_state(self, name: str, state: TargetState) -> None:
        async with self._lock:
            snap = self.configs.snapshot()
            if not snap.contains(name):
                raise NotFoundException(f"Unknown connector {name}")
            previous = snap.target_state(name)
            self.configs.put_target_state(name, state)
            if state == TargetState.STOPPED:
                await self._stop_connector(name)
                self.configs.put_task_configs(name, [])
                self.statuses.on_status(name, None, Status(State.STOPPED, self.worker_id))
                return
            if previous == TargetState.STOPPED or name not in self.worker.connectors:
                await self._start_connector(name)
                return
            await self.blocking(self.worker.set_connector_target, name, state)
            for t in self.worker.task_ids(name):
                self.worker.set_task_target(t, state)
            if state == TargetState.STARTED:
                # A connector that was paused from the start has no tasks yet (Kafka's
                # onConnectorTargetStateChange regenerates them too).
                await self._update_tasks(name)

    async def restart_connector(
        self, name: str, include_tasks: bool, only_failed: bool
    ) -> dict[str, Any] | None:
        snap = self.configs.snapshot()
        if not snap.contains(name):
            raise not_found(name)
        connector_failed = (
            self.statuses.connector(name) or Status(State.UNASSIGNED, "")
        ).state == State.FAILED
        restart_connector = not only_failed or connector_failed
        tasks = [
            t
            for t in snap.tasks(name)
            if include_tasks
            and (
                not only_failed
                or (self.statuses.task(t) or Status(State.UNASSIGNED, "")).state == State.FAILED
            )
        ]
        if not include_tasks and not only_failed:
            async with self._lock:
                await self._restart_connector_only(name)
            return None
        if restart_connector:
            self.statuses.on_status(name, None, Status(State.RESTARTING, self.worker_id))
        for t in tasks:
            self.statuses.on_status(name, t.task, Status(State.RESTARTING, self.worker_id))
        status = await self.connector_status(name)

        async def run() -> None:
            async with self._lock:
                if restart_connector:
                    await self._restart_connector_only(name)
                for t in tasks:
                    await self._restart_task(t)

        self._spawn(run())
        return status

    async def restart_task(self, task: ConnectorTaskId) -> None:
        if task not in self.task_ids(task.connector):
            await self.connector_config(task.connector)
            raise task_not_found(task)
        async with self._lock:
            await self._restart_task(task)

    # -- making the worker match the configs --------------------------------------------

    def _request_reconfiguration(self, name: str) -> None:
        """Called by a connector (any thread): regenerate its task configs."""
        if self._loop is None:
            return
        self._loop.call_soon_threadsafe(lambda: self._spawn(self._reconfigure_tasks_locked(name)))

    async def _reconfigure_tasks_locked(self, name: str) -> None:
        async with self._lock:
            if self.configs.snapshot().contains(name):
                await self._update_tasks(name)

    async def _start_connector(self, name: str) -> None:
        snap = self.configs.snapshot()
        config = snap.connector_configs[name]
        target = snap.target_state(name)
        if target == TargetState.STOPPED:
            self.statuses.on_status(name, None, Status(State.STOPPED, self.worker_id))
            return
        started = await self.blocking(
            self.worker.start_connector, name, dict(config), target, self._request_reconfiguration
        )
        if started:
            await self._update_tasks(name)

    async def _update_tasks(self, name: str) -> None:
        snap = self.configs.snapshot()
        config = dict(snap.connector_configs[name])
        target = snap.target_state(name)
        if target == TargetState.STOPPED:
            return
        new = await self.blocking(self.worker.connector_task_configs, name, config)
        old = [dict(snap.task_config(t) or {}) for t in snap.tasks(name)]
        if new == old and all(t in self.worker.tasks for t in snap.tasks(name)):
            return
        if not self.worker.connector_running(name) and target == TargetState.STARTED:
            return
        await self.blocking(self.worker.stop_and_await_tasks, self.worker.task_ids(name))
        self.configs.put_task_configs(name, new)
        self.statuses.forget_tasks_from(name, len(new))
        for i, task_config in enumerate(new):
            await self.blocking(self.worker.start_task, ConnectorTaskId(name, i), config, task_config, target)

    async def _stop_connector(self, name: str) -> None:
        await self.blocking(self.worker.stop_and_await_tasks, self.worker.task_ids(name))
        await self.blocking(self.worker.stop_connector, name)

    async def _restart_connector_only(self, name: str) -> None:
        snap = self.configs.snapshot()
        await self.blocking(self.worker.stop_connector, name)
        if snap.target_state(name) == TargetState.STOPPED:
            self.statuses.on_status(name, None, Status(State.STOPPED, self.worker_id))
            return
        started = await self.blocking(
            self.worker.start_connector,
            name,
            dict(snap.connector_configs[name]),
            snap.target_state(name),
            self._request_reconfiguration,
        )
        if started and not self.worker.task_ids(name):
            await self._update_tasks(name)

    async def _restart_task(self, task: ConnectorTaskId) -> None:
        snap = self.configs.snapshot()
        task_config = snap.task_config(task)
        if task_config is None:
            raise task_not_found(task)
        await self.blocking(self.worker.stop_and_await_tasks, [task])
        await self.blocking(
            self.worker.start_task,
            task,
            dict(snap.connector_configs[task.connector]),
            dict(task_config),
            snap.target_state(task.connector),
        )
