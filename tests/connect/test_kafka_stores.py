"""The distributed stores against the real broker: internal topics, config, offset and status stores.

Two store instances on one topic play two workers. Records are also written and read
raw (plain confluent-kafka clients) to check the exact bytes Kafka Connect writes and
reads, and that records a Java worker (or garbage) put in the topic are handled.
"""

from __future__ import annotations

import base64
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic  # type: ignore[attr-defined]

from broker.server import EmbeddedBroker
from connect.api.errors import ConnectException
from connect.runtime.status import ConnectorTaskId, State, Status, TargetState
from connect.storage.kafka_configs import KafkaConfigBackingStore, RestartRequest, StoredSessionKey
from connect.storage.kafka_offsets import KafkaOffsetBackingStore
from connect.storage.kafka_status import KafkaStatusBackingStore
from connect.storage.offsets import ConnectorOffsetReader, OffsetStorageWriter, offset_key
from connect.storage.topic_admin import (
    CONFIG_TOPIC,
    OFFSETS_TOPIC,
    STATUS_TOPIC,
    ensure_internal_topic,
    verify_cleanup_policy,
)
from tests.support import unique, wait_until

Raw = tuple[bytes | None, bytes | None, int, int]  # key, value, partition, offset
Start = Callable[[Any], Any]  # the ``stores`` fixture: starts a store, stops it after the test


# -- helpers ---------------------------------------------------------------------------------


def read_raw(bootstrap: str, topic: str) -> list[Raw]:
    """Every record of ``topic``, in offset order per partition (a plain consumer, no group)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("raw")})
    try:
        partitions = sorted(consumer.list_topics(topic, timeout=10).topics[topic].partitions)
        # Asked before assign: once fetching, the broker answers this connection after each long poll.
        ends = {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in partitions
        }
        consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
        out: list[Raw] = []
        next_offsets = dict.fromkeys(partitions, 0)
        while any(next_offsets[p] < ends[p] for p in partitions):
            msg = consumer.poll(5)
            assert msg is not None, "timed out reading the topic back"
            partition, offset = msg.partition(), msg.offset()
            assert msg.error() is None and partition is not None and offset is not None, msg.error()
            out.append((msg.key(), msg.value(), partition, offset))
            next_offsets[partition] = offset + 1
        return out
    finally:
        consumer.close()


def values_of(bootstrap: str, topic: str, key: bytes) -> list[bytes | None]:
    return [v for k, v, _, _ in read_raw(bootstrap, topic) if k == key]


def produce_raw(bootstrap: str, topic: str, records: Sequence[tuple[bytes, bytes | None]]) -> None:
    """Write records as another worker (or anyone) would; compacted topics refuse null keys."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "partitioner": "murmur2_random"})
    errors: list[KafkaError] = []

    def delivered(err: KafkaError | None, _msg: Message) -> None:
        if err is not None:
            errors.append(err)

    for key, value in records:
        producer.produce(topic, key=key, value=value, on_delivery=delivered)
    assert producer.flush(10) == 0
    assert errors == []


