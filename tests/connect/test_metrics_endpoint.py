"""``GET /metrics`` on a real worker after a real pipeline run: Kafka Connect's metric
names (as the Prometheus JMX exporter names them) with the values the run produced."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from prometheus_client.parser import text_string_to_metric_families

from sluiceway.embedded import EmbeddedConnect
from tests.support import unique, wait_until

JSON = "org.apache.kafka.connect.json.JsonConverter"


def scrape(url: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample as (name, labels) -> value."""
    response = httpx.get(f"{url}/metrics", timeout=10)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(response.text)
        for s in family.samples
    }


def value(samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str) -> float:
    key = (name, frozenset(labels.items()))
    assert key in samples, f"{name}{labels} is not exported; have {sorted({n for n, _ in samples})}"
    return samples[key]


@pytest.fixture
def connect(tmp_path: Path) -> Iterator[EmbeddedConnect]:
    with EmbeddedConnect(tmp_path / "connect") as c:
        yield c


def test_a_file_pipeline_is_counted_the_way_kafka_connect_counts_it(
    connect: EmbeddedConnect, tmp_path: Path
) -> None:
    lines = 500
    source_file, sink_file, topic = tmp_path / "in.txt", tmp_path / "out.txt", unique("metrics")
    source_file.write_text("".join(f"line {i}\n" for i in range(lines)))
    connect.create_connector(
        "src", {"connector.class": "FileStreamSource", "file": str(source_file), "topic": topic}
    )
    connect.create_connector(
        "snk", {"connector.class": "FileStreamSink", "file": str(sink_file), "topics": topic}
    )
    connect.wait_for_running("src")
    connect.wait_for_running("snk")
    wait_until(lambda: sink_file.exists() and len(sink_file.read_text().splitlines()) == lines, 60)

    src, snk = {"connector": "src", "task": "0"}, {"connector": "snk", "task": "0"}

    def settled() -> bool:
        s = scrape(connect.url)
        return (
            value(s, "kafka_connect_source_task_metrics_source_record_write_total", **src) == lines
            and value(s, "kafka_connect_sink_task_metrics_sink_record_send_total", **snk) == lines
            and value(s, "kafka_connect_connector_task_metrics_offset_commit_success_total", **src) >= 1
            and value(s, "kafka_connect_connector_task_metrics_offset_commit_success_total", **snk) >= 1
        )

    wait_until(settled, 30, message="the metrics to count the whole run")
    s = scrape(connect.url)
    assert value(s, "kafka_connect_source_task_metrics_source_record_poll_total", **src) == lines
    assert value(s, "kafka_connect_sink_task_metrics_sink_record_read_total", **snk) == lines
    assert value(s, "kafka_connect_source_task_metrics_source_record_poll_rate", **src) > 0
    assert value(s, "kafka_connect_sink_task_metrics_sink_record_read_rate", **snk) > 0
    assert value(s, "kafka_connect_source_task_metrics_source_record_active_count", **src) == 0
    assert value(s, "kafka_connect_sink_task_metrics_partition_count", **snk) == 1
    assert value(s, "kafka_connect_sink_task_metrics_put_batch_max_time_ms", **snk) > 0
    assert value(s, "kafka_connect_source_task_metrics_poll_batch_avg_time_ms", **src) >= 0
    assert value(s, "kafka_connect_connector_task_metrics_batch_size_max", **src) >= 1
    assert value(s, "kafka_connect_connector_task_metrics_offset_commit_failure_percentage", **snk) == 0
    assert value(s, "kafka_connect_connector_task_metrics_offset_commit_success_percentage", **snk) == 1
    assert value(s, "kafka_connect_connector_task_metrics_status", **src, status="running") == 1
    assert value(s, "kafka_connect_connector_task_metrics_status", **src, status="failed") == 0
    assert value(s, "kafka_connect_connector_metrics_status", connector="snk", status="running") == 1
    info = value(
        s,
        "kafka_connect_connector_metrics_info",
        connector="src",
        connector_class="connectors.file.source.FileStreamSourceConnector",
        connector_type="source",
        connector_version="1.0",
    )
    assert info == 1
    assert value(s, "kafka_connect_connect_worker_metrics_connector_count") == 2
    assert value(s, "kafka_connect_connect_worker_metrics_task_count") == 2
    assert value(s, "kafka_connect_connect_worker_metrics_task_startup_success_total") == 2
    assert value(s, "kafka_connect_connect_worker_metrics_connector_running_task_count", connector="src") == 1
    assert value(s, "kafka_connect_task_error_metrics_total_record_errors", **snk) == 0
    # A standalone worker never rebalances: Kafka has no rebalance MBean there either.
    assert not any(name.startswith("kafka_connect_connect_worker_rebalance") for name, _ in s)

    connect.request("PUT", "/connectors/snk/pause")

    def paused_for_a_while() -> bool:
        s = scrape(connect.url)
        return (
            value(s, "kafka_connect_connector_task_metrics_status", **snk, status="paused") == 1
            and value(s, "kafka_connect_connector_metrics_status", connector="snk", status="paused") == 1
            and value(s, "kafka_connect_connector_task_metrics_pause_ratio", **snk) > 0
        )

    wait_until(paused_for_a_while, 30, message="the sink to show as paused")
    s = scrape(connect.url)
    ratio = value(s, "kafka_connect_connector_task_metrics_running_ratio", **snk)
    assert ratio == pytest.approx(1 - value(s, "kafka_connect_connector_task_metrics_pause_ratio", **snk))


