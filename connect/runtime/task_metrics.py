"""What a task counts, and the windowed rates and ratios Kafka Connect derives from it.

The task thread only bumps plain ints and floats (the per-record paths stay as cheap as
they were); a worker-wide sampler snapshots every task once a second, and rates and
running/pause ratios come from the snapshots of the last window, as Kafka's ``Rate``
does from its samples. Nothing here does I/O: the clock comes from the caller.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass

WINDOW_S = 30.0  # Kafka's metrics.sample.window.ms default, one window


@dataclass(frozen=True, slots=True)
class Sample:
    at: float  # monotonic seconds
    records_in: int
    records_out: int
    commits_completed: int
    commits_skipped: int
    paused: bool


class TaskMetrics:
    """Counters a task keeps; written by the task thread, read by the metrics exporter."""

    def __init__(self, now: float = 0.0, window_s: float = WINDOW_S) -> None:
        self.records_in = 0  # polled (source) / read (sink)
        self.records_out = 0  # written to Kafka (source) / put (sink)
        self.records_skipped = 0
        self.batch_count = 0
        self.batch_time_total_ms = 0.0
        self.batch_time_max_ms = 0.0
        self.batch_size_max = 0
        self.batch_records = 0
        self.commit_successes = 0
        self.commit_failures = 0
        self.commit_skips = 0  # sink: a commit with nothing new to write (Kafka's offset-commit-skip)
        self.commit_time_total_ms = 0.0
        self.commit_time_max_ms = 0.0
        # Exactly-once sources: records per committed transaction (Kafka's transaction-size-*).
        self.transactions = 0
        self.transaction_records = 0
        self.transaction_size_max = 0
        self.transaction_size_min = 0
        self.window_s = window_s
        self._samples: deque[Sample] = deque()
        self._lock = threading.Lock()  # between the sampler and readers, never the task thread
        self._created = now

    # -- written by the task thread -----------------------------------------------------

    def batch(self, size: int, elapsed_ms: float) -> None:
        """A poll() (source) or put() (sink) that handled ``size`` records."""
        self.batch_count += 1
        self.batch_records += size
        self.batch_time_total_ms += elapsed_ms
        if elapsed_ms > self.batch_time_max_ms:
            self.batch_time_max_ms = elapsed_ms
        if size > self.batch_size_max:
            self.batch_size_max = size

    def transaction(self, size: int) -> None:
        """An exactly-once source task committed a transaction of ``size`` records."""
        self.transactions += 1
        self.transaction_records += size
        self.transaction_size_max = max(self.transaction_size_max, size)
        self.transaction_size_min = size if self.transactions == 1 else min(self.transaction_size_min, size)

    @property
    def transaction_size_avg(self) -> float:
        return self.transaction_records / self.transactions if self.transactions else 0.0

    def commit(self, succeeded: bool, elapsed_ms: float) -> None:
        if succeeded:
            self.commit_successes += 1
        else:
            self.commit_failures += 1
        self.commit_time_total_ms += elapsed_ms
        if elapsed_ms > self.commit_time_max_ms:
            self.commit_time_max_ms = elapsed_ms

    # -- derived values (read by the exporter) --------------------------------------------

    @property
    def batch_time_avg_ms(self) -> float:
        return self.batch_time_total_ms / self.batch_count if self.batch_count else 0.0

    @property
    def batch_size_avg(self) -> float:
        return self.batch_records / self.batch_count if self.batch_count else 0.0

    @property
    def commit_attempts(self) -> int:
        return self.commit_successes + self.commit_failures

    @property
    def commit_time_avg_ms(self) -> float:
        attempts = self.commit_attempts
        return self.commit_time_total_ms / attempts if attempts else 0.0

    @property
    def commit_success_percentage(self) -> float:
        attempts = self.commit_attempts
        return self.commit_successes / attempts if attempts else 0.0

    @property
    def commit_failure_percentage(self) -> float:
        attempts = self.commit_attempts
        return self.commit_failures / attempts if attempts else 0.0

    # -- sampling ---------------------------------------------------------------------------

    def sample(self, now: float, paused: bool) -> None:
        """Remember the counters at ``now`` (the sampler calls this about once a second)."""
        s = Sample(now, self.records_in, self.records_out, self.commit_successes, self.commit_skips, paused)
        with self._lock:
            self._samples.append(s)
            # Keep one sample at or before the window's start so a full window can be measured.
            while len(self._samples) > 2 and self._samples[1].at <= now - self.window_s:
                self._samples.popleft()

    def rates(self, now: float) -> dict[str, float]:
        """Per-second rates over the window: in, out, commits completed and skipped."""
        with self._lock:
            first = self._samples[0] if self._samples else None
        # Before a full window has passed, the rate is over the task's life so far (counters
        # start at zero), and over at least a second so a burst at start-up is not a spike.
        if first is not None and first.at <= now - self.window_s:
            start_at, base = first.at, first
        else:
            start_at, base = self._created, None
        elapsed = max(now - start_at, 1.0)

        def per_s(current: int, attr: str) -> float:
            before = getattr(base, attr) if base is not None else 0
            return max(current - before, 0) / elapsed

        return {
            "in": per_s(self.records_in, "records_in"),
            "out": per_s(self.records_out, "records_out"),
            "commits": per_s(self.commit_successes, "commits_completed"),
            "skips": per_s(self.commit_skips, "commits_skipped"),
        }

    def pause_ratio(self) -> float:
        """The share of the window's samples that found the task paused."""
        with self._lock:
            samples = list(self._samples)
        if not samples:
            return 0.0
        return sum(1 for s in samples if s.paused) / len(samples)
