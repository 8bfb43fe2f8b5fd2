"""``sluiceway console-consumer``: Kafka's ``kafka-console-consumer.sh``.

Prints the records of ``--topic`` (or of every topic matching ``--include``) to stdout
with Kafka's DefaultMessageFormatter (``--property print.key=true`` ...), and
"Processed a total of N messages" to stderr when it stops: after ``--max-messages``,
after ``--timeout-ms`` without a record, or on Ctrl-C / SIGTERM.

Groups as in Kafka: without ``--group`` the consumer joins a random
``console-consumer-NNNNN`` group and commits nothing (unless ``enable.auto.commit`` is
set); with ``--group`` it commits the offsets of the records it printed - exactly those,
so a ``--max-messages`` run leaves the group right after its last printed record. (A
partition it printed nothing from gets no committed offset: librdkafka, unlike Kafka's
Java consumer, has no position to commit for it.)
``--partition P --offset N|earliest|latest`` reads one partition without a group.

Unlike Kafka's Java consumer, which waits for a missing topic to appear, a ``--topic``
that does not exist is an error (exit 1): it is almost always a typo.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sys
import time
from types import FrameType
from typing import TYPE_CHECKING, Any, BinaryIO

from confluent_kafka import (
    OFFSET_BEGINNING,
    OFFSET_END,
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    TopicPartition,
)

from sluiceway.broker_tools.console_formats import ConsumedRecord, FormatterSettings, Header, format_record
from sluiceway.broker_tools.kafka_clients import (
    EXIT_OK,
    ConnectionErrors,
    ToolError,
    add_bootstrap_argument,
    add_client_settings_arguments,
    api_timeout_s,
    build,
    client_config,
    error_code,
    key_value,
    librdkafka_settings,
    reach_cluster,
    read_properties_file,
    run_command,
    warn,
)

if TYPE_CHECKING:
    from sluiceway.broker_tools.registry_formats import RegistryLines

_POLL_S = 0.2
_BATCH = 500
# Errors that end the consumer: the topic is gone or forbidden, or the client is unusable.
_FATAL_CODES = frozenset(
    {
        KafkaError.UNKNOWN_TOPIC_OR_PART,
        KafkaError.TOPIC_AUTHORIZATION_FAILED,
        KafkaError.GROUP_AUTHORIZATION_FAILED,
        KafkaError._UNKNOWN_TOPIC,
        KafkaError._UNKNOWN_PARTITION,
    }
)


def build_parser(prog: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description="Read records from topics and print them to stdout.")
    add_bootstrap_argument(p)
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--topic", help="the topic to consume")
    source.add_argument(
        "--include", "--whitelist", dest="include", metavar="REGEX", help="consume every topic matching REGEX"
    )
    p.add_argument(
        "--partition", type=int, help="consume only this partition (with --topic, without a group)"
    )
    p.add_argument(
        "--offset", help="with --partition: a non-negative offset, 'earliest' or 'latest' (the default)"
    )
    p.add_argument(
        "--from-beginning",
        action="store_true",
        help="without a committed offset, start at the earliest record instead of the latest",
    )
    p.add_argument("--group", help="the consumer group id (default: a random console-consumer-NNNNN)")
    p.add_argument("--max-messages", type=int, metavar="N", help="exit after N records")
    p.add_argument("--timeout-ms", type=int, metavar="MS", help="exit after MS milliseconds without a record")
    p.add_argument(
        "--property",
        "--formatter-property",
        dest="property",
        action="append",
        type=key_value,
        default=[],
        metavar="KEY=VALUE",
        help="formatter setting: print.key, print.value, print.timestamp, print.partition, print.offset, "
        "print.headers, key.separator, line.separator, headers.separator, null.literal",
    )
    add_client_settings_arguments(p, "consumer")
    p.add_argument("--isolation-level", choices=("read_committed", "read_uncommitted"))
    p.add_argument(
        "--value-format",
        choices=("string", "avro", "json-schema", "protobuf"),
        default="string",
        help="avro / json-schema / protobuf: values in Confluent's wire format, printed as Avro JSON / "
        "as JSON / in Protobuf's JSON mapping",
    )
    p.add_argument(
        "--schema-registry",
        metavar="URL",
        help="the Schema Registry (with a --value-format other than string)",
    )
    return p


def parse_offset(text: str | None, from_beginning: bool) -> int:
    """librdkafka's start offset of ``--offset`` (Kafka's rules and message)."""
    if text is None:
        return OFFSET_BEGINNING if from_beginning else OFFSET_END
    lowered = text.lower()
    if lowered == "earliest":
        return OFFSET_BEGINNING
    if lowered == "latest":
        return OFFSET_END
    try:
        offset = int(text)
    except ValueError:
        offset = -1
    if offset < 0:
        raise ValueError(
            f"The provided offset value '{text}' is incorrect. Valid values are 'earliest', 'latest', "
            "or a non-negative long."
        )
    return offset


def _check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if args.partition is not None:
        if args.topic is None:
            parser.error("The topic is required when partition is specified.")
        if args.from_beginning and args.offset is not None:
            parser.error("Options from-beginning and offset cannot be specified together.")
    elif args.offset is not None:
        parser.error("The partition is required when offset is specified.")
    if args.max_messages is not None and args.max_messages < 0:
        parser.error("--max-messages must not be negative")
    try:
        return parse_offset(args.offset, args.from_beginning)
    except ValueError as exc:
        parser.error(str(exc))


class ConsoleConsumer:
    def __init__(self, args: argparse.Namespace, start_offset: int, out: BinaryIO) -> None:
        self.args = args
        self.start_offset = start_offset
        self.out = out
        formatter_props = dict(args.property)
        unknown = sorted(set(formatter_props) - FormatterSettings.KEYS)
        if unknown:
            warn(f"unknown --property {', '.join(unknown)} ignored")
        self.formatter = FormatterSettings.from_properties(formatter_props)
        file_props = (
            read_properties_file(args.consumer_config, "--consumer.config") if args.consumer_config else {}
        )
        extra = dict(args.consumer_property)
        props = {**file_props, **extra}
        self.timeout = api_timeout_s(props)
        groups = {g for g in (args.group, file_props.get("group.id"), extra.get("group.id")) if g is not None}
        if len(groups) > 1:
            listed = ", ".join(f"'{g}'" for g in sorted(groups))
            raise ToolError(
                "The group ids provided in different places (directly using '--group', "
                "via '--consumer-property', "
                f"or via '--consumer.config') do not match. Detected group ids: {listed}",
                bare=True,
            )
        if groups and args.partition is not None:
            raise ToolError("Options group and partition cannot be specified together.", bare=True)
        reset = props.get("auto.offset.reset")
        if reset is not None and args.from_beginning and reset != "earliest":
            raise ToolError(
                f"Can't simultaneously specify --from-beginning and 'auto.offset.reset={reset}', "
                "please remove one option",
                bare=True,
            )
        settings = librdkafka_settings(props)
        settings.setdefault("auto.offset.reset", "earliest" if args.from_beginning else "latest")
        settings.setdefault("client.id", "console-consumer")
        if args.isolation_level:
            settings["isolation.level"] = args.isolation_level
        if groups:
            settings["group.id"] = groups.pop()
        else:
            # The generated group is not meant to be used again: by default it commits nothing.
            settings["group.id"] = f"console-consumer-{random.randrange(100000)}"
            settings.setdefault("enable.auto.commit", "false")
        # Offsets are stored only for printed records, so a commit never skips an unprinted one.
        settings["enable.auto.offset.store"] = "false"
        self.commits = str(settings.get("enable.auto.commit", "true")).lower() == "true"
        self.errors = ConnectionErrors()
        config: dict[str, Any] = client_config(args.bootstrap_server, settings, self.errors)
        self.consumer = build(Consumer, config, "consumer")
        self.framed: RegistryLines | None = None
        if args.value_format != "string":
            if not args.schema_registry:
                raise ToolError(f"--value-format {args.value_format} needs --schema-registry")
            from sluiceway.broker_tools.registry_formats import lines_for  # not a cost of plain values

            self.framed = lines_for(args.value_format, args.schema_registry, "", None)
        self.count = 0
        self.consuming = False
        self.stopped_by: int | None = None

    def _stop(self, signum: int, _frame: FrameType | None) -> None:
        self.stopped_by = signum

    def _subscribe(self) -> None:
        a = self.args
        if a.include is not None:
            # librdkafka subscribes to a regex when the name starts with "^"; Kafka matches whole names.
            self.consumer.subscribe([f"^({a.include})$"])
            return
        metadata = reach_cluster(self.consumer, a.bootstrap_server, self.errors, self.timeout, a.topic)
        topic = metadata.topics.get(a.topic)
        if topic is None or topic.error is not None:
            code = topic.error.code() if topic is not None and topic.error is not None else None
            if code in (None, KafkaError.UNKNOWN_TOPIC_OR_PART):
                raise ToolError(f"Topic '{a.topic}' does not exist")
            raise ToolError(f"Topic '{a.topic}' is not available: {topic.error.str()}")  # type: ignore[union-attr]
        if a.partition is None:
            self.consumer.subscribe([a.topic])
        elif a.partition not in topic.partitions:
            raise ToolError(f"Partition {a.partition} of topic '{a.topic}' does not exist")
        else:
            self.consumer.assign([TopicPartition(a.topic, a.partition, self.start_offset)])

    def _write(self, messages: list[Message]) -> None:
        last: dict[tuple[str, int], int] = {}
        for m in messages:
            err = m.error()
            if err is not None:
                if err.code() == KafkaError._PARTITION_EOF:
                    continue
                if err.fatal() or err.code() in _FATAL_CODES:
                    raise ToolError(err.str())
                warn(err.str())
                continue
            ts_type, ts = m.timestamp()
            value = m.value()
            if self.framed is not None:
                try:
                    value = self.framed.decode(value)
                except ValueError as exc:  # RegistryFormatError
                    warn(f"{m.topic()}-{m.partition()} offset {m.offset()}: {exc}")
                    value = b"<not Avro: " + str(exc).encode() + b">"
            record = ConsumedRecord(
                timestamp_type=ts_type,
                timestamp=ts,
                partition=m.partition() or 0,
                offset=m.offset() or 0,
                headers=_headers(m),
                key=m.key(),
                value=value,
            )
            self.out.write(format_record(record, self.formatter))
            self.count += 1
            last[(m.topic() or "", m.partition() or 0)] = (m.offset() or 0) + 1
        if last:
            self.out.flush()
            self.consumer.store_offsets(offsets=[TopicPartition(t, p, o) for (t, p), o in last.items()])

    def run(self) -> int:
        try:
            if self.args.include is not None:
                reach_cluster(self.consumer, self.args.bootstrap_server, self.errors, self.timeout)
            self._subscribe()
            self.consuming = True
            # From here on Ctrl-C and SIGTERM end the loop, so the printed records get committed.
            previous = {s: signal.signal(s, self._stop) for s in (signal.SIGINT, signal.SIGTERM)}
            try:
                self._consume()
            finally:
                for s, handler in previous.items():
                    signal.signal(s, handler)
        finally:
            self._close()
        return EXIT_OK if self.stopped_by is None else 128 + self.stopped_by

    def _consume(self) -> None:
        limit = self.args.max_messages
        idle_limit = None if self.args.timeout_ms is None else self.args.timeout_ms / 1000
        last_record = time.monotonic()
        while self.stopped_by is None and (limit is None or self.count < limit):
            batch = _BATCH if limit is None else min(_BATCH, limit - self.count)
            wait_s = (
                _POLL_S
                if idle_limit is None
                else max(0.0, min(_POLL_S, idle_limit - (time.monotonic() - last_record)))
            )
            messages = self.consumer.consume(batch, timeout=wait_s)
            before = self.count
            try:
                self._write(messages)
            except BrokenPipeError:
                # The reader went away (e.g. "| head"): stop like Kafka, without a traceback at exit.
                print("Unable to write to standard out, closing consumer.", file=sys.stderr)
                os.dup2(os.open(os.devnull, os.O_WRONLY), self.out.fileno())
                return
            if self.count > before:
                last_record = time.monotonic()
            elif idle_limit is not None and time.monotonic() - last_record >= idle_limit:
                return

    def _close(self) -> None:
        try:
            if self.commits and self.count:
                try:
                    self.consumer.commit(asynchronous=False)
                except KafkaException as exc:
                    if error_code(exc) != KafkaError._NO_OFFSET:
                        warn(f"could not commit the offsets of the printed records: {exc.args[0].str()}")
            self.consumer.close()
        finally:
            if self.consuming:
                print(f"Processed a total of {self.count} messages", file=sys.stderr)


def _headers(m: Message) -> list[Header]:
    raw = m.headers() or []
    pairs = raw.items() if isinstance(raw, dict) else raw
    return [(k, v.encode() if isinstance(v, str) else v) for k, v in pairs]


def main(argv: list[str] | None = None, prog: str = "sluiceway console-consumer") -> int:
    parser = build_parser(prog)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    start_offset = _check_arguments(parser, args)
    return run_command(lambda: ConsoleConsumer(args, start_offset, sys.stdout.buffer).run())


if __name__ == "__main__":
    sys.exit(main())
