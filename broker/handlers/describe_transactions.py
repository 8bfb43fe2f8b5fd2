"""DescribeTransactions: the coordinator's view of each transactional id (state, producer,
timeout, start time, partitions). DESCRIBE on the id; partitions of topics the principal
may not DESCRIBE are left out (``KafkaApis``)."""

from __future__ import annotations

import datetime
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import Operation, allowed_names, authorize, topic, transactional_id
from broker.broker import RequestContext

if TYPE_CHECKING:
    from broker.protocol.requests import DescribeTransactionsRequest


# Kafka answers -1 for "no transaction started" (an id in Empty); kio writes this field from
# a datetime, and one millisecond before the epoch is what encodes as -1. An id that is not
# described gets the field's default, 0, as in Kafka.
_NO_START = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC) - datetime.timedelta(milliseconds=1)


def _start_time(ms: int) -> int | datetime.datetime:
    return ms if ms >= 0 else _NO_START


async def handle(ctx: RequestContext, req: DescribeTransactionsRequest) -> Any:
    coordinator = ctx.broker.transactions
    out = []
    for tid in req.transactional_ids:
        entry: dict[str, Any] = {
            "transactional_id": tid,
            "transaction_state": "",
            "transaction_timeout": 0,
            "transaction_start_time": 0,
            "producer_id": -1,
            "producer_epoch": -1,
            "topics": [],
        }
        if not authorize(ctx, Operation.DESCRIBE, transactional_id(tid)):
            out.append({**entry, "error_code": ErrorCode.transactional_id_authorization_failed})
            continue
        meta, error = coordinator.describe(tid)
        if meta is None:
            out.append({**entry, "error_code": error})
            continue
        describable = allowed_names(ctx, Operation.DESCRIBE, (topic(name) for name, _ in meta.partitions))
        by_topic: dict[str, list[int]] = defaultdict(list)
        for name, p in sorted(meta.partitions):
            if name in describable:
                by_topic[name].append(p)
        out.append(
            {
                **entry,
                "error_code": ErrorCode.none,
                "transaction_state": meta.state.kafka_name,
                "transaction_timeout": meta.timeout_ms,
                "transaction_start_time": _start_time(meta.start_ms),
                "producer_id": meta.producer_id,
                "producer_epoch": meta.producer_epoch,
                "topics": [{"topic": name, "partitions": parts} for name, parts in by_topic.items()],
            }
        )
    return ctx.respond(transaction_states=out)
