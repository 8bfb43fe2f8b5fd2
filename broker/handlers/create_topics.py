"""CreateTopics: one replica only (-1 means the default); configs validated like Kafka's."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import CLUSTER, Operation, authorize, topic
from broker.broker import RequestContext
from broker.logs import InvalidPartitions, TopicExists
from broker.metadata import InvalidTopic
from broker.storage.log import StorageError
from broker.topic_config import InvalidConfig, describe

if TYPE_CHECKING:
    from broker.protocol.requests import CreateTopicsRequest

log = logging.getLogger(__name__)


async def handle(ctx: RequestContext, req: CreateTopicsRequest) -> Any:
    names = [t.name for t in req.topics]
    out = []
    cluster_create = authorize(ctx, Operation.CREATE, CLUSTER)
    for t in req.topics:
        if not cluster_create and not authorize(ctx, Operation.CREATE, topic(t.name)):
            out.append(
                {
                    "name": t.name,
                    "error_code": ErrorCode.topic_authorization_failed,
                    "error_message": "Authorization failed.",
                    "num_partitions": -1,
                    "replication_factor": -1,
                    "configs": None,
                }
            )
            continue
        out.append(await _create(ctx, t, names.count(t.name) > 1, req.validate_only))
    return ctx.respond(topics=out)


async def _create(ctx: RequestContext, t: Any, duplicate: bool, validate_only: bool) -> dict[str, Any]:
    b = ctx.broker

    def fail(code: ErrorCode, message: str) -> dict[str, Any]:
        return {
            "name": t.name,
            "error_code": code,
            "error_message": message,
            "num_partitions": -1,
            "replication_factor": -1,
            "configs": None,
        }

    if duplicate:
        return fail(
            ErrorCode.invalid_request,
            f"Create topics request from client contains a duplicate topic: {t.name}",
        )
    rf = t.replication_factor
    partitions = t.num_partitions
    if t.assignments:
        if rf != -1 or partitions != -1:
            return fail(
                ErrorCode.invalid_request,
                "Both numPartitions or replicationFactor and replicasAssignments were set.",
            )
        for a in t.assignments:
            if tuple(a.broker_ids) != (b.node_id,):
                return fail(
                    ErrorCode.invalid_replica_assignment,
                    f"Replica assignment {list(a.broker_ids)} names brokers other than {b.node_id}",
                )
        if sorted(a.partition_index for a in t.assignments) != list(range(len(t.assignments))):
            return fail(ErrorCode.invalid_replica_assignment, "Partitions must be numbered 0..n-1")
        partitions, rf = len(t.assignments), 1
    if rf == -1:
        rf = b.config.default_replication_factor
    if partitions == -1:
        partitions = b.config.num_partitions
    if rf <= 0:
        return fail(ErrorCode.invalid_replication_factor, "Replication factor must be larger than 0.")
    if rf > 1:
        return fail(
            ErrorCode.invalid_replication_factor,
            f"Replication factor: {rf} larger than available brokers: 1.",
        )
    configs = {c.name: c.value for c in t.configs}
    try:
        if validate_only:
            info, overrides = None, b.logs.check_new_topic(t.name, partitions, configs)
        else:  # checks the request itself (once: the check lists the open files)
            info = await b.logs.create_topic_off_loop(t.name, partitions, configs)
            overrides = info.configs
    except TopicExists as exc:
        return fail(ErrorCode.topic_already_exists, str(exc))
    except InvalidTopic as exc:
        return fail(ErrorCode.invalid_topic_exception, str(exc))
    except InvalidPartitions as exc:
        return fail(ErrorCode.invalid_partitions, str(exc))
    except InvalidConfig as exc:
        return fail(ErrorCode.invalid_config, str(exc))
    except StorageError as exc:
        return fail(ErrorCode.kafka_storage_error, str(exc))
    return {
        "name": t.name,
        "topic_id": info.topic_id if info else None,
        "error_code": ErrorCode.none,
        "error_message": None,
        "num_partitions": partitions,
        "replication_factor": rf,
        "configs": [
            {"name": n, "value": v, "read_only": False, "config_source": int(src), "is_sensitive": False}
            for n, v, src, _type, _doc in describe(b.config, overrides)
        ],
    }
