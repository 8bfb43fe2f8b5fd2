"""LeaveGroup: v0-2 name one member; v3+ a batch of members (by member or instance id)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import Operation, authorize, group
from broker.broker import RequestContext

if TYPE_CHECKING:
    from broker.protocol.requests import LeaveGroupRequest


async def handle(ctx: RequestContext, req: LeaveGroupRequest) -> Any:
    if not authorize(ctx, Operation.READ, group(req.group_id)):
        return ctx.respond(error_code=ErrorCode.group_authorization_failed, members=())
    if hasattr(req, "members"):  # v3+ leave in batches
        members = [(m.member_id, m.group_instance_id) for m in req.members]
    else:
        members = [(req.member_id, None)]
    error, errors = ctx.broker.groups.leave(req.group_id, members)
    if ctx.api_version < 3:
        return ctx.respond(error_code=errors[0] if errors else error)
    return ctx.respond(
        error_code=error,
        members=[
            {"member_id": m, "group_instance_id": i, "error_code": e}
            for (m, i), e in zip(members, errors, strict=True)
        ],
    )
