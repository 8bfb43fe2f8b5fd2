"""The broker's ``metrics.listener``: per-topic bytes and records in and out, request
latency per API and consumer-group lag, scraped over HTTP after real client traffic."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from prometheus_client.parser import text_string_to_metric_families

from broker.config import ConfigError, load_config
from broker.metrics_server import parse_metrics_listener
from tests.support import embedded_broker, unique


def scrape(url: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    response = httpx.get(url, timeout=10)
    assert response.status_code == 200
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(response.text)
        for s in family.samples
    }


def test_traffic_shows_up_per_topic_per_api_and_per_group(tmp_path: Path) -> None:
    topic, group = unique("m"), unique("g")
    with embedded_broker(tmp_path, **{"metrics.listener": "http://127.0.0.1:0"}) as b:
        assert b.server is not None and b.server.metrics_server is not None
        url = b.server.metrics_server.url
        admin = AdminClient({"bootstrap.servers": b.bootstrap})
        admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(10)
        producer = Producer({"bootstrap.servers": b.bootstrap, "linger.ms": 5})
        for i in range(100):
            producer.produce(topic, value=b"v" * 20, partition=i % 2)
        producer.flush(10)

        consumer = Consumer(
            {
                "bootstrap.servers": b.bootstrap,
                "group.id": group,
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
            }
        )
        consumer.assign([TopicPartition(topic, 0, 0), TopicPartition(topic, 1, 0)])
        seen = 0
        while seen < 100:
            msg = consumer.poll(10)
            assert msg is not None, "records did not arrive"
            seen += 1
        # Commit 30 of partition 0's 50 records and all of partition 1's.
        consumer.commit(
            offsets=[TopicPartition(topic, 0, 30), TopicPartition(topic, 1, 50)], asynchronous=False
        )
        consumer.close()

        s = scrape(url)
        t = frozenset({("topic", topic)})
        assert s[("kafka_server_brokertopicmetrics_messagesin_total", t)] == 100
        assert s[("kafka_server_brokertopicmetrics_messagesout_total", t)] == 100
        bytes_in = s[("kafka_server_brokertopicmetrics_bytesin_total", t)]
        assert bytes_in > 100 * 20  # values plus batch and record framing
        assert s[("kafka_server_brokertopicmetrics_bytesout_total", t)] >= bytes_in

        for api in ("Produce", "Fetch", "Metadata", "OffsetCommit", "CreateTopics"):
            count = s[("kafka_network_requestmetrics_totaltime_seconds_count", frozenset({("request", api)}))]
            assert count >= 1, api

        def labels(partition: int) -> frozenset[tuple[str, str]]:
            return frozenset({("consumergroup", group), ("topic", topic), ("partition", str(partition))})

        assert s[("kafka_consumergroup_current_offset", labels(0))] == 30
        assert s[("kafka_consumergroup_lag", labels(0))] == 20
        assert s[("kafka_consumergroup_lag", labels(1))] == 0
        assert s[("kafka_consumergroup_lag_sum", frozenset({("consumergroup", group)}))] == 20
        end = frozenset({("topic", topic), ("partition", "0")})
        assert s[("kafka_topic_partition_current_offset", end)] == 50
        assert s[("kafka_topic_partition_oldest_offset", end)] == 0


def test_no_metrics_listener_unless_configured(tmp_path: Path) -> None:
    with embedded_broker(tmp_path) as b:
        assert b.server is not None and b.server.metrics_server is None


@pytest.mark.parametrize(
    "bad", ["127.0.0.1:9404", "https://127.0.0.1:9404", "http://127.0.0.1", "http://:9404/x"]
)
def test_a_malformed_metrics_listener_is_refused_with_its_key(bad: str, tmp_path: Path) -> None:
    with pytest.raises((ConfigError, ValueError), match=r"metrics\.listener"):
        load_config({"log.dirs": str(tmp_path), "metrics.listener": bad})


def test_listener_parsing() -> None:
    assert parse_metrics_listener("http://0.0.0.0:9404") == ("0.0.0.0", 9404)
    assert parse_metrics_listener("http://127.0.0.1:0/") == ("127.0.0.1", 0)
