"""Kafka's ACL authorization: the vocabulary (``acl``), the pure decision (``matcher``), the
durable ACL set (``store``), the stateful authorizer (``authorizer``) and the checks that
request handlers make (``checks``)."""

from __future__ import annotations

from broker.authorizer.acl import (
    CLUSTER,
    AclBinding,
    AclBindingFilter,
    Operation,
    PatternType,
    Permission,
    Resource,
    ResourceType,
    group,
    topic,
    transactional_id,
)
from broker.authorizer.authorizer import Authorizer
from broker.authorizer.checks import allowed_names, authorize, authorize_any, authorize_cluster

__all__ = [
    "CLUSTER",
    "AclBinding",
    "AclBindingFilter",
    "Authorizer",
    "Operation",
    "PatternType",
    "Permission",
    "Resource",
    "ResourceType",
    "allowed_names",
    "authorize",
    "authorize_any",
    "authorize_cluster",
    "group",
    "topic",
    "transactional_id",
]
