"""``sluiceway ctl snapshot NAME [--wait]``: how far a CDC connector's snapshot has got."""

from __future__ import annotations

import time
from urllib.parse import urlsplit

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from sluiceway.ctl.errors import RefusedError, WaitTimeout
from sluiceway.ctl.rest_models import ConnectorStatus, parse_answer
from sluiceway.ctl.session import Session
from sluiceway.ctl.snapshot_progress import SnapshotProgress, describe, parse_snapshot_metrics

POLL_INTERVAL_S = 0.5


def _progress(session: Session, name: str) -> dict[int, SnapshotProgress]:
    client = session.client
    status = parse_answer(ConnectorStatus, client.status(name), f"GET /connectors/{name}/status")
    scheme = urlsplit(client.url).scheme or "http"
    found: dict[int, SnapshotProgress] = {}
    # Metrics are per worker: ask each worker that runs one of the connector's tasks.
    for worker in sorted({t.worker_id for t in status.tasks if t.worker_id}):
        text = client.send("GET", f"{scheme}://{worker}/metrics").text
        found.update(parse_snapshot_metrics(text, name))
    return found


def snapshot(session: Session, name: str, wait: bool) -> int:
    progress = _progress(session, name)
    if not progress:
        raise RefusedError(f"{name} reports no snapshot progress (only CDC sources with running tasks do)")
    out = session.out
    if not wait:
        if out.fmt == "table":
            for p in progress.values():
                out.stdout.print(describe(p))
        else:
            out.document([_as_dict(p) for p in progress.values()])
        return 0
    deadline = time.monotonic() + session.timeout
    if out.interactive:
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=out.stdout,
        ) as bar:
            ids = {
                t: bar.add_task(f"{name} task {t}", total=max(p.rows_estimated, 1))
                for t, p in progress.items()
            }
            while True:
                for t, p in progress.items():
                    total = max(p.rows_estimated, p.rows_scanned, 1)
                    bar.update(ids[t], completed=total if p.completed else p.rows_scanned, total=total)
                if _done(progress):
                    break
                _sleep_or_fail(deadline, session.timeout, name)
                progress = _progress(session, name) or progress
    else:
        last = ""
        while True:
            line = "; ".join(describe(p) for p in progress.values())
            if line != last:
                out.note(f"{name}: {line}")
                last = line
            if _done(progress):
                break
            _sleep_or_fail(deadline, session.timeout, name)
            progress = _progress(session, name) or progress
    out.stdout.print(f"{name}: snapshot complete, {sum(p.rows_scanned for p in progress.values()):,} rows")
    return 0


def _as_dict(p: SnapshotProgress) -> dict[str, object]:
    return {
        "task": p.task,
        "running": p.running,
        "completed": p.completed,
        "rows_scanned": p.rows_scanned,
        "rows_estimated": p.rows_estimated,
    }


def _done(progress: dict[int, SnapshotProgress]) -> bool:
    return all(p.completed for p in progress.values())


def _sleep_or_fail(deadline: float, timeout: float, name: str) -> None:
    if time.monotonic() >= deadline:
        raise WaitTimeout(f"{name}'s snapshot did not complete within {timeout:g} s")
    time.sleep(POLL_INTERVAL_S)
