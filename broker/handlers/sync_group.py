"""SyncGroup: the leader hands in assignments; everyone receives theirs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import Operation, authorize, group
from broker.broker import RequestContext

if TYPE_CHECKING:
    from broker.protocol.requests import SyncGroupRequest


async def handle(ctx: RequestContext, req: SyncGroupRequest) -> Any:
    if not authorize(ctx, Operation.READ, group(req.group_id)):
        return ctx.respond(error_code=ErrorCode.group_authorization_failed, assignment=b"")
    result = await ctx.broker.groups.sync(
        group_id=req.group_id,
        generation=req.generation_id,
        member_id=req.member_id,
        instance_id=getattr(req, "group_instance_id", None),
        protocol_type=getattr(req, "protocol_type", None),
        protocol_name=getattr(req, "protocol_name", None),
        assignments=[(a.member_id, a.assignment) for a in req.assignments],
    )
    return ctx.respond(
        error_code=result.error,
        protocol_type=result.protocol_type,
        protocol_name=result.protocol_name,
        assignment=result.assignment,
    )
