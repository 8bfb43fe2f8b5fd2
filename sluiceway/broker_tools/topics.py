"""``sluiceway topics``: Kafka's ``kafka-topics.sh`` over the Kafka protocol.

Create, list, describe, alter (more partitions) and delete topics with Kafka's flags
and output. ``--topic`` is a regular expression for everything but ``--create``, as in
Kafka: ``--describe --topic 'orders.*'`` describes every matching topic; a comma also
separates alternatives. Works against Sluiceway's broker and Apache Kafka alike.
"""

from __future__ import annotations

import argparse
import base64
import re
import sys
from collections.abc import Sequence
from typing import Any

from confluent_kafka import KafkaError, KafkaException, TopicCollection
from confluent_kafka.admin import (  # type: ignore[attr-defined]  # re-exported untyped
    AdminClient,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
)

from sluiceway.broker_tools.configs import config_source
from sluiceway.broker_tools.kafka_clients import (
    EXIT_OK,
    ConnectionErrors,
    ToolError,
    add_bootstrap_argument,
    api_timeout_s,
    build,
    client_config,
    error_code,
    librdkafka_settings,
    reach_cluster,
    read_properties_file,
    run_command,
    wait,
    warn,
)
from sluiceway.broker_tools.layouts import PartitionInfo, TopicInfo, topic_description

# Kafka's Topic.isInternal
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
ACTIONS = ("list", "describe", "create", "alter", "delete")  # the flags, and TopicCommand's methods
_MAX_REPLICATION_FACTOR = 32767


def build_parser(prog: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog, description="Create, delete, describe, or change a topic (kafka-topics)."
    )
    add_bootstrap_argument(p)
    p.add_argument("--command-config", metavar="FILE", help="properties file of admin client settings")
    actions = p.add_mutually_exclusive_group()
    actions.add_argument("--list", action="store_true", help="list all available topics")
    actions.add_argument("--describe", action="store_true", help="list details for the given topics")
    actions.add_argument("--create", action="store_true", help="create a new topic")
    actions.add_argument("--alter", action="store_true", help="increase the number of partitions")
    actions.add_argument("--delete", action="store_true", help="delete a topic")
    p.add_argument(
        "--topic",
        help="the topic to create, alter, describe or delete; a regular expression except with --create",
    )
    p.add_argument("--partitions", type=int, help="number of partitions (create: broker default if absent)")
    p.add_argument("--replication-factor", type=int, help="replication factor (broker default if absent)")
    p.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="topic config override for --create",
    )
    p.add_argument(
        "--if-exists", action="store_true", help="alter, delete or describe only if the topic exists"
    )
    p.add_argument("--if-not-exists", action="store_true", help="create only if the topic does not exist")
    p.add_argument(
        "--exclude-internal", action="store_true", help="exclude internal topics when listing or describing"
    )
    return p


def _check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> str:
    chosen = [a for a in ACTIONS if getattr(args, a)]
    if len(chosen) != 1:
        parser.error(
            "Command must include exactly one action: --list, --describe, --create, --alter or --delete"
        )
    action = chosen[0]
    if action in ("create", "alter", "delete") and not args.topic:
        parser.error(f"--topic is required with --{action}")
    if action == "alter" and args.partitions is None:
        parser.error("--partitions is required with --alter")
    allowed = {
        "partitions": ("create", "alter"),
        "replication_factor": ("create",),
        "config": ("create",),
        "if_exists": ("alter", "delete", "describe"),
        "if_not_exists": ("create",),
        "exclude_internal": ("list", "describe"),
    }
    for option, actions in allowed.items():
        if getattr(args, option) not in (None, False, []) and action not in actions:
            parser.error(f'Option "[{option.replace("_", "-")}]" can\'t be used with option "[{action}]"')
    return action


def parse_topic_configs(items: Sequence[str]) -> dict[str, str]:
    """``--config k=v`` values, split as Kafka does (on ``=`` with blanks around it)."""
    out: dict[str, str] = {}
    for item in items:
        parts = re.split(r"\s*=\s*", item)
        while parts and parts[-1] == "":  # Java's split drops trailing empty strings
            parts.pop()
        if len(parts) != 2:
            raise ToolError(
                "requirement failed: Invalid topic config: "
                'all configs to be added must be in the format "key=val".',
                bare=True,
            )
        out[parts[0].strip()] = parts[1].strip()
    return out


def topic_pattern(raw: str) -> re.Pattern[str]:
    """Kafka's IncludeList: commas mean "or", blanks and surrounding quotes are dropped."""
    regex = re.sub(r"[\"']+$", "", re.sub(r"^[\"']+", "", raw.strip().replace(",", "|").replace(" ", "")))
    try:
        return re.compile(regex)
    except re.error as exc:
        raise ToolError(f"{raw!r} is an invalid regex: {exc}", bare=True) from None


def matching_topics(names: Sequence[str], raw: str | None, exclude_internal: bool) -> list[str]:
    pattern = topic_pattern(raw) if raw is not None else None
    return [
        n
        for n in sorted(names)
        if (pattern is None or pattern.fullmatch(n)) and not (exclude_internal and n in INTERNAL_TOPICS)
    ]


