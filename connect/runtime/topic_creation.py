"""``topic.creation.*`` (KIP-158): which settings a source connector's new topics get.

Groups are tried in ``topic.creation.groups`` order; a topic belongs to the first
group whose ``include`` patterns match it and whose ``exclude`` patterns do not;
every other topic belongs to ``default``, which must define ``replication.factor``
and ``partitions``. Pure logic; the source task creates topics through the admin
client.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from connect.api.errors import ConnectException

DEFAULT = "default"


class TopicCreationError(ConnectException):
    """A ``topic.creation.*`` setting that cannot be used; ``key`` names it."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key
        self.detail = message


_GROUP_KEYS = {"include", "exclude", "replication.factor", "partitions"}


@dataclass(frozen=True, slots=True)
class TopicSettings:
    group: str
    partitions: int
    replication_factor: int
    configs: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Group:
    name: str
    include: tuple[re.Pattern[str], ...]
    exclude: tuple[re.Pattern[str], ...]
    partitions: int
    replication_factor: int
    configs: Mapping[str, str]

    def matches(self, topic: str) -> bool:
        return any(p.fullmatch(topic) for p in self.include) and not any(
            p.fullmatch(topic) for p in self.exclude
        )


def _patterns(value: str | None, key: str) -> tuple[re.Pattern[str], ...]:
    out = []
    for item in (value or "").split(","):
        item = item.strip()
        if item:
            try:
                out.append(re.compile(item))
            except re.error as exc:
                raise TopicCreationError(key, f"'{item}' is not a valid regular expression: {exc}") from None
    return tuple(out)


def _int(config: Mapping[str, Any], key: str, default: int | None) -> int:
    raw = config.get(key)
    if raw is None or str(raw).strip() == "":
        if default is None:
            raise TopicCreationError(key, "is required when topic creation is enabled")
        return default
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise TopicCreationError(key, f"Invalid value {raw}: not an integer") from None
    if value != -1 and value < 1:
        raise TopicCreationError(
            key, f"Invalid value {raw}: must be at least 1, or -1 for the broker's default"
        )
    return value


class TopicCreation:
    def __init__(self, groups: list[_Group], default: _Group) -> None:
        self.groups = groups
        self.default = default

    @classmethod
    def from_config(cls, config: Mapping[str, Any], group_names: list[str]) -> TopicCreation | None:
        """None when the connector does not ask for topic creation (no default group)."""
        prefix = "topic.creation."
        if (
            f"{prefix}{DEFAULT}.replication.factor" not in config
            and f"{prefix}{DEFAULT}.partitions" not in config
        ):
            return None

        def group(name: str, fallback: _Group | None) -> _Group:
            p = f"{prefix}{name}."
            settings = {k[len(p) :]: str(v) for k, v in config.items() if k.startswith(p)}
            return _Group(
                name,
                _patterns(settings.get("include"), p + "include") if name != DEFAULT else (re.compile(".*"),),
                _patterns(settings.get("exclude"), p + "exclude") if name != DEFAULT else (),
                _int(config, p + "partitions", fallback.partitions if fallback else None),
                _int(config, p + "replication.factor", fallback.replication_factor if fallback else None),
                # Partitions and replication factor fall back to the default group; other
                # topic configs do not (the broker's defaults apply), as in Kafka.
                {k: v for k, v in settings.items() if k not in _GROUP_KEYS},
            )

        default = group(DEFAULT, None)
        return cls([group(n, default) for n in group_names if n != DEFAULT], default)

    def settings_for(self, topic: str) -> TopicSettings:
        g = next((g for g in self.groups if g.matches(topic)), self.default)
        return TopicSettings(g.name, g.partitions, g.replication_factor, dict(g.configs))
