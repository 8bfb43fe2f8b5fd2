"""Polling a connector's status until it reaches a state, with progress, within a deadline."""

from __future__ import annotations

import time
from collections.abc import Callable

from sluiceway.ctl.client import ConnectClient
from sluiceway.ctl.errors import WaitTimeout
from sluiceway.ctl.progress import Reporter
from sluiceway.ctl.rest_models import ConnectorStatus, parse_answer
from sluiceway.ctl.states import summary

POLL_INTERVAL_S = 0.2


def wait_until(
    client: ConnectClient,
    name: str,
    done: Callable[[ConnectorStatus], bool],
    wanted: str,
    timeout: float,
    reporter: Reporter,
) -> ConnectorStatus:
    """Poll ``GET /connectors/{name}/status`` until ``done``; ``WaitTimeout`` after ``timeout`` s.

    ``wanted`` says what is waited for (``"STOPPED"``, ``"task 0 RUNNING"``) in messages.
    """
    deadline = time.monotonic() + timeout
    while True:
        status = parse_answer(ConnectorStatus, client.status(name), f"GET /connectors/{name}/status")
        if done(status):
            reporter.update(f"{name}: {summary(status)}")
            return status
        reporter.update(f"{name}: {summary(status)} (waiting for {wanted})")
        if time.monotonic() >= deadline:
            raise WaitTimeout(
                f"{name} did not become {wanted} within {timeout:g} s; last status: {summary(status)}"
            )
        time.sleep(POLL_INTERVAL_S)
