"""FindCoordinator: this broker coordinates every group (key_type 0) and every transactional
id (key_type 1); the internal topic behind each is created on the first lookup, as Kafka does."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import Operation, authorize, group, transactional_id
from broker.broker import RequestContext
from broker.storage.log import StorageError

if TYPE_CHECKING:
    from broker.protocol.requests import FindCoordinatorRequest

GROUP = 0
TRANSACTION = 1


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
    if key_type not in (GROUP, TRANSACTION):
        return ctx.respond(
            error_code=ErrorCode.invalid_request,
            node_id=-1,
            host="",
            port=-1,
            error_message=f"unknown key type {key_type}",
        )
    if key_type == TRANSACTION and not key:
        # Kafka: a transaction coordinator lookup needs a transactional id.
        return ctx.respond(
            error_code=ErrorCode.invalid_request,
            node_id=-1,
            host="",
            port=-1,
            error_message="no transactional id given",
        )
    try:
        if key_type == GROUP:
            b.groups.ensure_offsets_topic()
        else:
            b.transactions.txn_log.ensure_topic()
    except (StorageError, OSError) as exc:
        return ctx.respond(
            error_code=ErrorCode.coordinator_not_available,
            node_id=-1,
            host="",
            port=-1,
            error_message=str(exc),
        )
    ep = b.endpoint_for(ctx.listener)
    return ctx.respond(error_code=ErrorCode.none, node_id=b.node_id, host=ep.host, port=ep.port)
