"""How a Fetch long-polls: until ``min_bytes`` arrive or ``max_wait`` passes, without
holding the broker.

The million-frame fuzz found a Fetch naming a topic with no partitions and a long
``max_wait``: nothing could end its wait, the handler looped without yielding, and the
broker answered no one for hours. Kafka answers such a Fetch at once.
"""

from __future__ import annotations

import select
from typing import Any

import pytest

from broker.protocol.build import build
from broker.protocol.codec import decode_response, encode_request, request_class
from broker.protocol.versions import ApiKey
from broker.server import EmbeddedBroker
from tests.wire import WireClient, sample_request

HOUR_MS = 3_600_000


def _fetch(topic: str, partitions: list[dict[str, Any]], max_wait_ms: int) -> dict[str, Any]:
    request = sample_request(ApiKey.FETCH, topic, "g")
    request["max_wait"] = max_wait_ms
    request["topics"] = [{"topic": topic, "partitions": partitions}] if topic else []
    return request


@pytest.mark.parametrize("version", [4, 12])
@pytest.mark.parametrize("topic", ["fuzz-seed", ""], ids=["a-topic-without-partitions", "no-topics"])
def test_a_fetch_of_no_partition_is_answered_at_once(
    broker: EmbeddedBroker, version: int, topic: str
) -> None:
    # An hour's max_wait against a socket timeout of 30 s: an answer at all means no wait.
    with WireClient(broker.bootstrap, timeout=30) as client:
        response = client.request(ApiKey.FETCH, version, _fetch(topic, [], HOUR_MS))
        assert [t.topic for t in response.responses] == ([topic] if topic else [])
        assert all(not t.partitions for t in response.responses)
        # The connection serves the next request as usual.
        assert client.request(ApiKey.METADATA, 9, topics=[], allow_auto_topic_creation=False).brokers


def test_a_long_poll_holds_its_connection_not_the_broker(broker: EmbeddedBroker, topic: str) -> None:
    with WireClient(broker.bootstrap, timeout=30) as setup:
        setup.request(ApiKey.METADATA, 9, topics=[{"name": topic}], allow_auto_topic_creation=True)
        produced = setup.request(ApiKey.PRODUCE, 3, sample_request(ApiKey.PRODUCE, topic, "g"))
        assert produced.responses[0].partition_responses[0].error_code == 0
    partition = sample_request(ApiKey.FETCH, topic, "g")["topics"][0]["partitions"][0]
    partition["fetch_offset"] = 1  # past the one record: waits for the next append
    body = build(request_class(ApiKey.FETCH, 4), _fetch(topic, [partition], HOUR_MS))
    with WireClient(broker.bootstrap, timeout=30) as waiting, WireClient(broker.bootstrap) as other:
        waiting.send_raw(encode_request(1, body, client_id="long-poll"))
        # Another client is served while the fetch waits, and its append ends the wait.
        assert other.request(ApiKey.METADATA, 9, topics=[], allow_auto_topic_creation=False).brokers
        assert select.select([waiting.sock], [], [], 0)[0] == [], "the fetch did not wait"
        other.request(ApiKey.PRODUCE, 3, sample_request(ApiKey.PRODUCE, topic, "g"))
        _, response = decode_response(ApiKey.FETCH, 4, waiting.recv_frame())
    (part,) = response.responses[0].partitions
    assert part.error_code == 0
    assert part.high_watermark == 2 and part.records
