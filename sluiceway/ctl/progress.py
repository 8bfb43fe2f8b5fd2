"""Progress of long operations: a rich spinner on a terminal, plain lines otherwise.

The spinner (``Console.status``) is shown only when stdout is a terminal; in scripts
and CI every change of state becomes one line on stderr, so logs stay readable and
stdout keeps only results.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

from rich.status import Status
from rich.text import Text

from sluiceway.ctl.render import Output


class Reporter(Protocol):
    def update(self, text: str) -> None:
        """The current state of what is being waited for (shown while waiting)."""

    def step(self, text: str) -> None:
        """A step that is done or starts (kept on screen)."""


class _Spinner:
    def __init__(self, out: Output, status: Status) -> None:
        self.out = out
        self.status = status

    def update(self, text: str) -> None:
        self.status.update(Text(text))

    def step(self, text: str) -> None:
        self.out.stdout.print(Text(text))


class _Lines:
    def __init__(self, out: Output) -> None:
        self.out = out
        self.last: str | None = None

    def update(self, text: str) -> None:
        if text != self.last:  # one line per change, not per poll
            self.out.note(text)
            self.last = text

    def step(self, text: str) -> None:
        self.out.note(text)
        self.last = None


@contextmanager
def progress(out: Output, title: str) -> Iterator[Reporter]:
    if out.interactive:
        with out.stdout.status(Text(title)) as status:
            yield _Spinner(out, status)
    else:
        yield _Lines(out)
