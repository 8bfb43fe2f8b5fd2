"""Consumer groups' committed offsets on one cluster, read and written the way a consumer of
each group does it: OffsetFetch and OffsetCommit through a confluent-kafka ``Consumer`` of
that group that never joins it.

Not through ``AdminClient.list_consumer_group_offsets``, ``alter_consumer_group_offsets``
or ``describe_consumer_groups``: librdkafka 2.x aborts the whole process
(``rd_kafka_enq_once_del_source_return: Assertion `eonce->refcnt > 0' failed``) when one of
its coordinator-bound admin requests meets a dropped connection, which a restart of the
cluster makes happen (confluentinc/librdkafka#4605 and #3663; the fix, #5397, is not
released). The checkpoint connector asks every few seconds, so a worker running it would
die with the first restart of a source cluster; a worker must outlive the clusters it
replicates. A consumer's ``committed``/``commit`` take another code path, and a group's
state comes from ListGroups (``list_consumer_groups``), which is not coordinator-bound.

A commit by a consumer that never joined carries no member id or generation: the broker
takes it only while the group has no members, exactly what MM2's offset sync wants.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from confluent_kafka import Consumer, KafkaException
from confluent_kafka import TopicPartition as KafkaPartition

from connect.api import TopicPartition


class GroupClients:
    """One cluster's groups: a consumer per group (made on first use, kept until
    ``close``), each never subscribed. ``config`` is a consumer config of the cluster
    (``client_config(..., "consumer")``); its ``group.id`` is replaced per group."""

    def __init__(self, config: Mapping[str, Any], timeout_s: float) -> None:
        self._config = dict(config)
        self._timeout_s = timeout_s
        self._consumers: dict[str, Consumer] = {}
        # Held through every call: close() (from the thread stopping a task) waits for the
        # call under way instead of closing a consumer another thread is using.
        self._lock = threading.Lock()
        self._closed = False

    def _consumer(self, group: str) -> Consumer:
        # Under self._lock.
        if self._closed:
            raise KafkaException("the group clients are closed")
        consumer = self._consumers.get(group)
        if consumer is None:
            consumer = self._consumers[group] = Consumer({**self._config, "group.id": group})
        return consumer

    def committed(self, group: str, accept: Callable[[str], bool]) -> dict[TopicPartition, tuple[int, str]]:
        """``group``'s committed offsets (and metadata) of the topics ``accept`` takes;
        partitions it committed nothing for are left out. Raises KafkaException (or
        TimeoutError) when the cluster does not answer."""
        with self._lock:
            consumer = self._consumer(group)
            metadata = consumer.list_topics(timeout=self._timeout_s)
            partitions = [
                KafkaPartition(name, p)
                for name, topic in sorted(metadata.topics.items())
                if topic.error is None and accept(name)
                for p in sorted(topic.partitions)
            ]
            if not partitions:
                return {}
            return {
                TopicPartition(tp.topic, tp.partition): (int(tp.offset), tp.metadata or "")
                for tp in consumer.committed(partitions, timeout=self._timeout_s)
                if tp.error is None and tp.offset >= 0
            }

    def commit(self, group: str, offsets: Iterable[KafkaPartition]) -> list[KafkaPartition]:
        """Commit ``offsets`` for ``group`` (accepted only while it has no members); the
        partitions the broker refused, with their errors. Raises KafkaException when the
        whole commit is refused or the cluster does not answer."""
        with self._lock:
            result = self._consumer(group).commit(offsets=list(offsets), asynchronous=False)
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


def _close(consumer: Consumer) -> None:
    # A consumer of a cluster that went away may complain; nothing is left to release.
    with contextlib.suppress(KafkaException, RuntimeError):
        consumer.close()
