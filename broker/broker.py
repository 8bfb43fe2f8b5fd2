"""The broker's state as the request handlers see it: logs, groups, endpoints, caches.

Networking lives in ``broker.server``; this object is what a handler receives
through its ``RequestContext``. Handlers are looked up once per request by API
key; they return a kio response entity (built with ``RequestContext.respond``),
an ``EncodedBody`` from a cache, or None when the protocol wants no response
(Produce with acks=0).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from broker.authorizer.authorizer import Authorizer, create_authorizer
from broker.config import BrokerConfig, Listener
from broker.group.coordinator import GroupCoordinator
from broker.logs import LogManager
from broker.metrics import BrokerMetrics
from broker.protocol.build import build
from broker.protocol.codec import EncodedBody, response_class
from broker.security.scram_store import ScramStore
from broker.transactions import TransactionCoordinator

log = logging.getLogger(__name__)


ANONYMOUS = "User:ANONYMOUS"


@dataclass(slots=True)
class RequestContext:
    broker: Broker
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    client_host: str
    # Who the connection authenticated as (Kafka's KafkaPrincipal, "User:<name>"); the
    # listener's security protocol decides how, ANONYMOUS on a PLAINTEXT listener.
    principal: str = ANONYMOUS
    listener: str = "PLAINTEXT"
    # Runs ``fn(*args)`` once this request's answer is handed to the transport (the server
    # sets it; a handler called without a server falls back to the event loop's call_soon).
    after_answer: Callable[..., object] | None = None

    def respond(self, data: dict[str, Any] | None = None, /, **fields: Any) -> Any:
        """The response entity of this request's API and version, built from plain data."""
        return build(response_class(self.api_key, self.api_version), data, **fields)


Handler = Callable[[RequestContext, Any], Awaitable[Any]]


class Broker:
    def __init__(self, config: BrokerConfig, clock_ms: Callable[[], int] | None = None) -> None:
        self.config = config
        self.clock_ms = clock_ms or (lambda: int(time.time() * 1000))
        self.logs = LogManager(config, self.clock_ms)
        self.groups = GroupCoordinator(config, self.logs, self.clock_ms)
        self.transactions = TransactionCoordinator(
            config,
            self.logs,
            self.clock_ms,
            complete_offsets=lambda pid, epoch, committed: self.groups.complete_transaction(
                pid, epoch, committed
            ),
        )
        self.metrics = BrokerMetrics()
        self.metrics.attach(self)
        self.node_id = config.node
        self.endpoints: list[Listener] = []  # advertised, with real ports once bound
        self._cache: dict[Any, tuple[int, EncodedBody]] = {}
        self.scram: ScramStore  # SCRAM credentials, in the data directory once open
        self.authorizer: Authorizer | None = None  # set by open() when authorizer.class.name is set

    @property
    def cluster_id(self) -> str:
        return self.logs.cluster_id

    @property
    def endpoint(self) -> Listener:
        return self.endpoints[0]

    def endpoint_for(self, listener: str) -> Listener:
        """The advertised endpoint of ``listener``: Kafka answers Metadata with the brokers'
        endpoints of the listener the request came in on."""
        for ep in self.endpoints:
            if ep.name == listener:
                return ep
        return self.endpoints[0]

    def open(self) -> None:
        self.logs.open()
        try:
            self.scram = ScramStore(self.logs.data_dir)
            self.authorizer = create_authorizer(self.config, self.logs.data_dir)
            self.groups.load()
            # After the groups: finishing a transaction caught in Prepare* completes its
            # offsets in the group coordinator.
            self.transactions.load()
        except BaseException:
            self.logs.close()  # releases log.dirs' lock: a corrected config can start at once
            raise

    def close(self) -> None:
        self.transactions.shutdown()
        self.groups.shutdown()
        self.logs.close()

    # -- response caches --------------------------------------------------------------

    def cached(self, key: Any, make: Callable[[], Any]) -> EncodedBody:
        """An encoded response body valid until the topic metadata next changes."""
        from broker.protocol.codec import encode_body

        version = self.logs.metadata.version
        hit = self._cache.get(key)
        if hit is not None and hit[0] == version:
            return hit[1]
        body = encode_body(make())
        if len(self._cache) > 256:
            self._cache.clear()
        self._cache[key] = (version, body)
        return body
