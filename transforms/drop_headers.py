"""DropHeaders: remove every header with one of the given names.

``headers=trace-id,debug`` drops all headers called ``trace-id`` or ``debug`` (names
match exactly, case-sensitively) and keeps the others in their order, repeats
included. A record that has none of them is passed on as it is. Key and value,
tombstones included, are untouched.

``headers`` follows Kafka 4's list rules: at least one name, none empty, no repeats.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import field_validator

from connect.api import ConfigModel, ConnectRecord, Field, Headers, Transformation, importance
from transforms.settings import NameList, check_names


class DropHeadersConfig(ConfigModel):
    headers: NameList = Field(
        alias="headers",
        description="The name of the headers to be removed.",
        json_schema_extra=importance("HIGH", kafka_type="LIST"),
    )

    @field_validator("headers", mode="before")
    @classmethod
    def _not_null(cls, v: Any) -> Any:
        if v is None:
            raise ValueError("Configuration 'headers' values must not be null.")
        return v

    @field_validator("headers")
    @classmethod
    def _names(cls, v: list[str]) -> list[str]:
        return check_names("headers", v)


class DropHeaders(Transformation[ConnectRecord]):
    Config = DropHeadersConfig
    aliases = ("org.apache.kafka.connect.transforms.DropHeaders",)

    def configure(self, configs: Mapping[str, Any]) -> None:
        self.config = DropHeadersConfig.parse(configs)
        self.names = frozenset(self.config.headers)

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        if not record.has_headers:
            return record
        names = self.names
        headers = record.headers
        if names.isdisjoint(headers.keys()):
            return record
        return record.new_record(headers=Headers(h for h in headers if h.key not in names))
