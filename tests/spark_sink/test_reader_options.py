"""The "sluiceway" source's options and offset arithmetic, as pure functions (no Spark, no broker)."""

from __future__ import annotations

import itertools
import pickle

import pytest

from spark_sink.reader.options import (
    EARLIEST,
    LATEST,
    Assign,
    EarliestOffsets,
    GlobalTimestamp,
    LatestOffsets,
    OffsetRange,
    OptionError,
    SpecificOffsets,
    SpecificTimestamps,
    Subscribe,
    SubscribePattern,
    librdkafka_params,
    offsets_from_json,
    offsets_to_json,
    parse_duration_ms,
    parse_options,
    parse_partition_offsets,
    rate_limit,
    selected_topics,
    split_ranges,
)

BASE = {"kafka.bootstrap.servers": "h:9092", "subscribe": "t"}


def opts(**extra: str) -> dict[str, str]:
    return {**BASE, **{k.replace("__", "."): v for k, v in extra.items()}}


def error_of(options: dict[str, str], mode: str | None = "batch") -> str:
    with pytest.raises(OptionError) as exc:
        parse_options(options, mode)  # type: ignore[arg-type]
    return str(exc.value)


# -- defaults and names ------------------------------------------------------------------


def test_defaults_follow_sparks_kafka_source() -> None:
    batch = parse_options(BASE, "batch")
    assert batch.starting == EarliestOffsets() and batch.ending == LatestOffsets()
    assert batch.fail_on_data_loss and not batch.include_headers
    assert batch.kafka == {"bootstrap.servers": "h:9092"}
    assert batch.strategy == Subscribe(("t",))
    assert batch.group_id_prefix == "spark-kafka-relation"
    stream = parse_options(BASE, "stream")
    assert stream.starting == LatestOffsets()
    assert stream.max_offsets_per_trigger is None
    assert stream.poll_timeout_ms == 120_000 and stream.max_trigger_delay_ms == 15 * 60 * 1000
    assert stream.group_id_prefix == "spark-kafka-source"


def test_option_names_are_case_insensitive_as_in_spark() -> None:
    parsed = parse_options(
        {"KAFKA.BOOTSTRAP.SERVERS": "h:1", "SubScribe": "a, b,,a", "STARTINGOFFSETS": "LATEST"}, "stream"
    )
    assert parsed.kafka["bootstrap.servers"] == "h:1"
    assert parsed.strategy == Subscribe(("a", "b"))
    assert parsed.starting == LatestOffsets()


def test_plain_bootstrap_servers_is_accepted_and_must_agree() -> None:
    parsed = parse_options({"bootstrap.servers": "x:1", "subscribe": "t"}, "batch")
    assert parsed.kafka == {"bootstrap.servers": "x:1"}
    both = {"bootstrap.servers": "x:1", "kafka.bootstrap.servers": "x:1", "subscribe": "t"}
    assert parse_options(both, "batch").kafka["bootstrap.servers"] == "x:1"
    msg = error_of({**both, "bootstrap.servers": "y:2"})
    assert "kafka.bootstrap.servers" in msg and "bootstrap.servers" in msg
    assert "kafka.bootstrap.servers' must be specified" in error_of({"subscribe": "t"})


def test_unknown_options_are_refused_by_name() -> None:
    msg = error_of(opts(startingOffset="earliest"))
    assert "'startingoffset'" in msg and "startingOffsets" in msg


def test_kafka_options_pass_through_without_prefix() -> None:
    parsed = parse_options(opts(kafka__security__protocol="SASL_SSL", kafka__fetch__min__bytes="10"), "batch")
    assert parsed.kafka == {
        "bootstrap.servers": "h:9092",
        "security.protocol": "SASL_SSL",
        "fetch.min.bytes": "10",
    }


@pytest.mark.parametrize(
    "key",
    [
        "auto.offset.reset",
        "key.deserializer",
        "value.deserializer",
        "enable.auto.commit",
        "interceptor.classes",
    ],
)
def test_kafka_settings_the_source_owns_are_refused(key: str) -> None:
    assert f"kafka.{key}" in error_of({**BASE, f"kafka.{key}": "x"})


