"""Metrics of a plugin's own, exported beside the framework's (Kafka's ``pluginMetrics()``, KIP-877).

A task registers gauges on ``context.plugin_metrics()``; the worker exports each at
``/metrics`` as ``kafka_connect_plugins_<name>`` with labels ``connector``, ``task`` and
the gauge's tags — the name Kafka's ``kafka.connect:type=plugins`` MBeans get from the
Prometheus JMX exporter. The value function is called at scrape time, on another thread:
it should read a field, not do I/O.

    self.context.plugin_metrics().gauge(
        "snapshot_rows_scanned", "Rows read by the snapshot so far", lambda: self.rows_scanned
    )
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping

_NAME = re.compile(r"[a-z][a-z0-9_]*")


def check_metric_name(name: str) -> str:
    """Metric and tag names: lower case, digits and underscores (dashes become underscores)."""
    normalized = name.replace("-", "_")
    if not _NAME.fullmatch(normalized):
        raise ValueError(f"invalid metric name {name!r}: use lower-case letters, digits and underscores")
    return normalized


class PluginMetrics(ABC):
    @abstractmethod
    def gauge(
        self,
        name: str,
        description: str,
        value: Callable[[], float],
        tags: Mapping[str, str] | None = None,
    ) -> None:
        """Register (or replace) a gauge read by ``value`` at every scrape."""

    @abstractmethod
    def remove(self, name: str, tags: Mapping[str, str] | None = None) -> None:
        """Stop exporting a gauge (all of a task's gauges go when it stops)."""


class NoPluginMetrics(PluginMetrics):
    """For contexts outside a worker (unit tests of a task): registrations are accepted and ignored."""

    def gauge(
        self,
        name: str,
        description: str,
        value: Callable[[], float],
        tags: Mapping[str, str] | None = None,
    ) -> None:
        check_metric_name(name)

    def remove(self, name: str, tags: Mapping[str, str] | None = None) -> None:
        pass
