"""The Twitter API v2 contract server, driven by the real tweepy ``Client`` and ``StreamingClient``.

tweepy has no host setting, so every client here goes through ``use_base_url``: a requests
transport adapter, mounted on the client's session for ``https://api.twitter.com/``, that
rewrites the URL to the server's just before sending (see the ``twitter`` module docstring).

Streaming clients stop themselves on an HTTP error (``Recorder.on_request_error``): tweepy
would otherwise sleep 5 to 60 seconds before trying again.
"""

from __future__ import annotations

import json
import selectors
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import requests
import tweepy
from requests.adapters import HTTPAdapter
from requests.utils import should_bypass_proxies

from tests.contract_servers.twitter import DEFAULT_TOKEN, RuleChange, TwitterContractServer, snowflake
from tests.support import ROOT, wait_until

TWITTER_API = "https://api.twitter.com"
TWEET_FIELDS = [
    "author_id",
    "created_at",
    "lang",
    "public_metrics",
    "entities",
    "referenced_tweets",
    "conversation_id",
]
T0 = datetime(2026, 11, 21, 10, 0, tzinfo=UTC)
NOT_ENROLLED = "When authenticating requests to the Twitter API v2 endpoints, you must use keys"


# --------------------------------------------------------------------------------------------
# pointing tweepy at the server


class BaseUrlAdapter(HTTPAdapter):
    """Sends what tweepy addresses to ``https://api.twitter.com`` to ``base_url`` instead."""

    def __init__(self, base_url: str) -> None:
        super().__init__()
        self.base_url = base_url.rstrip("/")

    # The signature is HTTPAdapter.send's (mypy --strict accepts Any for its private types).
    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: Any = None,
        verify: Any = True,
        cert: Any = None,
        proxies: dict[str, str] | None = None,
    ) -> requests.Response:
        url = request.url or ""
        if url.startswith(TWITTER_API + "/"):
            request.url = self.base_url + url[len(TWITTER_API) :]
            # requests chose proxies for api.twitter.com; no_proxy must judge the real host.
            if should_bypass_proxies(request.url, no_proxy=None):
                proxies = {}
        return super().send(request, stream, timeout, verify, cert, proxies)


def use_base_url(client: tweepy.Client | tweepy.StreamingClient, base_url: str) -> None:
    client.session.mount(TWITTER_API + "/", BaseUrlAdapter(base_url))


class Recorder(tweepy.StreamingClient):
    """A StreamingClient that records every callback tweepy makes."""

    def __init__(self, token: str, **kwargs: Any) -> None:
        super().__init__(token, daemon=True, **kwargs)
        self.events: list[tuple[str, Any]] = []
        self._cond = threading.Condition()

    def _add(self, kind: str, value: Any = None) -> None:
        with self._cond:
            self.events.append((kind, value))
            self._cond.notify_all()

    def of(self, kind: str) -> list[Any]:
        with self._cond:
            return [value for k, value in self.events if k == kind]

    def wait_for(self, kind: str, count: int = 1, timeout: float = 5.0) -> list[Any]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(found := [v for k, v in self.events if k == kind]) < count:
                left = deadline - time.monotonic()
                assert left > 0, f"waited for {count} {kind!r}, got {self.events}"
                self._cond.wait(left)
            return found

    def on_connect(self) -> None:
        self._add("connect")

    def on_response(self, response: Any) -> None:
        self._add("response", response)

    def on_keep_alive(self) -> None:
        self._add("keep_alive")

    def on_errors(self, errors: Any) -> None:
        self._add("errors", errors)

    def on_connection_error(self) -> None:
        self._add("connection_error")

    def on_closed(self, response: Any) -> None:
        self._add("closed")

    def on_request_error(self, status_code: int) -> None:
        self._add("request_error", status_code)
        self.disconnect()

    def on_exception(self, exception: Exception) -> None:
        self._add("exception", exception)

    def on_disconnect(self) -> None:
        self._add("disconnect")


# --------------------------------------------------------------------------------------------
# fixtures