def test_jaas_credentials_become_librdkafka_settings() -> None:
    jaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p\\"w";'
    assert librdkafka_params({"sasl.jaas.config": jaas, "sasl.mechanism": "PLAIN"}) == {
        "sasl.mechanism": "PLAIN",
        "sasl.username": "u",
        "sasl.password": 'p"w',
    }
    kerberos = "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true;"
    with pytest.raises(OptionError, match=r"kafka\.sasl\.jaas\.config"):
        librdkafka_params({"sasl.jaas.config": kerberos})


def test_isolation_level_is_checked() -> None:
    assert (
        parse_options(opts(kafka__isolation__level="read_committed"), "batch").isolation_level
        == "read_committed"
    )
    assert "kafka.isolation.level" in error_of(opts(kafka__isolation__level="dirty"))


# -- which partitions --------------------------------------------------------------------


def test_exactly_one_strategy() -> None:
    assert "must be specified" in error_of({"kafka.bootstrap.servers": "h:1"})
    msg = error_of(opts(subscribePattern="t.*"))
    assert "Only one of" in msg and "subscribe" in msg and "subscribePattern" in msg
    assert "'subscribe'" in error_of(opts(subscribe=" , "))
    assert "'subscribePattern'" in error_of({"kafka.bootstrap.servers": "h:1", "subscribePattern": "  "})


def test_subscribe_pattern_is_a_java_regex_matching_whole_names() -> None:
    parsed = parse_options(
        {"kafka.bootstrap.servers": "h:1", "subscribePattern": r"\Qorders.\E(?<region>eu|us)"}, None
    )
    assert isinstance(parsed.strategy, SubscribePattern)
    existing = ["orders.eu", "orders.us", "orders.eu.dlq", "ordersXeu", "__consumer_offsets"]
    assert selected_topics(parsed.strategy, existing) == ["orders.eu", "orders.us"]
    everything = parse_options({"kafka.bootstrap.servers": "h:1", "subscribePattern": ".*"}, None).strategy
    assert selected_topics(everything, existing) == sorted(
        existing[:-1]
    )  # Kafka's internal topics are left out
    assert pickle.loads(pickle.dumps(parsed)) == parsed  # shipped to Spark's Python workers


def test_invalid_pattern_names_the_option() -> None:
    assert "subscribePattern" in error_of({"kafka.bootstrap.servers": "h:1", "subscribePattern": "a(b"})


def test_assign_json() -> None:
    parsed = parse_options({"kafka.bootstrap.servers": "h:1", "assign": '{"a":[0,2],"b":[1]}'}, "batch")
    assert parsed.strategy == Assign((("a", 0), ("a", 2), ("b", 1)))
    assert selected_topics(parsed.strategy, ["a", "b", "c"]) == ["a", "b"]
    for bad in ("a,b", '{"a":[-1]}', '{"a":"0"}', "{}", "{nope"):
        assert "'assign'" in error_of({"kafka.bootstrap.servers": "h:1", "assign": bad})


# -- where reading starts and ends -------------------------------------------------------


def test_partition_offsets_json() -> None:
    value = '{"topicA":{"0":23,"1":-2},"topicB":{"0":-1}}'
    assert parse_partition_offsets("startingOffsets", value) == {
        ("topicA", 0): 23,
        ("topicA", 1): EARLIEST,
        ("topicB", 0): LATEST,
    }
    for bad in (
        "[1]",
        '{"t":{"x":1}}',
        '{"t":{"0":"1"}}',
        '{"t":{"0":1.5}}',
        '{"t":{"0":true}}',
        '{"t":{}}',
        "{",
    ):
        with pytest.raises(OptionError, match="startingOffsets"):
            parse_partition_offsets("startingOffsets", bad)
    with pytest.raises(OptionError, match="-3"):
        parse_partition_offsets("startingOffsets", '{"t":{"0":-3}}')


def test_earliest_latest_words_and_json() -> None:
    parsed = parse_options(opts(startingOffsets=" Earliest ", endingOffsets='{"t":{"0":5}}'), "batch")
    assert parsed.starting == EarliestOffsets()
    assert parsed.ending == SpecificOffsets({("t", 0): 5})
    assert parse_options(opts(startingOffsets="earliest"), "stream").starting == EarliestOffsets()


