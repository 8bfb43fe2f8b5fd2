"""AddOffsetsToTxn: the group's ``__consumer_offsets`` partition joins the transaction, so
its TxnOffsetCommit records get the transaction's marker. Needs WRITE on the transactional
id and READ on the group (``KafkaApis``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import Operation, authorize, group, transactional_id
from broker.broker import RequestContext
from broker.group import records as group_records
from broker.group.offsets_log import OFFSETS_TOPIC
from broker.storage.log import StorageError
from broker.transactions.codes import for_version

if TYPE_CHECKING:
    from broker.protocol.requests import AddOffsetsToTxnRequest

FENCED_SINCE = 2


async def handle(ctx: RequestContext, req: AddOffsetsToTxnRequest) -> Any:
    b = ctx.broker
    if not authorize(ctx, Operation.WRITE, transactional_id(req.transactional_id)):
        return ctx.respond(error_code=ErrorCode.transactional_id_authorization_failed)
    if not authorize(ctx, Operation.READ, group(req.group_id)):
        return ctx.respond(error_code=ErrorCode.group_authorization_failed)
    try:
        b.groups.ensure_offsets_topic()
    except (StorageError, OSError):
        return ctx.respond(error_code=ErrorCode.coordinator_not_available)
    info = b.logs.topic(OFFSETS_TOPIC)
    assert info is not None
    partition = group_records.partition_for(req.group_id, info.partitions)
    error = b.transactions.add_partitions(
        req.transactional_id, req.producer_id, req.producer_epoch, [(OFFSETS_TOPIC, partition)]
    )
    return ctx.respond(error_code=for_version(error, ctx.api_version, FENCED_SINCE))
