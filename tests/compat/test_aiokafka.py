"""aiokafka (0.14) against the real broker: admin, idempotent producer, consumer groups, codecs.

No pytest-asyncio: every test runs its coroutine with ``asyncio.run`` under an overall timeout.
Broker warnings and errors (the ``broker.*`` loggers) appear in pytest's captured log on failure.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import aiokafka.codec
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewPartitions, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.coordinator.protocol import ConsumerProtocolMemberAssignment
from kafka.admin import ConfigResource as KPConfigResource
from kafka.admin import KafkaAdminClient

from tests.support import unique

T = TypeVar("T")

SESSION_MS = 6000
HEARTBEAT_MS = 500
TEST_TIMEOUT_S = 45


def run(coro: Coroutine[Any, Any, T], timeout: float = TEST_TIMEOUT_S) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(bounded())


@asynccontextmanager
async def admin_client(bootstrap: str) -> AsyncIterator[AIOKafkaAdminClient]:
    admin = AIOKafkaAdminClient(
        bootstrap_servers=bootstrap, request_timeout_ms=10000, client_id=unique("aio-admin")
    )
    await admin.start()
    try:
        yield admin
    finally:
        await admin.close()


@asynccontextmanager
async def producer(bootstrap: str, **config: Any) -> AsyncIterator[AIOKafkaProducer]:
    config.setdefault("acks", "all")
    config.setdefault("enable_idempotence", True)
    p = AIOKafkaProducer(bootstrap_servers=bootstrap, request_timeout_ms=10000, **config)
    await p.start()
    try:
        yield p
    finally:
        await p.stop()


@asynccontextmanager
async def consumer(bootstrap: str, *topics: str, **config: Any) -> AsyncIterator[AIOKafkaConsumer]:
    config.setdefault("auto_offset_reset", "earliest")
    config.setdefault("enable_auto_commit", False)
    if config.get("group_id"):
        config.setdefault("session_timeout_ms", SESSION_MS)
        config.setdefault("heartbeat_interval_ms", HEARTBEAT_MS)
    c = AIOKafkaConsumer(*topics, bootstrap_servers=bootstrap, request_timeout_ms=10000, **config)
    await c.start()
    try:
        yield c
    finally:
        await c.stop()


async def create_topic(
    bootstrap: str, name: str, partitions: int, configs: dict[str, str] | None = None
) -> None:
    async with admin_client(bootstrap) as admin:
        resp = await admin.create_topics([NewTopic(name, partitions, 1, topic_configs=configs or {})])
        assert [(t[0], t[1]) for t in resp.topic_errors] == [(name, 0)]


async def get_until(c: AIOKafkaConsumer, count: int, timeout: float = 15.0) -> list[Any]:
    records: list[Any] = []
    deadline = time.monotonic() + timeout
    while len(records) < count and time.monotonic() < deadline:
        for batch in (await c.getmany(timeout_ms=200)).values():
            records.extend(batch)
    return records


async def get_for(c: AIOKafkaConsumer, seconds: float) -> list[Any]:
    records: list[Any] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for batch in (await c.getmany(timeout_ms=100)).values():
            records.extend(batch)
    return records


async def wait_assigned(c: AIOKafkaConsumer, expected: set[TopicPartition], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if c.assignment() == expected:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"assignment {c.assignment()} never became {expected}")


async def send_keyed(p: AIOKafkaProducer, topic: str, n: int, start: int = 0) -> list[dict[str, Any]]:
    pending = []
    for i in range(start, start + n):
        key, value = f"key-{i % 5}".encode(), f"value-{i}".encode()
        headers = [("seq", str(i).encode()), ("origin", b"aiokafka")]
        pending.append((key, value, headers, await p.send(topic, value=value, key=key, headers=headers)))
    out = []
    for key, value, headers, fut in pending:
        md = await fut
        out.append(
            {"key": key, "value": value, "headers": headers, "partition": md.partition, "offset": md.offset}
        )
    return out


Positions = dict[tuple[int, int], tuple[bytes, bytes, list[tuple[str, bytes]]]]


def by_position(records: list[Any]) -> Positions:
    return {(r.partition, r.offset): (r.key, r.value, list(r.headers)) for r in records}


def expected_of(sent: list[dict[str, Any]]) -> Positions:
    return {(s["partition"], s["offset"]): (s["key"], s["value"], s["headers"]) for s in sent}


def kp_modified_configs(bootstrap: str, topic: str) -> dict[str, str]:
    """The topic's overrides as kafka-python (DescribeConfigs v4) sees them: an independent check."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
    try:
        configs = admin.describe_configs([KPConfigResource("TOPIC", topic)])["topic"][topic]
        return {name: c["value"] for name, c in configs.items()}
    finally:
        admin.close()


