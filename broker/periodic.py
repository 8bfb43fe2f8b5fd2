"""Background jobs that run at a fixed interval for the life of the broker."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

log = logging.getLogger(__name__)


def every(interval_s: float, job: Callable[[], object], name: str) -> asyncio.Task[None]:
    """Run ``job`` (plain or coroutine function) every ``interval_s`` until the task is cancelled.

    A failing run is logged with its traceback and the next one still happens: one bad
    partition must not stop retention or compaction for the others.
    """

    async def loop() -> None:
        while True:
            await asyncio.sleep(interval_s)
            try:
                result = job()
                if asyncio.iscoroutine(result):
                    await result
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("background job %s failed; it runs again in %.1f s", name, interval_s)

    return asyncio.create_task(loop(), name=name)