@pytest.fixture(autouse=True)
def no_leaked_threads() -> Iterator[None]:
    before = set(threading.enumerate())
    yield
    wait_until(lambda: not set(threading.enumerate()) - before, timeout=5, message="threads to end")


@pytest.fixture
def server() -> Iterator[TwitterContractServer]:
    with TwitterContractServer(keepalive_s=0.1) as s:
        yield s


def make_client(server: TwitterContractServer, token: str | None = None, **kwargs: Any) -> tweepy.Client:
    client = tweepy.Client(bearer_token=token or server.token, **kwargs)
    use_base_url(client, server.url)
    return client


@pytest.fixture
def client(server: TwitterContractServer) -> Iterator[tweepy.Client]:
    c = make_client(server, wait_on_rate_limit=False)
    yield c
    c.session.close()


@pytest.fixture
def streams(server: TwitterContractServer) -> Iterator[Callable[..., Recorder]]:
    made: list[Recorder] = []

    def make(token: str | None = None) -> Recorder:
        recorder = Recorder(token or server.token)
        use_base_url(recorder, server.url)
        made.append(recorder)
        return recorder

    yield make
    for recorder in made:
        recorder.disconnect()  # noticed at the next line or keep-alive
    for recorder in made:
        if recorder.thread is not None:
            recorder.thread.join(5)
            assert not recorder.thread.is_alive()


Streams = Callable[..., Recorder]


def ids(response: Any) -> list[str]:
    return [str(t.id) for t in response.data or []]


# --------------------------------------------------------------------------------------------
# recent search


def test_search_returns_requested_fields_expansions_and_includes(
    server: TwitterContractServer, client: tweepy.Client
) -> None:
    server.add_user("alice", "Alice Liddell", verified=True, public_metrics={"followers_count": 42})
    server.add_user("bob")
    first = server.add_tweet(
        "Hello #Sluiceway from @bob and @nobody: https://example.com/docs/connectors/twitter.html",
        "alice",
        created_at=T0,
        public_metrics={"like_count": 7},
    )
    reply = server.add_tweet(
        "@alice thanks!",
        "bob",
        created_at=T0 + timedelta(minutes=1),
        referenced_tweets=[("replied_to", first["id"])],
    )

    response = client.search_recent_tweets(
        "sluiceway OR thanks",
        tweet_fields=TWEET_FIELDS,
        user_fields=["created_at", "verified", "public_metrics"],
        expansions=["author_id"],
    )

    assert ids(response) == [reply["id"], first["id"]]  # newest first
    newest, oldest = response.data
    assert set(oldest.data) == {"id", "text", "edit_history_tweet_ids", *TWEET_FIELDS} - {"referenced_tweets"}
    assert oldest.data["created_at"] == "2026-11-21T10:00:00.000Z"
    assert oldest.created_at == T0
    assert oldest.edit_history_tweet_ids == [int(first["id"])]
    assert oldest.public_metrics == {
        "retweet_count": 0,
        "reply_count": 0,
        "like_count": 7,
        "quote_count": 0,
        "bookmark_count": 0,
        "impression_count": 0,
    }
    text = oldest.text
    assert text.startswith("Hello #Sluiceway from @bob and @nobody: https://t.co/")
    bob = server.user("bob")
    assert bob is not None
    entities = oldest.entities
    assert entities["hashtags"] == [{"start": 6, "end": 16, "tag": "Sluiceway"}]
    # Only accounts that exist become mention entities.
    assert entities["mentions"] == [{"start": 22, "end": 26, "username": "bob", "id": bob["id"]}]
    (url,) = entities["urls"]
    assert text[url["start"] : url["end"]] == url["url"]
    assert url["expanded_url"] == "https://example.com/docs/connectors/twitter.html"
    assert url["display_url"] == "example.com/docs/connecto…"
    assert newest.referenced_tweets[0].type == "replied_to"
    assert newest.in_reply_to_user_id is None  # not asked for
    assert newest.conversation_id == int(first["id"])
    users = {u.username: u for u in response.includes["users"]}
    assert set(users) == {"alice", "bob"}
    assert users["alice"].verified is True
    assert users["alice"].public_metrics["followers_count"] == 42
    assert set(users["alice"].data) == {"id", "name", "username", "created_at", "verified", "public_metrics"}
    assert response.meta == {"newest_id": reply["id"], "oldest_id": first["id"], "result_count": 2}
    assert response.errors == []


