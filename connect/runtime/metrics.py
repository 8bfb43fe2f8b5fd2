"""Kafka Connect's worker, connector and task metrics in Prometheus' exposition format.

Names are what Kafka Connect's MBeans become under the Prometheus JMX exporter's
default rules, so dashboards and alerts written for a Java Connect cluster work here:
``kafka.connect:type=source-task-metrics,connector=c,task=0`` attribute
``source-record-poll-total`` is ``kafka_connect_source_task_metrics_source_record_poll_total``
with labels ``connector="c"`` and ``task="0"``. Status attributes (strings in JMX) are
one-hot gauges with a ``status`` label.

Values are read from the live tasks at scrape time (a custom collector), so nothing is
counted twice; a sampler thread snapshots the tasks once a second for the windowed
rates and ratios.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry

from connect.runtime.dead_letter_queue import DeadLetterQueueReporter
from connect.runtime.errors import ErrorReporter, LogReporter
from connect.runtime.status import State
from connect.runtime.task_metrics import TaskMetrics

if TYPE_CHECKING:
    from connect.runtime.worker import Worker
    from connect.runtime.worker_task import WorkerTask

log = logging.getLogger(__name__)

PREFIX = "kafka_connect"
R = TypeVar("R", bound=ErrorReporter)
SAMPLE_INTERVAL_S = 1.0
_TASK_STATES = ("unassigned", "running", "paused", "failed", "restarting", "destroyed")
_CONNECTOR_STATES = (*_TASK_STATES, "stopped")


@dataclass
class StartupCounts:
    """connector-startup-* and task-startup-* of connect-worker-metrics."""

    connector_attempts: int = 0
    connector_successes: int = 0
    connector_failures: int = 0
    task_attempts: int = 0
    task_successes: int = 0
    task_failures: int = 0


@dataclass
class RebalanceMetrics:
    """connect-worker-rebalance-metrics: kept by a distributed herder as it rebalances."""

    clock: Callable[[], float] = time.monotonic
    completed: int = 0
    epoch: int = -1
    leader_name: str = ""
    time_total_ms: float = 0.0
    time_max_ms: float = 0.0
    _started_at: float | None = None
    _last_completed_at: float | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def started(self) -> None:
        with self._lock:
            if self._started_at is None:
                self._started_at = self.clock()

    def completed_at_generation(self, epoch: int, leader_name: str) -> None:
        with self._lock:
            now = self.clock()
            if self._started_at is not None:
                elapsed_ms = (now - self._started_at) * 1000
                self.time_total_ms += elapsed_ms
                self.time_max_ms = max(self.time_max_ms, elapsed_ms)
            self._started_at = None
            self._last_completed_at = now
            self.completed += 1
            self.epoch = epoch
            self.leader_name = leader_name

    @property
    def rebalancing(self) -> bool:
        return self._started_at is not None

    @property
    def time_avg_ms(self) -> float:
        return self.time_total_ms / self.completed if self.completed else 0.0

    def time_since_last_ms(self) -> float:
        # Kafka reports -1 before the first rebalance completes.
        last = self._last_completed_at
        return -1.0 if last is None else (self.clock() - last) * 1000


class MetricsSampler:
    """Snapshots every task of a worker once a second (windowed rates, pause ratio)."""

    def __init__(self, tasks: Callable[[], Iterable[WorkerTask]], interval_s: float = SAMPLE_INTERVAL_S):
        self._tasks = tasks
        self._interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="metrics-sampler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)

    def sample_now(self) -> None:
        now = time.monotonic()
        for task in self._tasks():
            task.metrics.sample(now, task.paused)

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            self.sample_now()


class _Families:
    """Metric families created on first use, yielded in creation order."""

    def __init__(self) -> None:
        self._families: dict[str, Metric] = {}

    def _get(self, kind: type[Metric], name: str, doc: str, labels: list[str]) -> Metric:
        family = self._families.get(name)
        if family is None:
            family = kind(name, doc, labels=labels)  # type: ignore[call-arg]
            self._families[name] = family
        return family

    def gauge(self, name: str, doc: str, labels: list[str], values: list[str], value: float) -> None:
        family = self._get(GaugeMetricFamily, name, doc, labels)
        assert isinstance(family, GaugeMetricFamily)
        family.add_metric(values, value)

    def counter(self, name: str, doc: str, labels: list[str], values: list[str], value: float) -> None:
        # prometheus-client appends _total to a counter's samples; the family name has none.
        family = self._get(CounterMetricFamily, name.removesuffix("_total"), doc, labels)
        assert isinstance(family, CounterMetricFamily)
        family.add_metric(values, value)

    def info(self, name: str, doc: str, labels: list[str], values: dict[str, str]) -> None:
        family = self._get(InfoMetricFamily, name, doc, labels)
        assert isinstance(family, InfoMetricFamily)
        family.add_metric([], values)

    def __iter__(self) -> Iterator[Metric]:
        return iter(self._families.values())


def _state_name(state: State | None) -> str:
    return (state or State.UNASSIGNED).value.lower()


class WorkerCollector(Collector):
    """Everything the worker's /metrics shows, read from the worker at scrape time."""

    def __init__(self, worker: Worker, rebalance: Callable[[], RebalanceMetrics | None] = lambda: None):
        self.worker = worker
        self.rebalance = rebalance

    def collect(self) -> Iterator[Metric]:
        f = _Families()
        now = time.monotonic()
        worker = self.worker
        connectors = dict(worker.connectors)
        tasks = dict(worker.tasks)
        self._worker(f, connectors, tasks)
        self._rebalance(f)
        for name, wc in sorted(connectors.items()):
            labels, values = ["connector"], [name]
            for state in _CONNECTOR_STATES:
                f.gauge(
                    f"{PREFIX}_connector_metrics_status",
                    "The connector's status on this worker (1 for the current one).",
                    [*labels, "status"],
                    [*values, state],
                    1.0 if _state_name(wc.state) == state else 0.0,
                )
            cls = type(wc.connector)
            f.info(
                f"{PREFIX}_connector_metrics",
                "The connector's class, type and version.",
                labels,
                {
                    "connector": name,
                    "connector_class": f"{cls.__module__}.{cls.__qualname__}",
                    "connector_type": "sink" if wc.is_sink else "source",
                    "connector_version": _version(wc.connector),
                },
            )
        for task_id, task in sorted(tasks.items()):
            self._task(f, task_id.connector, str(task_id.task), task, now)
        yield from f

    def _worker(
        self, f: _Families, connectors: Mapping[str, object], tasks: Mapping[Any, WorkerTask]
    ) -> None:
        p = f"{PREFIX}_connect_worker_metrics"
        f.gauge(f"{p}_connector_count", "Connectors run in this worker.", [], [], len(connectors))
        f.gauge(f"{p}_task_count", "Tasks run in this worker.", [], [], len(tasks))
        counts = self.worker.startup_counts
        for kind, attempts, ok, failed in (
            ("connector", counts.connector_attempts, counts.connector_successes, counts.connector_failures),
            ("task", counts.task_attempts, counts.task_successes, counts.task_failures),
        ):
            f.counter(
                f"{p}_{kind}_startup_attempts_total", f"{kind.title()} starts attempted.", [], [], attempts
            )
            f.counter(
                f"{p}_{kind}_startup_success_total", f"{kind.title()} starts that succeeded.", [], [], ok
            )
            f.counter(
                f"{p}_{kind}_startup_failure_total", f"{kind.title()} starts that failed.", [], [], failed
            )
            f.gauge(
                f"{p}_{kind}_startup_success_percentage",
                f"Share of {kind} starts that succeeded.",
                [],
                [],
                ok / attempts if attempts else 0.0,
            )
            f.gauge(
                f"{p}_{kind}_startup_failure_percentage",
                f"Share of {kind} starts that failed.",
                [],
                [],
                failed / attempts if attempts else 0.0,
            )
        by_connector: dict[str, dict[str, int]] = {name: {} for name in connectors}
        for task in tasks.values():
            states = by_connector.setdefault(task.id.connector, {})
            key = _state_name(task.state)
            states[key] = states.get(key, 0) + 1
        for name, states in sorted(by_connector.items()):
            f.gauge(
                f"{p}_connector_total_task_count",
                "The connector's tasks run in this worker.",
                ["connector"],
                [name],
                sum(states.values()),
            )
            for state in _TASK_STATES:
                f.gauge(
                    f"{p}_connector_{state}_task_count",
                    f"The connector's {state} tasks in this worker.",
                    ["connector"],
                    [name],
                    states.get(state, 0),
                )

    def _rebalance(self, f: _Families) -> None:
        r = self.rebalance()
        if r is None:
            return  # standalone workers never rebalance (Kafka has no such MBean there)
        p = f"{PREFIX}_connect_worker_rebalance_metrics"
        f.counter(f"{p}_completed_rebalances_total", "Rebalances this worker completed.", [], [], r.completed)
        f.gauge(
            f"{p}_rebalancing", "1 while a rebalance is under way.", [], [], 1.0 if r.rebalancing else 0.0
        )
        f.gauge(f"{p}_epoch", "The group generation of the last rebalance.", [], [], r.epoch)
        f.gauge(f"{p}_rebalance_avg_time_ms", "Average rebalance time.", [], [], r.time_avg_ms)
        f.gauge(f"{p}_rebalance_max_time_ms", "Longest rebalance time.", [], [], r.time_max_ms)
        f.gauge(
            f"{p}_time_since_last_rebalance_ms",
            "Time since the last rebalance.",
            [],
            [],
            r.time_since_last_ms(),
        )
        f.info(f"{p}_leader", "The group leader of the last rebalance.", [], {"leader_name": r.leader_name})

    def _task(self, f: _Families, connector: str, task_no: str, task: WorkerTask, now: float) -> None:
        labels, values = ["connector", "task"], [connector, task_no]
        for state in _TASK_STATES:
            f.gauge(
                f"{PREFIX}_connector_task_metrics_status",
                "The task's status (1 for the current one).",
                [*labels, "status"],
                [*values, state],
                1.0 if _state_name(task.state) == state else 0.0,
            )
        view = _TaskView(task, task.metrics, task.metrics.rates(now), task.metrics.pause_ratio())
        tables = [_CONNECTOR_TASK, _SINK_TASK if task.is_sink else _SOURCE_TASK, _TASK_ERRORS]
        if getattr(task, "exactly_once", False):
            tables.append(_EXACTLY_ONCE_SOURCE_TASK)  # Kafka registers these for such tasks only
        for table in tables:
            for name, doc, read in table:
                # JMX attributes whose names merely contain "total" stay gauges (no doubled _total).
                add = f.counter if name.endswith("_total") else f.gauge
                add(f"{PREFIX}_{name}", doc, labels, values, read(view))
        for g in task.plugin_metrics.gauges():
            try:
                value = float(g.value())
            except Exception:  # a plugin's gauge must not break the scrape
                log.debug("plugin metric %s of %s-%s failed", g.name, connector, task_no, exc_info=True)
                continue
            tag_names, tag_values = [k for k, _ in g.tags], [v for _, v in g.tags]
            f.gauge(
                f"{PREFIX}_plugins_{g.name}",
                g.description,
                [*labels, *tag_names],
                [*values, *tag_values],
                value,
            )


