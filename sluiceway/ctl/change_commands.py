"""Commands that change connectors: ``apply``, ``patch``, ``pause``/``resume``/``stop``,
``restart``, ``delete``.

Each prints one result line per connector on stdout. A command given several
connectors goes on after one is refused (the error is printed) and exits with the
first failure's code; an unreachable worker stops it at once.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from sluiceway.ctl.config_files import parse_connector
from sluiceway.ctl.config_patch import build_patch
from sluiceway.ctl.errors import RefusedError, UsageError, WaitTimeout
from sluiceway.ctl.exit_codes import ExitCode, overall
from sluiceway.ctl.inspect_commands import run_validation, show_validation
from sluiceway.ctl.names import parse_task_ref
from sluiceway.ctl.progress import progress
from sluiceway.ctl.rest_models import ConnectorStatus, parse_answer
from sluiceway.ctl.session import Session, read_input
from sluiceway.ctl.states import Target, reached, task_reached
from sluiceway.ctl.waiting import wait_until


def for_each(s: Session, names: list[str], action: Callable[[str], None]) -> int:
    codes: list[int] = []
    for name in names:
        try:
            action(name)
            codes.append(ExitCode.OK)
        except (RefusedError, WaitTimeout) as exc:
            s.out.error(f"{name}: {exc}")
            codes.append(exc.exit_code)
    return overall(codes)


def wait_for_target(s: Session, name: str, target: Target) -> None:
    with progress(s.out, f"waiting for {name} to be {target.value}") as reporter:
        wait_until(s.client, name, lambda st: reached(st, target), target.value, s.timeout, reporter)
    s.out.line(f"connector {name} is {target.value}")


# -- apply / patch ---------------------------------------------------------------------------


def _planned(current: dict[str, str] | None, wanted: dict[str, str]) -> str:
    if current is None:
        return "created"
    return "unchanged" if current == wanted else "updated"


def apply(s: Session, files: list[str], name: str | None, dry_run: bool) -> int:
    if name is not None and len(files) > 1:
        raise UsageError("--name applies to one file; give a single -f")
    # Read and check every file before changing anything.
    connectors = [parse_connector(*read_input(path), name_override=name) for path in files]
    codes: list[int] = []
    for cf in connectors:
        try:
            current = s.client.config(cf.name)
            if dry_run:
                _, result = run_validation(s, cf.config, cf.source)
                show_validation(s, result, cf.source)
                if result.error_count:
                    codes.append(ExitCode.REFUSED)
                    continue
                s.out.line(f"connector {cf.name} would be {_planned(current, cf.config)} (dry run)")
            elif current == cf.config:
                s.out.line(f"connector {cf.name} unchanged")
            else:
                created, _info = s.client.put_config(cf.name, cf.config)
                s.out.line(f"connector {cf.name} {'created' if created else 'updated'}")
            codes.append(ExitCode.OK)
        except RefusedError as exc:
            s.out.error(f"{cf.source}: connector {cf.name}: {exc}")
            codes.append(exc.exit_code)
    return overall(codes)


def patch(s: Session, name: str, sets: list[str], unsets: list[str]) -> int:
    body = build_patch(sets, unsets)
    info = s.client.patch_config(name, body)
    if s.out.fmt == "table":
        s.out.line(f"connector {name} patched")
    else:
        s.out.document(info)
    return ExitCode.OK


# -- pause / resume / stop / restart / delete -------------------------------------------------

_TRANSITIONS = {
    "pause": ("paused", Target.PAUSED),
    "resume": ("resumed", Target.RUNNING),
    "stop": ("stopped", Target.STOPPED),
}


def change_state(s: Session, verb: str, names: list[str], wait: bool) -> int:
    done, target = _TRANSITIONS[verb]
    send = {"pause": s.client.pause, "resume": s.client.resume, "stop": s.client.stop}[verb]

    def one(name: str) -> None:
        send(name)
        s.out.line(f"connector {name} {done}")
        if wait:
            wait_for_target(s, name, target)

    return for_each(s, names, one)


def _restarting(status: ConnectorStatus) -> list[str]:
    parts = ["connector"] if status.connector.state == "RESTARTING" else []
    return parts + [f"task {t.id}" for t in status.tasks if t.state == "RESTARTING"]


def restart_connector(s: Session, names: list[str], tasks: bool, only_failed: bool, wait: bool) -> int:
    def one(name: str) -> None:
        raw = s.client.restart(name, include_tasks=tasks, only_failed=only_failed)
        if raw is None:
            s.out.line(f"connector {name} restarted")
        else:
            status = parse_answer(ConnectorStatus, raw, f"POST /connectors/{name}/restart")
            restarting = _restarting(status)
            if restarting:
                s.out.line(f"connector {name} restarting: {', '.join(restarting)}")
            else:
                s.out.line(f"connector {name}: nothing to restart (no failed instance)")
        if wait:
            wait_for_target(s, name, Target.RUNNING)

    return for_each(s, names, one)


def restart_task(s: Session, refs: list[str], wait: bool) -> int:
    parsed = [parse_task_ref(r) for r in refs]  # all usage errors before any request
    codes: list[int] = []
    for name, task in parsed:
        try:
            s.client.restart_task(name, task)
            s.out.line(f"task {name}/{task} restarted")
            if wait:
                with progress(s.out, f"waiting for task {name}/{task} to be RUNNING") as reporter:
                    wait_until(
                        s.client,
                        name,
                        partial(task_reached, task=task),
                        f"task {task} RUNNING",
                        s.timeout,
                        reporter,
                    )
                s.out.line(f"task {name}/{task} is RUNNING")
            codes.append(ExitCode.OK)
        except (RefusedError, WaitTimeout) as exc:
            s.out.error(f"{name}/{task}: {exc}")
            codes.append(exc.exit_code)
    return overall(codes)


def delete(s: Session, names: list[str]) -> int:
    def one(name: str) -> None:
        s.client.delete(name)
        s.out.line(f"connector {name} deleted")

    return for_each(s, names, one)
