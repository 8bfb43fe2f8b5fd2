"""Every log line a connector or its tasks write carries ``[connector|task-N]`` (or
``[connector|worker]`` from the connector's own thread), as Kafka Connect's MDC does."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from connect.runtime.logging_context import ContextFilter
from connect.standalone import LOG_FORMAT
from sluiceway.embedded import EmbeddedConnect
from tests.support import unique, wait_until


class Captured(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.addFilter(ContextFilter())
        self.setFormatter(logging.Formatter(LOG_FORMAT))
        self.lines: list[tuple[str, str]] = []  # (logger, formatted line)

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append((record.name, self.format(record)))


@pytest.fixture
def captured() -> Iterator[Captured]:
    handler = Captured()
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)


def test_task_and_connector_lines_carry_their_context(captured: Captured, tmp_path: Path) -> None:
    source = tmp_path / "in.txt"
    source.write_text("a\nb\n")
    topic = unique("ctx")
    with EmbeddedConnect(tmp_path / "connect") as c:
        c.create_connector(
            "ctx-src", {"connector.class": "FileStreamSource", "file": str(source), "topic": topic}
        )
        c.wait_for_running("ctx-src")
        # The source's own logger, on the task thread: resuming, then offsets committed.
        wait_until(
            lambda: any("committed offsets" in line for _, line in captured.lines), 30, message="a commit"
        )
        c.request("DELETE", "/connectors/ctx-src")
    task_lines = [line for name, line in captured.lines if name == "connect.runtime.source_task"]
    assert task_lines and all("[ctx-src|task-0] " in line for line in task_lines), task_lines
    connector_lines = [line for name, line in captured.lines if "ctx-src" in line and "|worker]" in line]
    assert connector_lines, "no line from the connector's own thread carried [ctx-src|worker]"
    # Lines of the worker itself (not in a connector's thread) carry no context.
    herder_lines = [line for name, line in captured.lines if name.startswith("connect.herder")]
    assert herder_lines and not any("|task-" in line for line in herder_lines)
