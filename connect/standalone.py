"""Standalone mode: one worker process, connectors from ``.properties`` files and the REST API.

    connect-standalone worker.properties connector1.properties [connector2.properties ...]

A syntax or validation error in any file stops the worker before it does anything
and exits with status 1, naming the file, the line and the key. SIGTERM and SIGINT
stop connectors and tasks gracefully (offsets are committed) before exiting 0.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from connect.api.config import ConfigValidationError
from connect.api.errors import ConnectException
from connect.herder.base import InvalidConnectorConfig, RequestError
from connect.herder.standalone import StandaloneHerder
from connect.rest.app import create_app
from connect.rest.server import RestServer
from connect.runtime.config import StandaloneConfig, as_strings
from connect.runtime.embedded_broker import EmbeddedBrokerHandle, start_embedded_broker
from connect.runtime.embedded_registry import EmbeddedRegistryHandle, start_embedded_registry
from connect.runtime.heap import freeze_startup_heap
from connect.runtime.logging_context import ContextFilter
from connect.runtime.plugins import Plugins
from connect.runtime.properties import PropertiesError, PropertiesFile, load
from connect.runtime.secrets import RedactingFilter
from connect.runtime.worker import Worker
from connect.storage.configs import MemoryConfigBackingStore
from connect.storage.offsets import FileOffsetBackingStore
from connect.storage.status import MemoryStatusBackingStore

log = logging.getLogger("connect.standalone")

LOG_FORMAT = "[%(asctime)s] %(levelname)s %(connect_context)s%(message)s (%(name)s)"


class StartupError(Exception):
    """A problem found before the worker started; the message names file, line and key."""


def configure_logging(level: str = "INFO") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(ContextFilter())
    handler.addFilter(RedactingFilter())
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level.upper(), logging.INFO))


def worker_config(props: PropertiesFile) -> StandaloneConfig:
    try:
        return StandaloneConfig.parse(props.values)
    except ConfigValidationError as exc:
        raise StartupError(
            "\n".join(f"{props.where(i.key)}: {i.key}: {i.message}" for i in exc.issues)
        ) from None


def connector_config(props: PropertiesFile) -> tuple[str, dict[str, str]]:
    name = props.values.get("name", "").strip()
    if not name:
        raise StartupError(f"{props.path}: name: a connector file needs a 'name'")
    if "connector.class" not in props.values:
        raise StartupError(f"{props.path}: connector.class: a connector file needs a 'connector.class'")
    return name, as_strings(props.values)


@dataclass
class StandaloneRuntime:
    """A running standalone worker (also used in-process by tests and the demo)."""

    config: StandaloneConfig
    herder: StandaloneHerder
    rest: RestServer
    broker: EmbeddedBrokerHandle | None = None
    registry: EmbeddedRegistryHandle | None = None
    stopped: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def url(self) -> str:
        return f"{self.rest.scheme}://127.0.0.1:{self.rest.port}"

    async def stop(self) -> None:
        if self.stopped.is_set():
            return
        log.info("stopping the standalone worker")
        await self.herder.stop()
        await self.rest.stop()
        if self.registry is not None:
            await asyncio.to_thread(self.registry.stop)
        if self.broker is not None:
            await asyncio.to_thread(self.broker.stop)
        self.stopped.set()
        log.info("standalone worker stopped")


async def start(config: StandaloneConfig, connectors: Sequence[PropertiesFile] = ()) -> StandaloneRuntime:
    broker = await asyncio.to_thread(start_embedded_broker, config) if config.embedded_broker_enable else None
    registry: EmbeddedRegistryHandle | None = None
    try:
        registry = await asyncio.to_thread(start_embedded_registry, config)
        plugins = Plugins(config.plugin_path)
        statuses = MemoryStatusBackingStore()
        worker = Worker(
            "starting", config, plugins, FileOffsetBackingStore(config.offset_storage_file_filename), statuses
        )
        herder = StandaloneHerder(worker, plugins, MemoryConfigBackingStore(), statuses)
        rest = RestServer(
            create_app(herder),
            config.listeners,
            config.rest_advertised_host_name,
            config.rest_advertised_port,
            config.rest_advertised_listener,
            config=config,
        )
        await rest.start()
        worker.worker_id = rest.worker_id
        runtime = StandaloneRuntime(config, herder, rest, broker, registry)
    except BaseException:
        if registry is not None:
            registry.stop()
        if broker is not None:
            broker.stop()
        raise
    try:
        await herder.start()
        for props in connectors:
            name, values = connector_config(props)
            try:
                await herder.put_connector_config(name, values, allow_replace=False)
            except InvalidConnectorConfig as exc:
                raise StartupError(
                    "\n".join(
                        f"{props.where(key)}: {key}: {message}" for key, message in exc.validation.issues()
                    )
                ) from None
            except RequestError as exc:
                raise StartupError(f"{props.path}: {exc}") from None
        log.info("standalone worker %s ready; REST API at %s", worker.worker_id, rest.url)
    except BaseException:
        await runtime.stop()
        raise
    return runtime


async def _serve(config: StandaloneConfig, connectors: Sequence[PropertiesFile]) -> None:
    runtime = await start(config, connectors)
    freeze_startup_heap()
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await runtime.stop()


def build_parser(prog: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description="Run a standalone Sluiceway Connect worker.")
    p.add_argument("worker_properties", help="worker configuration (Kafka Connect's keys)")
    p.add_argument("connector_properties", nargs="*", help="connector configurations to start")
    p.add_argument("--log-level", default="INFO")
    return p


def main(argv: list[str] | None = None, prog: str = "connect-standalone") -> int:
    args = build_parser(prog).parse_args(argv)
    configure_logging(args.log_level)
    try:
        worker_props = load(args.worker_properties)
        config = worker_config(worker_props)
        connectors = [load(p) for p in args.connector_properties]
        for props in connectors:
            connector_config(props)
        asyncio.run(_serve(config, connectors))
    except (PropertiesError, StartupError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 1
    except ConnectException as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 1
    return 0


def resolve_path(base: Path, value: str) -> Path:
    p = Path(value)
    return p if p.is_absolute() else base / p


if __name__ == "__main__":
    sys.exit(main(prog="python -m connect.standalone"))
