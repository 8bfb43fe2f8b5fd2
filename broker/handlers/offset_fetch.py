"""OffsetFetch: committed offsets (-1 when none); v8+ batches several groups.

``require_stable`` (v7+, sent by read_committed consumers): a partition for which an open
transaction holds an offset (TxnOffsetCommit) answers UNSTABLE_OFFSET_COMMIT, and the client
retries until the transaction ends, as with Kafka.

Authorization as in Kafka: GROUP DESCRIBE per group, TOPIC DESCRIBE per topic; asked-for
partitions of other topics get TOPIC_AUTHORIZATION_FAILED, "all offsets" leaves them out.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import Operation, allowed_names, authorize, group, topic
from broker.broker import RequestContext

if TYPE_CHECKING:
    from broker.protocol.requests import OffsetFetchRequest


def _group_topics(
    ctx: RequestContext, group_id: str, topics: Any, require_stable: bool
) -> list[dict[str, Any]]:
    wanted = None if topics is None else [(t.name, p) for t in topics for p in t.partition_indexes]
    found = ctx.broker.groups.fetch_offsets(group_id, wanted)
    names = {name for name, _p in (wanted if wanted is not None else found)}
    describable = allowed_names(ctx, Operation.DESCRIBE, (topic(n) for n in names))
    by_topic: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for (name, partition), entry in found.items():
        if name not in describable:
            if wanted is not None:
                by_topic[name].append(
                    {
                        "partition_index": partition,
                        "committed_offset": -1,
                        "committed_leader_epoch": -1,
                        "metadata": "",
                        "error_code": ErrorCode.topic_authorization_failed,
                    }
                )
            continue
        if require_stable and ctx.broker.groups.has_pending_txn_offset(group_id, (name, partition)):
            by_topic[name].append(
                {
                    "partition_index": partition,
                    "committed_offset": -1,
                    "committed_leader_epoch": -1,
                    "metadata": "",
                    "error_code": ErrorCode.unstable_offset_commit,
                }
            )
            continue
        by_topic[name].append(
            {
                "partition_index": partition,
                "committed_offset": entry.offset if entry else -1,
                "committed_leader_epoch": entry.leader_epoch if entry else -1,
                "metadata": entry.metadata if entry else "",
                "error_code": ErrorCode.none,
            }
        )
    return [
        {"name": t, "partitions": sorted(ps, key=lambda p: p["partition_index"])}
        for t, ps in by_topic.items()
    ]


async def handle(ctx: RequestContext, req: OffsetFetchRequest) -> Any:
    require_stable = bool(getattr(req, "require_stable", False))
    if hasattr(req, "groups"):  # v8+ fetch for several groups
        return ctx.respond(
            groups=[
                {"group_id": g.group_id, "topics": (), "error_code": ErrorCode.group_authorization_failed}
                if not authorize(ctx, Operation.DESCRIBE, group(g.group_id))
                else {
                    "group_id": g.group_id,
                    "topics": _group_topics(ctx, g.group_id, g.topics, require_stable),
                    "error_code": ErrorCode.none,
                }
                for g in req.groups
            ]
        )
    if not authorize(ctx, Operation.DESCRIBE, group(req.group_id)):
        return ctx.respond(topics=(), error_code=ErrorCode.group_authorization_failed)
    return ctx.respond(
        topics=_group_topics(ctx, req.group_id, req.topics, require_stable), error_code=ErrorCode.none
    )
