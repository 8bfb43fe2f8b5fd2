"""What handlers call: one check per rule of Kafka's KafkaApis, reading identity from the request.

With no authorizer configured every check passes, as in Kafka.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from broker.authorizer.acl import CLUSTER, Operation, Resource, ResourceType

if TYPE_CHECKING:
    from broker.broker import RequestContext


def _api(ctx: RequestContext) -> str:
    from broker.protocol.versions import ApiKey

    try:
        return ApiKey(ctx.api_key).name
    except ValueError:
        return str(ctx.api_key)


def authorize(ctx: RequestContext, op: Operation, resource: Resource) -> bool:
    """May the request's principal, from its host, perform ``op`` on ``resource``?"""
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        return True
    return authorizer.authorize(ctx.principal, ctx.client_host, op, resource, _api(ctx))


def authorize_cluster(ctx: RequestContext, op: Operation) -> bool:
    return authorize(ctx, op, CLUSTER)


def authorize_any(ctx: RequestContext, op: Operation, resource_type: ResourceType) -> bool:
    """May the principal perform ``op`` on at least one resource of the type (authorizeByResourceType)?"""
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        return True
    return authorizer.authorize_any(ctx.principal, ctx.client_host, op, resource_type, _api(ctx))


def allowed_names(ctx: RequestContext, op: Operation, resources: Iterable[Resource]) -> set[str]:
    """The names of ``resources`` the principal may ``op`` (each checked once)."""
    return {r.name for r in set(resources) if authorize(ctx, op, r)}