def test_search_without_fields_returns_id_text_and_edit_history_only(
    server: TwitterContractServer, client: tweepy.Client
) -> None:
    server.add_tweet("just text", "carol")
    response = client.search_recent_tweets("text")
    assert set(response.data[0].data) == {"id", "text", "edit_history_tweet_ids"}
    assert response.includes == {}


def test_no_results_has_meta_only(server: TwitterContractServer, client: tweepy.Client) -> None:
    server.add_tweet("something else", "carol")
    raw = make_client(server, return_type=dict).search_recent_tweets("absent")
    assert raw == {"meta": {"result_count": 0}}
    response = client.search_recent_tweets("absent")
    assert response.data is None
    assert response.meta == {"result_count": 0}


def test_pagination_by_next_token_goes_newest_to_oldest(
    server: TwitterContractServer, client: tweepy.Client
) -> None:
    made = [
        server.add_tweet(f"tweet number {i}", "dave", created_at=T0 + timedelta(seconds=i)) for i in range(25)
    ]
    expected = [t["id"] for t in reversed(made)]

    pages = list(tweepy.Paginator(client.search_recent_tweets, "tweet", max_results=10))
    assert [p.meta["result_count"] for p in pages] == [10, 10, 5]
    assert "next_token" in pages[0].meta and "next_token" not in pages[2].meta
    assert [i for p in pages for i in ids(p)] == expected
    sent = [o.params.get("next_token") for o in server.requests_to("/2/tweets/search/recent")]
    assert sent == [None, pages[0].meta["next_token"], pages[1].meta["next_token"]]


def test_since_id_and_until_id_are_exclusive(server: TwitterContractServer, client: tweepy.Client) -> None:
    made = [server.add_tweet(f"tick {i}", "erin", created_at=T0 + timedelta(seconds=i)) for i in range(5)]
    since = client.search_recent_tweets("tick", since_id=made[1]["id"])
    assert ids(since) == [made[4]["id"], made[3]["id"], made[2]["id"]]
    window = client.search_recent_tweets("tick", since_id=made[0]["id"], until_id=made[3]["id"])
    assert ids(window) == [made[2]["id"], made[1]["id"]]
    times = client.search_recent_tweets(
        "tick", start_time=T0 + timedelta(seconds=1), end_time=T0 + timedelta(seconds=3)
    )
    assert ids(times) == [made[2]["id"], made[1]["id"]]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("cats", {"cats"}),
        ("CATS", {"cats"}),
        ("#pets", {"cats", "dogs"}),
        ("#PETS", {"cats", "dogs"}),
        ("great -dogs", {"cats"}),
        ("from:alice", {"cats", "link"}),
        ("FROM:Alice", {"cats", "link"}),
        ("lang:fr chats", {"chats"}),
        ("cats OR dogs", {"cats", "dogs", "retweet"}),
        ("(cats OR dogs) -is:retweet", {"cats", "dogs"}),
        ("dogs great OR chats", {"dogs", "retweet", "chats"}),
        ("@alice", {"mention"}),
        ("great is:retweet", {"retweet"}),
        ('"are great"', {"cats", "dogs", "retweet"}),
        ("from:bob has:mentions", {"mention"}),
        ("url:example.org", {"link"}),
        ("category -(cats OR dogs)", {"mention"}),
    ],
)
def test_query_language_subset(
    server: TwitterContractServer, client: tweepy.Client, query: str, expected: set[str]
) -> None:
    server.add_user("alice")
    server.add_user("bob")
    named = {
        "cats": server.add_tweet("Cats are great #pets", "alice"),
        "dogs": server.add_tweet("Dogs are great #Pets", "bob"),
        "chats": server.add_tweet("Les chats sont super", "carol", lang="fr"),
        "mention": server.add_tweet("category theory for @alice", "bob"),
        "link": server.add_tweet("read https://example.org/cats now", "alice"),
    }
    named["retweet"] = server.add_tweet(
        "RT @bob: Dogs are great", "carol", referenced_tweets=[("retweeted", named["dogs"]["id"])]
    )
    by_id = {t["id"]: name for name, t in named.items()}
    response = client.search_recent_tweets(query, max_results=100)
    assert {by_id[i] for i in ids(response)} == expected


