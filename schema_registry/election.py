"""Several registry instances on one ``kafkastore.topic``: one primary takes the writes, the
others forward theirs to it (Confluent's Kafka-based leader election, in spirit).

The broker's group protocol decides: every eligible instance (``leader.eligibility``,
default true) joins the consumer group ``schema.registry.group.id`` subscribed to the
store's topic, and the member assigned its one partition is the primary. When the
primary's session ends (stopped, or killed: ``kafkagroup.session.timeout.ms``) the group
assigns the partition to another member, which becomes the primary. Members set their
``client.id`` to their URL, so any instance (eligible or not) finds the primary's URL in
the group's description. The partition is paused once assigned: the group is only for
the election (the store reads the topic with a consumer of its own). The cooperative
assignor moves only what must move, so instances of other registries in the same group
(on other topics) are not disturbed.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from confluent_kafka import Consumer, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient

__all__ = ["Election"]

log = logging.getLogger(__name__)


class Election:
    def __init__(
        self,
        client: dict[str, Any],
        topic: str,
        group_id: str,
        url: str,
        eligible: bool = True,
        session_timeout_ms: int = 10_000,
    ) -> None:
        self.client = dict(client)
        self.topic = topic
        self.group_id = group_id
        self.url = url
        self.eligible = eligible
        self.session_timeout_ms = session_timeout_ms
        self._primary = False
        self._stopping = threading.Event()
        self._consumer: Consumer | None = None
        self._thread: threading.Thread | None = None
        self._admin: AdminClient | None = None
        self._known: tuple[float, str | None] = (0.0, None)  # when looked up, the primary's URL

    def start(self, settle_s: float = 15.0) -> None:
        """Join the group (if eligible) and wait until some instance is the primary."""
        self._admin = AdminClient(self.client)
        if self.eligible:
            self._consumer = Consumer(
                {
                    **self.client,
                    "group.id": self.group_id,
                    "client.id": self.url,
                    "enable.auto.commit": False,
                    "session.timeout.ms": self.session_timeout_ms,
                    "heartbeat.interval.ms": max(500, self.session_timeout_ms // 5),
                    "partition.assignment.strategy": "cooperative-sticky",
                }
            )
            self._consumer.subscribe([self.topic], on_assign=self._assigned, on_revoke=self._revoked)
            self._thread = threading.Thread(target=self._run, name="schema-registry-election", daemon=True)
            self._thread.start()
        deadline = time.monotonic() + settle_s
        while time.monotonic() < deadline and self.primary_url(fresh=True) is None:
            time.sleep(0.1)

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(10)
        if self._consumer is not None:
            self._consumer.close()  # leaves the group: another member is assigned at once
            self._consumer = None
        self._admin = None  # librdkafka's client goes with its last reference
        self._primary = False

    def _run(self) -> None:
        consumer = self._consumer
        assert consumer is not None
        while not self._stopping.is_set():
            try:
                consumer.poll(0.2)  # keeps the membership; the partition is paused, nothing comes
            except KafkaException as exc:
                log.warning("schema registry election: %s", exc)

    def _ours(self, partitions: list[TopicPartition]) -> list[TopicPartition]:
        return [p for p in partitions if p.topic == self.topic]

    def _assigned(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        ours = self._ours(partitions)
        if ours:
            consumer.incremental_assign(partitions)
            consumer.pause(ours)
            self._primary = True
            log.info("this instance (%s) is the primary of the registry on %s", self.url, self.topic)
        elif partitions:
            consumer.incremental_assign(partitions)

    def _revoked(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        if self._ours(partitions):
            self._primary = False
            log.info("this instance (%s) is no longer the primary", self.url)
        if partitions:
            consumer.incremental_unassign(partitions)

    @property
    def is_primary(self) -> bool:
        return self._primary

    def primary_url(self, fresh: bool = False) -> str | None:
        """The primary's URL (this instance's when it is the primary), from the group's
        description (looked up at most every half second)."""
        if self._primary:
            return self.url
        checked, known = self._known
        if not fresh and time.monotonic() - checked < 0.5:
            return known
        admin = self._admin
        assert admin is not None
        found: str | None = None
        try:
            description = admin.describe_consumer_groups([self.group_id])[self.group_id].result(10)
            for member in description.members:
                assignment = member.assignment.topic_partitions if member.assignment else []
                if any(tp.topic == self.topic and tp.partition == 0 for tp in assignment):
                    found = member.client_id
        except KafkaException as exc:
            log.warning("cannot describe the registry group %s: %s", self.group_id, exc)
        self._known = (time.monotonic(), found)
        return found

    def wait_primary(self, timeout_s: float) -> str | None:
        """The primary's URL, waiting up to ``timeout_s`` for one (a failover in progress)."""
        deadline = time.monotonic() + timeout_s
        while True:
            url = self.primary_url(fresh=True)
            if url is not None or time.monotonic() > deadline:
                return url
            time.sleep(0.2)
