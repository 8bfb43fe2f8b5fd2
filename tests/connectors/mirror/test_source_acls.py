"""Topic ACL sync (sync.topic.acls.enabled) between two brokers with Kafka's authorizer:
a replicated topic's ACLs appear on its remote topic by Kafka's rules."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka.admin import (  # type: ignore[attr-defined]  # re-exported untyped
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from tests.connectors.mirror.source_support import Clusters, clusters, create_topic, wait_until
from tests.support import unique

AUTHORIZER = {
    "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "super.users": "User:ANONYMOUS",  # the tests' and the worker's plaintext clients
}


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Clusters]:
    with clusters(Path(tmp_path_factory.mktemp("mirror-acls")), **AUTHORIZER) as c:
        yield c


def binding(topic: str, principal: str, operation: AclOperation, permission: AclPermissionType) -> AclBinding:
    return AclBinding(
        ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, principal, "*", operation, permission
    )


def acls_of(bootstrap: str, topic: str) -> set[tuple[str, str, str]]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    anything: object = None
    found = admin.describe_acls(
        AclBindingFilter(
            ResourceType.TOPIC,
            topic,
            ResourcePatternType.LITERAL,
            anything,  # type: ignore[arg-type]
            anything,  # type: ignore[arg-type]
            AclOperation.ANY,
            AclPermissionType.ANY,
        )
    ).result(30)
    return {(b.principal, b.operation.name, b.permission_type.name) for b in found}


def test_topic_acls_are_copied_by_kafkas_rules(env: Clusters) -> None:
    topic = unique("guarded")
    create_topic(env.a.bootstrap, topic, 1)
    admin = AdminClient({"bootstrap.servers": env.a.bootstrap})
    for future in admin.create_acls(
        [
            binding(topic, "User:alice", AclOperation.READ, AclPermissionType.ALLOW),
            binding(topic, "User:bob", AclOperation.WRITE, AclPermissionType.ALLOW),
            binding(topic, "User:carol", AclOperation.ALL, AclPermissionType.ALLOW),
            binding(topic, "User:dave", AclOperation.READ, AclPermissionType.DENY),
        ]
    ).values():
        future.result(30)
    name = env.start(topic, **{"sync.topic.acls.enabled": "true", "sync.topic.acls.interval.seconds": "1"})
    env.worker.wait_for_running(name, tasks=1)
    expected = {
        ("User:alice", "READ", "ALLOW"),
        ("User:carol", "READ", "ALLOW"),
        ("User:dave", "READ", "DENY"),
    }
    wait_until(lambda: acls_of(env.b, f"A.{topic}") == expected, "the remote topic's ACLs")
