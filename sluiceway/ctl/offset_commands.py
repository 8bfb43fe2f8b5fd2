"""``offsets reset`` and ``offsets alter``: long operations on a connector's offsets (KIP-875).

Kafka Connect changes offsets only of a STOPPED connector, so each command stops the
connector first (unless it already is), waits until it is STOPPED (its tasks gone),
changes the offsets, and with ``--resume`` starts it again (``--wait``: until RUNNING).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sluiceway.ctl.errors import UnexpectedAnswer
from sluiceway.ctl.exit_codes import ExitCode
from sluiceway.ctl.offsets_file import parse_offsets
from sluiceway.ctl.progress import Reporter, progress
from sluiceway.ctl.rest_models import ConnectorStatus, parse_answer
from sluiceway.ctl.session import Session, read_input
from sluiceway.ctl.states import Target, reached
from sluiceway.ctl.waiting import wait_until


def ensure_stopped(s: Session, name: str, reporter: Reporter) -> None:
    status = parse_answer(ConnectorStatus, s.client.status(name), f"GET /connectors/{name}/status")
    if reached(status, Target.STOPPED):
        reporter.step(f"connector {name} is already STOPPED")
        return
    reporter.step(f"stopping connector {name} (it is {status.connector.state})")
    s.client.stop(name)
    wait_until(s.client, name, lambda st: reached(st, Target.STOPPED), "STOPPED", s.timeout, reporter)
    reporter.step(f"connector {name} is STOPPED")


def _message(answer: Any, what: str) -> str:
    if isinstance(answer, dict) and isinstance(answer.get("message"), str):
        return str(answer["message"])
    raise UnexpectedAnswer(f"unexpected answer to {what}: no 'message'")


def _change_offsets(
    s: Session, name: str, title: str, change: Callable[[], str], resume: bool, wait: bool
) -> int:
    with progress(s.out, title) as reporter:
        ensure_stopped(s, name, reporter)
        message = change()
    s.out.line(message)
    if resume:
        s.client.resume(name)
        s.out.line(f"connector {name} resumed")
        if wait:
            with progress(s.out, f"waiting for {name} to be RUNNING") as reporter:
                wait_until(
                    s.client, name, lambda st: reached(st, Target.RUNNING), "RUNNING", s.timeout, reporter
                )
            s.out.line(f"connector {name} is RUNNING")
    return ExitCode.OK


def reset(s: Session, name: str, resume: bool, wait: bool) -> int:
    def change() -> str:
        return _message(s.client.reset_offsets(name), f"DELETE /connectors/{name}/offsets")

    return _change_offsets(s, name, f"resetting the offsets of {name}", change, resume, wait)


def alter(s: Session, name: str, path: str, resume: bool, wait: bool) -> int:
    body = parse_offsets(*read_input(path))  # a bad file is refused before the connector stops

    def change() -> str:
        return _message(s.client.alter_offsets(name, body), f"PATCH /connectors/{name}/offsets")

    return _change_offsets(s, name, f"altering the offsets of {name}", change, resume, wait)