@pytest.mark.parametrize(
    ("query", "detail"),
    [
        ("foo:bar", "Reference to invalid operator 'foo' (at position 1)"),
        ("-cats", "Rules must contain a non-negation term"),
        ("lang:en", "cannot stand alone"),
        ("(cats", "missing ')'"),
        ("cats)", "extraneous input ')'"),
        ("cats OR", "no viable alternative at input '<EOF>'"),
    ],
)
def test_invalid_query_is_a_bad_request(client: tweepy.Client, query: str, detail: str) -> None:
    with pytest.raises(tweepy.BadRequest) as excinfo:
        client.search_recent_tweets(query)
    (message,) = excinfo.value.api_messages
    assert message.startswith("There were errors processing your request: ")
    assert detail in message
    assert excinfo.value.api_errors[0]["parameters"] == {"query": [query]}


@pytest.mark.parametrize("value", [5, 101])
def test_max_results_out_of_range_is_a_bad_request(client: tweepy.Client, value: int) -> None:
    with pytest.raises(tweepy.BadRequest) as excinfo:
        client.search_recent_tweets("cats", max_results=value)
    body = excinfo.value.response.json()
    assert body == {
        "errors": [
            {
                "parameters": {"max_results": [str(value)]},
                "message": f"The `max_results` query parameter value [{value}] is not between 10 and 100",
            }
        ],
        "title": "Invalid Request",
        "detail": "One or more parameters to your request was invalid.",
        "type": "https://api.twitter.com/2/problems/invalid-request",
    }
    assert str(excinfo.value).startswith("400 Bad Request\nThe `max_results` query parameter value")
    assert excinfo.value.response.headers["x-rate-limit-remaining"] == "449"  # refused, still counted


# tweepy warns about the unknown parameter with the deprecated Logger.warn.
@pytest.mark.filterwarnings("ignore:The 'warn' method is deprecated")
def test_unknown_field_and_parameter_are_bad_requests(client: tweepy.Client) -> None:
    with pytest.raises(tweepy.BadRequest, match=r"The `tweet.fields` query parameter value \[colour\]"):
        client.search_recent_tweets("cats", tweet_fields=["lang", "colour"])
    with pytest.raises(tweepy.BadRequest, match=r"The query parameter \[foo\] is not one of"):
        client.search_recent_tweets("cats", foo="bar")


# --------------------------------------------------------------------------------------------
# lookup and partial errors


def test_lookup_reports_missing_ids_as_partial_errors(
    server: TwitterContractServer, client: tweepy.Client
) -> None:
    known = server.add_tweet("I exist", "frank")
    response = client.get_tweets([known["id"], "20"])
    assert ids(response) == [known["id"]]
    assert response.errors == [
        {
            "value": "20",
            "detail": "Could not find tweet with ids: [20].",
            "title": "Not Found Error",
            "resource_type": "tweet",
            "parameter": "ids",
            "resource_id": "20",
            "type": "https://api.twitter.com/2/problems/resource-not-found",
        }
    ]
    single = client.get_tweet("21")
    assert single.data is None
    assert single.errors[0]["parameter"] == "id"
    assert client.get_tweet(known["id"], tweet_fields=["lang"]).data.lang == "en"


def test_expansion_of_a_missing_referenced_tweet_is_a_partial_error(
    server: TwitterContractServer, client: tweepy.Client
) -> None:
    quoted = server.add_tweet("original", "gina")
    server.add_tweet("quoting", "hank", referenced_tweets=[("quoted", quoted["id"]), ("replied_to", "99")])
    response = client.search_recent_tweets(
        "quoting", expansions=["referenced_tweets.id", "referenced_tweets.id.author_id"]
    )
    assert [t.text for t in response.includes["tweets"]] == ["original"]
    assert [u.username for u in response.includes["users"]] == ["gina"]
    assert [(e["parameter"], e["resource_id"]) for e in response.errors] == [("referenced_tweets.id", "99")]


