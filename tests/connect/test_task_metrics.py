"""TaskMetrics and RebalanceMetrics: the arithmetic behind Kafka Connect's task metrics.

Pure: the clock is passed in, so windows and rates are exact.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connect.runtime.metrics import RebalanceMetrics
from connect.runtime.task_metrics import TaskMetrics


def test_rates_before_a_full_window_are_over_the_task_life() -> None:
    m = TaskMetrics(now=100.0, window_s=30.0)
    m.records_in = 50
    m.sample(105.0, paused=False)
    m.records_in = 100
    # 100 records in the 10 s since the task started
    assert m.rates(110.0)["in"] == pytest.approx(10.0)


def test_rates_over_a_full_window_use_the_sample_at_its_start() -> None:
    m = TaskMetrics(now=0.0, window_s=30.0)
    for second in range(0, 61):
        m.records_out = second * 7  # 7 records a second, steadily
        m.sample(float(second), paused=False)
    assert m.rates(60.0)["out"] == pytest.approx(7.0)
    # The burst of the first second does not linger once the window has moved past it.
    m2 = TaskMetrics(now=0.0, window_s=30.0)
    m2.records_out = 10_000
    m2.sample(1.0, paused=False)
    for second in range(2, 61):
        m2.sample(float(second), paused=False)
    assert m2.rates(60.0)["out"] == 0.0


def test_a_burst_right_after_start_is_spread_over_at_least_a_second() -> None:
    m = TaskMetrics(now=10.0)
    m.records_in = 500
    assert m.rates(10.01)["in"] == pytest.approx(500.0)


def test_pause_ratio_is_the_share_of_paused_samples_in_the_window() -> None:
    m = TaskMetrics(now=0.0, window_s=10.0)
    for second in range(1, 21):
        m.sample(float(second), paused=second > 15)  # paused for the last 5 seconds
    assert m.pause_ratio() == pytest.approx(5 / 11)  # 11 samples kept: the window and its start


def test_batches_and_commits() -> None:
    m = TaskMetrics()
    assert (m.batch_size_avg, m.batch_time_avg_ms, m.commit_time_avg_ms) == (0.0, 0.0, 0.0)
    m.batch(10, 4.0)
    m.batch(30, 2.0)
    m.commit(True, 5.0)
    m.commit(True, 1.0)
    m.commit(False, 9.0)
    assert m.batch_size_avg == 20 and m.batch_size_max == 30
    assert m.batch_time_avg_ms == 3.0 and m.batch_time_max_ms == 4.0
    assert m.commit_success_percentage == pytest.approx(2 / 3)
    assert m.commit_failure_percentage == pytest.approx(1 / 3)
    assert m.commit_time_avg_ms == 5.0 and m.commit_time_max_ms == 9.0


@given(st.lists(st.integers(min_value=0, max_value=1000), min_size=1, max_size=120))
def test_rates_are_never_negative_and_never_exceed_what_happened(increments: list[int]) -> None:
    m = TaskMetrics(now=0.0, window_s=30.0)
    for second, n in enumerate(increments, start=1):
        m.records_in += n
        m.sample(float(second), paused=False)
    rate = m.rates(float(len(increments)))["in"]
    assert 0.0 <= rate <= sum(increments)


def test_rebalance_metrics() -> None:
    now = [0.0]
    r = RebalanceMetrics(clock=lambda: now[0])
    assert (r.completed, r.rebalancing, r.time_since_last_ms()) == (0, False, -1.0)
    r.started()
    assert r.rebalancing
    now[0] = 0.5
    r.started()  # a rejoin inside the same rebalance does not restart its clock
    now[0] = 2.0
    r.completed_at_generation(3, "http://w1:8083/")
    r.started()
    now[0] = 3.0
    r.completed_at_generation(4, "http://w2:8083/")
    assert (r.completed, r.epoch, r.leader_name, r.rebalancing) == (2, 4, "http://w2:8083/", False)
    assert r.time_max_ms == pytest.approx(2000.0)
    assert r.time_avg_ms == pytest.approx(1500.0)
    now[0] = 3.25
    assert r.time_since_last_ms() == pytest.approx(250.0)
