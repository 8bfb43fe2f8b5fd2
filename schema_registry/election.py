"""Several registry instances on one ``kafkastore.topic``: one primary takes the writes, the
others forward theirs to it (Confluent's Kafka-based leader election, in spirit).

The broker's group protocol decides: every eligible instance (``leader.eligibility``,
default true) joins the consumer group ``schema.registry.group.id`` subscribed to the
store's topic, and the member assigned its one partition is the primary. When the
primary's session ends (stopped, or killed: ``kafkagroup.session.timeout.ms``) the group
assigns the partition to another member, which becomes the primary. The partition is
paused once assigned: the group is only for the election (the store reads the topic with a
consumer of its own). The cooperative assignor moves only what must move, so instances of
other registries in the same group (on other topics) are not disturbed.

The primary announces its URL as the group's committed offset of that partition: offset 0
with metadata ``{"url": ...}``, committed as a member of the group, so the broker takes it
only from a member of the current generation (a deposed primary's late commit is refused
with ILLEGAL_GENERATION) and the last commit taken is the sitting primary's. Any instance
reads it with a consumer's OffsetFetch (``Consumer.committed``) through a consumer of the
group that never joins it (not through the election's consumer: confluent-kafka serializes
the calls on one consumer, and the election's polls back to back).
The primary reads its announcement back every few seconds and commits it again when it is
missing or names another (a commit lost between two rebalances, offsets deleted).

Not ``AdminClient.describe_consumer_groups`` (members' ``client.id``, as before): librdkafka
2.x aborts the whole process (``rd_kafka_enq_once_del_source_return: Assertion
`eonce->refcnt > 0' failed``, confluentinc/librdkafka#4605) when a coordinator-bound admin
request meets a dropped connection, which a broker restart makes happen, and the registry
runs inside every worker by default. A consumer's OffsetFetch/OffsetCommit take another path.

A killed primary's URL stays announced until the next primary commits its own (a session
timeout and a rebalance later); nothing clears it on the way out either, since a killed
process cannot. Whoever forwards to it must expect a refused connection, or an instance
that is not (or no longer) the primary, and ask again (``rest._forward``). An instance never
takes its own URL from the announcement unless it is the primary, so it never forwards to
itself.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any

from confluent_kafka import Consumer, KafkaException, TopicPartition

__all__ = ["Election"]

log = logging.getLogger(__name__)

# How long one read of the announcement may wait on the broker: a forwarded write asks again
# until its own deadline, so a broker that does not answer costs it a few tries, not one.
_READ_TIMEOUT_S = 5.0
# The primary checks its announcement this often once it is there (an OffsetFetch), and
# this soon after committing it.
_RECHECK_S = 10.0
_RETRY_S = 0.5


def announcement(url: str) -> str:
    """The committed metadata that names ``url`` the primary."""
    return json.dumps({"url": url}, separators=(",", ":"))


def announced_url(metadata: str | None) -> str | None:
    """The primary's URL in committed ``metadata`` (None when it names none)."""
    if not metadata:
        return None
    try:
        value = json.loads(metadata)
    except ValueError:
        return None
    url = value.get("url") if isinstance(value, dict) else None
    return url if isinstance(url, str) and url else None


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
        self._consumer: Consumer | None = None  # the member (eligible instances only)
        self._reader: Consumer | None = None  # reads the announcement; made on first use
        # Held through every read: stop() closes the reader only once no call is under way.
        self._reader_lock = threading.Lock()
        self._stopped = False
        self._thread: threading.Thread | None = None
        self._known: tuple[float, str | None] = (0.0, None)  # when looked up, the primary's URL
        self._check_at = 0.0  # when the primary next reads its announcement (election thread)
        self._read_failing = False  # to log a broker that does not answer once, not every try

    def start(self, settle_s: float = 15.0) -> None:
        """Join the group (if eligible) and wait until some instance is the primary."""
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
            self._consumer.subscribe(
                [self.topic], on_assign=self._assigned, on_revoke=self._revoked, on_lost=self._revoked
            )
            self._thread = threading.Thread(target=self._run, name="schema-registry-election", daemon=True)
            self._thread.start()
        deadline = time.monotonic() + settle_s
        while time.monotonic() < deadline and self.primary_url(fresh=True) is None:
            time.sleep(0.1)

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(10)
        with self._reader_lock:
            self._stopped = True
            reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()
        if self._consumer is not None:
            self._consumer.close()  # leaves the group: another member is assigned at once
            self._consumer = None
        self._primary = False

    def _run(self) -> None:
        consumer = self._consumer
        assert consumer is not None
        while not self._stopping.is_set():
            try:
                consumer.poll(0.2)  # keeps the membership; the partition is paused, nothing comes
            except KafkaException as exc:
                log.warning("schema registry election: %s", exc)
            if self._primary and time.monotonic() >= self._check_at:
                self._announce(consumer)

    def _announce(self, consumer: Consumer) -> None:
        """Commit this instance's URL as the primary's unless the group already holds it.
        In the election thread, so the rebalance callbacks (run by its poll) cannot change
        ``_primary`` under it."""
        try:
            current = self._read(consumer, _READ_TIMEOUT_S)
        except (KafkaException, RuntimeError) as exc:  # the broker is away: try again soon
            log.debug("cannot read the registry's primary in group %s: %s", self.group_id, exc)
            self._check_at = time.monotonic() + _RETRY_S
            return
        if current == self.url:
            self._check_at = time.monotonic() + _RECHECK_S
            return
        # Asynchronous: a broker that went away must not hold the poll loop; the read back
        # above, on the next turn, says whether it was taken.
        try:
            consumer.commit(
                offsets=[TopicPartition(self.topic, 0, 0, metadata=announcement(self.url))],
                asynchronous=True,
            )
        except KafkaException as exc:
            log.debug("cannot announce the registry's primary in group %s: %s", self.group_id, exc)
        self._check_at = time.monotonic() + _RETRY_S

    def _read(self, consumer: Consumer, timeout_s: float) -> str | None:
        (tp,) = consumer.committed([TopicPartition(self.topic, 0)], timeout=timeout_s)
        if tp.error is not None:
            raise KafkaException(tp.error)
        return announced_url(tp.metadata) if tp.offset >= 0 else None

    def _ours(self, partitions: list[TopicPartition]) -> list[TopicPartition]:
        return [p for p in partitions if p.topic == self.topic]

    def _assigned(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        ours = self._ours(partitions)
        if ours:
            consumer.incremental_assign(partitions)
            consumer.pause(ours)
            self._primary = True
            self._check_at = 0.0  # announce at once (the election thread, after this poll)
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

    def primary_url(self, fresh: bool = False, timeout_s: float = _READ_TIMEOUT_S) -> str | None:
        """The primary's URL (this instance's when it is the primary), as the group's
        committed offset announces it (read at most every half second unless ``fresh``;
        a read waits up to ``timeout_s`` for the broker). None when no instance is known to
        be the primary, or when the announcement names this instance, which is not (a
        restarted primary, or one deposed)."""
        if self._primary:
            return self.url
        checked, known = self._known
        if not fresh and time.monotonic() - checked < 0.5:
            return known
        found: str | None = None
        with self._reader_lock:
            if self._stopped:
                return None
            if self._reader is None:
                # Never subscribes, so never joins: only reads the group's committed offsets.
                self._reader = Consumer(
                    {**self.client, "group.id": self.group_id, "enable.auto.commit": False}
                )
            reader = self._reader
            try:
                found = self._read(reader, timeout_s)
                if self._read_failing:
                    log.info("the registry group %s answers again", self.group_id)
                self._read_failing = False
            except (KafkaException, RuntimeError) as exc:
                if not self._read_failing:
                    log.warning("cannot read the registry's primary from group %s: %s", self.group_id, exc)
                self._read_failing = True
        if found == self.url and not self._primary:
            found = None
        self._known = (time.monotonic(), found)
        return found

    def wait_primary(self, timeout_s: float) -> str | None:
        """The primary's URL, waiting up to ``timeout_s`` for one (a failover in progress)."""
        deadline = time.monotonic() + timeout_s
        while True:
            remaining = deadline - time.monotonic()
            url = self.primary_url(fresh=True, timeout_s=min(_READ_TIMEOUT_S, max(remaining, 0.5)))
            if url is not None or time.monotonic() > deadline:
                return url
            time.sleep(0.2)
