"""Snapshot progress of CDC source tasks, read from the workers' ``/metrics``.

A CDC task exports ``kafka_connect_plugins_snapshot_{running,completed,rows_scanned,
rows_estimated}`` (its plugin metrics); each task's numbers come from the worker that
runs it (the status names it), since metrics are per worker. Parsing is pure.
"""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

_PREFIX = "kafka_connect_plugins_snapshot_"


@dataclass(frozen=True, slots=True)
class SnapshotProgress:
    task: int
    running: bool
    completed: bool
    rows_scanned: int
    rows_estimated: int

    @property
    def fraction(self) -> float:
        """Share of the estimate read; 1 once completed (estimates can be off either way)."""
        if self.completed:
            return 1.0
        if self.rows_estimated <= 0:
            return 0.0
        return min(self.rows_scanned / self.rows_estimated, 0.99)


def parse_snapshot_metrics(text: str, connector: str) -> dict[int, SnapshotProgress]:
    """The snapshot progress of ``connector``'s tasks found in one worker's metrics text."""
    found: dict[int, dict[str, float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if not sample.name.startswith(_PREFIX) or sample.labels.get("connector") != connector:
                continue
            try:
                task = int(sample.labels.get("task", ""))
            except ValueError:
                continue
            found.setdefault(task, {})[sample.name.removeprefix(_PREFIX)] = sample.value
    return {
        task: SnapshotProgress(
            task,
            running=v.get("running", 0.0) == 1.0,
            completed=v.get("completed", 0.0) == 1.0,
            rows_scanned=int(v.get("rows_scanned", 0.0)),
            rows_estimated=int(v.get("rows_estimated", 0.0)),
        )
        for task, v in found.items()
        if "rows_scanned" in v
    }


def describe(p: SnapshotProgress) -> str:
    if p.completed:
        return f"task {p.task}: snapshot complete, {p.rows_scanned:,} rows"
    if not p.running:
        return f"task {p.task}: no snapshot running ({p.rows_scanned:,} rows read)"
    return f"task {p.task}: {p.rows_scanned:,} of ~{p.rows_estimated:,} rows ({p.fraction:.0%})"
