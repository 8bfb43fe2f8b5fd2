"""Every advertised API at every advertised version gets a well-formed, meaningful answer.

Clients pick the highest version both sides know, so each version in the table is one
some client speaks. Requests are built with kio's entity of that exact version and
sent over a real socket to a real broker.
"""

from __future__ import annotations

from typing import Any

import pytest
from kio.schema.errors import ErrorCode

from broker.protocol.versions import ADVERTISED_VERSIONS, SUPPORTED_VERSIONS, ApiKey
from broker.server import EmbeddedBroker
from tests.support import unique
from tests.wire import WireClient, sample_request

ALL = [(key, v) for key, (lo, hi) in sorted(SUPPORTED_VERSIONS.items()) for v in range(lo, hi + 1)]


def _errors(obj: Any) -> list[int]:
    """Every error_code anywhere in a response."""
    found = []
    if hasattr(obj, "__dataclass_fields__"):
        for name in obj.__dataclass_fields__:
            value = getattr(obj, name)
            if name == "error_code":
                found.append(int(value))
            else:
                found.extend(_errors(value))
    elif isinstance(obj, tuple):
        for item in obj:
            found.extend(_errors(item))
    return found


# What a correct broker answers to the templates above (anything else fails the test).
EXPECTED_ERRORS: dict[int, set[int]] = {
    ApiKey.JOIN_GROUP: {ErrorCode.none, ErrorCode.member_id_required},
    ApiKey.HEARTBEAT: {ErrorCode.unknown_member_id},
    ApiKey.SYNC_GROUP: {ErrorCode.unknown_member_id},
    ApiKey.LEAVE_GROUP: {ErrorCode.none, ErrorCode.unknown_member_id},
    ApiKey.DELETE_TOPICS: {ErrorCode.unknown_topic_or_partition},
    ApiKey.CREATE_PARTITIONS: {ErrorCode.unknown_topic_or_partition},
    ApiKey.DELETE_GROUPS: {ErrorCode.group_id_not_found},
    # The matrix broker runs without an authorizer, as Kafka does by default.
    ApiKey.DESCRIBE_ACLS: {ErrorCode.security_disabled},
    ApiKey.CREATE_ACLS: {ErrorCode.security_disabled},
    ApiKey.DELETE_ACLS: {ErrorCode.security_disabled},
    # A PLAINTEXT listener has no SASL exchange; the users do not exist.
    ApiKey.SASL_HANDSHAKE: {ErrorCode.illegal_sasl_state},
    ApiKey.SASL_AUTHENTICATE: {ErrorCode.illegal_sasl_state},
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: {ErrorCode.none, ErrorCode.resource_not_found},
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: {ErrorCode.resource_not_found},
    # Transactional ids the coordinator has never seen.
    ApiKey.ADD_PARTITIONS_TO_TXN: {ErrorCode.none, ErrorCode.invalid_producer_id_mapping},
    ApiKey.ADD_OFFSETS_TO_TXN: {ErrorCode.invalid_producer_id_mapping},
    ApiKey.END_TXN: {ErrorCode.invalid_producer_id_mapping},
    ApiKey.DESCRIBE_TRANSACTIONS: {ErrorCode.transactional_id_not_found},
    # The group's offsets partition is in no transaction of that id.
    ApiKey.TXN_OFFSET_COMMIT: {ErrorCode.invalid_producer_id_mapping},
}