@dataclass(frozen=True, slots=True)
class _TaskView:
    task: WorkerTask
    m: TaskMetrics
    rates: dict[str, float]
    pause_ratio: float

    def reporters(self, kind: type[R]) -> list[R]:
        return [r for r in self.task.operator.reporters if isinstance(r, kind)]


_Row = tuple[str, str, Callable[[_TaskView], float]]

_CONNECTOR_TASK: tuple[_Row, ...] = (
    ("connector_task_metrics_pause_ratio", "Share of the window spent paused.", lambda v: v.pause_ratio),
    (
        "connector_task_metrics_running_ratio",
        "Share of the window spent running.",
        lambda v: 1 - v.pause_ratio,
    ),
    ("connector_task_metrics_batch_size_max", "Largest batch polled or put.", lambda v: v.m.batch_size_max),
    ("connector_task_metrics_batch_size_avg", "Average batch polled or put.", lambda v: v.m.batch_size_avg),
    (
        "connector_task_metrics_offset_commit_avg_time_ms",
        "Average commit time.",
        lambda v: v.m.commit_time_avg_ms,
    ),
    (
        "connector_task_metrics_offset_commit_max_time_ms",
        "Longest commit time.",
        lambda v: v.m.commit_time_max_ms,
    ),
    (
        "connector_task_metrics_offset_commit_success_percentage",
        "Share of offset commits that succeeded.",
        lambda v: v.m.commit_success_percentage,
    ),
    (
        "connector_task_metrics_offset_commit_failure_percentage",
        "Share of offset commits that failed.",
        lambda v: v.m.commit_failure_percentage,
    ),
    # Not Kafka MBean attributes: Prometheus wants counters to take rates and alerts from.
    (
        "connector_task_metrics_offset_commit_success_total",
        "Offset commits done.",
        lambda v: v.m.commit_successes,
    ),
    (
        "connector_task_metrics_offset_commit_failure_total",
        "Offset commits failed.",
        lambda v: v.m.commit_failures,
    ),
)

