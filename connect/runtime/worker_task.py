"""One task, one thread: the lifecycle shared by source and sink runners.

``WorkerTask`` owns starting, pausing, stopping and failing; subclasses supply the
pipeline (``execute``) and hooks. Status changes go to the worker's
``StatusListener``: RUNNING once the plugin's ``start`` returned, PAUSED/RUNNING on
target-state changes, FAILED (with the traceback) when anything escapes the
pipeline, UNASSIGNED after a clean stop. A failing task never takes the worker or
other tasks with it.
"""

from __future__ import annotations

import logging
import threading
import time
from abc import ABC, abstractmethod
from typing import Any, ClassVar

from connect.runtime.errors import RetryWithToleranceOperator
from connect.runtime.logging_context import reset_context, set_context
from connect.runtime.plugin_metrics import TaskPluginMetrics
from connect.runtime.status import ConnectorTaskId, State, Status, StatusListener, TargetState, trace_of
from connect.runtime.task_metrics import TaskMetrics

log = logging.getLogger(__name__)


class WorkerTask(ABC):
    is_sink: ClassVar[bool] = False

    def __init__(
        self,
        task_id: ConnectorTaskId,
        worker_id: str,
        status: StatusListener,
        target_state: TargetState,
        operator: RetryWithToleranceOperator,
    ) -> None:
        self.id = task_id
        self.worker_id = worker_id
        self.status = status
        self.operator = operator
        self.metrics = TaskMetrics(time.monotonic())
        self.plugin_metrics = TaskPluginMetrics()  # the plugin's own gauges (context.plugin_metrics())
        self.state: State | None = None  # the last state reported (read by the metrics exporter)
        self._stopping = threading.Event()
        self._resumed = threading.Event()
        if target_state == TargetState.STARTED:
            self._resumed.set()
        self._cancelled = False
        self._failed = False
        self.retrying = False  # the plugin's last poll/put raised a RetriableException
        self._thread = threading.Thread(target=self._run, name=f"task-thread-{task_id}", daemon=True)

    # -- lifecycle (called by the worker) -----------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Ask the task to stop; returns at once. The plugin's ``stop`` is signalled too."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        self._resumed.set()  # a paused task must wake up to notice
        try:
            self.signal_plugin_stop()
        except Exception:
            log.exception("%s: the task's stop() raised", self.id)

    def await_stop(self, timeout_s: float) -> bool:
        self._thread.join(timeout_s)
        return not self._thread.is_alive()

    def cancel(self) -> None:
        """The task did not stop in time: whatever it still produces is discarded."""
        self._cancelled = True

    def transition_to(self, target: TargetState) -> None:
        """Ask the task to pause or resume; the task thread reports the new state once it
        has taken effect (``report_target_state``), so PAUSED means no record moves."""
        if target == TargetState.PAUSED:
            self._resumed.clear()
        elif target == TargetState.STARTED:
            self._resumed.set()

    def report_target_state(self) -> None:
        """Called by the pipeline loop (task thread) where pausing has taken effect."""
        state = State.PAUSED if self.paused else State.RUNNING
        if self.state in (State.RUNNING, State.PAUSED) and self.state != state:
            self._report(state)

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    @property
    def paused(self) -> bool:
        return not self._resumed.is_set()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    @property
    def failed(self) -> bool:
        return self._failed

    def wait_while_paused(self, timeout_s: float | None = None) -> bool:
        """Block while paused; False if the task is stopping."""
        while not self._resumed.is_set():
            self._resumed.wait(timeout_s)
            if timeout_s is not None:
                break
        return not self.stopping

    def sleep(self, seconds: float) -> bool:
        """Sleep unless stopped; True if stopping."""
        return self._stopping.wait(seconds)

    # -- the thread -------------------------------------------------------------------

    def _run(self) -> None:
        token = set_context(self.id.connector, self.id.task)
        try:
            self.initialize_plugin()
            if not self.stopping:
                self._report(State.PAUSED if self.paused else State.RUNNING)
                self.execute()
        except BaseException as exc:
            if self._cancelled:
                log.info("%s: cancelled task ended with %s", self.id, exc)
            else:
                self._failed = True
                log.error(
                    "%s: task threw an uncaught and unrecoverable exception; it will not recover "
                    "until manually restarted",
                    self.id,
                    exc_info=exc,
                )
                self._report(State.FAILED, trace_of(exc))
        finally:
            try:
                self.close()
            except Exception:
                log.exception("%s: error while closing the task", self.id)
            if not self._failed and not self._cancelled:
                self._report(State.UNASSIGNED)
            self.operator.close()
            reset_context(token)

    def note_retrying(self, exc: BaseException) -> None:
        """The plugin's ``poll``/``put`` raised a ``RetriableException``: the task stays
        RUNNING and is retried, and its status carries the error as its trace (reported
        once per run of errors), so ``/status`` says why nothing moves, e.g. a cluster or a
        database that does not answer. Kafka Connect only logs it; a task that looks
        healthy while it copies nothing is what users ask about."""
        if not self.retrying and self.state == State.RUNNING:
            self.retrying = True
            self._report(State.RUNNING, f"retrying: {type(exc).__name__}: {exc}")

    def note_recovered(self) -> None:
        """The plugin's ``poll``/``put`` succeeded after ``note_retrying``: the trace goes."""
        if self.retrying:
            self.retrying = False
            if self.state == State.RUNNING:
                self._report(State.RUNNING)

    def _report(self, state: State, trace: str | None = None) -> None:
        if self._failed and state != State.FAILED:
            return
        self.state = state
        try:
            self.status.on_status(self.id.connector, self.id.task, Status(state, self.worker_id, trace))
        except Exception:
            log.exception("%s: status listener failed", self.id)

    # -- what subclasses provide ------------------------------------------------------

    @abstractmethod
    def initialize_plugin(self) -> None:
        """Create clients, call the plugin's ``initialize`` and ``start``."""

    @abstractmethod
    def execute(self) -> None:
        """The pipeline loop; returns when ``stopping``."""

    @abstractmethod
    def signal_plugin_stop(self) -> None:
        """Tell the plugin to stop (may run on another thread)."""

    @abstractmethod
    def close(self) -> None:
        """Release clients and converters (on the task thread, after ``execute``)."""

    @property
    def partition_count(self) -> int:
        """Topic partitions assigned (sinks)."""
        return 0

    def describe(self) -> dict[str, Any]:
        return {"id": str(self.id), "alive": self.alive, "paused": self.paused, "stopping": self.stopping}
