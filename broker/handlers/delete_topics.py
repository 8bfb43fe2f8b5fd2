"""DeleteTopics: by name (v1-5) or by name/id (v6); committed offsets of the topic go too."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import Operation, authorize, topic
from broker.broker import RequestContext
from broker.logs import UnknownTopic

if TYPE_CHECKING:
    from broker.protocol.requests import DeleteTopicsRequest


async def handle(ctx: RequestContext, req: DeleteTopicsRequest) -> Any:
    b = ctx.broker
    if hasattr(req, "topics"):  # v6+ name topics by name or id
        wanted = [(t.name, t.topic_id) for t in req.topics]
    else:
        wanted = [(n, None) for n in req.topic_names]
    by_id = {info.topic_id: name for name, info in b.logs.metadata.topics.items()}
    out = []
    for name, topic_id in wanted:
        if name is None and topic_id is not None:
            name = by_id.get(topic_id)
            # An id the principal may not describe is answered as unknown, as Kafka does.
            if name is None or not authorize(ctx, Operation.DESCRIBE, topic(name)):
                out.append(
                    {
                        "name": None,
                        "topic_id": topic_id,
                        "error_code": ErrorCode.unknown_topic_id,
                        "error_message": f"no topic with id {topic_id}",
                    }
                )
                continue
        info = b.logs.topic(name or "")
        entry: dict[str, Any] = {"name": name, "topic_id": info.topic_id if info else topic_id}
        if not authorize(ctx, Operation.DELETE, topic(name or "")):
            out.append(
                {
                    **entry,
                    "topic_id": topic_id,
                    "error_code": ErrorCode.topic_authorization_failed,
                    "error_message": "Authorization failed.",
                }
            )
        elif not b.config.delete_topic_enable:
            out.append(
                {
                    **entry,
                    "error_code": ErrorCode.topic_deletion_disabled,
                    "error_message": "delete.topic.enable is false",
                }
            )
        elif info is None:
            out.append(
                {
                    **entry,
                    "error_code": ErrorCode.unknown_topic_or_partition,
                    "error_message": "This server does not host this topic-partition.",
                }
            )
        elif info.internal:
            out.append(
                {
                    **entry,
                    "error_code": ErrorCode.invalid_topic_exception,
                    "error_message": f"Topic {name} is internal and cannot be deleted",
                }
            )
        else:
            try:
                await b.logs.delete_topic(info.name)
                b.groups.forget_topic(info.name)
                out.append({**entry, "error_code": ErrorCode.none, "error_message": None})
            except UnknownTopic:
                out.append(
                    {**entry, "error_code": ErrorCode.unknown_topic_or_partition, "error_message": None}
                )
    return ctx.respond(responses=out)
