"""Kafka's predicates: TopicNameMatches, HasHeaderKey, RecordIsTombstone."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import field_validator

from connect.api import (
    ConfigModel,
    ConnectRecord,
    Field,
    Predicate,
    RecordColumns,
    compile_java_regex,
    importance,
)


class TopicNameMatchesConfig(ConfigModel):
    pattern: str = Field(
        alias="pattern",
        description="A Java regular expression for matching against the name of a record's topic.",
        json_schema_extra=importance("MEDIUM"),
    )

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, v: str) -> str:
        if not v:
            raise ValueError("String must be non-empty")
        try:
            compile_java_regex(v)
        except ValueError as exc:
            raise ValueError(f"Invalid regex: {exc}") from None
        return v


class TopicNameMatches(Predicate[ConnectRecord]):
    """True for records whose topic name matches ``pattern`` entirely."""

    Config = TopicNameMatchesConfig
    aliases = ("org.apache.kafka.connect.transforms.predicates.TopicNameMatches",)

    def configure(self, configs: Mapping[str, Any]) -> None:
        self.pattern = compile_java_regex(TopicNameMatchesConfig.parse(configs).pattern)

    def test(self, record: ConnectRecord) -> bool:
        return record.topic is not None and self.pattern.fullmatch(record.topic) is not None

    def test_columns(self, batch: RecordColumns[ConnectRecord]) -> list[bool]:
        # Decided once per topic: a batch has few.
        decided: dict[str, bool] = {}
        out = []
        for topic in batch.topic:
            hit = decided.get(topic)
            if hit is None:
                hit = decided[topic] = topic is not None and self.pattern.fullmatch(topic) is not None
            out.append(hit)
        return out


class HasHeaderKeyConfig(ConfigModel):
    name: str = Field(alias="name", description="The header name.", json_schema_extra=importance("MEDIUM"))

    @field_validator("name")
    @classmethod
    def _not_empty(cls, v: str) -> str:
        if not v:
            raise ValueError("String must be non-empty")
        return v


class HasHeaderKey(Predicate[ConnectRecord]):
    """True for records with at least one header named ``name``."""

    Config = HasHeaderKeyConfig
    aliases = ("org.apache.kafka.connect.transforms.predicates.HasHeaderKey",)

    def configure(self, configs: Mapping[str, Any]) -> None:
        self.name = HasHeaderKeyConfig.parse(configs).name

    def test(self, record: ConnectRecord) -> bool:
        return record.has_headers and record.headers.last_with_name(self.name) is not None

    def test_columns(self, batch: RecordColumns[ConnectRecord]) -> list[bool]:
        name = self.name
        return [h is not None and bool(h) and h.last_with_name(name) is not None for h in batch.headers]


class RecordIsTombstone(Predicate[ConnectRecord]):
    """True for tombstones: records whose value is null."""

    aliases = ("org.apache.kafka.connect.transforms.predicates.RecordIsTombstone",)

    def configure(self, configs: Mapping[str, Any]) -> None:
        pass

    def test(self, record: ConnectRecord) -> bool:
        return record.value is None

    def test_columns(self, batch: RecordColumns[ConnectRecord]) -> list[bool]:
        return [v is None for v in batch.value]
