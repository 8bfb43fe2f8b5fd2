"""Metadata: brokers (just this one), topics and partitions, with auto-creation.

Null topics means every topic, an empty list none. Topics are created on demand
when ``auto.create.topics.enable`` and the request allows it (librdkafka
producers do, consumers do not). Responses are cached until topics change.
"""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from broker.broker import RequestContext
from broker.metadata import InvalidTopic, validate_topic_name
from broker.storage.log import LEADER_EPOCH, StorageError


async def handle(ctx: RequestContext, req: Any) -> Any:
    b = ctx.broker
    if req.topics is None:
        names: tuple[str, ...] | None = None
    else:
        names = tuple(t.name for t in req.topics if t.name is not None)
        # v0-3 always auto-create; v4+ say so.
        auto = b.config.auto_create_topics_enable and (ctx.api_version < 4 or req.allow_auto_topic_creation)
        if auto:
            for name in names:
                if b.logs.topic(name) is None:
                    try:
                        validate_topic_name(name)
                        b.logs.create_topic(name, b.config.num_partitions)
                    except (InvalidTopic, StorageError):
                        pass  # reported per topic below
    return b.cached(("metadata", ctx.api_version, names), lambda: _build(ctx, names))


def _build(ctx: RequestContext, names: tuple[str, ...] | None) -> Any:
    b = ctx.broker
    node = b.node_id
    topics: list[dict[str, Any]] = []
    for name in sorted(b.logs.metadata.topics) if names is None else names:
        info = b.logs.topic(name)
        if info is None:
            try:
                validate_topic_name(name)
                error = ErrorCode.unknown_topic_or_partition
            except InvalidTopic:
                error = ErrorCode.invalid_topic_exception
            topics.append({"error_code": error, "name": name, "partitions": ()})
            continue
        topics.append(
            {
                "error_code": ErrorCode.none,
                "name": name,
                "topic_id": info.topic_id,
                "is_internal": info.internal,
                "partitions": [
                    {
                        "error_code": ErrorCode.none,
                        "partition_index": p,
                        "leader_id": node,
                        "leader_epoch": LEADER_EPOCH,
                        "replica_nodes": (node,),
                        "isr_nodes": (node,),
                        "offline_replicas": (),
                    }
                    for p in range(info.partitions)
                ],
                "topic_authorized_operations": -2147483648,
            }
        )
    ep = b.endpoint
    return ctx.respond(
        brokers=[{"node_id": node, "host": ep.host, "port": ep.port, "rack": None}],
        cluster_id=b.cluster_id,
        controller_id=node,
        topics=topics,
        cluster_authorized_operations=-2147483648,
    )