# --------------------------------------------------------------------------------------------
# stream rules


def test_rules_add_list_delete(server: TwitterContractServer, streams: Streams) -> None:
    stream = streams()
    assert stream.get_rules().data is None
    added = stream.add_rules([tweepy.StreamRule("cats has:links", tag="cats"), tweepy.StreamRule("from:bob")])
    assert added.meta["summary"] == {"created": 2, "not_created": 0, "valid": 2, "invalid": 0}
    assert [(r.value, r.tag) for r in added.data] == [("cats has:links", "cats"), ("from:bob", None)]
    listed = stream.get_rules()
    assert listed.data == added.data
    assert listed.meta["result_count"] == 2 and listed.meta["sent"].endswith("Z")
    deleted = stream.delete_rules(added.data[0])
    assert deleted.meta["summary"] == {"deleted": 1, "not_deleted": 0}
    assert [r.value for r in stream.get_rules().data] == ["from:bob"]
    assert server.rule_changes == [
        RuleChange("add", False, ("cats has:links", "from:bob"), (added.data[0].id, added.data[1].id)),
        RuleChange("delete", False, (added.data[0].id,), (added.data[0].id,)),
    ]
    assert server.requests_to("/2/tweets/search/stream/rules", "POST")[0].status == 201


def test_rules_dry_run_changes_nothing(server: TwitterContractServer, streams: Streams) -> None:
    stream = streams()
    existing = stream.add_rules(tweepy.StreamRule("dogs")).data[0]
    dry = stream.add_rules(tweepy.StreamRule("cats"), dry_run=True)
    assert dry.meta["summary"] == {"created": 0, "not_created": 1, "valid": 1, "invalid": 0}
    assert [r.value for r in dry.data] == ["cats"]
    dry_delete = stream.delete_rules(existing.id, dry_run=True)
    assert dry_delete.meta["summary"] == {"deleted": 0, "not_deleted": 1}
    assert [r["value"] for r in server.rules()] == ["dogs"]


def test_invalid_duplicate_and_unknown_rules_are_reported(streams: Streams) -> None:
    stream = streams()
    first = stream.add_rules(tweepy.StreamRule("cats")).data[0]
    response = stream.add_rules(
        [tweepy.StreamRule("cats"), tweepy.StreamRule("(dogs"), tweepy.StreamRule("birds", tag="b")]
    )
    assert [r.value for r in response.data] == ["birds"]
    assert response.meta["summary"] == {"created": 1, "not_created": 2, "valid": 1, "invalid": 2}
    duplicate, invalid = response.errors
    assert duplicate == {
        "value": "cats",
        "id": first.id,
        "title": "DuplicateRule",
        "type": "https://api.twitter.com/2/problems/duplicate-rules",
    }
    assert invalid["title"] == "UnprocessableEntity"
    assert invalid["type"] == "https://api.twitter.com/2/problems/invalid-rules"
    assert invalid["details"] == ["missing ')' at '<EOF>' (at position 6)"]
    unknown = stream.delete_rules(["1234"])
    assert unknown.meta["summary"] == {"deleted": 0, "not_deleted": 1}
    assert unknown.errors[0]["errors"] == [{"parameters": {}, "message": "Rule does not exist"}]


# --------------------------------------------------------------------------------------------
# the filtered stream