_SINK_TASK: tuple[_Row, ...] = (
    ("sink_task_metrics_sink_record_read_total", "Records read from Kafka.", lambda v: v.m.records_in),
    ("sink_task_metrics_sink_record_read_rate", "Records read per second.", lambda v: v.rates["in"]),
    ("sink_task_metrics_sink_record_send_total", "Records put to the task.", lambda v: v.m.records_out),
    ("sink_task_metrics_sink_record_send_rate", "Records put per second.", lambda v: v.rates["out"]),
    ("sink_task_metrics_put_batch_avg_time_ms", "Average put() time.", lambda v: v.m.batch_time_avg_ms),
    ("sink_task_metrics_put_batch_max_time_ms", "Longest put() time.", lambda v: v.m.batch_time_max_ms),
    ("sink_task_metrics_partition_count", "Topic partitions assigned.", lambda v: v.task.partition_count),
    (
        "sink_task_metrics_offset_commit_completion_total",
        "Commits completed.",
        lambda v: v.m.commit_successes,
    ),
    ("sink_task_metrics_offset_commit_completion_rate", "Commits per second.", lambda v: v.rates["commits"]),
    ("sink_task_metrics_offset_commit_skip_total", "Commits with nothing new.", lambda v: v.m.commit_skips),
    ("sink_task_metrics_offset_commit_skip_rate", "Skipped commits per second.", lambda v: v.rates["skips"]),
)

