"""RegexRouter: rename a record's topic with a regular expression (Kafka's ``RegexRouter``).

Faithful to Java: the topic must match ``regex`` entirely (``Matcher.matches``), and
is then rewritten with ``replaceFirst`` semantics (the first match found from the
start is replaced). ``replacement`` uses Java's syntax: ``$n`` and ``${name}`` group
references (``$12`` means group 12 only if it exists, else group 1 then "2") and
backslash escapes. The regex is Java's too (``(?<name>...)``, ``\\p{Lower}``, ``\\Q...\\E``),
translated by ``connect.api.compile_java_regex``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import field_validator

from connect.api import (
    ConfigIssue,
    ConfigModel,
    ConnectRecord,
    Field,
    RecordColumns,
    Transformation,
    compile_java_regex,
    importance,
)

Expander = Callable[[re.Match[str]], str]
_MAX_ROUTES = 1024


class RegexRouterConfig(ConfigModel):
    regex: str = Field(
        alias="regex",
        description="Regular expression to use for matching.",
        json_schema_extra=importance("HIGH"),
    )
    replacement: str = Field(
        alias="replacement", description="Replacement string.", json_schema_extra=importance("HIGH")
    )

    @field_validator("regex")
    @classmethod
    def _compiles(cls, v: str) -> str:
        try:
            compile_java_regex(v)
        except ValueError as exc:
            raise ValueError(f"Invalid regex: {exc}") from None
        return v

    @classmethod
    def problems(cls, props: Mapping[str, Any]) -> list[ConfigIssue]:
        # The replacement's group references must exist in the regex: checked here so a
        # bad pair is refused at validation, not at the first record that matches.
        regex, replacement = props.get("regex"), props.get("replacement")
        if not isinstance(regex, str) or not isinstance(replacement, str):
            return []
        try:
            pattern = compile_java_regex(regex.strip())
        except ValueError:
            return []  # reported against regex
        try:
            java_replacement(replacement.strip(), pattern)
        except ValueError as exc:
            return [
                ConfigIssue(
                    "replacement", f"Invalid value {replacement} for configuration replacement: {exc}"
                )
            ]
        return []


def java_replacement(replacement: str, pattern: re.Pattern[str]) -> Expander:
    """Compile a Java ``Matcher`` replacement string; errors say what is wrong with it."""
    parts: list[str | int] = []  # literal text, or a group number / name
    literal: list[str] = []
    i, n = 0, len(replacement)
    groups = pattern.groups
    while i < n:
        c = replacement[i]
        if c == "\\":
            if i + 1 >= n:
                raise ValueError("character to be escaped is missing")
            literal.append(replacement[i + 1])
            i += 2
        elif c == "$":
            i += 1
            if i >= n:
                raise ValueError("Illegal group reference: group index is missing")
            if literal:
                parts.append("".join(literal))
                literal = []
            if replacement[i] == "{":
                end = replacement.find("}", i)
                if end < 0:
                    raise ValueError("named capturing group is missing trailing '}'")
                name = replacement[i + 1 : end]
                if name not in pattern.groupindex:
                    raise ValueError(f"No group with name {{{name}}}")
                parts.append(pattern.groupindex[name])
                i = end + 1
                continue
            if not replacement[i].isdigit():
                raise ValueError("Illegal group reference")
            ref = int(replacement[i])
            if ref > groups:
                raise ValueError(f"No group {ref}")
            i += 1
            # Further digits belong to the reference only while it stays a group that exists.
            while i < n and replacement[i].isdigit() and ref * 10 + int(replacement[i]) <= groups:
                ref = ref * 10 + int(replacement[i])
                i += 1
            parts.append(ref)
        else:
            literal.append(c)
            i += 1
    if literal:
        parts.append("".join(literal))

    def expand(m: re.Match[str]) -> str:
        return "".join(p if isinstance(p, str) else (m.group(p) or "") for p in parts)

    return expand


class RegexRouter(Transformation[ConnectRecord]):
    Config = RegexRouterConfig
    aliases = ("org.apache.kafka.connect.transforms.RegexRouter",)

    def configure(self, configs: Mapping[str, Any]) -> None:
        config = RegexRouterConfig.parse(configs)
        self.pattern = compile_java_regex(config.regex)
        self.expand = java_replacement(config.replacement, self.pattern)
        self._routes: dict[str, str] = {}

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        topic = record.topic
        routed = self._routes.get(topic)
        if routed is None:
            routed = self._route(topic)
            if len(self._routes) < _MAX_ROUTES:  # a connector has few topics; stay bounded anyway
                self._routes[topic] = routed
        return record if routed == topic else record.new_record(topic=routed)

    def apply_columns(self, batch: RecordColumns[ConnectRecord]) -> None:
        routes = self._routes
        out = []
        for topic in batch.topic:
            routed = routes.get(topic)
            if routed is None:
                routed = self._route(topic)
                if len(routes) < _MAX_ROUTES:
                    routes[topic] = routed
            out.append(routed)
        batch.topic = out

    def _route(self, topic: str) -> str:
        if self.pattern.fullmatch(topic) is None:
            return topic
        m = self.pattern.search(topic)  # replaceFirst: the first match from the start
        assert m is not None
        return topic[: m.start()] + self.expand(m) + topic[m.end() :]
