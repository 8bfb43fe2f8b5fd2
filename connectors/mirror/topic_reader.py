"""Reading partition 0 of one of MM2's single-partition topics from the beginning.

What Kafka's ``KafkaBasedLog`` does for the checkpoint task (offset syncs, previous
checkpoints) and what ``MirrorClient.remoteConsumerOffsets`` does for failover clients: assign
partition 0, read from the beginning up to the end offset taken when reading began, and, when
following, go on tailing. A topic that does not exist yet has nothing to read: it counts as
read to the end. Records whose bytes do not decode are the caller's to skip.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Message, TopicPartition

log = logging.getLogger(__name__)

_NO_TOPIC = frozenset(
    {KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._UNKNOWN_PARTITION, KafkaError._UNKNOWN_TOPIC}
)


def consumer_for(config: Mapping[str, Any]) -> Consumer:
    """A consumer that never commits; it only reads by assignment, so its group id (needed by
    librdkafka, never joined) is a throwaway unless the settings give one."""
    settings = {
        "group.id": f"mm2-reader-{uuid.uuid4().hex[:12]}",
        **config,
        "enable.auto.commit": False,
        "enable.partition.eof": False,
    }
    return Consumer(settings)


_MISSING = -1


def _end_offset(consumer: Consumer, topic: str, timeout_s: float) -> int | None:
    """The end offset of partition 0, ``_MISSING`` if the topic does not exist, None if the
    cluster did not answer."""
    try:
        _low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=timeout_s)
    except KafkaException as exc:
        error = exc.args[0] if exc.args else None
        if isinstance(error, KafkaError) and error.code() in _NO_TOPIC:
            return _MISSING
        log.debug("end offset of %s unknown yet: %s", topic, exc)
        return None
    return int(high)


def read_partition(
    config: Mapping[str, Any],
    topic: str,
    on_record: Callable[[Message], None],
    *,
    stopping: threading.Event,
    deadline: float | None = None,
    follow: bool = False,
    on_caught_up: Callable[[], None] | None = None,
    poll_timeout_s: float = 0.5,
) -> bool:
    """Read ``topic``'s partition 0 from the beginning, calling ``on_record`` for each record.

    Without ``follow``: returns True once the end offset (as of the start) is reached, False
    when ``stopping`` is set or ``deadline`` (``time.monotonic()``) passes first. With
    ``follow``: calls ``on_caught_up`` once the end is first reached, then keeps reading
    until ``stopping``; returns whether it caught up."""
    consumer = consumer_for(config)
    caught_up = False

    def reached_end() -> bool:
        nonlocal caught_up
        caught_up = True
        if on_caught_up is not None:
            on_caught_up()
        return not follow

    def expired() -> bool:
        return stopping.is_set() or (deadline is not None and time.monotonic() >= deadline)

    try:
        end: int | None = None
        while end is None or end == _MISSING:
            if stopping.is_set() or (not caught_up and expired()):
                return caught_up
            end = _end_offset(consumer, topic, poll_timeout_s * 4)
            if end == _MISSING and not caught_up and reached_end():
                return True  # nothing to read: a topic not created yet holds no records
            if end is None or end == _MISSING:
                stopping.wait(poll_timeout_s)
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        position = 0
        while not stopping.is_set():
            if not caught_up:
                if position >= end and reached_end():
                    return True
                if expired():
                    return False
            for message in consumer.consume(500, poll_timeout_s):
                error = message.error()
                if error is not None:
                    if error.code() not in _NO_TOPIC:
                        log.debug("reading %s: %s", topic, error)
                    continue
                position = int(message.offset() or 0) + 1
                on_record(message)
            if not caught_up and position < end:
                # Compaction leaves gaps: the fetch position passes the end offset without a
                # record at end - 1.
                (at,) = consumer.position([TopicPartition(topic, 0)])
                if at.offset >= 0:
                    position = max(position, int(at.offset))
        return caught_up
    finally:
        consumer.close()
