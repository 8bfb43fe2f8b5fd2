"""Kafka's authorization decision as pure functions of the ACLs and the request's identity.

The rules are those of Kafka's ``StandardAuthorizer``/``AclAuthorizer``:

1. a super user may do anything;
2. the ACLs that apply to a resource are the LITERAL ones of its name, the LITERAL
   ``*`` ones and the PREFIXED ones whose prefix starts its name, of the same type;
3. if none apply (to anybody), ``allow.everyone.if.no.acl.found`` decides;
4. an applicable DENY for the principal (or ``User:*``) and host (or ``*``) whose
   operation is the one asked or ALL denies, whatever else allows;
5. otherwise an ALLOW of the operation, ALL, or an operation implying it allows:
   READ, WRITE, DELETE and ALTER imply DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS;
6. otherwise denied.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from broker.authorizer.acl import (
    WILDCARD_HOST,
    WILDCARD_PRINCIPAL,
    WILDCARD_RESOURCE,
    AclBinding,
    Operation,
    PatternType,
    Permission,
    Resource,
    ResourceType,
)

_IMPLIED_BY: dict[Operation, frozenset[Operation]] = {
    Operation.DESCRIBE: frozenset(
        {Operation.DESCRIBE, Operation.READ, Operation.WRITE, Operation.DELETE, Operation.ALTER}
    ),
    Operation.DESCRIBE_CONFIGS: frozenset({Operation.DESCRIBE_CONFIGS, Operation.ALTER_CONFIGS}),
}


@dataclass(frozen=True, slots=True)
class Policy:
    """The authorizer's configuration: ``super.users`` and ``allow.everyone.if.no.acl.found``."""

    super_users: frozenset[str] = frozenset()
    allow_everyone_if_no_acl_found: bool = False


@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    reason: str


def allowing_operations(op: Operation) -> frozenset[Operation]:
    """Operations whose ALLOW grants ``op``."""
    return _IMPLIED_BY.get(op, frozenset({op})) | {Operation.ALL}


def applies_to(acl: AclBinding, resource: Resource) -> bool:
    p = acl.pattern
    if p.resource_type != resource.resource_type:
        return False
    if p.pattern_type == PatternType.LITERAL:
        return p.name == resource.name or p.name == WILDCARD_RESOURCE
    return p.pattern_type == PatternType.PREFIXED and resource.name.startswith(p.name)


def principal_matches(acl_principal: str, principal: str) -> bool:
    return acl_principal == principal or (
        acl_principal == WILDCARD_PRINCIPAL and principal.startswith("User:")
    )


def host_matches(acl_host: str, host: str) -> bool:
    return acl_host in (WILDCARD_HOST, host)


def _for(acl: AclBinding, principal: str, host: str) -> bool:
    return principal_matches(acl.entry.principal, principal) and host_matches(acl.entry.host, host)


def decide(
    acls: Iterable[AclBinding], policy: Policy, principal: str, host: str, op: Operation, resource: Resource
) -> Decision:
    """May ``principal`` connecting from ``host`` perform ``op`` on ``resource``?"""
    if principal in policy.super_users:
        return Decision(True, "super user")
    applicable = [a for a in acls if applies_to(a, resource)]
    if not applicable:
        allow = policy.allow_everyone_if_no_acl_found
        return Decision(allow, f"no ACL on the resource, allow.everyone.if.no.acl.found={str(allow).lower()}")
    mine = [a for a in applicable if _for(a, principal, host)]
    for a in mine:
        if a.entry.permission == Permission.DENY and a.entry.operation in (op, Operation.ALL):
            return Decision(False, f"DENY ACL {a}")
    allowing = allowing_operations(op)
    for a in mine:
        if a.entry.permission == Permission.ALLOW and a.entry.operation in allowing:
            return Decision(True, f"ALLOW ACL {a}")
    return Decision(False, "no matching ALLOW ACL")


def decide_any(
    acls: Iterable[AclBinding],
    policy: Policy,
    principal: str,
    host: str,
    op: Operation,
    resource_type: ResourceType,
) -> Decision:
    """May ``principal`` perform ``op`` on at least one resource of ``resource_type``?

    Kafka's ``authorizeByResourceType`` (used by InitProducerId for idempotent
    producers): an ALLOW counts unless a DENY dominates it, i.e. a DENY of ``*``,
    of the same literal name, or of a prefix of its name.
    """
    if principal in policy.super_users:
        return Decision(True, "super user")
    of_type = [a for a in acls if a.pattern.resource_type == resource_type]
    if not of_type and policy.allow_everyone_if_no_acl_found:
        return Decision(True, "no ACL of the resource type, allow.everyone.if.no.acl.found=true")
    mine = [a for a in of_type if _for(a, principal, host) and a.entry.operation in (op, Operation.ALL)]
    denies = [a.pattern for a in mine if a.entry.permission == Permission.DENY]
    if any(p.pattern_type == PatternType.LITERAL and p.name == WILDCARD_RESOURCE for p in denies):
        return Decision(False, f"DENY ACL on every {resource_type.name}")
    deny_literals = {p.name for p in denies if p.pattern_type == PatternType.LITERAL}
    deny_prefixes = [p.name for p in denies if p.pattern_type == PatternType.PREFIXED]
    for a in mine:
        if a.entry.permission != Permission.ALLOW:
            continue
        p = a.pattern
        if p.pattern_type == PatternType.LITERAL and p.name in deny_literals:
            continue
        if any(p.name.startswith(prefix) for prefix in deny_prefixes):
            continue
        return Decision(True, f"ALLOW ACL {a}")
    return Decision(False, f"no undominated ALLOW ACL on any {resource_type.name}")
