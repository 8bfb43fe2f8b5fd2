"""``sluiceway broker`` / ``connect-broker``: run the broker from a server.properties file.

    connect-broker [broker.properties] [--override key=value ...]

SIGTERM and SIGINT shut it down cleanly (requests in flight end, logs are
flushed and closed); exit status is 0 then, 1 on a startup failure and 2 on a
configuration error.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys

from broker.config import BrokerConfig, ConfigError, load_config
from broker.logs import BrokerLocked
from broker.properties import PropertiesError, load_properties, parse_overrides
from broker.security.scram_bootstrap import add_scram_users, parse_add_scram
from broker.server import BrokerServer, _new_loop
from broker.storage.log import StorageError

log = logging.getLogger("broker")


def build_parser(prog: str = "connect-broker") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description="Run the Sluiceway Kafka-compatible broker.")
    p.add_argument("config", nargs="?", help="a Kafka server.properties file")
    p.add_argument(
        "--override",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a property from the file (repeatable)",
    )
    p.add_argument(
        "--add-scram",
        action="append",
        default=[],
        metavar="'SCRAM-SHA-256=[name=alice,password=...]'",
        help="store a SCRAM user in log.dirs before starting (repeatable; kafka-storage format --add-scram)",
    )
    p.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING or ERROR (default INFO)")
    return p


def configure_logging(level: str) -> None:
    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO),
        format="[%(asctime)s] %(levelname)s %(message)s (%(name)s)",
        stream=sys.stderr,
    )


def load(args: argparse.Namespace) -> BrokerConfig:
    values: dict[str, str] = {}
    if args.config:
        values.update(load_properties(args.config))
    values.update(parse_overrides(args.override))
    return load_config(values)


async def _serve(config: BrokerConfig) -> None:
    server = BrokerServer(config)
    # The handlers go in before the server starts: a signal that comes the moment it says
    # it is listening (or while it opens its logs) stops it cleanly once it has started.
    loop = asyncio.get_running_loop()
    stop_requested = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop_requested.set)
    await server.start()

    async def stop_when_asked() -> None:
        await stop_requested.wait()
        await server.stop()

    stopper = asyncio.ensure_future(stop_when_asked())
    try:
        await server.serve_forever()
    finally:
        stopper.cancel()


def main(argv: list[str] | None = None, prog: str = "connect-broker") -> int:
    args = build_parser(prog).parse_args(argv)
    configure_logging(args.log_level)
    try:
        config = load(args)
        scram_users = [parse_add_scram(spec) for spec in args.add_scram]
    except (PropertiesError, ConfigError, ValueError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    if scram_users:
        add_scram_users(config.data_dir, scram_users)
    try:
        with asyncio.Runner(loop_factory=_new_loop) as runner:
            runner.run(_serve(config))
    except (BrokerLocked, StorageError, OSError, ValueError) as exc:
        log.error("cannot start: %s", exc)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