def java_murmur2_partition(key: bytes, partitions: int) -> int:
    """Kafka's Java ``DefaultPartitioner`` for a keyed record: murmur2, made positive, modulo."""
    m, h = 0x5BD1E995, (0x9747B28C ^ len(key)) & 0xFFFFFFFF
    for i in range(len(key) // 4):
        k = int.from_bytes(key[i * 4 : i * 4 + 4], "little")
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> 24
        k = (k * m) & 0xFFFFFFFF
        h = ((h * m) & 0xFFFFFFFF) ^ k
    tail, rest = len(key) & ~3, len(key) % 4
    if rest == 3:
        h ^= key[tail + 2] << 16
    if rest >= 2:
        h ^= key[tail + 1] << 8
    if rest >= 1:
        h ^= key[tail]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return (h & 0x7FFFFFFF) % partitions


def test_the_murmur2_helper_matches_kafkas_test_vectors() -> None:
    # Utils.murmur2 values from Kafka's UtilsTest (signed Java ints), as the partitioner uses them.
    for text, java in (("21", -973932308), ("foobar", -790332482), ("a-little-bit-long-string", -985981536)):
        assert java_murmur2_partition(text.encode(), 2**31 - 1) == (java & 0x7FFFFFFF) % (2**31 - 1)


class Events:
    """A ConfigUpdateListener that records what it is told (from the store's reader thread)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.events: list[tuple[Any, ...]] = []

    def _add(self, *event: Any) -> None:
        with self.lock:
            self.events.append(event)

    def on_connector_config(self, name: str) -> None:
        self._add("config", name)

    def on_connector_removed(self, name: str) -> None:
        self._add("removed", name)

    def on_task_configs(self, name: str) -> None:
        self._add("tasks", name)

    def on_target_state(self, name: str) -> None:
        self._add("target", name)

    def on_restart_request(self, name: str, include_tasks: bool, only_failed: bool) -> None:
        self._add("restart", name, include_tasks, only_failed)

    def on_session_key(self, key: bytes, algorithm: str, created_ms: int) -> None:
        self._add("session-key", key, algorithm, created_ms)

    def seen(self) -> list[tuple[Any, ...]]:
        with self.lock:
            return list(self.events)


@pytest.fixture
def stores() -> Iterator[Start]:
    """Starts stores and stops them all when the test ends."""
    started: list[Any] = []

    def start(store: Any) -> Any:
        store.start()
        started.append(store)
        return store

    yield start
    for store in reversed(started):
        store.stop()


def describe(bootstrap: str, topic: str) -> tuple[int, str]:
    """(partitions, cleanup.policy) of a topic."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    partitions = len(admin.list_topics(topic, timeout=10).topics[topic].partitions)
    resource = ConfigResource("topic", topic)
    policy = admin.describe_configs([resource])[resource].result(10)["cleanup.policy"].value
    return partitions, policy


def create_plain_topic(bootstrap: str, topic: str, partitions: int, config: dict[str, str]) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1, config=config)])[topic].result(10)


# -- internal topics -------------------------------------------------------------------------


def test_internal_topics_are_created_compacted_with_their_partition_counts(
    shared_broker: EmbeddedBroker,
) -> None:
    b = shared_broker.bootstrap
    configs, offsets, statuses, default = unique("configs"), unique("offsets"), unique("status"), unique("d")
    # The config topic gets one partition whatever it is asked for.
    assert ensure_internal_topic(b, {}, configs, 25, 1, CONFIG_TOPIC)
    assert ensure_internal_topic(
        b, {}, offsets, 7, 1, OFFSETS_TOPIC, topic_settings={"cleanup.policy": "delete"}
    )
    assert ensure_internal_topic(b, {}, statuses, 3, -1, STATUS_TOPIC)
    assert ensure_internal_topic(b, {}, default, -1, -1, STATUS_TOPIC)  # KIP-464: broker defaults
    assert describe(b, configs) == (1, "compact")
    assert describe(b, offsets) == (7, "compact")  # a user's cleanup.policy is not taken
    assert describe(b, statuses) == (3, "compact")
    assert describe(b, default)[1] == "compact"
    # Existing and fit for purpose: found, not created.
    assert not ensure_internal_topic(b, {}, configs, 1, 1, CONFIG_TOPIC)
    assert not ensure_internal_topic(b, {}, offsets, 25, 1, OFFSETS_TOPIC)


def test_workers_racing_to_create_the_same_topic_all_succeed(shared_broker: EmbeddedBroker) -> None:
    topic = unique("race")
    results: list[bool] = []
    errors: list[BaseException] = []

    def ensure() -> None:
        try:
            results.append(ensure_internal_topic(shared_broker.bootstrap, {}, topic, 5, 1, STATUS_TOPIC))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=ensure) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []
    assert sorted(results) == [False, False, False, True]


def test_a_config_topic_with_two_partitions_is_refused(shared_broker: EmbeddedBroker) -> None:
    topic = unique("configs")
    create_plain_topic(shared_broker.bootstrap, topic, 2, {"cleanup.policy": "compact"})
    with pytest.raises(ConnectException) as info:
        ensure_internal_topic(shared_broker.bootstrap, {}, topic, 1, 1, CONFIG_TOPIC)
    assert str(info.value) == (
        f"Topic '{topic}' supplied via the 'config.storage.topic' property is required to have a single "
        "partition in order to guarantee consistency of connector configurations, but found 2 partitions."
    )
    # The store refuses it too, even when told not to manage the topic.
    store = KafkaConfigBackingStore(shared_broker.bootstrap, topic, create_topic=False)
    with pytest.raises(ConnectException, match="required to have a single partition"):
        store.start()


