"""kafka-python (3.x) against the real broker: admin, producer, consumer groups, offsets, codecs.

Every test drives the broker through kafka-python's public API only and checks what comes
back against Apache Kafka's behaviour. Broker warnings (one per connection it closes) go to
the ``broker.*`` loggers and show up in pytest's captured log when a test fails.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import kafka.codec
import kafka.errors as Errors
import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import AlterConfigOp, ConfigResource, KafkaAdminClient
from kafka.structs import OffsetAndMetadata

from tests.support import unique, wait_until

SESSION_MS = 6000
HEARTBEAT_MS = 500


# -- helpers ---------------------------------------------------------------------------


@contextmanager
def admin_client(bootstrap: str) -> Iterator[KafkaAdminClient]:
    admin = KafkaAdminClient(
        bootstrap_servers=bootstrap, request_timeout_ms=10000, client_id=unique("kp-admin")
    )
    try:
        yield admin
    finally:
        admin.close()


@contextmanager
def producer(bootstrap: str, **config: Any) -> Iterator[KafkaProducer]:
    config.setdefault("acks", "all")
    p = KafkaProducer(bootstrap_servers=bootstrap, request_timeout_ms=10000, max_block_ms=10000, **config)
    try:
        yield p
    finally:
        p.close(timeout=10)


@contextmanager
def consumer(bootstrap: str, *topics: str, **config: Any) -> Iterator[KafkaConsumer]:
    config.setdefault("auto_offset_reset", "earliest")
    config.setdefault("enable_auto_commit", False)
    config.setdefault("consumer_timeout_ms", 3000)
    if config.get("group_id"):
        config.setdefault("session_timeout_ms", SESSION_MS)
        config.setdefault("heartbeat_interval_ms", HEARTBEAT_MS)
    c = KafkaConsumer(*topics, bootstrap_servers=bootstrap, request_timeout_ms=10000, **config)
    try:
        # Have the subscribed topics' metadata before the first join. A leader that assigns
        # without it rejoins once metadata arrives, and kafka-python 3.0.12 can lose that
        # rejoin: if poll() times out while it is in flight, the completed join is never
        # applied (the leader's own assignment already made need_rejoin() false) and the
        # member's heartbeat stays disabled for good.
        for t in topics:
            assert c.partitions_for_topic(t), f"no metadata for {t}"
        yield c
    finally:
        c.close(autocommit=False, timeout_ms=5000)


def create_topic(bootstrap: str, name: str, partitions: int, configs: dict[str, str] | None = None) -> None:
    with admin_client(bootstrap) as admin:
        result = admin.create_topics(
            {name: {"num_partitions": partitions, "replication_factor": 1, "configs": configs or {}}}
        )
        assert [t["error_code"] for t in result["topics"]] == [0]
        admin.wait_for_topics([name], timeout_ms=10000)


def poll_until(c: KafkaConsumer, count: int, timeout: float = 15.0) -> list[Any]:
    """Poll until ``count`` records have arrived (or the timeout passes); returns them all."""
    records: list[Any] = []
    deadline = time.time() + timeout
    while len(records) < count and time.time() < deadline:
        for batch in c.poll(timeout_ms=200).values():
            records.extend(batch)
    return records


def poll_for(c: KafkaConsumer, seconds: float) -> list[Any]:
    records: list[Any] = []
    deadline = time.time() + seconds
    while time.time() < deadline:
        for batch in c.poll(timeout_ms=100).values():
            records.extend(batch)
    return records


def wait_for_assignment(c: KafkaConsumer, expected: set[TopicPartition], timeout: float = 15.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        c.poll(timeout_ms=100, update_offsets=False)
        if c.assignment() == expected:
            return
    raise AssertionError(f"assignment {c.assignment()} never became {expected}")


def send_keyed(p: KafkaProducer, topic: str, n: int, start: int = 0, keys: int = 7) -> list[dict[str, Any]]:
    """Sends ``n`` keyed records with headers; returns what was sent plus the broker-assigned metadata."""
    futures = []
    for i in range(start, start + n):
        key = f"key-{i % keys}".encode()
        value = f"value-{i}".encode()
        headers = [("seq", str(i).encode()), ("dup", b"first"), ("dup", b"second"), ("empty", b"")]
        futures.append((key, value, headers, p.send(topic, key=key, value=value, headers=headers)))
    p.flush(timeout=10)
    sent = []
    for key, value, headers, fut in futures:
        md = fut.get(timeout=10)
        assert md.topic == topic
        assert md.offset >= 0
        sent.append(
            {"key": key, "value": value, "headers": headers, "partition": md.partition, "offset": md.offset}
        )
    return sent


def assigned_to(member: dict[str, Any]) -> set[TopicPartition]:
    """The partitions in a DescribeGroups member's (decoded) consumer-protocol assignment."""
    assignment = member["member_assignment"]
    return {TopicPartition(t["topic"], p) for t in assignment["assigned_partitions"] for p in t["partitions"]}


