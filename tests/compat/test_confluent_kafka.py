"""confluent-kafka (librdkafka 2.x) against the broker: producers, a rebalancing group, AdminClient."""

from __future__ import annotations

import time
from collections import Counter

import pytest
from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    ConsumerGroupState,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
    OffsetSpec,
)

from broker.server import EmbeddedBroker
from tests.support import unique, wait_until


def admin(eb: EmbeddedBroker) -> AdminClient:
    return AdminClient({"bootstrap.servers": eb.bootstrap})


def create(eb: EmbeddedBroker, name: str, partitions: int = 1, config: dict[str, str] | None = None) -> None:
    a = admin(eb)  # the client must outlive its futures
    for f in a.create_topics([NewTopic(name, partitions, 1, config=config or {})]).values():
        f.result(15)


def produce_all(
    eb: EmbeddedBroker, topic: str, items: list[tuple[bytes, bytes]], **conf: object
) -> list[tuple[int, int]]:
    """Produce and return (partition, offset) per record in order, failing on any delivery error."""
    p = Producer({"bootstrap.servers": eb.bootstrap, "linger.ms": 2, **conf})
    results: list[tuple[int, int] | None] = [None] * len(items)
    errors: list[KafkaError] = []

    def cb(i: int):  # type: ignore[no-untyped-def]
        def done(err, msg):  # type: ignore[no-untyped-def]
            if err is not None:
                errors.append(err)
            else:
                results[i] = (msg.partition(), msg.offset())

        return done

    for i, (k, v) in enumerate(items):
        p.produce(topic, key=k, value=v, on_delivery=cb(i))
    assert p.flush(30) == 0
    assert not errors, errors
    assert all(r is not None for r in results)
    return results  # type: ignore[return-value]


class TestProducer:
    def test_plain_producer_offsets_are_consecutive_per_partition(
        self, shared_broker: EmbeddedBroker
    ) -> None:
        topic = unique()
        create(shared_broker, topic, 3)
        items = [(f"k{i}".encode(), f"v{i}".encode()) for i in range(300)]
        acks = produce_all(shared_broker, topic, items, acks="all")
        per_partition: dict[int, list[int]] = {}
        for partition, offset in acks:
            per_partition.setdefault(partition, []).append(offset)
        assert set(per_partition) == {0, 1, 2}
        for offsets in per_partition.values():
            assert offsets == list(range(len(offsets)))
        # The same key always lands on the same partition (librdkafka's murmur2-compatible partitioner).
        assert len({acks[i][0] for i in range(0, 300, 3)}) > 1

    @pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
    def test_compressed_round_trip(self, shared_broker: EmbeddedBroker, codec: str) -> None:
        topic = unique()
        create(shared_broker, topic)
        items = [(f"k{i}".encode(), (f"value-{i}-" * 20).encode()) for i in range(500)]
        produce_all(shared_broker, topic, items, **{"compression.type": codec, "linger.ms": 20})
        c = Consumer(
            {
                "bootstrap.servers": shared_broker.bootstrap,
                "group.id": unique("g"),
                "enable.auto.commit": False,
            }
        )
        c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        got = []
        deadline = time.time() + 20
        while len(got) < len(items) and time.time() < deadline:
            m = c.poll(0.5)
            if m is not None:
                assert m.error() is None, m.error()
                got.append((m.key(), m.value(), m.offset()))
        c.close()
        assert [(k, v) for k, v, _ in got] == items
        assert [o for _, _, o in got] == list(range(len(items)))

    def test_idempotent_producer(self, shared_broker: EmbeddedBroker) -> None:
        topic = unique()
        create(shared_broker, topic, 2)
        items = [(f"k{i % 7}".encode(), f"v{i}".encode()) for i in range(2000)]
        acks = produce_all(
            shared_broker,
            topic,
            items,
            **{"enable.idempotence": True, "acks": "all", "max.in.flight.requests.per.connection": 5},
        )
        assert len(set(acks)) == len(items)  # no offset handed out twice
        # Per key, offsets grow in produce order (ordering is kept with idempotence and 5 in flight).
        by_key: dict[bytes, list[int]] = {}
        for (k, _), (_p, off) in zip(items, acks, strict=True):
            by_key.setdefault(k, []).append(off)
        for offsets in by_key.values():
            assert offsets == sorted(offsets)

    def test_message_too_large_is_refused(self, shared_broker: EmbeddedBroker) -> None:
        topic = unique()
        create(shared_broker, topic, 1, {"max.message.bytes": "2000"})
        p = Producer(
            {
                "bootstrap.servers": shared_broker.bootstrap,
                "message.max.bytes": 100000,
                "compression.type": "none",
            }
        )
        errors = []
        p.produce(topic, value=b"x" * 5000, on_delivery=lambda err, msg: errors.append(err))
        p.flush(15)
        assert len(errors) == 1 and errors[0] is not None
        assert errors[0].code() == KafkaError.MSG_SIZE_TOO_LARGE