@pytest.mark.parametrize("policy", ["delete", "compact,delete"])
def test_a_topic_that_is_not_compact_only_is_refused(shared_broker: EmbeddedBroker, policy: str) -> None:
    topic = unique("offsets")
    create_plain_topic(shared_broker.bootstrap, topic, 3, {"cleanup.policy": policy})
    with pytest.raises(ConnectException) as info:
        ensure_internal_topic(shared_broker.bootstrap, {}, topic, 25, 1, OFFSETS_TOPIC)
    found = ",".join(sorted(policy.split(",")))
    assert str(info.value) == (
        f"Topic '{topic}' supplied via the 'offset.storage.topic' property is required to have "
        "'cleanup.policy=compact' to guarantee consistency and durability of source connector offsets, but "
        f"found the topic currently has 'cleanup.policy={found}'. Continuing would likely result in "
        "eventually losing source connector offsets and problems restarting this Connect cluster in the "
        "future. Change the 'offset.storage.topic' property in the Connect worker configurations to use a "
        "topic with 'cleanup.policy=compact'."
    )


@pytest.mark.parametrize("reported", [None, "", " "])
def test_a_cleanup_policy_the_broker_does_not_report_is_said_to_be_unchecked(
    caplog: pytest.LogCaptureFixture, reported: str | None
) -> None:
    """A broker that leaves cleanup.policy out of DescribeConfigs (older ones, or a worker
    without the ACL): the worker goes on, and says at INFO that it could not check, as
    Kafka's TopicAdmin does, so the operator knows."""
    with caplog.at_level(logging.INFO, logger="connect.storage.topic_admin"):
        assert verify_cleanup_policy("connect-configs", CONFIG_TOPIC, reported) is False
    [line] = [r for r in caplog.records if r.name == "connect.storage.topic_admin"]
    assert line.levelno == logging.INFO
    assert line.getMessage().startswith(
        "Unable to use admin client to verify the cleanup policy of 'connect-configs' topic is 'compact'"
    )
    assert "connector configurations" in line.getMessage()


def test_a_compact_cleanup_policy_is_verified_quietly(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="connect.storage.topic_admin"):
        assert verify_cleanup_policy("connect-offsets", OFFSETS_TOPIC, "compact") is True
        assert verify_cleanup_policy("connect-offsets", OFFSETS_TOPIC, " Compact ") is True
    assert not [r for r in caplog.records if r.name == "connect.storage.topic_admin"]
    with pytest.raises(ConnectException, match=r"cleanup\.policy=delete"):
        verify_cleanup_policy("connect-offsets", OFFSETS_TOPIC, "delete")


def test_a_replication_factor_the_cluster_cannot_have_names_the_setting(
    shared_broker: EmbeddedBroker,
) -> None:
    with pytest.raises(ConnectException, match=r"status\.storage\.replication\.factor"):
        ensure_internal_topic(shared_broker.bootstrap, {}, unique("status"), 5, 3, STATUS_TOPIC)


# -- config store ----------------------------------------------------------------------------


def config_store(
    broker: EmbeddedBroker, topic: str, listener: Events | None = None
) -> KafkaConfigBackingStore:
    store = KafkaConfigBackingStore(broker.bootstrap, topic, replication_factor=1, client_id_base=unique("w"))
    if listener is not None:
        store.set_listener(listener)
    return store


def test_two_workers_see_each_others_config_writes(shared_broker: EmbeddedBroker, stores: Start) -> None:
    topic = unique("configs")
    events_a, events_b = Events(), Events()
    a = stores(config_store(shared_broker, topic, events_a))
    b = stores(config_store(shared_broker, topic, events_b))

    a.put_connector_config("orders", {"connector.class": "FileStreamSource", "tasks.max": "2"})
    # The writer's snapshot includes the write as soon as the call returns.
    assert a.snapshot().connector_configs == {
        "orders": {"connector.class": "FileStreamSource", "tasks.max": "2"}
    }
    assert a.snapshot().target_state("orders") is TargetState.STARTED
    a.put_task_configs("orders", [{"task": "0"}, {"task": "1"}])
    snap = a.snapshot()
    assert snap.tasks("orders") == [ConnectorTaskId("orders", 0), ConnectorTaskId("orders", 1)]
    assert snap.task_config(ConnectorTaskId("orders", 1)) == {"task": "1"}

    assert b.refresh(10)
    assert b.snapshot() == a.snapshot()
    assert b.snapshot().offset == a.snapshot().offset == 3  # the offset of the commit record
    # The other worker's listener heard of it too (reader thread, soon after the write).
    wait_until(lambda: ("tasks", "orders") in events_b.seen(), timeout=5, message="task configs event")
    assert events_b.seen()[:2] == [("config", "orders"), ("tasks", "orders")]

    b.put_connector_config("orders", {"connector.class": "FileStreamSource", "tasks.max": "1"})
    b.put_task_configs("orders", [{"task": "0"}])
    assert a.refresh(10)
    assert a.snapshot().connector_configs["orders"]["tasks.max"] == "1"
    assert a.snapshot().tasks("orders") == [ConnectorTaskId("orders", 0)]
    assert a.snapshot().task_config(ConnectorTaskId("orders", 1)) is None  # no stale leftovers


