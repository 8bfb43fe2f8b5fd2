"""CreatePartitions: grow a topic; partitions can never shrink."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import Operation, authorize, topic
from broker.broker import Broker, RequestContext
from broker.logs import InvalidPartitions, UnknownTopic
from broker.storage.log import StorageError

if TYPE_CHECKING:
    from broker.protocol.requests import CreatePartitionsRequest


async def handle(ctx: RequestContext, req: CreatePartitionsRequest) -> Any:
    results = []
    for t in req.topics:
        if authorize(ctx, Operation.ALTER, topic(t.name)):
            outcome = await _grow(ctx.broker, t, req.validate_only)
        else:
            outcome = {"error_code": ErrorCode.topic_authorization_failed, "error_message": None}
        results.append({"name": t.name, **outcome})
    return ctx.respond(results=results)


async def _grow(b: Broker, t: Any, validate_only: bool) -> dict[str, Any]:
    def fail(code: ErrorCode, message: str) -> dict[str, Any]:
        return {"error_code": code, "error_message": message}

    info = b.logs.topic(t.name)
    if info is None:
        return fail(ErrorCode.unknown_topic_or_partition, f"The topic '{t.name}' does not exist.")
    if info.internal:
        return fail(ErrorCode.invalid_partitions, f"Cannot add partitions to internal topic {t.name}")
    for a in t.assignments or ():
        if tuple(a.broker_ids) != (b.node_id,):
            return fail(
                ErrorCode.invalid_replica_assignment,
                f"Replica assignment {list(a.broker_ids)} names brokers other than {b.node_id}",
            )
    try:
        if validate_only:
            b.logs.check_add_partitions(t.name, t.count)
        else:
            await b.logs.add_partitions_off_loop(t.name, t.count)
    except UnknownTopic:
        return fail(ErrorCode.unknown_topic_or_partition, f"The topic '{t.name}' does not exist.")
    except InvalidPartitions as exc:
        return fail(ErrorCode.invalid_partitions, str(exc))
    except StorageError as exc:
        return fail(ErrorCode.kafka_storage_error, str(exc))
    return {"error_code": ErrorCode.none, "error_message": None}