def test_stream_delivers_matching_tweets_with_rules_and_keep_alives(
    server: TwitterContractServer, streams: Streams
) -> None:
    stream = streams()
    rules = stream.add_rules([tweepy.StreamRule("cats", tag="cats"), tweepy.StreamRule("from:bob")]).data
    server.add_user("bob")
    thread = stream.filter(threaded=True, expansions=["author_id"], tweet_fields=["created_at", "lang"])
    assert thread is stream.thread
    assert server.wait_for_streams(1)
    stream.wait_for("keep_alive", 2)

    assert server.publish(server.make_tweet("nothing to see", "carol")) == 0
    both = server.make_tweet("my cats", "bob")
    assert server.publish(both) == 1
    (response,) = stream.wait_for("response")
    assert response.data.id == int(both["id"])
    assert set(response.data.data) == {"id", "text", "edit_history_tweet_ids", "created_at", "lang"}
    assert [u.username for u in response.includes["users"]] == ["bob"]
    assert {(r.id, r.tag) for r in response.matching_rules} == {(rules[0].id, "cats"), (rules[1].id, "")}
    assert server.tweet(both["id"]) is not None  # published tweets are searchable too

    # Rule changes apply to the open connection.
    stream.add_rules(tweepy.StreamRule("#breaking", tag="news"))
    server.publish(server.make_tweet("#Breaking now", "carol"))
    later = stream.wait_for("response", 2)[1]
    assert [r.tag for r in later.matching_rules] == ["news"]
    assert server.stream_connections == 1
    (observed,) = server.requests_to("/2/tweets/search/stream")
    assert observed.params == {"expansions": "author_id", "tweet.fields": "created_at,lang"}


def test_disconnect_makes_tweepy_reconnect(server: TwitterContractServer, streams: Streams) -> None:
    stream = streams()
    stream.add_rules(tweepy.StreamRule("cats"))
    stream.filter(threaded=True)
    assert server.wait_for_streams(1)
    assert server.disconnect_streams() == 1
    stream.wait_for("connection_error")  # the chunked response was cut off
    wait_until(lambda: server.stream_connections == 2 and server.open_streams == 1, timeout=5)
    assert len(stream.wait_for("connect", 2)) == 2
    server.publish(server.make_tweet("cats after the reconnect", "ivy"))
    assert stream.wait_for("response")[0].data.text == "cats after the reconnect"


def test_operational_disconnect_sends_an_error_line_first(
    server: TwitterContractServer, streams: Streams
) -> None:
    stream = streams()
    stream.add_rules(tweepy.StreamRule("cats"))
    stream.filter(threaded=True)
    assert server.wait_for_streams(1)
    server.disconnect_streams(operational=True)
    (errors,) = stream.wait_for("errors")
    assert errors[0]["disconnect_type"] == "OperationalDisconnect"
    assert errors[0]["type"] == "https://api.twitter.com/2/problems/operational-disconnect"
    wait_until(lambda: server.stream_connections == 2, timeout=5)


def test_second_stream_connection_gets_429(server: TwitterContractServer, streams: Streams) -> None:
    first = streams()
    first.add_rules(tweepy.StreamRule("cats"))
    first.filter(threaded=True)
    assert server.wait_for_streams(1)
    second = streams()
    second.filter()  # returns: on_request_error disconnects
    assert second.of("request_error") == [429]
    raw = requests.get(
        server.url + "/2/tweets/search/stream", headers={"Authorization": f"Bearer {server.token}"}, timeout=5
    )
    assert raw.status_code == 429
    assert raw.json() == {
        "title": "ConnectionException",
        "detail": "This stream is currently at the maximum allowed connection limit.",
        "connection_issue": "TooManyConnections",
        "type": "https://api.twitter.com/2/problems/streaming-connection",
    }
    assert "x-rate-limit-remaining" in raw.headers
    assert server.open_streams == 1 and server.stream_connections == 1
    # Once the first client goes, the slot is free again.
    first.disconnect()
    assert first.thread is not None
    first.thread.join(5)
    wait_until(lambda: server.open_streams == 0, timeout=5)


def test_stream_without_rules_is_a_409(streams: Streams) -> None:
    stream = streams()
    stream.filter()
    assert stream.of("request_error") == [409]


def test_stream_with_a_bad_token_is_a_401(server: TwitterContractServer, streams: Streams) -> None:
    server.add_tweet("x", "jack")
    stream = streams("wrong-token")
    stream.filter()
    assert stream.of("request_error") == [401]


