"""Tweets as records, and the keys jcustenborder's users know."""

from __future__ import annotations

import datetime as dt

import pytest

from connectors.twitter.config import TwitterSourceConfig, translate
from connectors.twitter.tweets import MalformedTweet, to_struct, usernames

TWEET = {
    "id": "1861000000000000001",
    "text": "Hello #kafka @ada https://t.co/x",
    "author_id": "42",
    "created_at": "2026-11-21T10:00:00.000Z",
    "lang": "en",
    "public_metrics": {"retweet_count": 1, "reply_count": 2, "like_count": 3, "quote_count": 4},
    "entities": {
        "hashtags": [{"start": 6, "end": 12, "tag": "kafka"}],
        "mentions": [{"start": 13, "end": 17, "username": "ada", "id": "7"}],
        "urls": [
            {"start": 18, "end": 31, "url": "https://t.co/x", "expanded_url": "https://kafka.apache.org"}
        ],
    },
    "referenced_tweets": [{"type": "quoted", "id": "5"}],
}


def test_a_v2_tweet_becomes_a_struct() -> None:
    value = to_struct(TWEET, usernames({"users": [{"id": "42", "username": "grace"}]}), ["#kafka"])
    assert value.get("id") == TWEET["id"] and value.get("author_username") == "grace"
    assert value.get("created_at") == dt.datetime(2026, 11, 21, 10, tzinfo=dt.UTC)
    assert value.get("public_metrics").get("quote_count") == 4
    assert (value.get("hashtags"), value.get("mentions"), value.get("urls")) == (
        ["kafka"],
        ["ada"],
        ["https://kafka.apache.org"],
    )
    assert value.get("referenced_tweets")[0].get("type") == "quoted"
    assert value.get("matching_rules") == ["#kafka"]


def test_fields_not_asked_for_are_null() -> None:
    value = to_struct({"id": "1", "text": "x"}, {})
    assert value.get("lang") is None and value.get("hashtags") is None and value.get("created_at") is None


@pytest.mark.parametrize(
    ("tweet", "why"),
    [
        ({"text": "x"}, "no valid id"),
        ({"id": "abc", "text": "x"}, "no valid id"),
        ({"id": "1"}, "has no text"),
        ({"id": "1", "text": "x", "public_metrics": {"like_count": "many"}}, "does not have v2's shape"),
        ({"id": "1", "text": "x", "created_at": "yesterday"}, "does not have v2's shape"),
        ([1, 2], "must be a JSON object"),
    ],
)
def test_malformed_tweets_are_named(tweet: object, why: str) -> None:
    with pytest.raises(MalformedTweet, match=why):
        to_struct(tweet, {})


def test_jcustenborders_keys() -> None:
    props = {
        "twitter.bearer.token": "t",
        "kafka.status.topic": "tweets",
        "filter.keywords": "kafka, apache flink",
    }
    c = TwitterSourceConfig.parse_with_aliases(props)
    assert (c.topic, c.query, c.rules) == ("tweets", 'kafka OR "apache flink"', ["kafka", "apache flink"])
    issues = {
        i.key: i.message
        for i in TwitterSourceConfig.issues(translate({**props, "twitter.oauth.consumerKey": "k"}))
    }
    assert "twitter.bearer.token" in issues["twitter.oauth.consumerKey"]


def test_each_mode_needs_its_query() -> None:
    base = {"twitter.bearer.token": "t", "topic": "x"}
    assert {i.key for i in TwitterSourceConfig.issues(base)} == {"query"}
    assert {i.key for i in TwitterSourceConfig.issues({**base, "mode": "stream"})} == {"rules"}
