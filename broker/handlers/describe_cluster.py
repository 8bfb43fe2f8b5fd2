"""DescribeCluster: this broker is the whole cluster and its controller."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import CLUSTER, Operation, authorize
from broker.broker import RequestContext

if TYPE_CHECKING:
    from broker.protocol.requests import DescribeClusterRequest


async def handle(ctx: RequestContext, req: DescribeClusterRequest) -> Any:
    b = ctx.broker
    ep = b.endpoint_for(ctx.listener)
    if not authorize(ctx, Operation.DESCRIBE, CLUSTER):
        return ctx.respond(
            error_code=ErrorCode.cluster_authorization_failed,
            endpoint_type=1,
            cluster_id="",
            controller_id=-1,
            brokers=(),
            cluster_authorized_operations=-2147483648,
        )
    return ctx.respond(
        error_code=ErrorCode.none,
        endpoint_type=1,
        cluster_id=b.cluster_id,
        controller_id=b.node_id,
        brokers=[{"broker_id": b.node_id, "host": ep.host, "port": ep.port, "rack": None}],
        cluster_authorized_operations=-2147483648,
    )
