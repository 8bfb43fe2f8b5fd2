"""One connector instance and the single thread its plugin code runs on.

Every call into the connector (``start``, ``task_configs``, ``stop``) runs on the
connector's own executor thread, one at a time, so a slow or hung connector never
blocks the herder's event loop or another connector (KAFKA-9374); callers get
futures and choose how long to wait.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from connect.api.connector import (
    Connector,
    SinkConnector,
    SinkConnectorContext,
    SourceConnectorContext,
)
from connect.api.task import OffsetStorageReader
from connect.runtime.logging_context import reset_context, set_context
from connect.runtime.status import State, Status, StatusListener, TargetState, trace_of

log = logging.getLogger(__name__)


class _Context(SourceConnectorContext, SinkConnectorContext):
    def __init__(self, owner: WorkerConnector) -> None:
        self.owner = owner

    def request_task_reconfiguration(self) -> None:
        self.owner.on_reconfigure(self.owner.name)

    def raise_error(self, error: BaseException) -> None:
        self.owner.fail(error)

    def offset_storage_reader(self) -> OffsetStorageReader:
        if self.owner.offset_reader is None:
            raise RuntimeError("sink connectors have no offset storage reader")
        return self.owner.offset_reader


class WorkerConnector:
    def __init__(
        self,
        name: str,
        connector: Connector,
        worker_id: str,
        status: StatusListener,
        offset_reader: OffsetStorageReader | None,
        on_reconfigure: Callable[[str], None],
    ) -> None:
        self.name = name
        self.connector = connector
        self.worker_id = worker_id
        self.status = status
        self.offset_reader = offset_reader
        self.on_reconfigure = on_reconfigure
        self.props: dict[str, str] = {}
        self.started = False
        self.failed = False
        self.target = TargetState.STARTED
        self.state: State | None = None
        self._lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"connector-{name}")
        connector.initialize(_Context(self))

    @property
    def is_sink(self) -> bool:
        return isinstance(self.connector, SinkConnector)

    def _submit(self, fn: Callable[[], Any]) -> Future[Any]:
        def run() -> Any:
            token = set_context(self.name)
            try:
                return fn()
            finally:
                reset_context(token)

        return self._executor.submit(run)

    def _report(self, state: State, trace: str | None = None) -> None:
        self.state = state  # read by the metrics exporter
        try:
            self.status.on_status(self.name, None, Status(state, self.worker_id, trace))
        except Exception:
            log.exception("connector %s: status listener failed", self.name)

    def fail(self, error: BaseException) -> None:
        with self._lock:
            self.failed = True
        log.error("connector %s failed", self.name, exc_info=error)
        self._report(State.FAILED, trace_of(error))

    # -- operations (each runs on the connector's thread) ------------------------------

    def start(self, props: dict[str, str], target: TargetState) -> Future[bool]:
        def run() -> bool:
            self.props = dict(props)
            return self._transition(target)

        return self._submit(run)

    def transition_to(self, target: TargetState) -> Future[bool]:
        return self._submit(lambda: self._transition(target))

    def _transition(self, target: TargetState) -> bool:
        self.target = target
        try:
            if target == TargetState.STARTED:
                if not self.started:
                    self.failed = False
                    self.connector.start(dict(self.props))
                    self.started = True
                    log.info("connector %s started (%s)", self.name, type(self.connector).__name__)
                self._report(State.RUNNING)
            else:
                if self.started:
                    self.started = False
                    self.connector.stop()
                    log.info("connector %s stopped (%s)", self.name, target.value.lower())
                self._report(State.PAUSED if target == TargetState.PAUSED else State.STOPPED)
            return True
        except Exception as exc:
            self.fail(exc)
            return False

    def reconfigure(self, props: dict[str, str]) -> Future[bool]:
        def run() -> bool:
            self.props = dict(props)
            if not self.started:
                return self._transition(self.target)
            try:
                self.connector.reconfigure(dict(props))
                self.failed = False
                self._report(State.RUNNING)
                return True
            except Exception as exc:
                self.fail(exc)
                return False

        return self._submit(run)

    def task_configs(self, max_tasks: int) -> Future[list[dict[str, str]] | None]:
        """The connector's task configs; None when it raised (then it is FAILED, as Kafka does)."""

        def run() -> list[dict[str, str]] | None:
            try:
                return [dict(c) for c in self.connector.task_configs(max_tasks)]
            except Exception as exc:
                self.fail(exc)
                return None

        return self._submit(run)

    def task_class_name(self) -> str:
        cls = self.connector.task_class()
        return f"{cls.__module__}.{cls.__qualname__}"

    def stop(self) -> Future[None]:
        def run() -> None:
            if self.started:
                self.started = False
                try:
                    self.connector.stop()
                except Exception:
                    log.exception("connector %s: stop() raised", self.name)

        fut = self._submit(run)
        self._executor.shutdown(wait=False)
        return fut
