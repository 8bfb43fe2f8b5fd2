"""EndTxn: commit or abort the producer's transaction (answered once Prepare* is logged; the
markers on every partition of it, then Complete*, follow once the answer is written and
before any request that arrives after it, as Kafka's coordinator answers first). Needs
WRITE on the transactional id."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import Operation, authorize, transactional_id
from broker.broker import RequestContext
from broker.transactions.codes import for_version

if TYPE_CHECKING:
    from broker.protocol.requests import EndTxnRequest

FENCED_SINCE = 2


async def handle(ctx: RequestContext, req: EndTxnRequest) -> Any:
    if not authorize(ctx, Operation.WRITE, transactional_id(req.transactional_id)):
        return ctx.respond(error_code=ErrorCode.transactional_id_authorization_failed)
    error = ctx.broker.transactions.end_txn(
        req.transactional_id,
        req.producer_id,
        req.producer_epoch,
        req.committed,
        defer=ctx.after_answer or asyncio.get_running_loop().call_soon,
    )
    return ctx.respond(error_code=for_version(error, ctx.api_version, FENCED_SINCE))
