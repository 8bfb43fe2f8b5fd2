"""API v2 through tweepy: recent search pages, stream rules and the filtered stream.

tweepy has no host setting, so a transport adapter on each client's ``requests`` session
rewrites ``https://api.twitter.com/...`` to ``twitter.api.base.url`` just before sending.
Search answers come back as raw responses and are parsed here, so that a malformed page
is told from a failed request. Failures become ``RateLimited`` (wait until the window
resets), ``Transient`` (5xx, lost connections: retry with backoff) or ``ConnectException``
(a refused token or access level: retrying cannot help).
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import requests
import tweepy
from requests.adapters import HTTPAdapter
from requests.utils import should_bypass_proxies

from connect.api import ConnectException
from connectors.twitter.config import DEFAULT_BASE_URL, TwitterSourceConfig
from connectors.twitter.errors import Malformed, RateLimited, Transient

log = logging.getLogger(__name__)

TWITTER_API = DEFAULT_BASE_URL


class BaseUrlAdapter(HTTPAdapter):
    """Sends requests for Twitter's host to another base URL (``twitter.api.base.url``)."""

    def __init__(self, base_url: str) -> None:
        super().__init__()
        self.base_url = base_url.rstrip("/")

    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: Any = None,
        verify: Any = True,
        cert: Any = None,
        proxies: Any = None,
    ) -> requests.Response:
        url = request.url or ""
        if url.startswith(TWITTER_API + "/"):
            request.url = self.base_url + url[len(TWITTER_API) :]
            if should_bypass_proxies(request.url, no_proxy=None):  # judged for the real host
                proxies = {}
        return super().send(request, stream, timeout, verify, cert, proxies)


def point_at(client: Any, base_url: str) -> None:
    if base_url.rstrip("/") != TWITTER_API:
        client.session.mount(TWITTER_API + "/", BaseUrlAdapter(base_url))


def refused(status: int, detail: str) -> ConnectException:
    if status == 401:
        return ConnectException(
            "Twitter refused twitter.bearer.token (401 Unauthorized): the token is wrong or revoked"
        )
    return ConnectException(
        f"Twitter refused access (403 Forbidden): the App's access level does not allow this endpoint "
        f"({detail})"
    )


def _detail(response: requests.Response | None) -> str:
    if response is None:
        return ""
    try:
        body = response.json()
    except ValueError:
        return response.text[:200]
    if isinstance(body, dict):
        return str(body.get("detail") or body.get("title") or body)[:300]
    return str(body)[:300]


@dataclass
class Page:
    tweets: list[Any]
    includes: dict[str, Any]
    next_token: str | None
    malformed: list[Malformed] = field(default_factory=list)