def by_position(records: list[Any]) -> dict[tuple[int, int], tuple[bytes, bytes, list[tuple[str, bytes]]]]:
    return {(r.partition, r.offset): (r.key, r.value, list(r.headers)) for r in records}


# -- admin ------------------------------------------------------------------------------


def test_admin_topic_lifecycle_and_configs(shared_broker: Any, topic: str) -> None:
    with admin_client(shared_broker.bootstrap) as admin:
        created = admin.create_topics(
            {
                topic: {
                    "num_partitions": 3,
                    "replication_factor": 1,
                    "configs": {"cleanup.policy": "compact", "retention.ms": "4321000"},
                }
            }
        )
        (result,) = created["topics"]
        assert result["name"] == topic
        assert result["error_code"] == 0
        assert result["num_partitions"] == 3
        assert result["replication_factor"] == 1
        # CreateTopics v5+ returns the topic's configs; the overrides are reported as topic configs.
        assert result["configs"]["cleanup.policy"]["value"] == "compact"
        assert result["configs"]["retention.ms"]["value"] == "4321000"
        admin.wait_for_topics([topic], timeout_ms=10000)

        assert topic in admin.list_topics()
        (described,) = admin.describe_topics([topic])
        assert described["error_code"] == 0
        assert sorted(p["partition_index"] for p in described["partitions"]) == [0, 1, 2]
        assert all(p["leader_id"] >= 0 for p in described["partitions"])

        # Creating it again is TOPIC_ALREADY_EXISTS.
        with pytest.raises(Errors.TopicAlreadyExistsError):
            admin.create_topics({topic: {"num_partitions": 1, "replication_factor": 1}})

        # describe_configs: the "modified" view holds exactly the overrides.
        modified = admin.describe_configs([ConfigResource("TOPIC", topic)])["topic"][topic]
        assert set(modified) == {"cleanup.policy", "retention.ms"}
        assert modified["cleanup.policy"]["value"] == "compact"
        assert modified["retention.ms"]["value"] == "4321000"
        assert modified["retention.ms"]["config_source"] == "DYNAMIC_TOPIC_CONFIG"
        # The full view also has defaults, reported as such.
        everything = admin.describe_configs([ConfigResource("TOPIC", topic)], config_filter="all")["topic"][
            topic
        ]
        assert everything["retention.ms"]["value"] == "4321000"
        assert "segment.bytes" in everything
        assert everything["segment.bytes"]["config_source"] != "DYNAMIC_TOPIC_CONFIG"
        # Asking for named keys returns just those.
        named = admin.describe_configs(
            [ConfigResource("TOPIC", topic, ["retention.ms"])], config_filter="all"
        )["topic"][topic]
        assert set(named) == {"retention.ms"}

        # IncrementalAlterConfigs: SET one key, the other override stays.
        altered = admin.alter_configs(
            [ConfigResource("TOPIC", topic, {"retention.ms": "999000"})], incremental=True
        )
        assert altered == {"topic": {topic: "OK"}}
        modified = admin.describe_configs([ConfigResource("TOPIC", topic)])["topic"][topic]
        assert modified["retention.ms"]["value"] == "999000"
        assert modified["cleanup.policy"]["value"] == "compact"

        # IncrementalAlterConfigs: DELETE reverts the key to its default.
        altered = admin.alter_configs(
            [ConfigResource("TOPIC", topic, {"retention.ms": (AlterConfigOp.DELETE, None)})], incremental=True
        )
        assert altered == {"topic": {topic: "OK"}}
        modified = admin.describe_configs([ConfigResource("TOPIC", topic)])["topic"][topic]
        assert set(modified) == {"cleanup.policy"}

        # Legacy AlterConfigs (kafka-python re-sends the other modified keys, as the API replaces all).
        altered = admin.alter_configs(
            [ConfigResource("TOPIC", topic, {"retention.ms": "555000"})], incremental=False
        )
        assert altered == {"topic": {topic: "OK"}}
        modified = admin.describe_configs([ConfigResource("TOPIC", topic)])["topic"][topic]
        assert modified["retention.ms"]["value"] == "555000"
        assert modified["cleanup.policy"]["value"] == "compact"

        # An invalid value is refused and changes nothing.
        refused = admin.alter_configs(
            [ConfigResource("TOPIC", topic, {"retention.ms": "not-a-number"})], incremental=True
        )
        assert refused["topic"][topic] != "OK"
        modified = admin.describe_configs([ConfigResource("TOPIC", topic)])["topic"][topic]
        assert modified["retention.ms"]["value"] == "555000"

        # CreatePartitions: 3 -> 5; shrinking is INVALID_PARTITIONS.
        admin.create_partitions({topic: 5})
        wait_until(
            lambda: len(admin.describe_topics([topic])[0]["partitions"]) == 5,
            timeout=10,
            message="5 partitions in metadata",
        )
        with pytest.raises(Errors.InvalidPartitionsError):
            admin.create_partitions({topic: 2})

        # DeleteTopics: gone from the listing; deleting again is UNKNOWN_TOPIC_OR_PARTITION.
        deleted = admin.delete_topics([topic])
        assert [(t["name"], t["error_code"]) for t in deleted["topics"]] == [(topic, 0)]
        wait_until(lambda: topic not in admin.list_topics(), timeout=10, message="topic deleted")
        with pytest.raises(Errors.UnknownTopicOrPartitionError):
            admin.delete_topics([topic])


