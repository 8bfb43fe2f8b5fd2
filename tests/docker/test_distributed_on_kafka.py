"""Distributed mode against Apache Kafka: the group protocol, internal topics and task
moves of tests/connect/test_distributed.py, with Kafka's broker instead of ours."""

from __future__ import annotations

from pathlib import Path

import pytest

from sluiceway.embedded import EmbeddedConnectCluster
from tests.support import unique

pytestmark = pytest.mark.docker

P = "tests.connect.plugins."


def test_a_cluster_on_apache_kafka_runs_and_moves_work(tmp_path: Path, kafka_bootstrap: str) -> None:
    config = {
        "group.id": unique("cluster"),
        "config.storage.topic": unique("configs"),
        "offset.storage.topic": unique("offsets"),
        "status.storage.topic": unique("status"),
    }
    with EmbeddedConnectCluster(
        tmp_path, workers=2, worker_config=config, bootstrap_servers=kafka_bootstrap
    ) as c:
        name, topic = unique("src"), unique()
        follower = c.follower()
        r = c.request(
            "PUT",
            f"/connectors/{name}/config",
            {
                "connector.class": P + "CountingSourceConnector",
                "topic": topic,
                "count": "20",
                "tasks.max": "2",
            },
            worker=follower,
        )
        assert r.status_code == 201, r.text
        c.wait_for_running(name, tasks=2, timeout=60)
        assert len(c.consume(topic, 40)) == 40
        c.stop_worker(c.leader())
        c.wait_for(
            lambda: (
                {t["worker_id"] for t in c.status(name)["tasks"] if t["state"] == "RUNNING"}
                == {c.url(c.live()[0]).rstrip("/").split("://", 1)[1]}
            ),
            60,
            "both tasks on the remaining worker",
        )
