"""The worker's side of ``TaskContext.plugin_metrics()``: a task's own gauges, read at scrape time."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from connect.api.plugin_metrics import PluginMetrics, check_metric_name


@dataclass(frozen=True, slots=True)
class PluginGauge:
    name: str
    description: str
    tags: tuple[tuple[str, str], ...]
    value: Callable[[], float]


class TaskPluginMetrics(PluginMetrics):
    def __init__(self) -> None:
        self._gauges: dict[tuple[str, tuple[tuple[str, str], ...]], PluginGauge] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _key(name: str, tags: Mapping[str, str] | None) -> tuple[str, tuple[tuple[str, str], ...]]:
        labels = tuple(sorted((check_metric_name(k), str(v)) for k, v in (tags or {}).items()))
        reserved = {k for k, _ in labels} & {"connector", "task"}
        if reserved:
            raise ValueError(f"tags {sorted(reserved)} are set by the worker")
        return check_metric_name(name), labels

    def gauge(
        self,
        name: str,
        description: str,
        value: Callable[[], float],
        tags: Mapping[str, str] | None = None,
    ) -> None:
        key = self._key(name, tags)
        with self._lock:
            self._gauges[key] = PluginGauge(key[0], description, key[1], value)

    def remove(self, name: str, tags: Mapping[str, str] | None = None) -> None:
        with self._lock:
            self._gauges.pop(self._key(name, tags), None)

    def gauges(self) -> list[PluginGauge]:
        with self._lock:
            return list(self._gauges.values())
