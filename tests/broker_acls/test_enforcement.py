"""ACLs enforced by a real broker, seen through real clients (confluent-kafka, kafka-python).

Until SASL is merged the only principal a client can have is ``User:ANONYMOUS`` on
PLAINTEXT, so the broker runs with ``allow.everyone.if.no.acl.found=true`` (the
client may administer ACLs while the cluster has none) and tests put ACLs for or
against ``User:ANONYMOUS`` on the resources they test.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from broker.server import EmbeddedBroker
from tests.support import embedded_broker, unique

AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
ANON = "User:ANONYMOUS"


@pytest.fixture
def secured(tmp_path: Path) -> Iterator[EmbeddedBroker]:
    with embedded_broker(
        tmp_path / "logs",
        **{"authorizer.class.name": AUTHORIZER, "allow.everyone.if.no.acl.found": "true"},
    ) as eb:
        yield eb


def admin(eb: EmbeddedBroker) -> AdminClient:
    return AdminClient({"bootstrap.servers": eb.bootstrap})


def binding(
    rtype: ResourceType,
    name: str,
    op: AclOperation,
    perm: AclPermissionType,
    pattern: ResourcePatternType = ResourcePatternType.LITERAL,
) -> AclBinding:
    return AclBinding(rtype, name, pattern, ANON, "*", op, perm)


def create(eb: EmbeddedBroker, *bindings: AclBinding) -> None:
    client = admin(eb)  # kept alive until the futures are resolved
    for fut in client.create_acls(list(bindings), request_timeout=10).values():
        fut.result()


def make_topic(eb: EmbeddedBroker, name: str) -> None:
    client = admin(eb)
    client.create_topics([NewTopic(name, 1)])[name].result(10)


def produce_one(eb: EmbeddedBroker, topic: str) -> KafkaError | None:
    errors: list[KafkaError | None] = []
    p = Producer({"bootstrap.servers": eb.bootstrap, "message.timeout.ms": 10000})
    p.produce(topic, b"v", key=b"k", on_delivery=lambda err, _msg: errors.append(err))
    p.flush(15)
    assert len(errors) == 1
    return errors[0]


def test_acl_admin_round_trip_and_restart(tmp_path: Path) -> None:
    topic = unique("orders")
    allow_read = binding(ResourceType.TOPIC, topic, AclOperation.READ, AclPermissionType.ALLOW)
    deny_prefix = binding(
        ResourceType.TOPIC, "ord", AclOperation.WRITE, AclPermissionType.DENY, ResourcePatternType.PREFIXED
    )
    group_acl = binding(ResourceType.GROUP, "g", AclOperation.ALL, AclPermissionType.ALLOW)
    settings = {"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer", "super.users": ANON}
    with embedded_broker(tmp_path / "logs", **settings) as eb:
        a = admin(eb)
        create(eb, allow_read, deny_prefix, group_acl)
        everything = AclBindingFilter(
            ResourceType.ANY,
            None,
            ResourcePatternType.ANY,
            None,
            None,
            AclOperation.ANY,
            AclPermissionType.ANY,
        )
        assert set(a.describe_acls(everything, request_timeout=10).result()) == {
            allow_read,
            deny_prefix,
            group_acl,
        }
        matching = AclBindingFilter(
            ResourceType.TOPIC,
            topic,
            ResourcePatternType.MATCH,
            None,
            None,
            AclOperation.ANY,
            AclPermissionType.ANY,
        )
        # MATCH finds what applies to the name: its literal ACL and the "ord" prefix.
        assert set(a.describe_acls(matching, request_timeout=10).result()) == {allow_read, deny_prefix}
        topic_filter = AclBindingFilter(
            ResourceType.GROUP,
            None,
            ResourcePatternType.ANY,
            None,
            None,
            AclOperation.ANY,
            AclPermissionType.ANY,
        )
        deleted = a.delete_acls([topic_filter], request_timeout=10)[topic_filter].result()
        assert deleted == [group_acl]
    # ACLs live in the metadata directory: a restarted broker has them.
    with embedded_broker(tmp_path / "logs", **settings) as eb:
        client = admin(eb)
        assert set(client.describe_acls(everything, request_timeout=10).result()) == {allow_read, deny_prefix}


def test_acl_apis_without_an_authorizer_are_security_disabled(broker: EmbeddedBroker) -> None:
    client = admin(broker)
    fut = client.create_acls(
        [binding(ResourceType.TOPIC, "t", AclOperation.READ, AclPermissionType.ALLOW)], request_timeout=10
    )
    with pytest.raises(KafkaException) as info:
        next(iter(fut.values())).result()
    assert info.value.args[0].code() == KafkaError.SECURITY_DISABLED
    # librdkafka drops DescribeAcls' top-level error; kafka-python reports it.
    from kafka.admin import ACLFilter, KafkaAdminClient, ResourcePatternFilter
    from kafka.admin import ACLOperation as KOp
    from kafka.admin import ACLPermissionType as KPerm
    from kafka.admin import ACLResourcePatternType as KPattern
    from kafka.admin import ResourceType as KType
    from kafka.errors import SecurityDisabledError

    kadmin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        with pytest.raises(SecurityDisabledError):
            kadmin.describe_acls(
                ACLFilter(
                    None, None, KOp.ANY, KPerm.ANY, ResourcePatternFilter(KType.ANY, None, KPattern.ANY)
                )
            )
    finally:
        kadmin.close()


def test_acl_admin_needs_cluster_alter(secured: EmbeddedBroker) -> None:
    create(secured, binding(ResourceType.BROKER, "kafka-cluster", AclOperation.ALTER, AclPermissionType.DENY))
    client = admin(secured)
    fut = client.create_acls(
        [binding(ResourceType.TOPIC, "t", AclOperation.READ, AclPermissionType.ALLOW)], request_timeout=10
    )
    with pytest.raises(KafkaException) as info:
        next(iter(fut.values())).result()
    assert info.value.args[0].code() == KafkaError.CLUSTER_AUTHORIZATION_FAILED


def test_denied_producer_gets_topic_authorization_failed(secured: EmbeddedBroker) -> None:
    topic = unique("t")
    make_topic(secured, topic)
    assert produce_one(secured, topic) is None
    create(secured, binding(ResourceType.TOPIC, topic, AclOperation.WRITE, AclPermissionType.DENY))
    err = produce_one(secured, topic)
    assert err is not None and err.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_denied_consumer_sees_no_data(secured: EmbeddedBroker) -> None:
    topic = unique("t")
    make_topic(secured, topic)
    assert produce_one(secured, topic) is None
    # Once the topic has ACLs, allow.everyone.if.no.acl.found no longer applies to it: the
    # consumer may still see the topic (DESCRIBE), but not read it.
    create(
        secured,
        binding(ResourceType.TOPIC, topic, AclOperation.DESCRIBE, AclPermissionType.ALLOW),
        binding(ResourceType.TOPIC, topic, AclOperation.READ, AclPermissionType.DENY),
    )
    c = Consumer(
        {"bootstrap.servers": secured.bootstrap, "group.id": unique("g"), "auto.offset.reset": "earliest"}
    )
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        error = None
        for _ in range(30):
            msg = c.poll(0.5)
            if msg is None:
                continue
            assert msg.error() is not None, "a denied consumer received data"
            error = msg.error()
            break
        assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    finally:
        c.close()


def test_denied_group_gets_group_authorization_failed(secured: EmbeddedBroker) -> None:
    topic, group = unique("t"), unique("g")
    make_topic(secured, topic)
    create(secured, binding(ResourceType.GROUP, group, AclOperation.READ, AclPermissionType.DENY))
    c = Consumer({"bootstrap.servers": secured.bootstrap, "group.id": group, "auto.offset.reset": "earliest"})
    try:
        c.subscribe([topic])
        error = None
        for _ in range(30):
            msg = c.poll(0.5)
            if msg is not None and msg.error() is not None:
                error = msg.error()
                break
        assert error is not None and error.code() == KafkaError.GROUP_AUTHORIZATION_FAILED
    finally:
        c.close()


def test_metadata_hides_undescribable_topics(secured: EmbeddedBroker) -> None:
    visible, hidden = unique("visible"), unique("hidden")
    make_topic(secured, visible)
    make_topic(secured, hidden)
    create(secured, binding(ResourceType.TOPIC, hidden, AclOperation.DESCRIBE, AclPermissionType.DENY))
    client = admin(secured)
    topics = client.list_topics(timeout=10).topics
    assert visible in topics and hidden not in topics
    named = client.list_topics(hidden, timeout=10).topics[hidden]
    assert named.error is not None and named.error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_super_user_is_not_denied(tmp_path: Path) -> None:
    topic = unique("t")
    settings = {"authorizer.class.name": AUTHORIZER, "super.users": f"User:admin;{ANON}"}
    with embedded_broker(tmp_path / "logs", **settings) as eb:
        make_topic(eb, topic)
        create(eb, binding(ResourceType.TOPIC, topic, AclOperation.ALL, AclPermissionType.DENY))
        assert produce_one(eb, topic) is None


def test_no_acl_and_no_allow_everyone_denies_everything(tmp_path: Path) -> None:
    name = unique("t")
    with embedded_broker(tmp_path / "logs", **{"authorizer.class.name": AUTHORIZER}) as eb:
        client = admin(eb)
        with pytest.raises(KafkaException) as info:
            client.create_topics([NewTopic(name, 1)])[name].result(10)
        assert info.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_kafka_python_producer_is_denied(secured: EmbeddedBroker) -> None:
    from kafka import KafkaProducer
    from kafka.errors import TopicAuthorizationFailedError

    topic = unique("t")
    make_topic(secured, topic)
    create(secured, binding(ResourceType.TOPIC, topic, AclOperation.WRITE, AclPermissionType.DENY))
    p = KafkaProducer(bootstrap_servers=secured.bootstrap, max_block_ms=10000, retries=0)
    try:
        with pytest.raises(TopicAuthorizationFailedError):
            p.send(topic, b"v").get(timeout=15)
    finally:
        p.close(timeout=5)
