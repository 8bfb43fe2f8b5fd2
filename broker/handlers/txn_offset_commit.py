"""TxnOffsetCommit: a transactional producer commits a consumer group's offsets inside its
transaction (``send_offsets_to_transaction``); they become visible only when it commits.

As Kafka's ``KafkaApis.handleTxnOffsetCommitRequest``: TRANSACTIONAL_ID WRITE, then GROUP
READ (either failing answers every partition with its error), TOPIC READ per topic,
unknown topics or partitions answered per partition. Then, as the group coordinator
does (KIP-890), the group's ``__consumer_offsets`` partition must be part of the
producer's ongoing transaction (AddOffsetsToTxn added it) before anything is written.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import Operation, allowed_names, authorize, group, topic, transactional_id
from broker.broker import RequestContext
from broker.group.offsets_log import OFFSETS_TOPIC

if TYPE_CHECKING:
    from broker.protocol.requests import TxnOffsetCommitRequest

log = logging.getLogger(__name__)

# Versions before 4 predate TRANSACTION_ABORTABLE (KIP-890): clients get INVALID_TXN_STATE.
_ABORTABLE_SINCE = 4
# Versions before 2 predate the clients' handling of COORDINATOR_LOAD_IN_PROGRESS (KAFKA-7296).
_LOAD_IN_PROGRESS_SINCE = 2


async def handle(ctx: RequestContext, req: TxnOffsetCommitRequest) -> Any:
    if not authorize(ctx, Operation.WRITE, transactional_id(req.transactional_id)):
        return _respond(ctx, req, lambda _t, _p: ErrorCode.transactional_id_authorization_failed)
    if not authorize(ctx, Operation.READ, group(req.group_id)):
        return _respond(ctx, req, lambda _t, _p: ErrorCode.group_authorization_failed)
    readable = allowed_names(ctx, Operation.READ, (topic(t.name) for t in req.topics))
    refused: dict[tuple[str, int], ErrorCode] = {}
    items = []
    for t in req.topics:
        info = ctx.broker.logs.topic(t.name) if t.name in readable else None
        for p in t.partitions:
            if t.name not in readable:
                refused[(t.name, p.partition_index)] = ErrorCode.topic_authorization_failed
            elif info is None or not 0 <= p.partition_index < info.partitions:
                refused[(t.name, p.partition_index)] = ErrorCode.unknown_topic_or_partition
            else:
                items.append(
                    (
                        t.name,
                        p.partition_index,
                        p.committed_offset,
                        getattr(p, "committed_leader_epoch", -1),
                        p.committed_metadata,
                    )
                )
    if not items:
        return _respond(ctx, req, lambda t, p: refused[(t, p)])
    group_error = _verify(ctx, req)
    errors: list[ErrorCode] = []
    if group_error == ErrorCode.none:
        group_error, errors = ctx.broker.groups.commit_txn_offsets(
            req.group_id,
            req.producer_id,
            req.producer_epoch,
            getattr(req, "generation_id", -1),
            getattr(req, "member_id", ""),
            getattr(req, "group_instance_id", None),
            items,
        )
    group_error = _for_version(group_error, ctx.api_version)
    it = iter(errors)

    def code(name: str, partition: int) -> ErrorCode:
        known = refused.get((name, partition))
        if known is not None:
            return known
        return group_error if group_error != ErrorCode.none else ErrorCode(next(it))

    return _respond(ctx, req, code)


def _verify(ctx: RequestContext, req: TxnOffsetCommitRequest) -> ErrorCode:
    """The group's offsets partition must be in the producer's ongoing transaction."""
    if not req.group_id:
        return ErrorCode.invalid_group_id
    partition = ctx.broker.groups.offsets_partition(req.group_id)
    error = ctx.broker.transactions.check_produce(
        req.transactional_id, req.producer_id, req.producer_epoch, OFFSETS_TOPIC, partition
    )
    if error != ErrorCode.none:
        log.info(
            "TxnOffsetCommit of %r for group %r (producer %d, epoch %d) refused: %s",
            req.transactional_id,
            req.group_id,
            req.producer_id,
            req.producer_epoch,
            error.name,
        )
    return error


def _for_version(error: ErrorCode, version: int) -> ErrorCode:
    """Kafka's ``maybeConvertOffsetCommitError`` and the conversions for older clients."""
    if error == ErrorCode.producer_fenced:
        error = ErrorCode.invalid_producer_epoch  # what producers expect from a verification
    elif error in (ErrorCode.not_enough_replicas, ErrorCode.unknown_topic_or_partition):
        error = ErrorCode.coordinator_not_available
    elif error == ErrorCode.transaction_abortable and version < _ABORTABLE_SINCE:
        error = ErrorCode.invalid_txn_state
    if error == ErrorCode.coordinator_load_in_progress and version < _LOAD_IN_PROGRESS_SINCE:
        error = ErrorCode.coordinator_not_available
    return error


def _respond(ctx: RequestContext, req: TxnOffsetCommitRequest, code: Callable[[str, int], ErrorCode]) -> Any:
    topics = [
        {
            "name": t.name,
            "partitions": [
                {"partition_index": p.partition_index, "error_code": code(t.name, p.partition_index)}
                for p in t.partitions
            ],
        }
        for t in req.topics
    ]
    return ctx.respond(topics=topics)
