"""Connector and task references given on the command line."""

from __future__ import annotations

from sluiceway.ctl.errors import UsageError


def parse_task_ref(raw: str) -> tuple[str, int]:
    """``CONNECTOR/ID`` -> (connector, task id). Connector names cannot contain ``/``."""
    name, sep, task = raw.rpartition("/")
    if not sep or not name:
        raise UsageError(f"task '{raw}': expected CONNECTOR/TASK-ID, e.g. my-sink/0")
    if not task.isdigit():
        raise UsageError(f"task '{raw}': the task id '{task}' is not a non-negative integer")
    return name, int(task)
