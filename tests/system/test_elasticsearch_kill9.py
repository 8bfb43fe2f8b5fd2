"""The end-to-end pipeline with a crash in the middle: tweet-like JSON records stream into a
topic, a standalone worker process indexes them into Elasticsearch (the contract server,
reached with the real client) and is killed with SIGKILL twice while requests are in
flight. After the restarts the index holds every tweet exactly once: ids make the
redelivered records land on themselves, and external versions keep the newest value."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import orjson
import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tests.contract_servers.elasticsearch import ElasticsearchContractServer
from tests.support import BrokerProcess, StandaloneWorkerProcess, free_port, unique, wait_until, write_props

pytestmark = pytest.mark.slow

N = 20_000


class Feeder(threading.Thread):
    """Tweets 0..N-1 keyed by tweet id; every tenth tweet is later edited (a second value)."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        super().__init__(daemon=True)
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all"})
        self.topic = topic
        self.error: BaseException | None = None

    def tweet(self, i: int, edited: bool = False) -> bytes:
        return orjson.dumps(
            {
                "id": i,
                "text": f"tweet {i}{' (edited)' if edited else ''}",
                "user": f"u{i % 31}",
                "edited": edited,
            }
        )

    def run(self) -> None:
        try:
            for i in range(N):
                self.producer.produce(self.topic, key=str(i).encode(), value=self.tweet(i))
                if i % 10 == 0 and i >= 100:
                    j = i - 100
                    self.producer.produce(self.topic, key=str(j).encode(), value=self.tweet(j, edited=True))
                if i % 500 == 499:
                    self.producer.poll(0)
                    time.sleep(0.05)
            if self.producer.flush(60):
                raise AssertionError("records were not delivered")
        except BaseException as exc:
            self.error = exc


def test_kill_9_mid_stream_then_restart_every_tweet_once_with_its_latest_value(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "broker").start()
    es = ElasticsearchContractServer().start()
    try:
        two_kills_and_restarts(tmp_path, broker, es)
    finally:
        es.stop()
        broker.stop()


def two_kills_and_restarts(tmp_path: Path, broker: BrokerProcess, es: ElasticsearchContractServer) -> None:
    topic = unique("tweets")
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic, 3, 1)])[topic].result(30)
    files = [
        write_props(
            tmp_path / "worker.properties",
            {
                "bootstrap.servers": broker.bootstrap,
                "key.converter": "org.apache.kafka.connect.storage.StringConverter",
                "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                "value.converter.schemas.enable": "false",
                "offset.storage.file.filename": str(tmp_path / "offsets"),
                "offset.flush.interval.ms": "300",
                # The killed worker's consumers hold up the restarted one's first rebalance until
                # their sessions time out: each kill costs about two of these.
                "consumer.session.timeout.ms": "3000",
                "consumer.heartbeat.interval.ms": "1000",
                "listeners": f"http://127.0.0.1:{free_port()}",
            },
        ),
        write_props(
            tmp_path / "es.properties",
            {
                "name": "tweets-to-es",
                "connector.class": "ElasticsearchSinkConnector",
                "topics": topic,
                "tasks.max": "2",
                "connection.url": es.url,
                "key.ignore": "false",
                "schema.ignore": "true",
                "batch.size": "200",
                "max.in.flight.requests": "3",
            },
        ),
    ]
    feeder = Feeder(broker.bootstrap, topic)
    es.delay(20)  # requests stay in flight long enough for the kills to catch some
    worker = StandaloneWorkerProcess(*files).start()
    try:
        feeder.start()
        for fraction in (0.2, 0.55):
            wait_until(
                lambda f=fraction: len(es.documents(topic)) >= N * f,
                120,
                interval=0.1,
                message=f"{fraction:.0%}",
            )
            worker.kill9()
            worker = StandaloneWorkerProcess(*files).start()
        feeder.join(120)
        assert feeder.error is None, feeder.error
        edited = {j for j in range(N - 100) if (j + 100) % 10 == 0}
        wait_until(
            lambda: (
                len(es.documents(topic)) == N
                and sum(1 for d in es.documents(topic).values() if d["edited"]) == len(edited)
            ),
            120,
            interval=0.5,
            message=f"{N} tweets, {len(edited)} of them edited",
        )
        time.sleep(1.5)  # a late duplicate or a stale overwrite would show by now
        docs = es.documents(topic)
        assert sorted(int(k) for k in docs) == list(range(N))
        assert {
            int(k) for k, d in docs.items() if d["edited"]
        } == edited  # never overwritten by an older value
        assert all(d["id"] == int(k) for k, d in docs.items())
        # The kills did catch uncommitted work: some writes reached Elasticsearch twice.
        assert sum(es.bulk_items) > N + len(edited)
    finally:
        worker.stop()
