"""Running the registry: its configuration (Confluent's keys) and ``sluiceway schema-registry``.

    sluiceway schema-registry [schema-registry.properties] [--override key=value ...]

Keys (Confluent's names and defaults): ``listeners`` (http://0.0.0.0:8081),
``kafkastore.bootstrap.servers`` (required), ``kafkastore.topic`` (_schemas),
``kafkastore.topic.replication.factor`` (3), ``kafkastore.timeout.ms`` (500),
``kafkastore.init.timeout.ms`` (60000), ``schema.compatibility.level`` (backward),
``kafkastore.security.protocol`` and ``kafkastore.sasl.mechanism`` /
``kafkastore.sasl.username`` / ``kafkastore.sasl.password`` for the store's client.
Several instances on one topic elect a primary through the broker's group protocol
(``election``): ``schema.registry.group.id`` (schema-registry), ``leader.eligibility``
(true), ``kafkagroup.session.timeout.ms`` (10000), and ``host.name`` with the listener's
port for the URL the others forward writes to (the listener's host unless it is a
wildcard, then 127.0.0.1). ``shutdown.graceful.ms`` (1000): how long a stop waits for
open connections.

The listener may be ``https://`` (``tls``: ``ssl.keystore.*``, ``ssl.truststore.*``,
``ssl.client.authentication``) and may ask for users (``auth``: ``authentication.method=BASIC``,
``authentication.realm``, ``authentication.roles``), with Confluent's keys. The URL the
primary is reached at takes ``inter.instance.protocol``'s scheme, which must be the
listener's (Confluent picks the listener of that scheme; the default here is the
listener's own scheme, where Confluent's is http).

``RegistryServer`` also runs in-process (a worker's embedded registry, tests): ``start``
serves on a thread and returns once the store is read and the port is open.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import ssl
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import uvicorn
from jproperties import Properties

from schema_registry.auth import AuthConfig
from schema_registry.compatibility import LEVELS
from schema_registry.config_error import ConfigError
from schema_registry.election import Election
from schema_registry.rest import create_app
from schema_registry.service import Registry
from schema_registry.state import RegistryState
from schema_registry.store import SchemaTopic, StoreError
from schema_registry.tls import TlsConfig

__all__ = ["ConfigError", "RegistryConfig", "RegistryServer", "main"]

log = logging.getLogger("schema_registry")


def _int(values: Mapping[str, str], key: str, default: int) -> int:
    raw = values.get(key)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ConfigError(f"{key}={raw}: not an integer") from None


@dataclass(frozen=True)
class RegistryConfig:
    host: str
    port: int
    bootstrap: str
    topic: str
    replication_factor: int
    timeout_ms: int
    init_timeout_ms: int
    compatibility_level: str
    client: dict[str, Any]
    group_id: str = "schema-registry"
    eligible: bool = True
    session_timeout_ms: int = 10_000
    advertised_host: str = "127.0.0.1"
    scheme: str = "http"
    tls: TlsConfig = field(default_factory=TlsConfig)
    auth: AuthConfig = field(default_factory=AuthConfig)
    shutdown_graceful_ms: int = 1000

    @classmethod
    def parse(cls, values: Mapping[str, str], environ: Mapping[str, str] | None = None) -> RegistryConfig:
        """The registry's settings (``environ``: where ``SCHEMA_REGISTRY_OPTS`` is read, by
        default this process's environment)."""
        listeners = values.get("listeners", "http://0.0.0.0:8081")
        items = [item.strip() for item in listeners.split(",") if item.strip()]
        url = urlsplit(items[0] if items else "")
        if len(items) != 1 or url.scheme not in ("http", "https") or not url.hostname or url.port is None:
            raise ConfigError(f"listeners={listeners}: expected one http://host:port or https://host:port")
        protocol = values.get("inter.instance.protocol", "").strip().lower() or url.scheme
        if protocol != url.scheme:
            raise ConfigError(
                f"inter.instance.protocol={protocol}: no {protocol} listener (listeners={listeners})"
            )
        tls = TlsConfig.parse(values)
        if url.scheme == "https" and not tls.keystore_location:
            raise ConfigError(
                f"listeners={listeners}: an https listener needs ssl.keystore.location (and "
                "ssl.keystore.password)"
            )
        auth = AuthConfig.parse(values, os.environ if environ is None else environ)
        bootstrap = values.get("kafkastore.bootstrap.servers", "").strip()
        if not bootstrap:
            raise ConfigError(
                "kafkastore.bootstrap.servers is required: the Kafka cluster that holds the schemas"
            )
        # Kafka's listener form (PLAINTEXT://host:port) names the same address.
        bootstrap = ",".join(b.split("://", 1)[-1].strip() for b in bootstrap.split(","))
        level = values.get("schema.compatibility.level", "backward").strip().upper()
        if level not in LEVELS:
            raise ConfigError(
                f"schema.compatibility.level={level.lower()}: not one of {', '.join(LEVELS).lower()}"
            )
        client: dict[str, Any] = {"bootstrap.servers": bootstrap}
        for ours, theirs in (
            ("kafkastore.security.protocol", "security.protocol"),
            ("kafkastore.sasl.mechanism", "sasl.mechanism"),
            ("kafkastore.sasl.username", "sasl.username"),
            ("kafkastore.sasl.password", "sasl.password"),
        ):
            if values.get(ours):
                client[theirs] = values[ours]
        eligible = values.get("leader.eligibility", "true").strip().lower()
        if eligible not in ("true", "false"):
            raise ConfigError(f"leader.eligibility={eligible}: expected true or false")
        advertised = values.get("host.name", "").strip() or (
            "127.0.0.1" if url.hostname in ("0.0.0.0", "::") else url.hostname
        )
        return cls(
            group_id=values.get("schema.registry.group.id", "schema-registry"),
            eligible=eligible == "true",
            session_timeout_ms=_int(values, "kafkagroup.session.timeout.ms", 10_000),
            advertised_host=advertised,
            host=url.hostname,
            port=url.port,
            bootstrap=bootstrap,
            topic=values.get("kafkastore.topic", "_schemas"),
            replication_factor=_int(values, "kafkastore.topic.replication.factor", 3),
            timeout_ms=_int(values, "kafkastore.timeout.ms", 500),
            init_timeout_ms=_int(values, "kafkastore.init.timeout.ms", 60_000),
            compatibility_level=level,
            client=client,
            scheme=url.scheme,
            tls=tls,
            auth=auth,
            shutdown_graceful_ms=_int(values, "shutdown.graceful.ms", 1000),
        )


