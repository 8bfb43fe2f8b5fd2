"""Kafka Connect's error handling: retries with backoff, tolerance, and error reporters.

Every per-record operation that can fail on bad data (converting, transforming,
producing) runs through ``RetryWithToleranceOperator.execute``:

- ``RetriableException`` is retried with exponential, jittered backoff (from 300 ms,
  doubling, capped by ``errors.retry.delay.max.ms``) until ``errors.retry.timeout``
  runs out (0: no retries, -1: forever);
- any other failure, or a retriable one out of time, is reported to every reporter
  (``errors.log.enable`` logging; the dead letter queue of sinks) and then either
  tolerated (``errors.tolerance=all``: the record is skipped) or turned into
  ``ToleranceExceeded``, which fails the task.

Nothing is dropped silently: a skipped record is always reported.
"""

from __future__ import annotations

import enum
import logging
import random
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

from connect.api.errors import ConnectException, RetriableException

log = logging.getLogger(__name__)

T = TypeVar("T")

RETRY_DELAY_MIN_MS: Final = 300
HEADER_PREFIX: Final = "__connect.errors."


class Stage(enum.Enum):
    KEY_CONVERTER = "KEY_CONVERTER"
    VALUE_CONVERTER = "VALUE_CONVERTER"
    HEADER_CONVERTER = "HEADER_CONVERTER"
    TRANSFORMATION = "TRANSFORMATION"
    TASK_PUT = "TASK_PUT"
    TASK_POLL = "TASK_POLL"
    KAFKA_PRODUCE = "KAFKA_PRODUCE"
    KAFKA_CONSUME = "KAFKA_CONSUME"


class ToleranceExceeded(ConnectException):
    def __init__(self, cause: BaseException) -> None:
        super().__init__("Tolerance exceeded in error handler")
        self.__cause__ = cause


class _Tolerated:
    def __repr__(self) -> str:
        return "TOLERATED"


TOLERATED: Final = _Tolerated()
"""What ``execute`` returns for a failure that ``errors.tolerance=all`` skips."""


@dataclass(frozen=True, slots=True)
class ErrorsConfig:
    retry_timeout_ms: int = 0
    retry_delay_max_ms: int = 60000
    tolerate_all: bool = False
    log_enable: bool = False
    log_include_messages: bool = False


@dataclass(frozen=True, slots=True)
class RawRecord:
    """A Kafka record as consumed, before conversion: what the dead letter queue receives."""

    topic: str
    partition: int
    offset: int
    timestamp: int | None
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()

    def describe(self, include_messages: bool) -> str:
        base = (
            f"{{topic='{self.topic}', partition={self.partition}, offset={self.offset}, "
            f"timestamp={self.timestamp}"
        )
        if include_messages:
            base += f", key={self.key!r}, value={self.value!r}"
        return base + "}"


@dataclass(slots=True)
class ProcessingContext:
    connector: str
    task: int
    stage: Stage
    executing_class: str
    error: BaseException
    consumed: RawRecord | None = None  # sinks: the original Kafka record
    source_record: Any = None  # sources: the SourceRecord being processed
    attempts: int = 1

    def error_headers(self) -> list[tuple[str, bytes]]:
        """Kafka's ``__connect.errors.*`` context headers, as UTF-8 strings."""
        pairs: list[tuple[str, str]] = []
        if self.consumed is not None:
            pairs += [
                ("topic", self.consumed.topic),
                ("partition", str(self.consumed.partition)),
                ("offset", str(self.consumed.offset)),
            ]
        pairs += [
            ("connector.name", self.connector),
            ("task.id", str(self.task)),
            ("stage", self.stage.value),
            ("class.name", self.executing_class),
            ("exception.class.name", _qualified(type(self.error))),
            ("exception.message", str(self.error)),
            ("exception.stacktrace", "".join(traceback.format_exception(self.error))),
        ]
        return [(HEADER_PREFIX + k, v.encode()) for k, v in pairs]


def _qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


class ErrorReporter:
    """Receives every failure the operator sees; ``report`` may complete asynchronously."""

    def report(self, ctx: ProcessingContext) -> Future[None]:
        raise NotImplementedError

    def close(self) -> None:
        pass


def _done() -> Future[None]:
    f: Future[None] = Future()
    f.set_result(None)
    return f


