"""MirrorMaker 2's dedicated mode: one distributed Connect worker per herder, in-process.

    sluiceway mirror-maker mm2.properties [--clusters A B]      (connect-mirror-maker.sh)

Each herder (a ``source->target`` pair of ``mirror_maker.config``) is a distributed worker
of group ``<source>-mm2`` against the target cluster, so several MirrorMaker nodes with
the same file share the work of a flow and carry on when one dies. As Kafka's
``MirrorHerder``, a herder's connector configs are written by its group's leader: each
time this node becomes the leader of a herder it compares the stored configs with the
file's and writes those that differ (so a restart with an edited file updates them);
a node that is not the leader leaves them to the one that is. ``--clusters`` limits the
herders to those whose target is one of the named clusters.

A connector config the worker refuses (a bad ``topics`` regex, an unknown class) stops
MirrorMaker with the worker's message, naming the flow and the connector, rather than
leaving a flow silently unconfigured. SIGTERM and SIGINT stop every herder gracefully
(the tasks' offsets committed, the groups left).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from connect.api.config import ConfigValidationError
from connect.api.config_provider import ConfigProvider
from connect.api.errors import ConnectException
from connect.distributed import DistributedRuntime
from connect.distributed import start as start_distributed
from connect.herder.base import RequestError, RequestTargetException
from connect.herder.distributed import DistributedHerder
from connect.runtime.config import DistributedConfig
from connect.runtime.config_providers import resolve
from connect.runtime.plugins import PluginNotFound, Plugins
from connect.runtime.properties import PropertiesError, load
from connect.standalone import StartupError, configure_logging
from sluiceway.mirror_maker.config import (
    CONNECTOR_CLASSES,
    Herder,
    MirrorMakerConfig,
    MirrorMakerConfigError,
    parse,
)

log = logging.getLogger("sluiceway.mirror_maker")

# How often a herder's leadership is looked at (and a refused write retried): the first
# configs are written this long at most after the group settles.
_POLL_S = 0.2
# After a write that failed for another reason than leadership (the config topic).
_RETRY_S = 2.0


def resolve_worker_placeholders(config: MirrorMakerConfig, worker: Mapping[str, str]) -> dict[str, str]:
    """``${provider:path:key}`` in a worker config resolved with the file's top-level
    ``config.providers`` (Kafka's MirrorMakerConfig.transform: a worker resolves connector
    configs, not its own). The ``config.providers*`` keys stay, for the connectors'."""
    aliases = [a.strip() for a in config.values.get("config.providers", "").split(",") if a.strip()]
    if not aliases:
        return dict(worker)
    plugins = Plugins()
    providers: dict[str, ConfigProvider] = {}
    try:
        for alias in aliases:
            key = f"config.providers.{alias}.class"
            cls = config.values.get(key, "").strip()
            if not cls:
                raise MirrorMakerConfigError(f"{config.where('config.providers')}: {key}: missing")
            params = {
                k.removeprefix(f"config.providers.{alias}.param."): v
                for k, v in config.values.items()
                if k.startswith(f"config.providers.{alias}.param.")
            }
            try:
                providers[alias] = plugins.new_config_provider(cls, params)
            except PluginNotFound as exc:
                raise MirrorMakerConfigError(f"{config.where(key)}: {key}: {exc}") from None
        plain = {k: v for k, v in worker.items() if not k.startswith("config.providers")}
        return {**worker, **resolve(plain, providers)}
    finally:
        for provider in providers.values():
            provider.close()


def herder_worker_config(config: MirrorMakerConfig, herder: Herder) -> DistributedConfig:
    """The herder's worker config, each problem naming where its key came from."""
    try:
        return DistributedConfig.parse(resolve_worker_placeholders(config, herder.worker))
    except ConfigValidationError as exc:
        raise MirrorMakerConfigError(
            "\n".join(f"{_origin(config, herder, i.key)}: {i.message}" for i in exc.issues)
        ) from None


def _origin(config: MirrorMakerConfig, herder: Herder, key: str) -> str:
    """Where (``file:line: key``) the mm2.properties key behind a worker key is defined."""
    for source_key in (f"{herder.flow.target}.{key}", key):
        if source_key in config.values:
            return f"{config.where(source_key)}: {source_key}"
    return f"{config.where('clusters')}: {key} (worker of {herder.flow})"