def test_admin_create_topic_with_invalid_config_is_refused(shared_broker: Any, topic: str) -> None:
    with admin_client(shared_broker.bootstrap) as admin:
        with pytest.raises(Errors.InvalidConfigurationError):
            admin.create_topics(
                {
                    topic: {
                        "num_partitions": 1,
                        "replication_factor": 1,
                        "configs": {"cleanup.policy": "shred"},
                    }
                }
            )
        assert topic not in admin.list_topics()


def test_admin_consumer_group_describe_list_offsets_delete(
    shared_broker: Any, topic: str, group: str
) -> None:
    bootstrap = shared_broker.bootstrap
    create_topic(bootstrap, topic, 2)
    with producer(bootstrap) as p:
        sent = send_keyed(p, topic, 20)
    per_partition: dict[int, int] = defaultdict(int)
    for s in sent:
        per_partition[s["partition"]] += 1

    all_tps = {TopicPartition(topic, 0), TopicPartition(topic, 1)}
    with admin_client(bootstrap) as admin, consumer(bootstrap, topic, group_id=group) as c:
        records = poll_until(c, 20)
        assert len(records) == 20
        c.commit()

        # While the member is in the group: Stable, one member holding both partitions.
        desc = admin.describe_groups([group])[group]
        assert desc["error"] is None
        assert desc["group_state"] == "Stable"
        assert desc["protocol_type"] == "consumer"
        (member,) = desc["members"]
        assert assigned_to(member) == all_tps
        assert member["member_metadata"]["topics"] == [topic]
        listed = {g["group_id"]: g for g in admin.list_groups()}
        assert listed[group]["protocol_type"] == "consumer"

        # A group with members cannot be deleted: NON_EMPTY_GROUP.
        assert admin.delete_groups([group]) == {group: "NonEmptyGroupError"}

        offsets = admin.list_group_offsets({group: None})[group]
        assert {tp: om.offset for tp, om in offsets.items()} == {
            TopicPartition(topic, part): n for part, n in per_partition.items()
        }
        only_p0 = admin.list_group_offsets({group: [TopicPartition(topic, 0)]})[group]
        assert {tp: om.offset for tp, om in only_p0.items()} == {TopicPartition(topic, 0): per_partition[0]}

    with admin_client(bootstrap) as admin:
        # The consumer left: the group is Empty but keeps its offsets.
        wait_until(
            lambda: admin.describe_groups([group])[group]["group_state"] == "Empty",
            timeout=10,
            message="group Empty after the member left",
        )
        assert admin.describe_groups([group])[group]["members"] == []
        offsets = admin.list_group_offsets({group: None})[group]
        assert sum(om.offset for om in offsets.values()) == 20

        assert admin.delete_groups([group]) == {group: "OK"}
        assert group not in {g["group_id"] for g in admin.list_groups()}
        # Deleted: no offsets left; deleting again is GROUP_ID_NOT_FOUND.
        assert admin.list_group_offsets({group: None})[group] == {}
        assert admin.delete_groups([group]) == {group: "GroupIdNotFoundError"}
        dead = admin.describe_groups([group])[group]
        assert dead["group_state"] == "Dead"
        assert dead["members"] == []