def test_batch_refuses_latest_start_and_earliest_end() -> None:
    assert "startingOffsets" in error_of(opts(startingOffsets="latest"))
    assert "t-0 can't be latest" in error_of(opts(startingOffsets='{"t":{"0":-1}}'))
    assert "endingOffsets" in error_of(opts(endingOffsets="earliest"))
    assert "t-1 can't be earliest" in error_of(opts(endingOffsets='{"t":{"1":-2}}'))
    # Fine for a stream's start:
    assert parse_options(opts(startingOffsets='{"t":{"0":-1}}'), "stream").starting == SpecificOffsets(
        {("t", 0): LATEST}
    )


def test_streams_refuse_ending_options() -> None:
    for key, value in (("endingOffsets", "latest"), ("endingOffsetsByTimestamp", '{"t":{"0":1}}')):
        msg = error_of({**BASE, key: value}, "stream")
        assert key in msg and "not valid in streaming queries" in msg
    assert "endingTimestamp" in error_of({**BASE, "endingTimestamp": "5"}, "stream")
    # schema() does not know yet which kind of query it is:
    assert parse_options({**BASE, "endingOffsets": "latest"}, None).ending == LatestOffsets()


def test_start_and_end_json_must_pair_up() -> None:
    msg = error_of(opts(startingOffsets='{"t":{"0":1}}', endingOffsets='{"t":{"1":5}}'))
    assert "startingOffsets" in msg and "endingOffsets" in msg and "t-0" in msg
    msg = error_of(opts(startingOffsets='{"t":{"0":9}}', endingOffsets='{"t":{"0":5}}'))
    assert "(9)" in msg and "(5)" in msg
    # Markers are resolved later, so they are not compared.
    parse_options(opts(startingOffsets='{"t":{"0":-2}}', endingOffsets='{"t":{"0":-1}}'), "batch")


def test_timestamp_options_take_precedence_like_sparks() -> None:
    parsed = parse_options(
        opts(
            startingTimestamp="1000", startingOffsetsByTimestamp='{"t":{"0":5}}', startingOffsets="earliest"
        ),
        "batch",
    )
    assert parsed.starting == GlobalTimestamp(1000)
    parsed = parse_options(
        opts(startingOffsetsByTimestamp='{"t":{"0":5}}', startingOffsets="earliest"), "batch"
    )
    assert parsed.starting == SpecificTimestamps({("t", 0): 5})
    assert "startingTimestamp" in error_of(opts(startingTimestamp="soon"))
    assert "endingOffsetsByTimestamp" in error_of(opts(endingOffsetsByTimestamp='{"t":{"0":-5}}'))
    assert (
        parse_options(opts(startingOffsetsByTimestampStrategy="LATEST"), "batch").starting_no_match
        == "latest"
    )
    assert "startingOffsetsByTimestampStrategy" in error_of(opts(startingOffsetsByTimestampStrategy="skip"))


# -- other values ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("failOnDataLoss", "yes"),
        ("includeHeaders", "1"),
        ("maxOffsetsPerTrigger", "0"),
        ("maxOffsetsPerTrigger", "ten"),
        ("minOffsetsPerTrigger", "-1"),
        ("minPartitions", "0"),
        ("maxRecordsPerPartition", "1.5"),
        ("kafkaConsumer.pollTimeoutMs", "0"),
        ("fetchOffset.numRetries", "0"),
        ("fetchOffset.retryIntervalMs", "-1"),
        ("maxTriggerDelay", "5 parsecs"),
    ],
)
def test_invalid_values_name_their_option(key: str, value: str) -> None:
    assert f"'{key}'" in error_of({**BASE, key: value}, "stream")


def test_numbers_and_flags() -> None:
    parsed = parse_options(
        opts(
            failOnDataLoss="FALSE",
            includeHeaders="true",
            maxOffsetsPerTrigger="100",
            minOffsetsPerTrigger="10",
            maxTriggerDelay="30s",
            minPartitions="8",
            maxRecordsPerPartition="1000",
            groupIdPrefix="etl",
        ),
        "stream",
    )
    assert not parsed.fail_on_data_loss and parsed.include_headers
    assert (parsed.max_offsets_per_trigger, parsed.min_offsets_per_trigger) == (100, 10)
    assert parsed.max_trigger_delay_ms == 30_000
    assert (parsed.min_partitions, parsed.max_records_per_partition) == (8, 1000)
    assert parsed.group_id_prefix == "etl"
    assert "minOffsetsPerTrigger(10) is higher than the maxOffsetsPerTrigger(5)" in error_of(
        opts(maxOffsetsPerTrigger="5", minOffsetsPerTrigger="10"), "stream"
    )


