"""The Twitter source task: recent search polled, or the filtered stream held open.

Offsets are the newest tweet id per query (search) or per rule set (stream). Search asks
for what is newer than it (``since_id``), walks the pages back to it and emits oldest
first, so every record's offset is the newest id written so far. The stream cannot
replay what it missed while the task was down: on restart, recent search with the rules
as the query and ``since_id`` fills the gap first (within the days recent search still
covers), then the stream takes over; tweets both carry are written once.
"""

from __future__ import annotations

import collections
import json
import logging
import queue
import random
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from connect.api import ConnectException, RetriableException, Schema, SourceRecord, SourceTask
from connectors.twitter.config import TwitterSourceConfig
from connectors.twitter.errors import Malformed, RateLimited, Transient
from connectors.twitter.tweets import KEY_SCHEMA, TWEET_SCHEMA, MalformedTweet, to_struct, usernames

if TYPE_CHECKING:
    from connectors.twitter.api import Stream

log = logging.getLogger(__name__)

VERSION = "1.0"
#: Pages a search walks back at most in one go (100 tweets each): a safety net against an
#: offset so old that the walk would not end; what lies beyond is older than search covers.
_MAX_PAGES = 500
_STREAM_WAIT_S = 0.5
_STOP_WAIT_S = 25.0  # Twitter sends a keep-alive every 20 s


@dataclass
class _Walk:
    """A search walking back through pages: what it has collected and where it is."""

    query: str
    tweets: dict[int, tuple[Any, dict[str, str]]] = field(default_factory=dict)
    token: str | None = None
    pages: int = 0