def test_admin_alter_group_offsets_and_list_by_state(shared_broker: Any, topic: str, group: str) -> None:
    bootstrap = shared_broker.bootstrap
    create_topic(bootstrap, topic, 2)
    tp0, tp1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    with admin_client(bootstrap) as admin:
        # OffsetCommit from outside the group (generation -1) creates an Empty group with those offsets.
        result = admin.alter_group_offsets(
            group, {tp0: OffsetAndMetadata(7, "seven", -1), tp1: OffsetAndMetadata(3, "", -1)}
        )
        assert result == {tp0: Errors.NoError, tp1: Errors.NoError}
        offsets = admin.list_group_offsets({group: None})[group]
        assert {tp: (om.offset, om.metadata) for tp, om in offsets.items()} == {
            tp0: (7, "seven"),
            tp1: (3, ""),
        }
        # ListGroups v4 state filter.
        assert group in {g["group_id"] for g in admin.list_groups(states_filter=["Empty"])}
        assert group not in {g["group_id"] for g in admin.list_groups(states_filter=["Stable"])}

    # A consumer of that group starts where the offsets were set.
    with producer(bootstrap) as p:
        for i in range(10):
            p.send(topic, partition=0, value=f"p0-{i}".encode())
            p.send(topic, partition=1, value=f"p1-{i}".encode())
        p.flush(10)
    with consumer(bootstrap, topic, group_id=group) as c:
        records = poll_until(c, 10)
        assert sorted((r.partition, r.offset) for r in records) == (
            [(0, o) for o in range(7, 10)] + [(1, o) for o in range(3, 10)]
        )


def test_delete_records_moves_the_log_start(shared_broker: Any, topic: str) -> None:
    bootstrap = shared_broker.bootstrap
    create_topic(bootstrap, topic, 1)
    tp = TopicPartition(topic, 0)
    with producer(bootstrap, linger_ms=50) as p:
        for i in range(10):
            p.send(topic, partition=0, value=str(i).encode())
        p.flush(10)
    with admin_client(bootstrap) as admin:
        result = admin.delete_records({tp: 4})
        assert result[tp]["low_watermark"] == 4
        assert result[tp]["error_code"] == 0
        # Beyond the high watermark: OFFSET_OUT_OF_RANGE.
        with pytest.raises(Errors.OffsetOutOfRangeError):
            admin.delete_records({tp: 11})
    with consumer(bootstrap) as c:
        assert c.beginning_offsets([tp]) == {tp: 4}
        assert c.end_offsets([tp]) == {tp: 10}
        c.assign([tp])
        c.seek_to_beginning(tp)
        assert [r.value for r in poll_until(c, 6)] == [str(i).encode() for i in range(4, 10)]


# -- producer and consumer ----------------------------------------------------------------