class RegistryServer:
    def __init__(self, config: RegistryConfig) -> None:
        self.config = config
        self.state = RegistryState()
        self.lock = threading.Lock()
        self.store = SchemaTopic(
            config.client,
            config.topic,
            self.state.apply,
            self.lock,
            replication_factor=config.replication_factor,
            timeout_s=config.timeout_ms / 1000,
            init_timeout_s=config.init_timeout_ms / 1000,
        )
        self.registry = Registry(self.store, self.state, self.lock, config.compatibility_level)
        self.election = Election(
            config.client,
            config.topic,
            config.group_id,
            f"{config.scheme}://{config.advertised_host}:{config.port}",
            config.eligible,
            config.session_timeout_ms,
        )
        # Made now, so that a keystore or password file that cannot be used stops the start.
        https = config.scheme == "https"
        self.ssl_context: ssl.SSLContext | None = config.tls.server_context() if https else None
        # The calls to the primary (forwarded writes): the truststore, and the keystore's
        # certificate for a primary that asks for one.
        self.forward_tls: ssl.SSLContext | None = config.tls.client_context() if https else None
        self.app = config.auth.middleware(create_app(self.registry, self.election, self.forward_tls))
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.config.host in ("0.0.0.0", "::") else self.config.host
        return f"{self.config.scheme}://{host}:{self.config.port}"

    def _uvicorn(self) -> uvicorn.Server:
        context = self.ssl_context
        return uvicorn.Server(
            uvicorn.Config(
                self.app,
                host=self.config.host,
                port=self.config.port,
                log_level="warning",
                lifespan="off",
                # rest-utils' shutdown.graceful.ms: an idle keep-alive connection is not waited
                # for past it (a TLS one would hold the shutdown for its close_notify).
                # (uvicorn takes whole seconds: at least one.)
                timeout_graceful_shutdown=max(1, round(self.config.shutdown_graceful_ms / 1000)),
                # uvicorn asks a factory for an https server's context; ours is made already.
                ssl_context_factory=(lambda _config, _default: context) if context is not None else None,
            )
        )

    def start(self, timeout_s: float = 30.0) -> RegistryServer:
        """Read the store, then serve on a thread; returns once requests are answered."""
        self.store.start()
        self._server = self._uvicorn()
        self._thread = threading.Thread(target=self._server.run, name="schema-registry-http", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.store.stop()
                raise StoreError(f"the registry could not listen on {self.config.host}:{self.config.port}")
            time.sleep(0.02)
        self.election.start()
        log.info("Schema Registry listening on %s (store: topic %s)", self.url, self.config.topic)
        return self

    def stop(self) -> None:
        self.election.stop()
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)
        self.store.stop()

    def run(self) -> None:
        """Serve in this thread (the main one) until SIGTERM or SIGINT."""
        self.store.start()
        # uvicorn shuts down on SIGTERM and SIGINT, then raises the signal again once the
        # handlers it replaced are back: these make that a clean exit (status 0).
        signal.signal(signal.SIGTERM, lambda *_: None)
        signal.signal(signal.SIGINT, lambda *_: None)
        server = self._uvicorn()
        log.info("Schema Registry listening on %s (store: topic %s)", self.url, self.config.topic)
        # The election joins once the listener is up (the others may forward at once).
        threading.Thread(target=self.election.start, name="schema-registry-join", daemon=True).start()
        try:
            server.run()
        finally:
            self.election.stop()
            self.store.stop()


def load_values(path: str | None, overrides: list[str]) -> dict[str, str]:
    values: dict[str, str] = {}
    if path is not None:
        props = Properties()
        try:
            with Path(path).open("rb") as f:
                props.load(f, "utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
        values.update({k: v.data for k, v in props.items()})
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--override {item!r}: expected key=value")
        values[key.strip()] = value.strip()
    return values


def main(argv: list[str] | None = None, prog: str = "sluiceway schema-registry") -> int:
    parser = argparse.ArgumentParser(prog=prog, description="Run the Confluent-compatible Schema Registry.")
    parser.add_argument("config", nargs="?", help="a schema-registry.properties file")
    parser.add_argument("--override", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--log-level", default="INFO")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(
        level=getattr(logging, args.log_level.upper(), logging.INFO),
        format="[%(asctime)s] %(levelname)s %(message)s (%(name)s)",
        stream=sys.stderr,
    )
    try:
        server = RegistryServer(RegistryConfig.parse(load_values(args.config, args.override)))
    except ConfigError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    try:
        server.run()
    except StoreError as exc:
        log.error("%s", exc)
        return 1
    except KeyboardInterrupt:
        pass
    return 0