def test_a_store_started_later_reads_the_whole_history_without_events(
    shared_broker: EmbeddedBroker,
    stores: Start,
) -> None:
    topic = unique("configs")
    a = stores(config_store(shared_broker, topic))
    a.put_connector_config("c", {"k": "v"}, TargetState.PAUSED)
    a.put_task_configs("c", [{"t": "0"}])
    a.put_session_key(b"\x01\x02secret", "HmacSHA256", 1700000000000)
    a.put_restart_request("c", include_tasks=True, only_failed=False)
    events = Events()
    late = stores(config_store(shared_broker, topic, events))
    assert late.snapshot() == a.snapshot()
    assert late.snapshot().target_state("c") is TargetState.PAUSED
    assert late.session_key() == StoredSessionKey(b"\x01\x02secret", "HmacSHA256", 1700000000000)
    assert late.restart_requests() == {"c": RestartRequest("c", True, False)}
    assert events.seen() == []  # history is not news (Kafka only tells once started)


def test_config_records_have_kafkas_exact_bytes(shared_broker: EmbeddedBroker, stores: Start) -> None:
    topic = unique("configs")
    store = stores(config_store(shared_broker, topic))
    store.put_connector_config("c", {"name": "c", "tasks.max": "1"}, TargetState.STOPPED)
    store.put_task_configs("c", [{"a": "1"}])
    store.put_target_state("c", TargetState.PAUSED)
    store.put_target_state("c", TargetState.STARTED)
    store.put_restart_request("c", include_tasks=True, only_failed=False)
    store.put_session_key(b"key-bytes", "HmacSHA256", 1234)
    records = [(k, v) for k, v, _, _ in read_raw(shared_broker.bootstrap, topic)]
    assert records == [
        # The target state goes first, so that no worker starts the connector in the wrong state.
        (b"target-state-c", b'{"state":"PAUSED","state.v2":"STOPPED"}'),
        (b"connector-c", b'{"properties":{"name":"c","tasks.max":"1"}}'),
        (b"task-c-0", b'{"properties":{"a":"1"}}'),
        (b"commit-c", b'{"tasks":1}'),
        (b"target-state-c", b'{"state":"PAUSED","state.v2":"PAUSED"}'),
        (b"target-state-c", b'{"state":"STARTED","state.v2":"STARTED"}'),
        (b"restart-connector-c", b'{"include-tasks":true,"only-failed":false}'),
        (
            b"session-key",
            b'{"key":"'
            + base64.b64encode(b"key-bytes")
            + b'","algorithm":"HmacSHA256","creation-timestamp":1234}',
        ),
    ]


def test_target_states_round_trip_including_stopped_and_records_of_older_workers(
    shared_broker: EmbeddedBroker,
    stores: Start,
) -> None:
    topic = unique("configs")
    events = Events()
    a = stores(config_store(shared_broker, topic))
    b = stores(config_store(shared_broker, topic, events))
    a.put_connector_config("c", {"k": "v"})
    for state in (TargetState.STOPPED, TargetState.PAUSED, TargetState.STARTED, TargetState.STOPPED):
        a.put_target_state("c", state)
        assert b.refresh(10)
        assert b.snapshot().target_state("c") is state
    wait_until(lambda: events.seen().count(("target", "c")) == 4, timeout=5, message="4 target events")
    # A worker from before KIP-875 writes only "state"; a STOPPED written by us reads as PAUSED there.
    produce_raw(shared_broker.bootstrap, topic, [(b"target-state-c", b'{"state":"PAUSED"}')])
    assert b.refresh(10)
    assert b.snapshot().target_state("c") is TargetState.PAUSED
    # Rewriting the same state is not news.
    a.put_target_state("c", TargetState.PAUSED)
    assert b.refresh(10)
    assert events.seen().count(("target", "c")) == 5


