"""FindCoordinator: this broker coordinates every group. Transactions are not supported."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import Operation, authorize, group, transactional_id
from broker.broker import RequestContext
from broker.storage.log import StorageError

if TYPE_CHECKING:
    from broker.protocol.requests import FindCoordinatorRequest

GROUP = 0


async def handle(ctx: RequestContext, req: FindCoordinatorRequest) -> Any:
    b = ctx.broker
    key_type = getattr(req, "key_type", GROUP)
    key = getattr(req, "key", "")
    if key_type == GROUP and not authorize(ctx, Operation.DESCRIBE, group(key)):
        return ctx.respond(
            error_code=ErrorCode.group_authorization_failed, node_id=-1, host="", port=-1, error_message=None
        )
    if key_type != GROUP and not authorize(ctx, Operation.DESCRIBE, transactional_id(key)):
        return ctx.respond(
            error_code=ErrorCode.transactional_id_authorization_failed,
            node_id=-1,
            host="",
            port=-1,
            error_message=None,
        )
    if key_type != GROUP:
        return ctx.respond(
            error_code=ErrorCode.coordinator_not_available,
            node_id=-1,
            host="",
            port=-1,
            error_message="transactions are not supported by this broker",
        )
    try:
        b.groups.ensure_offsets_topic()
    except StorageError as exc:
        return ctx.respond(
            error_code=ErrorCode.coordinator_not_available,
            node_id=-1,
            host="",
            port=-1,
            error_message=str(exc),
        )
    ep = b.endpoint_for(ctx.listener)
    return ctx.respond(error_code=ErrorCode.none, node_id=b.node_id, host=ep.host, port=ep.port)
