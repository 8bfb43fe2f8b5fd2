"""The "sluiceway" source's options, parsed and checked as pure functions (no I/O, no Spark).

Option names, defaults and semantics are those of Spark's own Kafka source (the
structured-streaming-kafka-integration guide): ``subscribe`` / ``subscribePattern`` /
``assign``; ``startingOffsets`` / ``endingOffsets`` as ``earliest``, ``latest`` or
per-partition JSON (-2 = earliest, -1 = latest); the timestamp variants; ``failOnDataLoss``;
``maxOffsetsPerTrigger`` and friends; ``kafka.``-prefixed client settings. Every problem is
an ``OptionError`` whose message names the option, because Spark shows users the Python
exception text and nothing else.

Also here, because they are arithmetic on offsets and easy to get subtly wrong: how a
micro-batch's offset budget is shared among partitions (``rate_limit``), how offset ranges
become Spark partitions (``split_ranges``), and the offset <-> JSON mapping Spark keeps in
a streaming query's checkpoint.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from spark_sink.reader.registry_options import RegistryOptions

#: Spark's (and Kafka's) markers in per-partition offset JSON.
EARLIEST = -2
LATEST = -1

TopicPartition = tuple[str, int]
PartitionOffsets = dict[TopicPartition, int]
#: Spark's default maxTriggerDelay (15m).
DEFAULT_MAX_TRIGGER_DELAY_MS = 15 * 60 * 1000


class OptionError(ValueError):
    """An option of the "sluiceway" source is missing, unknown or has an invalid value."""


# ---------------------------------------------------------------------------------------
# Where reading starts and ends.


@dataclass(frozen=True)
class EarliestOffsets:
    """Every partition from its log start offset."""


@dataclass(frozen=True)
class LatestOffsets:
    """Every partition from its end (high watermark, or last stable offset when read_committed)."""


@dataclass(frozen=True)
class SpecificOffsets:
    """Per-partition offsets from JSON; values may be EARLIEST or LATEST."""

    offsets: Mapping[TopicPartition, int]


@dataclass(frozen=True)
class GlobalTimestamp:
    """Every partition from the first record with a timestamp >= ``timestamp`` (ms)."""

    timestamp: int


@dataclass(frozen=True)
class SpecificTimestamps:
    """Per-partition timestamps (ms) from JSON."""

    timestamps: Mapping[TopicPartition, int]


OffsetLimit = EarliestOffsets | LatestOffsets | SpecificOffsets | GlobalTimestamp | SpecificTimestamps


# ---------------------------------------------------------------------------------------
# Which partitions are read.


@dataclass(frozen=True)
class Subscribe:
    """All partitions of a fixed list of topics (``subscribe``)."""

    topics: tuple[str, ...]


@dataclass(frozen=True)
class SubscribePattern:
    """All partitions of every topic whose whole name matches a Java regex (``subscribePattern``)."""

    pattern: str
    regex: re.Pattern[str] = field(compare=False)

    def matches(self, topic: str) -> bool:
        return self.regex.fullmatch(topic) is not None


@dataclass(frozen=True)
class Assign:
    """A fixed list of partitions (``assign``)."""

    partitions: tuple[TopicPartition, ...]


Strategy = Subscribe | SubscribePattern | Assign

#: Kafka's own internal topics, which Kafka's listTopics (and so Spark's subscribePattern) leaves out.
KAFKA_INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})


def selected_topics(strategy: Strategy, existing: Iterable[str]) -> list[str]:
    """The topics among ``existing`` that ``strategy`` reads, sorted."""
    names = set(existing)
    if isinstance(strategy, Subscribe):
        return sorted(set(strategy.topics))
    if isinstance(strategy, Assign):
        return sorted({t for t, _ in strategy.partitions})
    return sorted(t for t in names if t not in KAFKA_INTERNAL_TOPICS and strategy.matches(t))


# ---------------------------------------------------------------------------------------
# All options.

Mode = Literal["batch", "stream"]


@dataclass(frozen=True)
class ReaderOptions:
    """Everything the source needs, checked. Picklable: Spark ships it to its Python workers."""

    strategy: Strategy
    #: librdkafka settings: bootstrap.servers and every ``kafka.*`` option with the prefix removed.
    kafka: Mapping[str, str]
    starting: OffsetLimit
    ending: OffsetLimit
    #: What a starting timestamp with no record at or after it resolves to: fail, or the end.
    starting_no_match: Literal["error", "latest"] = "error"
    fail_on_data_loss: bool = True
    include_headers: bool = False
    max_offsets_per_trigger: int | None = None
    min_offsets_per_trigger: int | None = None
    max_trigger_delay_ms: int = DEFAULT_MAX_TRIGGER_DELAY_MS
    min_partitions: int | None = None
    max_records_per_partition: int | None = None
    poll_timeout_ms: int = 120_000
    fetch_offset_retries: int = 3
    fetch_offset_retry_interval_ms: int = 1000
    group_id_prefix: str = "spark-kafka-source"
    #: Decoding Schema Registry-framed keys/values into typed columns (``value.format`` ...).
    registry: RegistryOptions | None = None

    @property
    def isolation_level(self) -> str:
        return self.kafka.get("isolation.level", "read_uncommitted").lower()


# Option names as Spark spells them; Spark's option maps are case-insensitive (pyspark hands
# a data source its options with lower-cased keys), so lookups use the lower-cased form.
_ASSIGN = "assign"
_SUBSCRIBE = "subscribe"
_SUBSCRIBE_PATTERN = "subscribePattern"
_STARTING_OFFSETS = "startingOffsets"
_ENDING_OFFSETS = "endingOffsets"
_STARTING_TIMESTAMP = "startingTimestamp"
_ENDING_TIMESTAMP = "endingTimestamp"
_STARTING_BY_TIMESTAMP = "startingOffsetsByTimestamp"
_ENDING_BY_TIMESTAMP = "endingOffsetsByTimestamp"
_NO_MATCH_STRATEGY = "startingOffsetsByTimestampStrategy"
_FAIL_ON_DATA_LOSS = "failOnDataLoss"
_INCLUDE_HEADERS = "includeHeaders"
_MAX_OFFSETS = "maxOffsetsPerTrigger"
_MIN_OFFSETS = "minOffsetsPerTrigger"
_MAX_TRIGGER_DELAY = "maxTriggerDelay"
_MIN_PARTITIONS = "minPartitions"
_MAX_RECORDS_PER_PARTITION = "maxRecordsPerPartition"
_POLL_TIMEOUT = "kafkaConsumer.pollTimeoutMs"
_FETCH_RETRIES = "fetchOffset.numRetries"
_FETCH_RETRY_INTERVAL = "fetchOffset.retryIntervalMs"
_GROUP_ID_PREFIX = "groupIdPrefix"
#: Options of decoding Schema Registry-framed records (spark_sink.reader.registry_options):
#: Confluent's serde setting names, and from_avro's ``mode``.
REGISTRY_OPTIONS = (
    "key.format",
    "value.format",
    "schema.registry.url",
    "basic.auth.user.info",
    "basic.auth.credentials.source",
    "key.subject",
    "value.subject",
    "key.schema.id",
    "value.schema.id",
    "mode",
    "value.columns",
    "columnNameOfCorruptRecord",
    # schema.registry.<setting of confluent-kafka's SchemaRegistryClient>
    "schema.registry.basic.auth.user.info",
    "schema.registry.ssl.ca.location",
    "schema.registry.ssl.certificate.location",
    "schema.registry.ssl.key.location",
    "schema.registry.ssl.key.password",
)
_BOOTSTRAP = "kafka.bootstrap.servers"
_PLAIN_BOOTSTRAP = "bootstrap.servers"
KNOWN_OPTIONS = (
    _SUBSCRIBE,
    _SUBSCRIBE_PATTERN,
    _ASSIGN,
    _BOOTSTRAP,
    _PLAIN_BOOTSTRAP,
    _STARTING_OFFSETS,
    _ENDING_OFFSETS,
    _STARTING_TIMESTAMP,
    _ENDING_TIMESTAMP,
    _STARTING_BY_TIMESTAMP,
    _ENDING_BY_TIMESTAMP,
    _NO_MATCH_STRATEGY,
    _FAIL_ON_DATA_LOSS,
    _INCLUDE_HEADERS,
    _MAX_OFFSETS,
    _MIN_OFFSETS,
    _MAX_TRIGGER_DELAY,
    _MIN_PARTITIONS,
    _MAX_RECORDS_PER_PARTITION,
    _POLL_TIMEOUT,
    _FETCH_RETRIES,
    _FETCH_RETRY_INTERVAL,
    _GROUP_ID_PREFIX,
    *REGISTRY_OPTIONS,
)
_BY_LOWER = {name.lower(): name for name in KNOWN_OPTIONS}
_STRATEGIES = (_SUBSCRIBE, _SUBSCRIBE_PATTERN, _ASSIGN)

# Kafka client settings the source owns (Spark refuses the same ones, with these reasons).
_REFUSED_KAFKA = {
    "auto.offset.reset": (
        "Kafka option 'auto.offset.reset' is not supported (option 'kafka.auto.offset.reset'). Instead set "
        "the source option 'startingOffsets' to 'earliest' or 'latest' to specify where to start. The "
        "source manages which offsets are consumed itself; 'startingOffsets' only applies when a new "
        "streaming query starts, and a resumed query always picks up where it left off."
    ),
    "key.deserializer": (
        "Kafka option 'key.deserializer' is not supported (option 'kafka.key.deserializer'): keys are "
        "always read as bytes. Use DataFrame operations to deserialize them."
    ),
    "value.deserializer": (
        "Kafka option 'value.deserializer' is not supported (option 'kafka.value.deserializer'): values "
        "are always read as bytes. Use DataFrame operations to deserialize them."
    ),
    "enable.auto.commit": (
        "Kafka option 'enable.auto.commit' is not supported (option 'kafka.enable.auto.commit'): the "
        "source commits nothing to Kafka; Spark keeps the offsets in the query's checkpoint."
    ),
    "interceptor.classes": (
        "Kafka option 'interceptor.classes' is not supported (option 'kafka.interceptor.classes')"
    ),
}

_OFFSETS_EXAMPLE = '{"topicA":{"0":23,"1":-1},"topicB":{"0":-2}}'
_TIMESTAMPS_EXAMPLE = '{"topicA":{"0":1700000000000,"1":1700000000000},"topicB":{"0":1700000000000}}'
_ASSIGN_EXAMPLE = '{"topicA":[0,1],"topicB":[2,4]}'


def parse_options(options: Mapping[str, str], mode: Mode | None) -> ReaderOptions:
    """Check ``options`` (as given to ``spark.read`` / ``spark.readStream``) and parse them.

    ``mode`` None checks only what does not depend on batch or streaming (the data source's
    ``schema()`` does not know which it is; ``reader()`` and ``streamReader()`` do)."""
    opts = {k.lower(): v for k, v in options.items()}
    _check_names(opts)
    strategy = _strategy(opts)
    kafka = _kafka_params(opts)

    if mode == "stream":
        for name in (_ENDING_OFFSETS, _ENDING_BY_TIMESTAMP, _ENDING_TIMESTAMP):
            if name.lower() in opts:
                kind = "ending offset" if name == _ENDING_OFFSETS else "ending timestamp"
                raise OptionError(f"Option '{name}': {kind} not valid in streaming queries")

    no_match = choice(opts, _NO_MATCH_STRATEGY, ("error", "latest"), "error")
    default_start: OffsetLimit = LatestOffsets() if mode == "stream" else EarliestOffsets()
    starting = _offset_limit(
        opts, _STARTING_TIMESTAMP, _STARTING_BY_TIMESTAMP, _STARTING_OFFSETS, default_start
    )
    ending = _offset_limit(opts, _ENDING_TIMESTAMP, _ENDING_BY_TIMESTAMP, _ENDING_OFFSETS, LatestOffsets())
    if mode == "batch":
        _check_batch_limits(opts, starting, ending)

    max_offsets = _positive_int(opts, _MAX_OFFSETS)
    min_offsets = _positive_int(opts, _MIN_OFFSETS)
    if max_offsets is not None and min_offsets is not None and min_offsets > max_offsets:
        raise OptionError(
            f"The value of minOffsetsPerTrigger({min_offsets}) is higher than the "
            f"maxOffsetsPerTrigger({max_offsets})."
        )
    delay = opts.get(_MAX_TRIGGER_DELAY.lower())
    retries = _positive_int(opts, _FETCH_RETRIES)
    interval = non_negative_int(opts, _FETCH_RETRY_INTERVAL)
    poll = _positive_int(opts, _POLL_TIMEOUT)
    prefix = opts.get(_GROUP_ID_PREFIX.lower())
    default_prefix = "spark-kafka-source" if mode == "stream" else "spark-kafka-relation"
    return ReaderOptions(
        strategy=strategy,
        kafka=kafka,
        starting=starting,
        ending=ending,
        starting_no_match="latest" if no_match == "latest" else "error",
        fail_on_data_loss=_boolean(opts, _FAIL_ON_DATA_LOSS, True),
        include_headers=_boolean(opts, _INCLUDE_HEADERS, False),
        max_offsets_per_trigger=max_offsets,
        min_offsets_per_trigger=min_offsets,
        max_trigger_delay_ms=DEFAULT_MAX_TRIGGER_DELAY_MS
        if delay is None
        else parse_duration_ms(_MAX_TRIGGER_DELAY, delay),
        min_partitions=_positive_int(opts, _MIN_PARTITIONS),
        max_records_per_partition=_positive_int(opts, _MAX_RECORDS_PER_PARTITION),
        poll_timeout_ms=120_000 if poll is None else poll,
        fetch_offset_retries=3 if retries is None else retries,
        fetch_offset_retry_interval_ms=1000 if interval is None else interval,
        group_id_prefix=prefix.strip() if prefix and prefix.strip() else default_prefix,
        registry=parse_registry_options(opts),
    )


def parse_registry_options(opts: Mapping[str, str]) -> RegistryOptions | None:
    """The decoding options, or None when neither the key nor the value is decoded."""
    # Imported here: registry_options uses this module's helpers.
    from spark_sink.reader.registry_options import parse_registry_options as parse

    return parse(opts)


def _check_names(opts: Mapping[str, str]) -> None:
    unknown = sorted(k for k in opts if k not in _BY_LOWER and not k.startswith("kafka."))
    if unknown:
        raise OptionError(
            f"Unknown option{'s' if len(unknown) > 1 else ''} {', '.join(repr(u) for u in unknown)} for the "
            f"sluiceway source. Known options: {', '.join(KNOWN_OPTIONS)}, and 'kafka.<setting>' for "
            f"settings of the Kafka client (librdkafka)"
        )


def _strategy(opts: Mapping[str, str]) -> Strategy:
    given = [name for name in _STRATEGIES if name.lower() in opts]
    if not given:
        raise OptionError(
            "One of the following options must be specified for the sluiceway source: "
            f"{', '.join(_STRATEGIES)}. See Spark's Kafka integration guide for more details."
        )
    if len(given) > 1:
        raise OptionError(
            "Only one of the following options can be specified for the sluiceway source: "
            f"{', '.join(_STRATEGIES)} (got {', '.join(given)})."
        )
    name = given[0]
    value = opts[name.lower()]
    if name == _SUBSCRIBE:
        topics = tuple(dict.fromkeys(t.strip() for t in value.split(",") if t.strip()))
        if not topics:
            raise OptionError(
                f"No topics to subscribe to as specified value for option 'subscribe' is '{value}'"
            )
        return Subscribe(topics)
    if name == _SUBSCRIBE_PATTERN:
        pattern = value.strip()
        if not pattern:
            raise OptionError(
                f"Pattern to subscribe is empty as specified value for option 'subscribePattern' is '{value}'"
            )
        return SubscribePattern(pattern, compile_pattern(pattern))
    return Assign(parse_assign(value))


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """Compile the Java regex of ``subscribePattern``."""
    # connect.api pulls in pydantic (~0.1 s): import it only when a pattern is used.
    from connect.api import compile_java_regex

    try:
        return compile_java_regex(pattern)
    except ValueError as exc:
        raise OptionError(
            f"Option 'subscribePattern': invalid regular expression '{pattern}': {exc}"
        ) from None


def parse_assign(value: str) -> tuple[TopicPartition, ...]:
    """``{"topicA":[0,1],"topicB":[2,4]}`` -> (("topicA", 0), ("topicA", 1), ...)."""
    if not value.strip().startswith("{"):
        raise OptionError(f"No topicpartitions to assign as specified value for option 'assign' is '{value}'")
    bad = OptionError(f"Option 'assign': expected e.g. {_ASSIGN_EXAMPLE}, got {value}")
    try:
        parsed = json.loads(value)
    except ValueError:
        raise bad from None
    if not isinstance(parsed, dict):
        raise bad
    out: list[TopicPartition] = []
    for topic, parts in parsed.items():
        if not isinstance(parts, list) or not all(_is_int(p) and p >= 0 for p in parts):
            raise bad
        out.extend((topic, int(p)) for p in parts)
    if not out:
        raise OptionError(f"No topicpartitions to assign as specified value for option 'assign' is '{value}'")
    return tuple(dict.fromkeys(out))


def _kafka_params(opts: Mapping[str, str]) -> dict[str, str]:
    params = {k[len("kafka.") :]: v for k, v in opts.items() if k.startswith("kafka.")}
    for key, reason in _REFUSED_KAFKA.items():
        if key in params:
            raise OptionError(reason)
    plain = opts.get(_PLAIN_BOOTSTRAP)
    prefixed = params.get("bootstrap.servers")
    if plain is not None and prefixed is not None and plain.strip() != prefixed.strip():
        raise OptionError(
            f"Options '{_BOOTSTRAP}' ({prefixed}) and '{_PLAIN_BOOTSTRAP}' ({plain}) disagree: give only one"
        )
    servers = (prefixed if prefixed is not None else plain or "").strip()
    if not servers:
        raise OptionError(f"Option '{_BOOTSTRAP}' must be specified for configuring Kafka consumer")
    params["bootstrap.servers"] = servers
    level = params.get("isolation.level")
    if level is not None and level.strip().lower() not in ("read_uncommitted", "read_committed"):
        raise OptionError(
            f"Option 'kafka.isolation.level' must be read_uncommitted or read_committed, got '{level}'"
        )
    return librdkafka_params(params)


_JAAS_FIELD = re.compile(r'\b(username|password)\s*=\s*"((?:[^"\\]|\\.)*)"')


def librdkafka_params(params: Mapping[str, str]) -> dict[str, str]:
    """Java-client settings with a librdkafka equivalent, translated; everything else as given.

    Spark users set SASL credentials as a JAAS line (``kafka.sasl.jaas.config``), which
    librdkafka does not read: its username and password become ``sasl.username`` /
    ``sasl.password``."""
    out = dict(params)
    jaas = out.pop("sasl.jaas.config", None)
    if jaas is not None:
        found = {m.group(1): m.group(2).replace('\\"', '"') for m in _JAAS_FIELD.finditer(jaas)}
        if "username" not in found or "password" not in found:
            raise OptionError(
                "Option 'kafka.sasl.jaas.config': only PLAIN and SCRAM login modules with username=\"...\" "
                'password="..." can be translated for the Kafka client (librdkafka); set librdkafka\'s own '
                "settings instead (kafka.sasl.username, kafka.sasl.password, kafka.sasl.oauthbearer.*, "
                "kafka.sasl.kerberos.*)"
            )
        out.setdefault("sasl.username", found["username"])
        out.setdefault("sasl.password", found["password"])
    return out


def _offset_limit(
    opts: Mapping[str, str], timestamp_key: str, by_timestamp_key: str, offsets_key: str, default: OffsetLimit
) -> OffsetLimit:
    # Spark's order of preference: one timestamp for all, per-partition timestamps, offsets.
    if timestamp_key.lower() in opts:
        raw = opts[timestamp_key.lower()].strip()
        if not _INT.fullmatch(raw) or int(raw) < 0:
            raise OptionError(
                f"Option '{timestamp_key}': expected a single long value (ms since the epoch), got {raw}"
            )
        return GlobalTimestamp(int(raw))
    if by_timestamp_key.lower() in opts:
        raw = opts[by_timestamp_key.lower()]
        return SpecificTimestamps(parse_partition_timestamps(by_timestamp_key, raw))
    value = opts.get(offsets_key.lower())
    if value is None:
        return default
    word = value.strip().lower()
    if word == "latest":
        return LatestOffsets()
    if word == "earliest":
        return EarliestOffsets()
    return SpecificOffsets(parse_partition_offsets(offsets_key, value))


def parse_partition_offsets(option: str, value: str) -> PartitionOffsets:
    """Spark's per-partition offset JSON: ``{"topicA":{"0":23,"1":-1},"topicB":{"0":-2}}``."""
    parsed = _partition_json(option, value, _OFFSETS_EXAMPLE)
    for (topic, part), off in parsed.items():
        if off < EARLIEST:
            raise OptionError(
                f"Option '{option}': offset {off} for {topic}-{part} is invalid; use an offset >= 0, "
                f"-1 for latest or -2 for earliest"
            )
    return parsed


