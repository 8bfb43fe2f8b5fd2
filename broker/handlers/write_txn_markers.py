"""WriteTxnMarkers: COMMIT/ABORT markers written on request. Kafka's coordinator sends it to
partition leaders; here it is what ``kafka-transactions.sh abort`` (Admin.abortTransaction)
uses to close a hanging transaction. Needs CLUSTER_ACTION."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import Operation, authorize_cluster
from broker.broker import RequestContext

if TYPE_CHECKING:
    from broker.protocol.requests import WriteTxnMarkersRequest


async def handle(ctx: RequestContext, req: WriteTxnMarkersRequest) -> Any:
    allowed = authorize_cluster(ctx, Operation.CLUSTER_ACTION)
    out = []
    for marker in req.markers:
        wanted = [(t.name, p) for t in marker.topics for p in t.partition_indexes]
        if allowed:
            errors = ctx.broker.transactions.admin_write_markers(
                marker.producer_id,
                marker.producer_epoch,
                marker.transaction_result,
                wanted,
                marker.coordinator_epoch,
            )
        else:
            errors = dict.fromkeys(wanted, ErrorCode.cluster_authorization_failed)
        by_topic: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for (name, p), error in errors.items():
            by_topic[name].append({"partition_index": p, "error_code": error})
        out.append(
            {
                "producer_id": marker.producer_id,
                "topics": [{"name": name, "partitions": parts} for name, parts in by_topic.items()],
            }
        )
    return ctx.respond(markers=out)
