"""Kafka's ACL vocabulary: resource, pattern, operation and permission types, bindings and filters.

The enum values are Kafka's wire codes (``ResourceType``, ``PatternType``,
``AclOperation``, ``AclPermissionType`` in the Java client), so request fields map
onto them directly. Nothing here does I/O.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

CLUSTER_NAME: Final = "kafka-cluster"
WILDCARD_RESOURCE: Final = "*"
WILDCARD_PRINCIPAL: Final = "User:*"
WILDCARD_HOST: Final = "*"


class ResourceType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class Operation(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


class Permission(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


class InvalidAcl(ValueError):
    """An ACL binding or filter Kafka would refuse; the message says which field and why."""


@dataclass(frozen=True, slots=True)
class Resource:
    """A concrete resource a request touches (always a literal name)."""

    resource_type: ResourceType
    name: str

    def __str__(self) -> str:
        return f"{self.resource_type.name.title().replace('_', '')}:{self.name}"


CLUSTER: Final = Resource(ResourceType.CLUSTER, CLUSTER_NAME)


def topic(name: str) -> Resource:
    return Resource(ResourceType.TOPIC, name)


def group(name: str) -> Resource:
    return Resource(ResourceType.GROUP, name)


def transactional_id(name: str) -> Resource:
    return Resource(ResourceType.TRANSACTIONAL_ID, name)


@dataclass(frozen=True, slots=True)
class ResourcePattern:
    """The resource side of an ACL: a literal name (``*`` for all) or a name prefix."""

    resource_type: ResourceType
    name: str
    pattern_type: PatternType

    def __str__(self) -> str:
        return (
            f"ResourcePattern(resourceType={self.resource_type.name}, name={self.name}, "
            f"patternType={self.pattern_type.name})"
        )


@dataclass(frozen=True, slots=True)
class AccessControlEntry:
    """Who (principal, host) may or may not (permission) do what (operation)."""

    principal: str
    host: str
    operation: Operation
    permission: Permission

    def __str__(self) -> str:
        return (
            f"(principal={self.principal}, host={self.host}, operation={self.operation.name}, "
            f"permissionType={self.permission.name})"
        )


@dataclass(frozen=True, slots=True)
class AclBinding:
    """One ACL: a resource pattern bound to an access control entry."""

    pattern: ResourcePattern
    entry: AccessControlEntry

    def __str__(self) -> str:
        return f"{self.pattern}: {self.entry}"


@dataclass(frozen=True, slots=True)
class AclBindingFilter:
    """Kafka's AclBindingFilter: ANY/None fields match everything; MATCH matches what would apply."""

    resource_type: ResourceType = ResourceType.ANY
    name: str | None = None
    pattern_type: PatternType = PatternType.ANY
    principal: str | None = None
    host: str | None = None
    operation: Operation = Operation.ANY
    permission: Permission = Permission.ANY

    def check(self) -> None:
        """Kafka refuses filters with UNKNOWN elements (from an enum value it cannot read)."""
        for field, value in (
            ("resource type", self.resource_type),
            ("pattern type", self.pattern_type),
            ("operation", self.operation),
            ("permission type", self.permission),
        ):
            if value.name == "UNKNOWN":
                raise InvalidAcl(f"the filter's {field} must not be UNKNOWN")

    def matches(self, acl: AclBinding) -> bool:
        p, e = acl.pattern, acl.entry
        if self.resource_type != ResourceType.ANY and self.resource_type != p.resource_type:
            return False
        if self.pattern_type == PatternType.MATCH:
            if self.name is not None and not (
                (p.pattern_type == PatternType.LITERAL and p.name in (self.name, WILDCARD_RESOURCE))
                or (p.pattern_type == PatternType.PREFIXED and self.name.startswith(p.name))
            ):
                return False
        else:
            if self.pattern_type != PatternType.ANY and self.pattern_type != p.pattern_type:
                return False
            if self.name is not None and self.name != p.name:
                return False
        if self.principal is not None and self.principal != e.principal:
            return False
        if self.host is not None and self.host != e.host:
            return False
        if self.operation != Operation.ANY and self.operation != e.operation:
            return False
        return self.permission == Permission.ANY or self.permission == e.permission


def _enum(cls: type[enum.IntEnum], value: int, what: str) -> enum.IntEnum:
    try:
        return cls(value)
    except ValueError:
        raise InvalidAcl(f"unknown {what} {value}") from None


def new_binding(
    resource_type: int,
    name: str,
    pattern_type: int,
    principal: str,
    host: str,
    operation: int,
    permission: int,
) -> AclBinding:
    """A binding from CreateAcls fields, validated as Kafka's controller does."""
    rtype = ResourceType(_enum(ResourceType, resource_type, "resource type"))
    ptype = PatternType(_enum(PatternType, pattern_type, "pattern type"))
    op = Operation(_enum(Operation, operation, "operation"))
    perm = Permission(_enum(Permission, permission, "permission type"))
    if rtype in (ResourceType.UNKNOWN, ResourceType.ANY):
        raise InvalidAcl(f"Invalid resourceType {rtype.name}")
    if ptype not in (PatternType.LITERAL, PatternType.PREFIXED):
        raise InvalidAcl(f"Invalid patternType {ptype.name}")
    if op in (Operation.UNKNOWN, Operation.ANY):
        raise InvalidAcl(f"Invalid operation {op.name}")
    if perm in (Permission.UNKNOWN, Permission.ANY):
        raise InvalidAcl(f"Invalid permissionType {perm.name}")
    if not name:
        raise InvalidAcl("Resource name should not be empty")
    if rtype == ResourceType.CLUSTER and (name != CLUSTER_NAME or ptype != PatternType.LITERAL):
        raise InvalidAcl(f"The only valid name for the CLUSTER resource is {CLUSTER_NAME} (LITERAL)")
    kind, sep, who = principal.partition(":")
    if not sep or not kind or not who:
        raise InvalidAcl(
            f"Could not parse principal from `{principal}` (expected Type:name, e.g. User:alice)"
        )
    if not host:
        raise InvalidAcl("Host should not be empty (use * for every host)")
    return AclBinding(ResourcePattern(rtype, name, ptype), AccessControlEntry(principal, host, op, perm))


def new_filter(
    resource_type: int,
    name: str | None,
    pattern_type: int,
    principal: str | None,
    host: str | None,
    operation: int,
    permission: int,
) -> AclBindingFilter:
    """A filter from DescribeAcls/DeleteAcls fields; values Kafka does not know read as UNKNOWN."""

    def read(cls: type[enum.IntEnum], value: int) -> enum.IntEnum:
        try:
            return cls(value)
        except ValueError:
            return cls(0)

    f = AclBindingFilter(
        ResourceType(read(ResourceType, resource_type)),
        name,
        PatternType(read(PatternType, pattern_type)),
        principal,
        host,
        Operation(read(Operation, operation)),
        Permission(read(Permission, permission)),
    )
    f.check()
    return f
