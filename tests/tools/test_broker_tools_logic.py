"""The pure parts of the broker tools, tested directly: the offset-reset planner, Kafka's
time notations, the console line reader and record formatter, the output layouts, and
the translation of Java client settings. No broker, no I/O."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sluiceway.broker_tools.configs import parse_add_config, parse_delete_config
from sluiceway.broker_tools.console_consumer import parse_offset
from sluiceway.broker_tools.console_formats import (
    ConsumedRecord,
    FormatterSettings,
    LineFormatError,
    LineReaderSettings,
    format_record,
    parse_line,
)
from sluiceway.broker_tools.kafka_clients import ToolError, jaas_credentials, librdkafka_settings
from sluiceway.broker_tools.layouts import (
    ConfigLine,
    GroupStateRow,
    MemberRow,
    OffsetRow,
    PartitionInfo,
    TopicInfo,
    assignment_text,
    config_description,
    group_listing_table,
    group_members_table,
    group_offsets_table,
    group_state_table,
    reset_plan_table,
    topic_description,
)
from sluiceway.broker_tools.offset_reset import (
    PartitionOffsets,
    ResetError,
    ShiftBy,
    ToCurrent,
    ToEarliest,
    ToLatest,
    ToOffset,
    ToTimestamp,
    parse_topic_partitions,
    plan_reset,
)
from sluiceway.broker_tools.time_specs import parse_datetime_ms, parse_duration_ns, timestamp_before
from sluiceway.broker_tools.topics import matching_topics, parse_topic_configs

# --- the reset planner -------------------------------------------------------------------

KNOWN = {
    ("t", 0): PartitionOffsets(earliest=0, latest=10, committed=4, at_timestamp=7),
    ("t", 1): PartitionOffsets(earliest=5, latest=8, committed=None, at_timestamp=None),
    ("t", 2): PartitionOffsets(earliest=3, latest=3, committed=3, at_timestamp=None),
}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (ToEarliest(), {0: 0, 1: 5, 2: 3}),
        (ToLatest(), {0: 10, 1: 8, 2: 3}),
        (ToCurrent(), {0: 4, 1: 8, 2: 3}),  # no committed offset: the log end
        (ToOffset(6), {0: 6, 1: 6, 2: 3}),  # clamped into [earliest, latest]
        (ToOffset(100), {0: 10, 1: 8, 2: 3}),
        (ToOffset(-5), {0: 0, 1: 5, 2: 3}),
        (ToTimestamp(1234), {0: 7, 1: 8, 2: 3}),  # nothing that recent: the log end
    ],
)
def test_the_planner_follows_kafka(spec: object, expected: dict[int, int]) -> None:
    plan = plan_reset(spec, KNOWN)  # type: ignore[arg-type]
    assert {p: o for (_, p), o in plan.offsets.items()} == expected


def test_the_planner_warns_where_kafka_does() -> None:
    assert plan_reset(ToOffset(100), {("t", 0): KNOWN[("t", 0)]}).warnings == [
        "New offset (100) is higher than latest offset for topic partition t-0. Value will be set to 10."
    ]
    assert plan_reset(ShiftBy(-9), {("t", 0): KNOWN[("t", 0)]}).warnings == [
        "New offset (-5) is lower than earliest offset for topic partition t-0. Value will be set to 0."
    ]
    assert plan_reset(ToTimestamp(1), {("t", 1): KNOWN[("t", 1)]}).warnings == [
        "Partition 1 from topic t is empty. Falling back to latest known offset."
    ]
    assert plan_reset(ToEarliest(), KNOWN).warnings == []


def test_shifting_needs_a_committed_offset() -> None:
    assert plan_reset(ShiftBy(2), {("t", 0): KNOWN[("t", 0)]}).offsets == {("t", 0): 6}
    with pytest.raises(
        ResetError, match="Cannot shift offset for partition t-1 since there is no current committed"
    ):
        plan_reset(ShiftBy(2), KNOWN)


@st.composite
def partition_offsets(draw: st.DrawFn) -> PartitionOffsets:
    earliest = draw(st.integers(0, 10**6))
    latest = draw(st.integers(earliest, earliest + 10**6))
    committed = draw(st.none() | st.integers(0, 3 * 10**6))
    at_timestamp = draw(st.none() | st.integers(earliest, latest))
    return PartitionOffsets(earliest, latest, committed, at_timestamp)


@given(
    st.dictionaries(st.tuples(st.sampled_from("abc"), st.integers(0, 5)), partition_offsets(), max_size=8),
    st.integers(-(10**7), 10**7),
)
def test_requested_offsets_always_land_inside_the_log(
    known: dict[tuple[str, int], PartitionOffsets], requested: int
) -> None:
    for spec in (ToOffset(requested), ToEarliest(), ToLatest(), ToCurrent(), ToTimestamp(0)):
        plan = plan_reset(spec, known)
        assert set(plan.offsets) == set(known)
        for tp, offset in plan.offsets.items():
            if not isinstance(spec, ToCurrent):  # the current offset is kept as it is
                assert known[tp].earliest <= offset <= known[tp].latest
    with_commits = {tp: k for tp, k in known.items() if k.committed is not None}
    shifted = plan_reset(ShiftBy(requested), with_commits)
    for tp, offset in shifted.offsets.items():
        k = with_commits[tp]
        assert offset == min(max(k.committed + requested, k.earliest), k.latest)  # type: ignore[operator]


def test_topic_partition_arguments() -> None:
    assert parse_topic_partitions("orders") == ("orders", None)
    assert parse_topic_partitions("orders:0,2") == ("orders", [0, 2])
    with pytest.raises(ResetError, match="Invalid partition 'x' specified in topic arg 'orders:0,x'"):
        parse_topic_partitions("orders:0,x")
    with pytest.raises(ResetError, match="expected topic name and partitions"):
        parse_topic_partitions("a:1:2")


# --- time notations ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-01-31T09:30:00.000", datetime(2024, 1, 31, 9, 30, tzinfo=UTC)),  # UTC without a zone
        ("2024-01-31T09:30:00.123Z", datetime(2024, 1, 31, 9, 30, 0, 123000, tzinfo=UTC)),
        ("2024-01-31T09:30:00.000+01:00", datetime(2024, 1, 31, 8, 30, tzinfo=UTC)),
        ("2024-01-31T09:30:00.000+0130", datetime(2024, 1, 31, 8, 0, tzinfo=UTC)),
        ("2024-01-31T09:30:00.000-05", datetime(2024, 1, 31, 14, 30, tzinfo=UTC)),
    ],
)
def test_kafka_datetimes(text: str, expected: datetime) -> None:
    assert parse_datetime_ms(text) == int(expected.timestamp() * 1000)


@pytest.mark.parametrize(
    "text", ["2024-01-31", "2024-01-31T09:30:00", "2024-02-30T00:00:00.000", "2024-01-31T25:00:00.000", "now"]
)
def test_malformed_datetimes_say_what_is_expected(text: str) -> None:
    with pytest.raises(ValueError, match=f"Error parsing timestamp '{text}'"):
        parse_datetime_ms(text)


@given(
    st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(9998, 12, 31)),
    st.integers(-12 * 60, 14 * 60),
)
def test_datetimes_round_trip(moment: datetime, offset_minutes: int) -> None:
    moment = moment.replace(microsecond=moment.microsecond // 1000 * 1000)
    zone = timedelta(minutes=offset_minutes)
    sign = "-" if offset_minutes < 0 else "+"
    hours, minutes = divmod(abs(offset_minutes), 60)
    text = f"{moment:%Y-%m-%dT%H:%M:%S}.{moment.microsecond // 1000:03d}{sign}{hours:02d}:{minutes:02d}"
    expected = moment.replace(tzinfo=UTC) - zone
    assert parse_datetime_ms(text) == round(expected.timestamp() * 1000)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [  # java.time.Duration.parse's own examples
        ("PT20.345S", 20.345),
        ("PT15M", 15 * 60),
        ("PT10H", 10 * 3600),
        ("P2D", 2 * 86400),
        ("P2DT3H4M", 2 * 86400 + 3 * 3600 + 4 * 60),
        ("PT-6H3M", -6 * 3600 + 3 * 60),
        ("-PT6H3M", -(6 * 3600 + 3 * 60)),
        ("-PT-6H+3M", 6 * 3600 - 3 * 60),
        ("pt-0.5s", -0.5),
    ],
)
def test_iso_durations(text: str, seconds: float) -> None:
    assert parse_duration_ns(text) == round(seconds * 1_000_000_000)


@pytest.mark.parametrize("text", ["", "P", "PT", "P1Y", "1D", "PT1H2", "P1DT"])
def test_malformed_durations(text: str) -> None:
    with pytest.raises(ValueError, match="expected an ISO-8601 duration"):
        parse_duration_ns(text)


@given(
    st.integers(-1000, 1000),
    st.integers(-100, 100),
    st.integers(-100, 100),
    st.integers(0, 10**5),
    st.integers(0, 999_999_999),
)
def test_durations_round_trip(days: int, hours: int, minutes: int, seconds: int, nanos: int) -> None:
    text = f"P{days}DT{hours}H{minutes}M{seconds}.{nanos:09d}S"
    expected = ((days * 24 + hours) * 60 + minutes) * 60 * 10**9 + seconds * 10**9 + nanos
    assert parse_duration_ns(text) == expected
    assert parse_duration_ns("-" + text) == -expected


def test_a_duration_before_now() -> None:
    assert timestamp_before(10_000, parse_duration_ns("PT1.5S")) == 8_500
    assert timestamp_before(10_000, parse_duration_ns("PT0.0005S")) == 9_999  # rounds down, as Instant does


# --- console line reader ----------------------------------------------------------------------


def reader(**props: str) -> LineReaderSettings:
    return LineReaderSettings.from_properties({k.replace("_", "."): v for k, v in props.items()})


def test_plain_lines_are_values() -> None:
    line = parse_line("a\tb", 1, reader())
    assert (line.key, line.value, line.headers) == (None, b"a\tb", [])
    assert parse_line("", 1, reader()).value == b""


def test_keys_split_at_the_first_separator() -> None:
    line = parse_line("k,v,w", 1, reader(parse_key="true", key_separator=","))
    assert (line.key, line.value) == (b"k", b"v,w")
    assert parse_line("k::v", 1, reader(parse_key="TRUE", key_separator="::")).value == b"v"


def test_a_line_without_its_separator_names_its_number() -> None:
    with pytest.raises(LineFormatError, match=r"^No key separator found on line number 7: 'novalue'$"):
        parse_line("novalue", 7, reader(parse_key="true"))
    # ignore.error: the whole line is the value, as in Kafka.
    line = parse_line("novalue", 7, reader(parse_key="true", ignore_error="true"))
    assert (line.key, line.value) == (None, b"novalue")


def test_headers_and_null_markers() -> None:
    s = reader(parse_headers="true", parse_key="true", null_marker="<null>")
    line = parse_line("a:1,b:<null>\tk\tv", 1, s)
    assert line.headers == [("a", b"1"), ("b", None)]
    assert (line.key, line.value) == (b"k", b"v")
    assert parse_line("a:1\t<null>\t<null>", 1, s).key is None
    with pytest.raises(LineFormatError, match="No header key separator found in pair 'a' on line number 3"):
        parse_line("a\tk\tv", 3, s)
    with pytest.raises(LineFormatError, match="Header keys should not be equal to the null marker"):
        parse_line("<null>:1\tk\tv", 1, s)


def test_ambiguous_reader_settings_are_refused() -> None:
    with pytest.raises(LineFormatError, match=r"headers\.delimiter and headers\.separator may not be equal"):
        reader(headers_delimiter=",")
    with pytest.raises(LineFormatError, match=r"null\.marker and key\.separator may not be equal"):
        reader(null_marker="\t")


separator_free = st.text(st.characters(exclude_characters=",\n\r", codec="utf-8"))


@given(separator_free, st.text(st.characters(exclude_characters="\n\r", codec="utf-8")))
def test_keyed_lines_round_trip(key: str, value: str) -> None:
    line = parse_line(f"{key},{value}", 1, reader(parse_key="true", key_separator=","))
    assert (line.key, line.value) == (key.encode(), value.encode())


# --- console record formatter ------------------------------------------------------------------

RECORD = ConsumedRecord(1, 1700000000000, 2, 41, [("h", b"x"), ("n", None)], b"k", b"v")


@pytest.mark.parametrize(
    ("props", "expected"),
    [
        ({}, b"v\n"),
        ({"print.key": "true"}, b"k\tv\n"),
        ({"print.key": "true", "print.value": "false"}, b"k\n"),
        (
            {
                "print.timestamp": "true",
                "print.partition": "true",
                "print.offset": "true",
                "print.headers": "true",
            },
            b"CreateTime:1700000000000\tPartition:2\tOffset:41\th:x,n:null\tv\n",
        ),
        ({"print.key": "true", "key.separator": " | ", "line.separator": ";"}, b"k | v;"),
        ({"print.value": "false"}, b""),
    ],
)
def test_records_print_as_kafkas_default_formatter(props: dict[str, str], expected: bytes) -> None:
    assert format_record(RECORD, FormatterSettings.from_properties(props)) == expected


def test_nulls_and_missing_parts_print_as_kafka() -> None:
    bare = ConsumedRecord(0, -1, 0, 0, [], None, None)
    s = FormatterSettings.from_properties(
        {"print.key": "true", "print.timestamp": "true", "print.headers": "true"}
    )
    assert format_record(bare, s) == b"NO_TIMESTAMP\tNO_HEADERS\tnull\tnull\n"
    s = FormatterSettings.from_properties({"print.key": "true", "null.literal": "-"})
    assert format_record(bare, s) == b"-\t-\n"
    appended = ConsumedRecord(2, 5, 0, 0, [], None, b"v")
    assert format_record(appended, FormatterSettings.from_properties({"print.timestamp": "true"})) == (
        b"LogAppendTime:5\tv\n"
    )


def test_console_consumer_offsets() -> None:
    assert parse_offset("earliest", False) == -2 and parse_offset("LATEST", False) == -1
    assert parse_offset("12", False) == 12
    assert parse_offset(None, True) == -2 and parse_offset(None, False) == -1
    for bad in ("-3", "soon"):
        with pytest.raises(ValueError, match=f"The provided offset value '{bad}' is incorrect"):
            parse_offset(bad, False)


# --- layouts ---------------------------------------------------------------------------------------


def test_topic_description_layout() -> None:
    info = TopicInfo(
        "orders",
        "Rq0vHGaUSZ6K1AAfbD8SeA",
        [PartitionInfo(1, 0, [0], [0]), PartitionInfo(0, None, [0, 1], [])],
        [("retention.ms", "1000"), ("cleanup.policy", "compact")],
    )
    assert topic_description(info) == (
        "Topic: orders\tTopicId: Rq0vHGaUSZ6K1AAfbD8SeA\tPartitionCount: 2\tReplicationFactor: 2"
        "\tConfigs: retention.ms=1000,cleanup.policy=compact\n"
        "\tTopic: orders\tPartition: 0\tLeader: none\tReplicas: 0,1\tIsr: \n"
        "\tTopic: orders\tPartition: 1\tLeader: 0\tReplicas: 0\tIsr: 0\n"
    )
    assert topic_description(TopicInfo("t", None, [PartitionInfo(0, 3, [3], [3])], [])).startswith(
        "Topic: t\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n"
    )


def test_group_offsets_layout() -> None:
    rows = [
        OffsetRow("g", "orders", 0, 5, 8, "consumer-1-0123456789", "/10.0.0.1", "consumer-1"),
        OffsetRow("g", "orders", 1, None, 4, "consumer-1-0123456789", "/10.0.0.1", "consumer-1"),
        OffsetRow("g", "a-much-longer-topic-name", 0, 3, None, None, None, None),
    ]
    assert group_offsets_table(rows) == (
        "\n"
        "GROUP           TOPIC                    PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             "
        "CONSUMER-ID           HOST            CLIENT-ID\n"
        "g               orders                   0          5               8               3               "
        "consumer-1-0123456789 /10.0.0.1       consumer-1\n"
        "g               orders                   1          -               4               -               "
        "consumer-1-0123456789 /10.0.0.1       consumer-1\n"
        "g               a-much-longer-topic-name 0          3               -               -               "
        "-                     -               -\n"
    )


def test_group_members_state_and_listing_layouts() -> None:
    member = MemberRow("g", "c-1", None, "/127.0.0.1", "cli", [("t", 1), ("t", 0), ("a", 2)])
    assert group_members_table([member]) == (
        "\nGROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS     \n"
        "g               c-1             /127.0.0.1      cli             3               \n"
    )
    verbose = group_members_table([member], verbose=True).splitlines()
    assert verbose[1].endswith("CURRENT-EPOCH   CURRENT-ASSIGNMENT   TARGET-EPOCH    TARGET-ASSIGNMENT   ")
    assert verbose[2].endswith("-               a:2;t:0,1            -               -                   ")
    assert assignment_text([]) == "-"
    static = group_members_table([MemberRow("g", "c-1", "instance-7", "h", "cli", [])]).splitlines()
    assert static[1].split() == [
        "GROUP",
        "CONSUMER-ID",
        "GROUP-INSTANCE-ID",
        "HOST",
        "CLIENT-ID",
        "#PARTITIONS",
    ]
    assert group_state_table(GroupStateRow("g", "localhost", 9092, 1, "range", "Stable", 2)) == (
        "\nGROUP           COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE                #MEMBERS\n"
        "g               localhost:9092  (1)       range                Stable               2\n"
    )
    assert group_listing_table([("g", "Empty")]) == (
        "GROUP                     STATE               \ng                         Empty               \n"
    )


def test_reset_plan_layout() -> None:
    assert reset_plan_table([("g", "t", 0, 5), ("g", "t", 1, 7)]) == (
        "\nGROUP           TOPIC           PARTITION  NEW-OFFSET\n"
        "g               t               0          5\n"
        "g               t               1          7\n"
    )
    assert reset_plan_table([]) == "\n"


def test_config_description_layout() -> None:
    entries = [
        ConfigLine("segment.ms", "100", False, [("DYNAMIC_TOPIC_CONFIG", "segment.ms", "100")]),
        ConfigLine(
            "cleanup.policy",
            "compact",
            False,
            [
                ("DYNAMIC_TOPIC_CONFIG", "cleanup.policy", "compact"),
                ("DEFAULT_CONFIG", "log.cleanup.policy", "delete"),
            ],
        ),
        ConfigLine("secret", None, True, []),
    ]
    assert config_description("topics", "t", entries, describe_all=False) == (
        "Dynamic configs for topic t are:\n"
        "  cleanup.policy=compact sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact, "
        "DEFAULT_CONFIG:log.cleanup.policy=delete}\n"
        "  secret=null sensitive=true synonyms={}\n"
        "  segment.ms=100 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:segment.ms=100}\n"
    )
    assert config_description("topics", "t", [], describe_all=True) == "All configs for topic t are:\n"


# --- command arguments -------------------------------------------------------------------------------


def test_add_config_keeps_bracketed_lists_together() -> None:
    assert parse_add_config("k1=v1,k2=[a,b],k3=") == {"k1": "v1", "k2": "a,b", "k3": ""}
    assert parse_add_config(" a = 1 ") == {"a": "1"}
    for bad in ("k1", "k1=v1,k2", "a=b=c"):
        with pytest.raises(ToolError, match="all configs to be added must be in the format"):
            parse_add_config(bad)
    assert parse_delete_config(["a,b", " c "]) == ["a", "b", "c"]


def test_topic_configs_and_patterns() -> None:
    assert parse_topic_configs(["retention.ms = 10", "cleanup.policy=compact"]) == {
        "retention.ms": "10",
        "cleanup.policy": "compact",
    }
    for bad in ("retention.ms", "a=b=c", "k="):
        with pytest.raises(ToolError, match="Invalid topic config"):
            parse_topic_configs([bad])
    names = ["orders", "orders-eu", "ordersX", "__consumer_offsets", "billing"]
    assert matching_topics(names, "orders", False) == ["orders"]  # whole names only
    assert matching_topics(names, "orders.*", False) == ["orders", "orders-eu", "ordersX"]
    assert matching_topics(names, "'billing, orders'", False) == ["billing", "orders"]
    assert matching_topics(names, None, True) == ["billing", "orders", "orders-eu", "ordersX"]
    with pytest.raises(ToolError, match="is an invalid regex"):
        matching_topics(names, "(", False)


# --- client settings from Java properties files ---------------------------------------------------


def test_java_client_settings_are_translated(capsys: pytest.CaptureFixture[str]) -> None:
    settings = librdkafka_settings(
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "PLAIN",
            "sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required "
            'username="alice" password="p@ss \\"word\\"";',
            "max.request.size": "2000000",
            "ssl.endpoint.identification.algorithm": "",
            "key.serializer": "org.apache.kafka.common.serialization.StringSerializer",
            "default.api.timeout.ms": "5000",
        }
    )
    assert settings == {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "PLAIN",
        "sasl.username": "alice",
        "sasl.password": 'p@ss "word"',
        "message.max.bytes": "2000000",
        "ssl.endpoint.identification.algorithm": "none",
    }
    assert capsys.readouterr().err == (
        "WARN: key.serializer is a Java client setting without a librdkafka equivalent; ignored\n"
    )


def test_jaas_configs() -> None:
    scram = "org.apache.kafka.common.security.scram.ScramLoginModule required username=bob password=secret;"
    assert jaas_credentials(scram) == {"sasl.username": "bob", "sasl.password": "secret"}
    with pytest.raises(ToolError, match="only PlainLoginModule and ScramLoginModule"):
        jaas_credentials("com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true;")
