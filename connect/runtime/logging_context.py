"""``[connector|task-N]`` in every log line a connector or task produces (Kafka's MDC)."""

from __future__ import annotations

import contextvars
import logging

_CONTEXT: contextvars.ContextVar[str] = contextvars.ContextVar("connect_context", default="")


def set_context(connector: str, task: int | None = None) -> contextvars.Token[str]:
    label = f"[{connector}|task-{task}] " if task is not None else f"[{connector}|worker] "
    return _CONTEXT.set(label)


def reset_context(token: contextvars.Token[str]) -> None:
    _CONTEXT.reset(token)


class ContextFilter(logging.Filter):
    """Adds ``connect_context`` to records so formats can include ``%(connect_context)s``."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.connect_context = _CONTEXT.get()
        return True