def test_idempotent_producer_group_consume_commit_and_resume(
    shared_broker: Any, topic: str, group: str
) -> None:
    bootstrap = shared_broker.bootstrap
    create_topic(bootstrap, topic, 3)
    tps = {TopicPartition(topic, p) for p in range(3)}

    with producer(bootstrap) as p:
        # kafka-python 3 enables idempotence by default (needs InitProducerId and acks=all).
        assert p.config["enable_idempotence"] is True
        sent = send_keyed(p, topic, 42)

    # Offsets per partition are dense from 0, records with one key share one partition.
    offsets_by_partition: dict[int, list[int]] = defaultdict(list)
    partition_of_key: dict[bytes, set[int]] = defaultdict(set)
    for s in sent:
        offsets_by_partition[s["partition"]].append(s["offset"])
        partition_of_key[s["key"]].add(s["partition"])
    for offs in offsets_by_partition.values():
        assert offs == list(range(len(offs)))
    assert all(len(parts) == 1 for parts in partition_of_key.values())
    assert len(offsets_by_partition) > 1, "7 distinct keys should spread over more than one partition"

    expected = {(s["partition"], s["offset"]): (s["key"], s["value"], s["headers"]) for s in sent}
    with consumer(bootstrap, topic, group_id=group) as c:
        records = poll_until(c, len(sent))
        assert by_position(records) == expected
        assert len(records) == len(sent)
        assert {r.topic for r in records} == {topic}
        # Per key, values come back in production order.
        per_key: dict[bytes, list[bytes]] = defaultdict(list)
        for r in sorted(records, key=lambda r: (r.partition, r.offset)):
            per_key[r.key].append(r.value)
        for key, values in per_key.items():
            assert values == [s["value"] for s in sent if s["key"] == key]
        assert c.assignment() == tps
        c.commit()
        for tp in tps:
            assert c.committed(tp) == len(offsets_by_partition[tp.partition])

    # A new member of the same group resumes at the committed offsets.
    with consumer(bootstrap, topic, group_id=group) as c2:
        wait_for_assignment(c2, tps)
        for tp in tps:
            assert c2.position(tp) == len(offsets_by_partition[tp.partition])
        assert poll_for(c2, 1.0) == []
        with producer(bootstrap) as p:
            fresh = send_keyed(p, topic, 9, start=1000)
        records = poll_until(c2, len(fresh))
        assert by_position(records) == {
            (s["partition"], s["offset"]): (s["key"], s["value"], s["headers"]) for s in fresh
        }
        assert all(r.offset >= len(offsets_by_partition[r.partition]) for r in records)
        assert poll_for(c2, 0.5) == []
        c2.commit()

    # Auto-commit-free close kept the explicit commit: a third member gets nothing at all.
    with consumer(bootstrap, topic, group_id=group, consumer_timeout_ms=1500) as c3:
        assert list(c3) == []


def test_produce_errors_come_back_as_kafka_error_codes(shared_broker: Any, topic: str) -> None:
    bootstrap = shared_broker.bootstrap
    create_topic(bootstrap, topic, 1, {"cleanup.policy": "compact", "max.message.bytes": "2000"})
    with producer(bootstrap, retries=0, max_request_size=1_000_000) as p:
        # A compacted topic refuses records without a key: INVALID_RECORD.
        with pytest.raises(Errors.InvalidRecordError):
            p.send(topic, value=b"no key").get(timeout=10)
        # A batch over the topic's max.message.bytes: MESSAGE_TOO_LARGE.
        with pytest.raises(Errors.MessageSizeTooLargeError):
            p.send(topic, key=b"k", value=b"x" * 5000).get(timeout=10)
        md = p.send(topic, key=b"k", value=b"fits").get(timeout=10)
        assert (md.partition, md.offset) == (0, 0)
    with consumer(bootstrap) as c:
        c.assign([TopicPartition(topic, 0)])
        assert [(r.offset, r.key, r.value) for r in poll_until(c, 1)] == [(0, b"k", b"fits")]
        assert poll_for(c, 0.3) == []


def test_two_members_split_the_partitions(shared_broker: Any, topic: str, group: str) -> None:
    bootstrap = shared_broker.bootstrap
    create_topic(bootstrap, topic, 4)
    all_tps = {TopicPartition(topic, p) for p in range(4)}
    assignments: dict[str, set[TopicPartition]] = {}
    errors: list[BaseException] = []
    stop = threading.Event()
    lock = threading.Lock()

    def member(name: str) -> None:
        try:
            with consumer(bootstrap, topic, group_id=group, client_id=name) as c:
                while not stop.is_set():
                    c.poll(timeout_ms=100)
                    with lock:
                        assignments[name] = set(c.assignment())
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    def split() -> bool:
        with lock:
            a, b = assignments.get("m1", set()), assignments.get("m2", set())
        return bool(a) and bool(b) and not (a & b) and (a | b) == all_tps

    threads = [threading.Thread(target=member, args=(name,), daemon=True) for name in ("m1", "m2")]
    threads[0].start()
    try:
        wait_until(lambda: assignments.get("m1") == all_tps, timeout=15, message="first member owns all")
        threads[1].start()
        wait_until(split, timeout=20, message="two members splitting 4 partitions")
        with admin_client(bootstrap) as admin:
            desc = admin.describe_groups([group])[group]
            assert desc["group_state"] == "Stable"
            assert len(desc["members"]) == 2
            described = [assigned_to(m) for m in desc["members"]]
            assert all(described)
            assert described[0] | described[1] == all_tps
            assert not described[0] & described[1]
    finally:
        stop.set()
        for t in threads:
            if t.ident is not None:  # the second member starts only once the first owns all
                t.join(15)
    assert not errors, errors
    assert not any(t.is_alive() for t in threads)


