"""The Twitter source in a real worker, reaching the contract server through the real tweepy:
recent search with pagination and since_id, restarts without gaps or duplicates, rate
limits waited out, refused tokens, the filtered stream with its rules, reconnects and
catch-up, malformed payloads, and tweets on to the Elasticsearch sink."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

import orjson
import pytest

from sluiceway.embedded import EmbeddedConnect
from tests.contract_servers.elasticsearch import ElasticsearchContractServer
from tests.contract_servers.twitter import TwitterContractServer
from tests.support import unique

SOURCE = "com.github.jcustenborder.kafka.connect.twitter.TwitterSourceConnector"
JSON = "org.apache.kafka.connect.json.JsonConverter"
T0 = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.UTC)


def source_config(twitter: TwitterContractServer, topic: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": SOURCE,
        "twitter.bearer.token": twitter.token,
        "twitter.api.base.url": twitter.url,
        "topic": topic,
        "query": "#kafka",
        "poll.interval.ms": "1000",
        "max.results": "10",
        "value.converter": JSON,
        "value.converter.schemas.enable": "false",
        **extra,
    }


def tweets(
    twitter: TwitterContractServer, n: int, start: int = 0, tag: str = "#kafka"
) -> list[dict[str, Any]]:
    made = [
        twitter.make_tweet(
            f"tweet {i} about {tag} and https://kafka.apache.org @{'ada' if i % 2 else 'alan'}",
            f"user{i % 3}",
            created_at=T0 + dt.timedelta(seconds=i),
            public_metrics={"retweet_count": i, "reply_count": 0, "like_count": 2 * i, "quote_count": 0},
        )
        for i in range(start, start + n)
    ]
    twitter.add_tweets(made)
    return made


def read(connect: EmbeddedConnect, topic: str, n: int) -> list[tuple[str, dict[str, Any]]]:
    return [(m.key().decode(), orjson.loads(m.value())) for m in connect.consume(topic, n)]


def nothing_more(connect: EmbeddedConnect, topic: str, n: int) -> bool:
    """No record beyond the first n arrives within a couple of seconds."""
    try:
        connect.consume(topic, n + 1, timeout=2)
    except AssertionError:
        return True
    return False


def test_search_pages_back_to_the_start_and_emits_oldest_first(
    connect: EmbeddedConnect, twitter: TwitterContractServer
) -> None:
    topic, name = unique("tweets"), unique("tw")
    made = tweets(twitter, 35)
    tweets(twitter, 5, 100, tag="#other")  # not matching the query
    connect.create_connector(name, source_config(twitter, topic))
    got = read(connect, topic, 35)
    assert [k for k, _ in got] == [t["id"] for t in sorted(made, key=lambda t: int(t["id"]))]
    key, value = got[7]
    assert key == value["id"]
    assert value["text"].startswith("tweet 7 about #kafka")
    assert value["author_username"] == "user1" and value["author_id"]
    assert value["created_at"] == int((T0 + dt.timedelta(seconds=7)).timestamp() * 1000)
    assert value["public_metrics"] == {
        "retweet_count": 7,
        "reply_count": 0,
        "like_count": 14,
        "quote_count": 0,
    }
    assert value["hashtags"] == ["kafka"] and value["urls"] == ["https://kafka.apache.org"]
    assert value["lang"] == "en"
    assert len(twitter.requests_to("/2/tweets/search/recent")) >= 4  # 35 tweets, pages of 10
    # New tweets come through since_id, and nothing twice.
    later = tweets(twitter, 3, 40)
    got = read(connect, topic, 38)
    assert [k for k, _ in got[35:]] == [t["id"] for t in later]
    assert nothing_more(connect, topic, 38)


def test_a_restarted_task_resumes_after_the_newest_tweet_written(
    connect: EmbeddedConnect, twitter: TwitterContractServer
) -> None:
    topic, name = unique("tweets"), unique("tw")
    tweets(twitter, 12)
    connect.create_connector(name, source_config(twitter, topic))
    read(connect, topic, 12)
    time.sleep(0.6)  # the offset flush (every 200 ms) has stored the newest id
    assert connect.request("PUT", f"/connectors/{name}/stop").status_code == 204
    connect.wait_for_state(name, "STOPPED", 0)
    made = tweets(twitter, 6, 50)  # while the connector is stopped
    assert connect.request("PUT", f"/connectors/{name}/resume").status_code == 202
    got = read(connect, topic, 18)
    assert [k for k, _ in got[12:]] == [t["id"] for t in made]
    assert len({k for k, _ in got}) == 18
    assert nothing_more(connect, topic, 18)


def test_rate_limits_are_waited_out_never_failed(
    connect: EmbeddedConnect, twitter: TwitterContractServer
) -> None:
    topic, name = unique("tweets"), unique("tw")
    tweets(twitter, 60)
    twitter.rate_limit("GET /2/tweets/search/recent", 2, 2.0)
    connect.create_connector(name, source_config(twitter, topic))
    got = (
        read(
            connect,
            topic,
            60,
        )
        if False
        else [(m.key().decode(), None) for m in connect.consume(topic, 60, timeout=45)]
    )
    assert len({k for k, _ in got}) == 60
    assert connect.status(name)["tasks"][0]["state"] == "RUNNING"
    assert any(o.status == 429 for o in twitter.observations)


@pytest.mark.parametrize(("forbidden", "words"), [(False, "twitter.bearer.token"), (True, "access level")])
def test_a_refused_token_fails_the_task_saying_which(
    connect: EmbeddedConnect, twitter: TwitterContractServer, forbidden: bool, words: str
) -> None:
    token = "forbidden-token" if forbidden else "not-a-valid-token"
    if forbidden:
        twitter.forbidden_tokens = [*twitter.forbidden_tokens, token]
    name = unique("tw")
    connect.create_connector(name, {**source_config(twitter, unique("t")), "twitter.bearer.token": token})
    status = connect.wait_for_state(name, "RUNNING", 1, task_state="FAILED")
    trace = status["tasks"][0]["trace"]
    assert words in trace and token not in trace


def test_the_stream_creates_its_rules_delivers_matches_and_reconnects(
    connect: EmbeddedConnect, twitter: TwitterContractServer
) -> None:
    topic, name = unique("stream"), unique("tw")
    connect.create_connector(
        name, {**source_config(twitter, topic, mode="stream", rules="#kafka,from:ada"), "query": ""}
    )
    connect.wait_for(lambda: twitter.open_streams == 1, 20, "the stream to open")
    assert sorted(r["value"] for r in twitter.rules()) == ["#kafka", "from:ada"]
    assert {r["tag"] for r in twitter.rules()} == {f"sluiceway:{name}"}
    first = twitter.make_tweet("live #kafka", "bob")
    twitter.publish(first)
    twitter.publish(twitter.make_tweet("nothing to see", "bob"))
    second = twitter.make_tweet("hello from ada", "ada")
    twitter.publish(second)
    got = read(connect, topic, 2)
    assert [(k, v["matching_rules"]) for k, v in got] == [
        (first["id"], ["#kafka"]),
        (second["id"], ["from:ada"]),
    ]
    twitter.disconnect_streams()
    connect.wait_for(lambda: twitter.stream_connections >= 2 and twitter.open_streams == 1, 30, "a reconnect")
    third = twitter.make_tweet("after the reconnect #kafka", "bob")
    twitter.publish(third)
    assert read(connect, topic, 3)[2][0] == third["id"]
    assert connect.request("DELETE", f"/connectors/{name}").status_code == 204
    connect.wait_for(lambda: not twitter.rules(), 20, "the connector's rules removed")


def test_a_restarted_stream_catches_up_through_search_without_duplicates(
    connect: EmbeddedConnect, twitter: TwitterContractServer
) -> None:
    topic, name = unique("stream"), unique("tw")
    config = {**source_config(twitter, topic, mode="stream", rules="#kafka"), "query": ""}
    connect.create_connector(name, config)
    connect.wait_for(lambda: twitter.open_streams == 1, 20, "the stream to open")
    live = [twitter.make_tweet(f"live {i} #kafka", "bob") for i in range(3)]
    for t in live:
        twitter.publish(t)
    read(connect, topic, 3)
    time.sleep(0.6)
    assert connect.request("PUT", f"/connectors/{name}/stop").status_code == 204
    connect.wait_for(lambda: twitter.open_streams == 0, 20, "the stream closed")
    missed = [twitter.make_tweet(f"missed {i} #kafka", "bob") for i in range(4)]
    for t in missed:
        twitter.publish(t)  # stored, and searchable; no stream is open to get it
    assert connect.request("PUT", f"/connectors/{name}/resume").status_code == 202
    connect.wait_for(lambda: twitter.open_streams == 1, 20, "the stream reopened")
    after = twitter.make_tweet("after #kafka", "bob")
    twitter.publish(after)
    got = [k for k, _ in read(connect, topic, 8)]
    assert got == [t["id"] for t in live + missed + [after]]
    assert nothing_more(connect, topic, 8)
    assert connect.request("DELETE", f"/connectors/{name}").status_code == 204
    connect.wait_for(lambda: twitter.open_streams == 0, 20, "the stream closed with its task")


def test_malformed_payloads_follow_errors_tolerance(
    connect: EmbeddedConnect, twitter: TwitterContractServer
) -> None:
    topic, dlq, name = unique("tweets"), unique("dlq"), unique("tw")
    tweets(twitter, 5)
    twitter.malformed_next(1, kind="missing_fields", where="search")
    connect.create_connector(
        name,
        source_config(
            twitter, topic, **{"errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq}
        ),
    )
    [dead] = connect.consume(dlq, 1)
    assert b"errors.exception.message" in b"".join(k.encode() for k, _ in dead.headers())
    assert len({m.key() for m in connect.consume(topic, 4)}) >= 4
    assert connect.request("DELETE", f"/connectors/{name}").status_code == 204  # it would take the next fault
    failing = unique("tw")
    twitter.malformed_next(1, kind="json", where="search")
    connect.create_connector(failing, source_config(twitter, unique("t")))
    status = connect.wait_for_state(failing, "RUNNING", 1, task_state="FAILED")
    assert "Malformed payload from Twitter" in status["tasks"][0]["trace"]


def test_tweets_flow_on_into_elasticsearch(connect: EmbeddedConnect, twitter: TwitterContractServer) -> None:
    topic = unique("tweets")
    tweets(twitter, 25)
    with ElasticsearchContractServer() as es:
        connect.create_connector(unique("tw"), source_config(twitter, topic))
        connect.create_connector(
            unique("es"),
            {
                "connector.class": "io.confluent.connect.elasticsearch.ElasticsearchSinkConnector",
                "topics": topic,
                "connection.url": es.url,
                "key.converter": "org.apache.kafka.connect.storage.StringConverter",
                "value.converter": JSON,
                "value.converter.schemas.enable": "false",
                "schema.ignore": "true",
            },
        )
        connect.wait_for(lambda: len(es.documents(topic)) == 25, 30, "25 tweets indexed")
        doc = next(iter(es.documents(topic).values()))
        assert doc["hashtags"] == ["kafka"] and "author_username" in doc
