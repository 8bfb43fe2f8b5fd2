"""TimestampRouter: route each record to a topic named after its topic and timestamp.

With the defaults, ``topic.format=${topic}-${timestamp}`` and
``timestamp.format=yyyyMMdd``, a record of ``orders`` with a timestamp on 2024-05-01
goes to ``orders-20240501``. Mainly for sink connectors, which name a table or index
after the topic. ``timestamp.format`` is a Java ``SimpleDateFormat`` pattern
(``connect.api.java_dates``) applied in UTC. Every ``${topic}`` is replaced
first, then every ``${timestamp}``, both literally (so a topic name that contains
``${timestamp}`` is expanded too, as in Kafka). Key, value and headers are untouched,
tombstones included. A record without a timestamp is an error.

Unlike Kafka, which only fails on the first record, an invalid ``timestamp.format``
is refused when the connector's configuration is validated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import field_validator

from connect.api import ConfigModel, ConnectRecord, Field, Transformation, importance
from connect.api.java_dates import JavaDateFormat
from transforms.requirements import record_error


class TimestampRouterConfig(ConfigModel):
    topic_format: str = Field(
        "${topic}-${timestamp}",
        alias="topic.format",
        description="Format string which can contain <code>${topic}</code> and <code>${timestamp}</code> as "
        "placeholders for the topic and timestamp, respectively.",
        json_schema_extra=importance("HIGH"),
    )
    timestamp_format: str = Field(
        "yyyyMMdd",
        alias="timestamp.format",
        description="Format string for the timestamp that is compatible with "
        "<code>java.text.SimpleDateFormat</code>.",
        json_schema_extra=importance("HIGH"),
    )

    @field_validator("timestamp_format")
    @classmethod
    def _pattern(cls, v: str) -> str:
        JavaDateFormat(v)  # ValueError with Java's message ("Illegal pattern character 'q'")
        return v


class TimestampRouter(Transformation[ConnectRecord]):
    Config = TimestampRouterConfig
    aliases = ("org.apache.kafka.connect.transforms.TimestampRouter",)

    def configure(self, configs: Mapping[str, Any]) -> None:
        config = self.config = TimestampRouterConfig.parse(configs)
        self.topic_format = config.topic_format
        self.format = JavaDateFormat(config.timestamp_format)
        # Per topic, the last formatted timestamp and the topic it gave. format_millis returns
        # the same string object while the formatted text cannot change, so an identity check
        # finds the routed topic without building it again.
        self._routes: dict[str, tuple[str, str]] = {}

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        timestamp = record.timestamp
        if timestamp is None:
            raise record_error(self, record, "Timestamp missing on record")
        try:
            formatted = self.format.format_millis(timestamp)
        except OverflowError:
            raise record_error(
                self, record, f"Timestamp {timestamp} ms is outside the range of dates that can be formatted"
            ) from None
        topic = record.topic
        route = self._routes.get(topic)
        if route is not None and route[0] is formatted:
            routed = route[1]
        else:
            routed = self.topic_format.replace("${topic}", topic).replace("${timestamp}", formatted)
            if len(self._routes) >= 1024:  # topics are few; this only bounds a pathological stream
                self._routes.clear()
            self._routes[topic] = (formatted, routed)
        return record.new_record(topic=routed)