# -- admin ------------------------------------------------------------------------------------


def test_admin_create_describe_delete_topics(shared_broker: Any) -> None:
    bootstrap = shared_broker.bootstrap
    plain, compacted = unique("aio-plain"), unique("aio-compact")

    async def scenario() -> None:
        async with admin_client(bootstrap) as admin:
            resp = await admin.create_topics(
                [
                    NewTopic(plain, 3, 1),
                    NewTopic(
                        compacted,
                        2,
                        1,
                        topic_configs={"cleanup.policy": "compact", "retention.ms": "7200000"},
                    ),
                ]
            )
            assert sorted((t[0], t[1]) for t in resp.topic_errors) == sorted([(plain, 0), (compacted, 0)])

            again = await admin.create_topics([NewTopic(plain, 1, 1)])
            assert [(t[0], t[1]) for t in again.topic_errors] == [(plain, 36)]  # TOPIC_ALREADY_EXISTS

            topics = await admin.list_topics()
            assert {plain, compacted} <= set(topics)

            described = {t["topic"]: t for t in await admin.describe_topics([plain, compacted])}
            assert described[plain]["error_code"] == 0
            assert sorted(p["partition"] for p in described[plain]["partitions"]) == [0, 1, 2]
            assert sorted(p["partition"] for p in described[compacted]["partitions"]) == [0, 1]
            assert all(p["leader"] == 0 and p["replicas"] == [0] for p in described[plain]["partitions"])

            cluster = await admin.describe_cluster()
            assert [b["node_id"] for b in cluster["brokers"]] == [0]
            assert cluster["controller_id"] == 0

            await admin.create_partitions({plain: NewPartitions(5)})
            described = await admin.describe_topics([plain])
            assert sorted(p["partition"] for p in described[0]["partitions"]) == [0, 1, 2, 3, 4]

            resp = await admin.delete_topics([plain, compacted])
            deleted = sorted((t[0], t[1]) for t in resp.topic_error_codes)
            assert deleted == sorted([(plain, 0), (compacted, 0)])
            topics = await admin.list_topics()
            assert plain not in topics
            assert compacted not in topics

            gone = await admin.delete_topics([plain])
            # UNKNOWN_TOPIC_OR_PARTITION
            assert [(t[0], t[1]) for t in gone.topic_error_codes] == [(plain, 3)]

    run(scenario())


def test_admin_describe_configs_returns_the_override(shared_broker: Any, topic: str) -> None:
    bootstrap = shared_broker.bootstrap

    async def scenario() -> None:
        await create_topic(bootstrap, topic, 1, {"cleanup.policy": "compact", "retention.ms": "7200000"})
        async with admin_client(bootstrap) as admin:
            (resp,) = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
            (resource,) = resp.resources
            error_code, _message, resource_type, resource_name, entries = resource[:5]
            assert (error_code, resource_type, resource_name) == (0, int(ConfigResourceType.TOPIC), topic)
            values = {e[0]: e[1] for e in entries}
            assert values["cleanup.policy"] == "compact"
            assert values["retention.ms"] == "7200000"
            assert "segment.bytes" in values

            (resp,) = await admin.describe_configs(
                [ConfigResource(ConfigResourceType.TOPIC, topic, {"retention.ms": None})]
            )
            assert [e[0] for e in resp.resources[0][4]] == ["retention.ms"]

    run(scenario())


