"""OffsetForLeaderEpoch: one leader epoch (0) ever, ending at the log end offset."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import Operation, allowed_names, topic
from broker.broker import RequestContext
from broker.storage.log import LEADER_EPOCH

if TYPE_CHECKING:
    from broker.protocol.requests import OffsetForLeaderEpochRequest


async def handle(ctx: RequestContext, req: OffsetForLeaderEpochRequest) -> Any:
    b = ctx.broker
    topics = []
    describable = allowed_names(ctx, Operation.DESCRIBE, (topic(t.topic) for t in req.topics))
    for t in req.topics:
        parts = []
        for p in t.partitions:
            plog = b.logs.get(t.topic, p.partition) if t.topic in describable else None
            if plog is None:
                parts.append(
                    {
                        "error_code": ErrorCode.unknown_topic_or_partition
                        if t.topic in describable
                        else ErrorCode.topic_authorization_failed,
                        "partition": p.partition,
                        "leader_epoch": -1,
                        "end_offset": -1,
                    }
                )
            elif p.current_leader_epoch > LEADER_EPOCH:
                parts.append(
                    {
                        "error_code": ErrorCode.unknown_leader_epoch,
                        "partition": p.partition,
                        "leader_epoch": -1,
                        "end_offset": -1,
                    }
                )
            elif p.leader_epoch > LEADER_EPOCH or p.leader_epoch < 0:
                parts.append(
                    {
                        "error_code": ErrorCode.none,
                        "partition": p.partition,
                        "leader_epoch": -1,
                        "end_offset": -1,
                    }
                )
            else:
                parts.append(
                    {
                        "error_code": ErrorCode.none,
                        "partition": p.partition,
                        "leader_epoch": LEADER_EPOCH,
                        "end_offset": plog.next_offset,
                    }
                )
        topics.append({"topic": t.topic, "partitions": parts})
    return ctx.respond(topics=topics)