def test_records_sent_to_the_dead_letter_queue_are_counted(connect: EmbeddedConnect, tmp_path: Path) -> None:
    topic, dlq = unique("dlq-src"), unique("dlq")
    producer = Producer({"bootstrap.servers": connect.bootstrap})
    values = [b'{"n": 1}', b"not json", b'{"n": 2}', b"{broken", b'{"n": 3}']
    for v in values:
        producer.produce(topic, v)
    producer.flush(10)
    sink_file = tmp_path / "out.txt"
    connect.create_connector(
        "tolerant",
        {
            "connector.class": "FileStreamSink",
            "file": str(sink_file),
            "topics": topic,
            "value.converter": JSON,
            "value.converter.schemas.enable": "false",
            "errors.tolerance": "all",
            "errors.log.enable": "true",
            "errors.deadletterqueue.topic.name": dlq,
            "errors.deadletterqueue.topic.replication.factor": "1",
        },
    )
    task = {"connector": "tolerant", "task": "0"}

    def counted() -> bool:
        s = scrape(connect.url)
        return value(s, "kafka_connect_sink_task_metrics_sink_record_read_total", **task) == len(values)

    wait_until(counted, 60, message="the sink to read every record")
    s = scrape(connect.url)
    assert value(s, "kafka_connect_task_error_metrics_deadletterqueue_produce_requests", **task) == 2
    assert value(s, "kafka_connect_task_error_metrics_deadletterqueue_produce_failures", **task) == 0
    assert value(s, "kafka_connect_task_error_metrics_total_record_errors", **task) == 2
    assert value(s, "kafka_connect_task_error_metrics_total_records_skipped", **task) == 2
    assert value(s, "kafka_connect_task_error_metrics_total_errors_logged", **task) == 2
    assert (
        value(s, "kafka_connect_task_error_metrics_last_error_timestamp", **task) > (time.time() - 600) * 1000
    )
    assert value(s, "kafka_connect_sink_task_metrics_sink_record_send_total", **task) == 3
    wait_until(lambda: sink_file.exists() and len(sink_file.read_text().splitlines()) == 3, 30)
    written = sink_file.read_text().splitlines()
    assert written == [str({"n": n}) for n in (1, 2, 3)]  # the file sink writes str(value)


def test_metrics_are_in_the_openapi_document(connect: EmbeddedConnect) -> None:
    paths = httpx.get(f"{connect.url}/openapi.json", timeout=10).json()["paths"]
    assert "get" in paths["/metrics"]


def test_every_metric_the_grafana_dashboard_queries_is_exported(tmp_path: Path) -> None:
    """config/grafana/sluiceway-dashboard.json must not drift from the names we export."""
    import re

    from prometheus_client import generate_latest

    from connect.runtime.metrics import RebalanceMetrics, worker_registry
    from tests.support import free_port

    dashboard = Path(__file__).resolve().parents[2] / "config" / "grafana" / "sluiceway-dashboard.json"
    queried = set(re.findall(r"\b(kafka_[a-z0-9_]+)", dashboard.read_text()))
    assert len(queried) > 15

    metrics_port = free_port()
    worker_config = {"embedded.broker.metrics.listener": f"http://127.0.0.1:{metrics_port}"}
    source_file, sink_file, topic = tmp_path / "in.txt", tmp_path / "out.txt", unique("dash")
    source_file.write_text("a\nb\n")
    with EmbeddedConnect(tmp_path / "connect", worker_config) as c:
        c.create_connector(
            "src", {"connector.class": "FileStreamSource", "file": str(source_file), "topic": topic}
        )
        c.create_connector(
            "snk", {"connector.class": "FileStreamSink", "file": str(sink_file), "topics": topic}
        )
        wait_until(lambda: sink_file.exists() and len(sink_file.read_text().splitlines()) == 2, 60)
        wait_until(
            lambda: any(name == "kafka_consumergroup_lag" for name, _ in scrape_broker(metrics_port)), 30
        )
        exported = {name for name, _ in scrape(c.url)} | {name for name, _ in scrape_broker(metrics_port)}
        # Rebalance metrics exist only on distributed workers: the same collector, given a herder's.
        assert c.runtime is not None
        distributed = worker_registry(c.runtime.herder.worker, RebalanceMetrics)
        text = generate_latest(distributed).decode()
        exported |= {s.name for f in text_string_to_metric_families(text) for s in f.samples}
    assert queried <= exported, f"the dashboard queries metrics nobody exports: {sorted(queried - exported)}"


def scrape_broker(port: int) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_consumer_error_events_are_not_counted_as_records_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A sink whose topic does not exist yet gets "unknown topic" events from its consumer;
    # they once counted in sink-record-read-total (seen as 501 of 500 in CI).
    topic = unique("later")
    worker = {"embedded.broker.auto.create.topics.enable": "false"}
    with EmbeddedConnect(tmp_path / "connect", worker) as c:
        c.create_connector(
            "snk", {"connector.class": "FileStreamSink", "file": str(tmp_path / "out.txt"), "topics": topic}
        )
        c.wait_for_running("snk")
        wait_until(lambda: "consumer reports" in caplog.text, 30, message="an unknown-topic event")
        admin = AdminClient({"bootstrap.servers": c.bootstrap})  # kept: a collected client never answers
        admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
        p = Producer({"bootstrap.servers": c.bootstrap})
        for i in range(5):
            p.produce(topic, f"r{i}".encode())
        assert p.flush(30) == 0
        snk = {"connector": "snk", "task": "0"}
        sent = "kafka_connect_sink_task_metrics_sink_record_send_total"
        wait_until(lambda: value(scrape(c.url), sent, **snk) == 5, 30, message="five records sent")
        assert value(scrape(c.url), "kafka_connect_sink_task_metrics_sink_record_read_total", **snk) == 5