def kafka_uuid(uuid: Any) -> str | None:
    """Kafka's text form of a topic id (URL-safe base64, no padding); None for the zero id."""
    msb, lsb = uuid.get_most_significant_bits(), uuid.get_least_significant_bits()
    if msb == 0 and lsb == 0:
        return None
    raw = msb.to_bytes(8, "big", signed=True) + lsb.to_bytes(8, "big", signed=True)
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


class TopicCommand:
    def __init__(self, args: argparse.Namespace, action: str) -> None:
        self.args = args
        self.action = action
        props = read_properties_file(args.command_config, "--command-config") if args.command_config else {}
        self.timeout = api_timeout_s(props)
        self.errors = ConnectionErrors()
        config = client_config(args.bootstrap_server, librdkafka_settings(props), self.errors)
        self.admin = build(AdminClient, config, "admin client")
        self.all_topics: list[str] = []

    def run(self) -> int:
        metadata = reach_cluster(self.admin, self.args.bootstrap_server, self.errors, self.timeout)
        self.all_topics = list(metadata.topics)
        getattr(self, f"{self.action}_topics")()
        return EXIT_OK

    def _selected(self) -> list[str]:
        topics = matching_topics(self.all_topics, self.args.topic, self.args.exclude_internal)
        if self.args.topic and not topics and not self.args.if_exists:
            raise ToolError(f"Topic '{self.args.topic}' does not exist as expected", bare=True)
        return topics

    def list_topics(self) -> None:
        print("\n".join(matching_topics(self.all_topics, self.args.topic, self.args.exclude_internal)))

    def create_topics(self) -> None:
        a = self.args
        if a.replication_factor is not None and not 1 <= a.replication_factor <= _MAX_REPLICATION_FACTOR:
            raise ToolError(
                f"The replication factor must be between 1 and {_MAX_REPLICATION_FACTOR} inclusive", bare=True
            )
        if a.partitions is not None and a.partitions < 1:
            raise ToolError("The partitions must be greater than 0", bare=True)
        configs = parse_topic_configs(a.config)
        if "." in a.topic or "_" in a.topic:  # Kafka's Topic.hasCollisionChars
            warn(
                "Due to limitations in metric names, topics with a period ('.') or underscore ('_') could "
                "collide. To avoid issues it is best to use either, but not both."
            )
        new = NewTopic(
            a.topic,
            num_partitions=-1 if a.partitions is None else a.partitions,
            replication_factor=-1 if a.replication_factor is None else a.replication_factor,
            config=configs,
        )
        future = self.admin.create_topics([new], request_timeout=self.timeout)[a.topic]
        try:
            wait(future, self.timeout, "create topic")
        except KafkaException as exc:
            if a.if_not_exists and error_code(exc) == KafkaError.TOPIC_ALREADY_EXISTS:
                return
            raise
        print(f"Created topic {a.topic}.")

    def describe_topics(self) -> None:
        topics = self._selected()
        if not topics:
            return
        described = self.admin.describe_topics(TopicCollection(topics), request_timeout=self.timeout)
        resources = {t: ConfigResource(ConfigResource.Type.TOPIC, t) for t in topics}
        configs = self.admin.describe_configs(list(resources.values()), request_timeout=self.timeout)
        out = []
        for name in topics:
            try:
                desc = wait(described[name], self.timeout, f"describe topic {name}")
            except KafkaException as exc:
                if error_code(exc) == KafkaError.UNKNOWN_TOPIC_OR_PART and self.args.if_exists:
                    continue  # deleted since it was listed
                raise
            entries = wait(configs[resources[name]], self.timeout, f"describe configs of {name}")
            out.append(
                topic_description(
                    TopicInfo(
                        name=name,
                        topic_id=kafka_uuid(desc.topic_id),
                        partitions=[
                            PartitionInfo(
                                partition=p.id,
                                leader=None if p.leader is None or p.leader.id < 0 else p.leader.id,
                                replicas=[n.id for n in p.replicas],
                                isr=[n.id for n in p.isr],
                            )
                            for p in desc.partitions
                        ],
                        # Java's ConfigEntry.isDefault(): the source is the default config.
                        configs=[
                            (e.name, e.value)
                            for e in entries.values()
                            if config_source(e) != ConfigSource.DEFAULT_CONFIG.value
                        ],
                    )
                )
            )
        sys.stdout.write("".join(out))

    def alter_topics(self) -> None:
        topics = self._selected()
        if not topics:
            return
        futures = self.admin.create_partitions(
            [NewPartitions(t, self.args.partitions) for t in topics], request_timeout=self.timeout
        )
        for topic in topics:
            wait(futures[topic], self.timeout, f"alter topic {topic}")

    def delete_topics(self) -> None:
        topics = self._selected()
        if not topics:
            return
        futures = self.admin.delete_topics(topics, request_timeout=self.timeout)
        for topic in topics:
            wait(futures[topic], self.timeout, f"delete topic {topic}")


def main(argv: list[str] | None = None, prog: str = "sluiceway topics") -> int:
    parser = build_parser(prog)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    action = _check_arguments(parser, args)
    return run_command(lambda: TopicCommand(args, action).run(), "Error while executing topic command : ")


if __name__ == "__main__":
    sys.exit(main())
