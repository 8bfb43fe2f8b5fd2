"""A Twitter (X) API v2 contract server.

The Twitter API cannot be reached where these tests run, so this module serves the part of
API v2 a source connector built on tweepy's ``Client`` and ``StreamingClient`` touches, with
the wire behaviour those clients rely on: recent search (fields, expansions, ``includes``,
pagination by ``next_token``, ``since_id`` / ``until_id`` / time bounds), tweet lookup with
v2's partial errors, filtered-stream rules (add, delete, ``dry_run``, invalid and duplicate
rules) and the filtered stream itself (one JSON document per line in a chunked response,
``\\r\\n`` keep-alives, one connection per App), bearer-token authentication (401, and 403
``client-not-enrolled``), per-endpoint rate-limit windows with the ``x-rate-limit-*``
headers, and v2's error bodies.

It models a single developer App: every accepted bearer token belongs to it, so they share
its stream rules and its single stream connection; rate-limit windows are per token.

Pointing tweepy at it
---------------------
tweepy 4.x has no host setting: ``BaseClient.request`` prefixes every route with the local
``host = "https://api.twitter.com"`` and ``StreamingClient._connect`` builds the literal
``https://api.twitter.com/2/tweets/{endpoint}/stream``. Both send through the client's
``session`` (a ``requests.Session``, also used by ``StreamingClient``'s rule calls), so a
transport adapter mounted on that session for the ``https://api.twitter.com/`` prefix can
rewrite the URL just before it is sent; nothing else in tweepy changes::

    import requests
    from requests.adapters import HTTPAdapter
    from requests.utils import should_bypass_proxies

    TWITTER_API = "https://api.twitter.com"

    class BaseUrlAdapter(HTTPAdapter):
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

``use_base_url(tweepy.Client(bearer_token=server.token), server.url)`` then talks to this
server (``StreamingClient`` too: ``session.close()`` at the end of a stream keeps the mount).

What is served
--------------
* ``GET /2/tweets/search/recent``, ``GET /2/tweets`` (``ids``), ``GET /2/tweets/:id``;
* ``GET`` / ``POST /2/tweets/search/stream/rules`` (``add``, ``delete`` by ``ids`` or
  ``values``, ``dry_run``, ``delete_all``), ``GET /2/tweets/search/stream``.

Search queries and stream rules share one query language subset: keywords (case-insensitive
whole-word match, as Twitter's tokenized match), ``"exact phrases"``, ``#hashtag``,
``@mention``, ``from:``, ``to:``, ``url:``, ``conversation_id:``, ``lang:``,
``is:retweet|reply|quote|verified``, ``has:hashtags|mentions|links``, ``-`` negation of any
term or group, implicit AND, ``OR`` (AND binds tighter, as in v2) and parentheses. Queries
need a positive standalone term (``lang:``/``is:``/``has:`` alone are refused, as in v2);
other operators are refused as invalid rather than silently matching nothing.

Test hooks
----------
A thread-safe Python API beside the real one: users and tweets (``add_user``,
``make_tweet``, ``add_tweet(s)``, ``publish``), faults (``fail_next``, ``drop_next``,
``malformed_next``, ``disconnect_streams``, ``rate_limit``, ``keepalive``, tokens) and
observations (``observations``, ``requests_to``, ``stream_connections``, ``open_streams``,
``rule_changes``). A server in another process takes the same hooks as
``POST /_contract/<hook>`` with the keyword arguments as a JSON object (``GET`` for the ones
without arguments); ``python -m tests.contract_servers.twitter --port 0`` runs one in the
foreground and prints ``LISTENING <port>`` when it accepts connections.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import copy
import hashlib
import math
import re
import select
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http import HTTPStatus
from typing import Any, Final, NamedTuple, cast
from urllib.parse import parse_qsl, urlsplit

import orjson

from tests.contract_servers._http import (
    BackgroundServer,
    ContractHandler,
    ContractHTTPServer,
    serve_until_signalled,
)

__all__ = [
    "DEFAULT_TOKEN",
    "ENDPOINTS",
    "Observation",
    "QueryError",
    "RuleChange",
    "TwitterContractServer",
    "main",
    "parse_query",
    "snowflake",
]

DEFAULT_TOKEN: Final = "AAAAAAAAAAAAAAAAAAAAAContractServerBearerToken%3Dsluiceway"
TWITTER_EPOCH_MS: Final = 1288834974657

# Twitter's documented App (bearer token) limits per 15-minute window.
ENDPOINTS: Final[Mapping[str, tuple[int, float]]] = {
    "GET /2/tweets/search/recent": (450, 900.0),
    "GET /2/tweets": (300, 900.0),
    "GET /2/tweets/:id": (300, 900.0),
    "GET /2/tweets/search/stream/rules": (450, 900.0),
    "POST /2/tweets/search/stream/rules": (450, 900.0),
    "GET /2/tweets/search/stream": (50, 900.0),
}

TWEET_FIELDS: Final = (
    "attachments",
    "author_id",
    "context_annotations",
    "conversation_id",
    "created_at",
    "edit_controls",
    "edit_history_tweet_ids",
    "entities",
    "geo",
    "id",
    "in_reply_to_user_id",
    "lang",
    "non_public_metrics",
    "note_tweet",
    "organic_metrics",
    "possibly_sensitive",
    "promoted_metrics",
    "public_metrics",
    "referenced_tweets",
    "reply_settings",
    "source",
    "text",
    "withheld",
)
USER_FIELDS: Final = (
    "connection_status",
    "created_at",
    "description",
    "entities",
    "id",
    "location",
    "most_recent_tweet_id",
    "name",
    "pinned_tweet_id",
    "profile_image_url",
    "protected",
    "public_metrics",
    "receives_your_dm",
    "subscription_type",
    "url",
    "username",
    "verified",
    "verified_type",
    "withheld",
)
EXPANSIONS: Final = (
    "attachments.media_keys",
    "attachments.poll_ids",
    "author_id",
    "edit_history_tweet_ids",
    "entities.mentions.username",
    "geo.place_id",
    "in_reply_to_user_id",
    "referenced_tweets.id",
    "referenced_tweets.id.author_id",
)
_FIELD_PARAMS: Final = (
    "expansions",
    "tweet.fields",
    "user.fields",
    "media.fields",
    "place.fields",
    "poll.fields",
)
_SEARCH_PARAMS: Final = (
    "query",
    "start_time",
    "end_time",
    "since_id",
    "until_id",
    "max_results",
    "next_token",
    "pagination_token",
    "sort_order",
    *_FIELD_PARAMS,
)
_MAX_QUERY_LENGTH: Final = 512
_MAX_RULE_LENGTH: Final = 512
_PROBLEMS: Final = "https://api.twitter.com/2/problems/"
_INVALID_REQUEST_DETAIL: Final = "One or more parameters to your request was invalid."
_NOT_ENROLLED_DETAIL: Final = (
    "When authenticating requests to the Twitter API v2 endpoints, you must use keys and tokens from "
    "a Twitter developer App that is attached to a Project. You can create a project via the developer "
    "portal."
)
_NEXT_TOKEN_PREFIX: Final = "b26v89c19zqg8o3f"
# How often an idle stream looks for a client that went away: Twitter notices within seconds,
# and the single-connection limit must free up as soon as a client disconnects.
_STREAM_POLL_S: Final = 0.05
_SNOWFLAKE_SEQUENCE_BITS: Final = 22


def snowflake(at: datetime | float, sequence: int = 0) -> int:
    """A Twitter snowflake id for the instant ``at`` (a datetime, or epoch seconds): ids sort
    by creation time, as the API's ``since_id`` / ``until_id`` rely on."""
    seconds = at.timestamp() if isinstance(at, datetime) else at
    millis = round(seconds * 1000)
    return ((millis - TWITTER_EPOCH_MS) << _SNOWFLAKE_SEQUENCE_BITS) | (
        sequence & ((1 << _SNOWFLAKE_SEQUENCE_BITS) - 1)
    )


def _iso(moment: datetime) -> str:
    """v2's timestamp format: UTC, milliseconds, ``Z`` (tweepy parses exactly this)."""
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _parse_time(value: datetime | str) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _now_iso() -> str:
    return _iso(datetime.now(UTC))


# --------------------------------------------------------------------------------------------
# errors


class _ApiError(Exception):
    """An answer other than success: status, v2 JSON body, extra headers."""

    def __init__(self, status: int, body: Mapping[str, Any], headers: Sequence[tuple[str, str]] = ()) -> None:
        super().__init__(f"{status} {body.get('title', '')}")
        self.status = status
        self.body = dict(body)
        self.headers = list(headers)


class _Drop(Exception):
    """Close the connection without an answer."""


