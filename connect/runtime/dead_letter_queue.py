"""The dead letter queue of sink connectors (``errors.deadletterqueue.topic.name``).

A record the connector could not convert, transform or write is sent as it was
consumed (original key, value and headers) to the DLQ topic, with Kafka Connect's
``__connect.errors.*`` headers describing where and why when
``errors.deadletterqueue.context.headers.enable=true``. The topic is created on
first use (one partition, ``errors.deadletterqueue.topic.replication.factor``).
Reporting waits for Kafka's acknowledgement: the record is only skipped once it is
safely in the DLQ.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # re-exported untyped

from connect.api.errors import ConnectException
from connect.runtime.errors import ErrorReporter, ProcessingContext

log = logging.getLogger(__name__)

_SEND_TIMEOUT_S = 30.0


class DeadLetterQueueReporter(ErrorReporter):
    def __init__(
        self,
        topic: str,
        producer_config: dict[str, Any],
        admin_config: dict[str, Any],
        replication_factor: int,
        context_headers: bool,
    ) -> None:
        self.topic = topic
        self.context_headers = context_headers
        self._create_topic(admin_config, replication_factor)
        self.producer = Producer(producer_config)
        # Kafka's deadletterqueue-produce-requests / -failures (task error metrics)
        self.produce_requests = 0
        self.produce_failures = 0

    def _create_topic(self, admin_config: dict[str, Any], replication_factor: int) -> None:
        admin = AdminClient(admin_config)
        try:
            if self.topic in admin.list_topics(timeout=15).topics:
                return
            admin.create_topics([NewTopic(self.topic, 1, replication_factor)])[self.topic].result(30)
            log.info("created dead letter queue topic %s", self.topic)
        except KafkaException as exc:
            err = exc.args[0]
            if err.code() == KafkaError.TOPIC_ALREADY_EXISTS:
                return
            hint = ""
            if err.code() == KafkaError.INVALID_REPLICATION_FACTOR:
                hint = (
                    " (set errors.deadletterqueue.topic.replication.factor to at most the number of brokers)"
                )
            raise ConnectException(
                f"cannot create the dead letter queue topic {self.topic}: {err.str()}{hint}"
            ) from exc

    def report(self, ctx: ProcessingContext) -> Future[None]:
        done: Future[None] = Future()
        raw = ctx.consumed
        if raw is None:
            done.set_result(None)  # only sinks have a dead letter queue
            return done
        headers: list[tuple[str, str | bytes | None]] = list(raw.headers)
        if self.context_headers:
            headers += ctx.error_headers()

        def delivered(err: KafkaError | None, _msg: Any) -> None:
            if err is None:
                done.set_result(None)
            else:
                self.produce_failures += 1
                done.set_exception(
                    ConnectException(f"could not write to the dead letter queue {self.topic}: {err.str()}")
                )

        self.produce_requests += 1
        self.producer.produce(
            self.topic,
            key=raw.key,
            value=raw.value,
            headers=headers or None,
            timestamp=raw.timestamp or 0,
            on_delivery=delivered,
        )
        if self.producer.flush(_SEND_TIMEOUT_S) and not done.done():
            self.produce_failures += 1
            done.set_exception(ConnectException(f"timed out writing to the dead letter queue {self.topic}"))
        return done

    def close(self) -> None:
        self.producer.flush(_SEND_TIMEOUT_S)