def test_task_configs_without_their_commit_are_not_visible(
    shared_broker: EmbeddedBroker, stores: Start
) -> None:
    topic = unique("configs")
    events = Events()
    store = stores(config_store(shared_broker, topic, events))
    store.put_connector_config("c", {"k": "v"})
    store.put_task_configs("c", [{"t": "old"}])
    # A leader writing new task configs died before its commit record.
    produce_raw(
        shared_broker.bootstrap,
        topic,
        [(b"task-c-0", b'{"properties":{"t":"new0"}}'), (b"task-c-1", b'{"properties":{"t":"new1"}}')],
    )
    assert store.refresh(10)
    assert store.snapshot().tasks("c") == [ConnectorTaskId("c", 0)]
    assert store.snapshot().task_config(ConnectorTaskId("c", 0)) == {"t": "old"}
    produce_raw(shared_broker.bootstrap, topic, [(b"commit-c", b'{"tasks":2}')])
    assert store.refresh(10)
    assert store.snapshot().task_config(ConnectorTaskId("c", 0)) == {"t": "new0"}
    assert store.snapshot().task_config(ConnectorTaskId("c", 1)) == {"t": "new1"}
    assert "c" not in store.snapshot().inconsistent


def test_a_commit_with_missing_task_configs_makes_the_connector_inconsistent(
    shared_broker: EmbeddedBroker,
    stores: Start,
) -> None:
    topic = unique("configs")
    store = stores(config_store(shared_broker, topic))
    store.put_connector_config("c", {"k": "v"})
    # Compaction removed task-c-1 of this generation of task configs.
    produce_raw(
        shared_broker.bootstrap, topic, [(b"task-c-0", b'{"properties":{}}'), (b"commit-c", b'{"tasks":2}')]
    )
    assert store.refresh(10)
    snap = store.snapshot()
    assert snap.inconsistent == frozenset({"c"})
    assert snap.task_config(ConnectorTaskId("c", 0)) is None  # nothing applied
    # A complete rewrite by the leader resolves it.
    store.put_task_configs("c", [{"t": "0"}, {"t": "1"}])
    assert store.snapshot().inconsistent == frozenset()
    assert store.snapshot().task_config(ConnectorTaskId("c", 1)) == {"t": "1"}


def test_deleting_a_connector(shared_broker: EmbeddedBroker, stores: Start) -> None:
    topic = unique("configs")
    events = Events()
    a = stores(config_store(shared_broker, topic))
    b = stores(config_store(shared_broker, topic, events))
    a.put_connector_config("c", {"k": "v"}, TargetState.PAUSED)
    a.put_task_configs("c", [{"t": "0"}])
    a.put_connector_config("other", {"k": "v"})
    a.remove_connector_config("c")
    for store in (a, b):
        assert store.refresh(10)
        snap = store.snapshot()
        assert snap.connectors() == ["other"]
        assert snap.tasks("c") == [] and snap.task_config(ConnectorTaskId("c", 0)) is None
        assert "c" not in snap.target_states
    wait_until(lambda: ("removed", "c") in events.seen(), timeout=5, message="removal event")
    records = [(k, v) for k, v, _, _ in read_raw(shared_broker.bootstrap, topic)]
    assert records[-2:] == [(b"connector-c", None), (b"target-state-c", None)]
    # Task records of a deleted connector whose tombstone compaction removed are ignored (KAFKA-16838).
    produce_raw(
        shared_broker.bootstrap, topic, [(b"task-c-0", b'{"properties":{}}'), (b"commit-c", b'{"tasks":1}')]
    )
    assert b.refresh(10)
    assert b.snapshot().tasks("c") == [] and "c" not in b.snapshot().task_counts


def test_restart_requests_and_session_keys_reach_the_other_workers_listener(
    shared_broker: EmbeddedBroker,
    stores: Start,
) -> None:
    topic = unique("configs")
    events = Events()
    leader = stores(config_store(shared_broker, topic))
    follower = stores(config_store(shared_broker, topic, events))
    leader.put_connector_config("c", {"k": "v"})
    leader.put_restart_request("c", include_tasks=True, only_failed=True)
    leader.put_session_key(b"\x00\xffkey", "HmacSHA512", 99)
    wait_until(lambda: len(events.seen()) == 3, timeout=5, message="three events")
    assert events.seen() == [
        ("config", "c"),
        ("restart", "c", True, True),
        ("session-key", b"\x00\xffkey", "HmacSHA512", 99),
    ]
    assert follower.session_key() == StoredSessionKey(b"\x00\xffkey", "HmacSHA512", 99)
    assert follower.restart_requests() == {"c": RestartRequest("c", True, True)}
    # A plain callable listener (the memory store's kind) hears of config changes only.
    names: list[str] = []
    leader.set_listener(names.append)
    follower.put_connector_config("d", {"k": "v"})
    follower.put_restart_request("d", include_tasks=False, only_failed=False)
    assert leader.refresh(10)
    wait_until(lambda: names == ["d"], timeout=5, message="callable listener")


