"""Kafka client settings for tasks: Kafka Connect's defaults, the worker's ``producer.``/
``consumer.``/``admin.`` settings and the connector's ``*.override.*`` keys, in that order.

Clients are librdkafka's (confluent-kafka); the Java client keys Kafka Connect users put
in worker files are translated by ``connect.api.kafka_clients.librdkafka_config``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

from connect.api.kafka_clients import librdkafka_config

log = logging.getLogger(__name__)


# librdkafka's own log lines go through Python logging (levels, format, [connector|task] context).
CLIENT_LOGGER = logging.getLogger("librdkafka")


class _ConnectionNoise(logging.Filter):
    """librdkafka reports every failed reconnect to an unreachable broker as an ERROR, many
    times a second per client; Kafka's Java clients warn. A broker that is away is worth a
    WARNING per client and broker now and then, not a flood of errors."""

    INTERVAL_S = 30.0
    _MARKERS = ("Connection refused", "failed: ", "Connect to ", "Disconnected", "timed out")

    def __init__(self) -> None:
        super().__init__()
        self._last: dict[str, float] = {}
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if not message.startswith("FAIL ") or not any(m in message for m in self._MARKERS):
            return True
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        key = message.split("]", 1)[0]  # "FAIL [client#type-n" : one line per client now and then
        now = time.monotonic()
        with self._lock:
            last = self._last.get(key)
            if last is not None and now - last < self.INTERVAL_S:
                return False
            self._last[key] = now
        return True


CLIENT_LOGGER.addFilter(_ConnectionNoise())


def producer_config(
    bootstrap: str, client_id: str, worker: Mapping[str, Any], overrides: Mapping[str, Any]
) -> dict[str, Any]:
    base: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "client.id": client_id,
        "logger": CLIENT_LOGGER,
        # At-least-once without reordering: every record acknowledged by all replicas,
        # retried forever while the broker is away, in order.
        "acks": "all",
        "enable.idempotence": True,
        "message.timeout.ms": 0,
        "linger.ms": 5,
    }
    base.update(librdkafka_config(worker))
    base.update(librdkafka_config(overrides))
    return base


def consumer_config(
    bootstrap: str, group_id: str, client_id: str, worker: Mapping[str, Any], overrides: Mapping[str, Any]
) -> dict[str, Any]:
    base: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "group.id": group_id,
        "client.id": client_id,
        "logger": CLIENT_LOGGER,
        # The task commits what it has flushed; librdkafka must never commit on its own.
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "auto.offset.reset": "earliest",
        # librdkafka stops fetching for fetch.queue.backoff.ms (default 1 s) whenever
        # queued.min.messages are buffered; a sink drains that queue in well under a
        # second, so a long backoff leaves it idle most of the time.
        "fetch.queue.backoff.ms": 10,
    }
    base.update(librdkafka_config(worker))
    base.update(librdkafka_config(overrides))
    return base


def admin_config(
    bootstrap: str, client_id: str, worker: Mapping[str, Any], overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    base: dict[str, Any] = {"bootstrap.servers": bootstrap, "client.id": client_id, "logger": CLIENT_LOGGER}
    base.update(librdkafka_config(worker))
    base.update(librdkafka_config(overrides or {}))
    return base


def sink_batch_size(worker: Mapping[str, Any], overrides: Mapping[str, Any]) -> int:
    """``max.poll.records`` (Kafka's default 500): records handed to one ``put``."""
    value = overrides.get("max.poll.records", worker.get("max.poll.records", 500))
    return max(int(value), 1)