class Api:
    def __init__(self, config: TwitterSourceConfig) -> None:
        self.config = config
        self.client = tweepy.Client(
            bearer_token=config.token, return_type=requests.Response, wait_on_rate_limit=False
        )
        point_at(self.client, config.twitter_api_base_url)

    def _fields(self) -> dict[str, str]:
        out = {"tweet.fields": ",".join(self.config.tweet_fields)}
        if self.config.expansions:
            out["expansions"] = ",".join(self.config.expansions)
        if self.config.user_fields:
            out["user.fields"] = ",".join(self.config.user_fields)
        return out

    def search(self, query: str, since_id: str | None, next_token: str | None, max_results: int) -> Page:
        params: dict[str, Any] = {"query": query, "max_results": max_results, **self._fields()}
        if since_id:
            params["since_id"] = since_id
        if next_token:
            params["next_token"] = next_token
        response = self._call("GET", "/2/tweets/search/recent", params)
        try:
            body = response.json()
        except ValueError:
            raise Malformed(
                "recent search answered with text that is not JSON", response.text[:10_000]
            ) from None
        if not isinstance(body, dict) or not isinstance(body.get("meta", {}), dict):
            raise Malformed(
                "recent search answered with JSON that is not a v2 search result", response.text[:10_000]
            )
        data = body.get("data") or []
        if not isinstance(data, list):
            raise Malformed("recent search's data is not a list", response.text[:10_000])
        meta = body.get("meta") or {}
        return Page(data, body.get("includes") or {}, meta.get("next_token"))

    def _call(
        self, method: str, route: str, params: Mapping[str, Any] | None = None, body: Any = None
    ) -> requests.Response:
        try:
            response: requests.Response = self.client.request(method, route, params=params, json=body)
            return response
        except tweepy.TooManyRequests as exc:
            reset = exc.response.headers.get("x-rate-limit-reset") if exc.response is not None else None
            reset_at = float(reset) if reset else time.time() + 60
            raise RateLimited(f"{route}: rate limit reached", reset_at) from None
        except (tweepy.Unauthorized, tweepy.Forbidden) as exc:
            raise refused(exc.response.status_code, _detail(exc.response)) from None
        except tweepy.TwitterServerError as exc:
            raise Transient(f"{route}: Twitter answered {exc.response.status_code}") from None
        except tweepy.BadRequest as exc:
            raise ConnectException(
                f"{route}: Twitter refused the request (400): {_detail(exc.response)}"
            ) from None
        except (requests.ConnectionError, requests.Timeout) as exc:
            raise Transient(
                f"{route}: cannot reach Twitter at {self.config.twitter_api_base_url}: {exc}"
            ) from None

    # -- stream rules --------------------------------------------------------------------

    def sync_rules(self, values: list[str], tag: str) -> dict[str, str]:
        """Make the App's rules tagged ``tag`` exactly ``values``; their ids → values."""
        current = self._call("GET", "/2/tweets/search/stream/rules").json().get("data") or []
        ours = {r["value"]: r["id"] for r in current if r.get("tag") == tag}
        stale = [rid for value, rid in ours.items() if value not in values]
        if stale:
            self._call("POST", "/2/tweets/search/stream/rules", body={"delete": {"ids": stale}})
        missing = [{"value": v, "tag": tag} for v in values if v not in ours]
        if missing:
            answer = self._call("POST", "/2/tweets/search/stream/rules", body={"add": missing}).json()
            errors = answer.get("errors") or []
            bad = [e for e in errors if e.get("title") != "DuplicateRule"]
            if bad:
                raise ConnectException(f"Twitter refused the stream rules: {json.dumps(bad)[:500]}")
        log.info("Stream rules tagged %s: %s", tag, values)
        now = self._call("GET", "/2/tweets/search/stream/rules").json().get("data") or []
        return {str(r["id"]): str(r["value"]) for r in now if r.get("tag") == tag}

    def remove_rules(self, tag: str) -> None:
        current = self._call("GET", "/2/tweets/search/stream/rules").json().get("data") or []
        ids = [r["id"] for r in current if r.get("tag") == tag]
        if ids:
            self._call("POST", "/2/tweets/search/stream/rules", body={"delete": {"ids": ids}})
            log.info("Removed the stream rules tagged %s", tag)

    def close(self) -> None:
        self.client.session.close()


# -- the filtered stream ---------------------------------------------------------------------


class Stream(tweepy.StreamingClient):  # type: ignore[misc]
    """tweepy's filtered stream (it reconnects with Twitter's documented backoff: linear
    for network errors, exponential for HTTP errors, a minute and up for 429), feeding a
    queue that ``poll`` drains: ("tweet", payload) or ("malformed", Malformed)."""

    def __init__(self, config: TwitterSourceConfig) -> None:
        super().__init__(bearer_token=config.token, wait_on_rate_limit=False)
        point_at(self, config.twitter_api_base_url)
        self.fields = {
            name: list(values)
            for name, values in (
                ("tweet_fields", config.tweet_fields),
                ("expansions", config.expansions),
                ("user_fields", config.user_fields),
            )
            if values
        }
        self.items: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=100_000)
        self.fatal: ConnectException | None = None
        self.connected = threading.Event()

    def on_connect(self) -> None:
        self.connected.set()
        log.info("Filtered stream connected")

    def on_data(self, raw_data: bytes) -> None:
        text = raw_data.decode("utf-8", errors="replace")
        try:
            message = json.loads(text)
        except ValueError:
            self.items.put(("malformed", Malformed("the stream sent a line that is not JSON", text)))
            return
        if not isinstance(message, dict) or "data" not in message:
            if isinstance(message, dict) and "errors" in message:
                log.warning("The stream reports: %s", json.dumps(message["errors"])[:500])
                return
            self.items.put(("malformed", Malformed("the stream sent JSON that is not a tweet message", text)))
            return
        self.items.put(("tweet", message))

    def on_request_error(self, status_code: int) -> None:
        if status_code in (401, 403):
            self.fatal = refused(status_code, f"stream connection answered {status_code}")
            self.disconnect()
        else:
            log.warning("Filtered stream answered %s; tweepy reconnects with backoff", status_code)

    def on_connection_error(self) -> None:
        log.warning("Filtered stream connection lost; tweepy reconnects with backoff")

    def open(self) -> threading.Thread:
        thread: threading.Thread = self.filter(threaded=True, **self.fields)
        return thread
