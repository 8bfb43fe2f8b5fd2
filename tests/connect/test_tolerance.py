"""Tests of connect.runtime.errors: RetryWithToleranceOperator, LogReporter, error headers.

Kafka Connect's semantics (``errors.retry.timeout``, ``errors.retry.delay.max.ms``,
``errors.tolerance``, ``errors.log.*``, ``__connect.errors.*`` headers): a
``RetriableException`` is retried with exponential backoff from 300 ms, each delay at most
``errors.retry.delay.max.ms`` (jittered once the doubling passes it), until the retry timeout
runs out (0: never retry, -1: forever); anything else is not retried. A failure is reported to
every reporter, then skipped (tolerance all) or turned into a task failure (tolerance none).

Time is injected (``sleep``/``clock``): nothing here really waits.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import pytest

from connect.api.errors import ConnectException, DataException, RetriableException
from connect.api.records import SourceRecord
from connect.runtime.errors import (
    HEADER_PREFIX,
    TOLERATED,
    ErrorReporter,
    ErrorsConfig,
    LogReporter,
    ProcessingContext,
    RawRecord,
    RetryWithToleranceOperator,
    Stage,
    ToleranceExceeded,
)

LOGGER = "connect.runtime.errors"


class FakeTime:
    """A monotonic clock that only moves when the operator sleeps."""

    def __init__(self, start: float = 5000.0) -> None:
        self.now = start
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> bool:
        assert seconds >= 0
        self.sleeps.append(seconds)
        self.now += seconds
        return False


class Recording(ErrorReporter):
    """An ErrorReporter that keeps what it was given."""

    def __init__(self) -> None:
        self.contexts: list[ProcessingContext] = []
        self.closed = False

    def report(self, ctx: ProcessingContext) -> Future[None]:
        self.contexts.append(ctx)
        f: Future[None] = Future()
        f.set_result(None)
        return f

    def close(self) -> None:
        self.closed = True


class Broken(ErrorReporter):
    def report(self, ctx: ProcessingContext) -> Future[None]:
        raise RuntimeError("reporter is broken")


class Failing:
    """Raises the given exceptions in turn, then returns ``result``."""

    def __init__(self, errors: list[BaseException], result: Any = "ok") -> None:
        self.errors = list(errors)
        self.calls = 0
        self.result = result

    def __call__(self) -> Any:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return self.result


def always(exc_factory: Callable[[], BaseException]) -> Callable[[], Any]:
    calls = {"n": 0}

    def fn() -> Any:
        calls["n"] += 1
        raise exc_factory()

    fn.calls = calls  # type: ignore[attr-defined]
    return fn


def operator(
    time_: FakeTime,
    *,
    retry_timeout_ms: int = 0,
    retry_delay_max_ms: int = 60000,
    tolerate_all: bool = False,
    reporters: list[ErrorReporter] | None = None,
    stop: threading.Event | None = None,
) -> RetryWithToleranceOperator:
    config = ErrorsConfig(
        retry_timeout_ms=retry_timeout_ms, retry_delay_max_ms=retry_delay_max_ms, tolerate_all=tolerate_all
    )
    return RetryWithToleranceOperator(
        config, "my-conn", 3, reporters or [], stop=stop, sleep=time_.sleep, clock=time_.clock
    )


# -- success and retries ------------------------------------------------------------------------


def test_success_returns_the_value_without_sleeping() -> None:
    t = FakeTime()
    op = operator(t, retry_timeout_ms=10000)
    assert op.execute(Stage.TRANSFORMATION, "x.Y", lambda: 42) == 42
    assert t.sleeps == []
    assert (op.counts.failures, op.counts.retries, op.counts.skipped, op.counts.reported) == (0, 0, 0, 0)


def test_retriable_failures_are_retried_until_success() -> None:
    t = FakeTime()
    reporter = Recording()
    op = operator(t, retry_timeout_ms=10000, reporters=[reporter])
    fn = Failing([RetriableException("a"), RetriableException("b")], result="done")
    assert op.execute(Stage.KAFKA_PRODUCE, "x.Y", fn) == "done"
    assert fn.calls == 3
    assert t.sleeps == pytest.approx([0.3, 0.6])
    assert op.counts.retries == 2
    assert op.counts.failures == 0
    assert reporter.contexts == [], "a failure that a retry fixed is not an error"


def test_backoff_starts_at_300ms_and_doubles() -> None:
    t = FakeTime()
    op = operator(t, retry_timeout_ms=600_000)
    fn = Failing([RetriableException() for _ in range(7)])
    assert op.execute(Stage.TASK_POLL, "x.Y", fn) == "ok"
    assert t.sleeps == pytest.approx([0.3, 0.6, 1.2, 2.4, 4.8, 9.6, 19.2])


def test_retries_stop_when_errors_retry_timeout_runs_out() -> None:
    t = FakeTime()
    start = t.now
    op = operator(t, retry_timeout_ms=1000)
    last = RetriableException("still down")
    fn = Failing([RetriableException("down")] * 3 + [last] + [RetriableException("never reached")])
    with pytest.raises(ToleranceExceeded) as info:
        op.execute(Stage.KAFKA_PRODUCE, "x.Y", fn)
    # 300 ms, 600 ms, then only the 100 ms left before the deadline; then no more time.
    assert t.sleeps == pytest.approx([0.3, 0.6, 0.1])
    assert t.now - start == pytest.approx(1.0)
    assert fn.calls == 4
    assert info.value.__cause__ is last
    assert op.counts.retries == 3
    assert op.counts.failures == 1


def test_retry_timeout_zero_means_no_retries() -> None:
    t = FakeTime()
    op = operator(t, retry_timeout_ms=0)
    fn = always(lambda: RetriableException("once"))
    with pytest.raises(ToleranceExceeded):
        op.execute(Stage.TASK_PUT, "x.Y", fn)
    assert fn.calls["n"] == 1  # type: ignore[attr-defined]
    assert t.sleeps == []
    assert op.counts.retries == 0


def test_sleep_never_goes_past_the_deadline() -> None:
    t = FakeTime()
    op = operator(t, retry_timeout_ms=2500)
    start = t.now
    with pytest.raises(ToleranceExceeded):
        op.execute(Stage.TASK_POLL, "x.Y", always(lambda: RetriableException()))
    assert sum(t.sleeps) == pytest.approx(2.5)
    assert t.now - start == pytest.approx(2.5)
    assert all(s > 0 for s in t.sleeps)


def test_backoff_is_capped_by_errors_retry_delay_max_ms() -> None:
    t = FakeTime()
    op = operator(t, retry_timeout_ms=-1, retry_delay_max_ms=1000)
    fn = Failing([RetriableException() for _ in range(30)])
    assert op.execute(Stage.TASK_POLL, "x.Y", fn) == "ok"
    assert t.sleeps[:2] == pytest.approx([0.3, 0.6])
    capped = t.sleeps[2:]
    assert len(capped) == 28
    assert all(0 <= s <= 1.0 for s in capped)
    assert len(set(capped)) > 1, "delays past the cap are jittered"


@pytest.mark.parametrize("attempt", [1, 2, 5, 10, 31, 40, 1000])
def test_backoff_s_never_exceeds_the_maximum(attempt: int) -> None:
    op = operator(FakeTime(), retry_delay_max_ms=5000)
    for _ in range(50):
        assert 0 <= op.backoff_s(attempt) <= 5.0


def test_retry_after_is_honoured_when_longer_than_the_backoff() -> None:
    t = FakeTime()
    op = operator(t, retry_timeout_ms=60_000)
    fn = Failing([RetriableException("rate limited", retry_after=7.5)])
    assert op.execute(Stage.TASK_POLL, "x.Y", fn) == "ok"
    assert t.sleeps == pytest.approx([7.5])


def test_retry_after_shorter_than_the_backoff_does_not_shorten_it() -> None:
    t = FakeTime()
    op = operator(t, retry_timeout_ms=60_000)
    fn = Failing([RetriableException("soon", retry_after=0.01)])
    assert op.execute(Stage.TASK_POLL, "x.Y", fn) == "ok"
    assert t.sleeps == pytest.approx([0.3])


def test_retry_after_beyond_the_deadline_is_cut_to_the_deadline() -> None:
    t = FakeTime()
    op = operator(t, retry_timeout_ms=2000)
    with pytest.raises(ToleranceExceeded):
        op.execute(Stage.TASK_POLL, "x.Y", always(lambda: RetriableException("later", retry_after=30.0)))
    assert t.sleeps == pytest.approx([2.0])


def test_retry_forever_with_minus_one() -> None:
    t = FakeTime()
    op = operator(t, retry_timeout_ms=-1, retry_delay_max_ms=60_000)
    fn = Failing([RetriableException() for _ in range(500)], result="finally")
    assert op.execute(Stage.KAFKA_PRODUCE, "x.Y", fn) == "finally"
    assert fn.calls == 501
    assert op.counts.retries == 500
    assert op.counts.failures == 0
    assert sum(t.sleeps) > 3600, "retried long after any finite timeout would have ended"
    assert max(t.sleeps) <= 60.0


def test_stopping_during_a_backoff_ends_the_retries() -> None:
    t = FakeTime()
    stop = threading.Event()
    calls: list[float] = []

    def sleep(seconds: float) -> bool:
        calls.append(seconds)
        stop.set()
        return True  # woken because the task is stopping

    op = RetryWithToleranceOperator(
        ErrorsConfig(retry_timeout_ms=-1), "c", 0, stop=stop, sleep=sleep, clock=t.clock
    )
    fn = always(lambda: RetriableException("down"))
    with pytest.raises(ToleranceExceeded):
        op.execute(Stage.TASK_POLL, "x.Y", fn)
    assert calls == pytest.approx([0.3])
    assert fn.calls["n"] == 1  # type: ignore[attr-defined]


def test_a_stopped_operator_does_not_retry() -> None:
    t = FakeTime()
    stop = threading.Event()
    stop.set()
    op = operator(t, retry_timeout_ms=-1, stop=stop)
    fn = always(lambda: RetriableException())
    with pytest.raises(ToleranceExceeded):
        op.execute(Stage.TASK_POLL, "x.Y", fn)
    assert fn.calls["n"] == 1  # type: ignore[attr-defined]
    assert t.sleeps == []


def test_default_sleep_is_woken_by_stop() -> None:
    """Without an injected sleep the operator waits on its stop event: stopping ends retry-forever."""
    stop = threading.Event()
    # 1 ms maximum delay: the real waits are tiny until another thread stops the task.
    config = ErrorsConfig(retry_timeout_ms=-1, retry_delay_max_ms=1)
    op = RetryWithToleranceOperator(config, "c", 0, stop=stop)
    fn = always(lambda: RetriableException("down"))
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            op.execute(Stage.TASK_POLL, "x.Y", fn)
        except ToleranceExceeded as exc:
            result["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    threading.Timer(0.05, stop.set).start()
    thread.join(5)
    assert not thread.is_alive()
    assert isinstance(result.get("error"), ToleranceExceeded)
    assert fn.calls["n"] > 1  # type: ignore[attr-defined]


# -- failures: tolerance none / all -------------------------------------------------------------


def test_non_retriable_failures_are_not_retried() -> None:
    t = FakeTime()
    op = operator(t, retry_timeout_ms=60_000)
    fn = always(lambda: DataException("bad data"))
    with pytest.raises(ToleranceExceeded):
        op.execute(Stage.VALUE_CONVERTER, "x.Y", fn)
    assert fn.calls["n"] == 1  # type: ignore[attr-defined]
    assert t.sleeps == []
    assert op.counts.retries == 0


def test_tolerance_none_raises_tolerance_exceeded_chained_to_the_cause() -> None:
    t = FakeTime()
    op = operator(t)
    cause = ValueError("not a number")

    def fn() -> None:
        raise cause

    with pytest.raises(ToleranceExceeded) as info:
        op.execute(Stage.TRANSFORMATION, "x.Y", fn)
    assert isinstance(info.value, ConnectException)
    assert str(info.value) == "Tolerance exceeded in error handler"
    assert info.value.__cause__ is cause
    assert op.counts.failures == 1
    assert op.counts.skipped == 0


def test_tolerance_all_returns_tolerated_and_calls_every_reporter() -> None:
    t = FakeTime()
    first, second = Recording(), Recording()
    op = operator(t, tolerate_all=True, reporters=[first, second])
    consumed = RawRecord("orders", 2, 41, 1700000000000, b"k", b"v")
    error = DataException("cannot convert")

    def fn() -> None:
        raise error

    result = op.execute(Stage.VALUE_CONVERTER, "connect.converters.json.JsonConverter", fn, consumed=consumed)
    assert result is TOLERATED
    assert repr(result) == "TOLERATED"
    for reporter in (first, second):
        assert len(reporter.contexts) == 1
        ctx = reporter.contexts[0]
        assert ctx.connector == "my-conn"
        assert ctx.task == 3
        assert ctx.stage is Stage.VALUE_CONVERTER
        assert ctx.executing_class == "connect.converters.json.JsonConverter"
        assert ctx.error is error
        assert ctx.consumed == consumed
        assert ctx.attempts == 1
    assert (op.counts.failures, op.counts.skipped, op.counts.reported) == (1, 1, 1)
    assert op.counts.last_error_ms > 0


def test_tolerance_all_after_exhausted_retries_reports_the_attempts() -> None:
    t = FakeTime()
    reporter = Recording()
    op = operator(t, retry_timeout_ms=1000, tolerate_all=True, reporters=[reporter])
    fn = always(lambda: RetriableException("down"))
    source = SourceRecord({"p": 1}, {"o": 1}, "topic-a", value="v")
    assert op.execute(Stage.KAFKA_PRODUCE, "x.Y", fn, source_record=source) is TOLERATED
    assert fn.calls["n"] == 4  # type: ignore[attr-defined]
    (ctx,) = reporter.contexts
    assert ctx.attempts == 4
    assert ctx.source_record is source
    assert isinstance(ctx.error, RetriableException)


def test_attempts_count_retriable_failures_before_a_fatal_one() -> None:
    t = FakeTime()
    reporter = Recording()
    op = operator(t, retry_timeout_ms=60_000, tolerate_all=True, reporters=[reporter])
    fn = Failing([RetriableException(), RetriableException(), KeyError("gone")])
    assert op.execute(Stage.TASK_PUT, "x.Y", fn) is TOLERATED
    assert fn.calls == 3
    assert reporter.contexts[0].attempts == 3
    assert isinstance(reporter.contexts[0].error, KeyError)
    assert op.counts.retries == 2


def test_a_broken_reporter_does_not_stop_the_others(caplog: pytest.LogCaptureFixture) -> None:
    t = FakeTime()
    after = Recording()
    op = operator(t, tolerate_all=True, reporters=[Broken(), after])
    with caplog.at_level(logging.ERROR, logger=LOGGER):
        assert op.execute(Stage.TRANSFORMATION, "x.Y", always(lambda: ValueError("x"))) is TOLERATED
    assert len(after.contexts) == 1
    assert any("Broken" in r.getMessage() for r in caplog.records)


def test_tolerated_records_wait_for_asynchronous_reports() -> None:
    """The dead letter queue must have the record before it is skipped."""
    t = FakeTime()
    pending: Future[None] = Future()

    class Slow(ErrorReporter):
        def report(self, ctx: ProcessingContext) -> Future[None]:
            threading.Timer(0.05, pending.set_result, args=(None,)).start()
            return pending

    op = operator(t, tolerate_all=True, reporters=[Slow()])
    assert op.execute(Stage.TASK_PUT, "x.Y", always(lambda: ValueError("x"))) is TOLERATED
    assert pending.done()


def test_counts_accumulate_over_executions() -> None:
    t = FakeTime()
    op = operator(t, tolerate_all=True, reporters=[Recording()])
    for _ in range(3):
        op.execute(Stage.TRANSFORMATION, "x.Y", always(lambda: ValueError("x")))
    op.execute(Stage.TRANSFORMATION, "x.Y", lambda: 1)
    assert (op.counts.failures, op.counts.skipped, op.counts.reported) == (3, 3, 3)


def test_close_closes_every_reporter() -> None:
    reporters = [Recording(), Recording()]
    op = operator(FakeTime(), reporters=list(reporters))
    op.close()
    assert all(r.closed for r in reporters)


# -- LogReporter ----------------------------------------------------------------------------------


def context(**kw: Any) -> ProcessingContext:
    try:
        raise DataException("Converting byte[] to Kafka Connect data failed")
    except DataException as exc:
        error = exc
    base: dict[str, Any] = dict(
        connector="my-conn",
        task=3,
        stage=Stage.VALUE_CONVERTER,
        executing_class="connect.converters.json.JsonConverter",
        error=error,
    )
    base.update(kw)
    return ProcessingContext(**base)


CONSUMED = RawRecord("orders", 2, 41, 1700000000000, b"the-key", b"the-value")


def test_log_reporter_disabled_logs_nothing(caplog: pytest.LogCaptureFixture) -> None:
    reporter = LogReporter("my-conn-3", ErrorsConfig(log_enable=False))
    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        f = reporter.report(context(consumed=CONSUMED))
    assert f.done()
    assert caplog.records == []


def test_log_reporter_without_messages(caplog: pytest.LogCaptureFixture) -> None:
    reporter = LogReporter("my-conn-3", ErrorsConfig(log_enable=True, log_include_messages=False))
    ctx = context(consumed=CONSUMED)
    with caplog.at_level(logging.ERROR, logger=LOGGER):
        assert reporter.report(ctx).done()
    (record,) = caplog.records
    assert record.levelno == logging.ERROR
    assert record.getMessage() == (
        "Error encountered in task my-conn-3. Executing stage 'VALUE_CONVERTER' with class "
        "'connect.converters.json.JsonConverter', where consumed record is "
        "{topic='orders', partition=2, offset=41, timestamp=1700000000000}."
    )
    assert "the-key" not in caplog.text
    assert "the-value" not in caplog.text
    assert record.exc_info is not None and record.exc_info[1] is ctx.error
    assert "Converting byte[] to Kafka Connect data failed" in caplog.text  # the logged traceback


def test_log_reporter_with_messages(caplog: pytest.LogCaptureFixture) -> None:
    reporter = LogReporter("my-conn-3", ErrorsConfig(log_enable=True, log_include_messages=True))
    with caplog.at_level(logging.ERROR, logger=LOGGER):
        reporter.report(context(consumed=CONSUMED))
    (record,) = caplog.records
    message = record.getMessage()
    assert "where consumed record is {topic='orders', partition=2, offset=41" in message
    assert "b'the-key'" in message
    assert "b'the-value'" in message


def test_log_reporter_source_record(caplog: pytest.LogCaptureFixture) -> None:
    source = SourceRecord({"filename": "a"}, {"position": 9}, "lines", value="secret line")
    quiet = LogReporter("src-0", ErrorsConfig(log_enable=True))
    loud = LogReporter("src-0", ErrorsConfig(log_enable=True, log_include_messages=True))
    with caplog.at_level(logging.ERROR, logger=LOGGER):
        quiet.report(context(stage=Stage.KAFKA_PRODUCE, source_record=source))
        loud.report(context(stage=Stage.KAFKA_PRODUCE, source_record=source))
    first, second = (r.getMessage() for r in caplog.records)
    assert first.endswith(
        "Executing stage 'KAFKA_PRODUCE' with class "
        "'connect.converters.json.JsonConverter', where source record is {topic='lines'}."
    )
    assert "secret line" not in first
    assert "secret line" in second
    assert "where source record is {SourceRecord(" in second


def test_log_reporter_without_a_record(caplog: pytest.LogCaptureFixture) -> None:
    reporter = LogReporter("t-1", ErrorsConfig(log_enable=True))
    with caplog.at_level(logging.ERROR, logger=LOGGER):
        reporter.report(context(stage=Stage.TASK_POLL, executing_class="my.Task"))
    assert caplog.records[0].getMessage() == (
        "Error encountered in task t-1. Executing stage 'TASK_POLL' with class 'my.Task'."
    )


def test_operator_with_log_reporter_logs_each_tolerated_failure(caplog: pytest.LogCaptureFixture) -> None:
    config = ErrorsConfig(tolerate_all=True, log_enable=True)
    t = FakeTime()
    op = RetryWithToleranceOperator(
        config, "c", 0, [LogReporter("c-0", config)], sleep=t.sleep, clock=t.clock
    )
    with caplog.at_level(logging.ERROR, logger=LOGGER):
        for _ in range(2):
            assert op.execute(Stage.TRANSFORMATION, "x.Y", always(lambda: ValueError("x"))) is TOLERATED
    assert len(caplog.records) == 2


# -- __connect.errors.* headers -------------------------------------------------------------------


def test_error_headers_with_a_consumed_record() -> None:
    ctx = context(consumed=CONSUMED)
    headers = ctx.error_headers()
    names = [k for k, _ in headers]
    assert names == [
        "__connect.errors.topic",
        "__connect.errors.partition",
        "__connect.errors.offset",
        "__connect.errors.connector.name",
        "__connect.errors.task.id",
        "__connect.errors.stage",
        "__connect.errors.class.name",
        "__connect.errors.exception.class.name",
        "__connect.errors.exception.message",
        "__connect.errors.exception.stacktrace",
    ]
    assert all(k.startswith(HEADER_PREFIX) for k in names)
    values = dict(headers)
    assert all(isinstance(v, bytes) for v in values.values())
    assert values["__connect.errors.topic"] == b"orders"
    assert values["__connect.errors.partition"] == b"2"
    assert values["__connect.errors.offset"] == b"41"
    assert values["__connect.errors.connector.name"] == b"my-conn"
    assert values["__connect.errors.task.id"] == b"3"
    assert values["__connect.errors.stage"] == b"VALUE_CONVERTER"
    assert values["__connect.errors.class.name"] == b"connect.converters.json.JsonConverter"
    assert values["__connect.errors.exception.class.name"] == b"connect.api.errors.DataException"
    assert values["__connect.errors.exception.message"] == b"Converting byte[] to Kafka Connect data failed"
    trace = values["__connect.errors.exception.stacktrace"].decode()
    assert trace.startswith("Traceback")
    assert "DataException: Converting byte[] to Kafka Connect data failed" in trace
    assert "def context" not in trace and "in context" in trace  # where it was raised


def test_error_headers_without_a_consumed_record_have_no_kafka_coordinates() -> None:
    names = [k for k, _ in context().error_headers()]
    assert "__connect.errors.topic" not in names
    assert "__connect.errors.partition" not in names
    assert "__connect.errors.offset" not in names
    assert names[0] == "__connect.errors.connector.name"


def test_error_headers_are_utf8() -> None:
    ctx = context(error=ValueError("valeur invalide: é€"))
    values = dict(ctx.error_headers())
    assert values["__connect.errors.exception.message"] == "valeur invalide: é€".encode()
    assert values["__connect.errors.exception.class.name"] == b"builtins.ValueError"