def parse_partition_timestamps(option: str, value: str) -> PartitionOffsets:
    """Per-partition timestamps: ``{"topicA":{"0":1700000000000}}`` (ms since the epoch)."""
    parsed = _partition_json(option, value, _TIMESTAMPS_EXAMPLE)
    for (topic, part), ts in parsed.items():
        if ts < 0:
            raise OptionError(f"Option '{option}': timestamp {ts} for {topic}-{part} is negative")
    return parsed


def _partition_json(option: str, value: str, example: str) -> PartitionOffsets:
    bad = OptionError(f"Option '{option}': expected e.g. {example}, got {value}")
    try:
        parsed: Any = json.loads(value)
    except ValueError:
        raise bad from None
    if not isinstance(parsed, dict) or not parsed:
        raise bad
    out: PartitionOffsets = {}
    for topic, parts in parsed.items():
        if not isinstance(parts, dict) or not parts:
            raise bad
        for part, num in parts.items():
            if not _INT.fullmatch(part.strip()) or int(part) < 0 or not _is_int(num):
                raise bad
            out[(topic, int(part))] = int(num)
    return out


def _check_batch_limits(opts: Mapping[str, str], starting: OffsetLimit, ending: OffsetLimit) -> None:
    if isinstance(starting, LatestOffsets):
        raise OptionError(
            "Option 'startingOffsets': starting offset can't be latest for batch queries on Kafka"
        )
    if isinstance(starting, SpecificOffsets):
        for (topic, part), off in starting.offsets.items():
            if off == LATEST:
                raise OptionError(
                    f"Option 'startingOffsets': startingOffsets for {topic}-{part} can't be latest (-1) "
                    f"for batch queries on Kafka"
                )
    if isinstance(ending, EarliestOffsets):
        raise OptionError(
            "Option 'endingOffsets': ending offset can't be earliest for batch queries on Kafka"
        )
    if isinstance(ending, SpecificOffsets):
        for (topic, part), off in ending.offsets.items():
            if off == EARLIEST:
                raise OptionError(
                    f"Option 'endingOffsets': ending offset for {topic}-{part} can't be earliest (-2) "
                    f"for batch queries on Kafka"
                )
    if isinstance(starting, SpecificOffsets) and isinstance(ending, SpecificOffsets):
        _check_pairs(_STARTING_OFFSETS, _ENDING_OFFSETS, starting.offsets, ending.offsets, "offset")
    if isinstance(starting, SpecificTimestamps) and isinstance(ending, SpecificTimestamps):
        _check_pairs(
            _STARTING_BY_TIMESTAMP, _ENDING_BY_TIMESTAMP, starting.timestamps, ending.timestamps, "timestamp"
        )


