"""What every herder offers the REST API, and the parts standalone and distributed share.

A herder is the control plane of a worker: it owns the connector configs and target
states, decides what runs, and answers every REST request. It lives on the event
loop; everything that may block (connector code, Kafka clients, the worker) runs in
a thread through ``self.blocking``.

Errors carry Kafka Connect's HTTP statuses: ``NotFoundException`` → 404,
``AlreadyExistsException`` → 409, ``RequestError(status, message)`` → its status;
any other ``ConnectException`` → 500.
"""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from connect.api.connector import SinkConnector
from connect.api.errors import ConnectException, NotFoundException
from connect.runtime import clients
from connect.runtime.plugin_config import plugin_key_defs
from connect.runtime.plugins import PluginNotFound, Plugins, PluginType
from connect.runtime.status import ConnectorTaskId, State, Status, TargetState
from connect.runtime.validation import BadRequest, Validation, validate
from connect.runtime.worker import Worker

log = logging.getLogger(__name__)

T = TypeVar("T")


class RequestError(ConnectException):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class InvalidConnectorConfig(RequestError):
    """400 with Kafka's message; ``validation`` keeps each problem with its key."""

    def __init__(self, validation: Validation) -> None:
        errors = "\n".join(m for _, m in validation.issues())
        super().__init__(
            400,
            "Connector configuration is invalid and contains the following "
            f"{validation.error_count} error(s):\n"
            f"{errors}\nYou can also find the above list of errors at the endpoint "
            "`/connector-plugins/{connectorType}/config/validate`",
        )
        self.validation = validation


class RequestTargetException(ConnectException):
    """This worker cannot do it; the worker at ``url`` (the leader, or a task's owner) can.

    The REST layer re-sends the request there (Kafka's ``RequestTargetException``)."""

    def __init__(self, message: str, url: str) -> None:
        super().__init__(message)
        self.url = url


REBALANCE_EXPECTED = "Request cannot be completed because a rebalance is expected"


def conflict(message: str = REBALANCE_EXPECTED) -> RequestError:
    """409: the cluster cannot answer this now (rebalancing, no leader known, too many hops)."""
    return RequestError(409, message)


def bad_request(message: str) -> RequestError:
    return RequestError(400, message)


def not_found(connector: str) -> NotFoundException:
    return NotFoundException(f"Connector {connector} not found")


def task_not_found(task: ConnectorTaskId) -> NotFoundException:
    return NotFoundException(f"Task {task} not found")


NOT_STOPPED = (
    "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for "
    "the specified connector by issuing a 'PUT' request to the '/connectors/{name}/stop' endpoint"
)


