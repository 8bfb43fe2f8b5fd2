"""Heartbeat: keeps a member's session alive; REBALANCE_IN_PROGRESS tells it to rejoin."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import Operation, authorize, group
from broker.broker import RequestContext

if TYPE_CHECKING:
    from broker.protocol.requests import HeartbeatRequest


async def handle(ctx: RequestContext, req: HeartbeatRequest) -> Any:
    if not authorize(ctx, Operation.READ, group(req.group_id)):
        return ctx.respond(error_code=ErrorCode.group_authorization_failed)
    error = ctx.broker.groups.heartbeat(
        req.group_id, req.generation_id, req.member_id, getattr(req, "group_instance_id", None)
    )
    return ctx.respond(error_code=error)
