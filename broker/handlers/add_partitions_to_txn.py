"""AddPartitionsToTxn: v0-3 from a producer (one transaction), v4+ from brokers (batched,
``verify_only`` for KIP-890's produce verification).

Authorization as ``KafkaApis``: v0-3 need WRITE on the transactional id and on each topic
(a refused or unknown partition fails the request; the others are OPERATION_NOT_ATTEMPTED);
v4+ need CLUSTER_ACTION.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import Operation, allowed_names, authorize, authorize_cluster, topic, transactional_id
from broker.broker import RequestContext
from broker.transactions.codes import for_version

if TYPE_CHECKING:
    from broker.protocol.requests import AddPartitionsToTxnRequest

FENCED_SINCE = 2
TopicPartition = tuple[str, int]


def _results(errors: dict[TopicPartition, ErrorCode]) -> list[dict[str, Any]]:
    by_topic: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for (name, partition), error in errors.items():
        by_topic[name].append({"partition_index": partition, "partition_error_code": error})
    return [{"name": name, "results_by_partition": parts} for name, parts in by_topic.items()]


async def handle(ctx: RequestContext, req: AddPartitionsToTxnRequest) -> Any:
    if hasattr(req, "transactions"):
        return _batched(ctx, req)
    tid = req.v3_and_below_transactional_id
    wanted: list[TopicPartition] = [(t.name, p) for t in req.v3_and_below_topics for p in t.partitions]
    errors = _add(
        ctx, tid, req.v3_and_below_producer_id, req.v3_and_below_producer_epoch, wanted, client=True
    )
    return ctx.respond(results_by_topic_v3_and_below=_results(errors))


def _add(
    ctx: RequestContext, tid: str, pid: int, epoch: int, wanted: list[TopicPartition], client: bool
) -> dict[TopicPartition, ErrorCode]:
    """A producer's request (``client``) is authorized per id and topic here; a broker's was
    by CLUSTER_ACTION."""
    b = ctx.broker
    if client and not authorize(ctx, Operation.WRITE, transactional_id(tid)):
        return dict.fromkeys(wanted, ErrorCode.transactional_id_authorization_failed)
    failed: dict[TopicPartition, ErrorCode] = {}
    if client:
        writable = allowed_names(ctx, Operation.WRITE, (topic(name) for name, _ in wanted))
        for name, p in wanted:
            if name not in writable:
                failed[(name, p)] = ErrorCode.topic_authorization_failed
            elif b.logs.get(name, p) is None:
                failed[(name, p)] = ErrorCode.unknown_topic_or_partition
    if failed:
        return {tp: failed.get(tp, ErrorCode.operation_not_attempted) for tp in wanted}
    error = b.transactions.add_partitions(tid, pid, epoch, wanted)
    return dict.fromkeys(wanted, for_version(error, ctx.api_version, FENCED_SINCE))


def _batched(ctx: RequestContext, req: Any) -> Any:
    if not authorize_cluster(ctx, Operation.CLUSTER_ACTION):
        return ctx.respond(error_code=ErrorCode.cluster_authorization_failed, results_by_transaction=[])
    coordinator = ctx.broker.transactions
    out = []
    for txn in req.transactions:
        wanted = [(t.name, p) for t in txn.topics for p in t.partitions]
        if txn.verify_only:
            errors = {
                tp: coordinator.verify(txn.transactional_id, txn.producer_id, txn.producer_epoch, tp)
                for tp in wanted
            }
        else:
            errors = _add(
                ctx, txn.transactional_id, txn.producer_id, txn.producer_epoch, wanted, client=False
            )
        out.append({"transactional_id": txn.transactional_id, "topic_results": _results(errors)})
    return ctx.respond(error_code=ErrorCode.none, results_by_transaction=out)