def test_offset_lookups_and_seeks(shared_broker: Any, topic: str) -> None:
    bootstrap = shared_broker.bootstrap
    create_topic(bootstrap, topic, 2)
    tp0, tp1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    base = (int(time.time()) - 3600) * 1000  # an hour ago, well inside retention
    with producer(bootstrap) as p:
        futs = [
            p.send(topic, partition=0, key=b"k", value=f"p0-{i}".encode(), timestamp_ms=base + i * 1000)
            for i in range(10)
        ]
        futs += [
            p.send(topic, partition=1, value=f"p1-{i}".encode(), timestamp_ms=base + i * 1000)
            for i in range(5)
        ]
        p.flush(10)
        mds = [f.get(10) for f in futs]
    assert [m.offset for m in mds[:10]] == list(range(10))
    assert [m.offset for m in mds[10:]] == list(range(5))
    assert [m.timestamp for m in mds[:10]] == [base + i * 1000 for i in range(10)]

    with consumer(bootstrap) as c:
        assert c.partitions_for_topic(topic) == {0, 1}
        assert c.beginning_offsets([tp0, tp1]) == {tp0: 0, tp1: 0}
        assert c.end_offsets([tp0, tp1]) == {tp0: 10, tp1: 5}

        found = c.offsets_for_times({tp0: base + 3500, tp1: base})
        assert found[tp0].offset == 4
        assert found[tp0].timestamp == base + 4000
        assert found[tp1].offset == 0
        assert found[tp1].timestamp == base
        # Exact hit, and a time after the last record (no offset: None).
        found = c.offsets_for_times({tp0: base + 9000, tp1: base + 60_000})
        assert found[tp0].offset == 9
        assert found[tp1] is None

        c.assign([tp0, tp1])
        c.seek_to_end(tp0, tp1)
        assert c.position(tp0) == 10
        assert c.position(tp1) == 5
        assert poll_for(c, 0.5) == []

        c.seek_to_beginning(tp0)
        assert c.position(tp0) == 0
        records = poll_until(c, 10)
        assert [(r.partition, r.offset, r.value) for r in records] == [
            (0, i, f"p0-{i}".encode()) for i in range(10)
        ]
        assert [r.timestamp for r in records] == [base + i * 1000 for i in range(10)]
        assert all(r.timestamp_type == 0 for r in records)  # CreateTime

        c.seek(tp1, 3)
        records = poll_until(c, 2)
        assert [(r.partition, r.offset, r.value) for r in records] == [(1, 3, b"p1-3"), (1, 4, b"p1-4")]


def test_offset_for_times_on_a_new_consumer_seeks_there(shared_broker: Any, topic: str) -> None:
    bootstrap = shared_broker.bootstrap
    create_topic(bootstrap, topic, 1)
    tp = TopicPartition(topic, 0)
    base = (int(time.time()) - 600) * 1000
    with producer(bootstrap) as p:
        for i in range(6):
            p.send(topic, value=str(i).encode(), timestamp_ms=base + i * 10)
        p.flush(10)
    with consumer(bootstrap) as c:
        c.assign([tp])
        found = c.offsets_for_times({tp: base + 25})
        c.seek(tp, found[tp].offset)
        records = poll_until(c, 3)
        assert [r.value for r in records] == [b"3", b"4", b"5"]


# -- older protocol versions -----------------------------------------------------------------------

# kafka-python's ``api_version`` pins the protocol versions it uses to those of an older Kafka
# release. Every pin below stays inside the ranges the broker advertises (Produce >= 3, Fetch >= 4,
# record batch v2), so each must round trip exactly like the negotiated default.
PINNED = [(0, 11), (1, 0), (2, 0), (2, 1), (2, 4), (2, 6)]


