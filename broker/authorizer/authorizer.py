"""The broker's authorizer: the ACL set in memory and on disk, decisions, audit log and counts.

Turned on by ``authorizer.class.name`` naming Kafka's authorizer (either of its
class names); empty leaves the broker open, as Kafka does. Decisions are made by
``broker.authorizer.matcher``; this class adds what needs state: the current ACLs
(indexed by resource type), persistence, the audit log and the allow/deny counts.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Final

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from broker.authorizer.acl import AclBinding, AclBindingFilter, Operation, Resource, ResourceType
from broker.authorizer.matcher import Decision, Policy, decide, decide_any
from broker.authorizer.store import AclStore

if TYPE_CHECKING:
    from broker.config import BrokerConfig

# Kafka's audit logger is ``kafka.authorizer.logger``; decisions go there at DEBUG.
audit = logging.getLogger("broker.authorizer.audit")

AUTHORIZER_CLASSES: Final = frozenset(
    {
        "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "kafka.security.authorizer.AclAuthorizer",
        "kafka.security.auth.SimpleAclAuthorizer",
    }
)


def check_authorizer_class(name: str) -> str:
    """``authorizer.class.name`` validation: empty (off) or one of Kafka's ACL authorizers."""
    name = name.strip()
    if name and name not in AUTHORIZER_CLASSES:
        raise ValueError(
            f"unknown authorizer {name!r}; use one of {', '.join(sorted(AUTHORIZER_CLASSES))} "
            "or leave it empty"
        )
    return name


def parse_super_users(value: str) -> frozenset[str]:
    """``super.users``: principals separated by semicolons, e.g. ``User:admin;User:bob``."""
    out = set()
    for item in (v.strip() for v in value.split(";")):
        if not item:
            continue
        kind, sep, who = item.partition(":")
        if not sep or not kind or not who:
            raise ValueError(f"super.users entry {item!r} is not a principal of the form Type:name")
        out.add(item)
    return frozenset(out)


class Authorizer:
    """ACL-based authorization with Kafka's semantics; one per broker, used on its event loop."""

    def __init__(self, store: AclStore, policy: Policy) -> None:
        self.store = store
        self.policy = policy
        self.version = 0  # bumped on every ACL change, for response caches
        self.allowed = 0
        self.denied = 0
        self._acls: set[AclBinding] = store.load()
        self._by_type: dict[ResourceType, list[AclBinding]] = {}
        self._reindex()

    @property
    def acls(self) -> frozenset[AclBinding]:
        return frozenset(self._acls)

    def _reindex(self) -> None:
        by_type: defaultdict[ResourceType, list[AclBinding]] = defaultdict(list)
        for a in self._acls:
            by_type[a.pattern.resource_type].append(a)
        self._by_type = dict(by_type)
        self.version += 1

    # -- decisions --------------------------------------------------------------------

    def authorize(self, principal: str, host: str, op: Operation, resource: Resource, api: str) -> bool:
        d = decide(self._by_type.get(resource.resource_type, ()), self.policy, principal, host, op, resource)
        self._record(d, principal, host, op, str(resource), api)
        return d.allowed

    def authorize_any(
        self, principal: str, host: str, op: Operation, resource_type: ResourceType, api: str
    ) -> bool:
        d = decide_any(self._by_type.get(resource_type, ()), self.policy, principal, host, op, resource_type)
        self._record(d, principal, host, op, f"any {resource_type.name}", api)
        return d.allowed

    def _record(self, d: Decision, principal: str, host: str, op: Operation, resource: str, api: str) -> None:
        if d.allowed:
            self.allowed += 1
        else:
            self.denied += 1
        if audit.isEnabledFor(logging.DEBUG):
            audit.debug(
                "Principal = %s is %s operation = %s from host = %s on resource = %s for request = %s "
                "based on %s",
                principal,
                "Allowed" if d.allowed else "Denied",
                op.name,
                host,
                resource,
                api,
                d.reason,
            )

    # -- ACL administration -----------------------------------------------------------

    def create(self, bindings: Iterable[AclBinding]) -> None:
        """Add ACLs (adding one that exists is a no-op, as in Kafka) and persist them."""
        new = set(bindings) - self._acls
        if not new:
            return
        self.store.save(self._acls | new)
        self._acls |= new
        self._reindex()

    def describe(self, flt: AclBindingFilter) -> list[AclBinding]:
        return sorted((a for a in self._acls if flt.matches(a)), key=str)

    def delete(self, filters: Iterable[AclBindingFilter]) -> list[list[AclBinding]]:
        """Remove the ACLs each filter matches; returns them per filter (an ACL may match several)."""
        matched = [self.describe(f) for f in filters]
        gone = {a for m in matched for a in m}
        if gone:
            self.store.save(self._acls - gone)
            self._acls -= gone
            self._reindex()
        return matched

    def collect(self) -> Iterator[Metric]:
        """Kafka's authorizer-metrics (StandardAuthorizer), as Prometheus counters and a gauge."""
        yield CounterMetricFamily(
            "kafka_server_authorizer_authorization_allowed",
            "Authorization checks that allowed the operation.",
            value=self.allowed,
        )
        yield CounterMetricFamily(
            "kafka_server_authorizer_authorization_denied",
            "Authorization checks that denied the operation.",
            value=self.denied,
        )
        yield GaugeMetricFamily(
            "kafka_server_authorizer_acls_total_count", "ACLs defined.", value=len(self._acls)
        )


def create_authorizer(config: BrokerConfig, data_dir: str) -> Authorizer | None:
    """The authorizer ``authorizer.class.name`` asks for, with its ACLs loaded from ``data_dir``."""
    if not config.authorizer_class_name:
        return None
    return Authorizer(
        AclStore(data_dir),
        Policy(parse_super_users(config.super_users), config.allow_everyone_if_no_acl_found),
    )