def test_durations_as_spark_writes_them() -> None:
    assert parse_duration_ms("d", "15m") == 900_000
    assert parse_duration_ms("d", "2min") == 120_000
    assert parse_duration_ms("d", "500") == 500
    assert parse_duration_ms("d", "1500us") == 1
    assert parse_duration_ms("d", "1h") == 3_600_000


# -- offsets in the checkpoint -----------------------------------------------------------


def test_checkpoint_offsets_round_trip_sorted() -> None:
    offsets = {("b", 10): 1, ("b", 2): 7, ("a", 0): 3}
    as_json = offsets_to_json(offsets)
    assert list(as_json) == ["a", "b"] and list(as_json["b"]) == ["2", "10"]
    assert offsets_from_json(as_json) == offsets
    assert offsets_to_json({}) == {}


# -- offset arithmetic -------------------------------------------------------------------


def test_rate_limit_shares_the_budget_in_proportion_to_backlog() -> None:
    start = {("t", 0): 0, ("t", 1): 100, ("t", 2): 50}
    latest = {("t", 0): 300, ("t", 1): 200, ("t", 2): 50}
    # backlogs 300 and 100: 75% and 25% of 100
    assert rate_limit(100, start, latest, {}) == {("t", 0): 75, ("t", 1): 125, ("t", 2): 50}


def test_rate_limit_never_starves_a_small_partition() -> None:
    start = {("t", 0): 0, ("t", 1): 0}
    latest = {("t", 0): 1000, ("t", 1): 1}
    # t-1's share is 10 * 1/1001 < 1, rounded up to 1; t-0's 9.99 is rounded down.
    assert rate_limit(10, start, latest, {}) == {("t", 0): 9, ("t", 1): 1}


def test_rate_limit_with_new_partitions_and_nothing_to_read() -> None:
    start = {("t", 0): 10}
    latest = {("t", 0): 20, ("t", 1): 30}
    assert rate_limit(20, start, latest, {("t", 1): 0}) == {("t", 0): 15, ("t", 1): 15}
    assert rate_limit(5, latest, latest, {}) == latest
    # A partition that went backwards (data loss) is left at its latest for the caller to report.
    assert rate_limit(5, {("t", 0): 50}, {("t", 0): 20}, {}) == {("t", 0): 20}


def test_split_ranges_keeps_one_range_per_partition_by_default() -> None:
    ranges = [OffsetRange("t", 0, 0, 10), OffsetRange("t", 1, 5, 5), OffsetRange("t", 2, 7, 3)]
    assert split_ranges(ranges) == [OffsetRange("t", 0, 0, 10)]


def test_split_ranges_min_partitions_splits_the_big_ones() -> None:
    big, small = OffsetRange("t", 0, 0, 1000), OffsetRange("t", 1, 0, 10)
    out = split_ranges([big, small], min_partitions=5)
    # small keeps its one range; big gets the other 4, covering it exactly.
    assert [r for r in out if r.partition == 1] == [small]
    parts = [r for r in out if r.partition == 0]
    assert len(parts) == 4
    assert parts[0].start == 0 and parts[-1].end == 1000
    assert all(a.end == b.start for a, b in itertools.pairwise(parts))
    assert [r.size for r in parts] == [250, 250, 250, 250]
    assert split_ranges([big, small], min_partitions=2) == [big, small]


def test_split_ranges_max_records_caps_every_part() -> None:
    out = split_ranges([OffsetRange("t", 0, 3, 25)], max_records=10)
    assert [(r.start, r.end) for r in out] == [(3, 10), (10, 17), (17, 25)]
    assert sum(r.size for r in out) == 22 and all(r.size <= 10 for r in out)


def test_schema_time_checks_leave_batch_only_rules_to_the_reader() -> None:
    # schema() sees the options before Spark says whether this is a batch or a stream.
    parsed = parse_options(opts(startingOffsets="latest", endingOffsets="earliest"), None)
    assert parsed.starting == LatestOffsets()
