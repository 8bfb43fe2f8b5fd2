"""InitProducerId: ids for idempotent producers; an existing id gets its epoch bumped (KIP-360)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import CLUSTER, Operation, ResourceType, authorize, authorize_any, transactional_id
from broker.broker import RequestContext
from broker.storage.log import StorageError

if TYPE_CHECKING:
    from broker.protocol.requests import InitProducerIdRequest

MAX_EPOCH = 32767


async def handle(ctx: RequestContext, req: InitProducerIdRequest) -> Any:
    b = ctx.broker
    if req.transactional_id is None and not (
        # Kafka 2.8+: an idempotent producer needs CLUSTER IDEMPOTENT_WRITE or WRITE on some topic.
        authorize(ctx, Operation.IDEMPOTENT_WRITE, CLUSTER)
        or authorize_any(ctx, Operation.WRITE, ResourceType.TOPIC)
    ):
        return ctx.respond(
            error_code=ErrorCode.cluster_authorization_failed, producer_id=-1, producer_epoch=-1
        )
    if req.transactional_id is not None and not authorize(
        ctx, Operation.WRITE, transactional_id(req.transactional_id)
    ):
        return ctx.respond(
            error_code=ErrorCode.transactional_id_authorization_failed, producer_id=-1, producer_epoch=-1
        )
    if req.transactional_id is not None:
        # Transactions are not implemented; refuse clearly instead of pretending.
        return ctx.respond(
            error_code=ErrorCode.transactional_id_authorization_failed, producer_id=-1, producer_epoch=-1
        )
    pid = getattr(req, "producer_id", -1)
    epoch = getattr(req, "producer_epoch", -1)
    try:
        if pid >= 0 and 0 <= epoch < MAX_EPOCH - 1:
            return ctx.respond(error_code=ErrorCode.none, producer_id=pid, producer_epoch=epoch + 1)
        return ctx.respond(
            error_code=ErrorCode.none, producer_id=b.logs.metadata.allocate_producer_id(), producer_epoch=0
        )
    except (StorageError, OSError):
        return ctx.respond(error_code=ErrorCode.coordinator_not_available, producer_id=-1, producer_epoch=-1)
