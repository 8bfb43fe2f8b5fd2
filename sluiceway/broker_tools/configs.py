"""``sluiceway configs``: Kafka's ``kafka-configs.sh`` for topics, over the Kafka protocol.

``--describe`` prints a topic's dynamic (or with ``--all``, every) config in Kafka's
layout; ``--alter`` applies ``--add-config k1=v1,k2=[a,b]`` and ``--delete-config k1,k2``
with IncrementalAlterConfigs, so other overrides of the topic stay as they are.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence

from confluent_kafka.admin import (  # type: ignore[attr-defined]  # re-exported untyped
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
)

from sluiceway.broker_tools.kafka_clients import (
    EXIT_OK,
    ConnectionErrors,
    ToolError,
    add_bootstrap_argument,
    api_timeout_s,
    build,
    client_config,
    librdkafka_settings,
    reach_cluster,
    read_properties_file,
    run_command,
    wait,
)
from sluiceway.broker_tools.layouts import ConfigLine, config_description

ENTITY_TYPES = ("topics",)
# A comma or "=" outside square brackets: "k1=v1,k2=[a,b]" is two configs.
_OUTSIDE_BRACKETS = r"(?=[^\]]*(?:\[|$))"


def parse_add_config(text: str) -> dict[str, str]:
    """``--add-config`` as Kafka splits it: commas inside ``[...]`` belong to the value."""
    items = re.split("," + _OUTSIDE_BRACKETS, text)
    while items and items[-1] == "":  # Java's String.split drops trailing empty strings
        items.pop()
    out: dict[str, str] = {}
    for item in items:
        pair = re.split(r"\s*=\s*" + _OUTSIDE_BRACKETS, item)
        if len(pair) != 2:
            raise ToolError(
                'Invalid entity config: all configs to be added must be in the format "key=val".', bare=True
            )
        out[pair[0].strip()] = re.sub(r"[\[\]]", "", pair[1]).strip()
    return out


def parse_delete_config(values: Sequence[str]) -> list[str]:
    return [k.strip() for v in values for k in v.split(",") if k.strip()]


def build_parser(prog: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description="Describe and alter topic configs (kafka-configs).")
    add_bootstrap_argument(p)
    p.add_argument("--command-config", metavar="FILE", help="properties file of admin client settings")
    actions = p.add_mutually_exclusive_group(required=True)
    actions.add_argument("--describe", action="store_true", help="list configs for the given entity")
    actions.add_argument("--alter", action="store_true", help="alter the configuration of the entity")
    p.add_argument("--entity-type", choices=ENTITY_TYPES, help="type of entity: topics")
    p.add_argument("--entity-name", help="name of the entity (every topic when describing without it)")
    p.add_argument("--topic", help="the topic's name; same as --entity-type topics --entity-name TOPIC")
    p.add_argument("--all", action="store_true", help="with --describe, every config, not only dynamic ones")
    p.add_argument("--add-config", metavar="K1=V1,K2=[A,B]", help="configs to add or update")
    p.add_argument("--add-config-file", metavar="FILE", help="properties file of configs to add or update")
    p.add_argument(
        "--delete-config", action="append", default=[], metavar="K1,K2", help="config names to remove"
    )
    return p


def _entity(parser: argparse.ArgumentParser, args: argparse.Namespace) -> str | None:
    """The topic the command is about (None: every topic, for --describe); checks the flags."""
    if args.topic is not None:
        if args.entity_name is not None or args.entity_type not in (None, "topics"):
            parser.error("--topic cannot be combined with --entity-type or --entity-name")
        entity: str | None = args.topic
    elif args.entity_type is None:
        parser.error("an entity type is required: --entity-type topics (or --topic TOPIC)")
    else:
        entity = args.entity_name
    changes = args.add_config is not None or args.add_config_file is not None or bool(args.delete_config)
    if args.alter:
        if entity is None:
            parser.error("an entity name must be specified with --alter of topics")
        if not changes:
            parser.error(
                "At least one of --add-config, --add-config-file, or --delete-config "
                "must be specified with --alter"
            )
    elif changes:
        parser.error("--add-config, --add-config-file and --delete-config are only for --alter")
    if args.all and not args.describe:
        parser.error("--all is only for --describe")
    return entity


class ConfigCommand:
    def __init__(self, args: argparse.Namespace, entity: str | None) -> None:
        self.args = args
        self.entity = entity
        props = read_properties_file(args.command_config, "--command-config") if args.command_config else {}
        self.timeout = api_timeout_s(props)
        self.errors = ConnectionErrors()
        config = client_config(args.bootstrap_server, librdkafka_settings(props), self.errors)
        self.admin = build(AdminClient, config, "admin client")

    def run(self) -> int:
        metadata = reach_cluster(self.admin, self.args.bootstrap_server, self.errors, self.timeout)
        topics = set(metadata.topics)
        if self.entity is not None and self.entity not in topics:
            raise ToolError(
                f"The topic '{self.entity}' doesn't exist and doesn't have dynamic config.", bare=True
            )
        if self.args.describe:
            for topic in [self.entity] if self.entity is not None else sorted(topics):
                self.describe(topic)
        else:
            assert self.entity is not None
            self.alter(self.entity)
        return EXIT_OK

    def _entries(self, topic: str) -> dict[str, ConfigEntry]:
        resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
        futures = self.admin.describe_configs([resource], request_timeout=self.timeout)
        entries: dict[str, ConfigEntry] = wait(
            futures[resource], self.timeout, f"describe configs of {topic}"
        )
        return entries

    def describe(self, topic: str) -> None:
        entries = list(self._entries(topic).values())
        if not self.args.all:
            entries = [e for e in entries if config_source(e) == ConfigSource.DYNAMIC_TOPIC_CONFIG.value]
        lines = [
            ConfigLine(
                name=e.name,
                value=e.value,
                sensitive=bool(e.is_sensitive),
                synonyms=[(_source_name(config_source(s)), s.name, s.value) for s in e.synonyms.values()],
            )
            for e in entries
        ]
        sys.stdout.write(config_description("topics", topic, lines, self.args.all))

    def alter(self, topic: str) -> None:
        to_add: dict[str, str] = {}
        if self.args.add_config_file:
            to_add.update(read_properties_file(self.args.add_config_file, "--add-config-file"))
        if self.args.add_config is not None:
            to_add.update(parse_add_config(self.args.add_config))
        to_delete = parse_delete_config(self.args.delete_config)
        both = sorted(set(to_add) & set(to_delete))
        if both:
            raise ToolError(f"Invalid config(s): {','.join(both)} are both added and deleted", bare=True)
        if to_delete:
            dynamic = {
                n
                for n, e in self._entries(topic).items()
                if config_source(e) == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
            }
            # As Kafka: deleting a config the topic does not override is an error, not a no-op.
            missing = [k for k in to_delete if k not in dynamic]
            if missing:
                raise ToolError(f"Invalid config(s): {','.join(missing)}")
        ops = [ConfigEntry(k, "", incremental_operation=AlterConfigOpType.DELETE) for k in to_delete]
        ops += [ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in to_add.items()]
        resource = ConfigResource(ConfigResource.Type.TOPIC, topic, incremental_configs=ops)
        futures = self.admin.incremental_alter_configs([resource], request_timeout=self.timeout)
        for future in futures.values():
            wait(future, self.timeout, f"alter configs of {topic}")
        print(f"Completed updating config for topic {topic}.")


def config_source(entry: ConfigEntry) -> int:
    """The source of a config entry: typed as ConfigSource, an int at run time."""
    source: object = entry.source
    if isinstance(source, ConfigSource):
        return int(source.value)
    return int(str(source))


def _source_name(source: int) -> str:
    """Java's ConfigEntry.ConfigSource name of a config source."""
    try:
        name = ConfigSource(source).name
    except ValueError:
        return "UNKNOWN"
    return "UNKNOWN" if name == "UNKNOWN_CONFIG" else name


def main(argv: list[str] | None = None, prog: str = "sluiceway configs") -> int:
    parser = build_parser(prog)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    entity = _entity(parser, args)
    return run_command(lambda: ConfigCommand(args, entity).run(), "Error while executing config command: ")


if __name__ == "__main__":
    sys.exit(main())
