"""JoinGroup: enter a group's rebalance; held until the group completes its join phase."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import Operation, authorize, group
from broker.broker import RequestContext

if TYPE_CHECKING:
    from broker.protocol.requests import JoinGroupRequest


async def handle(ctx: RequestContext, req: JoinGroupRequest) -> Any:
    v = ctx.api_version
    if not authorize(ctx, Operation.READ, group(req.group_id)):
        return ctx.respond(
            error_code=ErrorCode.group_authorization_failed,
            generation_id=-1,
            protocol_name="" if v < 7 else None,
            leader="",
            member_id=req.member_id,
            members=(),
        )
    session_ms = int(req.session_timeout.total_seconds() * 1000)
    rebalance_ms = (
        int(req.rebalance_timeout.total_seconds() * 1000) if hasattr(req, "rebalance_timeout") else session_ms
    )
    result = await ctx.broker.groups.join(
        group_id=req.group_id,
        member_id=req.member_id,
        instance_id=getattr(req, "group_instance_id", None),
        client_id=ctx.client_id or "",
        client_host=ctx.client_host,
        protocol_type=req.protocol_type,
        protocols=[(p.name, p.metadata) for p in req.protocols],
        session_timeout_ms=session_ms,
        rebalance_timeout_ms=rebalance_ms,
        require_known_member_id=v >= 4,
    )
    return ctx.respond(
        error_code=result.error,
        generation_id=result.generation,
        protocol_type=result.protocol_type,
        protocol_name=result.protocol_name if result.protocol_name is not None else ("" if v < 7 else None),
        leader=result.leader,
        skip_assignment=result.skip_assignment,
        member_id=result.member_id,
        members=[{"member_id": m, "group_instance_id": i, "metadata": meta} for m, i, meta in result.members],
    )
