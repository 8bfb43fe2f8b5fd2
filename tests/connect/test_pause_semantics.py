"""PAUSED means nothing moves: a task reports PAUSED from its own thread once pausing has
taken effect, as Kafka's WorkerTask does, not when the request arrives."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from sluiceway.embedded import EmbeddedConnect
from tests.connect import plugins
from tests.support import unique, wait_until

P = "tests.connect.plugins."


def test_a_sink_in_the_middle_of_a_put_reports_paused_only_after_it(tmp_path: Path) -> None:
    name, topic = unique("slow-sink"), unique("pause")
    with EmbeddedConnect(tmp_path) as c:
        c.create_connector(
            name, {"connector.class": P + "RecordingSinkConnector", "topics": topic, "put.delay.ms": "1500"}
        )
        c.wait_for_running(name)
        c.produce(topic, [(None, f"v{i}".encode()) for i in range(5)])
        wait_until(lambda: any(e.startswith("putting") for e in plugins.EVENTS[name]), 30, message="a put")
        c.request("PUT", f"/connectors/{name}/pause")  # while put() is still writing
        c.wait_for_state(name, "PAUSED", tasks=1, timeout=30)
        put_when_paused = len(plugins.PUT[name])
        assert put_when_paused == 5, "PAUSED was reported while put() was still writing"
        c.produce(topic, [(None, f"w{i}".encode()) for i in range(5)])
        time.sleep(1.5)  # a running sink would have taken these by now
        assert len(plugins.PUT[name]) == put_when_paused
        c.request("PUT", f"/connectors/{name}/resume")
        c.wait_for_running(name)
        wait_until(lambda: len(plugins.PUT[name]) == 10, 30, message="the records after the resume")


def test_a_source_reports_paused_and_polls_nothing_more(tmp_path: Path) -> None:
    name, topic = unique("pausing-src"), unique("pause-src")

    def polled() -> float:
        text = httpx.get(f"{c.url}/metrics", timeout=10).text
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name == "kafka_connect_source_task_metrics_source_record_poll_total":
                    return sample.value
        raise AssertionError("no poll total")

    with EmbeddedConnect(tmp_path) as c:
        config = {"connector.class": P + "CountingSourceConnector", "topic": topic, "count": "100000"}
        c.create_connector(name, {**config, "interval.ms": "20", "batch": "1"})
        c.wait_for_running(name)
        wait_until(lambda: polled() > 0, 30, message="a poll")
        c.request("PUT", f"/connectors/{name}/pause")
        c.wait_for_state(name, "PAUSED", tasks=1, timeout=30)
        at_pause = polled()
        time.sleep(0.5)  # 25 polls' worth
        assert polled() == at_pause
        c.request("PUT", f"/connectors/{name}/resume")
        c.wait_for_running(name)
        wait_until(lambda: polled() > at_pause, 30, message="polls after the resume")
