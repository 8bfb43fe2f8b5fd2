"""Other clients' ``send_offsets_to_transaction`` (their own TxnOffsetCommit versions):
aiokafka and kafka-python commit a group's offsets inside a transaction; the offsets are
unstable while it is open, current once it commits, unchanged when it aborts.
"""

from __future__ import annotations

import asyncio

from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from kio.schema.errors import ErrorCode

from broker.protocol.versions import ApiKey
from broker.server import EmbeddedBroker
from tests.support import unique
from tests.wire import WireClient


def stable_offset(bootstrap: str, group: str, topic: str) -> tuple[int, int]:
    with WireClient(bootstrap) as w:
        answer = w.request(
            ApiKey.OFFSET_FETCH,
            7,
            group_id=group,
            topics=[{"name": topic, "partition_indexes": [0]}],
            require_stable=True,
        )
    p = answer.topics[0].partitions[0]
    return int(p.committed_offset), int(p.error_code)


def new_topic(bootstrap: str) -> str:
    topic = unique("t")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    return topic


def test_aiokafka(shared_broker: EmbeddedBroker) -> None:
    from aiokafka import AIOKafkaProducer
    from aiokafka.structs import TopicPartition

    b, group = shared_broker.bootstrap, unique("g")
    topic = new_topic(b)

    async def scenario() -> None:
        p = AIOKafkaProducer(bootstrap_servers=b, transactional_id=unique("aio"))
        await p.start()
        try:
            await p.begin_transaction()
            await p.send_and_wait(topic, b"x", partition=0)
            await p.send_offsets_to_transaction({TopicPartition(topic, 0): 17}, group)
            assert stable_offset(b, group, topic) == (-1, ErrorCode.unstable_offset_commit)
            await p.commit_transaction()
            assert stable_offset(b, group, topic) == (17, ErrorCode.none)
            await p.begin_transaction()
            await p.send_offsets_to_transaction({TopicPartition(topic, 0): 30}, group)
            await p.abort_transaction()
            assert stable_offset(b, group, topic) == (17, ErrorCode.none)
        finally:
            await p.stop()

    asyncio.run(scenario())


def test_kafka_python(shared_broker: EmbeddedBroker) -> None:
    from kafka import KafkaProducer
    from kafka.structs import OffsetAndMetadata, TopicPartition

    b, group = shared_broker.bootstrap, unique("g")
    topic = new_topic(b)
    p = KafkaProducer(bootstrap_servers=b, transactional_id=unique("kp"))
    try:
        p.init_transactions()
        p.begin_transaction()
        p.send(topic, b"x", partition=0).get(30)
        p.send_offsets_to_transaction({TopicPartition(topic, 0): OffsetAndMetadata(23, "", -1)}, group)
        assert stable_offset(b, group, topic) == (-1, ErrorCode.unstable_offset_commit)
        p.commit_transaction()
        assert stable_offset(b, group, topic) == (23, ErrorCode.none)
        p.begin_transaction()
        p.send_offsets_to_transaction({TopicPartition(topic, 0): OffsetAndMetadata(40, "", -1)}, group)
        p.abort_transaction()
        assert stable_offset(b, group, topic) == (23, ErrorCode.none)
    finally:
        p.close()
