"""``embedded.broker.enable=true``: run Sluiceway's broker inside the worker process.

The worker then needs nothing else: the broker listens on the first
``bootstrap.servers`` address, keeps its data in ``embedded.broker.log.dirs``, and
runs on its own thread and event loop. The worker still talks to it only over the
Kafka protocol, exactly as to a remote cluster; this module is the one place the
runtime touches the broker package, to start and stop it.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Protocol

from connect.api.errors import ConnectException
from connect.runtime.config import WorkerConfig

log = logging.getLogger(__name__)


class EmbeddedBrokerHandle(Protocol):
    @property
    def bootstrap(self) -> str: ...

    def stop(self, timeout: float = 30.0) -> None: ...


def start_embedded_broker(config: WorkerConfig) -> EmbeddedBrokerHandle:
    from broker.config import ConfigError, load_config
    from broker.server import EmbeddedBroker

    first = config.bootstrap_servers.split(",")[0].strip()
    host, sep, port = first.rpartition(":")
    if not sep or not port.isdigit():
        raise ConnectException(f"embedded.broker.enable needs bootstrap.servers as host:port, not {first!r}")
    log_dirs = config.embedded_broker_log_dirs or str(Path("data") / "embedded-broker")
    overrides = {
        k[len("embedded.broker.") :]: str(v)
        for k, v in (config.model_extra or {}).items()
        if k.startswith("embedded.broker.")
        and k not in ("embedded.broker.enable", "embedded.broker.log.dirs")
    }
    try:
        broker_config = load_config(
            {
                "listeners": f"PLAINTEXT://{host or '127.0.0.1'}:{port}",
                "log.dirs": log_dirs,
                "group.initial.rebalance.delay.ms": "0",
                **overrides,
            }
        )
    except ConfigError as exc:
        raise ConnectException(f"embedded broker: {exc}") from None
    broker = EmbeddedBroker(broker_config).start()
    log.info("embedded broker started on %s with data in %s", broker.bootstrap, log_dirs)
    return broker