class TwitterSourceTask(SourceTask):
    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        self.config = config = TwitterSourceConfig.parse_with_aliases(props)
        self.tolerate_all = str(props.get("errors.tolerance", "none")).strip().lower() == "all"
        self.dead_letters = str(props.get("errors.deadletterqueue.topic.name") or "").strip() or None
        # tweepy is imported here, not with the module: see connectors.twitter.errors.
        from connectors.twitter.api import Api

        self.api = Api(config)
        self.buffer: collections.deque[SourceRecord] = collections.deque()
        self.failures = 0
        self.stream: Stream | None = None
        if config.mode == "search":
            assert config.query
            self.partition: dict[str, Any] = {"query": config.query}
        else:
            self.partition = {"rules": " OR ".join(sorted(config.rules))}
        stored = self.context.offset_storage_reader().offset(self.partition)
        self.newest: str | None = str(stored["since_id"]) if stored and stored.get("since_id") else None
        self.next_search = 0.0
        self.walk: _Walk | None = None
        # Stream mode sets its rules and connects on the first poll(), where a rate limit or a
        # cluster of 5xx answers makes the call retriable instead of failing the start.
        self.tag = f"sluiceway:{props.get('name', 'twitter')}"
        self.rule_values: dict[str, str] = {}
        self.catching_up = self.newest is not None
        self.caught_up: set[str] = set()
        log.info(
            "Twitter source in %s mode, %s%s",
            config.mode,
            self.partition,
            f", resuming after tweet {self.newest}" if self.newest else "",
        )

    # -- polling -------------------------------------------------------------------------

    def poll(self) -> list[SourceRecord] | None:
        try:
            if not self.buffer:
                if self.config.mode == "search":
                    self._search()
                else:
                    self._stream()
            self.failures = 0
        except RateLimited as exc:
            wait = max(exc.reset_at - time.time(), 0) + 1
            log.warning("%s; waiting %.0f s for the window to reset", exc, wait)
            raise RetriableException(str(exc), retry_after=wait) from None
        except Transient as exc:
            self.failures += 1
            wait = random.uniform(0.5, 1) * min(2**self.failures, 320)
            log.warning("%s; retrying in %.1f s", exc, wait)
            raise RetriableException(str(exc), retry_after=wait) from None
        if not self.buffer:
            return None
        out: list[SourceRecord] = []
        while self.buffer and len(out) < self.config.max_tweets_per_poll:
            out.append(self.buffer.popleft())
        return out

    def _search(self) -> None:
        now = time.monotonic()
        if now < self.next_search:
            time.sleep(min(self.next_search - now, 1.0))
            return
        query = self.config.query
        assert query
        self._walk(query)
        self.next_search = time.monotonic() + self.config.poll_interval_ms / 1000

    def _walk(self, query: str, seen: set[str] | None = None) -> None:
        """Everything newer than ``self.newest`` (all recent search still has on a first
        start), oldest first. A walk cut short by a rate limit or an error goes on from the
        page it reached when poll() is called again."""
        if self.walk is None or self.walk.query != query:
            self.walk = _Walk(query)
        walk = self.walk
        for _ in range(_MAX_PAGES - walk.pages):
            try:
                page = self.api.search(query, self.newest, walk.token, self.config.max_results)
            except Malformed as exc:
                self.walk = None
                self._malformed(exc)
                return
            authors = usernames(page.includes)
            for tweet in page.tweets:
                key = tweet.get("id") if isinstance(tweet, dict) else None
                order = int(key) if isinstance(key, str) and key.isdigit() else -len(walk.tweets) - 1
                walk.tweets[order] = (tweet, authors)
            walk.pages += 1
            walk.token = page.next_token
            if not walk.token:
                break
        self.walk = None
        for _, (tweet, authors) in sorted(walk.tweets.items()):
            record = self._record(tweet, authors, None)
            if record is not None and seen is not None:
                seen.add(str(tweet["id"]))

    def _stream(self) -> None:
        stream = self.stream
        if stream is None:
            self.rule_values = self.api.sync_rules(self.config.rules, self.tag)
            from connectors.twitter.api import Stream  # loaded with Api in start()

            stream = self.stream = Stream(self.config)
            self.stream_thread = stream.open()
        if stream.fatal is not None:
            raise stream.fatal
        if self.catching_up:
            query = " OR ".join(f"({v})" for v in sorted(self.config.rules))
            self._walk(query, self.caught_up)
            self.catching_up = False
            log.info("Caught up %d tweets from recent search since %s", len(self.caught_up), self.newest)
        try:
            kind, item = stream.items.get(timeout=_STREAM_WAIT_S)
        except queue.Empty:
            return
        while True:
            if kind == "malformed":
                self._malformed(item)
            else:
                data = item.get("data")
                if not (isinstance(data, dict) and data.get("id") in self.caught_up):
                    rules = [
                        self.rule_values.get(str(r.get("id")), str(r.get("id")))
                        for r in item.get("matching_rules") or []
                        if isinstance(r, dict)
                    ]
                    self._record(data, usernames(item.get("includes")), rules)
            if len(self.buffer) >= self.config.max_tweets_per_poll:
                return
            try:
                kind, item = stream.items.get_nowait()
            except queue.Empty:
                return

    # -- records -------------------------------------------------------------------------

    def _record(self, tweet: Any, authors: dict[str, str], rules: list[str] | None) -> SourceRecord | None:
        try:
            value = to_struct(tweet, authors, rules)
        except MalformedTweet as exc:
            self._malformed(Malformed(str(exc), _text(tweet)))
            return None
        tweet_id = value.get("id")
        if self.newest is None or int(tweet_id) > int(self.newest):
            self.newest = tweet_id
        created = value.get("created_at")
        record = SourceRecord(
            source_partition=self.partition,
            source_offset={"since_id": self.newest},
            topic=self.config.topic,
            key_schema=KEY_SCHEMA,
            key=tweet_id,
            value_schema=TWEET_SCHEMA,
            value=value,
            timestamp=int(created.timestamp() * 1000) if created is not None else None,
        )
        self.buffer.append(record)
        return record

    def _malformed(self, exc: Malformed) -> None:
        """errors.tolerance decides: none fails the task; all logs the payload and, with a
        dead letter queue topic named, writes it there with the reason."""
        if not self.tolerate_all:
            raise ConnectException(f"Malformed payload from Twitter: {exc}: {exc.payload[:300]!r}")
        log.warning("Skipping a malformed payload from Twitter (errors.tolerance=all): %s", exc)
        if self.dead_letters:
            record = SourceRecord(
                source_partition=self.partition,
                source_offset={"since_id": self.newest} if self.newest else None,
                topic=self.dead_letters,
                value_schema=Schema.STRING_SCHEMA,
                value=exc.payload,
            )
            record.headers.add("__connect.errors.exception.message", str(exc))
            record.headers.add("__connect.errors.connector.name", self.tag_name())
            self.buffer.append(record)

    def tag_name(self) -> str:
        return str(self.config.get("name", "twitter"))

    def stop(self) -> None:
        stream = getattr(self, "stream", None)
        if stream is not None:
            stream.disconnect()
            # tweepy notices at its next read (a keep-alive at the latest); a stream left
            # running would reconnect on its own, with this task long gone.
            self.stream_thread.join(_STOP_WAIT_S)
            try:
                self.api.remove_rules(self.tag)
            except Exception as exc:  # the rules only matter while a stream is open
                log.warning("Could not remove the stream rules tagged %s: %s", self.tag, exc)
        api = getattr(self, "api", None)
        if api is not None:
            api.close()


def _text(value: Any) -> str:
    try:
        return json.dumps(value)[:10_000]
    except (TypeError, ValueError):
        return repr(value)[:10_000]
