"""KafkaBasedLog against the real broker: reading a topic to its end, tailing it, writing, outages.

Records are written by a plain confluent-kafka producer (another "worker") as well as
through the log itself; the log's callback must see every record, in order per
partition, and ``read_to_end`` must not return before it has.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from broker.server import EmbeddedBroker
from connect.api.errors import ConnectException
from connect.storage.kafka_log import KafkaBasedLog, KafkaLogWriteError
from tests.support import embedded_broker, free_port, unique, wait_until

Record = tuple[bytes | None, bytes | None, int, int]
MakeLog = Callable[..., KafkaBasedLog]


class Seen:
    """What the log handed to its callback, from the reader thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.records: list[Record] = []

    def __call__(self, key: bytes | None, value: bytes | None, partition: int, offset: int) -> None:
        with self.lock:
            self.records.append((key, value, partition, offset))

    def values(self) -> list[bytes | None]:
        with self.lock:
            return [r[1] for r in self.records]

    def count(self) -> int:
        with self.lock:
            return len(self.records)


def create_topic(bootstrap: str, topic: str, partitions: int = 1) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1, config={"cleanup.policy": "compact"})])[topic].result(
        10
    )


def produce(bootstrap: str, topic: str, records: Sequence[tuple[bytes, bytes | None]]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for key, value in records:
        producer.produce(topic, key=key, value=value)
    assert producer.flush(10) == 0


@pytest.fixture
def make_log() -> Iterator[MakeLog]:
    logs: list[KafkaBasedLog] = []

    def make(bootstrap: str, topic: str, seen: Seen, **kwargs: Any) -> KafkaBasedLog:
        settings: dict[str, Any] = {"producer_config": {}, "consumer_config": {}, **kwargs}
        log = KafkaBasedLog(topic, bootstrap, on_record=seen, client_id=unique("log"), **settings)
        logs.append(log)
        return log

    yield make
    for log in logs:
        log.stop()


def test_start_reads_existing_records_in_order_per_partition(
    shared_broker: EmbeddedBroker, make_log: MakeLog
) -> None:
    topic = unique()
    create_topic(shared_broker.bootstrap, topic, partitions=3)
    records = [(f"k{i % 7}".encode(), f"v{i}".encode()) for i in range(200)]
    produce(shared_broker.bootstrap, topic, records)
    seen = Seen()
    log = make_log(shared_broker.bootstrap, topic, seen)
    log.start()
    # start() returns only once everything written before it was handed over.
    assert sorted(seen.values()) == sorted(v for _, v in records)  # type: ignore[type-var]
    assert log.partitions == [0, 1, 2]
    by_partition: dict[int, list[int]] = {}
    for _key, _value, partition, offset in seen.records:
        by_partition.setdefault(partition, []).append(offset)
    assert all(offsets == sorted(offsets) for offsets in by_partition.values())
    # Each key's records came in the order they were written (a key lives in one partition).
    for key in {k for k, _ in records}:
        assert [v for k, v, _, _ in seen.records if k == key] == [v for k, v in records if k == key]


def test_start_of_an_empty_topic_and_tombstones(shared_broker: EmbeddedBroker, make_log: MakeLog) -> None:
    topic = unique()
    create_topic(shared_broker.bootstrap, topic, partitions=2)
    seen = Seen()
    log = make_log(shared_broker.bootstrap, topic, seen)
    log.start()
    assert seen.count() == 0
    produce(shared_broker.bootstrap, topic, [(b"k", b"v"), (b"k", None)])
    assert log.read_to_end(10)
    assert [(k, v) for k, v, _, _ in seen.records] == [(b"k", b"v"), (b"k", None)]


def test_tails_records_written_by_another_producer_within_milliseconds(
    shared_broker: EmbeddedBroker,
    make_log: MakeLog,
) -> None:
    topic = unique()
    create_topic(shared_broker.bootstrap, topic, partitions=5)
    seen = Seen()
    make_log(shared_broker.bootstrap, topic, seen).start()
    producer = Producer({"bootstrap.servers": shared_broker.bootstrap, "linger.ms": 0})
    latencies = []
    for i in range(7):
        producer.produce(topic, key=f"key-{i}".encode(), value=f"{i}".encode())
        assert producer.flush(10) == 0
        acked = time.monotonic()
        wait_until(lambda i=i: seen.count() == i + 1, timeout=5, interval=0.001, message=f"record {i}")
        latencies.append(time.monotonic() - acked)
    # Tailing long-polls the broker, which answers as soon as a record is written: well under the
    # fetch.wait.max.ms (200 ms) that polling without that would take.
    assert sorted(latencies)[len(latencies) // 2] < 0.05, latencies


def test_read_to_end_waits_for_everything_written_before_the_call(
    shared_broker: EmbeddedBroker,
    make_log: MakeLog,
) -> None:
    topic = unique()
    create_topic(shared_broker.bootstrap, topic, partitions=4)
    slow: list[bytes | None] = []

    def slow_callback(key: bytes | None, value: bytes | None, partition: int, offset: int) -> None:
        time.sleep(0.002)  # a store that takes its time with each record
        slow.append(value)

    log = KafkaBasedLog(
        topic,
        shared_broker.bootstrap,
        producer_config={},
        consumer_config={},
        on_record=slow_callback,
        client_id=unique("log"),
    )
    log.start()
    try:
        produce(shared_broker.bootstrap, topic, [(f"k{i}".encode(), f"{i}".encode()) for i in range(300)])
        assert log.read_to_end(30)
        assert len(slow) == 300  # not "most of them": every one was handed over before it returned
    finally:
        log.stop()


def test_send_returns_where_the_record_landed_and_read_to_end_includes_it(
    shared_broker: EmbeddedBroker,
    make_log: MakeLog,
) -> None:
    topic = unique()
    create_topic(shared_broker.bootstrap, topic, partitions=3)
    seen = Seen()
    log = make_log(shared_broker.bootstrap, topic, seen)
    log.start()
    futures = [log.send(f"k{i}".encode(), f"v{i}".encode()) for i in range(20)]
    futures.append(log.send(b"k0", None))
    assert log.read_to_end(10)  # also waits for the log's own writes to be acknowledged
    landed = {f.result(0) for f in futures}
    assert landed == {(p, o) for _, _, p, o in seen.records}
    # Same key, same partition: the tombstone lands after the value.
    assert futures[-1].result(0)[0] == futures[0].result(0)[0]
    assert futures[-1].result(0)[1] > futures[0].result(0)[1]
    log.flush(5)


def test_a_failing_callback_does_not_stop_the_reader(shared_broker: EmbeddedBroker) -> None:
    topic = unique()
    create_topic(shared_broker.bootstrap, topic)
    handled: list[bytes | None] = []

    def fragile(key: bytes | None, value: bytes | None, partition: int, offset: int) -> None:
        if value == b"boom":
            raise ValueError("cannot handle this one")
        handled.append(value)

    log = KafkaBasedLog(
        topic,
        shared_broker.bootstrap,
        producer_config={},
        consumer_config={},
        on_record=fragile,
        client_id=unique("log"),
    )
    log.start()
    try:
        produce(shared_broker.bootstrap, topic, [(b"a", b"1"), (b"b", b"boom"), (b"c", b"2")])
        assert log.read_to_end(10)
        assert handled == [b"1", b"2"]
    finally:
        log.stop()


def test_a_partition_whose_records_were_all_deleted_is_read_to_its_end(
    shared_broker: EmbeddedBroker,
    make_log: MakeLog,
) -> None:
    topic = unique()
    create_topic(shared_broker.bootstrap, topic, partitions=1)
    produce(shared_broker.bootstrap, topic, [(f"k{i}".encode(), b"v") for i in range(5)])
    admin = AdminClient({"bootstrap.servers": shared_broker.bootstrap})
    for future in admin.delete_records([TopicPartition(topic, 0, 5)]).values():
        future.result(10)
    seen = Seen()
    log = make_log(shared_broker.bootstrap, topic, seen)
    log.start()  # the end offset (5) has no record before it: must not wait for one
    assert seen.count() == 0
    produce(shared_broker.bootstrap, topic, [(b"k", b"after")])
    assert log.read_to_end(10)
    assert seen.records == [(b"k", b"after", 0, 5)]


def test_start_fails_with_the_topic_name_when_the_topic_is_missing(shared_broker: EmbeddedBroker) -> None:
    topic = unique("missing")
    log = KafkaBasedLog(
        topic,
        shared_broker.bootstrap,
        producer_config={},
        consumer_config={},
        on_record=Seen(),
        client_id=unique("log"),
        start_timeout=1.0,
    )
    with pytest.raises(ConnectException, match=topic):
        log.start()
    with pytest.raises(ConnectException, match="not running"):
        log.read_to_end(1)
    assert isinstance(log.send(b"k", b"v").exception(0), ConnectException)


def test_writes_after_stop_fail_instead_of_hanging(shared_broker: EmbeddedBroker, make_log: MakeLog) -> None:
    topic = unique()
    create_topic(shared_broker.bootstrap, topic)
    log = make_log(shared_broker.bootstrap, topic, Seen())
    log.start()
    assert log.send(b"k", b"v").result(10) == (0, 0)
    log.stop()
    with pytest.raises(ConnectException):
        log.send(b"k", b"v").result(1)


@pytest.fixture
def restartable(tmp_path: Path) -> Iterator[Callable[[], EmbeddedBroker]]:
    """Starts a broker on one fixed port and log dir, again and again; all are stopped at the end."""
    port = free_port()
    with ExitStack() as stack:

        def start() -> EmbeddedBroker:
            return stack.enter_context(
                embedded_broker(tmp_path / "logs", listeners=f"PLAINTEXT://127.0.0.1:{port}")
            )

        yield start


def test_survives_a_broker_restart(restartable: Callable[[], EmbeddedBroker]) -> None:
    broker = restartable()
    bootstrap = broker.bootstrap
    topic = unique()
    create_topic(bootstrap, topic, partitions=2)
    seen = Seen()
    log = KafkaBasedLog(
        topic, bootstrap, producer_config={}, consumer_config={}, on_record=seen, client_id=unique("log")
    )
    log.start()
    try:
        assert log.send(b"before", b"1").result(10)
        assert log.read_to_end(10)

        broker.stop()
        # Kafka is away: nothing can be confirmed, and nothing fails for good.
        during = log.send(b"during", b"2")
        assert not log.read_to_end(0.5)
        assert not during.done()

        restartable()
        assert during.result(30)  # the queued write goes out once the broker is back
        produce(bootstrap, topic, [(b"after", b"3")])  # another worker's write is tailed again
        assert log.read_to_end(30)
        assert seen.values() == [b"1", b"2", b"3"]
    finally:
        log.stop()


def test_write_errors_say_whether_a_retry_may_help() -> None:
    from confluent_kafka import KafkaError

    timed_out = KafkaLogWriteError("t", KafkaError(KafkaError._MSG_TIMED_OUT))
    too_large = KafkaLogWriteError("t", KafkaError(KafkaError.MSG_SIZE_TOO_LARGE))
    assert timed_out.retriable and not too_large.retriable
    assert "topic t" in str(too_large)


def test_worker_settings_that_are_not_client_settings_are_ignored(
    shared_broker: EmbeddedBroker, make_log: MakeLog
) -> None:
    # Workers hand their top-level settings to the internal clients, as Kafka Connect does.
    worker_settings = {
        "key.converter.schemas.enable": "false",
        "producer.linger.ms": "5",
        "socket.timeout.ms": 30000,
    }
    topic = unique()
    create_topic(shared_broker.bootstrap, topic)
    seen = Seen()
    log = KafkaBasedLog(
        topic,
        shared_broker.bootstrap,
        producer_config=worker_settings,
        consumer_config=worker_settings,
        on_record=seen,
        client_id=unique("log"),
    )
    log.start()
    try:
        log.send(b"k", b"v").result(10)
        assert log.read_to_end(10) and seen.values() == [b"v"]
    finally:
        log.stop()
    # A known setting with a bad value is still an error.
    broken = make_log(shared_broker.bootstrap, topic, Seen(), producer_config={"linger.ms": "soon"})
    with pytest.raises(ConnectException, match="invalid Kafka client settings"):
        broken.start()