def test_garbage_in_the_config_topic_is_skipped(shared_broker: EmbeddedBroker, stores: Start) -> None:
    topic = unique("configs")
    store = stores(config_store(shared_broker, topic))
    produce_raw(
        shared_broker.bootstrap,
        topic,
        [
            (b"\xff\xfe", b"{}"),  # key not UTF-8
            (b"connector-a", b"{not json"),
            (b"connector-b", b'["properties"]'),
            (b"connector-c", b'{"properties":{"k":1}}'),  # values must be strings
            (b"commit-a", b'{"tasks":"two"}'),
            (b"target-state-a", b'{"state":"SLEEPING"}'),
            (b"task-a", b'{"properties":{}}'),  # no task number
            (b"session-key", b'{"key":"%%%","algorithm":"HmacSHA256","creation-timestamp":1}'),
            (b"session-key", b'{"key":"AA==","algorithm":"HmacSHA256","creation-timestamp":"1"}'),
            (b"restart-connector-a", b"[]"),
            (b"something-else", b"{}"),
            (b"tasks-fencing-a", b'{"task-count":1}'),
            (b"connector-ok", b'{"properties":{"k":"v","nullable":null}}'),
        ],
    )
    assert store.refresh(10)
    snap = store.snapshot()
    assert snap.connector_configs == {"ok": {"k": "v"}}
    assert snap.target_states == {"ok": TargetState.STARTED}
    assert snap.offset == 12  # every record was read, usable or not
    assert store.session_key() is None
    assert store.restart_requests() == {}
    # The reader is alive and well.
    store.put_connector_config("after", {"k": "v"})
    assert store.snapshot().connectors() == ["after", "ok"]


# -- offset store ----------------------------------------------------------------------------


def offset_store(broker: EmbeddedBroker, topic: str, partitions: int = 5) -> KafkaOffsetBackingStore:
    return KafkaOffsetBackingStore(
        broker.bootstrap, topic, partitions=partitions, replication_factor=1, client_id_base=unique("w")
    )


def test_offsets_round_trip_between_workers(shared_broker: EmbeddedBroker, stores: Start) -> None:
    topic = unique("offsets")
    a = stores(offset_store(shared_broker, topic))
    b = stores(offset_store(shared_broker, topic))
    writer = OffsetStorageWriter(a, "files")
    writer.write([({"file": "x.txt"}, {"position": 10}), ({"file": "y.txt"}, {"position": 3})])
    assert ConnectorOffsetReader(a, "files").offset({"file": "x.txt"}) == {"position": 10}
    # The other worker sees them once it has read to the end (as before starting a moved task).
    assert b.refresh(10)
    reader = ConnectorOffsetReader(b, "files")
    assert reader.offset({"file": "x.txt"}) == {"position": 10}
    assert sorted(reader.all(), key=str) == [
        ({"file": "x.txt"}, {"position": 10}),
        ({"file": "y.txt"}, {"position": 3}),
    ]
    # A tombstone removes an offset everywhere.
    OffsetStorageWriter(b, "files").write([({"file": "x.txt"}, None)])
    assert a.refresh(10)
    assert ConnectorOffsetReader(a, "files").offset({"file": "x.txt"}) is None
    assert reader.offset({"file": "x.txt"}) is None
    # A store started later reads them all.
    late = stores(offset_store(shared_broker, topic))
    assert late.items() == [(offset_key("files", {"file": "y.txt"}), b'{"position":3}')]


def test_offset_records_use_kafkas_bytes_and_partitioner(
    shared_broker: EmbeddedBroker, stores: Start
) -> None:
    topic = unique("offsets")
    store = stores(offset_store(shared_broker, topic, partitions=25))
    keys = [offset_key("jdbc", {"table": f"t{i}", "db": "shop"}) for i in range(30)]
    store.set({k: b'{"id":1}' for k in keys})
    records = read_raw(shared_broker.bootstrap, topic)
    assert (b'["jdbc",{"db":"shop","table":"t0"}]', b'{"id":1}') in [(k, v) for k, v, _, _ in records]
    # Every key is in the partition a Java worker would have put it in, so both keep one value per key.
    for key, _value, partition, _offset in records:
        assert key is not None
        assert partition == java_murmur2_partition(key, 25)
    assert len({p for _, _, p, _ in records}) > 1


