"""Connector and task states, ids, and the listener the worker reports them to."""

from __future__ import annotations

import enum
import traceback
from dataclasses import dataclass
from typing import Protocol

from connect.runtime.secrets import SECRETS


class State(enum.Enum):
    UNASSIGNED = "UNASSIGNED"
    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    FAILED = "FAILED"
    RESTARTING = "RESTARTING"
    STOPPED = "STOPPED"  # connectors only
    DESTROYED = "DESTROYED"


class TargetState(enum.Enum):
    """What the user asked for (``PUT .../pause|resume|stop``, ``initial_state``)."""

    STARTED = "STARTED"
    PAUSED = "PAUSED"
    STOPPED = "STOPPED"

    @classmethod
    def from_initial(cls, value: str | None) -> TargetState:
        """``initial_state`` of ``POST /connectors``: RUNNING, PAUSED or STOPPED."""
        if value is None or value == "RUNNING":
            return cls.STARTED
        try:
            return cls[value]
        except KeyError:
            raise ValueError(f"initial_state must be RUNNING, PAUSED or STOPPED, not {value}") from None


@dataclass(frozen=True, slots=True, order=True)
class ConnectorTaskId:
    connector: str
    task: int

    def __str__(self) -> str:
        return f"{self.connector}-{self.task}"


@dataclass(frozen=True, slots=True)
class Status:
    state: State
    worker_id: str
    trace: str | None = None
    generation: int = 0


def trace_of(error: BaseException) -> str:
    """The trace a status shows (REST, status topic, console), with known secrets hidden."""
    return SECRETS.redact("".join(traceback.format_exception(error)).rstrip())


class StatusListener(Protocol):
    """The worker reports lifecycle changes of connectors (``task`` None) and tasks here.

    Called from connector executors and task threads: implementations are thread-safe.
    """

    def on_status(self, connector: str, task: int | None, status: Status) -> None: ...

    def on_topic_used(self, connector: str, task: int, topic: str) -> None: ...
