"""DeleteRecords: move a partition's log start offset forward (-1 means the high watermark)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import Operation, allowed_names, topic
from broker.broker import RequestContext

if TYPE_CHECKING:
    from broker.protocol.requests import DeleteRecordsRequest


async def handle(ctx: RequestContext, req: DeleteRecordsRequest) -> Any:
    b = ctx.broker
    topics = []
    deletable = allowed_names(ctx, Operation.DELETE, (topic(t.name) for t in req.topics))
    for t in req.topics:
        parts = []
        for p in t.partitions:
            plog = b.logs.get(t.name, p.partition_index) if t.name in deletable else None
            if plog is None:
                parts.append(
                    {
                        "partition_index": p.partition_index,
                        "low_watermark": -1,
                        "error_code": ErrorCode.unknown_topic_or_partition
                        if t.name in deletable
                        else ErrorCode.topic_authorization_failed,
                    }
                )
                continue
            target = plog.next_offset if p.offset == -1 else p.offset
            if target < 0 or target > plog.next_offset:
                parts.append(
                    {
                        "partition_index": p.partition_index,
                        "low_watermark": -1,
                        "error_code": ErrorCode.offset_out_of_range,
                    }
                )
                continue
            async with plog.cleaning:
                low = plog.advance_start(target)
            parts.append(
                {"partition_index": p.partition_index, "low_watermark": low, "error_code": ErrorCode.none}
            )
        topics.append({"name": t.name, "partitions": parts})
    b.logs.write_checkpoints()
    return ctx.respond(topics=topics)
