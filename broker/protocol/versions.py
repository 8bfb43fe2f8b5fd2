"""The API versions this broker implements and advertises in ApiVersions.

Ranges are what current clients use (librdkafka 2.x, kafka-python 3.x, aiokafka
0.14, Kafka's Java client) and stay within the shapes the handlers build:
Fetch stops at 12 because 13+ addresses topics by id, FindCoordinator at 3
because 4+ batches keys. Only what is implemented is advertised: clients switch
features on from this table (kafka-python infers a broker version from it).
"""

from __future__ import annotations

import enum
from typing import Final


class ApiKey(enum.IntEnum):
    PRODUCE = 0
    FETCH = 1
    LIST_OFFSETS = 2
    METADATA = 3
    OFFSET_COMMIT = 8
    OFFSET_FETCH = 9
    FIND_COORDINATOR = 10
    JOIN_GROUP = 11
    HEARTBEAT = 12
    LEAVE_GROUP = 13
    SYNC_GROUP = 14
    DESCRIBE_GROUPS = 15
    LIST_GROUPS = 16
    SASL_HANDSHAKE = 17
    API_VERSIONS = 18
    CREATE_TOPICS = 19
    DELETE_TOPICS = 20
    DELETE_RECORDS = 21
    INIT_PRODUCER_ID = 22
    OFFSET_FOR_LEADER_EPOCH = 23
    DESCRIBE_ACLS = 29
    CREATE_ACLS = 30
    DELETE_ACLS = 31
    DESCRIBE_CONFIGS = 32
    ALTER_CONFIGS = 33
    SASL_AUTHENTICATE = 36
    CREATE_PARTITIONS = 37
    DELETE_GROUPS = 42
    INCREMENTAL_ALTER_CONFIGS = 44
    DESCRIBE_USER_SCRAM_CREDENTIALS = 50
    ALTER_USER_SCRAM_CREDENTIALS = 51
    DESCRIBE_CLUSTER = 60
    ADD_PARTITIONS_TO_TXN = 24
    ADD_OFFSETS_TO_TXN = 25
    END_TXN = 26
    WRITE_TXN_MARKERS = 27
    DESCRIBE_TRANSACTIONS = 65
    LIST_TRANSACTIONS = 66
    TXN_OFFSET_COMMIT = 28
    DESCRIBE_PRODUCERS = 61


SUPPORTED_VERSIONS: Final[dict[int, tuple[int, int]]] = {
    ApiKey.PRODUCE: (3, 10),
    ApiKey.FETCH: (4, 12),
    ApiKey.LIST_OFFSETS: (1, 7),
    ApiKey.METADATA: (0, 12),
    ApiKey.OFFSET_COMMIT: (2, 9),
    ApiKey.OFFSET_FETCH: (1, 9),
    ApiKey.FIND_COORDINATOR: (0, 3),
    ApiKey.JOIN_GROUP: (0, 7),
    ApiKey.HEARTBEAT: (0, 4),
    ApiKey.LEAVE_GROUP: (0, 5),
    ApiKey.SYNC_GROUP: (0, 5),
    ApiKey.DESCRIBE_GROUPS: (0, 5),
    ApiKey.LIST_GROUPS: (0, 4),
    # v0 would frame SASL tokens without Kafka headers; clients use v1 (broker.security.sasl).
    ApiKey.SASL_HANDSHAKE: (1, 1),
    ApiKey.API_VERSIONS: (0, 4),
    ApiKey.CREATE_TOPICS: (2, 7),
    ApiKey.DELETE_TOPICS: (1, 6),
    ApiKey.DELETE_RECORDS: (0, 2),
    ApiKey.INIT_PRODUCER_ID: (0, 5),
    ApiKey.OFFSET_FOR_LEADER_EPOCH: (2, 4),
    ApiKey.DESCRIBE_ACLS: (1, 3),
    ApiKey.CREATE_ACLS: (1, 3),
    ApiKey.DELETE_ACLS: (1, 3),
    ApiKey.DESCRIBE_CONFIGS: (1, 4),
    ApiKey.ALTER_CONFIGS: (0, 2),
    ApiKey.SASL_AUTHENTICATE: (0, 2),
    ApiKey.CREATE_PARTITIONS: (0, 3),
    ApiKey.DELETE_GROUPS: (0, 2),
    ApiKey.INCREMENTAL_ALTER_CONFIGS: (0, 1),
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: (0, 0),
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: (0, 0),
    ApiKey.DESCRIBE_CLUSTER: (0, 1),
    # v5/v4 only add TRANSACTION_ABORTABLE, which this broker never answers; v4+ of
    # AddPartitionsToTxn is the brokers' batched form; EndTxn v5 is transaction.version 2.
    ApiKey.ADD_PARTITIONS_TO_TXN: (0, 5),
    ApiKey.ADD_OFFSETS_TO_TXN: (0, 4),
    ApiKey.END_TXN: (0, 4),
    ApiKey.WRITE_TXN_MARKERS: (1, 1),
    ApiKey.DESCRIBE_TRANSACTIONS: (0, 0),
    ApiKey.LIST_TRANSACTIONS: (0, 1),
    # v5 is for transaction.version 2 clients, which this broker does not advertise.
    ApiKey.TXN_OFFSET_COMMIT: (0, 4),
    ApiKey.DESCRIBE_PRODUCERS: (0, 0),
}


# What ApiVersions advertises. Produce claims v0 like Apache Kafka 4 (KAFKA-18659): librdkafka
# before 2.8 only compresses with gzip, snappy or lz4 when the broker lists Produce v0, and
# clients always pick the highest common version, so nobody is led to send v0-2 (which
# decode_request still refuses).
# SaslHandshake claims v0 like Kafka: librdkafka (before 2.x's feature table changed) only
# enables SASL when v0 is listed; clients pick v1, and a v0 request is refused (v0 frames tokens
# without Kafka headers, see broker.security.sasl).
ADVERTISED_VERSIONS: Final[dict[int, tuple[int, int]]] = {
    **SUPPORTED_VERSIONS,
    ApiKey.PRODUCE: (0, 10),
    ApiKey.SASL_HANDSHAKE: (0, 1),
}


def is_supported(api_key: int, version: int) -> bool:
    rng = SUPPORTED_VERSIONS.get(api_key)
    return rng is not None and rng[0] <= version <= rng[1]
