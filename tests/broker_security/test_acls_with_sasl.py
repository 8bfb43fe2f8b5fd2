"""ACLs decided on SASL principals: over SASL_SSL, alice is denied until an ACL names her;
admin is a super user; SCRAM credential changes need ALTER on the cluster."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)

from broker.config import load_config
from broker.server import EmbeddedBroker
from tests.broker_security.conftest import PLAIN_JAAS, broker_settings
from tests.certificates import TestCA
from tests.support import unique


@pytest.fixture(scope="module")
def acl_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[EmbeddedBroker, Path]]:
    tmp = tmp_path_factory.mktemp("acl-sasl")
    ca = TestCA()
    settings = {
        **broker_settings(tmp, ca, tmp / "data"),
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:admin",
        "allow.everyone.if.no.acl.found": "false",
        "listener.name.sasl_ssl.plain.sasl.jaas.config": PLAIN_JAAS,
    }
    with EmbeddedBroker(load_config(settings)) as broker:
        yield broker, ca.write_pem(tmp / "ca.pem")


def client(eb: EmbeddedBroker, ca: Path, user: str, **extra: str) -> dict[str, str]:
    assert eb.server is not None
    ep = eb.server.broker.endpoint_for("SASL_SSL")
    return {
        "bootstrap.servers": f"{ep.host}:{ep.port}",
        "security.protocol": "SASL_SSL",
        "ssl.ca.location": str(ca),
        "sasl.mechanisms": "PLAIN",
        "sasl.username": user,
        "sasl.password": f"{user}-secret",
        **extra,
    }


def consume(conf: dict[str, str], topic: str, group: str) -> tuple[list[bytes], KafkaError | None]:
    consumer = Consumer(
        {**conf, "group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": False}
    )
    consumer.subscribe([topic])
    values: list[bytes] = []
    error: KafkaError | None = None
    try:
        for _ in range(40):
            msg = consumer.poll(0.5)
            if msg is None:
                if values:
                    break
                continue
            if msg.error():
                error = msg.error()
                break
            values.append(msg.value())
    finally:
        consumer.close()
    return values, error


def test_alice_sees_nothing_until_an_acl_names_her(acl_broker: tuple[EmbeddedBroker, Path]) -> None:
    eb, ca = acl_broker
    topic, group = unique("secret"), unique("alice-group")
    admin_conf = client(eb, ca, "admin")
    admin = AdminClient(admin_conf)  # kept referenced: a destroyed client fails its futures
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    producer = Producer(admin_conf)
    for i in range(3):
        producer.produce(topic, f"v{i}".encode())
    assert producer.flush(30) == 0

    def allow(resource: ResourceType, name: str) -> None:
        binding = AclBinding(
            resource,
            name,
            ResourcePatternType.LITERAL,
            "User:alice",
            "*",
            AclOperation.READ,
            AclPermissionType.ALLOW,
        )
        for future in admin.create_acls([binding]).values():
            future.result(30)

    values, error = consume(client(eb, ca, "alice"), topic, group)
    assert values == []
    assert error is not None and error.code() == KafkaError.GROUP_AUTHORIZATION_FAILED  # checked first
    allow(ResourceType.GROUP, group)
    values, error = consume(client(eb, ca, "alice"), topic, group)
    assert values == []
    assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    allow(ResourceType.TOPIC, topic)
    values, error = consume(client(eb, ca, "alice"), topic, group)
    assert error is None and values == [b"v0", b"v1", b"v2"]


def test_scram_credentials_need_alter_on_the_cluster(acl_broker: tuple[EmbeddedBroker, Path]) -> None:
    eb, ca = acl_broker
    upsert = [
        UserScramCredentialUpsertion("dave", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), b"pw")
    ]
    alice, admin = AdminClient(client(eb, ca, "alice")), AdminClient(client(eb, ca, "admin"))
    with pytest.raises(KafkaException) as refused:
        alice.alter_user_scram_credentials(upsert)["dave"].result(30)
    assert refused.value.args[0].code() == KafkaError.CLUSTER_AUTHORIZATION_FAILED
    assert admin.alter_user_scram_credentials(upsert)["dave"].result(30) is None
