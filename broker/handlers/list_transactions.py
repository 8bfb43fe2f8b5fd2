"""ListTransactions: the transactional ids this coordinator knows, filtered by state names,
producer ids and (v1) a minimum running time; ids the principal may not DESCRIBE are left
out, and state names Kafka does not know come back in ``unknown_state_filters``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import Operation, authorize, transactional_id
from broker.broker import RequestContext
from broker.transactions.state import STATE_BY_NAME

if TYPE_CHECKING:
    from broker.protocol.requests import ListTransactionsRequest


async def handle(ctx: RequestContext, req: ListTransactionsRequest) -> Any:
    coordinator = ctx.broker.transactions
    unknown = [name for name in req.state_filters if name not in STATE_BY_NAME]
    states = {STATE_BY_NAME[name] for name in req.state_filters if name in STATE_BY_NAME}
    if req.state_filters and not states:
        # Only unknown names: nothing can match them (Kafka answers an empty list).
        return ctx.respond(error_code=ErrorCode.none, unknown_state_filters=unknown, transaction_states=[])
    metas, error = coordinator.list_transactions(
        states, set(req.producer_id_filters), getattr(req, "duration_filter", -1)
    )
    listed = [
        {
            "transactional_id": m.transactional_id,
            "producer_id": m.producer_id,
            "transaction_state": m.state.kafka_name,
        }
        for m in metas
        if authorize(ctx, Operation.DESCRIBE, transactional_id(m.transactional_id))
    ]
    return ctx.respond(error_code=error, unknown_state_filters=unknown, transaction_states=listed)
