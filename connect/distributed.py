"""Distributed mode: one worker of a Connect cluster.

    connect-distributed workers.properties
    connect-distributed workers.properties --processes N   (N workers, one core each)

Workers with the same ``group.id`` and storage topics form a cluster: they share
connectors and tasks through the broker's group protocol and keep configs, offsets
and statuses in Kafka, so the cluster carries on when a worker dies. Any worker
answers the REST API. A syntax or validation error in the properties file stops the
worker before it joins, naming the line and the key; SIGTERM and SIGINT stop its
connectors and tasks gracefully (offsets committed) and leave the group, so the
others take the work over at once.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import ssl
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field

from connect.api.config import ConfigValidationError
from connect.api.errors import ConnectException
from connect.api.kafka_clients import ClientSecurityError, librdkafka_security
from connect.herder.distributed import DistributedHerder
from connect.herder.membership import GroupMember
from connect.herder.sasl_client import SaslCredentials, sasl_credentials
from connect.rest.app import create_app
from connect.rest.server import RestServer
from connect.rest.tls import client_context, tls_settings_from
from connect.runtime.config import DistributedConfig
from connect.runtime.embedded_broker import EmbeddedBrokerHandle, start_embedded_broker
from connect.runtime.embedded_registry import EmbeddedRegistryHandle, start_embedded_registry
from connect.runtime.exactly_once import leader_transactional_id
from connect.runtime.heap import freeze_startup_heap
from connect.runtime.plugins import Plugins
from connect.runtime.properties import PropertiesError, PropertiesFile, load
from connect.runtime.worker import Worker
from connect.standalone import StartupError, configure_logging
from connect.storage.kafka_configs import KafkaConfigBackingStore
from connect.storage.kafka_offsets import KafkaOffsetBackingStore
from connect.storage.kafka_status import KafkaStatusBackingStore
from connect.storage.topic_admin import TopicMisconfigured
from connect.worker_processes import Layout, WorkerProcesses, worker_commands

log = logging.getLogger("connect.distributed")

_STARTUP_RETRY_S = 5.0


def worker_config(props: PropertiesFile, overrides: Mapping[str, str] | None = None) -> DistributedConfig:
    """The worker's config from its properties file, ``overrides`` (``--override``) on top;
    each problem names the file and line, or the override, it came from."""
    overrides = overrides or {}
    try:
        return DistributedConfig.parse({**props.values, **overrides})
    except ConfigValidationError as exc:
        raise StartupError(
            "\n".join(
                f"{'--override' if i.key in overrides else props.where(i.key)}: {i.key}: {i.message}"
                for i in exc.issues
            )
        ) from None


def parse_overrides(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise StartupError(f"--override {pair!r}: expected key=value")
        out[key.strip()] = value.strip()
    return out


@dataclass
class DistributedRuntime:
    """A running distributed worker (also used in-process by tests)."""

    config: DistributedConfig
    herder: DistributedHerder
    rest: RestServer
    broker: EmbeddedBrokerHandle | None = None
    registry: EmbeddedRegistryHandle | None = None
    stopped: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def url(self) -> str:
        return self.rest.url

    async def stop(self) -> None:
        if self.stopped.is_set():
            return
        log.info("stopping the distributed worker")
        await self.herder.stop()
        await self.rest.stop()
        await asyncio.to_thread(_stop_stores, self.herder)
        if self.registry is not None:
            await asyncio.to_thread(self.registry.stop)
        if self.broker is not None:
            await asyncio.to_thread(self.broker.stop)
        self.stopped.set()
        log.info("distributed worker stopped")


def group_member_security(
    security: Mapping[str, str],
) -> tuple[ssl.SSLContext | None, SaslCredentials | None]:
    """The TLS context and SASL credentials of the worker's own group-membership
    connections, from the same Java keys its Kafka clients take (``security.protocol``,
    ``ssl.*``, ``sasl.*``). The TLS context reads PEM and PKCS12 stores (Java's
    ``ssl.truststore.*``/``ssl.keystore.*``) and verifies the broker's host name unless
    ``ssl.endpoint.identification.algorithm`` is empty, as Kafka's clients do."""
    protocol = security.get("security.protocol", "PLAINTEXT").strip().upper()
    tls = None
    if protocol in ("SSL", "SASL_SSL"):
        try:
            ssl_keys = {k: v for k, v in security.items() if k.startswith("ssl.")}
            tls = client_context(tls_settings_from(ssl_keys))
        except ConnectException as exc:  # TlsError names the key
            raise ClientSecurityError(str(exc)) from None
    return tls, sasl_credentials(security)


def _stop_stores(herder: DistributedHerder) -> None:
    for stop in (herder.configs.stop, herder.statuses.stop, herder.worker.offsets.stop):
        try:
            stop()
        except Exception as exc:  # stopping goes on whatever one store does
            log.warning("stopping a store failed: %s", exc)