class TestConsumerGroup:
    def test_three_members_rebalance_and_resume_from_committed_offsets(
        self, shared_broker: EmbeddedBroker
    ) -> None:
        topic, group = unique(), unique("g")
        create(shared_broker, topic, 6)
        produce_all(shared_broker, topic, [(f"k{i}".encode(), f"v{i}".encode()) for i in range(600)])

        conf = {
            "bootstrap.servers": shared_broker.bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": 3000,
            "heartbeat.interval.ms": 300,
            "max.poll.interval.ms": 10000,
        }
        members: list[Consumer] = []
        assigned: dict[int, set[int]] = {}
        seen: Counter[tuple[int, int]] = Counter()

        def make(i: int) -> Consumer:
            c = Consumer({**conf, "client.id": f"member-{i}"})

            def on_assign(consumer, partitions):  # type: ignore[no-untyped-def]
                assigned[i] = {tp.partition for tp in partitions}

            def on_revoke(consumer, partitions):  # type: ignore[no-untyped-def]
                commit(consumer)
                assigned[i] = set()

            c.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke)
            return c

        def poll_all(until, timeout: float = 30.0) -> None:  # type: ignore[no-untyped-def]
            deadline = time.time() + timeout
            while time.time() < deadline:
                for i in sorted(live_ids):
                    m = members[i].poll(0.05)
                    if m is not None and m.error() is None:
                        seen[(m.partition(), m.offset())] += 1
                if until():
                    return
            raise AssertionError(f"group did not settle: assignments {assigned}")

        def balanced(n: int) -> bool:
            live = [assigned.get(i, set()) for i in range(len(members)) if i in live_ids]
            union = set().union(*live) if live else set()
            return (
                len(live) == n
                and union == set(range(6))
                and sum(len(a) for a in live) == 6
                and all(len(a) == 6 // n for a in live)
            )

        live_ids: set[int] = set()
        members.append(make(0))
        live_ids.add(0)
        poll_all(lambda: balanced(1))
        for i in (1, 2):
            members.append(make(i))
            live_ids.add(i)
        poll_all(lambda: balanced(3) and len(seen) >= 600)
        assert len(seen) == 600  # every record consumed

        for c in members:
            commit(c)
        # A member leaves: the other two take over its partitions.
        members[2].close()
        live_ids.discard(2)
        poll_all(lambda: balanced(2))

        for i in (0, 1):
            commit(members[i])
            members[i].close()
        live_ids.clear()

        # Committed offsets are where the group resumes: nothing old, only new records.
        committed = Consumer(conf).committed([TopicPartition(topic, p) for p in range(6)], timeout=10)
        assert sum(tp.offset for tp in committed) == 600
        produce_all(shared_broker, topic, [(b"late", b"after-restart")])
        c = Consumer(conf)
        c.subscribe([topic])
        got = []
        deadline = time.time() + 20
        while time.time() < deadline and not got:
            m = c.poll(0.2)
            if m is not None and m.error() is None:
                got.append(m.value())
        time.sleep(0.5)
        while (m := c.poll(0.2)) is not None:
            if m.error() is None:
                got.append(m.value())
        c.close()
        assert got == [b"after-restart"]

    def test_static_member_restart_keeps_assignment_without_rebalance(
        self, shared_broker: EmbeddedBroker
    ) -> None:
        topic, group = unique(), unique("g")
        create(shared_broker, topic, 2)
        conf = {
            "bootstrap.servers": shared_broker.bootstrap,
            "group.id": group,
            "session.timeout.ms": 6000,
            "group.instance.id": "static-1",
            "auto.offset.reset": "earliest",
        }
        c = Consumer(conf)
        c.subscribe([topic])
        wait_until(lambda: (c.poll(0.1), c.assignment())[1] != [], 20, message="assignment")
        gen_before = _describe(shared_broker, group).coordinator  # group exists
        assert gen_before is not None
        c.close()  # static members do not send LeaveGroup
        c2 = Consumer(conf)
        c2.subscribe([topic])
        wait_until(lambda: (c2.poll(0.1), c2.assignment())[1] != [], 20, message="assignment after restart")
        desc = _describe(shared_broker, group)
        assert [m.group_instance_id for m in desc.members] == ["static-1"]
        assert desc.state == ConsumerGroupState.STABLE
        c2.close()


def commit(c: Consumer) -> None:
    """Commit what was consumed; "nothing new to commit" is not a failure."""
    try:
        c.commit(asynchronous=False)
    except KafkaException as exc:
        if exc.args[0].code() != KafkaError._NO_OFFSET:
            raise


def _describe(eb: EmbeddedBroker, group: str):  # type: ignore[no-untyped-def]
    a = admin(eb)
    return a.describe_consumer_groups([group])[group].result(10)


class TestAdminClient:
    def test_topics_partitions_and_configs(self, shared_broker: EmbeddedBroker) -> None:
        a = admin(shared_broker)
        name = unique()
        fs = a.create_topics(
            [NewTopic(name, 2, 1, config={"cleanup.policy": "compact", "retention.ms": "12345"})]
        )
        fs[name].result(10)
        with pytest.raises(KafkaException) as exists:
            a.create_topics([NewTopic(name, 1, 1)])[name].result(10)
        assert exists.value.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS
        with pytest.raises(KafkaException) as rf:
            next(iter(a.create_topics([NewTopic(unique(), 1, 3)]).values())).result(10)
        assert rf.value.args[0].code() == KafkaError.INVALID_REPLICATION_FACTOR
        with pytest.raises(KafkaException) as bad_name:
            next(iter(a.create_topics([NewTopic("bad/name", 1, 1)]).values())).result(10)
        assert bad_name.value.args[0].code() == KafkaError.TOPIC_EXCEPTION
        with pytest.raises(KafkaException) as bad_cfg:
            bad = NewTopic(unique(), 1, 1, config={"no.such.key": "1"})
            next(iter(a.create_topics([bad]).values())).result(10)
        assert bad_cfg.value.args[0].code() == KafkaError.INVALID_CONFIG

        md = a.list_topics(timeout=10)
        assert len(md.topics[name].partitions) == 2
        a.create_partitions([NewPartitions(name, 5)])[name].result(10)
        wait_until(
            lambda: len(a.list_topics(timeout=10).topics[name].partitions) == 5, 10, message="5 partitions"
        )
        with pytest.raises(KafkaException) as shrink:
            a.create_partitions([NewPartitions(name, 3)])[name].result(10)
        assert shrink.value.args[0].code() == KafkaError.INVALID_PARTITIONS

        res = ConfigResource(ConfigResource.Type.TOPIC, name)
        cfg = a.describe_configs([res])[res].result(10)
        assert cfg["cleanup.policy"].value == "compact"
        assert cfg["cleanup.policy"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
        assert cfg["retention.ms"].value == "12345"
        assert cfg["segment.bytes"].value == "1073741824"
        assert cfg["segment.bytes"].source == ConfigSource.DEFAULT_CONFIG.value
        assert cfg["segment.bytes"].is_default

        a.incremental_alter_configs(
            [
                ConfigResource(
                    ConfigResource.Type.TOPIC,
                    name,
                    incremental_configs=[
                        ConfigEntry("retention.ms", "999", incremental_operation=AlterConfigOpType.SET),
                        ConfigEntry(
                            "cleanup.policy", "delete", incremental_operation=AlterConfigOpType.APPEND
                        ),
                    ],
                )
            ]
        )[res].result(10)
        cfg = a.describe_configs([res])[res].result(10)
        assert cfg["retention.ms"].value == "999"
        assert set(cfg["cleanup.policy"].value.split(",")) == {"compact", "delete"}

        with pytest.warns(DeprecationWarning):  # AlterConfigs is what older tools still send
            fut = a.alter_configs(
                [ConfigResource(ConfigResource.Type.TOPIC, name, set_config={"retention.bytes": "4096"})]
            )
        fut[res].result(10)
        cfg = a.describe_configs([res])[res].result(10)
        assert cfg["retention.bytes"].value == "4096"
        assert cfg["retention.ms"].value != "999"  # AlterConfigs replaces the whole set of overrides

        a.delete_topics([name])[name].result(10)
        wait_until(lambda: name not in a.list_topics(timeout=10).topics, 10, message="topic gone")
        with pytest.raises(KafkaException) as unknown:
            a.delete_topics([name])[name].result(10)
        assert unknown.value.args[0].code() == KafkaError.UNKNOWN_TOPIC_OR_PART

    def test_groups_and_offsets(self, shared_broker: EmbeddedBroker) -> None:
        a = admin(shared_broker)
        topic, group = unique(), unique("g")
        create(shared_broker, topic, 2)
        produce_all(shared_broker, topic, [(b"k", f"{i}".encode()) for i in range(10)])
        c = Consumer(
            {
                "bootstrap.servers": shared_broker.bootstrap,
                "group.id": group,
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
            }
        )
        c.subscribe([topic])
        n = 0
        deadline = time.time() + 20
        while n < 10 and time.time() < deadline:
            m = c.poll(0.2)
            if m is not None and m.error() is None:
                n += 1
        c.commit(asynchronous=False)
        listed = a.list_consumer_groups().result(10)
        assert group in {g.group_id for g in listed.valid}
        desc = a.describe_consumer_groups([group])[group].result(10)
        assert desc.state == ConsumerGroupState.STABLE and len(desc.members) == 1
        assert desc.partition_assignor == "range"
        with pytest.raises(KafkaException) as busy:
            a.delete_consumer_groups([group])[group].result(10)
        assert busy.value.args[0].code() == KafkaError.NON_EMPTY_GROUP
        c.close()

        from confluent_kafka import ConsumerGroupTopicPartitions

        offsets = a.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(10)
        assert sum(tp.offset for tp in offsets.topic_partitions if tp.topic == topic) == 10

        desc = a.describe_consumer_groups([group])[group].result(10)
        assert desc.state == ConsumerGroupState.EMPTY
        a.delete_consumer_groups([group])[group].result(10)
        assert group not in {g.group_id for g in a.list_consumer_groups().result(10).valid}

        lo = a.list_offsets(
            {TopicPartition(topic, 0): OffsetSpec.earliest(), TopicPartition(topic, 1): OffsetSpec.latest()}
        )
        earliest = lo[TopicPartition(topic, 0)].result(10)
        latest = lo[TopicPartition(topic, 1)].result(10)
        assert earliest.offset == 0
        # All 10 records share key b"k", so they are all in one partition.
        end = {
            p: a.list_offsets({TopicPartition(topic, p): OffsetSpec.latest()})[TopicPartition(topic, p)]
            .result(10)
            .offset
            for p in (0, 1)
        }
        assert sorted(end.values()) == [0, 10]
        assert latest.offset == end[1]

    def test_delete_records_moves_log_start(self, shared_broker: EmbeddedBroker) -> None:
        a = admin(shared_broker)
        topic = unique()
        create(shared_broker, topic)
        produce_all(shared_broker, topic, [(None, f"{i}".encode()) for i in range(20)])  # type: ignore[misc]
        res = a.delete_records([TopicPartition(topic, 0, 7)])
        low = next(iter(res.values())).result(10)
        assert low.low_watermark == 7
        earliest = a.list_offsets({TopicPartition(topic, 0): OffsetSpec.earliest()})[TopicPartition(topic, 0)]
        assert earliest.result(10).offset == 7
        c = Consumer(
            {
                "bootstrap.servers": shared_broker.bootstrap,
                "group.id": unique("g"),
                "auto.offset.reset": "earliest",
            }
        )
        c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        first = None
        deadline = time.time() + 15
        while first is None and time.time() < deadline:
            m = c.poll(0.2)
            if m is not None and m.error() is None:
                first = m
        c.close()
        assert first is not None and first.offset() == 7 and first.value() == b"7"

    def test_describe_cluster(self, shared_broker: EmbeddedBroker) -> None:
        a = admin(shared_broker)
        desc = a.describe_cluster().result(10)
        assert desc.cluster_id and len(desc.nodes) == 1
        assert f"{desc.nodes[0].host}:{desc.nodes[0].port}" == shared_broker.bootstrap
        assert desc.controller.id == desc.nodes[0].id
