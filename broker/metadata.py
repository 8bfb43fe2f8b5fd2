"""The cluster's persistent metadata: topics (id, partition count, config overrides) and
the producer-id allocator, kept as one JSON snapshot replaced atomically.

A snapshot is small and changes rarely (topic admin operations), so writing it
whole with write-to-temp, fsync, rename is simpler than an append-only log and
just as safe: a reader sees either the old or the new file.
"""

from __future__ import annotations

import os
import re
import uuid
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from broker.storage.durable_file import replace_durably

_LEGAL_TOPIC = re.compile(r"^[a-zA-Z0-9._-]+$")
MAX_TOPIC_LENGTH: Final = 249
PRODUCER_ID_BLOCK: Final = 1000


class InvalidTopic(Exception):
    pass


def validate_topic_name(name: str) -> None:
    """Kafka's rules: 1-249 characters of [a-zA-Z0-9._-], not "." or ".."."""
    if not name:
        raise InvalidTopic("Topic name is illegal, it can't be empty")
    if name in (".", ".."):
        raise InvalidTopic(f'Topic name cannot be "{name}"')
    if len(name) > MAX_TOPIC_LENGTH:
        raise InvalidTopic(f"Topic name is illegal, it can't be longer than {MAX_TOPIC_LENGTH} characters")
    if not _LEGAL_TOPIC.match(name):
        raise InvalidTopic(
            f'Topic name "{name}" is illegal, it contains a character other than '
            "ASCII alphanumerics, '.', '_' and '-'"
        )


@dataclass(slots=True)
class TopicInfo:
    name: str
    topic_id: uuid.UUID
    partitions: int
    configs: dict[str, str] = field(default_factory=dict)
    internal: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "id": str(self.topic_id),
            "partitions": self.partitions,
            "configs": self.configs,
            "internal": self.internal,
        }


class MetadataStore:
    FILE: Final = "__cluster_metadata.json"

    def __init__(self, data_dir: str) -> None:
        self.path = os.path.join(data_dir, self.FILE)
        self.topics: dict[str, TopicInfo] = {}
        self.producer_id_limit = 0  # ids below this may have been handed out
        self.next_producer_id = 0
        self.version = 0  # bumped on every change, for response caches
        self._load()

    def _load(self) -> None:
        try:
            with open(self.path, "rb") as f:
                data = orjson.loads(f.read())
        except FileNotFoundError:
            return
        for name, t in data.get("topics", {}).items():
            self.topics[name] = TopicInfo(
                name,
                uuid.UUID(t["id"]),
                int(t["partitions"]),
                dict(t.get("configs", {})),
                bool(t.get("internal", False)),
            )
        self.producer_id_limit = int(data.get("producer_id_limit", 0))
        # Ids of the block in use before a restart may be live: start a fresh block.
        self.next_producer_id = self.producer_id_limit

    def save(self) -> None:
        self.version += 1
        payload = orjson.dumps(
            {
                "topics": {n: t.to_json() for n, t in sorted(self.topics.items())},
                "producer_id_limit": self.producer_id_limit,
            },
            option=orjson.OPT_INDENT_2,
        )
        replace_durably(self.path, payload)

    def allocate_producer_id(self) -> int:
        if self.next_producer_id >= self.producer_id_limit:
            self.producer_id_limit = self.next_producer_id + PRODUCER_ID_BLOCK
            self.save()
        pid = self.next_producer_id
        self.next_producer_id += 1
        return pid