async def start(config: DistributedConfig) -> DistributedRuntime:
    broker = await asyncio.to_thread(start_embedded_broker, config) if config.embedded_broker_enable else None
    registry: EmbeddedRegistryHandle | None = None
    try:
        registry = await asyncio.to_thread(start_embedded_registry, config)
        plugins = Plugins(config.plugin_path)
        # The internal topics' clients and the group membership take the worker's security
        # settings, nothing else.
        security = {
            k: str(v)
            for k, v in (config.model_extra or {}).items()
            if k.startswith(("security.", "ssl.", "sasl."))
        }
        try:
            clients = librdkafka_security(security)
            member_tls, member_sasl = group_member_security(security)
        except ClientSecurityError as exc:
            raise StartupError(str(exc)) from None
        base = f"connect-{config.group_id}-"
        # Exactly-once sources (KIP-618): the leader writes the config topic transactionally
        # once support is being prepared; offsets are written in the tasks' transactions once
        # it is enabled, and both topics are then read committed.
        eos = config.exactly_once_source_support
        configs = KafkaConfigBackingStore(
            config.bootstrap_servers,
            config.config_storage_topic,
            replication_factor=config.config_storage_replication_factor,
            client_settings=clients,
            client_id_base=base,
            transactional_id=leader_transactional_id(config.group_id) if eos != "disabled" else None,
        )
        statuses = KafkaStatusBackingStore(
            config.bootstrap_servers,
            config.status_storage_topic,
            partitions=config.status_storage_partitions,
            replication_factor=config.status_storage_replication_factor,
            client_settings=clients,
            client_id_base=base,
        )
        offsets = KafkaOffsetBackingStore(
            config.bootstrap_servers,
            config.offset_storage_topic,
            partitions=config.offset_storage_partitions,
            replication_factor=config.offset_storage_replication_factor,
            client_settings=clients,
            client_id_base=base,
            write_timeout=config.offset_flush_timeout_ms / 1000,
            read_committed=eos == "enabled",
        )
        worker = Worker("starting", config, plugins, offsets, statuses)

        def connector_offsets(topic: str) -> KafkaOffsetBackingStore:
            # A connector's own offsets topic (KIP-618): same layout as the worker's.
            return KafkaOffsetBackingStore(
                config.bootstrap_servers,
                topic,
                partitions=config.offset_storage_partitions,
                replication_factor=config.offset_storage_replication_factor,
                client_settings=clients,
                client_id_base=base,
                write_timeout=config.offset_flush_timeout_ms / 1000,
                read_committed=eos == "enabled",
            )

        worker.connector_offsets = connector_offsets
        member = GroupMember(
            config.bootstrap_servers,
            config.group_id,
            session_timeout_ms=config.session_timeout_ms,
            rebalance_timeout_ms=config.rebalance_timeout_ms,
            heartbeat_interval_ms=config.heartbeat_interval_ms,
            client_id=f"{base}worker",
            tls=member_tls,
            sasl=member_sasl,
        )
        herder = DistributedHerder(worker, plugins, config, configs, statuses, member, url="")
        rest = RestServer(
            create_app(herder),
            config.listeners,
            config.rest_advertised_host_name,
            config.rest_advertised_port,
            config.rest_advertised_listener,
            config=config,
        )
        await rest.start()
        # The worker's id and the URL it advertises to the group are the listener's address,
        # known once the REST server is bound (port 0 picks a free one).
        herder.url = rest.url
        worker.worker_id = rest.worker_id
        runtime = DistributedRuntime(config, herder, rest, broker, registry)
    except BaseException:
        if registry is not None:
            registry.stop()
        if broker is not None:
            broker.stop()
        raise
    try:
        await _start_stores_when_reachable(config, configs, statuses, offsets)
        await herder.start()
        log.info("distributed worker %s started; REST API at %s", worker.worker_id, rest.url)
    except BaseException:
        await runtime.stop()
        raise
    return runtime


def _start_stores(
    configs: KafkaConfigBackingStore, statuses: KafkaStatusBackingStore, offsets: KafkaOffsetBackingStore
) -> None:
    configs.start()
    statuses.start()
    offsets.start()


async def _start_stores_when_reachable(
    config: DistributedConfig,
    configs: KafkaConfigBackingStore,
    statuses: KafkaStatusBackingStore,
    offsets: KafkaOffsetBackingStore,
) -> None:
    """Read the internal topics, waiting for Kafka as long as it takes: a worker started
    before its broker (a machine boot, a cluster coming up) joins once Kafka is there. A
    topic that exists in the wrong shape is not worth waiting for."""
    while True:
        try:
            await asyncio.to_thread(_start_stores, configs, statuses, offsets)
            return
        except TopicMisconfigured:
            raise
        except ConnectException as exc:
            log.warning(
                "cannot read the internal topics at %s yet (%s); retrying in %.0f s",
                config.bootstrap_servers,
                exc,
                _STARTUP_RETRY_S,
            )
            await asyncio.sleep(_STARTUP_RETRY_S)


async def _serve(config: DistributedConfig) -> None:
    runtime = await start(config)
    freeze_startup_heap()
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await runtime.stop()


def build_parser(prog: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description="Run a distributed Sluiceway Connect worker.")
    p.add_argument("worker_properties", help="worker configuration (Kafka Connect's distributed keys)")
    p.add_argument(
        "--override",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a worker config value that replaces the file's (repeatable), e.g. listeners=http://:8084",
    )
    p.add_argument("--log-level", default="INFO")
    p.add_argument(
        "--processes",
        type=int,
        default=1,
        metavar="N",
        help="run N worker processes of this cluster, one core each; worker i listens on each "
        "listener's port plus i (default 1)",
    )
    return p


def main(argv: list[str] | None = None, prog: str = "connect-distributed") -> int:
    args = build_parser(prog).parse_args(argv)
    configure_logging(args.log_level)
    if args.processes < 1:
        print(f"{prog}: --processes must be at least 1, not {args.processes}", file=sys.stderr)
        return 2
    try:
        config = worker_config(load(args.worker_properties), parse_overrides(args.override))
        if args.processes > 1:
            layout = Layout(
                config.listeners, config.rest_advertised_port, bool(config.embedded_broker_enable)
            )
            commands = worker_commands(
                args.worker_properties, args.override, layout, args.processes, args.log_level
            )
            return WorkerProcesses(commands).run()
        asyncio.run(_serve(config))
    except (PropertiesError, StartupError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 1
    except ConnectException as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(prog="python -m connect.distributed"))