def test_admin_alter_configs_replaces_the_overrides(shared_broker: Any, topic: str) -> None:
    bootstrap = shared_broker.bootstrap

    async def scenario() -> None:
        await create_topic(bootstrap, topic, 1, {"cleanup.policy": "compact", "retention.ms": "7200000"})
        async with admin_client(bootstrap) as admin:
            (resp,) = await admin.alter_configs(
                [ConfigResource(ConfigResourceType.TOPIC, topic, {"retention.ms": "3600000"})]
            )
            assert [(r[0], r[2], r[3]) for r in resp.resources] == [(0, int(ConfigResourceType.TOPIC), topic)]

    run(scenario())
    # AlterConfigs (non-incremental) sets exactly the given keys: cleanup.policy is back to its default.
    assert kp_modified_configs(bootstrap, topic) == {"retention.ms": "3600000"}


def test_admin_groups_and_offsets(shared_broker: Any, topic: str, group: str) -> None:
    bootstrap = shared_broker.bootstrap

    async def scenario() -> None:
        await create_topic(bootstrap, topic, 2)
        async with producer(bootstrap) as p:
            sent = await send_keyed(p, topic, 12)
        per_partition: dict[int, int] = defaultdict(int)
        for s in sent:
            per_partition[s["partition"]] += 1
        tps = {TopicPartition(topic, 0), TopicPartition(topic, 1)}
        async with admin_client(bootstrap) as admin:
            async with consumer(bootstrap, topic, group_id=group) as c:
                assert len(await get_until(c, 12)) == 12
                await c.commit()
                assert (group, "consumer") in await admin.list_consumer_groups()
                (resp,) = await admin.describe_consumer_groups([group])
                (g,) = resp.groups
                error_code, group_id, state, protocol_type = g[:4]
                assert (error_code, group_id, state, protocol_type) == (0, group, "Stable", "consumer")
                members = g[5]
                assert len(members) == 1
                assignment = ConsumerProtocolMemberAssignment.decode(members[0][4])
                assert set(assignment.partitions()) == tps
            offsets = await admin.list_consumer_group_offsets(group)
            assert {tp: om.offset for tp, om in offsets.items()} == {
                TopicPartition(topic, part): n for part, n in per_partition.items()
            }
            (resp,) = await admin.describe_consumer_groups([group])
            assert resp.groups[0][2] == "Empty"

    run(scenario())


# -- producer and consumer ------------------------------------------------------------------------


def test_idempotent_produce_group_consume_commit_and_resume(
    shared_broker: Any, topic: str, group: str
) -> None:
    bootstrap = shared_broker.bootstrap

    async def scenario() -> None:
        await create_topic(bootstrap, topic, 3)
        tps = {TopicPartition(topic, p) for p in range(3)}
        async with producer(bootstrap) as p:
            sent = await send_keyed(p, topic, 40)
        offsets: dict[int, list[int]] = defaultdict(list)
        key_partitions: dict[bytes, set[int]] = defaultdict(set)
        for s in sent:
            offsets[s["partition"]].append(s["offset"])
            key_partitions[s["key"]].add(s["partition"])
        for offs in offsets.values():
            assert offs == list(range(len(offs)))
        assert all(len(v) == 1 for v in key_partitions.values())
        committed_at = {TopicPartition(topic, part): len(offs) for part, offs in offsets.items()}
        for tp in tps:
            committed_at.setdefault(tp, 0)

        async with consumer(bootstrap, topic, group_id=group) as c:
            records = await get_until(c, len(sent))
            assert by_position(records) == expected_of(sent)
            assert len(records) == len(sent)
            assert c.assignment() == tps
            await c.commit()
            for tp in tps:
                assert await c.committed(tp) == committed_at[tp]

        async with consumer(bootstrap, topic, group_id=group) as c2:
            await wait_assigned(c2, tps)
            for tp in tps:
                assert await c2.position(tp) == committed_at[tp]
            assert await get_for(c2, 1.0) == []
            async with producer(bootstrap) as p:
                fresh = await send_keyed(p, topic, 10, start=500)
            records = await get_until(c2, len(fresh))
            assert by_position(records) == expected_of(fresh)
            assert all(r.offset >= committed_at[TopicPartition(topic, r.partition)] for r in records)
            assert await get_for(c2, 0.5) == []

    run(scenario())