def _problem(status: int) -> dict[str, Any]:
    """The generic v2 problem body (401, 429, 5xx, ...)."""
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "Error"
    return {"title": phrase, "detail": phrase, "type": "about:blank", "status": status}


def _param_error(parameter: str, values: Sequence[str], message: str) -> dict[str, Any]:
    return {"parameters": {parameter: list(values)}, "message": message}


def _invalid_request(errors: Sequence[Mapping[str, Any]]) -> _ApiError:
    return _ApiError(
        400,
        {
            "errors": [dict(e) for e in errors],
            "title": "Invalid Request",
            "detail": _INVALID_REQUEST_DETAIL,
            "type": _PROBLEMS + "invalid-request",
        },
    )


def _not_found(resource_type: str, parameter: str, resource_id: str) -> dict[str, Any]:
    """A v2 partial error: the request is fine, one id it names is not."""
    return {
        "value": resource_id,
        "detail": f"Could not find {resource_type} with {parameter}: [{resource_id}].",
        "title": "Not Found Error",
        "resource_type": resource_type,
        "parameter": parameter,
        "resource_id": resource_id,
        "type": _PROBLEMS + "resource-not-found",
    }


def _unauthorized() -> _ApiError:
    return _ApiError(
        401, {"title": "Unauthorized", "type": "about:blank", "status": 401, "detail": "Unauthorized"}
    )


def _not_enrolled() -> _ApiError:
    return _ApiError(
        403,
        {
            "client_id": "27310021",
            "detail": _NOT_ENROLLED_DETAIL,
            "registration_url": "https://developer.twitter.com/en/docs/projects/overview",
            "title": "Client Forbidden",
            "required_enrollment": "Appropriate Level of API Access",
            "reason": "client-not-enrolled",
            "type": _PROBLEMS + "client-forbidden",
        },
    )


def _streaming_problem(status: int, issue: str, detail: str, headers: Sequence[tuple[str, str]]) -> _ApiError:
    return _ApiError(
        status,
        {
            "title": "ConnectionException",
            "detail": detail,
            "connection_issue": issue,
            "type": _PROBLEMS + "streaming-connection",
        },
        headers,
    )


# --------------------------------------------------------------------------------------------
# the query language (search queries and stream rules)


class QueryError(ValueError):
    """A query or rule v2 would refuse; ``details`` as v2 lists them (positions 1-based)."""

    def __init__(self, details: Sequence[str]) -> None:
        super().__init__("; ".join(details))
        self.details = list(details)


@dataclass(frozen=True)
class _Facts:
    """What a query can test about one tweet, computed once per tweet."""

    text: str
    hashtags: frozenset[str]
    mentions: frozenset[str]
    urls: tuple[str, ...]
    author: frozenset[str]
    reply_to: frozenset[str]
    lang: str
    ref_types: frozenset[str]
    conversation_id: str
    verified: bool


class _Node:
    # Standalone: can stand as the positive part of a query (v2 refuses lang:/is:/has: alone).
    standalone = True
    positive = True

    def matches(self, facts: _Facts) -> bool:
        raise NotImplementedError


_CONJUNCTION_REQUIRED: Final = frozenset({"lang", "is", "has"})
_OPERATORS: Final = frozenset({"from", "to", "url", "conversation_id", "lang", "is", "has"})
_HAS_VALUES: Final = frozenset({"hashtags", "mentions", "links"})
_IS_REFERENCE: Final = {"retweet": "retweeted", "reply": "replied_to", "quote": "quoted"}


class _Term(_Node):
    def __init__(self, kind: str, value: str) -> None:
        self.kind = kind
        self.value = value.lower()
        self.standalone = kind not in _CONJUNCTION_REQUIRED
        self._pattern: re.Pattern[str] | None = None
        if kind in ("keyword", "phrase"):
            # Whole words, not substrings: v2 matches keywords against the tokenized text.
            self._pattern = re.compile(r"(?<!\w)" + re.escape(self.value) + r"(?!\w)")

    def matches(self, facts: _Facts) -> bool:
        kind, value = self.kind, self.value
        if self._pattern is not None:
            return self._pattern.search(facts.text) is not None
        if kind == "hashtag":
            return value in facts.hashtags
        if kind == "mention":
            return value in facts.mentions
        if kind == "from":
            return value in facts.author
        if kind == "to":
            return value in facts.reply_to
        if kind == "lang":
            return facts.lang == value
        if kind == "url":
            return any(value in url for url in facts.urls)
        if kind == "conversation_id":
            return facts.conversation_id == value
        if kind == "is":
            if value == "verified":
                return facts.verified
            return _IS_REFERENCE[value] in facts.ref_types
        if kind == "has":
            return bool({"hashtags": facts.hashtags, "mentions": facts.mentions, "links": facts.urls}[value])
        raise AssertionError(kind)


class _Not(_Node):
    standalone = False
    positive = False

    def __init__(self, child: _Node) -> None:
        self.child = child

    def matches(self, facts: _Facts) -> bool:
        return not self.child.matches(facts)


class _And(_Node):
    def __init__(self, children: list[_Node]) -> None:
        self.children = children
        self.positive = any(c.positive for c in children)
        self.standalone = any(c.standalone for c in children)

    def matches(self, facts: _Facts) -> bool:
        return all(c.matches(facts) for c in self.children)


class _Or(_Node):
    def __init__(self, children: list[_Node]) -> None:
        self.children = children
        self.positive = all(c.positive for c in children)
        self.standalone = all(c.standalone for c in children)

    def matches(self, facts: _Facts) -> bool:
        return any(c.matches(facts) for c in self.children)


_TOKEN: Final = re.compile(
    r'(?P<lp>\()|(?P<rp>\))|(?P<neg>-)(?=[^\s)])|(?P<quote>"[^"]*")|(?P<open>")|(?P<word>[^\s()"]+)'
)


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens: list[tuple[str, str, int]] = []
        for match in _TOKEN.finditer(text):
            kind = cast(str, match.lastgroup)
            if kind == "open":
                raise QueryError([f"Unterminated quoted phrase (at position {match.start() + 1})"])
            self.tokens.append((kind, match.group(), match.start()))
        self.i = 0
        self.end = len(text)

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def parse(self) -> _Node:
        node = self.parse_or()
        token = self.peek()
        if token is not None:
            raise QueryError([f"extraneous input '{token[1]}' expecting <EOF> (at position {token[2] + 1})"])
        return node

    def parse_or(self) -> _Node:
        children = [self.parse_and()]
        while (token := self.peek()) is not None and token[:2] == ("word", "OR"):
            self.i += 1
            children.append(self.parse_and())
        return children[0] if len(children) == 1 else _Or(children)

    def parse_and(self) -> _Node:
        children: list[_Node] = []
        while (token := self.peek()) is not None and token[0] != "rp" and token[:2] != ("word", "OR"):
            children.append(self.parse_unary())
        if not children:
            token = self.peek()
            where, pos = ("<EOF>", self.end) if token is None else (token[1], token[2])
            raise QueryError([f"no viable alternative at input '{where}' (at position {pos + 1})"])
        return children[0] if len(children) == 1 else _And(children)

    def parse_unary(self) -> _Node:
        token = self.peek()
        if token is not None and token[0] == "neg":
            self.i += 1
            return _Not(self.parse_atom())
        return self.parse_atom()

    def parse_atom(self) -> _Node:
        token = self.peek()
        if token is None:
            raise QueryError([f"no viable alternative at input '<EOF>' (at position {self.end + 1})"])
        kind, text, pos = token
        self.i += 1
        if kind == "lp":
            node = self.parse_or()
            close = self.peek()
            if close is None or close[0] != "rp":
                raise QueryError([f"missing ')' at '<EOF>' (at position {self.end + 1})"])
            self.i += 1
            return node
        if kind == "quote":
            return _Term("phrase", text[1:-1])
        if kind == "word":
            return _word_term(text, pos)
        raise QueryError([f"no viable alternative at input '{text}' (at position {pos + 1})"])


def _word_term(text: str, pos: int) -> _Term:
    at = pos + 1
    if text[0] in "#@" and len(text) > 1:
        return _Term("hashtag" if text[0] == "#" else "mention", text[1:])
    op, colon, value = text.partition(":")
    if colon and re.fullmatch(r"[A-Za-z_]+", op):
        op = op.lower()
        if op not in _OPERATORS:
            raise QueryError([f"Reference to invalid operator '{op}' (at position {at})"])
        if not value:
            raise QueryError([f"Operator '{op}' needs a value (at position {at})"])
        if op == "is" and value.lower() not in {*_IS_REFERENCE, "verified"}:
            raise QueryError([f"Reference to invalid operator 'is:{value}' (at position {at})"])
        if op == "has" and value.lower() not in _HAS_VALUES:
            raise QueryError([f"Reference to invalid operator 'has:{value}' (at position {at})"])
        return _Term(op, value)
    return _Term("keyword", text)


