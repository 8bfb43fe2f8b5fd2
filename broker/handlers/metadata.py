"""Metadata: brokers (just this one), topics and partitions, with auto-creation.

Null topics means every topic, an empty list none. Topics are created on demand
when ``auto.create.topics.enable`` and the request allows it (librdkafka
producers do, consumers do not). Responses are cached until topics change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import CLUSTER, Operation, authorize, topic
from broker.broker import RequestContext
from broker.metadata import InvalidTopic, validate_topic_name
from broker.storage.log import LEADER_EPOCH, StorageError

if TYPE_CHECKING:
    from broker.protocol.requests import MetadataRequest


async def handle(ctx: RequestContext, req: MetadataRequest) -> Any:
    b = ctx.broker
    auto = False
    if req.topics is None:
        names: tuple[str, ...] | None = None
    else:
        names = tuple(t.name for t in req.topics if t.name is not None)
        # v0-3 always auto-create; v4+ say so.
        auto = b.config.auto_create_topics_enable and (
            not hasattr(req, "allow_auto_topic_creation") or req.allow_auto_topic_creation
        )
        if auto:
            for name in names:
                if b.logs.topic(name) is None and _may_create(ctx, name):
                    try:
                        validate_topic_name(name)
                        b.logs.create_topic(name, b.config.num_partitions)
                    except (InvalidTopic, StorageError):
                        pass  # reported per topic below
    # With ACLs the answer depends on who asks (and on the ACLs), so they are part of the key.
    who = () if b.authorizer is None else (ctx.principal, ctx.client_host, b.authorizer.version, auto)
    key = ("metadata", ctx.api_version, ctx.listener, names, *who)  # endpoints differ per listener
    return b.cached(key, lambda: _build(ctx, names, auto))


def _denied(name: str) -> dict[str, Any]:
    return {"error_code": ErrorCode.topic_authorization_failed, "name": name, "partitions": ()}


def _may_create(ctx: RequestContext, name: str) -> bool:
    """Kafka auto-creates only topics the principal may describe and create (CLUSTER or TOPIC CREATE)."""
    return authorize(ctx, Operation.DESCRIBE, topic(name)) and (
        authorize(ctx, Operation.CREATE, CLUSTER) or authorize(ctx, Operation.CREATE, topic(name))
    )


def _build(ctx: RequestContext, names: tuple[str, ...] | None, auto: bool) -> Any:
    b = ctx.broker
    node = b.node_id
    topics: list[dict[str, Any]] = []
    everything = names is None
    for name in sorted(b.logs.metadata.topics) if names is None else names:
        info = b.logs.topic(name)
        if not authorize(ctx, Operation.DESCRIBE, topic(name)):
            # All topics: undescribable ones are left out; named ones are refused, existing or not.
            if not everything:
                topics.append(_denied(name))
            continue
        if info is None and auto and not _may_create(ctx, name):
            topics.append(_denied(name))
            continue
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
    ep = b.endpoint_for(ctx.listener)
    return ctx.respond(
        brokers=[{"node_id": node, "host": ep.host, "port": ep.port, "rack": None}],
        cluster_id=b.cluster_id,
        controller_id=node,
        topics=topics,
        cluster_authorized_operations=-2147483648,
    )