class LogReporter(ErrorReporter):
    def __init__(self, task_label: str, config: ErrorsConfig) -> None:
        self.task_label = task_label
        self.config = config
        self.logged = 0  # Kafka's total-errors-logged

    def report(self, ctx: ProcessingContext) -> Future[None]:
        if not self.config.log_enable:
            return _done()
        self.logged += 1
        where = ""
        if ctx.consumed is not None:
            where = f", where consumed record is {ctx.consumed.describe(self.config.log_include_messages)}"
        elif ctx.source_record is not None:
            shown = (
                ctx.source_record
                if self.config.log_include_messages
                else f"topic='{ctx.source_record.topic}'"
            )
            where = f", where source record is {{{shown}}}"
        log.error(
            "Error encountered in task %s. Executing stage '%s' with class '%s'%s.",
            self.task_label,
            ctx.stage.value,
            ctx.executing_class,
            where,
            exc_info=ctx.error,
        )
        return _done()


@dataclass
class ErrorCounts:
    """What the operator has seen (exposed as task metrics)."""

    failures: int = 0
    retries: int = 0
    skipped: int = 0
    reported: int = 0
    last_error_ms: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


class RetryWithToleranceOperator:
    def __init__(
        self,
        config: ErrorsConfig,
        connector: str,
        task: int,
        reporters: Sequence[ErrorReporter] = (),
        stop: threading.Event | None = None,
        sleep: Callable[[float], bool] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.connector = connector
        self.task = task
        self.reporters = list(reporters)
        self._stop = stop or threading.Event()
        self._sleep = sleep or self._stop.wait  # returns True when stopping
        self._clock = clock
        self.counts = ErrorCounts()

    def execute(
        self,
        stage: Stage,
        executing_class: str,
        fn: Callable[[], T],
        *,
        consumed: RawRecord | None = None,
        source_record: Any = None,
        first_error: Exception | None = None,
    ) -> T | _Tolerated:
        """Run ``fn``; retry, report and tolerate its failures as configured.

        ``first_error`` is the failure of an attempt the caller already made (its fast
        path): it counts as attempt one, so a non-retriable step never runs twice.
        """
        deadline = (
            self._clock() + self.config.retry_timeout_ms / 1000
            if self.config.retry_timeout_ms >= 0
            else float("inf")
        )
        attempt = 0
        error = first_error
        while True:
            if error is None:
                try:
                    return fn()
                except Exception as exc:
                    error = exc
            attempt += 1
            if isinstance(error, RetriableException) and not self._stop.is_set():
                remaining = deadline - self._clock()
                if remaining > 0:
                    with self.counts.lock:
                        self.counts.retries += 1
                    if not self._sleep(min(self.backoff_s(attempt, error.retry_after), remaining)):
                        error = None
                        continue
            return self._fail(stage, executing_class, error, consumed, source_record, attempt)

    def backoff_s(self, attempt: int, retry_after: float | None = None) -> float:
        delay_ms: float = RETRY_DELAY_MIN_MS * (1 << min(attempt - 1, 30))
        if delay_ms > self.config.retry_delay_max_ms:
            delay_ms = random.uniform(0, self.config.retry_delay_max_ms)
        delay = delay_ms / 1000
        return max(delay, retry_after or 0.0)

    def _fail(
        self,
        stage: Stage,
        executing_class: str,
        exc: Exception,
        consumed: RawRecord | None,
        source_record: Any,
        attempts: int,
    ) -> _Tolerated:
        ctx = ProcessingContext(
            self.connector, self.task, stage, executing_class, exc, consumed, source_record, attempts
        )
        with self.counts.lock:
            self.counts.failures += 1
            self.counts.last_error_ms = int(time.time() * 1000)
        futures = self.report(ctx)
        if not self.config.tolerate_all:
            raise ToleranceExceeded(exc)
        for f in futures:
            f.result()  # the dead letter queue must have it before the record is skipped
        with self.counts.lock:
            self.counts.skipped += 1
        return TOLERATED

    def report(self, ctx: ProcessingContext) -> list[Future[None]]:
        futures = []
        for reporter in self.reporters:
            try:
                futures.append(reporter.report(ctx))
            except Exception:
                log.exception("error reporter %s failed", type(reporter).__name__)
        with self.counts.lock:
            self.counts.reported += 1
        return futures

    def close(self) -> None:
        for r in self.reporters:
            r.close()
