"""Tests of connect.runtime.transformation_chain with the real RetryWithToleranceOperator, and of the
RegexRouter transformation and the three predicates (Kafka's semantics: ``Matcher.matches``, i.e. the
whole topic name, and ``$n`` group references in the replacement)."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

import pytest

from connect.api import Headers, SinkRecord, SourceRecord, Transformation
from connect.api.config import ConfigValidationError
from connect.api.errors import RetriableException
from connect.api.records import ConnectRecord
from connect.runtime.errors import (
    ErrorReporter,
    ErrorsConfig,
    ProcessingContext,
    RetryWithToleranceOperator,
    Stage,
    ToleranceExceeded,
)
from connect.runtime.plugins import Plugins
from connect.runtime.transformation_chain import TransformationChain, TransformationStage
from transforms.predicates import HasHeaderKey, RecordIsTombstone, TopicNameMatches
from transforms.regex_router import RegexRouter


class FakeTime:
    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> bool:
        self.sleeps.append(seconds)
        self.now += seconds
        return False


class Recording(ErrorReporter):
    def __init__(self) -> None:
        self.contexts: list[ProcessingContext] = []

    def report(self, ctx: ProcessingContext) -> Future[None]:
        self.contexts.append(ctx)
        f: Future[None] = Future()
        f.set_result(None)
        return f


def make_operator(
    *, tolerate_all: bool = False, retry_timeout_ms: int = 0, reporters: list[ErrorReporter] | None = None
) -> tuple[RetryWithToleranceOperator, FakeTime]:
    t = FakeTime()
    op = RetryWithToleranceOperator(
        ErrorsConfig(retry_timeout_ms=retry_timeout_ms, tolerate_all=tolerate_all),
        "conn",
        0,
        reporters or [],
        sleep=t.sleep,
        clock=t.clock,
    )
    return op, t


def no_context() -> dict[str, Any]:
    return {}


# -- test transformations (plugins written here, as a connector author would) ------------------------


class Append(Transformation[ConnectRecord]):
    def __init__(self, suffix: str) -> None:
        self.suffix = suffix
        self.calls = 0
        self.closed = 0

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        self.calls += 1
        return record.new_record(value=f"{record.value}{self.suffix}")

    def close(self) -> None:
        self.closed += 1


class Drop(Transformation[ConnectRecord]):
    def __init__(self) -> None:
        self.calls = 0

    def apply(self, record: ConnectRecord) -> None:
        self.calls += 1
        return None


class Fails(Transformation[ConnectRecord]):
    """Raises ``errors`` in turn (forever the last one when ``forever``), then appends "!"."""

    def __init__(self, *errors: Exception, forever: bool = False) -> None:
        self.errors = list(errors)
        self.forever = forever
        self.calls = 0

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        self.calls += 1
        if self.errors:
            error = self.errors[0] if self.forever else self.errors.pop(0)
            raise error
        return record.new_record(value=f"{record.value}!")


def source(topic: str = "orders", value: Any = "v", **kw: Any) -> SourceRecord:
    return SourceRecord({"file": "f"}, {"position": 1}, topic, value=value, **kw)


def topic_matches(pattern: str) -> TopicNameMatches:
    p = TopicNameMatches()
    p.configure({"pattern": pattern})
    return p


def router(regex: str, replacement: str) -> RegexRouter:
    r = RegexRouter()
    r.configure({"regex": regex, "replacement": replacement})
    return r


# -- the chain ---------------------------------------------------------------------------------------


def test_an_empty_chain_passes_records_through() -> None:
    chain: TransformationChain[SourceRecord] = TransformationChain()
    op, _ = make_operator()
    record = source()
    assert not chain
    assert chain.apply(record, op, no_context) == (record, False)


def test_stages_run_in_order() -> None:
    a, b, c = Append("-a"), Append("-b"), Append("-c")
    chain = TransformationChain(
        [TransformationStage("a", a), TransformationStage("b", b), TransformationStage("c", c)]
    )
    op, _ = make_operator()
    record = source(value="x")
    out, skipped = chain.apply(record, op, no_context)
    assert chain
    assert out is not None
    assert out.value == "x-a-b-c"
    assert not skipped
    assert record.value == "x", "the input record is not changed"
    assert (a.calls, b.calls, c.calls) == (1, 1, 1)


def test_a_predicate_gates_its_stage() -> None:
    chain = TransformationChain(
        [
            TransformationStage("only-orders", Append("-o"), topic_matches("orders")),
            TransformationStage("all", Append("-all")),
        ]
    )
    op, _ = make_operator()
    out, _ = chain.apply(source("orders", "x"), op, no_context)
    assert out is not None and out.value == "x-o-all"
    out, _ = chain.apply(source("payments", "x"), op, no_context)
    assert out is not None and out.value == "x-all"


def test_negate_inverts_the_predicate() -> None:
    chain = TransformationChain(
        [TransformationStage("not-orders", Append("-n"), topic_matches("orders"), negate=True)]
    )
    op, _ = make_operator()
    out, _ = chain.apply(source("orders", "x"), op, no_context)
    assert out is not None and out.value == "x"
    out, _ = chain.apply(source("payments", "x"), op, no_context)
    assert out is not None and out.value == "x-n"


def test_negate_without_predicate_applies_the_stage() -> None:
    chain = TransformationChain([TransformationStage("a", Append("-a"), None, negate=True)])
    op, _ = make_operator()
    out, _ = chain.apply(source(value="x"), op, no_context)
    assert out is not None and out.value == "x-a"


def test_a_stage_returning_none_drops_the_record() -> None:
    drop, after = Drop(), Append("-after")
    chain = TransformationChain([TransformationStage("drop", drop), TransformationStage("after", after)])
    op, _ = make_operator()
    assert chain.apply(source(), op, no_context) == (None, False)
    assert drop.calls == 1
    assert after.calls == 0
    assert op.counts.failures == 0 and op.counts.skipped == 0


def test_filter_with_predicate_drops_only_matching_records() -> None:
    chain = TransformationChain([TransformationStage("filter", Drop(), RecordIsTombstone())])
    op, _ = make_operator()
    assert chain.apply(source(value=None), op, no_context) == (None, False)
    record = source(value="kept")
    assert chain.apply(record, op, no_context) == (record, False)


def test_a_failing_stage_with_tolerance_all_is_skipped_and_counted() -> None:
    reporter = Recording()
    op, _ = make_operator(tolerate_all=True, reporters=[reporter])
    failing, after = Fails(ValueError("bad"), forever=True), Append("-after")
    chain = TransformationChain(
        [
            TransformationStage("a", Append("-a")),
            TransformationStage("f", failing),
            TransformationStage("z", after),
        ]
    )
    record = source(value="x")
    out, skipped = chain.apply(record, op, lambda: {"source_record": record})
    assert (out, skipped) == (None, True)
    assert after.calls == 0
    assert (op.counts.failures, op.counts.skipped, op.counts.reported) == (1, 1, 1)
    (ctx,) = reporter.contexts
    assert ctx.stage is Stage.TRANSFORMATION
    assert ctx.executing_class == f"{Fails.__module__}.Fails"
    assert isinstance(ctx.error, ValueError)
    assert ctx.source_record is record
    # The next record goes through the chain again.
    failing.errors.clear()
    out, skipped = chain.apply(source(value="y"), op, no_context)
    assert out is not None and out.value == "y-a!-after"
    assert not skipped


def test_a_failing_stage_with_tolerance_none_fails() -> None:
    op, _ = make_operator(tolerate_all=False)
    chain = TransformationChain([TransformationStage("f", Fails(KeyError("field"), forever=True))])
    with pytest.raises(ToleranceExceeded) as info:
        chain.apply(source(), op, no_context)
    assert isinstance(info.value.__cause__, KeyError)


def test_a_failing_stage_runs_once_when_errors_are_not_retriable() -> None:
    """errors.retry.timeout=0 and a non-retriable error: Kafka runs the stage once, no retry."""
    op, _ = make_operator(tolerate_all=True)
    failing = Fails(ValueError("bad"), forever=True)
    chain = TransformationChain([TransformationStage("f", failing)])
    assert chain.apply(source(), op, no_context) == (None, True)
    assert failing.calls == 1


def test_a_transient_non_retriable_failure_is_not_silently_ignored() -> None:
    """A stage that raised must be reported and, with tolerance none, fail the task (no hidden retry)."""
    reporter = Recording()
    op, _ = make_operator(tolerate_all=False, reporters=[reporter])
    chain = TransformationChain([TransformationStage("f", Fails(ValueError("only once")))])
    with pytest.raises(ToleranceExceeded):
        chain.apply(source(), op, no_context)
    assert len(reporter.contexts) == 1


def test_a_retriable_stage_failure_is_retried_by_the_operator() -> None:
    op, t = make_operator(retry_timeout_ms=10_000)
    flaky = Fails(RetriableException("later"), RetriableException("later"))
    chain = TransformationChain([TransformationStage("f", flaky)])
    out, skipped = chain.apply(source(value="x"), op, no_context)
    assert out is not None and out.value == "x!"
    assert not skipped
    assert op.counts.retries >= 1
    assert op.counts.failures == 0
    assert t.sleeps and all(s > 0 for s in t.sleeps)


def test_a_predicate_that_fails_is_handled_by_the_operator() -> None:
    class Broken(TopicNameMatches):
        def test(self, record: ConnectRecord) -> bool:
            raise RuntimeError("predicate broke")

    op, _ = make_operator(tolerate_all=True)
    chain = TransformationChain([TransformationStage("a", Append("-a"), Broken())])
    assert chain.apply(source(), op, no_context) == (None, True)
    assert op.counts.skipped == 1


def test_close_closes_each_transformation_and_predicate_once() -> None:
    closed: list[str] = []

    class P(RecordIsTombstone):
        def close(self) -> None:
            closed.append("p")

    shared = P()
    a, b = Append("a"), Append("b")
    chain = TransformationChain(
        [
            TransformationStage("a", a, shared),
            TransformationStage("b", b, shared),
            TransformationStage("c", a),
        ]
    )
    chain.close()
    assert (a.closed, b.closed) == (1, 1)
    assert closed == ["p"]


def test_a_chain_built_from_plugins_with_kafka_class_names() -> None:
    plugins = Plugins()
    route = plugins.new_transformation(
        "org.apache.kafka.connect.transforms.RegexRouter", {"regex": "(.*)-raw", "replacement": "$1-clean"}
    )
    is_raw = plugins.new_predicate(
        "org.apache.kafka.connect.transforms.predicates.TopicNameMatches", {"pattern": ".*-raw"}
    )
    chain = TransformationChain([TransformationStage("route", route, is_raw)])
    op, _ = make_operator()
    out, _ = chain.apply(source("orders-raw"), op, no_context)
    assert out is not None and out.topic == "orders-clean"
    out, _ = chain.apply(source("orders"), op, no_context)
    assert out is not None and out.topic == "orders"


# -- RegexRouter ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("regex", "replacement", "topic", "expected"),
    [
        ("(.*)-raw", "$1-clean", "orders-raw", "orders-clean"),
        ("(.*)", "$1-copy", "orders", "orders-copy"),
        ("(.*)", "prefix.$0", "orders", "prefix.orders"),
        ("([a-z]+)\\.([a-z]+)", "$2.$1", "db.orders", "orders.db"),
        ("(\\w+)-(\\w+)-(\\w+)", "$3-$1", "a-b-c", "c-a"),
        ("orders", "all-orders", "orders", "all-orders"),
        ("cdc\\.(.*)\\.(.*)", "$1_$2", "cdc.inventory.customers", "inventory_customers"),
        ("(.*)", "$1$1", "ab", "abab"),
        ("(a)?b", "x$1y", "b", "xy"),  # a group that did not take part is empty
    ],
)
def test_regex_router_replacements(regex: str, replacement: str, topic: str, expected: str) -> None:
    out = router(regex, replacement).apply(source(topic))
    assert out.topic == expected


@pytest.mark.parametrize(
    ("regex", "topic"),
    [
        ("orders", "orders-eu"),  # a find() would match; Java's matches() does not
        ("orders", "my-orders"),
        ("raw", "raw-data"),
        ("(.*)-raw", "orders-raw-2"),
        ("a.c", "abcd"),
    ],
)
def test_regex_router_needs_the_whole_topic_to_match(regex: str, topic: str) -> None:
    record = source(topic)
    out = router(regex, "changed").apply(record)
    assert out.topic == topic


def test_regex_router_keeps_every_other_field() -> None:
    headers = Headers().add("h", "1")
    record = SourceRecord(
        {"file": "f"},
        {"position": 9},
        "orders-raw",
        kafka_partition=3,
        key="k",
        value={"a": 1},
        timestamp=1700000000000,
        headers=headers,
    )
    out = router("(.*)-raw", "$1").apply(record)
    assert out.topic == "orders"
    assert (out.kafka_partition, out.key, out.value, out.timestamp) == (3, "k", {"a": 1}, 1700000000000)
    assert out.source_partition == {"file": "f"}
    assert out.source_offset == {"position": 9}
    assert out.headers == headers
    assert record.topic == "orders-raw"


def test_regex_router_on_sink_records_keeps_the_original_topic() -> None:
    record = SinkRecord("orders-raw", 2, None, "k", None, "v", 5, kafka_offset=77)
    out = router("(.*)-raw", "$1").apply(record)
    assert isinstance(out, SinkRecord)
    assert out.topic == "orders"
    assert out.original_topic == "orders-raw"
    assert out.original_kafka_partition == 2
    assert out.original_kafka_offset == 77
    assert out.kafka_offset == 77


@pytest.mark.parametrize(
    "config",
    [{"replacement": "x"}, {"regex": "x"}, {"regex": "(", "replacement": "x"}],
)
def test_regex_router_config_errors(config: dict[str, str]) -> None:
    with pytest.raises(ConfigValidationError):
        RegexRouter().configure(config)


# -- predicates -------------------------------------------------------------------------------------------


def test_topic_name_matches_whole_names() -> None:
    p = topic_matches("orders.*")
    assert p.test(source("orders"))
    assert p.test(source("orders-eu"))
    assert not p.test(source("my-orders"))
    exact = topic_matches("orders")
    assert exact.test(source("orders"))
    assert not exact.test(source("orders-eu"))
    dotted = topic_matches("a.b")
    assert dotted.test(source("a.b"))
    assert dotted.test(source("axb"))  # a regular expression, as in Kafka


@pytest.mark.parametrize("config", [{}, {"pattern": ""}, {"pattern": "("}])
def test_topic_name_matches_config_errors(config: dict[str, str]) -> None:
    with pytest.raises(ConfigValidationError):
        TopicNameMatches().configure(config)


def test_has_header_key() -> None:
    p = HasHeaderKey()
    p.configure({"name": "trace-id"})
    assert p.test(source(headers=Headers().add("trace-id", "abc")))
    assert p.test(source(headers=Headers().add("other", 1).add("trace-id", None)))
    assert not p.test(source(headers=Headers().add("other", 1)))
    record = source()
    assert not p.test(record)
    assert not record.has_headers
    with pytest.raises(ConfigValidationError):
        HasHeaderKey().configure({})
    with pytest.raises(ConfigValidationError):
        HasHeaderKey().configure({"name": ""})


def test_record_is_tombstone() -> None:
    p = RecordIsTombstone()
    p.configure({})
    assert p.test(source(value=None))
    assert p.test(SinkRecord("t", 0, None, "key", None, None, kafka_offset=1))
    assert not p.test(source(value=""))
    assert not p.test(source(value=0))
    assert not p.test(source(value=b""))


@pytest.mark.parametrize(
    ("regex", "replacement", "topic", "expected"),
    [
        ("(a)", "$10", "a", "a0"),  # group 10 does not exist: Java reads $1 then "0"
        ("(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)", "$10", "abcdefghij", "j"),  # it does here
        ("a|ab", "X", "ab", "Xb"),  # matches() is true, then replaceFirst replaces the first find(): "a"
        ("(.*)", "\\$1-\\\\", "t", "$1-\\"),  # backslashes escape in Java replacements
        ("(?<name>.*)-raw", "${name}-clean", "orders-raw", "orders-clean"),  # Java's named group
    ],
)
def test_regex_router_java_replacement_syntax(
    regex: str, replacement: str, topic: str, expected: str
) -> None:
    assert router(regex, replacement).apply(source(topic)).topic == expected


@pytest.mark.parametrize(
    ("replacement", "problem"),
    [
        ("$2", "No group 2"),
        ("$", "Illegal group reference: group index is missing"),
        ("x\\", "character to be escaped is missing"),
        ("${nope}", "No group with name {nope}"),
        ("$x", "Illegal group reference"),
    ],
)
def test_regex_router_bad_replacements_are_config_errors_on_the_replacement_key(
    replacement: str, problem: str
) -> None:
    from connect.api.config import ConfigValidationError
    from transforms.regex_router import RegexRouterConfig

    issues = RegexRouterConfig.issues({"regex": "(a)", "replacement": replacement}, prefix="transforms.r.")
    assert [(i.key, i.message) for i in issues] == [
        (
            "transforms.r.replacement",
            f"Invalid value {replacement} for configuration transforms.r.replacement: {problem}",
        )
    ]
    with pytest.raises(ConfigValidationError):
        router("(a)", replacement)


def _shout(record: SourceRecord) -> SourceRecord:
    return record.new_record(value=f"{record.value}!")


def test_error_reports_name_a_function_stage_by_module_and_function() -> None:
    from connect.api.transforms import FunctionTransformation

    stage = TransformationStage("shout", FunctionTransformation(_shout))
    assert stage.class_name == f"{__name__}:_shout"
    assert TransformationStage("route", router("a", "b")).class_name == "transforms.regex_router.RegexRouter"