def _check_pairs(
    start_name: str,
    end_name: str,
    start: Mapping[TopicPartition, int],
    end: Mapping[TopicPartition, int],
    what: str,
) -> None:
    if set(start) != set(end):
        raise OptionError(
            f"Options '{start_name}' and '{end_name}' must name the same topic partitions: "
            f"{_tps(start)} vs {_tps(end)}"
        )
    for tp in sorted(start):
        s, e = start[tp], end[tp]
        # Negative values are "earliest"/"latest" markers, resolved later.
        if s > e and s >= 0 and e >= 0:
            raise OptionError(
                f"Options '{start_name}' and '{end_name}': the starting {what} ({s}) for {tp[0]}-{tp[1]} is "
                f"greater than the ending {what} ({e})"
            )


def _tps(tps: Iterable[TopicPartition]) -> str:
    return "[" + ", ".join(f"{t}-{p}" for t, p in sorted(tps)) + "]"


_INT = re.compile(r"-?\d+")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _boolean(opts: Mapping[str, str], name: str, default: bool) -> bool:
    raw = opts.get(name.lower())
    if raw is None:
        return default
    word = raw.strip().lower()
    if word not in ("true", "false"):
        raise OptionError(f"Option '{name}' must be true or false, got '{raw}'")
    return word == "true"


