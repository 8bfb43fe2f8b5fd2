"""Error codes as each request version knows them (``KafkaApis``): PRODUCER_FENCED (90)
came with KIP-588; older versions of a request learn of a fenced producer as
INVALID_PRODUCER_EPOCH (47)."""

from __future__ import annotations

from kio.schema.errors import ErrorCode


def for_version(error: ErrorCode, version: int, fenced_since: int) -> ErrorCode:
    """``error`` as a request of ``version`` answers it; ``fenced_since`` is the first version
    of that request that knows PRODUCER_FENCED (InitProducerId 4, AddPartitionsToTxn,
    AddOffsetsToTxn and EndTxn 2)."""
    if error == ErrorCode.producer_fenced and version < fenced_since:
        return ErrorCode.invalid_producer_epoch
    return error