def parse_query(text: str, *, max_length: int = _MAX_QUERY_LENGTH) -> _Node:
    """The matcher for a search query or stream rule; raises ``QueryError`` for one v2 refuses
    (within the subset described in the module docstring)."""
    if len(text) > max_length:
        raise QueryError([f"Rule '{text}' is too long. Max length allowed is {max_length} characters."])
    node = _Parser(text).parse()
    if not node.positive:
        raise QueryError(["Rules must contain a non-negation term (at position 1)"])
    if not node.standalone:
        raise QueryError(
            [
                'Rules must contain at least one positive standalone operator (a keyword, "phrase", '
                "#hashtag, @mention, from:, to:, url: or conversation_id:); lang:, is: and has: "
                "cannot stand alone (at position 1)"
            ]
        )
    return node


# --------------------------------------------------------------------------------------------
# tweets and users

_URL: Final = re.compile(r"https?://[^\s]+")
_HASHTAG: Final = re.compile(r"(?<![\w&#])#(\w*[^\W\d_]\w*)")
_MENTION: Final = re.compile(r"(?<![\w@])@(\w{1,15})(?!\w)")
_TCO_ALPHABET: Final = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _tco(url: str) -> str:
    """The t.co link Twitter puts in the text in place of ``url`` (stable per URL)."""
    number = int.from_bytes(hashlib.sha1(url.encode()).digest()[:8], "big")
    code = ""
    for _ in range(10):
        number, digit = divmod(number, len(_TCO_ALPHABET))
        code += _TCO_ALPHABET[digit]
    return "https://t.co/" + code


def _display_url(url: str) -> str:
    shown = re.sub(r"^https?://", "", url)
    return shown if len(shown) <= 26 else shown[:25] + "…"


class Observation(NamedTuple):
    """One request; ``status`` 0 when it got no answer (``drop_next``)."""

    method: str
    path: str
    params: dict[str, str]
    status: int
    token: str | None


class RuleChange(NamedTuple):
    """One accepted ``POST /2/tweets/search/stream/rules``: ``requested`` are the values to
    add or ids (or values) to delete, ``applied`` the ids created or deleted."""

    action: str
    dry_run: bool
    requested: tuple[str, ...]
    applied: tuple[str, ...]


@dataclass
class _Fault:
    remaining: int
    status: int  # 0: drop the connection
    path: str | None
    method: str | None
    body: dict[str, Any] | None

    def matches(self, method: str, path: str) -> bool:
        return (self.path is None or self.path == path) and (self.method is None or self.method == method)


@dataclass
class _Window:
    limit: int
    window_s: float
    reset: int = 0
    used: int = 0


@dataclass
class _Rule:
    id: str
    value: str
    tag: str | None
    matcher: _Node

    def render(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "value": self.value}
        if self.tag is not None:
            out["tag"] = self.tag
        return out


@dataclass(frozen=True)
class _Fields:
    """What a request asked for (``expansions`` and ``*.fields``), already validated."""

    expansions: frozenset[str] = frozenset()
    tweet: frozenset[str] = frozenset()
    user: frozenset[str] = frozenset()


class _Stream:
    """One open ``GET /2/tweets/search/stream`` response; ``publish`` queues its lines."""

    def __init__(self, token: str, fields: _Fields) -> None:
        self.token = token
        self.fields = fields
        self.cond = threading.Condition()
        self.lines: deque[bytes] = deque()
        self.closing: str | None = None  # "abrupt", "operational"

    def push(self, line: bytes) -> None:
        with self.cond:
            self.lines.append(line)
            self.cond.notify_all()

    def close(self, how: str) -> None:
        with self.cond:
            if self.closing is None:
                self.closing = how
            self.cond.notify_all()

    def take(self, timeout: float) -> tuple[list[bytes], str | None]:
        with self.cond:
            if not self.lines and self.closing is None and timeout > 0:
                self.cond.wait(timeout)
            lines = list(self.lines)
            self.lines.clear()
            return lines, self.closing


@dataclass
class _State:
    """Everything a ``reset()`` clears (guarded by the server's lock)."""

    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    usernames: dict[str, str] = field(default_factory=dict)
    tweets: dict[str, dict[str, Any]] = field(default_factory=dict)
    used_ids: set[int] = field(default_factory=set)
    rules: dict[str, _Rule] = field(default_factory=dict)
    faults: list[_Fault] = field(default_factory=list)
    malformed: dict[str, deque[str]] = field(default_factory=lambda: {"stream": deque(), "search": deque()})
    limits: dict[str, tuple[int, float]] = field(default_factory=lambda: dict(ENDPOINTS))
    windows: dict[tuple[str, str], _Window] = field(default_factory=dict)
    observations: list[Observation] = field(default_factory=list)
    rule_changes: list[RuleChange] = field(default_factory=list)
    stream_connections: int = 0


# --------------------------------------------------------------------------------------------
# the server