def choice(opts: Mapping[str, str], name: str, choices: tuple[str, ...], default: str) -> str:
    raw = opts.get(name.lower())
    if raw is None:
        return default
    word = raw.strip().lower()
    if word not in choices:
        raise OptionError(f"Option '{name}' must be one of {', '.join(choices)}, got '{raw}'")
    return word


def _int(opts: Mapping[str, str], name: str, minimum: int, what: str) -> int | None:
    raw = opts.get(name.lower())
    if raw is None:
        return None
    text = raw.strip()
    if not _INT.fullmatch(text) or int(text) < minimum:
        raise OptionError(f"Option '{name}' must be {what}, got '{raw}'")
    return int(text)


def _positive_int(opts: Mapping[str, str], name: str) -> int | None:
    return _int(opts, name, 1, "a positive integer")


def non_negative_int(opts: Mapping[str, str], name: str) -> int | None:
    return _int(opts, name, 0, "an integer >= 0")


_DURATION = re.compile(r"(\d+)\s*([a-z]*)")
_UNIT_MS = {"": 1.0, "us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0, "min": 60_000.0, "h": 3_600_000.0}
_UNIT_MS["d"] = 86_400_000.0


def parse_duration_ms(name: str, value: str) -> int:
    """Spark's time strings (``timeStringAsMs``): ``15m``, ``30s``, ``500ms``, ``2h``; no unit = ms."""
    m = _DURATION.fullmatch(value.strip().lower())
    if not m or m.group(2) not in _UNIT_MS:
        raise OptionError(
            f"Option '{name}': invalid duration '{value}'; use a number with a unit: us, ms, s, m, min, "
            f"h or d"
        )
    return int(int(m.group(1)) * _UNIT_MS[m.group(2)])


# ---------------------------------------------------------------------------------------
# Offsets in the checkpoint: Spark's own KafkaSourceOffset JSON, {"topic": {"0": 23}}.


def offsets_to_json(offsets: Mapping[TopicPartition, int]) -> dict[str, dict[str, int]]:
    """Offsets as the JSON-able dict Spark stores; sorted, because Spark compares offsets as text."""
    out: dict[str, dict[str, int]] = {}
    for topic, part in sorted(offsets):
        out.setdefault(topic, {})[str(part)] = offsets[(topic, part)]
    return out


def offsets_from_json(value: Mapping[str, Any]) -> PartitionOffsets:
    """The inverse of ``offsets_to_json`` (for offsets read back from a checkpoint)."""
    out: PartitionOffsets = {}
    for topic, parts in value.items():
        if not isinstance(parts, Mapping):
            raise ValueError(f"not a sluiceway/Kafka source offset: {dict(value)!r}")
        for part, off in parts.items():
            out[(topic, int(part))] = int(off)
    return out


# ---------------------------------------------------------------------------------------
# Offset arithmetic.


def rate_limit(
    limit: int,
    start: Mapping[TopicPartition, int],
    latest: Mapping[TopicPartition, int],
    new_partition_starts: Mapping[TopicPartition, int],
) -> PartitionOffsets:
    """End offsets for a micro-batch of at most about ``limit`` offsets (Spark's ``rateLimit``).

    The budget is shared in proportion to each partition's backlog; a partition whose share
    is below one offset still gets one, so small partitions are never starved (the total can
    then exceed ``limit`` by at most the number of partitions). ``new_partition_starts`` are
    the earliest offsets of partitions in ``latest`` but not in ``start``."""
    sizes: dict[TopicPartition, int] = {}
    for tp, end in latest.items():
        begin = start.get(tp, new_partition_starts.get(tp))
        if begin is not None and end - begin > 0:
            sizes[tp] = end - begin
    total = sum(sizes.values())
    if total < 1:
        return dict(latest)
    out: PartitionOffsets = {}
    for tp, end in latest.items():
        if tp not in sizes:
            out[tp] = end
            continue
        begin = start[tp] if tp in start else new_partition_starts[tp]
        share = limit * (sizes[tp] / total)
        out[tp] = min(end, begin + (math.ceil(share) if share < 1 else math.floor(share)))
    return out


@dataclass(frozen=True)
class OffsetRange:
    """Offsets [start, end) of one topic partition; one Spark task reads one range."""

    topic: str
    partition: int
    start: int
    end: int

    @property
    def size(self) -> int:
        return self.end - self.start


def split_ranges(
    ranges: Iterable[OffsetRange], min_partitions: int | None = None, max_records: int | None = None
) -> list[OffsetRange]:
    """The ranges Spark tasks read: empty ranges dropped, large ones split.

    ``min_partitions`` (Spark's ``KafkaOffsetRangeCalculator``): when there are fewer
    non-empty ranges than that, ranges holding a large share of the data are cut into parts
    proportional to their size. ``max_records``: no part is larger than that."""
    nonempty = [r for r in ranges if r.size > 0]
    if min_partitions is not None and len(nonempty) < min_partitions:
        nonempty = _divvy(nonempty, min_partitions)
    if max_records is not None:
        capped: list[OffsetRange] = []
        for r in nonempty:
            capped.extend(_cut(r, math.ceil(r.size / max_records)) if r.size > max_records else [r])
        nonempty = capped
    return nonempty


def _part_count(size: int, total: int, parts: int) -> int:
    # Scala's math.round rounds halves up; Python's round() would round them to even.
    return max(math.floor(size / total * parts + 0.5), 1)


def _divvy(ranges: list[OffsetRange], min_partitions: int) -> list[OffsetRange]:
    total = sum(r.size for r in ranges)
    # Ranges too small to split are left out of the proportional arithmetic for the others.
    unsplit = [r for r in ranges if _part_count(r.size, total, min_partitions) == 1]
    split_total = total - sum(r.size for r in unsplit)
    split_min = max(min_partitions - len(unsplit), 1)
    unsplit_ids = {id(r) for r in unsplit}
    out: list[OffsetRange] = []
    for r in ranges:
        parts = 1 if id(r) in unsplit_ids else _part_count(r.size, split_total, split_min)
        out.extend(_cut(r, parts))
    return [r for r in out if r.size > 0]


def _cut(r: OffsetRange, parts: int) -> list[OffsetRange]:
    out: list[OffsetRange] = []
    remaining, begin = r.size, r.start
    for part in range(parts):
        # The last part takes the rounding remainder.
        this = remaining // (parts - part)
        remaining -= this
        end = min(begin + this, r.end)
        out.append(OffsetRange(r.topic, r.partition, begin, end))
        begin = end
    return out