def test_malformed_stream_lines_end_tweepys_stream(server: TwitterContractServer, streams: Streams) -> None:
    for kind, error in (("json", json.JSONDecodeError), ("missing_fields", KeyError)):
        stream = streams()
        if not server.rules():
            stream.add_rules(tweepy.StreamRule("cats"))
        server.malformed_next(1, kind=kind)
        stream.filter(threaded=True)
        assert server.wait_for_streams(1)
        server.publish(server.make_tweet("cats", "kim"))
        (exception,) = stream.wait_for("exception")
        assert isinstance(exception, error)
        stream.wait_for("disconnect")  # tweepy gives up on the stream after an exception
        wait_until(lambda: server.open_streams == 0, timeout=5)


# --------------------------------------------------------------------------------------------
# authentication


def test_wrong_or_missing_token_is_unauthorized(server: TwitterContractServer) -> None:
    for token in ("wrong", None):
        client = tweepy.Client(bearer_token=token)
        use_base_url(client, server.url)
        with pytest.raises(tweepy.Unauthorized) as excinfo:
            client.search_recent_tweets("cats")
        assert excinfo.value.response.json() == {
            "title": "Unauthorized",
            "type": "about:blank",
            "status": 401,
            "detail": "Unauthorized",
        }
        assert str(excinfo.value) == "401 Unauthorized\nUnauthorized"
    # tweepy sends "Bearer None" without a token.
    assert [(o.status, o.token) for o in server.observations] == [(401, "wrong"), (401, "None")]


def test_token_of_an_app_outside_a_project_is_forbidden(server: TwitterContractServer) -> None:
    server.forbidden_tokens = {"not-enrolled"}
    client = make_client(server, "not-enrolled")
    with pytest.raises(tweepy.Forbidden) as excinfo:
        client.search_recent_tweets("cats")
    body = excinfo.value.response.json()
    assert body["reason"] == "client-not-enrolled"
    assert body["registration_url"] == "https://developer.twitter.com/en/docs/projects/overview"
    assert body["type"] == "https://api.twitter.com/2/problems/client-forbidden"
    (message,) = excinfo.value.api_messages
    assert message.startswith(
        "When authenticating requests to the Twitter API v2 endpoints, you must use keys"
    )


# --------------------------------------------------------------------------------------------
# rate limits


def test_rate_limit_headers_and_429(server: TwitterContractServer) -> None:
    server.rate_limit("GET /2/tweets/search/recent", 3, 30)
    client = make_client(server, return_type=requests.Response)
    before = int(time.time())
    answers = [client.search_recent_tweets("cats") for _ in range(3)]
    assert [a.headers["x-rate-limit-remaining"] for a in answers] == ["2", "1", "0"]
    assert {a.headers["x-rate-limit-limit"] for a in answers} == {"3"}
    reset = int(answers[0].headers["x-rate-limit-reset"])
    assert before + 30 <= reset <= before + 32
    with pytest.raises(tweepy.TooManyRequests) as excinfo:
        client.search_recent_tweets("cats")
    assert excinfo.value.response.headers["x-rate-limit-reset"] == str(reset)
    assert excinfo.value.response.headers["x-rate-limit-remaining"] == "0"
    assert excinfo.value.reset_time == reset
    assert excinfo.value.response.json() == {
        "title": "Too Many Requests",
        "detail": "Too Many Requests",
        "type": "about:blank",
        "status": 429,
    }
    # Windows are per endpoint: the lookup endpoint still has its own.
    assert client.get_tweets(["1"]).headers["x-rate-limit-limit"] == "300"


def test_wait_on_rate_limit_sleeps_until_the_reset(server: TwitterContractServer) -> None:
    server.rate_limit("/2/tweets/search/recent", 1, 0.5)
    client = make_client(server, wait_on_rate_limit=True)
    client.search_recent_tweets("cats")
    started = time.monotonic()
    client.search_recent_tweets("cats")  # 429, sleeps past x-rate-limit-reset, retries
    assert time.monotonic() - started >= 0.5
    assert [o.status for o in server.requests_to("/2/tweets/search/recent")] == [200, 429, 200]


# --------------------------------------------------------------------------------------------
# faults


