"""A source connector for the failover benchmark: tasks that tick, and log each start.

``TickSourceConnector`` runs ``tasks.max`` tasks; each emits one record every
``interval.ms`` and, when it starts, appends ``<connector>-<task> <pid>`` to
``starts.file``, so the benchmark can count the tasks a rebalance restarted.
"""

from __future__ import annotations

import os
import time

from connect.api import SourceConnector, SourceRecord, SourceTask, Task


class TickSourceConnector(SourceConnector):
    def version(self) -> str:
        return "bench"

    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def task_class(self) -> type[Task]:
        return TickSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{**self.props, "task.number": str(i)} for i in range(max_tasks)]

    def stop(self) -> None:
        pass


class TickSourceTask(SourceTask):
    def version(self) -> str:
        return "bench"

    def start(self, props: dict[str, str]) -> None:
        self.topic = props["topic"]
        self.interval = int(props.get("interval.ms", "100")) / 1000
        self.partition = {"task": f"{props['name']}-{props['task.number']}"}
        offset = self.context.offset_storage_reader().offset(self.partition)
        self.n = int(offset["n"]) if offset else 0
        starts = props.get("starts.file")
        if starts:
            with open(starts, "a") as f:
                f.write(f"{self.partition['task']} {os.getpid()}\n")

    def poll(self) -> list[SourceRecord] | None:
        time.sleep(self.interval)
        self.n += 1
        return [SourceRecord(self.partition, {"n": self.n}, self.topic, value=str(self.n))]

    def stop(self) -> None:
        pass