class TwitterContractServer(BackgroundServer):
    """Twitter API v2 on ``http://<host>:<port>`` (see the module docstring); ``url`` is the
    base URL replacing ``https://api.twitter.com``.

    ``stop()`` then ``start()`` serves again on the same port with the same data; ``stop()``
    ends open streams abruptly. All hooks are thread-safe."""

    accept_thread_name = "twitter-contract"

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        valid_tokens: Iterable[str] = (DEFAULT_TOKEN,),
        forbidden_tokens: Iterable[str] = (),
        keepalive_s: float = 20.0,
        max_stream_connections: int = 1,
    ) -> None:
        super().__init__(host, port)
        self._initial = (frozenset(valid_tokens), frozenset(forbidden_tokens), keepalive_s)
        self._valid_tokens, self._forbidden_tokens, self._keepalive_s = self._initial
        self.max_stream_connections = max_stream_connections
        self._lock = threading.Lock()
        self._streams_changed = threading.Condition(self._lock)
        self._state = _State()
        self._streams: dict[int, _Stream] = {}

    # -- lifecycle

    def _make_server(self, address: tuple[str, int]) -> _Server:
        return _Server(address, self)

    def _before_shutdown(self) -> None:
        # Open streams end abruptly, as when the real API drops a connection.
        with self._lock:
            streams = list(self._streams.values())
        for stream in streams:
            stream.close("abrupt")

    @property
    def token(self) -> str:
        """A bearer token the server accepts."""
        tokens = self._valid_tokens
        if not tokens:
            raise RuntimeError("no valid tokens configured")
        return DEFAULT_TOKEN if DEFAULT_TOKEN in tokens else min(tokens)

    def reset(self) -> None:
        """Forgets users, tweets, rules, faults, rate windows and observations, and restores the
        tokens and keep-alive interval given to the constructor (open streams stay open)."""
        with self._lock:
            self._state = _State()
            self._valid_tokens, self._forbidden_tokens, self._keepalive_s = self._initial

    # -- tokens

    @property
    def valid_tokens(self) -> frozenset[str]:
        return self._valid_tokens

    @valid_tokens.setter
    def valid_tokens(self, tokens: Iterable[str]) -> None:
        self._valid_tokens = frozenset(tokens)

    @property
    def forbidden_tokens(self) -> frozenset[str]:
        """Tokens of an App not attached to a Project: 403 ``client-not-enrolled``."""
        return self._forbidden_tokens

    @forbidden_tokens.setter
    def forbidden_tokens(self, tokens: Iterable[str]) -> None:
        self._forbidden_tokens = frozenset(tokens)

    def set_tokens(self, valid: Iterable[str] | None = None, forbidden: Iterable[str] | None = None) -> None:
        if valid is not None:
            self.valid_tokens = valid
        if forbidden is not None:
            self.forbidden_tokens = forbidden

    # -- users and tweets

    def add_user(
        self,
        username: str,
        name: str | None = None,
        *,
        id: str | int | None = None,
        created_at: datetime | str | None = None,
        description: str = "",
        location: str | None = None,
        verified: bool = False,
        protected: bool = False,
        public_metrics: Mapping[str, int] | None = None,
    ) -> dict[str, Any]:
        """Adds (or replaces, by username) a user; returns its full v2 object."""
        created = _parse_time(created_at) if created_at is not None else datetime(2020, 1, 1, tzinfo=UTC)
        with self._lock:
            existing = self._state.usernames.get(username.lower())
            user_id = str(id) if id is not None else existing or str(self._new_id_locked(created))
            user: dict[str, Any] = {
                "id": user_id,
                "name": name if name is not None else username.replace("_", " ").title(),
                "username": username,
                "created_at": _iso(created),
                "description": description,
                "profile_image_url": f"https://pbs.twimg.com/profile_images/{user_id}/avatar_normal.jpg",
                "protected": protected,
                "public_metrics": {
                    "followers_count": 0,
                    "following_count": 0,
                    "tweet_count": 0,
                    "listed_count": 0,
                    **(public_metrics or {}),
                },
                "url": "",
                "verified": verified,
                "verified_type": "blue" if verified else "none",
            }
            if location is not None:
                user["location"] = location
            self._state.users[user_id] = user
            self._state.usernames[username.lower()] = user_id
            return copy.deepcopy(user)

    def user(self, username: str) -> dict[str, Any] | None:
        with self._lock:
            user_id = self._state.usernames.get(username.lower())
            return None if user_id is None else copy.deepcopy(self._state.users[user_id])

    def make_tweet(
        self,
        text: str,
        author: str | Mapping[str, Any],
        *,
        lang: str = "en",
        created_at: datetime | str | None = None,
        public_metrics: Mapping[str, int] | None = None,
        referenced_tweets: Iterable[tuple[str, str | int]] = (),
        conversation_id: str | int | None = None,
        possibly_sensitive: bool = False,
        id: str | int | None = None,
    ) -> dict[str, Any]:
        """A tweet as v2 holds it, not stored yet (``add_tweets`` / ``publish`` do that).

        ``author`` is a username (created when unknown) or a user from ``add_user``. The id
        is a snowflake of ``created_at`` (default now), so ids grow with time. URLs in
        ``text`` are replaced by t.co links, and ``entities`` computed from the result:
        hashtags, mentions of known users, URLs. ``referenced_tweets`` are ``(type, id)``
        pairs (``replied_to``, ``quoted``, ``retweeted``); a reply to a known tweet gets its
        ``conversation_id`` and ``in_reply_to_user_id``."""
        username = author if isinstance(author, str) else str(author["username"])
        if self.user(username) is None:
            self.add_user(username)
        created = _parse_time(created_at) if created_at is not None else datetime.now(UTC)
        with self._lock:
            author_id = self._state.usernames[username.lower()]
            tweet_id = str(id) if id is not None else str(self._new_id_locked(created))
            self._state.used_ids.add(int(tweet_id))
            urls: list[tuple[str, str]] = []

            def shorten(match: re.Match[str]) -> str:
                original = match.group().rstrip(".,!?;:)")
                short = _tco(original)
                urls.append((short, original))
                return short + match.group()[len(original) :]

            final_text = _URL.sub(shorten, text)
            entities = self._entities_locked(final_text, urls)
            refs = [{"type": kind, "id": str(ref_id)} for kind, ref_id in referenced_tweets]
            tweet: dict[str, Any] = {
                "id": tweet_id,
                "text": final_text,
                "edit_history_tweet_ids": [tweet_id],
                "author_id": author_id,
                "created_at": _iso(created),
                "lang": lang,
                "conversation_id": str(conversation_id) if conversation_id is not None else tweet_id,
                "possibly_sensitive": possibly_sensitive,
                "reply_settings": "everyone",
                "edit_controls": {
                    "edits_remaining": 5,
                    "is_edit_eligible": True,
                    "editable_until": _iso(created + timedelta(hours=1)),
                },
                "public_metrics": {
                    "retweet_count": 0,
                    "reply_count": 0,
                    "like_count": 0,
                    "quote_count": 0,
                    "bookmark_count": 0,
                    "impression_count": 0,
                    **(public_metrics or {}),
                },
            }
            if entities:
                tweet["entities"] = entities
            if refs:
                tweet["referenced_tweets"] = refs
            for ref in refs:
                parent = self._state.tweets.get(ref["id"])
                if ref["type"] == "replied_to" and parent is not None:
                    tweet["in_reply_to_user_id"] = parent["author_id"]
                    if conversation_id is None:
                        tweet["conversation_id"] = parent["conversation_id"]
            return tweet

    def _new_id_locked(self, at: datetime) -> int:
        candidate = snowflake(at)
        while candidate in self._state.used_ids:
            candidate += 1
        self._state.used_ids.add(candidate)
        return candidate

    def _entities_locked(self, text: str, urls: list[tuple[str, str]]) -> dict[str, Any]:
        entities: dict[str, list[dict[str, Any]]] = {}
        for match in _HASHTAG.finditer(text):
            entities.setdefault("hashtags", []).append(
                {"start": match.start(), "end": match.end(), "tag": match.group(1)}
            )
        for match in _MENTION.finditer(text):
            # v2 links (and reports) only mentions of accounts that exist.
            user_id = self._state.usernames.get(match.group(1).lower())
            if user_id is not None:
                entities.setdefault("mentions", []).append(
                    {
                        "start": match.start(),
                        "end": match.end(),
                        "username": self._state.users[user_id]["username"],
                        "id": user_id,
                    }
                )
        position = 0
        for short, original in urls:
            start = text.index(short, position)
            position = start + len(short)
            entities.setdefault("urls", []).append(
                {
                    "start": start,
                    "end": position,
                    "url": short,
                    "expanded_url": original,
                    "display_url": _display_url(original),
                }
            )
        return dict(entities)

    def add_tweets(self, tweets: Iterable[Mapping[str, Any]]) -> None:
        """Stores tweets (from ``make_tweet``) for search and lookup."""
        with self._lock:
            for tweet in tweets:
                self._store_locked(tweet)

    def add_tweet(self, text: str, author: str | Mapping[str, Any], **kwargs: Any) -> dict[str, Any]:
        """``make_tweet`` then ``add_tweets``; returns the tweet."""
        tweet = self.make_tweet(text, author, **kwargs)
        self.add_tweets([tweet])
        return tweet

    def _store_locked(self, tweet: Mapping[str, Any]) -> None:
        missing = [key for key in ("id", "text", "author_id", "created_at") if key not in tweet]
        if missing:
            raise ValueError(f"a tweet needs {missing} (build it with make_tweet)")
        if tweet["author_id"] not in self._state.users:
            raise ValueError(f"unknown author_id {tweet['author_id']!r}")
        self._state.tweets[str(tweet["id"])] = copy.deepcopy(dict(tweet))
        self._state.used_ids.add(int(tweet["id"]))

    def tweet(self, tweet_id: str | int) -> dict[str, Any] | None:
        with self._lock:
            found = self._state.tweets.get(str(tweet_id))
            return None if found is None else copy.deepcopy(found)

    def tweets(self) -> list[dict[str, Any]]:
        """Stored tweets, newest first."""
        with self._lock:
            return [copy.deepcopy(t) for t in self._sorted_tweets_locked()]

    def _sorted_tweets_locked(self) -> list[dict[str, Any]]:
        return sorted(self._state.tweets.values(), key=lambda t: int(t["id"]), reverse=True)

    def publish(self, tweet: Mapping[str, Any]) -> int:
        """Stores ``tweet`` (it becomes searchable) and sends it down every open stream with a
        matching rule; returns the number of streams it went to."""
        with self._lock:
            self._store_locked(tweet)
            stored = self._state.tweets[str(tweet["id"])]
            facts = self._facts_locked(stored)
            matching = [r for r in self._state.rules.values() if r.matcher.matches(facts)]
            if not matching:
                return 0
            targets: list[tuple[_Stream, bytes]] = []
            for stream in self._streams.values():
                message: dict[str, Any] = {"data": _render_tweet(stored, stream.fields.tweet)}
                includes, errors = self._expand_locked([stored], stream.fields)
                if includes:
                    message["includes"] = includes
                if errors:
                    message["errors"] = errors
                # tweepy reads matching_rules[i]["tag"] unconditionally: untagged rules get "".
                message["matching_rules"] = [{"id": r.id, "tag": r.tag or ""} for r in matching]
                targets.append((stream, self._stream_line_locked(message)))
        for stream, line in targets:
            stream.push(line)
        return len(targets)

    def _stream_line_locked(self, message: dict[str, Any]) -> bytes:
        pending = self._state.malformed["stream"]
        kind = pending.popleft() if pending else None
        if kind == "missing_fields":
            message["data"] = {k: v for k, v in message["data"].items() if k not in ("id", "text")}
        data = orjson.dumps(message)
        if kind == "json":
            data = data[: len(data) // 2]
        return data + b"\r\n"

    # -- rules

    def rules(self) -> list[dict[str, Any]]:
        """The App's stream rules, oldest first."""
        with self._lock:
            return [r.render() for r in self._state.rules.values()]

    # -- faults

    def rate_limit(self, endpoint: str, limit: int, window_s: float) -> None:
        """Sets an endpoint's window (``"GET /2/tweets/search/recent"``, see ``ENDPOINTS``;
        a bare path means GET) and starts its windows afresh."""
        key = _endpoint_key(endpoint)
        if limit < 0 or window_s <= 0:
            raise ValueError("limit must be >= 0 and window_s > 0")
        with self._lock:
            self._state.limits[key] = (limit, window_s)
            for window_key in [k for k in self._state.windows if k[1] == key]:
                del self._state.windows[window_key]

    def reset_rate_limits(self) -> None:
        with self._lock:
            self._state.limits = dict(ENDPOINTS)
            self._state.windows.clear()

    def fail_next(
        self,
        n: int,
        status: int = 503,
        *,
        path: str | None = None,
        method: str | None = None,
        body: Mapping[str, Any] | None = None,
    ) -> None:
        """The next ``n`` matching API requests get ``status`` with v2's problem body (``body``
        replaces it) before authentication; ``path`` is exact (``/2/tweets/search/stream``)."""
        self._add_fault(n, status, path, method, body)

    def drop_next(self, n: int, *, path: str | None = None, method: str | None = None) -> None:
        """The next ``n`` matching API requests get no answer: their connection is closed."""
        self._add_fault(n, 0, path, method, None)

    def _add_fault(
        self, n: int, status: int, path: str | None, method: str | None, body: Mapping[str, Any] | None
    ) -> None:
        if n <= 0:
            return
        fault = _Fault(n, status, path, method.upper() if method else None, dict(body) if body else None)
        with self._lock:
            self._state.faults.append(fault)

    def malformed_next(self, n: int, *, kind: str = "json", where: str = "stream") -> None:
        """The next ``n`` tweets sent down a stream (``where="stream"``) or search answers
        (``"search"``) are broken: ``kind="json"`` cuts the JSON in half,
        ``"missing_fields"`` drops ``id`` and ``text`` from the (first) tweet."""
        if kind not in ("json", "missing_fields") or where not in ("stream", "search"):
            raise ValueError(f"kind must be json or missing_fields, where stream or search: {kind}, {where}")
        with self._lock:
            self._state.malformed[where].extend([kind] * n)

    def clear_faults(self) -> None:
        with self._lock:
            self._state.faults.clear()
            for pending in self._state.malformed.values():
                pending.clear()

    @property
    def pending_faults(self) -> int:
        with self._lock:
            return sum(f.remaining for f in self._state.faults) + sum(
                len(p) for p in self._state.malformed.values()
            )

    def keepalive(self, seconds: float) -> None:
        """The keep-alive interval of every stream, open ones included (Twitter's is 20 s)."""
        if seconds <= 0:
            raise ValueError("seconds must be > 0")
        self._keepalive_s = seconds

    @property
    def keepalive_s(self) -> float:
        return self._keepalive_s

    def disconnect_streams(self, *, operational: bool = False, timeout: float = 5.0) -> int:
        """Ends every open stream abruptly (no terminating chunk), as Twitter does; with
        ``operational`` an ``operational-disconnect`` error line comes first. Returns how many
        there were, once they are all closed."""
        with self._lock:
            streams = list(self._streams.values())
        for stream in streams:
            stream.close("operational" if operational else "abrupt")
        deadline = time.monotonic() + timeout
        with self._streams_changed:
            while any(id(s) in self._streams for s in streams):
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._streams_changed.wait(left)
        return len(streams)

    def wait_for_streams(self, n: int = 1, timeout: float = 5.0) -> bool:
        """Waits until at least ``n`` streams are open."""
        deadline = time.monotonic() + timeout
        with self._streams_changed:
            while len(self._streams) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._streams_changed.wait(left)
            return True

    # -- observation

    @property
    def observations(self) -> list[Observation]:
        """Every API request, in answer order (``/_contract`` calls excluded)."""
        with self._lock:
            return list(self._state.observations)

    def requests_to(self, path: str, method: str | None = None) -> list[Observation]:
        return [o for o in self.observations if o.path == path and (method is None or o.method == method)]

    @property
    def stream_connections(self) -> int:
        """Stream connections accepted (200) since the start or the last ``reset()``."""
        with self._lock:
            return self._state.stream_connections

    @property
    def open_streams(self) -> int:
        with self._lock:
            return len(self._streams)

    @property
    def rule_changes(self) -> list[RuleChange]:
        with self._lock:
            return list(self._state.rule_changes)

    def reset_observations(self) -> None:
        with self._lock:
            self._state.observations.clear()
            self._state.rule_changes.clear()
            self._state.stream_connections = 0

    def _observe(self, observation: Observation) -> None:
        with self._lock:
            self._state.observations.append(observation)

    # -- request admission: faults, authentication, rate limits

    def _admit(
        self, method: str, path: str, endpoint: str | None, token: str | None
    ) -> list[tuple[str, str]]:
        """The rate-limit headers of a request allowed through; raises the answer of one that
        is not."""
        with self._lock:
            for fault in self._state.faults:
                if fault.matches(method, path):
                    fault.remaining -= 1
                    if fault.remaining == 0:
                        self._state.faults.remove(fault)
                    if fault.status == 0:
                        raise _Drop
                    raise _ApiError(fault.status, fault.body or _problem(fault.status))
            if token is not None and token in self._forbidden_tokens:
                raise _not_enrolled()
            if token is None or token not in self._valid_tokens:
                raise _unauthorized()
            if endpoint is None:
                return []
            limit, window_s = self._state.limits[endpoint]
            window = self._state.windows.get((token, endpoint))
            now = time.time()
            if window is None or now >= window.reset:
                # The header says the window ends at a whole second: end it exactly then, so a
                # client that sleeps until x-rate-limit-reset finds a fresh one.
                window = _Window(limit, window_s, reset=math.ceil(now + window_s))
                self._state.windows[(token, endpoint)] = window
            if window.used >= window.limit:
                headers = _rate_headers(window.limit, 0, window.reset)
                raise _ApiError(429, _problem(429), headers)
            window.used += 1
            return _rate_headers(window.limit, window.limit - window.used, window.reset)

    # -- endpoints (called by the handler with the token and validated params)

    def _search(self, params: dict[str, str]) -> dict[str, Any]:
        _check_known_params(params, _SEARCH_PARAMS)
        errors: list[dict[str, Any]] = []
        query = params.get("query")
        matcher: _Node | None = None
        if query is None or not query.strip():
            errors.append(_param_error("query", [], "The `query` query parameter can not be empty"))
        else:
            try:
                matcher = parse_query(query)
            except QueryError as exc:
                message = "There were errors processing your request: " + ", ".join(exc.details)
                errors.append(_param_error("query", [query], message))
        max_results = 10
        raw_max = params.get("max_results")
        if raw_max is not None:
            if not raw_max.isdigit() or not 10 <= int(raw_max) <= 100:
                errors.append(
                    _param_error(
                        "max_results",
                        [raw_max],
                        f"The `max_results` query parameter value [{raw_max}] is not between 10 and 100",
                    )
                )
            else:
                max_results = int(raw_max)
        since_id = _id_param(params, "since_id", errors)
        until_id = _id_param(params, "until_id", errors)
        start = _time_param(params, "start_time", errors)
        end = _time_param(params, "end_time", errors)
        if start is not None and end is not None and start >= end:
            errors.append(
                _param_error(
                    "start_time",
                    [params["start_time"]],
                    f"Invalid 'start_time':'{params['start_time']}'. 'start_time' must be before 'end_time'",
                )
            )
        token_value = params.get("next_token", params.get("pagination_token"))
        cursor: int | None = None
        if token_value is not None:
            cursor = _decode_next_token(token_value)
            if cursor is None:
                name = "next_token" if "next_token" in params else "pagination_token"
                errors.append(
                    _param_error(
                        name,
                        [token_value],
                        f"The `{name}` query parameter value [{token_value}] is not valid",
                    )
                )
        sort_order = params.get("sort_order", "recency")
        if sort_order not in ("recency", "relevancy"):
            errors.append(
                _param_error(
                    "sort_order",
                    [sort_order],
                    f"The `sort_order` query parameter value [{sort_order}] is not one of "
                    "[recency,relevancy]",
                )
            )
        fields = _fields(params, errors)
        if errors or matcher is None:
            raise _invalid_request(errors)
        with self._lock:
            found: list[dict[str, Any]] = []
            for tweet in self._sorted_tweets_locked():
                number = int(tweet["id"])
                if since_id is not None and number <= since_id:
                    continue
                if until_id is not None and number >= until_id:
                    continue
                if cursor is not None and number >= cursor:
                    continue
                created = _parse_time(tweet["created_at"])
                if (start is not None and created < start) or (end is not None and created >= end):
                    continue
                if matcher.matches(self._facts_locked(tweet)):
                    found.append(tweet)
            page = found[:max_results]
            if not page:
                return {"meta": {"result_count": 0}}
            answer: dict[str, Any] = {"data": [_render_tweet(t, fields.tweet) for t in page]}
            includes, partial = self._expand_locked(page, fields)
            if includes:
                answer["includes"] = includes
            if partial:
                answer["errors"] = partial
            meta: dict[str, Any] = {
                "newest_id": page[0]["id"],
                "oldest_id": page[-1]["id"],
                "result_count": len(page),
            }
            if len(found) > len(page):
                meta["next_token"] = _encode_next_token(int(page[-1]["id"]))
            answer["meta"] = meta
            pending = self._state.malformed["search"]
            if pending and pending[0] == "missing_fields":
                pending.popleft()
                answer["data"][0] = {k: v for k, v in answer["data"][0].items() if k not in ("id", "text")}
            return answer

    def _take_malformed_search(self) -> bool:
        """True when the next search answer must be cut short (invalid JSON)."""
        with self._lock:
            pending = self._state.malformed["search"]
            if pending and pending[0] == "json":
                pending.popleft()
                return True
            return False

    def _lookup(self, params: dict[str, str], single: str | None) -> dict[str, Any]:
        errors: list[dict[str, Any]] = []
        if single is not None:
            _check_known_params(params, _FIELD_PARAMS)
            ids = [single]
            parameter = "id"
        else:
            _check_known_params(params, ("ids", *_FIELD_PARAMS))
            raw = params.get("ids", "")
            ids = [i for i in raw.split(",") if i] if raw else []
            parameter = "ids"
            if not ids:
                errors.append(_param_error("ids", [], "The `ids` query parameter can not be empty"))
            elif len(ids) > 100:
                errors.append(
                    _param_error("ids", [raw], "The `ids` query parameter value is too long (max 100)")
                )
        for value in ids:
            if not re.fullmatch(r"[0-9]{1,19}", value):
                errors.append(
                    _param_error(
                        parameter,
                        [value],
                        f"The `{parameter}` query parameter value [{value}] does not match ^[0-9]{{1,19}}$",
                    )
                )
        fields = _fields(params, errors)
        if errors:
            raise _invalid_request(errors)
        with self._lock:
            found = [self._state.tweets[i] for i in ids if i in self._state.tweets]
            partial = [_not_found("tweet", parameter, i) for i in ids if i not in self._state.tweets]
            answer: dict[str, Any] = {}
            if found:
                rendered = [_render_tweet(t, fields.tweet) for t in found]
                answer["data"] = rendered[0] if single is not None else rendered
                includes, more = self._expand_locked(found, fields)
                if includes:
                    answer["includes"] = includes
                partial.extend(more)
            if partial:
                answer["errors"] = partial
            return answer

    def _get_rules(self, params: dict[str, str]) -> dict[str, Any]:
        _check_known_params(params, ("ids", "max_results", "pagination_token"))
        wanted = {i for i in params.get("ids", "").split(",") if i}
        with self._lock:
            rules = [r.render() for r in self._state.rules.values() if not wanted or r.id in wanted]
        meta = {"sent": _now_iso(), "result_count": len(rules)}
        return {"data": rules, "meta": meta} if rules else {"meta": meta}

    def _post_rules(self, params: dict[str, str], body: bytes) -> tuple[int, dict[str, Any]]:
        _check_known_params(params, ("dry_run", "delete_all"))
        dry_run = _bool_param(params, "dry_run")
        delete_all = _bool_param(params, "delete_all")
        try:
            request = orjson.loads(body) if body.strip() else {}
        except orjson.JSONDecodeError as exc:
            raise _invalid_request([{"message": f"Invalid JSON body: {exc}"}]) from exc
        if not isinstance(request, dict):
            raise _invalid_request([{"message": "The request body must be a JSON object"}])
        actions = [k for k in ("add", "delete") if k in request]
        if delete_all:
            if actions:
                raise _invalid_request([{"message": "delete_all must be specified with no other parameters"}])
            with self._lock:
                ids = list(self._state.rules)
            return self._delete_rules(ids, [], dry_run)
        if len(actions) != 1 or set(request) - {"add", "delete"}:
            raise _invalid_request([{"message": "Must contain exactly one of the add or delete properties"}])
        if actions[0] == "add":
            return self._add_rules(request["add"], dry_run)
        delete = request["delete"]
        if not isinstance(delete, dict) or not (delete.get("ids") or delete.get("values")):
            raise _invalid_request([{"message": "delete must name rule ids or values"}])
        return self._delete_rules(
            [str(i) for i in delete.get("ids") or ()], [str(v) for v in delete.get("values") or ()], dry_run
        )

    def _add_rules(self, add: Any, dry_run: bool) -> tuple[int, dict[str, Any]]:
        if not isinstance(add, list) or not add:
            raise _invalid_request([{"message": "add must be a non-empty array of rules"}])
        for item in add:
            if not isinstance(item, dict) or not isinstance(item.get("value"), str):
                raise _invalid_request([{"message": "Every rule to add needs a string value"}])
        created: list[_Rule] = []
        errors: list[dict[str, Any]] = []
        with self._lock:
            existing = {r.value: r for r in self._state.rules.values()}
            for item in add:
                value, tag = cast(str, item["value"]), item.get("tag")
                duplicate = existing.get(value)
                if duplicate is not None:
                    errors.append(
                        {
                            "value": value,
                            "id": duplicate.id,
                            "title": "DuplicateRule",
                            "type": _PROBLEMS + "duplicate-rules",
                        }
                    )
                    continue
                try:
                    matcher = parse_query(value, max_length=_MAX_RULE_LENGTH)
                except QueryError as exc:
                    errors.append(
                        {
                            "value": value,
                            "details": exc.details,
                            "title": "UnprocessableEntity",
                            "type": _PROBLEMS + "invalid-rules",
                        }
                    )
                    continue
                rule = _Rule(
                    str(self._new_id_locked(datetime.now(UTC))),
                    value,
                    None if tag is None else str(tag),
                    matcher,
                )
                created.append(rule)
                existing[value] = rule
            if not dry_run:
                for rule in created:
                    self._state.rules[rule.id] = rule
            self._state.rule_changes.append(
                RuleChange("add", dry_run, tuple(str(i["value"]) for i in add), tuple(r.id for r in created))
            )
        answer: dict[str, Any] = {}
        if created:
            answer["data"] = [r.render() for r in created]
        answer["meta"] = {
            "sent": _now_iso(),
            "summary": {
                "created": 0 if dry_run else len(created),
                "not_created": len(add) - (0 if dry_run else len(created)),
                "valid": len(created),
                "invalid": len(add) - len(created),
            },
        }
        if errors:
            answer["errors"] = errors
        return (201 if created and not dry_run else 200), answer

    def _delete_rules(self, ids: list[str], values: list[str], dry_run: bool) -> tuple[int, dict[str, Any]]:
        deleted: list[str] = []
        errors: list[dict[str, Any]] = []
        with self._lock:
            by_value = {r.value: r.id for r in self._state.rules.values()}
            targets = [(i, i in self._state.rules) for i in ids]
            targets += [(by_value.get(v, v), v in by_value) for v in values]
            for rule_id, exists in targets:
                if exists and rule_id not in deleted:
                    deleted.append(rule_id)
                elif not exists:
                    errors.append(
                        {
                            "errors": [{"parameters": {}, "message": "Rule does not exist"}],
                            "title": "Invalid Request",
                            "detail": _INVALID_REQUEST_DETAIL,
                            "type": _PROBLEMS + "invalid-request",
                        }
                    )
            if not dry_run:
                for rule_id in deleted:
                    del self._state.rules[rule_id]
            self._state.rule_changes.append(
                RuleChange("delete", dry_run, tuple(ids + values), tuple(deleted))
            )
        answer: dict[str, Any] = {
            "meta": {
                "sent": _now_iso(),
                "summary": {
                    "deleted": 0 if dry_run else len(deleted),
                    "not_deleted": len(targets) - (0 if dry_run else len(deleted)),
                },
            }
        }
        if errors:
            answer["errors"] = errors
        return 200, answer

    def _open_stream(self, params: dict[str, str], token: str, headers: list[tuple[str, str]]) -> _Stream:
        """Registers a stream for the handler, or raises why it cannot connect."""
        _check_known_params(params, ("backfill_minutes", *_FIELD_PARAMS))
        errors: list[dict[str, Any]] = []
        fields = _fields(params, errors)
        backfill = params.get("backfill_minutes")
        if backfill is not None and (not backfill.isdigit() or not 0 <= int(backfill) <= 5):
            errors.append(
                _param_error(
                    "backfill_minutes",
                    [backfill],
                    f"The `backfill_minutes` query parameter value [{backfill}] is not between 0 and 5",
                )
            )
        if errors:
            raise _invalid_request(errors)
        with self._lock:
            if not self._state.rules:
                raise _streaming_problem(
                    409,
                    "RuleConfigurationIssue",
                    "You must define rules using the POST /2/tweets/search/stream/rules endpoint before "
                    "connecting to filtered stream.",
                    headers,
                )
            if len(self._streams) >= self.max_stream_connections:
                raise _streaming_problem(
                    429,
                    "TooManyConnections",
                    "This stream is currently at the maximum allowed connection limit.",
                    headers,
                )
            stream = _Stream(token, fields)
            self._streams[id(stream)] = stream
            self._state.stream_connections += 1
            self._streams_changed.notify_all()
            return stream

    def _close_stream(self, stream: _Stream) -> None:
        with self._lock:
            self._streams.pop(id(stream), None)
            self._streams_changed.notify_all()

    # -- rendering helpers needing the state

    def _facts_locked(self, tweet: Mapping[str, Any]) -> _Facts:
        entities = tweet.get("entities", {})
        author = self._state.users.get(tweet["author_id"], {})
        reply_to: frozenset[str] = frozenset()
        reply_user = self._state.users.get(tweet.get("in_reply_to_user_id", ""))
        if reply_user is not None:
            reply_to = frozenset({reply_user["id"], reply_user["username"].lower()})
        urls = tuple(
            text.lower()
            for u in entities.get("urls", ())
            for text in (u["url"], u["expanded_url"], u["display_url"])
        )
        return _Facts(
            text=tweet["text"].lower(),
            hashtags=frozenset(h["tag"].lower() for h in entities.get("hashtags", ())),
            mentions=frozenset(m["username"].lower() for m in entities.get("mentions", ())),
            urls=urls,
            author=frozenset({tweet["author_id"], str(author.get("username", "")).lower()}),
            reply_to=reply_to,
            lang=str(tweet.get("lang", "")).lower(),
            ref_types=frozenset(r["type"] for r in tweet.get("referenced_tweets", ())),
            conversation_id=str(tweet.get("conversation_id", "")),
            verified=bool(author.get("verified", False)),
        )

    def _expand_locked(
        self, tweets: Sequence[Mapping[str, Any]], fields: _Fields
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """``includes`` for ``tweets`` and the partial errors of ids that do not resolve."""
        expansions = fields.expansions
        user_ids: dict[str, str] = {}  # id -> the expansion that asked for it (first wins)
        included: dict[str, dict[str, Any]] = {}
        errors: list[dict[str, Any]] = []

        def want_user(user_id: str | None, parameter: str) -> None:
            if user_id is not None:
                user_ids.setdefault(user_id, parameter)

        for tweet in tweets:
            if "author_id" in expansions:
                want_user(tweet["author_id"], "author_id")
            if "in_reply_to_user_id" in expansions:
                want_user(tweet.get("in_reply_to_user_id"), "in_reply_to_user_id")
            if "entities.mentions.username" in expansions:
                for mention in tweet.get("entities", {}).get("mentions", ()):
                    want_user(mention["id"], "entities.mentions.username")
            if expansions & {"referenced_tweets.id", "referenced_tweets.id.author_id"}:
                for ref in tweet.get("referenced_tweets", ()):
                    target = self._state.tweets.get(ref["id"])
                    if target is None:
                        errors.append(_not_found("tweet", "referenced_tweets.id", ref["id"]))
                        continue
                    if "referenced_tweets.id" in expansions:
                        included.setdefault(target["id"], target)
                    if "referenced_tweets.id.author_id" in expansions:
                        want_user(target["author_id"], "referenced_tweets.id.author_id")
        includes: dict[str, Any] = {}
        users = []
        for user_id, parameter in user_ids.items():
            user = self._state.users.get(user_id)
            if user is None:
                errors.append(_not_found("user", parameter, user_id))
            else:
                users.append(_render_user(user, fields.user))
        if users:
            includes["users"] = users
        if included:
            includes["tweets"] = [_render_tweet(t, fields.tweet) for t in included.values()]
        return includes, errors

    # -- the out-of-process control API

    _HOOKS: Final = frozenset(
        {
            "add_user",
            "add_tweet",
            "add_tweets",
            "make_tweet",
            "publish",
            "rate_limit",
            "reset_rate_limits",
            "fail_next",
            "drop_next",
            "malformed_next",
            "clear_faults",
            "disconnect_streams",
            "keepalive",
            "set_tokens",
            "reset",
            "reset_observations",
            "wait_for_streams",
        }
    )

    def _control(self, hook: str, kwargs: dict[str, Any]) -> Any:
        if hook == "state":
            return {
                "observations": [o._asdict() for o in self.observations],
                "rule_changes": [c._asdict() for c in self.rule_changes],
                "rules": self.rules(),
                "stream_connections": self.stream_connections,
                "open_streams": self.open_streams,
                "pending_faults": self.pending_faults,
                "tweets": self.tweets(),
            }
        if hook not in self._HOOKS:
            raise KeyError(hook)
        method = cast(Callable[..., Any], getattr(self, hook))
        return method(**kwargs)


def _endpoint_key(endpoint: str) -> str:
    key = endpoint.strip()
    if key.startswith("/"):
        key = "GET " + key
    method, _, path = key.partition(" ")
    key = f"{method.upper()} {path.strip()}"
    if key not in ENDPOINTS:
        raise ValueError(f"unknown endpoint {endpoint!r}; known: {sorted(ENDPOINTS)}")
    return key


def _bearer(authorization: str | None) -> str | None:
    if authorization is None or authorization[:7].lower() != "bearer ":
        return None
    return authorization[7:].strip()


def _rate_headers(limit: int, remaining: int, reset: int) -> list[tuple[str, str]]:
    return [
        ("x-rate-limit-limit", str(limit)),
        ("x-rate-limit-remaining", str(remaining)),
        ("x-rate-limit-reset", str(reset)),
    ]


def _render_tweet(tweet: Mapping[str, Any], wanted: frozenset[str]) -> dict[str, Any]:
    """Only what was asked for: ``id``, ``text`` and ``edit_history_tweet_ids`` always."""
    out: dict[str, Any] = {
        "id": tweet["id"],
        "text": tweet["text"],
        "edit_history_tweet_ids": list(tweet.get("edit_history_tweet_ids", [tweet["id"]])),
    }
    for name in TWEET_FIELDS:
        if name in wanted and name not in out and name in tweet:
            out[name] = copy.deepcopy(tweet[name])
    return out


def _render_user(user: Mapping[str, Any], wanted: frozenset[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"id": user["id"], "name": user["name"], "username": user["username"]}
    for name in USER_FIELDS:
        if name in wanted and name not in out and name in user:
            out[name] = copy.deepcopy(user[name])
    return out


def _check_known_params(params: Mapping[str, str], known: Sequence[str]) -> None:
    unknown = [name for name in params if name not in known]
    if unknown:
        raise _invalid_request(
            [
                _param_error(
                    name, [params[name]], f"The query parameter [{name}] is not one of [{','.join(known)}]"
                )
                for name in unknown
            ]
        )


def _list_param(
    params: Mapping[str, str], name: str, allowed: Sequence[str], errors: list[dict[str, Any]]
) -> frozenset[str]:
    raw = params.get(name)
    if raw is None:
        return frozenset()
    values = [v.strip() for v in raw.split(",") if v.strip()]
    for value in values:
        if value not in allowed:
            errors.append(
                _param_error(
                    name,
                    [value],
                    f"The `{name}` query parameter value [{value}] is not one of [{','.join(allowed)}]",
                )
            )
    return frozenset(values)


def _fields(params: Mapping[str, str], errors: list[dict[str, Any]]) -> _Fields:
    return _Fields(
        expansions=_list_param(params, "expansions", EXPANSIONS, errors),
        tweet=_list_param(params, "tweet.fields", TWEET_FIELDS, errors),
        user=_list_param(params, "user.fields", USER_FIELDS, errors),
    )


def _id_param(params: Mapping[str, str], name: str, errors: list[dict[str, Any]]) -> int | None:
    raw = params.get(name)
    if raw is None:
        return None
    if not re.fullmatch(r"[0-9]{1,19}", raw):
        errors.append(
            _param_error(
                name, [raw], f"The `{name}` query parameter value [{raw}] does not match ^[0-9]{{1,19}}$"
            )
        )
        return None
    return int(raw)


def _time_param(params: Mapping[str, str], name: str, errors: list[dict[str, Any]]) -> datetime | None:
    raw = params.get(name)
    if raw is None:
        return None
    try:
        if "T" not in raw:
            raise ValueError(raw)
        return _parse_time(raw)
    except ValueError:
        errors.append(
            _param_error(
                name, [raw], f"Invalid '{name}':'{raw}'. '{name}' must be a valid RFC 3339 timestamp"
            )
        )
        return None


def _bool_param(params: Mapping[str, str], name: str) -> bool:
    raw = params.get(name)
    if raw is None or raw.lower() == "false":
        return False
    if raw.lower() == "true":
        return True
    raise _invalid_request(
        [_param_error(name, [raw], f"The `{name}` query parameter value [{raw}] is not a boolean")]
    )


def _encode_next_token(oldest_id: int) -> str:
    # Opaque to clients (as v2's are): the oldest id returned, the page boundary.
    digits = base64.b32encode(oldest_id.to_bytes(8, "big")).decode().rstrip("=").lower()
    return _NEXT_TOKEN_PREFIX + digits


def _decode_next_token(token: str) -> int | None:
    if not token.startswith(_NEXT_TOKEN_PREFIX):
        return None
    digits = token[len(_NEXT_TOKEN_PREFIX) :].upper()
    try:
        raw = base64.b32decode(digits + "=" * (-len(digits) % 8))
    except ValueError:
        return None
    return int.from_bytes(raw, "big") if len(raw) == 8 else None


# --------------------------------------------------------------------------------------------
# HTTP


_ROUTES: Final[Sequence[tuple[str, re.Pattern[str], str, str]]] = (
    ("GET", re.compile(r"/2/tweets/search/recent"), "GET /2/tweets/search/recent", "search"),
    ("GET", re.compile(r"/2/tweets/search/stream/rules"), "GET /2/tweets/search/stream/rules", "get_rules"),
    (
        "POST",
        re.compile(r"/2/tweets/search/stream/rules"),
        "POST /2/tweets/search/stream/rules",
        "post_rules",
    ),
    ("GET", re.compile(r"/2/tweets/search/stream"), "GET /2/tweets/search/stream", "stream"),
    ("GET", re.compile(r"/2/tweets"), "GET /2/tweets", "lookup"),
    ("GET", re.compile(r"/2/tweets/(?!search(?:/|$))([^/]+)"), "GET /2/tweets/:id", "lookup_one"),
)


class _Handler(ContractHandler):
    # What api.twitter.com answers with.
    server_version = "tsa_b"
    sys_version = ""

    def do_GET(self) -> None:
        self._handle()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_GET

    @property
    def _api(self) -> TwitterContractServer:
        return cast(_Server, self.server).api

    def _handle(self) -> None:
        parts = urlsplit(self.path)
        path = parts.path.rstrip("/") or "/"
        params = dict(parse_qsl(parts.query, keep_blank_values=True))
        method = self.command
        try:
            body = self._read_body()
        except ValueError:
            self.close_connection = True
            self._send(400, {"errors": [{"message": "Unreadable request body"}]}, [])
            return
        if path.startswith("/_contract/"):
            self._control(method, path[len("/_contract/") :], body)
            return
        api = self._api
        endpoint, action, arg = None, None, None
        for route_method, pattern, key, name in _ROUTES:
            match = pattern.fullmatch(path)
            if match and route_method == method:
                endpoint, action = key, name
                arg = match.group(1) if match.groups() else None
                break
        token = _bearer(self.headers.get("Authorization"))
        headers: list[tuple[str, str]] = []
        try:
            headers = api._admit(method, path, endpoint, token)
            assert token is not None
            if action is None:
                raise _ApiError(404, _problem(404))
            if action == "stream":
                self._stream(params, token, headers)
                return
            answer_status, answer = self._dispatch(action, params, body, arg)
            raw = None
            if action == "search" and api._take_malformed_search():
                encoded = orjson.dumps(answer)
                raw = encoded[: len(encoded) // 2]
            api._observe(Observation(method, path, params, answer_status, token))
            self._send(answer_status, answer, headers, raw=raw)
        except _ApiError as exc:
            api._observe(Observation(method, path, params, exc.status, token))
            # A request refused after admission still counted against its window and says so.
            self._send(exc.status, exc.body, exc.headers or headers)
        except _Drop:
            api._observe(Observation(method, path, params, 0, token))
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)

    def _dispatch(
        self, action: str, params: dict[str, str], body: bytes, arg: str | None
    ) -> tuple[int, dict[str, Any]]:
        api = self._api
        if action == "search":
            return 200, api._search(params)
        if action == "lookup":
            return 200, api._lookup(params, None)
        if action == "lookup_one":
            return 200, api._lookup(params, arg)
        if action == "get_rules":
            return 200, api._get_rules(params)
        if action == "post_rules":
            return api._post_rules(params, body)
        raise AssertionError(action)

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            raise ValueError("chunked request bodies are not supported")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        if len(body) != length:
            raise ValueError("the client closed the connection mid-body")
        return body

    def _send(
        self, status: int, body: Any, headers: Sequence[tuple[str, str]], *, raw: bytes | None = None
    ) -> None:
        data = raw if raw is not None else orjson.dumps(body)
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)

    # -- the filtered stream

    def _stream(self, params: dict[str, str], token: str, headers: list[tuple[str, str]]) -> None:
        api = self._api
        path = urlsplit(self.path).path
        stream = api._open_stream(params, token, headers)
        try:
            api._observe(Observation("GET", path, params, 200, token))
            self.send_response(200)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Cache-Control", "no-cache, no-store, max-age=0")
            self.end_headers()
            # Whatever happens next, this response never ends cleanly: the connection goes.
            self.close_connection = True
            self._pump(stream)
        except OSError:
            pass
        finally:
            api._close_stream(stream)
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)

    def _pump(self, stream: _Stream) -> None:
        api = self._api
        last_write = time.monotonic()
        while True:
            due = last_write + api.keepalive_s
            lines, closing = stream.take(min(_STREAM_POLL_S, max(due - time.monotonic(), 0.0)))
            if closing == "operational":
                error = {
                    "title": "operational-disconnect",
                    "disconnect_type": "OperationalDisconnect",
                    "detail": "This stream has been disconnected for operational reasons.",
                    "type": _PROBLEMS + "operational-disconnect",
                }
                self._chunk(orjson.dumps({"errors": [error]}) + b"\r\n")
            if closing is not None:
                return  # no terminating chunk: the client sees the response cut off
            if lines:
                for line in lines:
                    self._chunk(line)
                last_write = time.monotonic()
            elif time.monotonic() >= api.keepalive_s + last_write:
                self._chunk(b"\r\n")
                last_write = time.monotonic()
            elif self._peer_gone():
                return

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _peer_gone(self) -> bool:
        """True once the client closed its end (it never sends anything on a stream)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    # -- /_contract

    def _control(self, method: str, hook: str, body: bytes) -> None:
        try:
            kwargs = orjson.loads(body) if body.strip() else {}
            if not isinstance(kwargs, dict):
                raise TypeError("the body must be a JSON object of keyword arguments")
            result = self._api._control(hook, kwargs)
            self._send(200, {"result": result}, [])
        except KeyError:
            self._send(404, {"error": f"unknown hook {hook!r}"}, [])
        except (TypeError, ValueError, orjson.JSONDecodeError) as exc:
            self._send(400, {"error": f"{type(exc).__name__}: {exc}"}, [])


class _Server(ContractHTTPServer):
    request_queue_size = 64
    worker_name = "twitter-contract-conn"
    # TCP_NODELAY (the default here) matters most on streams: lines are small writes that must
    # not wait for delayed ACKs.

    def __init__(self, address: tuple[str, int], api: TwitterContractServer) -> None:
        self.api = api
        super().__init__(address, _Handler)


# --------------------------------------------------------------------------------------------
# command line


def main(argv: Sequence[str] | None = None) -> int:
    """Runs a server in the foreground until SIGTERM / SIGINT (or, when stdin is a pipe, until
    the parent closes it)."""
    parser = argparse.ArgumentParser(prog="python -m tests.contract_servers.twitter", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--token", action="append", help="a valid bearer token (repeatable)")
    parser.add_argument("--forbidden-token", action="append", default=[], help="a client-not-enrolled token")
    parser.add_argument("--keepalive", type=float, default=20.0, help="stream keep-alive interval (s)")
    args = parser.parse_args(argv)
    server = TwitterContractServer(
        args.host,
        args.port,
        valid_tokens=args.token or (DEFAULT_TOKEN,),
        forbidden_tokens=args.forbidden_token,
        keepalive_s=args.keepalive,
    ).start()
    try:
        serve_until_signalled(server.port, watch_parent=True)
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
