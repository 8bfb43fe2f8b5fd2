"""When a connector has reached the state a command waits for, and how to say where it is.

Kafka Connect's states (``AbstractStatus.State``): UNASSIGNED, RUNNING, PAUSED, FAILED,
RESTARTING, and STOPPED for connectors only (a stopped connector has no tasks at all).
"""

from __future__ import annotations

from enum import Enum

from sluiceway.ctl.rest_models import ConnectorStatus


class Target(Enum):
    """What ``--wait`` waits for after each command."""

    RUNNING = "RUNNING"  # resume, restart: the connector and at least one task, all RUNNING
    PAUSED = "PAUSED"  # pause: the connector and every task PAUSED
    STOPPED = "STOPPED"  # stop: the connector STOPPED, its tasks gone


def reached(status: ConnectorStatus, target: Target) -> bool:
    if status.connector.state != target.value:
        return False
    if target is Target.STOPPED:
        return not status.tasks
    if target is Target.RUNNING and not status.tasks:
        # Right after a resume the connector runs before its tasks exist; a connector
        # that never creates tasks would not count as running (see docs/ctl.md).
        return False
    return all(t.state == target.value for t in status.tasks)


def task_reached(status: ConnectorStatus, task: int, state: str = "RUNNING") -> bool:
    return any(t.id == task and t.state == state for t in status.tasks)


def summary(status: ConnectorStatus) -> str:
    """One line: ``connector RUNNING, tasks: 0 RUNNING, 1 FAILED`` (what a wait shows)."""
    if not status.tasks:
        return f"connector {status.connector.state}, no tasks"
    tasks = ", ".join(f"{t.id} {t.state}" for t in sorted(status.tasks, key=lambda t: t.id))
    return f"connector {status.connector.state}, tasks: {tasks}"
