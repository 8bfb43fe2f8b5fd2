"""ListGroups: every group with its protocol type (and state, v4+, filterable)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import CLUSTER, Operation, authorize, group
from broker.broker import RequestContext

if TYPE_CHECKING:
    from broker.protocol.requests import ListGroupsRequest


async def handle(ctx: RequestContext, req: ListGroupsRequest) -> Any:
    wanted = {s.lower() for s in getattr(req, "states_filter", ())}
    # CLUSTER DESCRIBE lists every group; otherwise only those the principal may describe.
    everything = authorize(ctx, Operation.DESCRIBE, CLUSTER)
    groups = [
        {"group_id": g.group_id, "protocol_type": g.protocol_type or "", "group_state": g.state}
        for g in ctx.broker.groups.groups.values()
        if (not wanted or g.state.lower() in wanted)
        and (everything or authorize(ctx, Operation.DESCRIBE, group(g.group_id)))
    ]
    return ctx.respond(error_code=ErrorCode.none, groups=groups)
