"""Produce: validate each partition's record batch, append it, answer with its base offset.

acks=0 gets no response at all. Batches are appended as received; only the
compacted-topic rule (every record needs a key) requires reading records.

Transactional batches need the request's transactional id (Kafka answers a request
that has them without one TRANSACTIONAL_ID_AUTHORIZATION_FAILED for every partition)
and pass the coordinator's KIP-890 check that the partition is in that producer's
ongoing transaction before they are appended. Control batches are the coordinator's
alone and are refused from clients (INVALID_RECORD).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import Operation, authorize, topic, transactional_id
from broker.broker import RequestContext
from broker.storage.batch import ATTRIBUTES_OFFSET, TRANSACTIONAL, InvalidBatch, validate_produced
from broker.storage.log import InvalidTxnState, OutOfOrderSequence, ProducerFenced, StorageError
from broker.storage.records import RecordsError, parse_records

if TYPE_CHECKING:
    from broker.protocol.requests import ProduceRequest

log = logging.getLogger(__name__)

_BATCH_ERRORS = {
    "corrupt": ErrorCode.corrupt_message,
    "invalid": ErrorCode.invalid_record,
    "too_large": ErrorCode.message_too_large,
    "unsupported_compression": ErrorCode.unsupported_compression_type,
}


async def handle(ctx: RequestContext, req: ProduceRequest) -> Any:
    b = ctx.broker
    acks = req.acks
    now = b.clock_ms()
    topics = []
    txn_id = req.transactional_id
    txn_denied = (
        not authorize(ctx, Operation.WRITE, transactional_id(txn_id))
        if txn_id is not None
        else _has_transactional_records(req)
    )
    for td in req.topic_data:
        partitions = []
        info = b.logs.topic(td.name)
        # Kafka checks authorization before existence, so a denied client learns nothing of the topic.
        denied = (
            ErrorCode.transactional_id_authorization_failed
            if txn_denied
            else None
            if authorize(ctx, Operation.WRITE, topic(td.name))
            else ErrorCode.topic_authorization_failed
        )
        for pd in td.partition_data:
            if denied is not None:
                partitions.append(_error(pd.index, denied))
                continue
            result = _append(ctx, info, td.name, pd, acks, now, txn_id)
            partitions.append(result)
        topics.append({"name": td.name, "partition_responses": partitions})
    if acks == 0:
        return None
    return ctx.respond(responses=topics)


def _has_transactional_records(req: ProduceRequest) -> bool:
    """Kafka's ``RequestUtils.hasTransactionalRecords``: a partition's batch has the
    transactional attribute bit (the low byte of the int16 attributes)."""
    bit = ATTRIBUTES_OFFSET + 1
    return any(
        pd.records is not None and len(pd.records) > bit and pd.records[bit] & TRANSACTIONAL
        for td in req.topic_data
        for pd in td.partition_data
    )


def _error(index: int, code: ErrorCode, message: str | None = None, start: int = -1) -> dict[str, Any]:
    return {
        "index": index,
        "error_code": code,
        "base_offset": -1,
        "log_append_time": -1,
        "log_start_offset": start,
        "error_message": message,
    }


def _append(
    ctx: RequestContext, info: Any, topic: str, pd: Any, acks: int, now: int, txn_id: str | None
) -> dict[str, Any]:
    b = ctx.broker
    index = pd.index
    if acks not in (0, 1, -1):
        return _error(index, ErrorCode.invalid_required_acks)
    plog = b.logs.get(topic, index) if info is not None else None
    if plog is None:
        return _error(index, ErrorCode.unknown_topic_or_partition)
    if info.internal:
        return _error(index, ErrorCode.invalid_topic_exception, f"cannot produce to internal topic {topic}")
    if acks == -1 and plog.config.min_insync_replicas > 1:
        return _error(
            index,
            ErrorCode.not_enough_replicas,
            f"min.insync.replicas={plog.config.min_insync_replicas} but the broker has one replica",
        )
    records = pd.records
    if records is None:
        return _error(index, ErrorCode.corrupt_message, "no record batch")
    try:
        h = validate_produced(records, plog.config.max_message_bytes, allow_zstd=ctx.api_version >= 7)
        if h.producer_id >= 0 and h.base_sequence < 0:
            # Kafka's LogValidator, for clients only: the group coordinator's transactional
            # offset commits are the batches with a producer id and no sequence.
            raise InvalidBatch(
                "invalid",
                f"invalid sequence number {h.base_sequence} in a batch with producer id {h.producer_id}",
            )
        if h.is_transactional:
            # Without a transactional id the whole request was refused before this.
            verdict = (
                b.transactions.check_produce(txn_id, h.producer_id, h.producer_epoch, topic, index)
                if txn_id is not None
                else ErrorCode.transactional_id_authorization_failed
            )
            if verdict != ErrorCode.none:
                log.debug(
                    "transactional batch for %s-%d from %s refused: %s",
                    topic,
                    index,
                    ctx.client_host,
                    verdict.name,
                )
                return _error(index, verdict)
        if plog.config.compact:
            _, recs = parse_records(records)
            for i, r in enumerate(recs):
                if r.key is None:
                    return {
                        **_error(
                            index,
                            ErrorCode.invalid_record,
                            "Compacted topic cannot accept message without key in topic partition "
                            f"{topic}-{index}.",
                        ),
                        "record_errors": [{"batch_index": i, "batch_index_error_message": "no key"}],
                    }
        stable = plog.last_stable_offset
        result = plog.append(records, h, now)
    except InvalidBatch as exc:
        log.debug("rejected batch for %s-%d from %s: %s", topic, index, ctx.client_host, exc)
        return _error(index, _BATCH_ERRORS[exc.kind], str(exc))
    except RecordsError as exc:
        return _error(index, ErrorCode.corrupt_message, str(exc))
    except ProducerFenced as exc:
        return _error(index, ErrorCode.invalid_producer_epoch, str(exc))
    except OutOfOrderSequence as exc:
        return _error(index, ErrorCode.out_of_order_sequence_number, str(exc))
    except InvalidTxnState as exc:
        return _error(index, ErrorCode.invalid_txn_state, str(exc))
    except StorageError as exc:
        log.error("%s", exc)
        return _error(index, ErrorCode.kafka_storage_error, str(exc))
    if not result.duplicate:
        b.logs.notify((topic, index), plog.last_stable_offset != stable)
        b.metrics.produced(topic, len(records), h.count)
    return {
        "index": index,
        "error_code": ErrorCode.none,
        "base_offset": result.base_offset,
        "log_append_time": result.log_append_time,
        "log_start_offset": plog.log_start_offset,
    }
