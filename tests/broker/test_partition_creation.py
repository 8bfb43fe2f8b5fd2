"""Creating many partitions: off the event loop, and never past the file-descriptor limit."""

from __future__ import annotations

import resource
import threading
from pathlib import Path

import pytest
from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

from broker.descriptors import FILES_PER_PARTITION, MIN_RESERVE, partitions_that_fit
from broker.server import EmbeddedBroker
from tests.support import BrokerProcess, unique


@pytest.mark.parametrize("limit", [0, 100, 1024, 2048, 20_000, 1 << 20])
@pytest.mark.parametrize("open_now", [0, 10, 900, 5000, 19_000])
def test_room_keeps_the_reserve_free_and_is_never_negative(limit: int, open_now: int) -> None:
    room = partitions_that_fit(limit, open_now)
    reserve = max(MIN_RESERVE, limit // 10)
    assert room >= 0
    if room:
        assert open_now + room * FILES_PER_PARTITION <= limit - reserve
        assert open_now + (room + 1) * FILES_PER_PARTITION > limit - reserve  # the most that fit


def test_no_limit_means_no_refusal() -> None:
    assert partitions_that_fit(resource.RLIM_INFINITY, 10**6) > 10**9


def test_clients_are_served_while_thousands_of_partitions_are_created(broker: EmbeddedBroker) -> None:
    # Before, the broker opened every partition's files on its event loop: for the seconds a
    # big CreateTopics took, no other request was answered.
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    other = AdminClient({"bootstrap.servers": broker.bootstrap})
    other.list_topics(timeout=10)  # connected before the big request goes out
    big = unique("big")
    created = admin.create_topics([NewTopic(big, 3000, 1)], operation_timeout=60)[big]
    answered_meanwhile = 0
    while not created.done():
        other.list_topics(timeout=30)
        answered_meanwhile += 1
    created.result()
    assert answered_meanwhile >= 2, "metadata requests waited for the creation"
    assert len(other.list_topics(big, timeout=10).topics[big].partitions) == 3000
    grown = admin.create_partitions([NewPartitions(big, 3600)])[big]
    while not grown.done():
        other.list_topics(timeout=30)
    grown.result()
    assert len(other.list_topics(big, timeout=10).topics[big].partitions) == 3600


def test_a_topic_being_created_cannot_be_created_twice(broker: EmbeddedBroker) -> None:
    name = unique("twice")
    results: list[BaseException | None] = []

    def create() -> None:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        try:
            admin.create_topics([NewTopic(name, 1000, 1)], operation_timeout=60)[name].result()
            results.append(None)
        except KafkaException as exc:
            results.append(exc)

    threads = [threading.Thread(target=create) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert sorted(r is None for r in results) == [False, True], results
    error = next(r for r in results if r is not None)
    assert error.args[0].name() == "TOPIC_ALREADY_EXISTS"


def _low_fd_limit() -> None:  # runs in the broker's child process before exec
    resource.setrlimit(resource.RLIMIT_NOFILE, (2048, 2048))


def test_partitions_beyond_the_descriptor_limit_are_refused_with_the_numbers(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data")
    broker.start(preexec_fn=_low_fd_limit)
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        too_many = admin.create_topics([NewTopic("too-many", 1000, 1)], operation_timeout=30)["too-many"]
        with pytest.raises(KafkaException) as refused:
            too_many.result()
        error = refused.value.args[0]
        assert error.name() == "INVALID_PARTITIONS"
        assert "limit of 2048 open files (ulimit -n)" in error.str()
        assert "too-many" not in admin.list_topics(timeout=10).topics  # nothing half made
        # What fits is created, and the broker goes on serving producers.
        admin.create_topics([NewTopic("fits", 100, 1)], operation_timeout=30)["fits"].result()
        p = Producer({"bootstrap.servers": broker.bootstrap})
        p.produce("fits", b"still serving", partition=99)
        assert p.flush(30) == 0
        with pytest.raises(KafkaException) as grow:
            admin.create_partitions([NewPartitions("fits", 1000)])["fits"].result()
        assert grow.value.args[0].name() == "INVALID_PARTITIONS"
    finally:
        broker.stop()
