"""OffsetCommit: members of the current generation, or anyone for a group without members.

Authorization as in Kafka: GROUP READ for the request, TOPIC READ per topic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import Operation, allowed_names, authorize, group, topic
from broker.broker import RequestContext

if TYPE_CHECKING:
    from broker.protocol.requests import OffsetCommitRequest


async def handle(ctx: RequestContext, req: OffsetCommitRequest) -> Any:
    if not authorize(ctx, Operation.READ, group(req.group_id)):
        return _respond(ctx, req, lambda _t: ErrorCode.group_authorization_failed)
    readable = allowed_names(ctx, Operation.READ, (topic(t.name) for t in req.topics))
    items = [
        (
            t.name,
            p.partition_index,
            p.committed_offset,
            getattr(p, "committed_leader_epoch", -1),
            p.committed_metadata,
        )
        for t in req.topics
        if t.name in readable
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

    def code(topic_name: str) -> ErrorCode:
        if topic_name not in readable:
            return ErrorCode.topic_authorization_failed
        return group_error if group_error != ErrorCode.none else ErrorCode(next(it))

    return _respond(ctx, req, code)


def _respond(ctx: RequestContext, req: OffsetCommitRequest, code: Any) -> Any:
    topics = []
    for t in req.topics:
        parts = [{"partition_index": p.partition_index, "error_code": code(t.name)} for p in t.partitions]
        topics.append({"name": t.name, "partitions": parts})
    return ctx.respond(topics=topics)