class Herder(ABC):
    def __init__(self, worker: Worker, plugins: Plugins) -> None:
        self.worker = worker
        self.plugins = plugins
        self.kafka_cluster_id = ""
        self.ready = False
        self._background: set[asyncio.Task[Any]] = set()

    def _spawn(self, coro: Any) -> None:
        """Run ``coro`` in the background; its failure is logged, never lost."""
        task = asyncio.ensure_future(coro)
        self._background.add(task)

        def done(t: asyncio.Task[Any]) -> None:
            self._background.discard(t)
            if not t.cancelled() and t.exception() is not None:
                log.error("background herder operation failed", exc_info=t.exception())

        task.add_done_callback(done)

    def _cancel_background(self) -> None:
        for t in list(self._background):
            t.cancel()

    def _cluster_id(self, client_id: str) -> str:
        """The Kafka cluster's id (blocking: call through ``blocking``)."""
        config = self.worker.config
        admin = AdminClient(
            clients.admin_config(config.bootstrap_servers, client_id, config.client_settings("admin."))
        )
        try:
            return str(admin.describe_cluster(request_timeout=30).result(60).cluster_id)
        except KafkaException as exc:
            raise ConnectException(f"cannot reach Kafka at {config.bootstrap_servers}: {exc}") from exc

    @property
    def worker_id(self) -> str:
        return self.worker.worker_id

    async def blocking(self, fn: Callable[..., T], *args: Any) -> T:
        """Run blocking work (plugin code, Kafka clients) off the event loop."""
        return await asyncio.to_thread(fn, *args)

    # -- lifecycle ----------------------------------------------------------------------

    @abstractmethod
    async def start(self) -> None: ...

    @abstractmethod
    async def stop(self) -> None: ...

    # -- connectors -------------------------------------------------------------------

    @abstractmethod
    async def connectors(self) -> list[str]: ...

    @abstractmethod
    async def connector_config(self, name: str) -> dict[str, str]: ...

    @abstractmethod
    async def task_configs(self, name: str) -> list[dict[str, str]]:
        """Task configs as stored: what the connector generated, plus ``task.class``."""

    @abstractmethod
    async def put_connector_config(
        self, name: str, config: dict[str, str], allow_replace: bool, initial_state: TargetState | None = None
    ) -> bool:
        """Create or update; True when created."""

    @abstractmethod
    async def delete_connector(self, name: str) -> None: ...

    @abstractmethod
    async def restart_connector(
        self, name: str, include_tasks: bool, only_failed: bool
    ) -> dict[str, Any] | None:
        """None for a plain connector restart; else the status with RESTARTING instances."""

    @abstractmethod
    async def restart_task(self, task: ConnectorTaskId) -> None: ...

    @abstractmethod
    async def set_target_state(self, name: str, state: TargetState) -> None: ...

    @abstractmethod
    async def connector_offsets(self, name: str) -> list[dict[str, Any]]: ...

    @abstractmethod
    async def alter_offsets(self, name: str, offsets: list[dict[str, Any]]) -> str: ...

    @abstractmethod
    async def reset_offsets(self, name: str) -> str: ...

    @abstractmethod
    def connector_status_raw(self, name: str) -> Status | None: ...

    @abstractmethod
    def task_status_raw(self, task: ConnectorTaskId) -> Status | None: ...

    @abstractmethod
    def task_ids(self, name: str) -> list[ConnectorTaskId]: ...

    @abstractmethod
    def active_topics(self, name: str) -> list[str]: ...

    @abstractmethod
    async def reset_active_topics(self, name: str) -> None: ...

    @abstractmethod
    def target_state(self, name: str) -> TargetState: ...

    # -- shared answers -----------------------------------------------------------------

    async def connector_info(self, name: str) -> dict[str, Any]:
        config = await self.connector_config(name)
        return {
            "name": name,
            "config": config,
            "tasks": [{"connector": name, "task": t.task} for t in self.task_ids(name)],
            "type": self.connector_type(config),
        }

    def connector_type(self, config: Mapping[str, str]) -> str:
        try:
            cls = self.plugins.connector_class(config.get("connector.class", ""))
        except PluginNotFound:
            return "unknown"
        return "sink" if issubclass(cls, SinkConnector) else "source"

    async def connector_status(self, name: str) -> dict[str, Any]:
        try:
            config = await self.connector_config(name)
        except NotFoundException:
            raise NotFoundException(f"No status found for connector {name}") from None
        status = self.connector_status_raw(name) or Status(State.UNASSIGNED, self.worker_id)
        tasks = []
        for t in self.task_ids(name):
            tasks.append(self._task_state(t))
        return {
            "name": name,
            "connector": _state_body(status),
            "tasks": tasks,
            "type": self.connector_type(config),
        }

    def _task_state(self, task: ConnectorTaskId) -> dict[str, Any]:
        status = self.task_status_raw(task) or Status(State.UNASSIGNED, self.worker_id)
        return {"id": task.task, **_state_body(status)}

    async def task_status(self, task: ConnectorTaskId) -> dict[str, Any]:
        if task not in self.task_ids(task.connector):
            raise NotFoundException(f"No status found for task {task}")
        return self._task_state(task)

    async def validate(self, config: Mapping[str, str]) -> Validation:
        return await self.blocking(validate, self.plugins, self.worker.config, dict(config))

    async def validated(self, name: str, config: dict[str, str]) -> Validation:
        """Validate or raise 400 with Kafka's message listing every error."""
        try:
            result = await self.validate(config)
        except BadRequest as exc:
            raise bad_request(str(exc)) from None
        if result.error_count:
            raise InvalidConnectorConfig(result)
        return result

    def plugins_list(self, connectors_only: bool) -> list[dict[str, Any]]:
        kinds = (
            [PluginType.SOURCE, PluginType.SINK]
            if connectors_only
            else [
                PluginType.SOURCE,
                PluginType.SINK,
                PluginType.CONVERTER,
                PluginType.HEADER_CONVERTER,
                PluginType.TRANSFORMATION,
                PluginType.PREDICATE,
            ]
        )
        out = []
        for d in self.plugins.descriptors(kinds):
            entry = {"class": d.name, "type": d.type.value}
            if d.type in (PluginType.SOURCE, PluginType.SINK):
                entry["version"] = d.version
            out.append(entry)
        return out

    def plugin_config(self, plugin: str) -> list[dict[str, Any]]:
        kinds = [
            PluginType.SOURCE,
            PluginType.SINK,
            PluginType.CONVERTER,
            PluginType.HEADER_CONVERTER,
            PluginType.TRANSFORMATION,
            PluginType.PREDICATE,
        ]
        try:
            desc = self.plugins.find(plugin, kinds)
        except PluginNotFound as exc:
            raise NotFoundException(str(exc)) from None
        return [d.info() for d in plugin_key_defs(desc)]

    def plugin_matches(self, plugin: str, connector_class: str) -> bool:
        """``config/validate``'s check that the body's connector.class is the plugin in the path."""
        try:
            a = self.plugins.connector_class(plugin)
            b = self.plugins.connector_class(connector_class)
        except PluginNotFound:
            return connector_class.endswith(plugin)
        return a is b


def _state_body(status: Status) -> dict[str, Any]:
    body: dict[str, Any] = {"state": status.state.value, "worker_id": status.worker_id}
    if status.trace:
        body["trace"] = status.trace
    return body
