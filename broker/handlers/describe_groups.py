"""DescribeGroups: state, protocol and members (with metadata and assignment) of groups."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import Operation, authorize, group
from broker.broker import RequestContext
from broker.group.model import State

if TYPE_CHECKING:
    from broker.protocol.requests import DescribeGroupsRequest


async def handle(ctx: RequestContext, req: DescribeGroupsRequest) -> Any:
    out = []
    for gid in req.groups:
        if not authorize(ctx, Operation.DESCRIBE, group(gid)):
            out.append(
                {
                    "error_code": ErrorCode.group_authorization_failed,
                    "group_id": gid,
                    "group_state": "",
                    "protocol_type": "",
                    "protocol_data": "",
                    "members": (),
                    "authorized_operations": -2147483648,
                }
            )
            continue
        found = ctx.broker.groups.describe(gid)
        if found is None:
            out.append(
                {
                    "error_code": ErrorCode.none,
                    "group_id": gid,
                    "group_state": State.DEAD,
                    "protocol_type": "",
                    "protocol_data": "",
                    "members": (),
                    "authorized_operations": -2147483648,
                }
            )
            continue
        stable = found.state == State.STABLE
        out.append(
            {
                "error_code": ErrorCode.none,
                "group_id": gid,
                "group_state": found.state,
                "protocol_type": found.protocol_type or "",
                "protocol_data": found.protocol_name or "",
                "members": [
                    {
                        "member_id": m.member_id,
                        "group_instance_id": m.instance_id,
                        "client_id": m.client_id,
                        "client_host": m.client_host,
                        "member_metadata": m.metadata_for(found.protocol_name),
                        "member_assignment": m.assignment if stable else b"",
                    }
                    for m in found.members.values()
                ],
                "authorized_operations": -2147483648,
            }
        )
    return ctx.respond(groups=out)
