"""TxnOffsetCommit and OffsetFetch ``require_stable`` over the wire, on a real broker:
confluent-kafka's ``send_offsets_to_transaction`` writes the offsets, kio requests of
exact versions look at them, and bad TxnOffsetCommits get Kafka's error codes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from kio.schema.errors import ErrorCode

from broker.protocol.versions import ApiKey
from broker.server import EmbeddedBroker
from tests.support import embedded_broker, unique
from tests.wire import WireClient


def offset_fetch(
    bootstrap: str, group: str, topic: str, version: int, require_stable: bool
) -> tuple[int, int]:
    """(committed offset, error code) of partition 0, with OffsetFetch at ``version``."""
    wanted = [{"name": topic, "partition_indexes": [0]}]
    with WireClient(bootstrap) as w:
        answer = w.request(
            ApiKey.OFFSET_FETCH,
            version,
            group_id=group,
            topics=wanted,
            groups=[{"group_id": group, "topics": wanted}],
            require_stable=require_stable,
        )
    topics = answer.groups[0].topics if version >= 8 else answer.topics
    (p,) = topics[0].partitions
    return int(p.committed_offset), int(p.error_code)


def create_topic(bootstrap: str) -> str:
    topic = unique("t")
    admin = AdminClient({"bootstrap.servers": bootstrap})  # referenced until the result is in
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    return topic


def setup(broker: EmbeddedBroker) -> tuple[str, str, Producer, Any]:
    topic, group = create_topic(broker.bootstrap), unique("g")
    producer = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": unique("tid")})
    producer.init_transactions(30)
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group})
    return topic, group, producer, consumer


def test_offsets_sent_to_a_transaction_are_unstable_until_it_commits(shared_broker: EmbeddedBroker) -> None:
    b = shared_broker.bootstrap
    topic, group, producer, consumer = setup(shared_broker)
    producer.begin_transaction()
    producer.produce(topic, b"x", partition=0)
    producer.send_offsets_to_transaction(
        [TopicPartition(topic, 0, 42)], consumer.consumer_group_metadata(), 30
    )
    for version in (7, 8, 9):
        assert offset_fetch(b, group, topic, version, True) == (-1, ErrorCode.unstable_offset_commit)
        assert offset_fetch(b, group, topic, version, False) == (-1, ErrorCode.none)
    producer.commit_transaction(30)
    assert offset_fetch(b, group, topic, 7, True) == (42, ErrorCode.none)
    # librdkafka's consumer reads it back (it asks with require_stable when read_committed).
    assert consumer.committed([TopicPartition(topic, 0)], 30)[0].offset == 42

    producer.begin_transaction()
    producer.send_offsets_to_transaction(
        [TopicPartition(topic, 0, 50)], consumer.consumer_group_metadata(), 30
    )
    producer.abort_transaction(30)
    assert offset_fetch(b, group, topic, 9, True) == (42, ErrorCode.none)
    consumer.close()


def txn_offset_commit(w: WireClient, version: int, **fields: Any) -> int:
    partition = {"partition_index": 0, "committed_offset": 7, "committed_metadata": None}
    answer = w.request(
        ApiKey.TXN_OFFSET_COMMIT,
        version,
        {"topics": [{"name": fields.pop("topic"), "partitions": [partition]}], **fields},
    )
    return int(answer.topics[0].partitions[0].error_code)


def test_bad_txn_offset_commits_get_kafkas_errors(shared_broker: EmbeddedBroker) -> None:
    topic, group, txn_id = create_topic(shared_broker.bootstrap), unique("g"), unique("tid")
    with WireClient(shared_broker.bootstrap) as w:
        init = w.request(
            ApiKey.INIT_PRODUCER_ID,
            3,
            transactional_id=txn_id,
            transaction_timeout=60000,
            producer_id=-1,
            producer_epoch=-1,
        )
        assert init.error_code == ErrorCode.none
        txn: dict[str, Any] = {
            "transactional_id": txn_id,
            "producer_id": int(init.producer_id),
            "producer_epoch": int(init.producer_epoch),
        }
        # The group's offsets partition is not in the transaction yet (KIP-890 verification).
        assert txn_offset_commit(w, 3, group_id=group, topic=topic, **txn) == ErrorCode.invalid_txn_state
        added = w.request(ApiKey.ADD_OFFSETS_TO_TXN, 3, group_id=group, **txn)
        assert added.error_code == ErrorCode.none
        assert (
            txn_offset_commit(w, 3, group_id=group, topic="no-such-topic", **txn)
            == ErrorCode.unknown_topic_or_partition
        )
        # Naming a generation and member of a group that has none of them.
        stale = {"generation_id": 3, "member_id": "gone", "group_instance_id": None}
        assert (
            txn_offset_commit(w, 3, group_id=group, topic=topic, **txn, **stale)
            == ErrorCode.unknown_member_id
        )
        # A member of generation 1 that commits as generation 0.
        joined = w.request(
            ApiKey.JOIN_GROUP,
            5,
            group_id=group,
            session_timeout=30000,
            rebalance_timeout=30000,
            member_id="",
            group_instance_id="static-1",
            protocol_type="consumer",
            protocols=[{"name": "range", "metadata": b""}],
        )
        assert joined.error_code == ErrorCode.none and joined.generation_id == 1
        old = {"generation_id": 0, "member_id": joined.member_id, "group_instance_id": "static-1"}
        assert (
            txn_offset_commit(w, 3, group_id=group, topic=topic, **txn, **old) == ErrorCode.illegal_generation
        )
        fenced = {"generation_id": 1, "member_id": "someone-else", "group_instance_id": "static-1"}
        assert (
            txn_offset_commit(w, 3, group_id=group, topic=topic, **txn, **fenced)
            == ErrorCode.fenced_instance_id
        )
        current = {"generation_id": 1, "member_id": joined.member_id, "group_instance_id": "static-1"}
        assert txn_offset_commit(w, 3, group_id=group, topic=topic, **txn, **current) == ErrorCode.none
        # A zombie with the previous epoch, once the producer re-initialised (epoch bump).
        w.request(ApiKey.END_TXN, 3, committed=False, **txn)
        again = w.request(
            ApiKey.INIT_PRODUCER_ID,
            3,
            transactional_id=txn_id,
            transaction_timeout=60000,
            **{k: txn[k] for k in ("producer_id", "producer_epoch")},
        )
        assert again.error_code == ErrorCode.none and again.producer_epoch == txn["producer_epoch"] + 1
        assert txn_offset_commit(w, 0, group_id=group, topic=topic, **txn) == ErrorCode.invalid_producer_epoch


def test_acls_as_kafka_transactional_id_write_then_group_read_then_topic_read(tmp_path: Path) -> None:
    from confluent_kafka.admin import (  # type: ignore[attr-defined]
        AclBinding,
        AclOperation,
        AclPermissionType,
        ResourcePatternType,
        ResourceType,
    )

    def deny(rtype: Any, name: str, op: Any) -> Any:
        return AclBinding(
            rtype, name, ResourcePatternType.LITERAL, "User:ANONYMOUS", "*", op, AclPermissionType.DENY
        )

    with embedded_broker(
        tmp_path / "logs",
        **{
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "allow.everyone.if.no.acl.found": "true",
        },
    ) as eb:
        topic, secret = create_topic(eb.bootstrap), create_topic(eb.bootstrap)
        admin = AdminClient({"bootstrap.servers": eb.bootstrap})
        acls = [
            deny(ResourceType.TRANSACTIONAL_ID, "denied-tid", AclOperation.WRITE),
            deny(ResourceType.GROUP, "denied-group", AclOperation.READ),
            deny(ResourceType.TOPIC, secret, AclOperation.READ),
        ]
        for fut in admin.create_acls(acls, request_timeout=10).values():
            fut.result()
        txn = {"transactional_id": "tid", "producer_id": 1, "producer_epoch": 0}
        with WireClient(eb.bootstrap) as w:
            denied_tid = {**txn, "transactional_id": "denied-tid"}
            assert (
                txn_offset_commit(w, 3, group_id="denied-group", topic=topic, **denied_tid)
                == ErrorCode.transactional_id_authorization_failed
            )
            assert (
                txn_offset_commit(w, 3, group_id="denied-group", topic=topic, **txn)
                == ErrorCode.group_authorization_failed
            )
            assert (
                txn_offset_commit(w, 3, group_id="g", topic=secret, **txn)
                == ErrorCode.topic_authorization_failed
            )