def test_offsets_written_by_a_java_worker_are_found(shared_broker: EmbeddedBroker, stores: Start) -> None:
    topic = unique("offsets")
    store = stores(offset_store(shared_broker, topic))
    # Java's HashMap order is not ours; the store keeps keys in one canonical form.
    produce_raw(shared_broker.bootstrap, topic, [(b'["jdbc",{"table":"t","db":"shop"}]', b'{"id":42}')])
    assert store.refresh(10)
    assert ConnectorOffsetReader(store, "jdbc").offset({"db": "shop", "table": "t"}) == {"id": 42}


def test_a_write_that_cannot_be_made_raises(shared_broker: EmbeddedBroker) -> None:
    store = offset_store(shared_broker, unique("offsets"))
    store.start()
    store.stop()
    with pytest.raises(ConnectException, match="could not write source offsets"):
        store.set({offset_key("c", {"p": 1}): b"{}"})


# -- status store ----------------------------------------------------------------------------


def status_store(broker: EmbeddedBroker, topic: str) -> KafkaStatusBackingStore:
    return KafkaStatusBackingStore(
        broker.bootstrap, topic, partitions=3, replication_factor=1, client_id_base=unique("w")
    )


def test_statuses_round_trip_between_workers(shared_broker: EmbeddedBroker, stores: Start) -> None:
    topic = unique("status")
    a = stores(status_store(shared_broker, topic))
    b = stores(status_store(shared_broker, topic))
    a.set_generation(3)
    a.on_status("c", None, Status(State.RUNNING, "w1:8083"))
    a.on_status("c", 0, Status(State.RUNNING, "w1:8083"))
    a.on_status("c", 1, Status(State.FAILED, "w1:8083", trace="Traceback\n  boom"))
    for store in (a, b):
        assert store.refresh(10)
        assert store.connector("c") == Status(State.RUNNING, "w1:8083", None, 3)
        assert store.tasks("c") == {
            0: Status(State.RUNNING, "w1:8083", None, 3),
            1: Status(State.FAILED, "w1:8083", "Traceback\n  boom", 3),
        }
        assert store.connectors() == ["c"]
    assert values_of(shared_broker.bootstrap, topic, b"status-connector-c") == [
        b'{"state":"RUNNING","trace":null,"worker_id":"w1:8083","generation":3}'
    ]
    assert values_of(shared_broker.bootstrap, topic, b"status-task-c-1") == [
        b'{"state":"FAILED","trace":"Traceback\\n  boom","worker_id":"w1:8083","generation":3}'
    ]
    # A store started later reads them all.
    late = stores(status_store(shared_broker, topic))
    assert late.task(ConnectorTaskId("c", 1)) == Status(State.FAILED, "w1:8083", "Traceback\n  boom", 3)


def test_a_worker_does_not_overwrite_a_newer_generations_status(
    shared_broker: EmbeddedBroker, stores: Start
) -> None:
    topic = unique("status")
    old = stores(status_store(shared_broker, topic))
    new = stores(status_store(shared_broker, topic))
    old.set_generation(4)
    new.set_generation(5)
    new.on_status("c", 0, Status(State.RUNNING, "w2"))  # the task moved to w2 in generation 5
    new.flush(10)
    assert old.refresh(10)
    # w1, still in generation 4, lets go of the task it no longer owns, and it fails while doing so.
    old.on_status("c", 0, Status(State.UNASSIGNED, "w1"))
    old.on_status("c", 0, Status(State.FAILED, "w1", trace="late"))
    old.flush(10)
    assert values_of(shared_broker.bootstrap, topic, b"status-task-c-0") == [
        b'{"state":"RUNNING","trace":null,"worker_id":"w2","generation":5}'
    ]
    # Other states are not "safe" writes: they are written regardless (Kafka's put).
    old.on_status("c", 0, Status(State.PAUSED, "w1"))
    old.flush(10)  # status writes are asynchronous: another worker sees them once they are in the topic
    assert new.refresh(10) and new.task(ConnectorTaskId("c", 0)) == Status(State.PAUSED, "w1", None, 4)
    # A worker in the newest generation, or the same worker, may write UNASSIGNED.
    new.on_status("c", 0, Status(State.RUNNING, "w2"))
    new.flush(10)
    assert old.refresh(10)
    old.set_generation(6)
    old.on_status("c", 0, Status(State.UNASSIGNED, "w1"))
    old.flush(10)
    assert new.refresh(10) and new.task(ConnectorTaskId("c", 0)) == Status(State.UNASSIGNED, "w1", None, 6)


