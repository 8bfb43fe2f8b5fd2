"""MirrorMaker tests' helpers: a MirrorMaker node run in-process on its own event loop,
and plain Kafka clients for the two embedded brokers."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from confluent_kafka import Consumer, Message, Producer
from confluent_kafka.admin import AdminClient

from sluiceway.mirror_maker.config import CONNECTOR_CLASSES, parse
from sluiceway.mirror_maker.runner import MirrorMaker

T = TypeVar("T")

# The connectors by Kafka's class names: source, heartbeat, checkpoint (CONNECTOR_CLASSES' order).
CLASSES = CONNECTOR_CLASSES

# Small intervals and replication factor 1 (a single-node broker refuses more).
FAST = {
    "replication.factor": "1",
    "offset-syncs.topic.replication.factor": "1",
    "checkpoints.topic.replication.factor": "1",
    "heartbeats.topic.replication.factor": "1",
    "config.storage.replication.factor": "1",
    "offset.storage.replication.factor": "1",
    "status.storage.replication.factor": "1",
    "offset.storage.partitions": "2",
    "status.storage.partitions": "1",
    "refresh.topics.interval.seconds": "1",
    "refresh.groups.interval.seconds": "1",
    "emit.heartbeats.interval.seconds": "1",
    "emit.checkpoints.interval.seconds": "1",
}


def mm2_values(a: str, b: str, **extra: str) -> dict[str, str]:
    return {"clusters": "A, B", "A.bootstrap.servers": a, "B.bootstrap.servers": b, **FAST, **extra}


def write_mm2(path: Path, values: Mapping[str, str]) -> Path:
    path.write_text("".join(f"{k} = {v}\n" for k, v in values.items()))
    return path


class RunningMirrorMaker:
    """``MirrorMaker(parse(values), targets)`` started on a loop thread of its own."""

    def __init__(
        self,
        values: Mapping[str, str],
        targets: Sequence[str] | None = None,
        classes: Sequence[str] = CONNECTOR_CLASSES,
    ) -> None:
        self.mm = MirrorMaker(parse(values), targets, classes)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mirror-maker", daemon=True)

    def call(self, coro: Coroutine[Any, Any, T], timeout: float = 120) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def __enter__(self) -> RunningMirrorMaker:
        self._thread.start()
        try:
            self.call(self.mm.start())
        except BaseException:
            self._close()
            raise
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            self.call(self.mm.stop())
        finally:
            self._close()

    def _close(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)
        self._loop.close()

    def stored_config(self, flow: str, name: str) -> dict[str, str] | None:
        for herder, runtime in zip(self.mm.herders, self.mm.runtimes, strict=True):
            if str(herder.flow) == flow:
                config = runtime.herder.configs.snapshot().connector_configs.get(name)
                return None if config is None else dict(config)
        raise KeyError(flow)

    def connector_state(self, flow: str, name: str) -> str | None:
        for herder, runtime in zip(self.mm.herders, self.mm.runtimes, strict=True):
            if str(herder.flow) == flow:
                status = runtime.herder.statuses.connector(name)
                return None if status is None else status.state.value
        raise KeyError(flow)


def produce(
    bootstrap: str, topic: str, records: Sequence[tuple[bytes, bytes, list[tuple[str, str | bytes | None]]]]
) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for key, value, headers in records:
        producer.produce(topic, value=value, key=key, headers=headers)
    assert producer.flush(30) == 0


def topics(bootstrap: str) -> set[str]:
    return set(AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).topics)


def consume(
    bootstrap: str, topic: str, count: int, timeout: float = 60, give_up: Callable[[], bool] = lambda: False
) -> list[Message]:
    """The first ``count`` records of ``topic`` (waiting for the topic to exist, unless
    ``give_up()``: the process that should write them has ended, say)."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"reader-{time.monotonic_ns()}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "topic.metadata.refresh.interval.ms": 500,
        }
    )
    out: list[Message] = []
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + timeout
        while len(out) < count and time.monotonic() < deadline and not give_up():
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                out.append(msg)
    finally:
        consumer.close()
    assert len(out) >= count, f"{len(out)} of {count} records of {topic} at {bootstrap}"
    return out
