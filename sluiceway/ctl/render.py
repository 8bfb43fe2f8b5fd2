"""Everything ``ctl`` prints: tables and descriptions (rich), JSON and YAML documents,
result lines, errors.

Results go to stdout, errors and progress to stderr, so ``-o json`` output stays
parseable. Names and traces from the worker are printed as ``Text``, never as rich
markup (a connector called ``[red]x`` stays that).
"""

from __future__ import annotations

import json
import sys
from typing import Any, Literal

import yaml
from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.table import Table as RichTable
from rich.text import Text

from sluiceway.ctl.rows import ConnectorDescription, Table

OutputFormat = Literal["table", "json", "yaml"]

STATE_STYLES = {
    "RUNNING": "green",
    "PAUSED": "yellow",
    "STOPPED": "blue",
    "RESTARTING": "yellow",
    "UNASSIGNED": "yellow",
    "FAILED": "bold red",
}

# Piped output must not wrap at 80 columns: long class names would break lines apart.
_PIPE_WIDTH = 10_000


class Output:
    """The consoles of one ``ctl`` run and the format asked for with ``-o``."""

    def __init__(self, fmt: OutputFormat = "table", color: bool = True) -> None:
        self.fmt = fmt
        self.interactive = sys.stdout.isatty()
        self.stdout = Console(
            no_color=not color,
            highlight=False,
            width=None if self.interactive else _PIPE_WIDTH,
        )
        self.stderr = Console(stderr=True, no_color=not color, highlight=False, soft_wrap=True)

    # -- documents ----------------------------------------------------------------------

    def document(self, data: Any) -> None:
        """A REST answer as it came (``-o json`` / ``-o yaml``)."""
        if self.fmt == "yaml":
            text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False)
            self.stdout.out(text.rstrip("\n"), highlight=False)
        elif self.interactive and not self.stdout.no_color:
            self.stdout.print_json(data=data, indent=2)
        else:
            self.stdout.out(json.dumps(data, indent=2, ensure_ascii=False), highlight=False)

    # -- tables and lines -----------------------------------------------------------------

    def table(self, table: Table, state_column: str | None = None) -> None:
        grid = RichTable(box=None, show_edge=False, pad_edge=False, header_style="bold", padding=(0, 3, 0, 0))
        for header in table.headers:
            grid.add_column(header, no_wrap=True)
        styled = table.headers.index(state_column) if state_column in table.headers else -1
        for row in table.rows:
            grid.add_row(
                *(
                    Text(cell, style=STATE_STYLES.get(cell, "") if i == styled else "")
                    for i, cell in enumerate(row)
                )
            )
        self._print(grid)

    def line(self, text: str, style: str = "") -> None:
        self.stdout.print(Text(text, style=style))

    def note(self, text: str) -> None:
        """Progress and side remarks (stderr)."""
        self.stderr.print(Text(text, style="dim"))

    def error(self, text: str) -> None:
        self.stderr.print(Text.assemble(("error: ", "bold red"), text))

    # -- describe ------------------------------------------------------------------------

    def description(self, d: ConnectorDescription) -> None:
        self._print(describe_renderable(d))

    def _print(self, renderable: RenderableType) -> None:
        if self.interactive:
            self.stdout.print(renderable)
            return
        # rich pads every cell to its column's width; piped output loses the trailing blanks
        with self.stdout.capture() as captured:
            self.stdout.print(renderable)
        text = "\n".join(line.rstrip() for line in captured.get().splitlines())
        self.stdout.out(text, highlight=False)


def _pairs(pairs: list[tuple[str, Text | str]], indent: int = 0) -> RenderableType:
    grid = RichTable.grid(padding=(0, 2))
    grid.add_column(no_wrap=True)
    grid.add_column()
    for key, value in pairs:
        grid.add_row(Text(f"{key}:"), value if isinstance(value, Text) else Text(value))
    return Padding(grid, (0, 0, 0, indent), expand=False)


def _state(state: str) -> Text:
    return Text(state, style=STATE_STYLES.get(state, ""))


def _trace(trace: str, indent: int) -> RenderableType:
    return Padding(Text(trace.rstrip()), (0, 0, 0, indent), expand=False)


def describe_renderable(d: ConnectorDescription) -> RenderableType:
    """kcctl's ``describe connector`` layout: header, config, tasks (with traces when FAILED), topics."""
    parts: list[RenderableType] = [
        _pairs([("Name", d.name), ("Type", d.type), ("State", _state(d.state)), ("Worker ID", d.worker_id)])
    ]
    if d.trace:
        parts += [Text("Trace:"), _trace(d.trace, 2)]
    parts.append(Text("Config:"))
    parts.append(_pairs(list(d.config), 2))
    parts.append(Text("Tasks:" if d.tasks else "Tasks: none"))
    for task in d.tasks:
        parts.append(Text(f"  {task.id}:"))
        parts.append(_pairs([("State", _state(task.state)), ("Worker ID", task.worker_id)], 4))
        if task.state == "FAILED" and task.trace:
            parts += [Text("    Trace:"), _trace(task.trace, 6)]
    if d.topics is None:
        parts.append(Text("Topics: (topic tracking is disabled on the worker)"))
    else:
        parts.append(Text("Topics:" if d.topics else "Topics: none"))
        parts += [Text(f"  {t}") for t in d.topics]
    return Group(*parts)