_SOURCE_TASK: tuple[_Row, ...] = (
    (
        "source_task_metrics_source_record_poll_total",
        "Records polled from the task.",
        lambda v: v.m.records_in,
    ),
    ("source_task_metrics_source_record_poll_rate", "Records polled per second.", lambda v: v.rates["in"]),
    ("source_task_metrics_source_record_write_total", "Records written to Kafka.", lambda v: v.m.records_out),
    ("source_task_metrics_source_record_write_rate", "Records written per second.", lambda v: v.rates["out"]),
    ("source_task_metrics_poll_batch_avg_time_ms", "Average poll() time.", lambda v: v.m.batch_time_avg_ms),
    ("source_task_metrics_poll_batch_max_time_ms", "Longest poll() time.", lambda v: v.m.batch_time_max_ms),
    (
        "source_task_metrics_source_record_active_count",
        "Records polled but not yet written to Kafka (nor dropped).",
        lambda v: max(v.m.records_in - v.m.records_out - v.m.records_skipped, 0),
    ),
)

_EXACTLY_ONCE_SOURCE_TASK: tuple[_Row, ...] = (
    (
        "source_task_metrics_transaction_size_avg",
        "Average records per committed transaction.",
        lambda v: v.m.transaction_size_avg,
    ),
    (
        "source_task_metrics_transaction_size_max",
        "Most records in a committed transaction.",
        lambda v: v.m.transaction_size_max,
    ),
    (
        "source_task_metrics_transaction_size_min",
        "Fewest records in a committed transaction.",
        lambda v: v.m.transaction_size_min,
    ),
)

_TASK_ERRORS: tuple[_Row, ...] = (
    (
        "task_error_metrics_total_record_errors",
        "Records that ended in an error.",
        lambda v: v.task.operator.counts.failures,
    ),
    (
        "task_error_metrics_total_record_failures",
        "Failed attempts at processing a record (retries included).",
        lambda v: v.task.operator.counts.failures + v.task.operator.counts.retries,
    ),
    (
        "task_error_metrics_total_records_skipped",
        "Records skipped for errors.",
        lambda v: v.task.operator.counts.skipped,
    ),
    ("task_error_metrics_total_retries", "Operations retried.", lambda v: v.task.operator.counts.retries),
    (
        "task_error_metrics_total_errors_logged",
        "Errors written to the log.",
        lambda v: sum(r.logged for r in v.reporters(LogReporter)),
    ),
    (
        "task_error_metrics_deadletterqueue_produce_requests",
        "Records sent to the dead letter queue.",
        lambda v: sum(r.produce_requests for r in v.reporters(DeadLetterQueueReporter)),
    ),
    (
        "task_error_metrics_deadletterqueue_produce_failures",
        "Dead letter queue writes that failed.",
        lambda v: sum(r.produce_failures for r in v.reporters(DeadLetterQueueReporter)),
    ),
    (
        "task_error_metrics_last_error_timestamp",
        "When the last error happened (ms since the epoch).",
        lambda v: v.task.operator.counts.last_error_ms,
    ),
)


def _version(plugin: object) -> str:
    try:
        return str(plugin.version())  # type: ignore[attr-defined]
    except Exception:
        return "unknown"


def worker_registry(
    worker: Worker, rebalance: Callable[[], RebalanceMetrics | None] = lambda: None
) -> CollectorRegistry:
    """A registry of its own per worker: several workers may share a process (tests, embedded)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(WorkerCollector(worker, rebalance))
    return registry