def test_two_members_split_the_partitions(shared_broker: Any, topic: str, group: str) -> None:
    bootstrap = shared_broker.bootstrap

    async def scenario() -> None:
        await create_topic(bootstrap, topic, 4)
        all_tps = {TopicPartition(topic, p) for p in range(4)}
        async with consumer(bootstrap, topic, group_id=group) as c1:
            await wait_assigned(c1, all_tps)
            async with consumer(bootstrap, topic, group_id=group) as c2:
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline:
                    await asyncio.gather(c1.getmany(timeout_ms=100), c2.getmany(timeout_ms=100))
                    a, b = c1.assignment(), c2.assignment()
                    if a and b and not (a & b) and (a | b) == all_tps:
                        break
                a, b = c1.assignment(), c2.assignment()
                assert a and b, (a, b)
                assert not (a & b)
                assert a | b == all_tps

                # Both members receive what is produced to their own partitions.
                async with producer(bootstrap) as p:
                    for part in range(4):
                        await p.send_and_wait(topic, value=f"to-{part}".encode(), partition=part)
                got1, got2 = await asyncio.gather(get_until(c1, len(a)), get_until(c2, len(b)))
                for got, owned in ((got1, a), (got2, b)):
                    assert {(r.partition, r.value) for r in got} == {
                        (tp.partition, f"to-{tp.partition}".encode()) for tp in owned
                    }

    run(scenario())


def test_offset_lookups_and_seeks(shared_broker: Any, topic: str) -> None:
    bootstrap = shared_broker.bootstrap

    async def scenario() -> None:
        await create_topic(bootstrap, topic, 1)
        tp = TopicPartition(topic, 0)
        base = (int(time.time()) - 1800) * 1000
        async with producer(bootstrap) as p:
            mds = [
                await p.send_and_wait(topic, value=str(i).encode(), timestamp_ms=base + 1000 * i)
                for i in range(8)
            ]
        assert [m.offset for m in mds] == list(range(8))
        async with consumer(bootstrap) as c:
            c.assign([tp])
            assert await c.beginning_offsets([tp]) == {tp: 0}
            assert await c.end_offsets([tp]) == {tp: 8}
            found = await c.offsets_for_times({tp: base + 2500})
            assert (found[tp].offset, found[tp].timestamp) == (3, base + 3000)
            assert (await c.offsets_for_times({tp: base + 100_000}))[tp] is None
            await c.seek_to_end(tp)
            assert await c.position(tp) == 8
            await c.seek_to_beginning(tp)
            records = await get_until(c, 8)
            assert [(r.offset, r.value, r.timestamp) for r in records] == [
                (i, str(i).encode(), base + 1000 * i) for i in range(8)
            ]
            c.seek(tp, 6)
            assert [r.value for r in await get_until(c, 2)] == [b"6", b"7"]

    run(scenario())


# -- compression --------------------------------------------------------------------------------------

# aiokafka 0.14 does every codec through cramjam, a dependency of this project: all four must work.
CODECS = {
    "gzip": aiokafka.codec.has_gzip,
    "snappy": aiokafka.codec.has_snappy,
    "lz4": aiokafka.codec.has_lz4,
    "zstd": aiokafka.codec.has_zstd,
}


@pytest.mark.parametrize("codec", sorted(CODECS))
def test_compressed_round_trip(shared_broker: Any, codec: str) -> None:
    assert CODECS[codec](), f"aiokafka cannot {codec}: cramjam missing from the venv"
    bootstrap = shared_broker.bootstrap
    topic = unique(f"aio-{codec}")
    values = [(f"{codec} record {i} " * (1 + i % 30)).encode() for i in range(300)]

    async def scenario() -> None:
        await create_topic(bootstrap, topic, 2)
        async with producer(bootstrap, compression_type=codec, linger_ms=20) as p:
            futs = [
                await p.send(topic, value=v, key=f"k{i % 3}".encode(), headers=[("i", str(i).encode())])
                for i, v in enumerate(values)
            ]
            mds = [await f for f in futs]
        expected = {
            (md.partition, md.offset): (f"k{i % 3}".encode(), v, [("i", str(i).encode())])
            for i, (md, v) in enumerate(zip(mds, values, strict=True))
        }
        assert len(expected) == len(values)
        async with consumer(bootstrap) as c:
            tps = [TopicPartition(topic, 0), TopicPartition(topic, 1)]
            c.assign(tps)
            await c.seek_to_beginning(*tps)
            records = await get_until(c, len(values))
            assert by_position(records) == expected
            assert sum((await c.end_offsets(tps)).values()) == len(values)

    run(scenario())
