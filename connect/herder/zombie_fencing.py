"""Zombie fencing for exactly-once source tasks (KIP-618, Kafka's ``DistributedHerder``).

A task of a new generation (its connector's task configs changed since the last
``tasks-fencing-<name>`` record) must not start while a task of an older generation may
still write: a worker that lost its place in the group but not its threads (a zombie).
Before its producer initializes its transactions, the task asks the leader for a round of
fencing (``PUT /connectors/{name}/fence``, internal and signed, or directly when this
worker leads). The leader reads the config topic to its end, and if the connector is
pending fencing:

- with a task count record of N (not 1 → 1), it fences the producers
  ``<group.id>-<name>-0..N-1`` (``InitProducerId`` each: their epochs move on, their open
  transactions are aborted), then writes the new count;
- without a record (the connector's first exactly-once generation), or when one task
  follows one task (the new task's own ``init_transactions`` fences its predecessor), it
  only writes the record.

New task configs written while a round runs make it fail with 409, as in Kafka: the
next generation's tasks ask again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

import httpx

from connect.api.connector import SinkConnector
from connect.api.errors import ConnectException, NotFoundException
from connect.herder.base import RequestError, RequestTargetException, bad_request
from connect.herder.request_signing import sign
from connect.runtime.plugins import PluginNotFound
from connect.runtime.status import ConnectorTaskId

if TYPE_CHECKING:
    from connect.herder.distributed import DistributedHerder

log = logging.getLogger(__name__)

_PREFLIGHT_TIMEOUT_S = 120.0
_ATTEMPTS = 10
_BACKOFF_S = 0.5

GENERATION_CHANGED = "Fencing failed because new task configurations were generated for the connector"


class ZombieFencing:
    """The herder's side of fencing: the leader's round, and a task's preflight request."""

    def __init__(self, herder: DistributedHerder) -> None:
        self.herder = herder
        self._locks: dict[str, asyncio.Lock] = {}

    # -- the leader ---------------------------------------------------------------------

    async def fence(self, name: str) -> None:
        """One round for ``name``, on the leader (RequestTargetException elsewhere)."""
        herder = self.herder
        herder._require_leader()
        lock = self._locks.setdefault(name, asyncio.Lock())
        async with lock:  # tasks of one generation ask together: one round serves them all
            if not await herder.blocking(herder.configs.refresh, herder.config.worker_sync_timeout_ms / 1000):
                raise ConnectException(
                    "Failed to read to end of config topic before performing zombie fencing"
                )
            snapshot = herder.configs.snapshot()
            config = snapshot.connector_configs.get(name)
            if config is None:
                raise NotFoundException(f"Connector {name} not found")
            if not self._is_source(config.get("connector.class", "")):
                raise bad_request(f"Connector {name} is not a source connector")
            if name not in snapshot.pending_fencing:
                log.debug("no fencing for %s: its task generation was fenced already", name)
                return
            task_count = len(snapshot.tasks(name))
            record = snapshot.task_count_records.get(name)
            if record is not None and (record != 1 or task_count != 1):
                generation = snapshot.task_generations.get(name, 0)
                log.info("fencing the producers of %d tasks of %s before its new tasks start", record, name)
                await herder.blocking(herder.worker.fence_zombies, name, record, dict(config))
                await herder.blocking(herder.configs.refresh, herder.config.worker_sync_timeout_ms / 1000)
                if herder.configs.snapshot().task_generations.get(name, 0) > generation:
                    raise RequestError(409, GENERATION_CHANGED)
            await herder.claim_write_privileges()
            await herder.blocking(herder.configs.put_task_count_record, name, task_count)
            log.info("wrote the task count record of %s (%d tasks)", name, task_count)

    def _is_source(self, connector_class: str) -> bool:
        try:
            return not issubclass(self.herder.plugins.connector_class(connector_class), SinkConnector)
        except PluginNotFound:
            return False

    # -- a task about to start ------------------------------------------------------------

    def preflight(self, task: ConnectorTaskId) -> Callable[[], None]:
        """What the task's thread calls before ``init_transactions``: a round of fencing by
        the leader, waited for (ConnectException when it cannot be had)."""
        loop = self.herder._loop
        assert loop is not None

        def run() -> None:
            future = asyncio.run_coroutine_threadsafe(self._fence_for(task), loop)
            try:
                future.result(_PREFLIGHT_TIMEOUT_S)
            except TimeoutError:
                future.cancel()
                raise ConnectException(
                    f"Failed to perform round of zombie fencing for {task}: timed out"
                ) from None

        return run

    def verifier(self, task: ConnectorTaskId) -> Callable[[], None]:
        """Kafka's ``verifyTaskGenerationAndOwnership``: after ``init_transactions`` the task is
        still this worker's, and of the generation it was started with."""
        herder = self.herder
        generation = herder.configs.snapshot().task_generations.get(task.connector, 0)

        def verify() -> None:
            if task not in herder.allocation.tasks:
                raise ConnectException(f"Task {task} is no longer assigned to this worker; it will not start")
            current = herder.configs.snapshot().task_generations.get(task.connector, 0)
            if current != generation:
                raise ConnectException(
                    f"Task {task} is of generation {generation}, but the connector's tasks are of generation "
                    f"{current} now; it will not start"
                )

        return verify

    async def _fence_for(self, task: ConnectorTaskId) -> None:
        problem = ""
        for attempt in range(_ATTEMPTS):
            herder = self.herder
            if herder._stopping:
                raise ConnectException("the worker is stopping")
            try:
                if herder.is_leader:
                    await self.fence(task.connector)
                    return
                problem = await self._forward(task.connector)
                if not problem:
                    return
            except RequestTargetException as exc:
                problem = str(exc)
            except RequestError as exc:
                if exc.status != 409:
                    raise ConnectException(f"Failed to perform round of zombie fencing: {exc}") from exc
                problem = str(exc)
            log.info("zombie fencing for %s not done yet (%s); retrying", task, problem)
            await asyncio.sleep(_BACKOFF_S * (attempt + 1))
        raise ConnectException(f"Failed to perform round of zombie fencing for {task}: {problem}")

    async def _forward(self, name: str) -> str:
        """Ask the leader; '' when it fenced, else why not (worth another try)."""
        herder = self.herder
        key, leader, http = herder._session_key, herder.leader_url, herder._http
        if key is None or leader is None or http is None:
            return "no leader or session key known yet"
        headers = sign(key, herder.config.inter_worker_signature_algorithm, b"")
        try:
            r = await http.put(f"{leader.rstrip('/')}/connectors/{name}/fence?forward=true", headers=headers)
        except httpx.HTTPError as exc:
            return f"the leader at {leader} did not answer: {exc}"
        if r.status_code < 300:
            return ""
        if r.status_code in (409, 503) or r.status_code >= 500:
            return f"{r.status_code} {r.text}"
        raise ConnectException(
            f"Failed to perform round of zombie fencing: the leader answered {r.status_code} {r.text}"
        )
