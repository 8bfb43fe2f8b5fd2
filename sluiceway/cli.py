"""The ``sluiceway`` umbrella command.

    sluiceway broker [broker.properties] [--override key=value ...]
    sluiceway standalone worker.properties connector.properties ...
    sluiceway distributed workers.properties
    sluiceway demo
    sluiceway schema-registry [schema-registry.properties] [--override key=value ...]
    sluiceway mirror-maker mm2.properties [--clusters A B]   MirrorMaker 2, dedicated mode
    sluiceway ctl ...                      a running Connect cluster, over its REST API
    sluiceway topics | console-producer | console-consumer | consumer-groups | configs | transactions ...
                                           Kafka's scripts, over the Kafka protocol
    sluiceway new source|sink|transform NAME   scaffold a plugin package

Subcommands import their implementation lazily so one does not pay for another's
start-up (the CLIs for a cluster must not import Spark or the broker).
"""

from __future__ import annotations

import importlib
import sys
from typing import Protocol, cast

USAGE = """usage: sluiceway <command> [args]

run:
  broker            run the Kafka-compatible broker (same arguments as connect-broker)
  standalone        run a standalone Connect worker (same arguments as connect-standalone)
  distributed       run a worker of a Connect cluster (same arguments as connect-distributed)
  demo              a pipeline on the embedded broker, ending in a Spark SQL query
  schema-registry   run the Confluent-compatible Schema Registry (schemas kept in a Kafka topic)
  mirror-maker      replicate between Kafka clusters: MirrorMaker 2's dedicated mode (connect-mirror-maker)

operate a Connect cluster (REST API):
  ctl               get, describe, apply, patch, pause, resume, stop, restart, delete, validate, logs

operate a broker (Kafka protocol; works against Apache Kafka too):
  topics            create, list, describe, alter and delete topics (kafka-topics)
  console-producer  lines from stdin become records (kafka-console-producer)
  console-consumer  records printed to stdout (kafka-console-consumer)
  consumer-groups   list, describe lag, reset offsets, delete groups (kafka-consumer-groups)
  configs           describe and alter topic configs (kafka-configs)
  transactions      list, describe, describe-producers, abort hanging transactions (kafka-transactions)

work with a Schema Registry (REST API):
  schemas           list, show, register, check, delete schemas; compatibility levels

write plugins:
  new               scaffold a source, sink or transform package

`sluiceway <command> --help` describes each one.
"""


class _Main(Protocol):
    def __call__(self, argv: list[str], prog: str) -> int: ...


# command -> module whose main(argv, prog) runs it
COMMANDS: dict[str, str] = {
    "broker": "broker.cli",
    "standalone": "connect.standalone",
    "distributed": "connect.distributed",
    "demo": "sluiceway.demo",
    "schema-registry": "schema_registry.server",
    "mirror-maker": "sluiceway.mirror_maker.runner",
    "schemas": "sluiceway.schemas",
    "ctl": "sluiceway.ctl.cli",
    "topics": "sluiceway.broker_tools.topics",
    "console-producer": "sluiceway.broker_tools.console_producer",
    "console-consumer": "sluiceway.broker_tools.console_consumer",
    "consumer-groups": "sluiceway.broker_tools.consumer_groups",
    "configs": "sluiceway.broker_tools.configs",
    "transactions": "sluiceway.broker_tools.transactions",
    "new": "sluiceway.scaffold.cli",
}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help", "help"):
        print(USAGE, end="")
        return 0 if args else 2
    command, rest = args[0], args[1:]
    module_name = COMMANDS.get(command)
    if module_name is None:
        print(f"sluiceway: unknown command {command!r}\n\n{USAGE}", file=sys.stderr, end="")
        return 2
    run = cast(_Main, importlib.import_module(module_name).main)
    return run(rest, prog=f"sluiceway {command}")


if __name__ == "__main__":
    sys.exit(main())
