"""Transactions judged by aiokafka's and kafka-python's transactional producers and
read_committed consumers, and by kcat (librdkafka) reading with isolation.level."""

from __future__ import annotations

import asyncio
import time

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from broker.server import EmbeddedBroker
from tests.compat.test_kcat import consume_all
from tests.support import unique


def create(eb: EmbeddedBroker, name: str, partitions: int = 1) -> None:
    a = AdminClient({"bootstrap.servers": eb.bootstrap})
    for f in a.create_topics([NewTopic(name, partitions, 1)]).values():
        f.result(15)


def test_aiokafka_transactions(shared_broker: EmbeddedBroker) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

    eb, topic, source, group = shared_broker, unique("t"), unique("src"), unique("g")
    create(eb, topic, 2)
    create(eb, source)

    async def run() -> tuple[list[bytes], list[bytes], int | None]:
        p = AIOKafkaProducer(bootstrap_servers=eb.bootstrap, transactional_id=unique("tx"))
        await p.start()
        try:
            async with p.transaction():
                for i in range(3):
                    await p.send(topic, f"c-{i}".encode(), partition=i % 2)
            await p.begin_transaction()
            await p.send_and_wait(topic, b"aborted")
            await p.abort_transaction()
            async with p.transaction():
                await p.send(topic, b"c-3")
                await p.send_offsets_to_transaction({TopicPartition(source, 0): 7}, group)
        finally:
            await p.stop()

        async def read(isolation: str, want: int) -> list[bytes]:
            c = AIOKafkaConsumer(
                topic,
                bootstrap_servers=eb.bootstrap,
                auto_offset_reset="earliest",
                isolation_level=isolation,
                enable_auto_commit=False,
            )
            await c.start()
            try:
                got: list[bytes] = []
                deadline = time.monotonic() + 15
                while time.monotonic() < deadline:
                    batch = await c.getmany(timeout_ms=300)
                    for records in batch.values():
                        got += [r.value for r in records if r.value is not None]
                    if len(got) >= want and not batch:
                        break
                return got
            finally:
                await c.stop()

        committed = await read("read_committed", 4)
        everything = await read("read_uncommitted", 5)
        g = AIOKafkaConsumer(bootstrap_servers=eb.bootstrap, group_id=group, enable_auto_commit=False)
        await g.start()
        try:
            offset = await g.committed(TopicPartition(source, 0))
        finally:
            await g.stop()
        return committed, everything, offset

    committed, everything, offset = asyncio.run(run())
    assert sorted(committed) == [b"c-0", b"c-1", b"c-2", b"c-3"]
    assert sorted(everything) == [b"aborted", b"c-0", b"c-1", b"c-2", b"c-3"]
    assert offset == 7


def test_kafka_python_transactions_and_fencing(shared_broker: EmbeddedBroker) -> None:
    from kafka import KafkaConsumer, KafkaProducer
    from kafka.errors import KafkaError

    eb, topic, tid = shared_broker, unique("t"), unique("tx")
    create(eb, topic)
    p = KafkaProducer(bootstrap_servers=eb.bootstrap, transactional_id=tid)
    p.init_transactions()
    p.begin_transaction()
    p.send(topic, b"committed")
    p.commit_transaction()
    p.begin_transaction()
    p.send(topic, b"aborted")
    p.flush()
    p.abort_transaction()
    # A second instance with the same id fences the first.
    p.begin_transaction()
    p.send(topic, b"zombie")
    p.flush()
    fresh = KafkaProducer(bootstrap_servers=eb.bootstrap, transactional_id=tid)
    fresh.init_transactions()
    fresh.begin_transaction()
    fresh.send(topic, b"fresh")
    fresh.commit_transaction()
    fenced = False
    try:
        p.commit_transaction()
    except KafkaError:
        fenced = True
    assert fenced
    p.close(timeout=1)
    fresh.close()

    c = KafkaConsumer(
        topic,
        bootstrap_servers=eb.bootstrap,
        auto_offset_reset="earliest",
        isolation_level="read_committed",
        consumer_timeout_ms=3000,
        enable_auto_commit=False,
    )
    values = [m.value for m in c]
    c.close()
    assert values == [b"committed", b"fresh"]


def test_kcat_reads_with_isolation_level(shared_broker: EmbeddedBroker) -> None:
    eb, topic = shared_broker, unique("t")
    create(eb, topic)
    p = Producer({"bootstrap.servers": eb.bootstrap, "transactional.id": unique("tx")})
    p.init_transactions(20)
    p.begin_transaction()
    p.produce(topic, b"committed")
    p.commit_transaction(20)
    p.begin_transaction()
    p.produce(topic, b"aborted")
    p.flush(10)
    p.abort_transaction(20)
    p.begin_transaction()
    p.produce(topic, b"open")
    p.flush(10)
    try:
        committed = [
            v for _, _, _, v, _ in consume_all(eb.bootstrap, topic, "-X", "isolation.level=read_committed")
        ]
        everything = [
            v for _, _, _, v, _ in consume_all(eb.bootstrap, topic, "-X", "isolation.level=read_uncommitted")
        ]
        assert committed == ["committed"]
        assert everything == ["committed", "aborted", "open"]
    finally:
        p.abort_transaction(20)
