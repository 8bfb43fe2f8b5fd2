"""OffsetForLeaderEpoch: one leader epoch (0) ever, ending at the log end offset."""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from broker.broker import RequestContext
from broker.storage.log import LEADER_EPOCH


async def handle(ctx: RequestContext, req: Any) -> Any:
    b = ctx.broker
    topics = []
    for t in req.topics:
        parts = []
        for p in t.partitions:
            plog = b.logs.get(t.topic, p.partition)
            if plog is None:
                parts.append(
                    {
                        "error_code": ErrorCode.unknown_topic_or_partition,
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
