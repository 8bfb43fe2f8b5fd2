"""The ``sluiceway`` umbrella command.

    sluiceway broker [broker.properties] [--override key=value ...]
    sluiceway standalone worker.properties connector.properties ...
    sluiceway distributed workers.properties
    sluiceway demo

Subcommands import their implementation lazily so one does not pay for another's
start-up.
"""

from __future__ import annotations

import sys

USAGE = """usage: sluiceway <command> [args]

commands:
  broker       run the Kafka-compatible broker (same arguments as connect-broker)
  standalone   run a standalone Connect worker (same arguments as connect-standalone)
  distributed  run a worker of a Connect cluster (same arguments as connect-distributed)
  demo         a file -> topic -> file pipeline on the embedded broker
"""


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help", "help"):
        print(USAGE, end="")
        return 0 if args else 2
    command, rest = args[0], args[1:]
    if command == "broker":
        # The umbrella only launches the broker as a program; Connect talks to it over Kafka's protocol.
        from broker.cli import main as broker_main

        return broker_main(rest, prog="sluiceway broker")
    if command == "standalone":
        from connect.standalone import main as standalone_main

        return standalone_main(rest, prog="sluiceway standalone")
    if command == "distributed":
        from connect.distributed import main as distributed_main

        return distributed_main(rest, prog="sluiceway distributed")
    if command == "demo":
        from connect.demo import main as demo_main

        return demo_main(rest)
    print(f"sluiceway: unknown command {command!r}\n\n{USAGE}", file=sys.stderr, end="")
    return 2


if __name__ == "__main__":
    sys.exit(main())
