"""ListOffsets: -1 latest (high watermark), -2 earliest (log start), -3 largest timestamp,
otherwise the first offset whose record timestamp is at or after the given one.

With ``isolation_level`` 1 (read_committed, v2+) the last fetchable offset is the last
stable offset: latest is the LSO, and a timestamp lookup that lands at or past it finds
nothing (-1), as Kafka's ``Partition.fetchOffsetForTimestamp`` and ``ReplicaManager`` do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import Operation, allowed_names, topic
from broker.broker import RequestContext
from broker.storage.log import LEADER_EPOCH

if TYPE_CHECKING:
    from broker.protocol.requests import ListOffsetsRequest

LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3
READ_COMMITTED = 1


async def handle(ctx: RequestContext, req: ListOffsetsRequest) -> Any:
    b = ctx.broker
    topics = []
    describable = allowed_names(ctx, Operation.DESCRIBE, (topic(t.name) for t in req.topics))
    committed = getattr(req, "isolation_level", 0) == READ_COMMITTED
    for t in req.topics:
        parts = []
        for p in t.partitions:
            plog = b.logs.get(t.name, p.partition_index) if t.name in describable else None
            if plog is None:
                parts.append(
                    {
                        "partition_index": p.partition_index,
                        "error_code": ErrorCode.unknown_topic_or_partition
                        if t.name in describable
                        else ErrorCode.topic_authorization_failed,
                        "timestamp": -1,
                        "offset": -1,
                        "leader_epoch": -1,
                    }
                )
                continue
            ts = p.timestamp
            fetchable = plog.last_stable_offset if committed else plog.next_offset
            if ts == LATEST:
                found: tuple[int, int] | None = (fetchable, -1)
            elif ts == EARLIEST:
                found = (plog.log_start_offset, -1)
            elif ts == MAX_TIMESTAMP:
                found = plog.max_timestamp_offset()
            elif ts < 0:
                parts.append(
                    {
                        "partition_index": p.partition_index,
                        "error_code": ErrorCode.invalid_request,
                        "timestamp": -1,
                        "offset": -1,
                        "leader_epoch": -1,
                    }
                )
                continue
            else:
                found = plog.offset_for_timestamp(ts)
            if found is not None and ts not in (LATEST, EARLIEST) and found[0] >= fetchable:
                found = None
            offset, timestamp = found if found is not None else (-1, -1)
            parts.append(
                {
                    "partition_index": p.partition_index,
                    "error_code": ErrorCode.none,
                    "timestamp": timestamp,
                    "offset": offset,
                    "leader_epoch": LEADER_EPOCH if offset >= 0 else -1,
                }
            )
        topics.append({"name": t.name, "partitions": parts})
    return ctx.respond(topics=topics)