def test_a_stale_unassigned_read_from_the_topic_does_not_hide_a_running_task(
    shared_broker: EmbeddedBroker,
    stores: Start,
) -> None:
    topic = unique("status")
    store = stores(status_store(shared_broker, topic))
    produce_raw(
        shared_broker.bootstrap,
        topic,
        [
            (b"status-task-my-conn-0", b'{"state":"RUNNING","trace":null,"worker_id":"w2","generation":7}'),
            (
                b"status-task-my-conn-0",
                b'{"state":"UNASSIGNED","trace":null,"worker_id":"w1","generation":7}',
            ),
            (b"status-connector-x", b"not json"),
            (b"status-task-x", b'{"state":"RUNNING"}'),
            (b"status-bogus", b"{}"),
        ],
    )
    assert store.refresh(10)
    assert store.task(ConnectorTaskId("my-conn", 0)) == Status(State.RUNNING, "w2", None, 7)
    assert store.connectors() == []
    produce_raw(
        shared_broker.bootstrap,
        topic,
        [(b"status-task-my-conn-0", b'{"state":"UNASSIGNED","trace":null,"worker_id":"w1","generation":8}')],
    )
    assert store.refresh(10)
    assert store.task(ConnectorTaskId("my-conn", 0)) == Status(State.UNASSIGNED, "w1", None, 8)


def test_topic_tracking_records(shared_broker: EmbeddedBroker, stores: Start) -> None:
    topic = unique("status")
    a = stores(status_store(shared_broker, topic))
    b = stores(status_store(shared_broker, topic))
    a.on_topic_used("c", 0, "orders")
    a.on_topic_used("c", 1, "orders")  # already known: not written again
    a.on_topic_used("c", 1, "payments")
    a.flush(10)
    assert b.refresh(10)
    assert b.topics("c") == ["orders", "payments"]
    status = b.topic_status("c", "orders")
    assert status is not None and status.task == 0
    raw = values_of(shared_broker.bootstrap, topic, b"status-topic-orders:connector-c")
    assert len(raw) == 1
    assert raw[0] == (
        b'{"topic":{"name":"orders","connector":"c","task":0,"discoverTimestamp":'
        + str(status.discover_ms).encode()
        + b"}}"
    )
    b.reset_topics("c")
    assert b.refresh(10) and a.refresh(10)
    assert a.topics("c") == [] and b.topics("c") == []
    assert values_of(shared_broker.bootstrap, topic, b"status-topic-payments:connector-c")[-1] is None
    # Used again after the reset: tracked again.
    a.on_topic_used("c", 0, "orders")
    assert a.refresh(10) and b.refresh(10) and b.topics("c") == ["orders"]


def test_deleting_statuses(shared_broker: EmbeddedBroker, stores: Start) -> None:
    topic = unique("status")
    a = stores(status_store(shared_broker, topic))
    b = stores(status_store(shared_broker, topic))
    for task in (0, 1, 2):
        a.on_status("c", task, Status(State.RUNNING, "w1"))
    a.on_status("c", None, Status(State.RUNNING, "w1"))
    a.on_status("keep", None, Status(State.RUNNING, "w1"))
    a.on_topic_used("c", 0, "orders")
    a.flush(10)
    assert b.refresh(10)
    b.forget_tasks_from("c", 1)  # the connector went down to one task
    b.flush(10)
    assert a.refresh(10)
    assert sorted(a.tasks("c")) == [0]
    a.on_status("c", 0, Status(State.DESTROYED, "w1"))  # a DESTROYED status is a tombstone
    a.flush(10)
    assert b.refresh(10) and b.tasks("c") == {}
    assert values_of(shared_broker.bootstrap, topic, b"status-task-c-0")[-1] is None
    b.delete("c")
    for store in (b, a):
        assert store.refresh(10)
        assert store.connector("c") is None and store.tasks("c") == {} and store.topics("c") == []
        assert store.connectors() == ["keep"]
    assert values_of(shared_broker.bootstrap, topic, b"status-connector-c")[-1] is None
    assert values_of(shared_broker.bootstrap, topic, b"status-topic-orders:connector-c")[-1] is None
