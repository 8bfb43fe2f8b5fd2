"""``sluiceway console-producer``: Kafka's ``kafka-console-producer.sh``.

Every line of stdin becomes a record of ``--topic``; ``--property parse.key=true``
(with ``key.separator``) and ``parse.headers=true`` split keys and headers off the line
exactly as Kafka's LineMessageReader. At end of input every record is flushed and the
command exits 0; a line that cannot be parsed is reported with its number and the
command exits 1 after delivering the lines before it, as Kafka does. A record the
broker refuses is reported and makes the exit code 1.

Client settings: ``--producer.config`` file < ``--producer-property`` < the explicit flags.
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from confluent_kafka import KafkaError, Message, Producer

from sluiceway.broker_tools.console_formats import (
    ENCODING,
    ERRORS,
    Header,
    LineFormatError,
    LineReaderSettings,
    parse_line,
)
from sluiceway.broker_tools.kafka_clients import (
    EXIT_ERROR,
    EXIT_OK,
    ConnectionErrors,
    ToolError,
    add_bootstrap_argument,
    add_client_settings_arguments,
    api_timeout_s,
    build,
    client_config,
    key_value,
    librdkafka_settings,
    reach_cluster,
    read_properties_file,
    run_command,
    warn,
)

COMPRESSION_CODECS = ("none", "gzip", "snappy", "lz4", "zstd")


def build_parser(prog: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog, description="Read lines from standard input and publish them to a topic."
    )
    add_bootstrap_argument(p, "--broker-list")
    p.add_argument("--topic", required=True, help="REQUIRED: the topic to produce to")
    p.add_argument(
        "--property",
        "--reader-property",
        dest="property",
        action="append",
        type=key_value,
        default=[],
        metavar="KEY=VALUE",
        help="line reader setting: parse.key, key.separator, parse.headers, headers.delimiter, "
        "headers.separator, headers.key.separator, ignore.error, null.marker",
    )
    add_client_settings_arguments(p, "producer", ", e.g. acks=all")
    p.add_argument(
        "--compression-codec",
        nargs="?",
        const="gzip",
        choices=COMPRESSION_CODECS,
        help="compression of the batches ('gzip' when given without a value)",
    )
    p.add_argument(
        "--request-required-acks", metavar="ACKS", help="acks of the producer requests (-1, 0, 1, all)"
    )
    p.add_argument("--timeout", type=int, metavar="MS", help="linger.ms: how long a batch may wait to fill")
    p.add_argument("--sync", action="store_true", help="send each record and wait for it before the next")
    p.add_argument(
        "--value-format",
        choices=("string", "avro", "json-schema", "protobuf"),
        default="string",
        help="avro: each value is a line of Avro JSON; json-schema: a JSON document checked against "
        "--value-schema; protobuf: a message in Protobuf's JSON mapping; written in Confluent's wire format",
    )
    p.add_argument(
        "--schema-registry",
        metavar="URL",
        help="the Schema Registry (with a --value-format other than string)",
    )
    p.add_argument(
        "--value-schema",
        metavar="JSON",
        help="the values' schema: Avro, JSON Schema or .proto text by --value-format (as <topic>-value)",
    )
    return p


if TYPE_CHECKING:
    from sluiceway.broker_tools.registry_formats import RegistryLines


class DeliveryReport:
    """Delivery callback: counts and reports records the broker refused (Kafka's ErrorLoggingCallback)."""

    def __init__(self, topic: str) -> None:
        self.topic = topic
        self.failed = 0

    def __call__(self, err: KafkaError | None, msg: Message) -> None:
        if err is None:
            return
        self.failed += 1
        key, value = msg.key(), msg.value()
        key_text = "null" if key is None else f"{len(key)} bytes"
        value_text = "null" if value is None else f"{len(value)} bytes"
        print(
            f"Error when sending message to topic {self.topic} with key: {key_text}, value: {value_text} "
            f"with error: {err.str()}",
            file=sys.stderr,
        )


class ConsoleProducer:
    def __init__(self, args: argparse.Namespace, stdin: Iterable[str]) -> None:
        self.args = args
        self.stdin = stdin
        reader_props = dict(args.property)
        unknown = sorted(set(reader_props) - LineReaderSettings.KEYS)
        if unknown:
            warn(f"unknown --property {', '.join(unknown)} ignored")
        try:
            self.reader = LineReaderSettings.from_properties(reader_props)
        except LineFormatError as exc:
            raise ToolError(str(exc)) from None
        props = (
            read_properties_file(args.producer_config, "--producer.config") if args.producer_config else {}
        )
        props.update(dict(args.producer_property))
        self.timeout = api_timeout_s(props)
        settings = librdkafka_settings(props)
        settings.setdefault("client.id", "console-producer")
        if args.compression_codec is not None:
            settings["compression.type"] = args.compression_codec
        if args.request_required_acks is not None:
            settings["acks"] = args.request_required_acks
        if args.timeout is not None:
            settings["linger.ms"] = str(args.timeout)
        self.errors = ConnectionErrors()
        config: dict[str, Any] = client_config(args.bootstrap_server, settings, self.errors)
        self.producer = build(Producer, config, "producer")
        self.report = DeliveryReport(args.topic)
        self.framed: RegistryLines | None = None
        if args.value_format != "string":
            if not args.schema_registry or not args.value_schema:
                raise ToolError(
                    f"--value-format {args.value_format} needs --schema-registry and --value-schema"
                )
            from sluiceway.broker_tools.registry_formats import lines_for  # not a cost of plain lines

            self.framed = lines_for(
                args.value_format, args.schema_registry, f"{args.topic}-value", args.value_schema
            )

    def _send(self, key: bytes | None, value: bytes | None, headers: list[Header]) -> None:
        wire: list[tuple[str, str | bytes | None]] = list(headers)
        while True:
            try:
                self.producer.produce(
                    self.args.topic, value=value, key=key, headers=wire or None, on_delivery=self.report
                )
                break
            except BufferError:  # the local queue is full: let deliveries drain it
                self.producer.poll(0.1)
        self.producer.poll(0)
        if self.args.sync:
            self.producer.flush()

    def run(self) -> int:
        metadata = reach_cluster(
            self.producer, self.args.bootstrap_server, self.errors, self.timeout, self.args.topic
        )
        topic = metadata.topics.get(self.args.topic)
        if topic is None or topic.error is not None:
            reason = (
                topic.error.str() if topic is not None and topic.error is not None else "not in the metadata"
            )
            raise ToolError(f"Topic '{self.args.topic}' is not available: {reason}")
        prompt = sys.stdin.isatty() and sys.stdout.isatty()  # Kafka prompts when it has a console
        bad_line: LineFormatError | None = None
        try:
            for number, line in enumerate(_lines(self.stdin, prompt), start=1):
                parsed = parse_line(line, number, self.reader)
                value = parsed.value
                if self.framed is not None and value is not None:
                    try:
                        value = self.framed.encode(value.decode(), number)
                    except ValueError as exc:  # RegistryFormatError
                        raise LineFormatError(str(exc)) from None
                self._send(parsed.key, value, parsed.headers)
        except LineFormatError as exc:
            bad_line = exc
        finally:
            # What was read before an error or Ctrl-C is still delivered, as Kafka's close() does.
            self.producer.flush()
        if bad_line is not None:
            raise ToolError(str(bad_line))
        return EXIT_ERROR if self.report.failed else EXIT_OK


def _lines(stream: Iterable[str], prompt: bool) -> Iterable[str]:
    """Lines without their terminator (the stream translates every newline form to ``\\n``)."""
    if prompt:
        print(">", end="", flush=True)
    for line in stream:
        yield line[:-1] if line.endswith("\n") else line
        if prompt:
            print(">", end="", flush=True)


def main(argv: list[str] | None = None, prog: str = "sluiceway console-producer") -> int:
    parser = build_parser(prog)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    # newline=None splits on \n, \r\n and \r; surrogateescape keeps undecodable bytes intact.
    stdin = io.TextIOWrapper(sys.stdin.buffer, encoding=ENCODING, errors=ERRORS, newline=None)
    return run_command(lambda: ConsoleProducer(args, stdin).run())


if __name__ == "__main__":
    sys.exit(main())
