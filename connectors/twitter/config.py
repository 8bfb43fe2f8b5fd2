"""The Twitter source's settings.

Keys of jcustenborder's ``TwitterSourceConnector`` that still mean something against API v2
are accepted: ``filter.keywords`` (the query, or one stream rule per keyword) and
``kafka.status.topic`` (the topic). Its OAuth 1.0a keys reached API v1.1's statuses/filter,
which is gone; they are refused with what to set instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator

from connect.api import CommaList, ConfigIssue, ConnectorConfig, Field, SecretStr, importance
from connect.api.config import lower_case

TWITTER = "Twitter"
_twitter = partial(importance, group=TWITTER)

DEFAULT_BASE_URL = "https://api.twitter.com"
DEFAULT_TWEET_FIELDS = "author_id,created_at,lang,public_metrics,entities,referenced_tweets,conversation_id"
_OAUTH1_KEYS = (
    "twitter.oauth.consumerKey",
    "twitter.oauth.consumerSecret",
    "twitter.oauth.accessToken",
    "twitter.oauth.accessTokenSecret",
)


Mode = Annotated[Literal["search", "stream"], BeforeValidator(lower_case)]


class TwitterSourceConfig(ConnectorConfig):
    twitter_bearer_token: SecretStr = Field(
        alias="twitter.bearer.token",
        description="The App's bearer token (API v2, app-only). Never logged or shown.",
        json_schema_extra=_twitter("HIGH", kafka_type="PASSWORD"),
    )
    twitter_api_base_url: str = Field(
        DEFAULT_BASE_URL,
        alias="twitter.api.base.url",
        description="Where API v2 is served: Twitter's, or a compatible endpoint or proxy.",
        json_schema_extra=_twitter("LOW", width="LONG"),
    )
    mode: Mode = Field(
        "search",
        alias="mode",
        description="search polls recent search for query; stream holds the filtered stream open with rules.",
        json_schema_extra=_twitter("HIGH"),
    )
    topic: str = Field(
        alias="topic",
        min_length=1,
        description="The topic tweets are written to.",
        json_schema_extra=_twitter("HIGH"),
    )
    query: str | None = Field(
        None,
        alias="query",
        description="The recent-search query (search mode), in Twitter's query language.",
        json_schema_extra=_twitter("HIGH", width="LONG"),
    )
    rules: CommaList = Field(
        default_factory=list,
        alias="rules",
        description="Filtered-stream rules (stream mode), comma-separated; the connector creates them, "
        "tagged with its name, and removes them when it stops.",
        json_schema_extra=_twitter("HIGH", width="LONG", kafka_type="LIST"),
    )
    poll_interval_ms: int = Field(
        15_000,
        alias="poll.interval.ms",
        ge=1000,
        description="How often recent search is asked for new tweets (search mode).",
        json_schema_extra=_twitter("MEDIUM", kafka_type="LONG"),
    )
    max_results: int = Field(
        100,
        alias="max.results",
        ge=10,
        le=100,
        description="Tweets per search page (10-100).",
        json_schema_extra=_twitter("LOW", kafka_type="INT"),
    )
    max_tweets_per_poll: int = Field(
        1000,
        alias="max.tweets.per.poll",
        ge=1,
        description="Records one poll() returns at most; the rest follow in the next polls.",
        json_schema_extra=_twitter("LOW", kafka_type="INT"),
    )
    tweet_fields: CommaList = Field(
        default_factory=lambda: DEFAULT_TWEET_FIELDS.split(","),
        alias="tweet.fields",
        description="Tweet fields asked for (the record has a column for each known one).",
        json_schema_extra=_twitter("LOW", kafka_type="LIST"),
    )
    user_fields: CommaList = Field(
        default_factory=lambda: ["username"],
        alias="user.fields",
        description="User fields asked for with the author_id expansion.",
        json_schema_extra=_twitter("LOW", kafka_type="LIST"),
    )
    expansions: CommaList = Field(
        default_factory=lambda: ["author_id"],
        alias="expansions",
        description="Expansions asked for; author_id gives the author's username.",
        json_schema_extra=_twitter("LOW", kafka_type="LIST"),
    )

    @classmethod
    def problems(cls, props: Mapping[str, Any]) -> list[ConfigIssue]:
        found = []
        mode = str(props.get("mode", "search")).strip().lower()
        keywords = str(props.get("filter.keywords") or "").strip()
        if mode == "search" and not (props.get("query") or keywords):
            found.append(ConfigIssue("query", "search mode needs a query"))
        if mode == "stream" and not (props.get("rules") or keywords):
            found.append(ConfigIssue("rules", "stream mode needs at least one rule"))
        for key in _OAUTH1_KEYS:
            if props.get(key):
                found.append(
                    ConfigIssue(
                        key,
                        "OAuth 1.0a keys reached API v1.1's streaming endpoints, which are gone; "
                        "set twitter.bearer.token (the App's API v2 bearer token) instead",
                    )
                )
        return found

    @classmethod
    def parse_with_aliases(cls, props: Mapping[str, Any]) -> TwitterSourceConfig:
        """``parse`` after mapping jcustenborder's keys onto these."""
        return cls.parse(translate(props))

    @property
    def token(self) -> str:
        return self.twitter_bearer_token.get_secret_value()


def translate(props: Mapping[str, Any]) -> dict[str, Any]:
    """jcustenborder's ``filter.keywords`` and ``kafka.status.topic`` as this connector's keys."""
    out = dict(props)
    if out.get("kafka.status.topic") and not out.get("topic"):
        out["topic"] = out["kafka.status.topic"]
    keywords = [k.strip() for k in str(out.get("filter.keywords") or "").split(",") if k.strip()]
    if keywords:
        if not out.get("query"):
            out["query"] = " OR ".join(f'"{k}"' if " " in k else k for k in keywords)
        if not out.get("rules"):
            out["rules"] = ",".join(keywords)
    return out
