"""The leader's transactional writer of the config topic (Kafka's "fencable producer").

With exactly-once source support enabled or being prepared, only the leader writes the
config topic, through a producer whose ``transactional.id`` is
``connect-cluster-<group.id>``. Claiming it (``init_transactions``) fences the producer of
any earlier leader, so a worker that lost the leadership without knowing (a zombie) can
write no more. A failed write gives the claim up; the herder claims again while it leads.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from confluent_kafka import KafkaException, Producer

from connect.api.errors import ConnectException
from connect.runtime import clients
from connect.runtime.exactly_once import transactional_producer_config
from connect.storage.kafka_log import make_client

log = logging.getLogger(__name__)


class FencableWriter:
    """Writes records to one partition of ``topic`` in transactions of ``transactional_id``."""

    def __init__(
        self,
        bootstrap_servers: str,
        topic: str,
        transactional_id: str,
        client_id: str,
        client_settings: Mapping[str, Any],
        timeout_s: float,
    ) -> None:
        self.topic = topic
        self.transactional_id = transactional_id
        self._config = transactional_producer_config(
            clients.producer_config(bootstrap_servers, client_id, client_settings, {}), transactional_id
        )
        self._timeout_s = timeout_s
        self._lock = threading.Lock()
        self._producer: Producer | None = None

    def claim(self) -> None:
        """Init the producer (fencing any earlier one of the id); no-op while held."""
        with self._lock:
            if self._producer is not None:
                return
            producer = make_client(Producer, self._config)
            try:
                producer.init_transactions(self._timeout_s)
            except KafkaException as exc:
                raise ConnectException(
                    f"Failed to create and initialize fencable producer for config topic: {exc.args[0].str()}"
                ) from exc
            self._producer = producer
        log.info(
            "claimed write privileges for topic %s (transactional.id %s)", self.topic, self.transactional_id
        )

    def relinquish(self) -> None:
        with self._lock:
            producer, self._producer = self._producer, None
        if producer is not None:
            producer.purge()
            producer.flush(0)

    def send(self, records: Sequence[tuple[str, bytes | None]], what: str, deadline: float) -> None:
        """All of ``records`` in one committed transaction, or ConnectException (the claim is
        given up then)."""
        with self._lock:
            producer = self._producer
            if producer is None:
                raise ConnectException(
                    f"Error writing {what} to Kafka: cannot produce to config topic without claiming write "
                    "privileges first"
                )
            try:
                producer.begin_transaction()
                for key, value in records:
                    producer.produce(self.topic, value, key.encode(), 0)
                producer.commit_transaction(max(deadline - time.monotonic(), 1.0))
                return
            except (KafkaException, BufferError) as exc:
                failure = exc
        log.warning("Failed to perform fencable send to config topic: %s", failure)
        self.relinquish()
        raise ConnectException(f"Error writing {what} to Kafka: failed to perform fencable send: {failure}")
