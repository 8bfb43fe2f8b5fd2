"""The Twitter source in a standalone worker process, killed with SIGKILL while tweets keep
arriving, then restarted: the topic holds every tweet (no gap), and what it holds twice is
only what the dead worker had sent after the offset it last stored; a clean restart after
that repeats nothing."""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer

from tests.contract_servers.twitter import TwitterContractServer
from tests.support import BrokerProcess, StandaloneWorkerProcess, free_port, unique, wait_until, write_props

pytestmark = pytest.mark.slow

N = 600


class Tweeter(threading.Thread):
    """N tweets about #kafka, a few every 20 ms."""

    def __init__(self, twitter: TwitterContractServer) -> None:
        super().__init__(daemon=True)
        self.twitter = twitter
        self.ids: list[str] = []
        self.start_at = dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)

    def run(self) -> None:
        for i in range(N):
            tweet = self.twitter.make_tweet(
                f"tweet {i} #kafka", f"user{i % 5}", created_at=self.start_at + dt.timedelta(seconds=i)
            )
            self.twitter.add_tweets([tweet])
            self.ids.append(tweet["id"])
            if i % 3 == 2:
                time.sleep(0.02)


class Topic:
    def __init__(self, bootstrap: str, topic: str) -> None:
        self.consumer = Consumer(
            {"bootstrap.servers": bootstrap, "group.id": unique("reader"), "auto.offset.reset": "earliest"}
        )
        self.consumer.subscribe([topic])
        self.keys: list[str] = []

    def read(self) -> int:
        for m in self.consumer.consume(1000, 0.2):
            if m.error() is None:
                self.keys.append(m.key().decode())
        return len(self.keys)


def stored_since_id(path: Path) -> str | None:
    if not path.exists():
        return None
    values = [json.loads(v) for v in json.loads(path.read_text()).values()]
    return str(values[0]["since_id"]) if values else None


def test_kill_9_then_restart_no_tweet_missing_repeats_only_the_unstored(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "broker").start()
    twitter = TwitterContractServer().start()
    topic, offsets = unique("tweets"), tmp_path / "offsets.json"
    files = [
        write_props(
            tmp_path / "worker.properties",
            {
                "bootstrap.servers": broker.bootstrap,
                "key.converter": "org.apache.kafka.connect.storage.StringConverter",
                "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                "offset.storage.file.filename": str(offsets),
                "offset.flush.interval.ms": "500",
                "listeners": f"http://127.0.0.1:{free_port()}",
            },
        ),
        write_props(
            tmp_path / "twitter.properties",
            {
                "name": "tweets",
                "connector.class": "TwitterSourceConnector",
                "twitter.bearer.token": twitter.token,
                "twitter.api.base.url": twitter.url,
                "topic": topic,
                "query": "#kafka",
                "poll.interval.ms": "1000",
            },
        ),
    ]
    reader = Topic(broker.bootstrap, topic)
    tweeter = Tweeter(twitter)
    worker = StandaloneWorkerProcess(*files).start()
    try:
        tweeter.start()
        wait_until(lambda: reader.read() >= N // 3, 60, interval=0.05, message="a third of the tweets")
        worker.kill9()
        stored = stored_since_id(offsets)
        sent_before_kill = list(reader.keys)
        worker = StandaloneWorkerProcess(*files).start()
        tweeter.join(60)
        wait_until(
            lambda: reader.read() >= N and set(reader.keys) >= set(tweeter.ids),
            60,
            interval=0.2,
            message="all",
        )
        time.sleep(2)
        reader.read()
        assert set(reader.keys) == set(tweeter.ids)  # no gap
        repeated = len(reader.keys) - len(set(reader.keys))
        unstored = [k for k in sent_before_kill if stored is None or int(k) > int(stored)]
        assert repeated == len(unstored)  # only what the dead worker sent after its stored offset
        # A clean stop and start repeats nothing.
        time.sleep(1.2)  # an offset flush
        before = len(reader.keys)
        worker.stop()
        worker = StandaloneWorkerProcess(*files).start()
        more = [twitter.make_tweet(f"late {i} #kafka", "late") for i in range(5)]
        twitter.add_tweets(more)
        wait_until(lambda: reader.read() >= before + 5, 60, interval=0.2, message="the late tweets")
        time.sleep(2)
        reader.read()
        assert reader.keys[before:] == [t["id"] for t in more]
    finally:
        worker.stop()
        reader.consumer.close()
        twitter.stop()
        broker.stop()
