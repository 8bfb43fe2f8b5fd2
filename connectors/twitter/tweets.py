"""API v2 tweets as Connect records: the value schema and the conversion. Pure.

The key is the tweet id (a string: ids exceed what JSON numbers hold exactly); the value
a struct the JSON converter writes with its schema. A payload that is not a tweet (no
id, no text, a wrong type) raises ``MalformedTweet`` naming what is wrong.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from connect.api import Schema, SchemaBuilder, Struct, Timestamp

_OPT_STRING = SchemaBuilder.string().optional().build()
_OPT_INT64 = SchemaBuilder.int64().optional().build()
_STRINGS = SchemaBuilder.array(Schema.STRING_SCHEMA).optional().build()

METRICS_SCHEMA = (
    SchemaBuilder.struct()
    .name("sluiceway.twitter.PublicMetrics")
    .optional()
    .field("retweet_count", _OPT_INT64)
    .field("reply_count", _OPT_INT64)
    .field("like_count", _OPT_INT64)
    .field("quote_count", _OPT_INT64)
    .build()
)
REFERENCE_SCHEMA = (
    SchemaBuilder.struct()
    .name("sluiceway.twitter.ReferencedTweet")
    .field("type", Schema.STRING_SCHEMA)
    .field("id", Schema.STRING_SCHEMA)
    .build()
)
TWEET_SCHEMA = (
    SchemaBuilder.struct()
    .name("sluiceway.twitter.Tweet")
    .version(1)
    .field("id", Schema.STRING_SCHEMA)
    .field("text", Schema.STRING_SCHEMA)
    .field("author_id", _OPT_STRING)
    .field("author_username", _OPT_STRING)
    .field("created_at", Timestamp.builder().optional().build())
    .field("lang", _OPT_STRING)
    .field("conversation_id", _OPT_STRING)
    .field("public_metrics", METRICS_SCHEMA)
    .field("hashtags", _STRINGS)
    .field("mentions", _STRINGS)
    .field("urls", _STRINGS)
    .field("referenced_tweets", SchemaBuilder.array(REFERENCE_SCHEMA).optional().build())
    .field("matching_rules", _STRINGS)
    .build()
)
KEY_SCHEMA = Schema.STRING_SCHEMA


class MalformedTweet(ValueError):
    pass


def usernames(includes: Mapping[str, Any] | None) -> dict[str, str]:
    """author id → username from a response's ``includes.users``."""
    users = (includes or {}).get("users") or []
    return {
        str(u["id"]): str(u["username"])
        for u in users
        if isinstance(u, dict) and "id" in u and "username" in u
    }


def to_struct(tweet: Any, authors: Mapping[str, str], matching_rules: list[str] | None = None) -> Struct:
    if not isinstance(tweet, dict):
        raise MalformedTweet(f"a tweet must be a JSON object, got {type(tweet).__name__}")
    tweet_id, text = tweet.get("id"), tweet.get("text")
    if not isinstance(tweet_id, str) or not tweet_id.isdigit():
        raise MalformedTweet(f"the tweet has no valid id ({tweet_id!r})")
    if not isinstance(text, str):
        raise MalformedTweet(f"tweet {tweet_id} has no text")
    try:
        entities = tweet.get("entities") or {}
        author = tweet.get("author_id")
        value = Struct(TWEET_SCHEMA)
        value.put("id", tweet_id).put("text", text)
        value.put("author_id", str(author) if author is not None else None)
        value.put("author_username", authors.get(str(author)) if author is not None else None)
        value.put("created_at", _timestamp(tweet.get("created_at")))
        value.put("lang", tweet.get("lang"))
        value.put("conversation_id", tweet.get("conversation_id"))
        metrics = tweet.get("public_metrics")
        if isinstance(metrics, dict):
            m = Struct(METRICS_SCHEMA)
            for name in ("retweet_count", "reply_count", "like_count", "quote_count"):
                m.put(name, _int(metrics.get(name)))
            value.put("public_metrics", m)
        value.put(
            "hashtags",
            [str(h["tag"]) for h in entities.get("hashtags") or []] if "hashtags" in entities else None,
        )
        value.put(
            "mentions",
            [str(m["username"]) for m in entities.get("mentions") or []] if "mentions" in entities else None,
        )
        value.put(
            "urls",
            [str(u.get("expanded_url") or u["url"]) for u in entities.get("urls") or []]
            if "urls" in entities
            else None,
        )
        refs = tweet.get("referenced_tweets")
        if refs is not None:
            value.put(
                "referenced_tweets",
                [Struct(REFERENCE_SCHEMA).put("type", str(r["type"])).put("id", str(r["id"])) for r in refs],
            )
        value.put("matching_rules", matching_rules)
        value.validate()
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise MalformedTweet(
            f"tweet {tweet_id} does not have v2's shape: {type(exc).__name__}: {exc}"
        ) from None
    return value


def _timestamp(text: Any) -> dt.datetime | None:
    if text is None:
        return None
    return dt.datetime.fromisoformat(str(text).replace("Z", "+00:00")).astimezone(dt.UTC)


def _int(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{value!r} is not a count")
    return value