@pytest.fixture(scope="module")
def matrix_broker(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from tests.support import embedded_broker

    with embedded_broker(tmp_path_factory.mktemp("matrix")) as eb:
        yield eb


@pytest.mark.parametrize(("api_key", "version"), ALL, ids=[f"{ApiKey(k).name}-v{v}" for k, v in ALL])
def test_every_api_version_answers(matrix_broker: EmbeddedBroker, api_key: int, version: int) -> None:
    topic, group = unique(), unique("g")
    with WireClient(matrix_broker.bootstrap) as setup:
        created = setup.request(
            ApiKey.CREATE_TOPICS,
            5,
            topics=[
                {
                    "name": topic,
                    "num_partitions": 1,
                    "replication_factor": 1,
                    "assignments": [],
                    "configs": [],
                }
            ],
            timeout=5000,
        )
        assert created.topics[0].error_code == ErrorCode.none
        setup.request(ApiKey.PRODUCE, 8, sample_request(ApiKey.PRODUCE, topic, group))
    with WireClient(matrix_broker.bootstrap) as client:
        response = client.request(api_key, version, sample_request(api_key, topic, group))
        assert client.is_open()
        errors = set(_errors(response))
        assert errors <= EXPECTED_ERRORS.get(api_key, {ErrorCode.none}), (
            ApiKey(api_key).name,
            version,
            response,
        )
        _check_meaning(api_key, version, response, topic)


def _check_meaning(api_key: int, version: int, r: Any, topic: str) -> None:
    """A few facts per API, so a response that merely parses is not enough."""
    match api_key:
        case ApiKey.PRODUCE:
            assert r.responses[0].partition_responses[0].base_offset == 1
        case ApiKey.FETCH:
            part = r.responses[0].partitions[0]
            assert part.high_watermark == 1 and part.records and len(part.records) > 61
        case ApiKey.LIST_OFFSETS:
            assert r.topics[0].partitions[0].offset == 1
        case ApiKey.METADATA:
            assert r.topics[0].name == topic and len(r.topics[0].partitions) == 1
            assert len(r.brokers) == 1
        case ApiKey.OFFSET_FETCH:
            parts = r.groups[0].topics[0].partitions if version >= 8 else r.topics[0].partitions
            assert parts[0].committed_offset == -1
        case ApiKey.FIND_COORDINATOR:
            assert r.node_id == 0 and r.port > 0
        case ApiKey.API_VERSIONS:
            table = {a.api_key: (a.min_version, a.max_version) for a in r.api_keys}
            assert table == ADVERTISED_VERSIONS
        case ApiKey.INIT_PRODUCER_ID:
            assert r.producer_id >= 0 and r.producer_epoch == 0
        case ApiKey.OFFSET_FOR_LEADER_EPOCH:
            assert r.topics[0].partitions[0].end_offset == 1
        case ApiKey.DESCRIBE_CONFIGS:
            names = {c.name for c in r.results[0].configs}
            assert {"cleanup.policy", "retention.ms", "segment.bytes"} <= names
        case ApiKey.DELETE_RECORDS:
            assert r.topics[0].partitions[0].low_watermark == 0
        case ApiKey.DESCRIBE_CLUSTER:
            assert len(r.brokers) == 1 and r.cluster_id
        case ApiKey.CREATE_TOPICS:
            assert r.topics[0].error_code == ErrorCode.none
        case ApiKey.DESCRIBE_GROUPS:
            assert r.groups[0].group_state == "Dead"


def test_unsupported_api_versions_version_gets_a_v0_answer(matrix_broker: EmbeddedBroker) -> None:
    """ApiVersions at a version from the future: error 35 in a v0 body, connection kept."""
    import struct

    from broker.protocol.codec import decode_response

    with WireClient(matrix_broker.bootstrap) as client:
        # Header: api key 18, version 99, correlation 7, client id "x"; no body.
        payload = struct.pack(">hhih", 18, 99, 7, 1) + b"x"
        client.send_raw(struct.pack(">i", len(payload)) + payload)
        correlation, body = decode_response(18, 0, client.recv_frame())
        assert correlation == 7
        assert body.error_code == ErrorCode.unsupported_version
        assert {a.api_key for a in body.api_keys} == set(ADVERTISED_VERSIONS)
        # The client retries with a version both know, on the same connection.
        again = client.request(18, 3, client_software_name="x", client_software_version="1")
        assert again.error_code == ErrorCode.none


def test_produce_v2_is_advertised_but_refused(matrix_broker: EmbeddedBroker) -> None:
    """Produce v0-2 appear in ApiVersions only for old librdkafka's compression check."""
    import struct

    assert ADVERTISED_VERSIONS[ApiKey.PRODUCE][0] == 0
    with WireClient(matrix_broker.bootstrap) as bad:
        payload = struct.pack(">hhih", ApiKey.PRODUCE, 2, 1, 1) + b"x" + b"\x00" * 20
        bad.send_raw(struct.pack(">i", len(payload)) + payload)
        with pytest.raises(ConnectionError):
            bad.recv_frame()


def test_unsupported_version_of_another_api_closes_only_that_connection(
    matrix_broker: EmbeddedBroker,
) -> None:
    import struct

    with WireClient(matrix_broker.bootstrap) as bad, WireClient(matrix_broker.bootstrap) as good:
        payload = struct.pack(">hhih", ApiKey.METADATA, 99, 1, 1) + b"x"
        bad.send_raw(struct.pack(">i", len(payload)) + payload)
        with pytest.raises(ConnectionError):
            bad.recv_frame()
        assert good.request(ApiKey.METADATA, 12, topics=None).brokers
