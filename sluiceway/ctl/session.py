"""What every command handler gets: the worker's client, the output, the wait limit."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from sluiceway.ctl.client import ConnectClient
from sluiceway.ctl.errors import UsageError
from sluiceway.ctl.render import Output


@dataclass(frozen=True, slots=True)
class Session:
    client: ConnectClient
    out: Output
    timeout: float  # seconds, for each request and for each wait for a state


def read_input(path: str) -> tuple[str, str]:
    """(text, name for messages) of an input file; ``-`` reads stdin."""
    if path == "-":
        return sys.stdin.read(), "<stdin>"
    try:
        return Path(path).read_text(encoding="utf-8"), path
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
