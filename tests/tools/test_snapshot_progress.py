"""Parsing CDC snapshot progress out of a worker's metrics text (sluiceway ctl snapshot)."""

from __future__ import annotations

from sluiceway.ctl.snapshot_progress import SnapshotProgress, describe, parse_snapshot_metrics

TEXT = """\
# HELP kafka_connect_plugins_snapshot_running 1 while the initial snapshot is being read
# TYPE kafka_connect_plugins_snapshot_running gauge
kafka_connect_plugins_snapshot_running{connector="pg",task="0"} 1.0
kafka_connect_plugins_snapshot_running{connector="other",task="0"} 0.0
# TYPE kafka_connect_plugins_snapshot_completed gauge
kafka_connect_plugins_snapshot_completed{connector="pg",task="0"} 0.0
# TYPE kafka_connect_plugins_snapshot_rows_scanned gauge
kafka_connect_plugins_snapshot_rows_scanned{connector="pg",task="0"} 250.0
kafka_connect_plugins_snapshot_rows_scanned{connector="other",task="0"} 7.0
# TYPE kafka_connect_plugins_snapshot_rows_estimated gauge
kafka_connect_plugins_snapshot_rows_estimated{connector="pg",task="0"} 1000.0
# TYPE kafka_connect_source_task_metrics_source_record_poll_total counter
kafka_connect_source_task_metrics_source_record_poll_total{connector="pg",task="0"} 250.0
"""


def test_only_the_named_connectors_tasks_are_read() -> None:
    progress = parse_snapshot_metrics(TEXT, "pg")
    assert progress == {
        0: SnapshotProgress(0, running=True, completed=False, rows_scanned=250, rows_estimated=1000)
    }
    assert progress[0].fraction == 0.25
    assert describe(progress[0]) == "task 0: 250 of ~1,000 rows (25%)"
    assert parse_snapshot_metrics(TEXT, "missing") == {}


def test_estimates_that_are_off_never_show_done_before_it_is() -> None:
    over = SnapshotProgress(0, running=True, completed=False, rows_scanned=1200, rows_estimated=1000)
    assert over.fraction == 0.99
    done = SnapshotProgress(0, running=False, completed=True, rows_scanned=900, rows_estimated=1000)
    assert done.fraction == 1.0 and describe(done) == "task 0: snapshot complete, 900 rows"
    unknown = SnapshotProgress(0, running=True, completed=False, rows_scanned=5, rows_estimated=0)
    assert unknown.fraction == 0.0
