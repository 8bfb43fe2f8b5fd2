"""What every Debezium connector's records share: the source partition ``{"server": <topic.prefix>}``,
tombstones, and heartbeats.

Heartbeats go to ``<topic.heartbeat.prefix>.<topic.prefix>`` with key
``io.debezium.connector.common.ServerNameKey`` ``{serverName}`` and value
``io.debezium.connector.common.Heartbeat`` ``{ts_ms}``; their offset is the connector's own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, Protocol

from connect.api import Schema, SchemaBuilder, SourceRecord, Struct

__all__ = ["HEARTBEAT_KEY_SCHEMA", "HEARTBEAT_VALUE_SCHEMA", "RecordBuilder", "TopicModel"]

HEARTBEAT_KEY_SCHEMA: Final = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.common.ServerNameKey")
    .version(1)
    .field("serverName", Schema.STRING_SCHEMA)
    .build()
)
HEARTBEAT_VALUE_SCHEMA: Final = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.common.Heartbeat")
    .version(1)
    .field("ts_ms", Schema.INT64_SCHEMA)
    .build()
)


class TopicModel(Protocol):
    """The part of a connector's table model a tombstone needs."""

    @property
    def topic(self) -> str: ...

    @property
    def key_schema(self) -> Schema | None: ...


class RecordBuilder:
    """The records of one connector (its ``topic.prefix`` is ``server``) that do not depend on
    its database. ``clock_us`` gives the processing time; tests pass a fixed one."""

    def __init__(self, server: str, version: str, clock_us: Callable[[], int]) -> None:
        self.server = server
        self.version = version
        self.clock_us = clock_us
        self.partition: Mapping[str, Any] = {"server": server}

    def tombstone(self, table: TopicModel, key: Struct | None, offset: Mapping[str, Any]) -> SourceRecord:
        return SourceRecord(self.partition, offset, table.topic, None, table.key_schema, key, None, None)

    def heartbeat(self, topic: str, offset: Mapping[str, Any]) -> SourceRecord:
        return SourceRecord(
            self.partition,
            offset,
            topic,
            None,
            HEARTBEAT_KEY_SCHEMA,
            Struct.unchecked(HEARTBEAT_KEY_SCHEMA, [self.server]),
            HEARTBEAT_VALUE_SCHEMA,
            Struct.unchecked(HEARTBEAT_VALUE_SCHEMA, [self.clock_us() // 1000]),
        )
