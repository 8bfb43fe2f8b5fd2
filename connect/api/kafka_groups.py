"""Consumer groups' committed offsets, read and written the way a consumer of each group
does it: OffsetFetch and OffsetCommit through a confluent-kafka ``Consumer`` of that group
that never joins it; and the cluster's groups with their states from ListGroups.

For the worker's own offset endpoints (KIP-875's ``/connectors/{name}/offsets`` of a sink,
the console's topic listing) and for connectors that handle groups of a cluster
(MirrorMaker 2's checkpoints and offset sync).

Not through ``AdminClient.list_consumer_group_offsets``, ``alter_consumer_group_offsets``
or ``describe_consumer_groups``: librdkafka 2.x aborts the whole process
(``rd_kafka_enq_once_del_source_return: Assertion `eonce->refcnt > 0' failed``) when one of
its coordinator-bound admin requests meets a dropped connection, which a restart of the
cluster makes happen (confluentinc/librdkafka#4605 and #3663; the fix, #5397, is not
released). A worker must outlive the brokers it talks to, and a web console polling a
group listing, or a connector asking every few seconds, would make that a matter of time.
A consumer's ``committed``/``commit`` take another code path, and ListGroups
(``list_consumer_groups``) is sent to every broker, not to a group's coordinator.

A commit by a consumer that never joined carries no member id or generation: the broker
takes it only while the group has no members, which is what an offset reset of a stopped
connector and MM2's offset sync both want.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from confluent_kafka import Consumer, ConsumerGroupState, KafkaException
from confluent_kafka import TopicPartition as KafkaPartition
from confluent_kafka.admin import AdminClient

from connect.api.records import TopicPartition


class GroupClients:
    """One cluster's groups: a consumer per group (made on first use, kept until
    ``close``), each never subscribed. ``config`` is a librdkafka consumer config of the
    cluster (bootstrap servers, security); its ``group.id`` is replaced per group.

    Thread-safe; calls are serialized. Every call raises ``KafkaException`` (or
    ``TimeoutError``) when the cluster does not answer within ``timeout_s``."""

    def __init__(self, config: Mapping[str, Any], timeout_s: float) -> None:
        self._config = dict(config)
        self._timeout_s = timeout_s
        self._consumers: dict[str, Consumer] = {}
        # Held through every call: close() (from the thread stopping a task) waits for the
        # call under way instead of closing a consumer another thread is using.
        self._lock = threading.Lock()
        self._closed = False

    def __enter__(self) -> GroupClients:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _consumer(self, group: str) -> Consumer:
        # Under self._lock.
        if self._closed:
            raise KafkaException("the group clients are closed")
        consumer = self._consumers.get(group)
        if consumer is None:
            consumer = self._consumers[group] = Consumer(
                # Never joins, so nothing to commit on its own or to reset from.
                {**self._config, "group.id": group, "enable.auto.commit": False}
            )
        return consumer

    def committed(self, group: str, accept: Callable[[str], bool]) -> dict[TopicPartition, tuple[int, str]]:
        """``group``'s committed offsets (and metadata) in every partition of the topics
        ``accept`` takes; partitions it committed nothing for are left out."""
        with self._lock:
            consumer = self._consumer(group)
            metadata = consumer.list_topics(timeout=self._timeout_s)
            partitions = [
                TopicPartition(name, p)
                for name, topic in sorted(metadata.topics.items())
                if topic.error is None and accept(name)
                for p in sorted(topic.partitions)
            ]
            return self._committed(consumer, partitions)

    def committed_in(
        self, group: str, partitions: Iterable[TopicPartition]
    ) -> dict[TopicPartition, tuple[int, str]]:
        """``group``'s committed offsets (and metadata) in ``partitions``; partitions it
        committed nothing for are left out."""
        with self._lock:
            return self._committed(self._consumer(group), list(partitions))

    def _committed(
        self, consumer: Consumer, partitions: list[TopicPartition]
    ) -> dict[TopicPartition, tuple[int, str]]:
        if not partitions:
            return {}
        asked = [KafkaPartition(tp.topic, tp.partition) for tp in partitions]
        return {
            TopicPartition(tp.topic, tp.partition): (int(tp.offset), tp.metadata or "")
            for tp in consumer.committed(asked, timeout=self._timeout_s)
            if tp.error is None and tp.offset >= 0
        }

    def commit(self, group: str, offsets: Iterable[KafkaPartition]) -> list[KafkaPartition]:
        """Commit ``offsets`` (with their metadata) for ``group``, accepted only while it
        has no members; the partitions the broker refused, with their errors. Raises
        KafkaException when the whole commit is refused or the cluster does not answer."""
        offsets = list(offsets)
        if not offsets:
            return []
        with self._lock:
            result = self._consumer(group).commit(offsets=offsets, asynchronous=False)
        return [tp for tp in result or [] if tp.error is not None]

    def forget(self, groups: Iterable[str]) -> None:
        """Close the consumers of ``groups`` (no longer asked about)."""
        with self._lock:
            gone = [self._consumers.pop(g) for g in groups if g in self._consumers]
        for consumer in gone:
            _close(consumer)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            consumers, self._consumers = list(self._consumers.values()), {}
        for consumer in consumers:
            _close(consumer)


def committed_of_groups(
    config: Mapping[str, Any],
    groups: Iterable[str],
    partitions: Iterable[TopicPartition],
    timeout_s: float,
    parallelism: int = 8,
) -> dict[str, dict[TopicPartition, tuple[int, str]]]:
    """Each group's committed offsets (and metadata) in ``partitions``, as
    ``GroupClients.committed_in`` reads them, through a short-lived consumer per group.

    Up to ``parallelism`` groups are read at once: a group's first read waits on round
    trips (connecting, FindCoordinator, OffsetFetch) far more than it computes, and one
    after the other a listing of many groups took about 15 ms a group (the admin client it
    replaces sent all OffsetFetches at once). Raises the first group's KafkaException (or
    TimeoutError) when the cluster does not answer."""
    wanted = list(partitions)
    names = list(dict.fromkeys(groups))

    def one(group: str) -> dict[TopicPartition, tuple[int, str]]:
        with GroupClients(config, timeout_s) as clients:
            return clients.committed_in(group, wanted)

    if not names:
        return {}
    with ThreadPoolExecutor(max(1, min(parallelism, len(names))), "group-offsets") as pool:
        return dict(zip(names, pool.map(one, names), strict=True))


def list_groups(admin: AdminClient, timeout_s: float) -> dict[str, ConsumerGroupState]:
    """Every group the cluster of ``admin`` knows, with its state, from ListGroups (not
    coordinator-bound, see above). Raises KafkaException or TimeoutError when the cluster
    does not answer in ``timeout_s``."""
    listed: Any = admin.list_consumer_groups(request_timeout=timeout_s).result(timeout_s)
    return {g.group_id: g.state for g in listed.valid}


def _close(consumer: Consumer) -> None:
    # A consumer of a cluster that went away may complain; nothing is left to release.
    with contextlib.suppress(KafkaException, RuntimeError):
        consumer.close()
