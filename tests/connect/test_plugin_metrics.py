"""TaskContext.plugin_metrics(): a task's own gauges at the worker's /metrics (KIP-877's pluginMetrics)."""

from __future__ import annotations

import pytest

from connect.api.plugin_metrics import NoPluginMetrics, check_metric_name
from connect.runtime.plugin_metrics import TaskPluginMetrics


def test_names_and_tags_are_checked() -> None:
    assert check_metric_name("rows-read") == "rows_read"
    for bad in ("Rows", "1st", "a b", "x.y", ""):
        with pytest.raises(ValueError, match="invalid metric name"):
            check_metric_name(bad)
    metrics = TaskPluginMetrics()
    with pytest.raises(ValueError, match="set by the worker"):
        metrics.gauge("rows", "rows", lambda: 1.0, {"task": "3"})
    NoPluginMetrics().gauge("fine", "ignored outside a worker", lambda: 1.0)


def test_registering_again_replaces_and_remove_forgets() -> None:
    metrics = TaskPluginMetrics()
    metrics.gauge("lag", "lag", lambda: 1.0, {"table": "a"})
    metrics.gauge("lag", "lag", lambda: 2.0, {"table": "a"})
    metrics.gauge("lag", "lag", lambda: 3.0, {"table": "b"})
    assert sorted((g.tags, g.value()) for g in metrics.gauges()) == [
        ((("table", "a"),), 2.0),
        ((("table", "b"),), 3.0),
    ]
    metrics.remove("lag", {"table": "a"})
    assert [g.tags for g in metrics.gauges()] == [(("table", "b"),)]
