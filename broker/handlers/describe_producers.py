"""DescribeProducers (v0): the producers a partition knows, as Kafka's ``activeProducerState``:
epoch, last sequence and timestamp, coordinator epoch and the open transaction's first
offset (-1 when none). Needs READ on the topic, as in Kafka's ``KafkaApis``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import Operation, allowed_names, topic
from broker.broker import RequestContext
from broker.metadata import InvalidTopic, validate_topic_name

if TYPE_CHECKING:
    from broker.protocol.requests import DescribeProducersRequest


async def handle(ctx: RequestContext, req: DescribeProducersRequest) -> Any:
    b = ctx.broker
    readable = allowed_names(ctx, Operation.READ, (topic(t.name) for t in req.topics))
    topics = []
    for t in req.topics:
        error, message = _topic_error(ctx, t.name, t.name in readable)
        parts: list[dict[str, Any]] = []
        for index in t.partition_indexes:
            plog = b.logs.get(t.name, index) if error is None else None
            if plog is None:
                code = error if error is not None else ErrorCode.unknown_topic_or_partition
                parts.append(
                    {
                        "partition_index": index,
                        "error_code": code,
                        "error_message": message,
                        "active_producers": [],
                    }
                )
                continue
            parts.append(
                {
                    "partition_index": index,
                    "error_code": ErrorCode.none,
                    "active_producers": [
                        {
                            "producer_id": v.producer_id,
                            "producer_epoch": v.producer_epoch,
                            "last_sequence": v.last_sequence,
                            "last_timestamp": v.last_timestamp,
                            "coordinator_epoch": v.coordinator_epoch,
                            "current_txn_start_offset": v.current_txn_start_offset,
                        }
                        for v in plog.producer_states()
                    ],
                }
            )
        topics.append({"name": t.name, "partitions": parts})
    return ctx.respond(topics=topics)


def _topic_error(ctx: RequestContext, name: str, readable: bool) -> tuple[ErrorCode | None, str | None]:
    try:
        validate_topic_name(name)
    except InvalidTopic as exc:
        return ErrorCode.invalid_topic_exception, str(exc)
    if not readable:
        return ErrorCode.topic_authorization_failed, None
    if ctx.broker.logs.topic(name) is None:
        return ErrorCode.unknown_topic_or_partition, None
    return None, None
