"""``/sluiceway/topics``, the worker's read-only topic extension, over HTTP against a real
worker and broker: partitions and offsets, consumer groups and their lag, Kafka Connect's
404 body, and its place in the OpenAPI document."""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from connect.rest.topics import admin_settings
from connect.runtime.config import StandaloneConfig
from sluiceway.embedded import EmbeddedConnect
from tests.support import unique


def create_topic(worker: EmbeddedConnect, name: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": worker.bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)


def commit(worker: EmbeddedConnect, group: str, offsets: dict[tuple[str, int], int]) -> None:
    consumer = Consumer(
        {"bootstrap.servers": worker.bootstrap, "group.id": group, "enable.auto.commit": False}
    )
    try:
        positions = [TopicPartition(t, p, o) for (t, p), o in offsets.items()]
        consumer.commit(offsets=positions, asynchronous=False)
    finally:
        consumer.close()


def by_name(topics: list[dict[str, Any]], name: str) -> dict[str, Any]:
    found = [t for t in topics if t["name"] == name]
    assert len(found) == 1, f"{name} listed {len(found)} times in {[t['name'] for t in topics]}"
    return found[0]


def test_lists_topics_with_partitions_and_offsets(worker: EmbeddedConnect) -> None:
    topic = unique("orders")
    create_topic(worker, topic, 3)
    worker.produce(topic, [(f"k{i}", f"v{i}") for i in range(30)])
    per_partition = [0, 0, 0]
    for m in worker.consume(topic, 30, partitions=3):
        per_partition[m.partition() or 0] += 1

    r = worker.request("GET", "/sluiceway/topics")

    assert r.status_code == 200, r.text
    listed = by_name(r.json(), topic)
    assert listed["partition_count"] == 3
    assert listed["internal"] is False
    assert listed["partitions"] == [
        {"partition": p, "earliest_offset": 0, "latest_offset": per_partition[p], "error": None}
        for p in range(3)
    ]
    assert by_name(r.json(), "__consumer_offsets")["internal"] is True


def test_topic_shows_consumer_groups_and_their_lag(worker: EmbeddedConnect) -> None:
    topic = unique("payments")
    create_topic(worker, topic, 2)
    # Keyed, so both partitions get records whatever the producer's sticky partitioner does
    # with null keys (all 40 in one partition would leave "behind" committed past its end).
    worker.produce(topic, [(f"k{i}", f"v{i}") for i in range(40)])
    ends = [0, 0]
    for m in worker.consume(topic, 40, partitions=2):
        ends[m.partition() or 0] += 1
    assert min(ends) >= 2, ends
    other = unique("other")
    create_topic(worker, other, 1)
    behind, done, elsewhere = unique("behind"), unique("done"), unique("elsewhere")
    commit(worker, behind, {(topic, 0): 1})  # partition 1: nothing committed
    commit(worker, done, {(topic, 0): ends[0], (topic, 1): ends[1]})
    commit(worker, elsewhere, {(other, 0): 0})  # commits on another topic only

    r = worker.request("GET", f"/sluiceway/topics/{topic}")

    assert r.status_code == 200, r.text
    body = r.json()
    assert body["name"] == topic
    offsets = [(p["earliest_offset"], p["latest_offset"]) for p in body["partitions"]]
    assert offsets == [(0, ends[0]), (0, ends[1])]
    groups = {g["group_id"]: g for g in body["consumer_groups"]}
    assert elsewhere not in groups
    assert groups[behind]["partitions"] == [
        {"partition": 0, "committed_offset": 1, "latest_offset": ends[0], "lag": ends[0] - 1},
        {"partition": 1, "committed_offset": None, "latest_offset": ends[1], "lag": None},
    ]
    assert groups[behind]["lag"] == ends[0] - 1
    assert groups[behind]["state"] == "Empty"
    assert groups[done]["lag"] == 0
    assert [p["lag"] for p in groups[done]["partitions"]] == [0, 0]


def test_unknown_topic_is_404_with_kafka_connects_error_body(worker: EmbeddedConnect) -> None:
    missing = unique("missing")

    r = worker.request("GET", f"/sluiceway/topics/{missing}")

    assert r.status_code == 404
    assert r.json() == {"error_code": 404, "message": f"Topic {missing} not found."}
    # Asking must not have created it (a metadata request naming it could, with auto-create on).
    assert missing not in [t["name"] for t in worker.request("GET", "/sluiceway/topics").json()]


def test_extension_is_in_the_openapi_document(worker: EmbeddedConnect) -> None:
    paths = worker.request("GET", "/openapi.json").json()["paths"]

    assert "Sluiceway extension" in paths["/sluiceway/topics"]["get"]["summary"]
    detail = paths["/sluiceway/topics/{name}"]["get"]
    assert "lag" in detail["summary"]
    assert "404" in detail["responses"]


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ({}, {}),
        (
            {"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "ssl.ca.location": "/ca.pem"},
            # Java's sasl.mechanism is librdkafka's sasl.mechanisms (connect.api.kafka_clients)
            {"security.protocol": "SASL_SSL", "sasl.mechanisms": "PLAIN", "ssl.ca.location": "/ca.pem"},
        ),
        # admin.-prefixed keys win over the worker's own, as in Kafka Connect.
        (
            {
                "security.protocol": "SSL",
                "admin.security.protocol": "SASL_SSL",
                "admin.request.timeout.ms": "5000",
            },
            {"security.protocol": "SASL_SSL", "request.timeout.ms": "5000"},
        ),
    ],
)
def test_admin_client_takes_the_workers_security_and_admin_settings(
    extra: dict[str, str], expected: dict[str, str]
) -> None:
    config = StandaloneConfig.parse(
        {
            "bootstrap.servers": "broker-1:9092",
            "offset.storage.file.filename": "/tmp/offsets",
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            "consumer.max.poll.records": "10",  # another client's settings stay out
            "producer.security.protocol": "PLAINTEXT",
            **extra,
        }
    )

    settings = admin_settings(config)

    assert settings["bootstrap.servers"] == "broker-1:9092"
    passed = {k: v for k, v in settings.items() if k not in ("bootstrap.servers", "client.id", "logger")}
    assert passed == expected