class MirrorMaker:
    """The herders of one MirrorMaker node, run in the current event loop."""

    def __init__(
        self,
        config: MirrorMakerConfig,
        targets: Sequence[str] | None = None,
        classes: Sequence[str] = CONNECTOR_CLASSES,
    ) -> None:
        self.config = config
        self.herders = config.herders(targets, classes)
        # Checked before anything starts: a bad file stops the node before it joins a group.
        self._worker_configs = [herder_worker_config(config, h) for h in self.herders]
        self.runtimes: list[DistributedRuntime] = []
        self.failed: asyncio.Future[ConnectException] | None = None
        self._configurators: list[asyncio.Task[None]] = []
        self._starting: list[asyncio.Task[DistributedRuntime]] = []

    async def start(self) -> None:
        """Start every herder's worker (each waits for its target cluster as long as it
        takes) and the loops that write their connector configs."""
        self.failed = asyncio.get_running_loop().create_future()
        flows = ", ".join(str(h.flow) for h in self.herders)
        log.info("MirrorMaker starting %d herders: %s", len(self.herders), flows)
        # Tasks of their own, so that a stop while some still wait for their cluster finds
        # the ones that did start.
        self._starting = [asyncio.create_task(start_distributed(c)) for c in self._worker_configs]
        await asyncio.wait(self._starting)
        errors = [t.exception() for t in self._starting if t.exception() is not None]
        self.runtimes = [t.result() for t in self._starting if t.exception() is None]
        self._starting = []
        if errors:
            await self.stop()
            raise errors[0]  # type: ignore[misc]
        for herder, runtime in zip(self.herders, self.runtimes, strict=True):
            self._configurators.append(
                asyncio.create_task(
                    self._configure(herder, runtime.herder), name=f"mm2-configure-{herder.flow}"
                )
            )
        log.info("MirrorMaker started; the connectors are configured once each herder's group has a leader")

    async def stop(self) -> None:
        for task in self._configurators:
            task.cancel()
        for task in self._configurators:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._configurators = []
        for starting in self._starting:
            starting.cancel()
        for starting in self._starting:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                self.runtimes.append(await starting)
        self._starting = []
        if self.runtimes:
            log.info("MirrorMaker stopping")
            await asyncio.gather(*(r.stop() for r in self.runtimes), return_exceptions=True)
            self.runtimes = []
            log.info("MirrorMaker stopped")

    async def _configure(self, herder: Herder, dh: DistributedHerder) -> None:
        """As Kafka's MirrorHerder: on becoming the leader, write the connector configs that
        differ from the stored ones; a leadership lost mid-way is retried next time."""
        configured = False
        while True:
            pause = _POLL_S
            if not (dh.is_leader and dh.assignment is not None):
                configured = False
            elif not configured:
                try:
                    configured = await self._write_configs(herder, dh)
                except Exception as exc:  # the config topic not answering: the next try may
                    log.warning("%s: writing the connector configs failed (%s); retrying", herder.flow, exc)
                    pause = _RETRY_S
            await asyncio.sleep(pause)

    async def _write_configs(self, herder: Herder, dh: DistributedHerder) -> bool:
        """Whether this leader is done (written, up to date, or refused for good)."""
        for name, desired in herder.connectors.items():
            actual = dh.configs.snapshot().connector_configs.get(name)
            if actual is not None and dict(actual) == desired:
                log.info("%s: %s is up to date", herder.flow, name)
                continue
            try:
                await dh.put_connector_config(name, dict(desired), allow_replace=True)
            except RequestTargetException:
                log.info("%s: no longer the leader while configuring %s; the leader will", herder.flow, name)
                return False
            except RequestError as exc:
                if exc.status == 409:  # rebalancing: try again once it settles
                    return False
                self._fail(herder, name, exc)  # the worker refuses the config itself
                return True
            log.info("%s: %s configured", herder.flow, name)
        return True

    def _fail(self, herder: Herder, name: str, exc: ConnectException) -> None:
        log.error("%s: cannot configure %s: %s", herder.flow, name, exc)
        if self.failed is not None and not self.failed.done():
            self.failed.set_result(ConnectException(f"{herder.flow}: cannot configure {name}: {exc}"))


async def serve(mm: MirrorMaker) -> None:
    """Run until SIGTERM/SIGINT (or a connector config the workers refuse)."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    starting = asyncio.create_task(mm.start())
    stopping = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait({starting, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if not starting.done():  # stopped while waiting for a cluster
            starting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await starting
            return
        starting.result()
        assert mm.failed is not None
        waiters: set[asyncio.Future[Any]] = {stopping, mm.failed}
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        if mm.failed.done():
            raise mm.failed.result()
    finally:
        stopping.cancel()
        await mm.stop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)


def build_parser(prog: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog,
        description="Run MirrorMaker 2 in dedicated mode: replicate topics, consumer-group offsets "
        "and heartbeats between the clusters of an mm2.properties file.",
    )
    p.add_argument("config", metavar="mm2.properties", help="the MirrorMaker 2 configuration file")
    p.add_argument(
        "--clusters",
        nargs="+",
        metavar="CLUSTER",
        help="target clusters this node drives (default: all of the file's clusters)",
    )
    p.add_argument("--log-level", default="INFO")
    return p


def main(argv: list[str] | None = None, prog: str = "connect-mirror-maker") -> int:
    args = build_parser(prog).parse_args(argv)
    try:
        # The file is checked before logging is set up: its errors go to stderr as they are.
        props = load(args.config)
        mm = MirrorMaker(parse(props.values, props.where), args.clusters)
        configure_logging(args.log_level)
        asyncio.run(serve(mm))
    except (PropertiesError, StartupError, ConnectException) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(prog="python -m sluiceway.mirror_maker.runner"))
