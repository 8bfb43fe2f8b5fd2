"""DeleteGroups: only groups without members; their offsets go with them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import Operation, authorize, group
from broker.broker import RequestContext

if TYPE_CHECKING:
    from broker.protocol.requests import DeleteGroupsRequest


async def handle(ctx: RequestContext, req: DeleteGroupsRequest) -> Any:
    return ctx.respond(
        results=[
            {
                "group_id": g,
                "error_code": ctx.broker.groups.delete_group(g)
                if authorize(ctx, Operation.DELETE, group(g))
                else ErrorCode.group_authorization_failed,
            }
            for g in req.groups_names
        ]
    )
