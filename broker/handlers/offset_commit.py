"""OffsetCommit: members of the current generation, or anyone for a group without members."""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from broker.broker import RequestContext


async def handle(ctx: RequestContext, req: Any) -> Any:
    items = [
        (
            t.name,
            p.partition_index,
            p.committed_offset,
            getattr(p, "committed_leader_epoch", -1),
            p.committed_metadata,
        )
        for t in req.topics
        for p in t.partitions
    ]
    group_error, errors = ctx.broker.groups.commit_offsets(
        req.group_id,
        req.generation_id_or_member_epoch,
        req.member_id,
        getattr(req, "group_instance_id", None),
        items,
    )
    it = iter(errors)
    topics = []
    for t in req.topics:
        parts = []
        for p in t.partitions:
            code = group_error if group_error != ErrorCode.none else next(it)
            parts.append({"partition_index": p.partition_index, "error_code": code})
        topics.append({"name": t.name, "partitions": parts})
    return ctx.respond(topics=topics)