def test_fail_next_answers_with_v2_problem_bodies(
    server: TwitterContractServer, client: tweepy.Client
) -> None:
    server.fail_next(1, 503, path="/2/tweets/search/recent")
    assert client.get_tweets(["1"]).errors  # another path: unaffected
    with pytest.raises(tweepy.TwitterServerError) as excinfo:
        client.search_recent_tweets("cats")
    assert str(excinfo.value) == "503 Service Unavailable\nService Unavailable"
    assert excinfo.value.response.json()["status"] == 503
    server.fail_next(1, 500)
    with pytest.raises(tweepy.TwitterServerError, match="500 Internal Server Error"):
        client.search_recent_tweets("cats")
    assert client.search_recent_tweets("cats").meta == {"result_count": 0}
    assert server.pending_faults == 0


def test_drop_next_closes_the_connection(server: TwitterContractServer, client: tweepy.Client) -> None:
    server.drop_next(1)
    with pytest.raises(requests.exceptions.ConnectionError):
        client.search_recent_tweets("cats")
    assert server.observations[-1].status == 0
    assert client.search_recent_tweets("cats").meta == {"result_count": 0}


def test_malformed_search_answers(server: TwitterContractServer, client: tweepy.Client) -> None:
    server.add_tweet("cats", "lee")
    server.malformed_next(1, kind="json", where="search")
    with pytest.raises(requests.exceptions.JSONDecodeError):
        client.search_recent_tweets("cats")
    server.malformed_next(1, kind="missing_fields", where="search")
    with pytest.raises(KeyError):
        client.search_recent_tweets("cats")
    assert len(client.search_recent_tweets("cats").data) == 1


# --------------------------------------------------------------------------------------------
# the server itself


def test_ids_are_snowflakes_increasing_with_time(server: TwitterContractServer) -> None:
    early = server.make_tweet("a", "mia", created_at=T0)
    same = server.make_tweet("b", "mia", created_at=T0)
    late = server.make_tweet("c", "mia", created_at="2026-11-21T10:00:01Z")
    assert int(early["id"]) == snowflake(T0)
    assert int(early["id"]) < int(same["id"]) < int(late["id"])
    assert late["created_at"] == "2026-11-21T10:00:01.000Z"


def test_observations_record_paths_params_and_tokens(
    server: TwitterContractServer, client: tweepy.Client
) -> None:
    client.search_recent_tweets("cats", tweet_fields=["lang"], max_results=20)
    (observed,) = server.observations
    assert observed.method == "GET" and observed.path == "/2/tweets/search/recent"
    assert observed.params == {"max_results": "20", "query": "cats", "tweet.fields": "lang"}
    assert observed.status == 200 and observed.token == DEFAULT_TOKEN
    server.reset_observations()
    assert server.observations == []


def test_stop_and_start_serve_on_the_same_port(server: TwitterContractServer, client: tweepy.Client) -> None:
    tweet = server.add_tweet("persistent cats", "noa")
    port = server.port
    server.stop()
    with pytest.raises(requests.exceptions.ConnectionError):
        client.search_recent_tweets("cats")
    server.start()
    assert server.port == port
    assert ids(client.search_recent_tweets("cats")) == [tweet["id"]]


def test_command_line_server_with_the_control_api() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.contract_servers.twitter", "--port", "0", "--token", "cli-token"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(proc.stdout, selectors.EVENT_READ)
            assert selector.select(15), "the server did not start"
            line = proc.stdout.readline()
        assert line.startswith("LISTENING ")
        url = f"http://127.0.0.1:{int(line.split()[1])}"

        def control(hook: str, **kwargs: Any) -> Any:
            request = urllib.request.Request(
                f"{url}/_contract/{hook}", data=json.dumps(kwargs).encode(), method="POST"
            )
            with urllib.request.urlopen(request, timeout=10) as answer:
                return json.loads(answer.read())["result"]

        tweet = control("add_tweet", text="cats from afar", author="olga")
        client = tweepy.Client(bearer_token="cli-token")
        use_base_url(client, url)
        assert ids(client.search_recent_tweets("cats")) == [tweet["id"]]
        client.session.close()
        state = control("state")
        assert [o["status"] for o in state["observations"]] == [200]
    finally:
        proc.terminate()
        assert proc.wait(10) == 0
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()
