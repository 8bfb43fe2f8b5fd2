"""Plugins for the distributed system tests: the file connectors, counting task starts.

Each task start appends a line to ``starts.file``, so a test can tell a task that kept
running through a rebalance from one that was restarted.
"""

from __future__ import annotations

import os

from connect.api import Task
from connectors.file.sink import FileStreamSinkConnector, FileStreamSinkTask
from connectors.file.source import FileStreamSourceConnector, FileStreamSourceTask


def _record_start(props: dict[str, str], what: str) -> None:
    path = props.get("starts.file")
    if path:
        with open(path, "a") as f:
            f.write(f"{what} {os.getpid()}\n")


class CountingSourceTask(FileStreamSourceTask):
    def start(self, props: dict[str, str]) -> None:
        _record_start(props, "source")
        super().start(props)


class CountingSourceConnector(FileStreamSourceConnector):
    aliases = ()  # not another FileStreamSourceConnector: the Kafka names stay the real one's

    def task_class(self) -> type[Task]:
        return CountingSourceTask


class CountingSinkTask(FileStreamSinkTask):
    def start(self, props: dict[str, str]) -> None:
        _record_start(props, "sink")
        super().start(props)


class CountingSinkConnector(FileStreamSinkConnector):
    aliases = ()

    def task_class(self) -> type[Task]:
        return CountingSinkTask
