"""InitProducerId: ids for idempotent producers (an existing id gets its epoch bumped,
KIP-360); with a transactional id the transaction coordinator answers (epoch bump, fencing
of the previous instance, its open transaction aborted first)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import CLUSTER, Operation, ResourceType, authorize, authorize_any, transactional_id
from broker.broker import RequestContext
from broker.storage.log import StorageError
from broker.transactions.codes import for_version

if TYPE_CHECKING:
    from broker.protocol.requests import InitProducerIdRequest

MAX_EPOCH = 32767
FENCED_SINCE = 4


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
    pid = getattr(req, "producer_id", -1)
    epoch = getattr(req, "producer_epoch", -1)
    if req.transactional_id is not None:
        result = b.transactions.init_producer_id(
            req.transactional_id, int(req.transaction_timeout.total_seconds() * 1000), pid, epoch
        )
        return ctx.respond(
            error_code=for_version(result.error, ctx.api_version, FENCED_SINCE),
            producer_id=result.producer_id,
            producer_epoch=result.producer_epoch,
        )
    try:
        if pid >= 0 and 0 <= epoch < MAX_EPOCH - 1:
            return ctx.respond(error_code=ErrorCode.none, producer_id=pid, producer_epoch=epoch + 1)
        return ctx.respond(
            error_code=ErrorCode.none, producer_id=b.logs.metadata.allocate_producer_id(), producer_epoch=0
        )
    except (StorageError, OSError):
        return ctx.respond(error_code=ErrorCode.coordinator_not_available, producer_id=-1, producer_epoch=-1)
