"""The ``_schemas`` topic as the registry's store: read to its end at start, tailed by a
thread that applies every record in order, and written through (a write returns once
the tailing thread has applied it, so what a request wrote is what the next one reads).

The topic must have one partition and ``cleanup.policy=compact`` (Confluent's
``KafkaStore`` refuses anything else); it is created so when missing, with the
replication factor asked for, or as many as the cluster has brokers if fewer.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (  # type: ignore[attr-defined]  # re-exported untyped
    AdminClient,
    ConfigResource,
    NewTopic,
)

from schema_registry.errors import RegistryError
from schema_registry.records import (
    Key,
    NoopKey,
    RecordError,
    Value,
    decode_key,
    decode_value,
    encode_key,
    encode_value,
)

__all__ = ["SchemaTopic", "StoreError"]

log = logging.getLogger(__name__)

Apply = Callable[[Key, Value | None], None]


class StoreError(Exception):
    """The topic cannot serve as the store (wrong shape, unreachable cluster)."""


class SchemaTopic:
    def __init__(
        self,
        client: dict[str, Any],
        topic: str,
        apply: Apply,
        lock: threading.Lock,
        replication_factor: int = 3,
        timeout_s: float = 0.5,
        init_timeout_s: float = 60.0,
    ) -> None:
        self.client = dict(client)  # bootstrap.servers and security settings
        self.topic = topic
        self.apply = apply
        self.lock = lock  # held while a record is applied; queries hold it too
        self.replication_factor = replication_factor
        self.timeout_s = timeout_s
        self.init_timeout_s = init_timeout_s
        self._applied = -1  # offset of the last record applied
        self._applied_changed = threading.Condition(threading.Lock())
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._consumer: Consumer | None = None
        # The end of the topic is asked of a consumer of its own: librdkafka's consumer
        # does not answer get_watermark_offsets while another thread is in its consume().
        self._watermarks: Consumer | None = None
        self._producer: Producer | None = None

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        self._ensure_topic()
        self._producer = Producer({**self.client, "acks": "all", "enable.idempotence": True, "linger.ms": 0})
        self._consumer = Consumer(
            {
                **self.client,
                "group.id": f"schema-registry-reader-{id(self)}",  # never joined: partitions are assigned
                "enable.auto.commit": False,
                "enable.partition.eof": False,
            }
        )
        self._consumer.assign([TopicPartition(self.topic, 0, OFFSET_BEGINNING)])
        self._watermarks = Consumer(
            {**self.client, "group.id": f"schema-registry-end-{id(self)}", "enable.auto.commit": False}
        )
        self._thread = threading.Thread(target=self._tail, name="schemas-reader", daemon=True)
        self._thread.start()
        self.read_to_end(self.init_timeout_s)
        log.info("read topic %s to offset %d", self.topic, self._applied)

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(10)
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None
        if self._watermarks is not None:
            self._watermarks.close()
            self._watermarks = None
        if self._producer is not None:
            self._producer.flush(5)
            self._producer = None  # librdkafka's client goes with its last reference

    def _ensure_topic(self) -> None:
        admin = AdminClient(self.client)
        try:
            metadata = admin.list_topics(timeout=self.init_timeout_s)
        except KafkaException as exc:
            raise StoreError(
                f"cannot reach the Kafka cluster at {self.client.get('bootstrap.servers')}: {exc}"
            ) from None
        found = metadata.topics.get(self.topic)
        if found is None or found.error is not None:
            rf = max(1, min(self.replication_factor, len(metadata.brokers)))
            if rf < self.replication_factor:
                log.warning(
                    "creating %s with replication factor %d: the cluster has %d brokers",
                    self.topic,
                    rf,
                    len(metadata.brokers),
                )
            futures = admin.create_topics(
                [NewTopic(self.topic, 1, rf, config={"cleanup.policy": "compact"})], request_timeout=30
            )
            try:
                futures[self.topic].result(30)
            except KafkaException as exc:
                if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                    raise StoreError(f"cannot create the schemas topic {self.topic}: {exc}") from None
            return
        if len(found.partitions) != 1:
            raise StoreError(
                f"the schemas topic {self.topic} has {len(found.partitions)} partitions; "
                "it must have exactly 1"
            )
        resource = ConfigResource(ConfigResource.Type.TOPIC, self.topic)
        configs = admin.describe_configs([resource])[resource].result(30)
        policy = configs.get("cleanup.policy")
        if policy is not None and policy.value != "compact":
            raise StoreError(
                f"the schemas topic {self.topic} has cleanup.policy={policy.value}; it must be compact, or "
                "schemas are lost when the topic's retention deletes them"
            )

    # -- reading --------------------------------------------------------------------------------

    def _tail(self) -> None:
        consumer = self._consumer
        assert consumer is not None
        while not self._stopping.is_set():
            try:
                # poll waits for the first record and consume takes what else is there:
                # consume(n, timeout) alone would wait out its timeout for fewer than n.
                first = consumer.poll(0.1)
                messages = [] if first is None else [first, *consumer.consume(500, 0)]
            except KafkaException as exc:
                log.warning("reading %s: %s", self.topic, exc)
                continue
            last = None
            for m in messages:
                err, offset = m.error(), m.offset()
                if err is not None or offset is None:
                    if err is not None and err.code() != KafkaError._PARTITION_EOF:
                        log.warning("reading %s: %s", self.topic, err)
                    continue
                self._apply(m.key(), m.value(), offset)
                last = offset
            if last is not None:
                with self._applied_changed:
                    self._applied = last
                    self._applied_changed.notify_all()

    def _apply(self, raw_key: bytes | None, raw_value: bytes | None, offset: int) -> None:
        if raw_key is None:
            log.warning("skipping a record without a key at %s offset %d", self.topic, offset)
            return
        try:
            key = decode_key(raw_key)
            value = decode_value(key, raw_value)
        except RecordError as exc:
            log.warning("skipping the record at %s offset %d: %s", self.topic, offset, exc)
            return
        with self.lock:
            self.apply(key, value)

    def _wait_applied(self, offset: int, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        with self._applied_changed:
            while self._applied < offset:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._applied_changed.wait(left)
        return True

    def read_to_end(self, timeout_s: float | None = None) -> None:
        """Wait until every record written so far (by any instance) is applied."""
        assert self._watermarks is not None
        timeout = self.timeout_s if timeout_s is None else timeout_s
        try:
            _, high = self._watermarks.get_watermark_offsets(
                TopicPartition(self.topic, 0), timeout=max(timeout, 5.0), cached=False
            )
        except KafkaException as exc:
            raise RegistryError.store_error(f"cannot read the end of {self.topic}: {exc}") from None
        if high > 0 and not self._wait_applied(high - 1, max(timeout, 5.0)):
            raise RegistryError.store_timeout(f"{self.topic} was not read to offset {high - 1} in time")

    # -- writing --------------------------------------------------------------------------------

    def write(self, key: Key, value: Value | None) -> None:
        """Append the record and return once it is applied."""
        producer = self._producer
        assert producer is not None
        done = threading.Event()
        outcome: list[Any] = []

        def delivered(err: KafkaError | None, msg: Any) -> None:
            outcome.append(err if err is not None else msg.offset())
            done.set()

        producer.produce(self.topic, encode_value(value), encode_key(key), 0, delivered)
        deadline = time.monotonic() + max(self.timeout_s, 10.0)
        while not done.is_set() and time.monotonic() < deadline:
            producer.poll(0.05)
        if not outcome:
            raise RegistryError.store_timeout(f"the write to {self.topic} was not acknowledged in time")
        if isinstance(outcome[0], KafkaError):
            raise RegistryError.store_error(f"writing to {self.topic}: {outcome[0].str()}")
        if not self._wait_applied(outcome[0], max(self.timeout_s, 10.0)):
            raise RegistryError.store_timeout(f"the record at offset {outcome[0]} was not read back in time")

    def noop(self) -> None:
        """Write a NOOP record (Confluent's way to find the end of the topic)."""
        self.write(NoopKey(), None)
