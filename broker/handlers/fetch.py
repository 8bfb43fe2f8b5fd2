"""Fetch: whole batches from each partition, long-polling until ``min_bytes`` or ``max_wait``.

Fetch sessions (KIP-227) are declined with session id 0, so every request is a
full fetch and every requested partition is in the response (kafka-python
rejects responses that leave one out). The first partition with data may exceed
the byte limits by one batch (KIP-74) so consumers always make progress.

``isolation_level`` 1 (read_committed) returns whole batches below the last stable
offset only, and the aborted transactions overlapping them, which the client uses to
drop aborted batches; read_uncommitted gets null there. Every response carries the
LSO. A read_committed long poll wakes when the LSO moves (a marker, or an append outside
any open transaction), not for a transactional append it could not read yet.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import Operation, allowed_names, topic
from broker.broker import RequestContext
from broker.storage.log import LEADER_EPOCH, OffsetOutOfRange

if TYPE_CHECKING:
    from broker.protocol.requests import FetchRequest

READ_COMMITTED = 1


async def handle(ctx: RequestContext, req: FetchRequest) -> Any:
    b = ctx.broker
    wait_s = req.max_wait.total_seconds()
    deadline = b.clock_ms() / 1000 + wait_s
    watched = [(t.topic, p.partition) for t in req.topics for p in t.partitions]
    committed = req.isolation_level == READ_COMMITTED
    while True:
        responses, size, errors = _collect(ctx, req)
        remaining = deadline - b.clock_ms() / 1000
        # No partition to wait on is answered at once, as Kafka's ReplicaManager does: no
        # append could ever end the wait, and waiting by looping would hold the event loop
        # (and so every client) for max_wait.
        if size >= max(req.min_bytes, 1) or errors or remaining <= 0 or not watched:
            break
        await b.logs.wait_for_data(watched, remaining, committed)
    return ctx.respond(error_code=ErrorCode.none, session_id=0, responses=responses)


def _collect(ctx: RequestContext, req: FetchRequest) -> tuple[list[dict[str, Any]], int, bool]:
    b = ctx.broker
    budget = req.max_bytes if ctx.api_version >= 3 else 2**31 - 1
    committed = req.isolation_level == READ_COMMITTED
    total = 0
    errors = False
    out = []
    readable = allowed_names(ctx, Operation.READ, (topic(t.topic) for t in req.topics))
    for t in req.topics:
        parts = []
        for p in t.partitions:
            if t.topic not in readable:
                parts.append(_part(p.partition, ErrorCode.topic_authorization_failed))
                errors = True
                continue
            plog = b.logs.get(t.topic, p.partition)
            if plog is None:
                parts.append(_part(p.partition, ErrorCode.unknown_topic_or_partition))
                errors = True
                continue
            if getattr(p, "current_leader_epoch", -1) > LEADER_EPOCH:
                parts.append(
                    _part(
                        p.partition, ErrorCode.unknown_leader_epoch, plog.next_offset, plog.log_start_offset
                    )
                )
                errors = True
                continue
            records, after = b"", -1
            error = ErrorCode.none
            stable = plog.last_stable_offset
            try:
                limit = min(p.partition_max_bytes, budget - total)
                if limit > 0 or total == 0:
                    records, after = plog.read_span(
                        p.fetch_offset, max(limit, 0), min_one=total == 0, below=stable if committed else -1
                    )
            except OffsetOutOfRange:
                error = ErrorCode.offset_out_of_range
                errors = True
            aborted: list[dict[str, int]] | None = None
            if records:
                total += len(records)
                # Records from the fetch offset on (a first batch may start before it); on a
                # compacted topic this counts offsets, an upper bound of the records.
                b.metrics.fetched(t.topic, len(records), max(after - p.fetch_offset, 0))
                if committed:
                    aborted = [
                        {"producer_id": pid, "first_offset": first}
                        for pid, first in plog.aborted_transactions(p.fetch_offset, after)
                    ]
            elif committed:
                aborted = []
            parts.append(
                _part(p.partition, error, plog.next_offset, plog.log_start_offset, records, stable, aborted)
            )
        out.append({"topic": t.topic, "partitions": parts})
    return out, total, errors


def _part(
    index: int,
    error: ErrorCode,
    hwm: int = -1,
    start: int = -1,
    records: bytes = b"",
    stable: int | None = None,
    aborted: list[dict[str, int]] | None = None,
) -> dict[str, Any]:
    return {
        "partition_index": index,
        "error_code": error,
        "high_watermark": hwm,
        "last_stable_offset": hwm if stable is None else stable,
        "log_start_offset": start,
        "aborted_transactions": aborted,
        "preferred_read_replica": -1,
        "records": records,
    }
