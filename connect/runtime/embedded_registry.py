"""``embedded.schema.registry.listeners``: run the Schema Registry inside the worker process.

For the one-process default: a worker with ``embedded.broker.enable=true`` and
``embedded.schema.registry.listeners=http://127.0.0.1:8081`` needs nothing else to run
pipelines with the AvroConverter (``value.converter.schema.registry.url`` set to that
address). The registry keeps its schemas in the worker's cluster (``bootstrap.servers``),
in ``_schemas`` unless ``embedded.schema.registry.kafkastore.topic`` says otherwise; any
other ``embedded.schema.registry.<key>`` is the registry's ``<key>``: an https listener and
its ``ssl.*`` keys, ``authentication.method=BASIC`` with ``authentication.realm`` and
``java.security.auth.login.config`` (else the JAAS file named in ``KAFKA_OPTS``, as one JVM
would share it) all reach it that way. Converters still
reach it only over HTTP; this module is the one place the runtime touches the registry
package, to start and stop it.
"""

from __future__ import annotations

import logging
from typing import Protocol

from connect.api.errors import ConnectException
from connect.runtime.config import WorkerConfig

log = logging.getLogger(__name__)

PREFIX = "embedded.schema.registry."


class EmbeddedRegistryHandle(Protocol):
    @property
    def url(self) -> str: ...

    def stop(self) -> None: ...


def start_embedded_registry(config: WorkerConfig) -> EmbeddedRegistryHandle | None:
    """The registry, started, when ``embedded.schema.registry.listeners`` is set."""
    extra = {k: str(v) for k, v in (config.model_extra or {}).items()}
    listeners = extra.get(PREFIX + "listeners", "").strip()
    if not listeners:
        return None
    from schema_registry.server import ConfigError, RegistryConfig, RegistryServer
    from schema_registry.store import StoreError

    values = {
        "kafkastore.bootstrap.servers": config.bootstrap_servers,
        **{k[len(PREFIX) :]: v for k, v in extra.items() if k.startswith(PREFIX)},
    }
    try:
        registry = RegistryServer(RegistryConfig.parse(values)).start()
    except ConfigError as exc:
        raise ConnectException(f"embedded schema registry: {exc}") from None
    except StoreError as exc:
        raise ConnectException(f"embedded schema registry: {exc}") from None
    log.info("embedded Schema Registry listening on %s", registry.url)
    return registry
