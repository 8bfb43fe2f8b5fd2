"""The pure ACL decision, exhaustively: Kafka's StandardAuthorizer rules as properties."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from broker.authorizer.acl import (
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    InvalidAcl,
    Operation,
    PatternType,
    Permission,
    Resource,
    ResourcePattern,
    ResourceType,
    new_binding,
)
from broker.authorizer.matcher import Policy, decide, decide_any

REAL_OPS = [op for op in Operation if op not in (Operation.UNKNOWN, Operation.ANY)]
TYPES = [ResourceType.TOPIC, ResourceType.GROUP, ResourceType.TRANSACTIONAL_ID]
NAMES = st.sampled_from(["orders", "orders-eu", "ord", "payments", "*"])
PRINCIPALS = st.sampled_from(["User:alice", "User:bob", "User:*"])
HOSTS = st.sampled_from(["127.0.0.1", "10.0.0.1", "*"])

acls = st.builds(
    lambda t, n, p, who, host, op, perm: AclBinding(
        ResourcePattern(t, n, p), AccessControlEntry(who, host, op, perm)
    ),
    st.sampled_from(TYPES),
    NAMES,
    st.sampled_from([PatternType.LITERAL, PatternType.PREFIXED]),
    PRINCIPALS,
    HOSTS,
    st.sampled_from(REAL_OPS),
    st.sampled_from([Permission.ALLOW, Permission.DENY]),
)
OPEN = Policy()


def acl(
    name: str,
    op: Operation,
    perm: Permission = Permission.ALLOW,
    who: str = "User:alice",
    host: str = "*",
    pattern: PatternType = PatternType.LITERAL,
    rtype: ResourceType = ResourceType.TOPIC,
) -> AclBinding:
    return AclBinding(ResourcePattern(rtype, name, pattern), AccessControlEntry(who, host, op, perm))


def alice(op: Operation, name: str = "orders", *bindings: AclBinding, host: str = "127.0.0.1") -> bool:
    return decide(bindings, OPEN, "User:alice", host, op, Resource(ResourceType.TOPIC, name)).allowed


@given(st.lists(acls, max_size=6), st.sampled_from(REAL_OPS), st.sampled_from(TYPES), NAMES, HOSTS)
def test_deny_beats_allow(
    bindings: list[AclBinding], op: Operation, rtype: ResourceType, name: str, host: str
) -> None:
    resource = Resource(rtype, name)
    deny = AclBinding(
        ResourcePattern(rtype, name, PatternType.LITERAL),
        AccessControlEntry("User:alice", "*", op, Permission.DENY),
    )
    allow_all = AclBinding(
        ResourcePattern(rtype, "*", PatternType.LITERAL),
        AccessControlEntry("User:*", "*", Operation.ALL, Permission.ALLOW),
    )
    assert not decide([*bindings, deny, allow_all], OPEN, "User:alice", host, op, resource).allowed


@given(st.lists(acls, max_size=6), st.sampled_from(REAL_OPS), st.sampled_from(TYPES), NAMES, HOSTS)
def test_super_users_may_do_anything(
    bindings: list[AclBinding], op: Operation, rtype: ResourceType, name: str, host: str
) -> None:
    policy = Policy(frozenset({"User:admin"}))
    assert decide(bindings, policy, "User:admin", host, op, Resource(rtype, name)).allowed
    assert decide_any(bindings, policy, "User:admin", host, op, rtype).allowed


@given(
    st.lists(acls, max_size=6), st.sampled_from(REAL_OPS), st.sampled_from(TYPES), NAMES, HOSTS, st.booleans()
)
def test_decision_agrees_with_a_direct_reading_of_the_rules(
    bindings: list[AclBinding], op: Operation, rtype: ResourceType, name: str, host: str, everyone: bool
) -> None:
    def applies(a: AclBinding) -> bool:
        p = a.pattern
        if p.resource_type != rtype:
            return False
        return name.startswith(p.name) if p.pattern_type == PatternType.PREFIXED else p.name in (name, "*")

    def mine(a: AclBinding) -> bool:
        return a.entry.principal in ("User:alice", "User:*") and a.entry.host in (host, "*")

    implied = {
        Operation.DESCRIBE: {Operation.READ, Operation.WRITE, Operation.DELETE, Operation.ALTER},
        Operation.DESCRIBE_CONFIGS: {Operation.ALTER_CONFIGS},
    }.get(op, set())
    relevant = [a for a in bindings if applies(a)]
    if not relevant:
        expected = everyone
    elif any(
        mine(a) and a.entry.permission == Permission.DENY and a.entry.operation in (op, Operation.ALL)
        for a in relevant
    ):
        expected = False
    else:
        expected = any(
            mine(a)
            and a.entry.permission == Permission.ALLOW
            and a.entry.operation in ({op, Operation.ALL} | implied)
            for a in relevant
        )
    got = decide(bindings, Policy(frozenset(), everyone), "User:alice", host, op, Resource(rtype, name))
    assert got.allowed == expected, got.reason


def test_literal_prefixed_and_wildcard_names() -> None:
    assert alice(Operation.READ, "orders", acl("orders", Operation.READ))
    assert not alice(Operation.READ, "orders-eu", acl("orders", Operation.READ))
    assert alice(Operation.READ, "orders-eu", acl("orders", Operation.READ, pattern=PatternType.PREFIXED))
    assert not alice(Operation.READ, "ord", acl("orders", Operation.READ, pattern=PatternType.PREFIXED))
    assert alice(Operation.READ, "anything", acl("*", Operation.READ))
    # A prefixed "*" is a literal prefix, not a wildcard.
    assert not alice(Operation.READ, "orders", acl("*", Operation.READ, pattern=PatternType.PREFIXED))
    # A prefixed DENY overrides a literal ALLOW.
    assert not alice(
        Operation.READ,
        "orders-eu",
        acl("orders-eu", Operation.READ),
        acl("orders", Operation.READ, Permission.DENY, pattern=PatternType.PREFIXED),
    )
    # Another resource type never applies.
    assert not alice(Operation.READ, "orders", acl("orders", Operation.READ, rtype=ResourceType.GROUP))


def test_principal_and_host_matching() -> None:
    assert alice(Operation.READ, "orders", acl("orders", Operation.READ, who="User:*"))
    assert not alice(Operation.READ, "orders", acl("orders", Operation.READ, who="User:bob"))
    assert alice(Operation.READ, "orders", acl("orders", Operation.READ, host="127.0.0.1"))
    assert not alice(Operation.READ, "orders", acl("orders", Operation.READ, host="10.0.0.9"))
    # A DENY from another host does not apply to this one.
    assert alice(
        Operation.READ,
        "orders",
        acl("orders", Operation.READ),
        acl("orders", Operation.READ, Permission.DENY, host="10.0.0.9"),
    )


def test_implied_operations() -> None:
    for op in (Operation.READ, Operation.WRITE, Operation.DELETE, Operation.ALTER, Operation.ALL):
        assert alice(Operation.DESCRIBE, "orders", acl("orders", op)), op
    assert not alice(Operation.DESCRIBE, "orders", acl("orders", Operation.CREATE))
    assert alice(Operation.DESCRIBE_CONFIGS, "orders", acl("orders", Operation.ALTER_CONFIGS))
    assert not alice(Operation.READ, "orders", acl("orders", Operation.DESCRIBE))
    # DENY is never implied: denying DESCRIBE does not deny READ, denying ALL denies everything.
    assert alice(
        Operation.READ,
        "orders",
        acl("orders", Operation.READ),
        acl("orders", Operation.DESCRIBE, Permission.DENY),
    )
    assert not alice(
        Operation.READ, "orders", acl("orders", Operation.READ), acl("orders", Operation.ALL, Permission.DENY)
    )


def test_allow_everyone_if_no_acl_found_only_when_the_resource_has_no_acl() -> None:
    everyone = Policy(allow_everyone_if_no_acl_found=True)
    orders = Resource(ResourceType.TOPIC, "orders")
    assert decide([], everyone, "User:alice", "h", Operation.READ, orders).allowed
    assert not decide([], OPEN, "User:alice", "h", Operation.READ, orders).allowed
    # An ACL for somebody else on the resource switches the default off for alice.
    bob_only = [acl("orders", Operation.READ, who="User:bob")]
    assert not decide(bob_only, everyone, "User:alice", "h", Operation.READ, orders).allowed
    # ACLs on other resources do not.
    assert decide(
        [acl("payments", Operation.READ)], everyone, "User:alice", "h", Operation.READ, orders
    ).allowed


def test_authorize_by_resource_type() -> None:
    def any_topic(*bindings: AclBinding) -> bool:
        return decide_any(bindings, OPEN, "User:alice", "h", Operation.WRITE, ResourceType.TOPIC).allowed

    assert not any_topic()
    assert any_topic(acl("orders", Operation.WRITE))
    assert any_topic(acl("ord", Operation.ALL, pattern=PatternType.PREFIXED))
    assert not any_topic(acl("orders", Operation.WRITE), acl("orders", Operation.WRITE, Permission.DENY))
    assert not any_topic(
        acl("orders-eu", Operation.WRITE),
        acl("orders", Operation.WRITE, Permission.DENY, pattern=PatternType.PREFIXED),
    )
    assert not any_topic(acl("orders", Operation.WRITE), acl("*", Operation.WRITE, Permission.DENY))
    assert any_topic(acl("orders", Operation.WRITE), acl("payments", Operation.WRITE, Permission.DENY))
    assert not any_topic(acl("orders", Operation.READ))


def test_filters() -> None:
    lit = acl("orders", Operation.READ)
    pre = acl("ord", Operation.WRITE, Permission.DENY, pattern=PatternType.PREFIXED)
    star = acl("*", Operation.READ, who="User:bob")
    everything = [lit, pre, star]

    def hits(f: AclBindingFilter) -> set[AclBinding]:
        return {a for a in everything if f.matches(a)}

    assert hits(AclBindingFilter()) == set(everything)
    assert hits(AclBindingFilter(name="orders")) == {lit}
    assert hits(AclBindingFilter(name="orders", pattern_type=PatternType.MATCH)) == {lit, pre, star}
    assert hits(AclBindingFilter(pattern_type=PatternType.PREFIXED)) == {pre}
    assert hits(AclBindingFilter(principal="User:bob")) == {star}
    assert hits(AclBindingFilter(permission=Permission.DENY)) == {pre}
    assert hits(AclBindingFilter(operation=Operation.READ, resource_type=ResourceType.GROUP)) == set()


def test_invalid_bindings_are_refused_with_the_reason() -> None:
    ok = dict(
        resource_type=2, name="t", pattern_type=3, principal="User:a", host="*", operation=3, permission=3
    )
    new_binding(**ok)  # type: ignore[arg-type]
    for bad, words in (
        ({"resource_type": 1}, "resourceType"),
        ({"pattern_type": 2}, "patternType"),
        ({"operation": 1}, "operation"),
        ({"permission": 1}, "permissionType"),
        ({"principal": "alice"}, "principal"),
        ({"name": ""}, "empty"),
        ({"resource_type": 4, "name": "other"}, "kafka-cluster"),
        ({"operation": 99}, "unknown operation"),
    ):
        try:
            new_binding(**{**ok, **bad})  # type: ignore[arg-type]
        except InvalidAcl as exc:
            assert words in str(exc), (bad, exc)
        else:
            raise AssertionError(f"{bad} was accepted")