@pytest.mark.parametrize("api_version", PINNED, ids=lambda v: ".".join(map(str, v)))
def test_pinned_protocol_versions_round_trip(shared_broker: Any, api_version: tuple[int, int]) -> None:
    bootstrap = shared_broker.bootstrap
    topic, group = unique("kp-pinned"), unique("kp-pinned")
    create_topic(bootstrap, topic, 2)
    tps = [TopicPartition(topic, 0), TopicPartition(topic, 1)]
    with producer(bootstrap, api_version=api_version) as p:
        sent = send_keyed(p, topic, 12)
    expected = {(s["partition"], s["offset"]): (s["key"], s["value"], s["headers"]) for s in sent}
    ends = {tp: sum(1 for s in sent if s["partition"] == tp.partition) for tp in tps}
    with consumer(bootstrap, topic, group_id=group, api_version=api_version) as c:
        records = poll_until(c, len(sent), timeout=8)
        assert by_position(records) == expected
        c.commit()
        assert {tp: c.committed(tp) or 0 for tp in tps} == ends
        assert c.end_offsets(tps) == ends
        assert c.beginning_offsets(tps) == {tp: 0 for tp in tps}
        found = c.offsets_for_times({tp: 0 for tp in tps})
        assert {tp: (f.offset if f else None) for tp, f in found.items()} == {
            tp: (0 if n else None) for tp, n in ends.items()
        }


@pytest.mark.parametrize("api_version", [(1, 1), (2, 0), (2, 3)], ids=lambda v: ".".join(map(str, v)))
def test_pinned_describe_configs(shared_broker: Any, topic: str, api_version: tuple[int, int]) -> None:
    """DescribeConfigs v1 (Kafka 1.1) and v2 (2.0+) before KIP-569's documentation field (v3)."""
    bootstrap = shared_broker.bootstrap
    create_topic(bootstrap, topic, 1, {"retention.ms": "86400000"})
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, api_version=api_version, request_timeout_ms=10000)
    try:
        configs = admin.describe_configs([ConfigResource("TOPIC", topic)], config_filter="all")["topic"][
            topic
        ]
        assert configs["retention.ms"]["value"] == "86400000"
        assert configs["retention.ms"]["config_source"] == "DYNAMIC_TOPIC_CONFIG"
        assert configs["cleanup.policy"]["value"] == "delete"
        assert configs["cleanup.policy"]["config_source"] == "DEFAULT_CONFIG"
    finally:
        admin.close()


# -- compression ----------------------------------------------------------------------------

# kafka-python 3 compresses with: gzip (stdlib), snappy (python-snappy), lz4 (lz4), zstd (zstandard).
# Only codecs whose library the venv has are exercised.
_CODEC_SUPPORT = {
    "gzip": kafka.codec.has_gzip,
    "snappy": kafka.codec.has_snappy,
    "lz4": kafka.codec.has_lz4,
    "zstd": kafka.codec.has_zstd,
}
CODECS = [name for name, has in _CODEC_SUPPORT.items() if has()]


def test_gzip_is_always_available() -> None:
    assert "gzip" in CODECS


@pytest.mark.parametrize("codec", CODECS)
def test_compressed_producer_round_trip(shared_broker: Any, codec: str) -> None:
    bootstrap = shared_broker.bootstrap
    topic = unique(f"kp-{codec}")
    create_topic(bootstrap, topic, 2)
    values = [(f"record {i} " * (1 + i % 20)).encode() for i in range(200)]
    values.append(b"x" * 300_000)  # a large, very compressible value in its own batch
    with producer(bootstrap, compression_type=codec, linger_ms=20, batch_size=64 * 1024) as p:
        futs = [
            p.send(topic, key=f"k{i % 5}".encode(), value=v, headers=[("i", str(i).encode())])
            for i, v in enumerate(values)
        ]
        p.flush(10)
        mds = [f.get(10) for f in futs]
    expected = {
        (md.partition, md.offset): (f"k{i % 5}".encode(), v, [("i", str(i).encode())])
        for i, (md, v) in enumerate(zip(mds, values, strict=True))
    }
    assert len(expected) == len(values)

    with consumer(bootstrap, max_partition_fetch_bytes=2 * 1024 * 1024) as c:
        c.assign([TopicPartition(topic, 0), TopicPartition(topic, 1)])
        c.seek_to_beginning()
        records = poll_until(c, len(values))
        assert by_position(records) == expected
        end = c.end_offsets([TopicPartition(topic, 0), TopicPartition(topic, 1)])
        assert sum(end.values()) == len(values)
