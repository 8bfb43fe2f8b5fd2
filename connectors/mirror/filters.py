"""Which topics, consumer groups and topic config properties MirrorMaker 2 replicates.

Kafka's ``DefaultTopicFilter``, ``DefaultGroupFilter`` and ``DefaultConfigPropertyFilter``:
each setting is a list of Java regexes (``topics = orders.*, payments``) joined into one
alternation that must match the whole name; an empty list matches nothing (not
everything, as the empty regex would). Excludes win over includes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from connect.api.errors import ConnectException
from connect.api.java_regex import compile_java_regex

TOPICS_INCLUDE_DEFAULT: Final = ".*"
TOPICS_EXCLUDE_DEFAULT: Final = r".*[\-\.]internal, .*\.replica, __.*"
GROUPS_INCLUDE_DEFAULT: Final = ".*"
GROUPS_EXCLUDE_DEFAULT: Final = "console-consumer-.*, connect-.*, __.*"
CONFIG_PROPERTIES_EXCLUDE_DEFAULT: Final = (
    r"follower\.replication\.throttled\.replicas, "
    r"leader\.replication\.throttled\.replicas, "
    r"message\.timestamp\.difference\.max\.ms, "
    r"message\.timestamp\.type, "
    r"unclean\.leader\.election\.enable, "
    r"min\.insync\.replicas"
)
USE_DEFAULTS_FROM_DEFAULT: Final = "target"


def split_list(value: str) -> list[str]:
    """Kafka's LIST type: comma-separated, each item trimmed, empty items dropped."""
    return [item.strip() for item in value.split(",") if item.strip()]


def compile_pattern_list(patterns: Sequence[str], key: str) -> re.Pattern[str] | None:
    """One regex matching any of ``patterns`` (None for an empty list: matches nothing);
    ConnectException names ``key`` when the joined regex is invalid."""
    if not patterns:
        return None
    joined = "|".join(patterns)
    try:
        return compile_java_regex(joined)
    except ValueError as exc:
        raise ConnectException(f"{key}: invalid regular expression {joined!r}: {exc}") from None


def _matches(pattern: re.Pattern[str] | None, name: str) -> bool:
    return pattern is not None and pattern.fullmatch(name) is not None


class TopicFilter:
    """``topics`` / ``topics.exclude``."""

    def __init__(self, include: Sequence[str], exclude: Sequence[str]) -> None:
        self.include = compile_pattern_list(include, "topics")
        self.exclude = compile_pattern_list(exclude, "topics.exclude")

    def should_replicate_topic(self, topic: str) -> bool:
        return _matches(self.include, topic) and not _matches(self.exclude, topic)


class GroupFilter:
    """``groups`` / ``groups.exclude``."""

    def __init__(self, include: Sequence[str], exclude: Sequence[str]) -> None:
        self.include = compile_pattern_list(include, "groups")
        self.exclude = compile_pattern_list(exclude, "groups.exclude")

    def should_replicate_group(self, group: str) -> bool:
        return _matches(self.include, group) and not _matches(self.exclude, group)


class ConfigPropertyFilter:
    """``config.properties.exclude`` and ``use.defaults.from``: which topic config
    properties are copied to remote topics, and whether values the source topic only has
    by default are copied too (``source``) or left to the target's defaults (``target``)."""

    def __init__(self, exclude: Sequence[str], use_defaults_from: str = USE_DEFAULTS_FROM_DEFAULT) -> None:
        self.exclude = compile_pattern_list(exclude, "config.properties.exclude")
        self.use_defaults_from = use_defaults_from

    def should_replicate_config_property(self, name: str) -> bool:
        return not _matches(self.exclude, name)

    def should_replicate_source_default(self, name: str) -> bool:
        # As Kafka: exactly "source" copies source defaults; any other value means the target's.
        return self.use_defaults_from == "source"
